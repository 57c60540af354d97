"""ROS-free logic of the autopilot nodes: safety modes, rate meter, dive playback,
override verification and node parameters.

The nodes in ``nodes/`` are thin rospy shells around these classes, so everything
that decides what the autopilot does can be tested with plain pytest, without a
ROS master. Times are floats in seconds on one clock (ROS time, which may be
simulated time); attitudes are NED/FRD Euler angles [rad], rates FRD [rad/s];
u is the normalised 6-DOF command (surge, sway, heave, roll, pitch, yaw).
"""
import collections
import math
import threading
from dataclasses import dataclass

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.bridge_core import CHAN_NOCHANGE
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.params import load_yaml

DEFAULT_AUTOPILOT_FILE = "autopilot.yaml"

# Modes of AutopilotStatus.mode, in order of precedence (first that applies wins).
MODE_ACTIVE = "ACTIVE"                      # closed loop on fresh attitude and input
MODE_NAN = "NAN_NEUTRAL"                    # a non-finite input: neutral command
MODE_NO_ATTITUDE = "NO_ATTITUDE_NEUTRAL"    # attitude missing or stale: neutral command
MODE_FAULT = "FAULT_NEUTRAL"                # the control law refused its inputs: neutral
MODE_NO_INPUT = "NO_INPUT_HOLD"             # desired input stale: hold attitude, linear zero
MODE_SHUTDOWN = "SHUTDOWN"                  # node shutting down: neutral, override released
MODES = (MODE_ACTIVE, MODE_NAN, MODE_NO_ATTITUDE, MODE_FAULT, MODE_NO_INPUT, MODE_SHUTDOWN)
NEUTRAL_MODES = (MODE_NAN, MODE_NO_ATTITUDE, MODE_FAULT, MODE_SHUTDOWN)


# --------------------------------------------------------------------------- params
def load_node_params(node, overrides=None, path=None, other_keys=()):
    """Parameters of one node: ``params/autopilot.yaml`` section ``node``, then ``overrides``.

    Parameters
    ----------
    node : str
        Section name (the node's base name, e.g. ``control_law``).
    overrides : dict, optional
        Values set on the parameter server for the node (its private namespace); they
        win over the file. Keys not in the file are refused (likely typos), except
        ``other_keys`` (private parameters the node owns otherwise, e.g.
        dynamic_reconfigure's), which are skipped.

    Returns
    -------
    dict
    """
    path = path or paths.params_path(DEFAULT_AUTOPILOT_FILE)
    data = load_yaml(path)
    if node not in data or not isinstance(data[node], dict):
        raise ParameterError("%s: missing section '%s'" % (path, node))
    merged = dict(data[node])
    for key, value in (overrides or {}).items():
        if key in other_keys:
            continue
        if key not in merged:
            raise ParameterError("~%s: unknown parameter for %s (known: %s)"
                                 % (key, node, ", ".join(sorted(merged))))
        merged[key] = value
    return merged


