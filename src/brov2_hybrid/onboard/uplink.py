"""The topside's uplink to the on-board script: the desired state down each tick, omega_d as a parameter.

With ``placement:=onboard`` (docs/onboard.md "Flying it from ROS") the law runs in ArduSub; the
topside's control_law still reads the pilot's input, applies its input timeouts and publishes one
AutopilotStatus per tick. ``mavlink_bridge`` hands each status to :class:`Uplink`, which sends

* the tick's desired attitude eta_2d [rad, NED], its rate d(eta_2d)/dt [rad/s] (estimated here by the
  control law's own :class:`~brov2_hybrid.control.rate_estimate.DesiredRateEstimator` over the ticks'
  stamps, ``controller.yaml`` rate_window) and the linear commands u_1:3 in [-1, 1] as one
  DEBUG_FLOAT_ARRAY (:func:`~brov2_hybrid.onboard.desired_link.desired_data`), at most
  ``max_rate_hz`` (vehicle time);
* the status's omega_d [rad/s] (the launch argument, then the dynamic_reconfigure knob) as PARAM_SET
  of the script's ``<param_prefix>OMEGA_D`` whenever it differs from what the vehicle confirmed,
  re-sent every ``param_retry_s`` (wall) until a PARAM_VALUE echoes it.

A tick without a finite desired state (control_law without input yet, shutting down) sends nothing:
the script's own timeouts hold, then go neutral (its ``desired_timeout_s``, ``desired_lost_s``).
Plain Python, no rospy: ``send`` is :meth:`brov2_hybrid.link.mavlink_connection.MavlinkConnection.send`
(``send(fn)`` calls ``fn(mav)`` with a pymavlink ``MAVLink`` object and says whether it went out).
"""
import functools
import math
import re
import threading

import numpy as np

from brov2_hybrid.control.rate_estimate import DesiredRateEstimator
from brov2_hybrid.onboard.desired_link import ARRAY_NAME, desired_data
from brov2_hybrid.validate import as_positive


def _locked(method):
    """Run ``method`` under the instance's lock."""
    @functools.wraps(method)
    def wrapper(self, *args):
        with self._lock:
            return method(self, *args)
    return wrapper


#: MAV_PARAM_TYPE_REAL32: the script's parameters are floats (param:add_param).
MAV_PARAM_TYPE_REAL32 = 9
#: Timing slack of the rate limit: a tick 1 % early still goes (ticks follow the 50 Hz attitude).
RATE_SLACK = 0.99


def omega_param_name(onboard):
    """The script's omega_d parameter name (``HYB_OMEGA_D``) for :class:`OnboardSettings` ``onboard``."""
    return onboard.param_prefix + "OMEGA_D"


class Uplink(object):
    """What the topside sends the on-board script (module docstring).

    Parameters
    ----------
    send : callable
        ``send(fn)`` -> bool: calls ``fn(mav)`` with a pymavlink ``MAVLink`` object.
    onboard : brov2_hybrid.onboard.lua_script.OnboardSettings
    rate_window : int
        Finite differences averaged in the desired-rate estimate (controller.yaml ``rate_window``).
    max_rate_hz : float
        Most desired states sent per second of vehicle time.
    param_retry_s : float
        Re-send an unconfirmed PARAM_SET after this long [wall s].
    param_tolerance : float
        A PARAM_VALUE within this of the value set confirms it [rad/s] (float32 on the wire).
    target : (int, int)
        The vehicle's system and component id.
    """

    def __init__(self, send, onboard, rate_window, max_rate_hz, param_retry_s, param_tolerance, target=(1, 1)):
        self.send = send
        self.onboard = onboard
        self.param_name = omega_param_name(onboard)
        self.estimator = DesiredRateEstimator(rate_window)
        self.min_period_s = RATE_SLACK / as_positive(max_rate_hz, "max_rate_hz")
        self.param_retry_s = as_positive(param_retry_s, "param_retry_s")
        self.param_tolerance = as_positive(param_tolerance, "param_tolerance")
        self.target = target
        self.last_sent_s = -math.inf     # vehicle time of the last desired state sent [s]
        self.sent = 0                    # desired states sent
        self.omega_wanted = None         # omega_d the topside wants on board [rad/s]
        self.omega_confirmed = None      # the value the vehicle echoed last
        self.param_sent_mono = None      # when the pending PARAM_SET went out [wall s]
        self.param_sets = 0              # PARAM_SETs sent
        self._lock = threading.RLock()   # the bridge calls on_status from ROS, turn from its MAVLink thread

    # ------------------------------------------------------------------ the desired state
    @_locked
    def on_status(self, t_s, eta2d, u_linear, omega_d_rad_s, mono):
        """One control_law tick at vehicle time ``t_s`` [s]: its desired attitude (3,) [rad], linear
        commands (3,) in [-1, 1] and omega_d [rad/s]; ``mono`` the wall time [s]. Returns the data
        sent (58 floats) or None (not finite, too soon, or no link)."""
        self.want_omega(omega_d_rad_s, mono)
        eta2d = np.asarray(eta2d, dtype=float)
        u_linear = np.clip(np.asarray(u_linear, dtype=float), -1.0, 1.0)
        if not (math.isfinite(t_s) and eta2d.shape == (3,) and u_linear.shape == (3,)
                and np.all(np.isfinite(eta2d)) and np.all(np.isfinite(u_linear))):
            self.estimator.reset()       # the next desired state starts a new estimate
            return None
        self.estimator.update(t_s, eta2d)
        if t_s - self.last_sent_s < self.min_period_s:
            return None
        data = desired_data(eta2d, self.estimator.rate(t_s), u_linear)
        time_usec, array_id = int(round(t_s * 1e6)), self.onboard.desired_array_id
        if not self.send(lambda mav: mav.debug_float_array_send(time_usec, ARRAY_NAME, array_id, data)):
            return None
        self.last_sent_s = t_s
        self.sent += 1
        return data

    # ------------------------------------------------------------------ omega_d
    @_locked
    def want_omega(self, omega_d_rad_s, mono):
        """The topside's omega_d [rad/s]; a new value is set on board at once (PARAM_SET)."""
        if omega_d_rad_s is None or not math.isfinite(omega_d_rad_s) or omega_d_rad_s <= 0.0:
            return
        if self.omega_wanted is not None and omega_d_rad_s == self.omega_wanted:
            return
        self.omega_wanted = float(omega_d_rad_s)
        if not self.confirmed():
            self._param_set(mono)

    def confirmed(self):
        """True when the vehicle echoed the omega_d wanted (or none is wanted yet)."""
        return self.omega_wanted is None or (self.omega_confirmed is not None and abs(
            self.omega_confirmed - self.omega_wanted) <= self.param_tolerance)

    @_locked
    def on_param_value(self, name, value):
        """A PARAM_VALUE from the vehicle (any parameter; ours confirms or contradicts the set)."""
        if name == self.param_name and value is not None and math.isfinite(value):
            self.omega_confirmed = float(value)

    @_locked
    def turn(self, mono):
        """Re-send the PARAM_SET while unconfirmed, every ``param_retry_s``. Returns whether one went out."""
        if self.confirmed() or (self.param_sent_mono is not None and mono - self.param_sent_mono < self.param_retry_s):
            return False
        return self._param_set(mono)

    def _param_set(self, mono):
        name, value = self.param_name.encode("ascii"), self.omega_wanted
        if not self.send(lambda mav: mav.param_set_send(self.target[0], self.target[1], name, value,
                                                        MAV_PARAM_TYPE_REAL32)):
            return False
        self.param_sent_mono = mono
        self.param_sets += 1
        return True


