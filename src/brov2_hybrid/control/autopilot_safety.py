"""The autopilot's safety logic around the control law: which mode each control tick
is in and what it commands when its inputs are missing, stale or not finite.

``nodes/control_law`` is a thin rospy shell around :class:`AutopilotCore`, so
everything that decides what the autopilot commands can be tested with plain pytest,
without a ROS master. Times are floats in seconds on one clock (ROS time, which may be
simulated time); attitudes are NED/FRD Euler angles [rad], rates FRD [rad/s]; tau is
the 6-DOF generalized force (surge, sway, heave, roll, pitch, yaw) [N, N m], body FRD
(thruster_allocation turns it into the normalised command u).
"""
import math
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.errors import Brov2Error

# Modes of AutopilotStatus.mode, in order of precedence (first that applies wins).
MODE_ACTIVE = "ACTIVE"                      # closed loop on fresh attitude and input
MODE_NAN = "NAN_NEUTRAL"                    # a non-finite input: neutral command
MODE_NO_ATTITUDE = "NO_ATTITUDE_NEUTRAL"    # attitude missing or stale: neutral command
MODE_FAULT = "FAULT_NEUTRAL"                # the control law refused its inputs: neutral
MODE_NO_INPUT = "NO_INPUT_HOLD"             # desired input stale: hold attitude, linear zero
MODE_SHUTDOWN = "SHUTDOWN"                  # node shutting down: neutral, override released
MODES = (MODE_ACTIVE, MODE_NAN, MODE_NO_ATTITUDE, MODE_FAULT, MODE_NO_INPUT, MODE_SHUTDOWN)
NEUTRAL_MODES = (MODE_NAN, MODE_NO_ATTITUDE, MODE_FAULT, MODE_SHUTDOWN)


def _finite(values):
    return bool(np.all(np.isfinite(np.asarray(values, dtype=float))))


@dataclass
class TickResult:
    """What one control tick decided (everything the status message reports)."""

    mode: str
    message: str
    tau_body_frd: np.ndarray    # (6,) [N, N m]
    saturated: np.ndarray       # (6,) bool
    eta2d: np.ndarray           # (3,) desired attitude used [rad] (NaN when none)
    u_linear: np.ndarray        # (3,) open-loop command used
    eta2: np.ndarray            # (3,) measured attitude [rad] (NaN when none)
    nu2: np.ndarray             # (3,) measured body rates [rad/s] (NaN when none)
    attitude_age_s: float
    desired_age_s: float


def neutral_result(mode, message):
    """A neutral :class:`TickResult` (tau = 0) that used no input: attitudes NaN,
    ages infinite. What a node publishes when its tick failed unexpectedly."""
    nan3 = np.full(3, np.nan)
    zero = np.zeros(6)
    return TickResult(mode, message, zero, np.zeros(6, dtype=bool),
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
    """Safety logic around :class:`~brov2_hybrid.control.law.HybridController`.

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
    Neutral means tau = 0 (every RC channel 1500).
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
                self.controller.reset_desired()    # input came back after a gap
            self.controller.update_desired(stamp_s, eta2d)
        self._desired = (self._age_reference(stamp_s, received_s), eta2d, u_linear, stamp_s)

    def _enter(self, mode):
        if mode != self._last_mode:
            self.controller.reset_integral()
            self.controller.predictor.reset()       # a neutral stretch sent none of the torques it kept
            self._last_mode = mode

    def _neutral(self, mode, message, eta2d, u_lin, eta2, nu2, ages):
        self._enter(mode)
        zero = np.zeros(6)
        return TickResult(mode, message, zero, np.zeros(6, dtype=bool),
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
            out = self.controller.compute(eta2d, u_lin, eta2, nu2, eta2d_dot=rate_d, t_s=now_s, attitude_age_s=ages[0])
        except Brov2Error as exc:
            return self._neutral(MODE_FAULT, "control law refused its inputs: %s" % exc,
                                 eta2d, u_lin, eta2, nu2, ages)
        return TickResult(mode, message, out.tau_body_frd, out.saturated,
                          eta2d, u_lin, eta2, nu2, ages[0], ages[1])