class ParamReader(object):
    """Typed, validated access to a node's parameter dict; errors name the parameter."""

    def __init__(self, values, node):
        self.values = values
        self.node = node

    def _raw(self, key):
        if key not in self.values:
            raise ParameterError("%s ~%s: missing parameter" % (self.node, key))
        return self.values[key]

    def _fail(self, key, expected, value):
        raise ParameterError("%s ~%s: expected %s, got %r" % (self.node, key, expected, value))

    def number(self, key, minimum=None, maximum=None, strict_min=False):
        value = self._raw(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self._fail(key, "a finite number", value)
        if minimum is not None and (value < minimum or (strict_min and value == minimum)):
            self._fail(key, "a number %s %g" % (">" if strict_min else ">=", minimum), value)
        if maximum is not None and value > maximum:
            self._fail(key, "a number <= %g" % maximum, value)
        return float(value)

    def positive(self, key):
        return self.number(key, minimum=0.0, strict_min=True)

    def integer(self, key, minimum=None, maximum=None):
        value = self._raw(key)
        if isinstance(value, bool) or not isinstance(value, int):
            self._fail(key, "an integer", value)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self._fail(key, "an integer in [%s, %s]" % (minimum, maximum), value)
        return value

    def boolean(self, key):
        value = self._raw(key)
        if not isinstance(value, bool):
            self._fail(key, "true or false", value)
        return value

    def string(self, key, allow_empty=False, choices=None):
        value = self._raw(key)
        if not isinstance(value, str) or (not allow_empty and not value):
            self._fail(key, "a non-empty string" if not allow_empty else "a string", value)
        if choices is not None and value not in choices:
            self._fail(key, "one of %s" % (list(choices),), value)
        return value


# --------------------------------------------------------------------------- rate meter
class RateMeter(object):
    """Message rate [Hz] from message timestamps over a sliding window.

    rate = (n - 1) / (t_newest - t_oldest) over the stamps not older than
    ``window_s`` before the newest; 0 with fewer than two stamps. ``rate_hz(now)``
    also drops stamps older than ``window_s`` before ``now``, so a stream that
    stops reads 0 after one window.
    """

    def __init__(self, window_s):
        if not window_s > 0:
            raise Brov2Error("window_s: expected a value > 0, got %r" % window_s)
        self.window_s = float(window_s)
        self._stamps = collections.deque()

    def add(self, stamp_s):
        if self._stamps and stamp_s <= self._stamps[-1]:
            if stamp_s < self._stamps[-1] - self.window_s:
                self._stamps.clear()      # clock went backwards (vehicle restarted)
            else:
                return                    # duplicate / reordered stamp
        self._stamps.append(float(stamp_s))
        self._trim(self._stamps[-1])

    def _trim(self, now_s):
        while self._stamps and self._stamps[0] < now_s - self.window_s:
            self._stamps.popleft()

    def rate_hz(self, now_s=None):
        if now_s is not None:
            self._trim(now_s)
        if len(self._stamps) < 2:
            return 0.0
        span = self._stamps[-1] - self._stamps[0]
        return (len(self._stamps) - 1) / span if span > 0 else 0.0


# --------------------------------------------------------------------------- control loop core
def _finite(values):
    return bool(np.all(np.isfinite(np.asarray(values, dtype=float))))


@dataclass
class TickResult:
    """What one control tick decided (everything the status message reports)."""

    mode: str
    message: str
    tau_body_frd: np.ndarray    # (6,) [N, N m]
    u: np.ndarray               # (6,) in [-1, 1]
    saturated: np.ndarray       # (6,) bool
    eta2d: np.ndarray           # (3,) desired attitude used [rad] (NaN when none)
    u_linear: np.ndarray        # (3,) open-loop command used
    eta2: np.ndarray            # (3,) measured attitude [rad] (NaN when none)
    nu2: np.ndarray             # (3,) measured body rates [rad/s] (NaN when none)
    attitude_age_s: float
    desired_age_s: float


def neutral_result(mode, message):
    """A neutral :class:`TickResult` (tau = 0, u = 0) that used no input: attitudes NaN,
    ages infinite. What a node publishes when its tick failed unexpectedly."""
    nan3 = np.full(3, np.nan)
    zero = np.zeros(6)
    return TickResult(mode, message, zero, zero.copy(), np.zeros(6, dtype=bool),
                      nan3, np.zeros(3), nan3.copy(), nan3.copy(), math.inf, math.inf)


def tick_time(now_s, at_s, max_lead_s):
    """Time [s] of a tick triggered by a message stamped ``at_s``, the clock reading ``now_s``.

    On vehicle time ``/clock`` may lag the attitude by one step, so the tick runs at the
    attitude's stamp when that is ahead of the clock, but never more than ``max_lead_s``
    ahead (a stamp from the future must not move the loop's time forward).
    """
    if at_s is not None and now_s < at_s <= now_s + max_lead_s:
        return float(at_s)
    return float(now_s)


class AutopilotCore(object):
    """Safety logic around :class:`~brov2_hybrid.control.HybridController`.

    Input ages are measured from the header stamp clamped to the local receive time
    (``min(stamp, received)``): a stamp from the future (a wrong clock) cannot keep an
    input fresh, while a message stamped long before it arrived is still old. The
    stamps themselves feed the desired-rate estimate.

    Precedence at each tick: a non-finite attitude or desired state -> ``NAN_NEUTRAL``;
    attitude missing or older than ``attitude_timeout_s`` -> ``NO_ATTITUDE_NEUTRAL``;
    desired state missing or older than ``desired_timeout_s`` -> ``NO_INPUT_HOLD``
    (hold the last desired attitude, or the attitude measured when the hold began if
    none was ever received, with linear commands zero and zero desired rate);
    otherwise ``ACTIVE``. A control-law error (e.g. gimbal lock) -> ``FAULT_NEUTRAL``.
    Neutral means tau = 0, u = 0 (every RC channel 1500).
    """

    def __init__(self, controller, attitude_timeout_s, desired_timeout_s):
        if not attitude_timeout_s > 0 or not desired_timeout_s > 0:
            raise Brov2Error("timeouts: expected values > 0, got %r, %r" % (attitude_timeout_s, desired_timeout_s))
        self.controller = controller
        self.attitude_timeout_s = float(attitude_timeout_s)
        self.desired_timeout_s = float(desired_timeout_s)
        self._attitude = None      # (age reference, eta2, nu2)
        self._desired = None       # (age reference, eta2d, u_linear, stamp)
        self._hold = None          # eta2d held while the input is stale
        self._nan_source = ""
        self._last_mode = None     # a mode change resets the controller's integral action

    @staticmethod
    def _age_reference(stamp_s, received_s):
        stamp_s = float(stamp_s)
        return stamp_s if received_s is None else min(stamp_s, float(received_s))

    def set_attitude(self, stamp_s, eta2, nu2, received_s=None):
        """Store the newest measured attitude (NED/FRD) and body rates (FRD).

        ``received_s``: local time the message arrived (default: the stamp); the
        attitude's age counts from ``min(stamp_s, received_s)``.
        """
        eta2 = np.array(eta2, dtype=float)
        nu2 = np.array(nu2, dtype=float)
        self._attitude = (self._age_reference(stamp_s, received_s), eta2, nu2)

    def set_desired(self, stamp_s, eta2d, u_linear, received_s=None):
        """Store the newest desired state; finite samples also feed the rate estimate
        (on their stamps). ``received_s`` as in :meth:`set_attitude`."""
        eta2d = np.array(eta2d, dtype=float)
        u_linear = np.array(u_linear, dtype=float)
        stamp_s = float(stamp_s)
        if _finite(eta2d) and _finite(u_linear):
            if self._desired is not None and stamp_s - self._desired[3] > self.desired_timeout_s:
                self.controller.rate_estimator.reset()    # input came back after a gap
            self.controller.update_desired(stamp_s, eta2d)
        self._desired = (self._age_reference(stamp_s, received_s), eta2d, u_linear, stamp_s)

    def _enter(self, mode):
        if mode != self._last_mode:
            self.controller.reset_integral()
            self._last_mode = mode

    def _neutral(self, mode, message, eta2d, u_lin, eta2, nu2, ages):
        self._enter(mode)
        zero = np.zeros(6)
        return TickResult(mode, message, zero, zero.copy(), np.zeros(6, dtype=bool),
                          eta2d, u_lin, eta2, nu2, ages[0], ages[1])

    def tick(self, now_s):
        """Decide the command at time ``now_s``; returns a :class:`TickResult`."""
        nan3 = np.full(3, np.nan)
        att_age = now_s - self._attitude[0] if self._attitude else math.inf
        des_age = now_s - self._desired[0] if self._desired else math.inf
        ages = (max(att_age, 0.0), max(des_age, 0.0))
        eta2, nu2 = (self._attitude[1], self._attitude[2]) if self._attitude else (nan3, nan3)
        eta2d, u_lin = (self._desired[1], self._desired[2]) if self._desired else (nan3, np.zeros(3))

        if self._attitude and not (_finite(eta2) and _finite(nu2)):
            return self._neutral(MODE_NAN, "attitude or rates not finite", eta2d, u_lin, eta2, nu2, ages)
        if self._desired and not (_finite(eta2d) and _finite(u_lin)):
            return self._neutral(MODE_NAN, "desired state not finite", eta2d, u_lin, eta2, nu2, ages)
        if att_age > self.attitude_timeout_s:
            what = "no attitude received" if not self._attitude else (
                "attitude %.2f s old (limit %.2f s)" % (att_age, self.attitude_timeout_s))
            return self._neutral(MODE_NO_ATTITUDE, what, eta2d, u_lin, eta2, nu2, ages)

        mode, message, rate_d = MODE_ACTIVE, "", None
        if des_age > self.desired_timeout_s:
            if self._hold is None:
                self._hold = eta2d.copy() if self._desired else eta2.copy()
            eta2d, u_lin, rate_d = self._hold, np.zeros(3), np.zeros(3)
            mode = MODE_NO_INPUT
            message = ("no desired state received" if not self._desired else
                       "desired state %.2f s old (limit %.2f s)" % (des_age, self.desired_timeout_s))
            message += "; holding roll/pitch/yaw %s deg, linear commands zero" % (
                np.round(np.degrees(eta2d), 1).tolist(),)
        else:
            self._hold = None
        self._enter(mode)
        try:
            out = self.controller.compute(eta2d, u_lin, eta2, nu2, eta2d_dot=rate_d, t_s=now_s)
        except Brov2Error as exc:
            return self._neutral(MODE_FAULT, "control law refused its inputs: %s" % exc,
                                 eta2d, u_lin, eta2, nu2, ages)
        return TickResult(mode, message, out.tau_body_frd, out.u, out.saturated,
                          eta2d, u_lin, eta2, nu2, ages[0], ages[1])


# --------------------------------------------------------------------------- dive playback
class DivePlayback(object):
    """Schedules the rows of a :class:`~brov2_hybrid.dive_csv.Dive` against a clock.

    Row ``i`` is due at ``start_s + (t_i - t_0) + k * period`` (k = loop count); rows
    are released only once due (no lookahead), in order, each with its due time as
    stamp. Without looping the dive is finished once the last row was released.
    With looping, one loop lasts the dive's duration plus ``loop_gap_s``.
    """

    def __init__(self, dive, start_s, loop=False, loop_gap_s=0.0):
        if loop_gap_s < 0:
            raise Brov2Error("loop_gap_s: expected a value >= 0, got %r" % loop_gap_s)
        self.dive = dive
        self.start_s = float(start_s)
        self.loop = bool(loop)
        self._offsets = dive.t_s - dive.t_s[0]
        self.period_s = float(self._offsets[-1]) + float(loop_gap_s)
        if self.loop and self.period_s <= 0:
            raise Brov2Error("loop: a one-row dive needs loop_gap_s > 0 to loop")
        self._next = 0          # index of the next row across loops (i + k * n)

    def due_time(self, k):
        n = len(self.dive)
        return self.start_s + self._offsets[k % n] + (k // n) * self.period_s

    @property
    def finished(self):
        return not self.loop and self._next >= len(self.dive)

    def next_due_s(self):
        """Due time of the next row, or None when finished."""
        return None if self.finished else self.due_time(self._next)

    def pop_due(self, now_s):
        """Rows due at ``now_s`` not released yet: list of (stamp_s, eta2d, u_linear)."""
        out = []
        n = len(self.dive)
        while not self.finished and self.due_time(self._next) <= now_s:
            i = self._next % n
            out.append((self.due_time(self._next), self.dive.eta2d_rad[i], self.dive.u_linear[i]))
            self._next += 1
        return out


# --------------------------------------------------------------------------- override verification
VERIFY_PENDING = "PENDING"
VERIFY_OK = "VERIFIED"
VERIFY_FAILED = "FAILED"


class OverrideVerifier(object):
    """Checks that RC overrides reach the vehicle: its motor outputs must move.

    Verification starts at the first override sent while the vehicle is armed in which
    some channel is at least ``min_deviation_us`` from neutral; if no motor output
    then moves from neutral within ``timeout_s``, the check fails. The commonest cause
    is a wrong MAVLink system id: ArduSub accepts RC_CHANNELS_OVERRIDE only from
    SYSID_MYGCS (default 255), so MAVROS (or our bridge) must use system_id 255.
    """

    def __init__(self, timeout_s, min_deviation_us, neutral_us):
        self.timeout_s = float(timeout_s)
        self.min_deviation_us = float(min_deviation_us)
        self.neutral_us = float(neutral_us)
        self.armed = False
        self.connected = True
        self._since = None
        self.state = VERIFY_PENDING

    def on_armed(self, armed):
        """Vehicle armed state; a check in progress restarts after a disarm."""
        self.armed = bool(armed)
        if not self.armed:
            self._since = None

    def on_link(self, connected):
        """Vehicle link up or down. While it is down the motors cannot answer, so a check
        in progress restarts with the next override after the link returns (a lost link
        is reported by the link watchdogs, not as a system-id problem)."""
        self.connected = bool(connected)
        if not self.connected:
            self._since = None

    def on_override(self, now_s, channels):
        """An override we sent: channel PWMs (0 / 65535 = release / no change)."""
        if self.state != VERIFY_PENDING or not (self.armed and self.connected) or self._since is not None:
            return
        if any(0 < c < CHAN_NOCHANGE and abs(c - self.neutral_us) >= self.min_deviation_us for c in channels):
            self._since = float(now_s)

    def on_outputs(self, channels):
        """The vehicle's motor outputs (SERVO_OUTPUT_RAW / mavros rc/out)."""
        if self.state == VERIFY_PENDING and self.armed and any(
                c > 0 and c != self.neutral_us for c in channels[:8]):
            self.state = VERIFY_OK

    def update(self, now_s):
        if self.state == VERIFY_PENDING and self._since is not None and now_s - self._since > self.timeout_s:
            self.state = VERIFY_FAILED
        return self.state

    def failure_message(self):
        return ("RC override is not reaching the vehicle: motors stayed at neutral for %.1f s "
                "while a non-neutral override was sent armed. ArduSub accepts RC_CHANNELS_OVERRIDE "
                "only from its ground-station system id: set the ArduSub parameter SYSID_MYGCS = 255 "
                "and run the bridge / MAVROS with system_id 255 (mavros_node _system_id:=255)."
                % self.timeout_s)


# --------------------------------------------------------------------------- override publication
class OverrideGate(object):
    """Serialises a node's RC override publications with its release of the override.

    ``send(publish)`` runs ``publish()`` under the gate's lock unless the override was
    released (checked inside the lock). ``release(publish_release)`` marks the gate
    released *before* it waits for the lock, so no publication starts after it, then
    runs ``publish_release()`` under the lock, after any publication already in
    flight. Once released, nothing but the release goes out.
    """

    def __init__(self):
        self._lock = threading.Lock()        # one publication at a time
        self._flag_lock = threading.Lock()   # the released flag
        self.released = False

    def send(self, publish):
        """Run ``publish()`` unless released; True when it ran."""
        with self._lock:
            if self.released:
                return False
            publish()
            return True

    def release(self, publish_release):
        """Release (once): True when this call released, False when already released."""
        with self._flag_lock:
            if self.released:
                return False
            self.released = True
        with self._lock:
            publish_release()
        return True


# --------------------------------------------------------------------------- statistics
def percentile_summary(samples, percentiles=(50, 99)):
    """{'n': count, 'p50': ..., 'p99': ..., 'max': ...} of a sequence (NaN when empty)."""
    arr = np.asarray(list(samples), dtype=float)
    out = {"n": int(arr.size)}
    for p in percentiles:
        out["p%d" % p] = float(np.percentile(arr, p)) if arr.size else math.nan
    out["max"] = float(arr.max()) if arr.size else math.nan
    return out


# --------------------------------------------------------------------------- dives from recorded messages
# Moved to brov2_hybrid.bag_input / brov2_hybrid.dive_csv (one validation for CSV and bag dives).
from brov2_hybrid.bag_input import DESIRED_STATE_TYPE, desired_samples  # noqa: E402,F401
from brov2_hybrid.dive_csv import dive_from_samples  # noqa: E402,F401
