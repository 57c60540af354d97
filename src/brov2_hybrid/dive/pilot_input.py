"""Live pilot input: a joystick (sensor_msgs/Joy) or an AR headset's orientation.

ROS-free core of ``nodes/joy_input`` and ``nodes/js_reader`` and the pilot-takeover
part of ``nodes/control_law``. Settings: ``params/joystick.yaml`` (README "Flying
with a joystick or a headset").

Pipeline per stick (joystick mode):

1. axis map: ``stick = sign * joy.axes[index]`` (sign -1 where the YAML says ``invert``);
2. dead zone and expo, :func:`shape`:
   ``s = (|x| - d) / (1 - d)`` outside the dead zone ``d`` (0 inside), then
   ``y = sign(x) * ((1 - e) * s + e * s**3)`` with expo ``e`` in [0, 1]
   (e = 0 linear, e = 1 cubic: fine control near centre, full value at the end stop);
3. angular sticks are desired *rates*: ``eta2d += y * max_rate * dt`` with ``dt`` the
   time between steps (stamps), roll and pitch clamped to +-bound, yaw wrapped to (-pi, pi];
   linear sticks are the open-loop surge/sway/heave commands ``y`` in [-1, 1].

Deadman: released (or the joystick silent for ``joy_timeout_s``) -> the desired attitude
is held where it is and the linear commands are zero; no axis is in pilot hands.

Pilot takeover, per angular axis, on the raw deflection ``|stick|`` (after the axis map,
before dead zone/expo): beyond ``takeover_threshold`` the axis goes to the pilot, open
loop, ``u_axis = y`` in [-1, 1] (tau_axis = u_axis * tau_max_axis, as stock ArduSub
MANUAL passes the stick through); below ``release_threshold`` (hysteresis) the axis is
handed back and the autopilot captures the attitude measured at that instant as
``eta2d`` for the axis and holds it. While an axis is with the pilot its desired angle
follows the measured one (so the hand-back is continuous).

Headset (pose mode): the angular DOFs come from an orientation quaternion in ROS
ENU/FLU (REP-103), converted once here to NED/FRD Euler angles
(:func:`brov2_hybrid.physics.kinematics.euler_ned_frd_from_enu_flu_quaternion`); roll and pitch
are clamped to their bounds; the joystick still gives the linear DOFs, the deadman and
the takeover.
"""
import math
import struct
from dataclasses import dataclass, field

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.errors import Brov2Error, InputDataError, ParameterError
from brov2_hybrid.physics.kinematics import euler_ned_frd_from_enu_flu_quaternion, wrap_angle
from brov2_hybrid.params import load_yaml

DEFAULT_JOYSTICK_FILE = "joystick.yaml"
ANGULAR = ("roll", "pitch", "yaw")
LINEAR = ("surge", "sway", "heave")
TOGGLE_BUTTONS = ("arm_toggle", "roll_enable_toggle", "pitch_enable_toggle", "yaw_enable_toggle")

# Linux joystick API (linux/joystick.h): struct js_event { __u32 time; __s16 value; __u8 type; __u8 number; }
JS_EVENT_FORMAT = "<IhBB"
JS_EVENT_SIZE = struct.calcsize(JS_EVENT_FORMAT)     # 8 bytes
JS_EVENT_BUTTON = 0x01
JS_EVENT_AXIS = 0x02
JS_EVENT_INIT = 0x80
JS_AXIS_MAX = 32767.0


# --------------------------------------------------------------------------- settings
@dataclass
class AxisMap:
    index: int          # index in sensor_msgs/Joy.axes
    sign: float         # +1, or -1 when inverted


