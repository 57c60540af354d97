"""Desired-rate estimate d(eta2d)/dt for the derivative term of the control law (Eq. 18).

The pilot's (or the dive's) desired attitude arrives as timestamped samples, with no
lookahead; :class:`DesiredRateEstimator` averages their wrapped finite differences.
Used by :class:`brov2_hybrid.control.law.HybridController`. Angles rad, times s.
"""
import collections

import numpy as np

from brov2_hybrid.validate import as_finite, as_integer, as_vector
from brov2_hybrid.physics.kinematics import wrap_angle


class DesiredRateEstimator(object):
    """Moving-average estimate of d(eta2d)/dt from timestamped samples, no lookahead.

    Over the last ``window`` finite differences the dt-weighted mean rate is
    sum(wrapped differences) / (t_last - t_first): samples may arrive irregularly.
    Samples with a time not after the last one replace it (a re-sent setpoint).
    """

    def __init__(self, window):
        self._times = collections.deque()
        self._values = collections.deque()
        self._diffs = collections.deque()  # wrapped differences between neighbours
        self.window = 1
        self.set_window(window)

    def set_window(self, window):
        """Set the number of finite differences averaged (an integer >= 1)."""
        self.window = as_integer(window, "rate_window", minimum=1)
        self._trim()

    def _trim(self):
        while len(self._times) > self.window + 1:
            self._times.popleft()
            self._values.popleft()
            self._diffs.popleft()

    def reset(self):
        """Forget every sample (e.g. after the input was lost)."""
        self._times.clear()
        self._values.clear()
        self._diffs.clear()

    def update(self, t_s, eta2d):
        """Add a desired attitude sample taken at time ``t_s`` [s]."""
        t_s = as_finite(t_s, "t_s")
        eta2d = as_vector(eta2d, 3, "eta2d")
        if self._times and t_s <= self._times[-1]:
            self._times.pop()
            self._values.pop()
            if self._diffs:
                self._diffs.pop()
        if self._values:
            self._diffs.append(wrap_angle(eta2d - self._values[-1]))
        self._times.append(t_s)
        self._values.append(eta2d)
        self._trim()

    def rate(self, now_s=None):
        """Estimated desired rates (3,) [rad/s]; zeros until two samples exist.

        ``now_s`` [s], the time of the tick asking: once the last sample has been held
        longer than the window it was estimated over (now_s - t_last > t_last - t_first),
        the pilot is holding the setpoint and the rate is zero. Without it the last
        estimate would stand for as long as no sample comes: a dive CSV with sparse rows
        (a step written as three rows) would leave the rate of its last jump in the
        derivative term for good and push the vehicle past the target.
        """
        if now_s is not None:
            now_s = as_finite(now_s, "now_s")
        if not self._diffs:
            return np.zeros(3)
        span = self._times[-1] - self._times[0]
        if now_s is not None and now_s - self._times[-1] > span:
            return np.zeros(3)
        return sum(self._diffs) / span
