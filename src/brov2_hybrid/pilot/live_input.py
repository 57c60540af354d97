"""Live pilot input: a joystick (sensor_msgs/Joy) or an AR headset's orientation -> desired state.

ROS-free core of ``nodes/joy_input``. Settings: ``params/joystick.yaml``
(:mod:`brov2_hybrid.pilot.settings`; docs/flying.md "Flying with a joystick or a headset").
Each stick is mapped and shaped (dead zone, expo) by :mod:`brov2_hybrid.pilot.stick_shaping`;
then, in joystick mode:

* angular sticks are desired *rates*: ``eta2d += y * max_rate * dt`` with ``dt`` the
  time between steps (stamps), roll and pitch clamped to +-bound, yaw wrapped to (-pi, pi];
* linear sticks are the open-loop surge/sway/heave commands ``y`` in [-1, 1].

Deadman: released (or the joystick silent for ``joy_timeout_s``) -> the desired attitude
is held where it is and the linear commands are zero; no axis is in pilot hands.

Pilot takeover, per angular axis, on the raw deflection ``|stick|`` (after the axis map,
before dead zone/expo): beyond ``takeover_threshold`` the axis goes to the pilot, open
loop, ``u_axis = y`` in [-1, 1] (tau_axis = u_axis * tau_max_axis, as stock ArduSub
MANUAL passes the stick through; the control law's side is
:class:`brov2_hybrid.pilot.takeover.PilotTakeover`); below ``release_threshold``
(hysteresis) the axis is handed back and the autopilot captures the attitude measured at
that instant as ``eta2d`` for the axis and holds it. While an axis is with the pilot its
desired angle follows the measured one (so the hand-back is continuous).

Headset (pose mode): the angular DOFs come from an orientation quaternion in ROS
ENU/FLU (REP-103), converted once here to NED/FRD Euler angles
(:func:`brov2_hybrid.physics.kinematics.euler_ned_frd_from_enu_flu_quaternion`); roll and pitch
are clamped to their bounds; the joystick still gives the linear DOFs, the deadman and
the takeover.
"""
import math
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.errors import InputDataError
from brov2_hybrid.physics.kinematics import euler_ned_frd_from_enu_flu_quaternion, wrap_angle
from brov2_hybrid.pilot.settings import ANGULAR, LINEAR, TOGGLE_BUTTONS
from brov2_hybrid.pilot.stick_shaping import mapped_sticks, shape


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
        """The measured attitude (roll, pitch, yaw) [rad], NED/FRD; a non-finite or wrongly sized one is ignored."""
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