def report_name(name):
    """A NAMED_VALUE_FLOAT's name as text (bytes or str as pymavlink gives it, NUL padding stripped)."""
    name = name.decode("ascii", "replace") if isinstance(name, bytes) else str(name)
    return name.rstrip("\x00").strip()


class ScriptReports(object):
    """The script's own reports (NAMED_VALUE_FLOAT every ``report_period_s``): its loop rate ``HYB_HZ``
    [Hz] and its longest and shortest loop period ``HYB_DTMAX``, ``HYB_DTMIN`` [ms], gathered for
    :meth:`summary` (what the bridge logs)."""

    NAMES = ("HYB_HZ", "HYB_DTMAX", "HYB_DTMIN")

    def __init__(self):
        self.values = {name: [] for name in self.NAMES}

    def add(self, name, value):
        """A NAMED_VALUE_FLOAT (name as sent, NUL padding allowed); others are ignored."""
        name = report_name(name)
        if name in self.values and value is not None and math.isfinite(value):
            self.values[name].append(float(value))

    def summary(self, since=0):
        """One line on the reports from index ``since`` on, or None when there are none."""
        hz, dt_max, dt_min = (self.values[n][since:] for n in self.NAMES)
        if not hz:
            return None
        text = "rate %.0f Hz median (%.0f .. %.0f) over %d reports" % (np.median(hz), min(hz), max(hz), len(hz))
        if dt_max and dt_min:
            text += ", loop period %.0f .. %.0f ms (median of the longest per report %.0f ms)" % (
                min(dt_min), max(dt_max), np.median(dt_max))
        return text

    def count(self):
        """Reports of the rate received so far."""
        return len(self.values["HYB_HZ"])


#: A :meth:`ScriptReports.summary` line, read back (:func:`parse_reports_summary`).
_SUMMARY = re.compile(r"rate (\d+) Hz median \((\d+) \.\. (\d+)\) over (\d+) reports(?:, loop period (\d+) \.\. (\d+) ms "
                      r"\(median of the longest per report (\d+) ms\))?")


def parse_reports_summary(text):
    """The figures of a :meth:`ScriptReports.summary` line found in ``text`` (e.g. the bridge's log line):
    {rate_hz_median, rate_hz_min, rate_hz_max, reports, period_ms_min, period_ms_max, longest_ms_median}
    (the periods None when the line has none), or None when ``text`` holds no such line."""
    m = _SUMMARY.search(text)
    if m is None:
        return None
    keys = ("rate_hz_median", "rate_hz_min", "rate_hz_max", "reports", "period_ms_min", "period_ms_max",
            "longest_ms_median")
    return {k: (None if v is None else int(v)) for k, v in zip(keys, m.groups())}


#: The script's STATUSTEXTs start so (hybrid_onboard.lua.template, ``say``); a mode change is
#: "brov2_hybrid: MODE" or "brov2_hybrid: MODE: why" (its ``enter``).
TEXT_PREFIX = "brov2_hybrid: "
#: The script's modes (the template's M.MODES) and the one that flies the desired state.
SCRIPT_MODES = ("RELEASED", "ACTIVE", "HOLD", "LOST_NEUTRAL", "NAN_NEUTRAL", "FAULT_NEUTRAL", "PILOT")
ACTIVE_MODE = "ACTIVE"
ACTIVE_TEXT = TEXT_PREFIX + ACTIVE_MODE


def script_mode(text):
    """The script's mode a STATUSTEXT announces (one of :data:`SCRIPT_MODES`), or None for any other text."""
    text = str(text).strip()
    if not text.startswith(TEXT_PREFIX):
        return None
    word = text[len(TEXT_PREFIX):].split(":", 1)[0].strip()
    return word if word in SCRIPT_MODES else None