@dataclass
class JoystickSettings:
    axes: dict                      # name (roll..heave) -> AxisMap
    buttons: dict                   # deadman / toggles -> index in Joy.buttons
    dead_zone: float                # [-] of full deflection
    expo: float                     # [-] in [0, 1]
    max_rate_rad_s: np.ndarray      # (3,) desired-rate at full stick (roll, pitch, yaw)
    bound_rad: np.ndarray           # (2,) |roll|, |pitch| limit of eta2d
    takeover_threshold: float       # [-] raw deflection that hands an axis to the pilot
    release_threshold: float        # [-] raw deflection below which it is handed back
    joy_timeout_s: float            # joystick silent longer -> hold, linear zero
    pose_timeout_s: float           # headset silent longer -> hold its last attitude
    max_step_s: float               # longest dt integrated in one step (a stalled clock)
    source: str = field(default="")


def _section(data, key, where):
    if key not in data or not isinstance(data[key], dict):
        raise ParameterError("%s: missing section '%s'" % (where, key))
    return data[key]


def _index(value, where):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError("%s: expected an index >= 0, got %r" % (where, value))
    return value


def _num(data, key, where, lo=None, hi=None, strict_lo=False):
    if key not in data:
        raise ParameterError("%s: missing '%s'" % (where, key))
    v = data[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ParameterError("%s.%s: expected a finite number, got %r" % (where, key, v))
    if (lo is not None and (v < lo or (strict_lo and v == lo))) or (hi is not None and v > hi):
        raise ParameterError("%s.%s: expected a number in %s%s, %s], got %r"
                             % (where, key, "(" if strict_lo else "[", lo, hi, v))
    return float(v)


def load_joystick_settings(path=None):
    """Read and validate ``params/joystick.yaml`` (or ``path``); errors name file and key."""
    path = path or paths.params_path(DEFAULT_JOYSTICK_FILE)
    data = load_yaml(path)
    axes_cfg = _section(data, "axes", path)
    axes = {}
    for name in ANGULAR + LINEAR:
        where = "%s: axes.%s" % (path, name)
        entry = axes_cfg.get(name)
        if not isinstance(entry, dict) or "index" not in entry:
            raise ParameterError("%s: expected {index: N, invert: true|false}, got %r" % (where, entry))
        invert = entry.get("invert", False)
        if not isinstance(invert, bool):
            raise ParameterError("%s.invert: expected true or false, got %r" % (where, invert))
        axes[name] = AxisMap(_index(entry["index"], where + ".index"), -1.0 if invert else 1.0)
    buttons_cfg = _section(data, "buttons", path)
    buttons = {}
    for name in ("deadman",) + TOGGLE_BUTTONS:
        if name not in buttons_cfg:
            raise ParameterError("%s: buttons.%s: missing" % (path, name))
        buttons[name] = _index(buttons_cfg[name], "%s: buttons.%s" % (path, name))
    where = path
    rates = _section(data, "max_rate_deg_s", path)
    bounds = _section(data, "bound_deg", path)
    takeover = _num(data, "takeover_threshold", where, 0.0, 1.0, strict_lo=True)
    release = _num(data, "release_threshold", where, 0.0, 1.0)
    dead_zone = _num(data, "dead_zone", where, 0.0, 0.99)
    if not release < takeover:
        raise ParameterError("%s: release_threshold (%g) must be below takeover_threshold (%g)"
                             % (path, release, takeover))
    if not dead_zone <= release:
        raise ParameterError("%s: dead_zone (%g) must not exceed release_threshold (%g): a centred stick "
                             "must hand the axis back" % (path, dead_zone, release))
    return JoystickSettings(
        axes=axes, buttons=buttons, dead_zone=dead_zone,
        expo=_num(data, "expo", where, 0.0, 1.0),
        max_rate_rad_s=np.radians([_num(rates, k, path + ": max_rate_deg_s", 0.0, 360.0, True) for k in ANGULAR]),
        bound_rad=np.radians([_num(bounds, k, path + ": bound_deg", 0.0, 80.0, True) for k in ("roll", "pitch")]),
        takeover_threshold=takeover, release_threshold=release,
        joy_timeout_s=_num(data, "joy_timeout_s", where, 0.0, None, True),
        pose_timeout_s=_num(data, "pose_timeout_s", where, 0.0, None, True),
        max_step_s=_num(data, "max_step_s", where, 0.0, None, True),
        source=str(path))


# --------------------------------------------------------------------------- stick shaping
def shape(x, dead_zone, expo):
    """Dead zone then expo of one stick value in [-1, 1] (formula in the module docstring)."""
    x = max(-1.0, min(1.0, float(x)))
    mag = abs(x)
    if mag <= dead_zone:
        return 0.0
    s = (mag - dead_zone) / (1.0 - dead_zone)
    return math.copysign((1.0 - expo) * s + expo * s ** 3, x)


def mapped_sticks(settings, axes):
    """Raw stick deflections (after axis map and sign) by name; a missing index or a
    non-finite value raises :class:`InputDataError`."""
    out = {}
    for name, m in settings.axes.items():
        if m.index >= len(axes):
            raise InputDataError("Joy.axes has %d entries, the map needs axes[%d] for %s (%s)"
                                 % (len(axes), m.index, name, settings.source))
        v = float(axes[m.index])
        if not math.isfinite(v):
            raise InputDataError("Joy.axes[%d] (%s) is not finite: %r" % (m.index, name, v))
        out[name] = max(-1.0, min(1.0, m.sign * v))
    return out


# --------------------------------------------------------------------------- the pilot
@dataclass
class PilotCommand:
    """One step of the pilot input: what joy_input publishes."""

    eta2d: np.ndarray           # (3,) desired attitude [rad], NED/FRD
    u_linear: np.ndarray        # (3,) surge, sway, heave in [-1, 1]
    pilot_axes: np.ndarray      # (3,) bool: roll, pitch, yaw in pilot hands (open loop)
    u_pilot: np.ndarray         # (3,) open-loop command of the pilot axes in [-1, 1] (0 elsewhere)
    deadman: bool               # deadman held and the joystick fresh
    message: str                # why the input holds (empty when live)
    events: list                # button presses since the last step (names of TOGGLE_BUTTONS)
    changes: list               # takeover / hand-back lines for the log


class PilotInput(object):
    """Joystick (and headset) -> desired state, with deadman and per-axis takeover.

    Feed it :meth:`on_joy`, :meth:`on_attitude` (measured NED/FRD attitude) and, in pose
    mode, :meth:`on_pose`; call :meth:`step` at a fixed rate. Nothing is produced before
    the first measured attitude (``step`` returns None): the desired attitude starts at
    the measured one (roll/pitch clamped), so arming with the sticks centred holds the
    vehicle where it is.
    """

    def __init__(self, settings, pose_mode=False):
        self.s = settings
        self.pose_mode = bool(pose_mode)
        self._joy = None            # (received time, sticks dict, buttons tuple)
        self._prev_buttons = None
        self._events = []
        self._attitude = None
        self._pose = None           # (received time, eta2d from the headset)
        self._eta2d = None
        self._last_step_s = None
        self.pilot_axes = np.zeros(3, dtype=bool)

    def on_joy(self, now_s, axes, buttons):
        """A Joy message received at ``now_s``; button presses (rising edges) are queued."""
        sticks = mapped_sticks(self.s, axes)
        buttons = tuple(bool(b) for b in buttons)
        needed = max(self.s.buttons.values())
        if needed >= len(buttons):
            raise InputDataError("Joy.buttons has %d entries, the map needs buttons[%d] (%s)"
                                 % (len(buttons), needed, self.s.source))
        if self._prev_buttons is not None:
            for name in TOGGLE_BUTTONS:
                i = self.s.buttons[name]
                if buttons[i] and not self._prev_buttons[i]:
                    self._events.append(name)
        self._prev_buttons = buttons
        self._joy = (float(now_s), sticks, buttons)

    def on_attitude(self, eta2):
        eta2 = np.array(eta2, dtype=float)
        if eta2.shape == (3,) and np.all(np.isfinite(eta2)):
            self._attitude = eta2

    def on_pose_quaternion(self, now_s, q_enu_flu):
        """Headset orientation (x, y, z, w) of FLU in ENU -> desired NED/FRD attitude."""
        self._pose = (float(now_s), self._clamp(euler_ned_frd_from_enu_flu_quaternion(q_enu_flu)))

    def _clamp(self, eta2d):
        out = np.array(eta2d, dtype=float)
        out[:2] = np.clip(out[:2], -self.s.bound_rad, self.s.bound_rad)
        out[2] = wrap_angle(out[2])
        return out

    def step(self, now_s):
        """The desired state at ``now_s`` (None until an attitude was measured)."""
        if self._attitude is None:
            return None
        now_s = float(now_s)
        if self._eta2d is None:
            self._eta2d = self._clamp(self._attitude)
        dt = 0.0 if self._last_step_s is None else min(max(now_s - self._last_step_s, 0.0), self.s.max_step_s)
        self._last_step_s = now_s
        events, self._events = self._events, []
        changes = []
        message = ""
        fresh = self._joy is not None and now_s - self._joy[0] <= self.s.joy_timeout_s
        if self._joy is None:
            message = "no joystick message received"
        elif not fresh:
            message = "joystick silent for %.2f s (limit %.2f s)" % (now_s - self._joy[0], self.s.joy_timeout_s)
        deadman = fresh and self._joy[2][self.s.buttons["deadman"]]
        if fresh and not deadman:
            message = "deadman released"
        u_linear = np.zeros(3)
        u_pilot = np.zeros(3)
        if not deadman:
            events = [e for e in events if e == "arm_toggle"]    # disarming must stay possible
            for i in np.nonzero(self.pilot_axes)[0]:
                changes.append(self._hand_back(i, "deadman released" if fresh else "joystick silent"))
            message += "; holding roll/pitch/yaw %s deg, linear commands zero" % (
                np.round(np.degrees(self._eta2d), 1).tolist(),)
            return PilotCommand(self._eta2d.copy(), u_linear, self.pilot_axes.copy(), u_pilot,
                                False, message, events, changes)

        sticks = self._joy[1]
        shaped = {k: shape(v, self.s.dead_zone, self.s.expo) for k, v in sticks.items()}
        u_linear = np.array([shaped[k] for k in LINEAR])
        pose_fresh = self.pose_mode and self._pose is not None and now_s - self._pose[0] <= self.s.pose_timeout_s
        if self.pose_mode and not pose_fresh:
            message = ("no headset pose received" if self._pose is None else
                       "headset pose %.2f s old (limit %.2f s)" % (now_s - self._pose[0], self.s.pose_timeout_s))
            message += "; holding roll/pitch/yaw %s deg" % (np.round(np.degrees(self._eta2d), 1).tolist(),)
        for i, name in enumerate(ANGULAR):
            deflection = abs(sticks[name])
            if not self.pilot_axes[i] and deflection > self.s.takeover_threshold:
                self.pilot_axes[i] = True
                changes.append("%s: pilot takeover (stick %.2f > %.2f), open loop"
                               % (name, sticks[name], self.s.takeover_threshold))
            elif self.pilot_axes[i] and deflection < self.s.release_threshold:
                changes.append(self._hand_back(i, "stick %.2f < %.2f" % (sticks[name], self.s.release_threshold)))
            if self.pilot_axes[i]:
                u_pilot[i] = shaped[name]
                self._eta2d[i] = self._attitude[i]
            elif pose_fresh:
                self._eta2d[i] = self._pose[1][i]
            elif not self.pose_mode:
                self._eta2d[i] += shaped[name] * self.s.max_rate_rad_s[i] * dt
        self._eta2d = self._clamp(self._eta2d)
        return PilotCommand(self._eta2d.copy(), u_linear, self.pilot_axes.copy(), u_pilot,
                            True, message, events, changes)

    def _hand_back(self, i, why):
        self.pilot_axes[i] = False
        self._eta2d[i] = self._attitude[i]
        self._eta2d = self._clamp(self._eta2d)
        return "%s: handed back to the autopilot (%s), holding %.1f deg" % (
            ANGULAR[i], why, math.degrees(self._eta2d[i]))


# --------------------------------------------------------------------------- control_law side
class PilotTakeover(object):
    """The control law's view of the pilot takeover (PilotTakeover messages).

    :meth:`apply` replaces, on the axes in pilot hands, the closed-loop torque of a tick
    by the pilot's open-loop command ``tau = u_pilot * tau_max`` (stock MANUAL). Only
    an ``ACTIVE`` tick is changed (every hold/neutral mode wins over the pilot), and a
    takeover message older than ``timeout_s`` counts as no takeover.
    """

    def __init__(self, timeout_s):
        if not timeout_s > 0:
            raise Brov2Error("takeover timeout_s: expected a value > 0, got %r" % (timeout_s,))
        self.timeout_s = float(timeout_s)
        self._last = None           # (received time, pilot_axes, u_pilot)

    def set(self, now_s, pilot_axes, u_pilot):
        axes = np.array(pilot_axes, dtype=bool)
        u = np.array(u_pilot, dtype=float)
        if axes.shape != (3,) or u.shape != (3,):
            raise InputDataError("pilot takeover: expected 3 pilot_axes and 3 u_pilot, got %d and %d"
                                 % (axes.size, u.size))
        if not np.all(np.isfinite(u)):
            raise InputDataError("pilot takeover: u_pilot not finite: %s" % u.tolist())
        self._last = (float(now_s), axes, np.clip(u, -1.0, 1.0))

    def axes(self, now_s):
        """(pilot_axes (3,) bool, u_pilot (3,)) in force at ``now_s``."""
        if self._last is None or now_s - self._last[0] > self.timeout_s:
            return np.zeros(3, dtype=bool), np.zeros(3)
        return self._last[1].copy(), np.where(self._last[1], self._last[2], 0.0)

    def apply(self, result, now_s, tau_max, active_mode):
        """(result with pilot axes open loop, pilot_axes in force)."""
        axes, u_pilot = self.axes(now_s)
        if result.mode != active_mode or not axes.any():
            return result, np.zeros(3, dtype=bool)
        tau_max = np.asarray(tau_max, dtype=float)
        tau = np.array(result.tau_body_frd, dtype=float)
        sat = np.array(result.saturated, dtype=bool)
        for i in np.nonzero(axes)[0]:
            tau[3 + i] = u_pilot[i] * tau_max[3 + i]
            sat[3 + i] = False
        result.tau_body_frd, result.saturated = tau, sat
        return result, axes


# --------------------------------------------------------------------------- /dev/input/js*
class JsState(object):
    """Axes and buttons of a Linux joystick from its 8-byte ``js_event`` records.

    Axis values are published as joy_node does (ros-drivers/joystick_drivers,
    joy/src/joy_node.cpp, Joystick::run: ``scale = -1 / (1 - deadzone) / 32767``):
    ``axes[n] = -value / 32767`` (no dead zone here; params/joystick.yaml has ours), so
    stick up / left read positive as in every joy_node-based map.
    """

    def __init__(self):
        self.axes = []
        self.buttons = []

    @staticmethod
    def parse(data):
        """bytes (a multiple of 8) -> list of (time_ms, value, type, number)."""
        if len(data) % JS_EVENT_SIZE:
            raise InputDataError("js_event stream: %d bytes is not a multiple of %d" % (len(data), JS_EVENT_SIZE))
        return [struct.unpack_from(JS_EVENT_FORMAT, data, off) for off in range(0, len(data), JS_EVENT_SIZE)]

    def feed(self, data):
        """Apply the events in ``data``; True when anything changed."""
        changed = False
        for _, value, etype, number in self.parse(data):
            kind = etype & ~JS_EVENT_INIT
            if kind == JS_EVENT_AXIS:
                target, v = self.axes, max(-1.0, min(1.0, -value / JS_AXIS_MAX))
            elif kind == JS_EVENT_BUTTON:
                target, v = self.buttons, 1 if value else 0
            else:
                continue
            while len(target) <= number:
                target.append(0.0 if target is self.axes else 0)
            if target[number] != v:
                target[number] = v
                changed = True
        return changed
