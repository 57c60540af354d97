"""The control law's side of the pilot takeover (``nodes/control_law``).

``nodes/joy_input`` (:class:`brov2_hybrid.pilot.live_input.PilotInput`) decides, per
angular axis, when the pilot takes an axis over and hands it back, and publishes
``brov2_hybrid/PilotTakeover``; :class:`PilotTakeover` holds the latest of those
messages and flies the pilot's axes open loop, as stock ArduSub MANUAL passes the
stick through: ``tau_axis = u_pilot_axis * tau_max_axis``.
"""
import numpy as np

from brov2_hybrid.errors import InputDataError
from brov2_hybrid.validate import as_positive


class PilotTakeover(object):
    """The control law's view of the pilot takeover (PilotTakeover messages).

    :meth:`apply` replaces, on the axes in pilot hands, the closed-loop torque of a tick
    by the pilot's open-loop command ``tau = u_pilot * tau_max`` (stock MANUAL). Only
    an ``ACTIVE`` tick is changed (every hold/neutral mode wins over the pilot), and a
    takeover message older than ``timeout_s`` counts as no takeover.
    """

    def __init__(self, timeout_s):
        self.timeout_s = as_positive(timeout_s, "takeover timeout_s")
        self._last = None           # (received time, pilot_axes, u_pilot)

    def set(self, now_s, pilot_axes, u_pilot):
        """A PilotTakeover message received at ``now_s``: pilot_axes (3,) bool, u_pilot (3,) in [-1, 1]."""
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
