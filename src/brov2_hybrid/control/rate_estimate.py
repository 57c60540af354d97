"""Desired-rate estimate d(eta2d)/dt for the derivative term of the control law (Eq. 18).

The pilot's (or the dive's) desired attitude arrives as timestamped samples, with no
lookahead; :class:`DesiredRateEstimator` averages their wrapped finite differences.
Used by :class:`brov2_hybrid.control.law.HybridController`. Angles rad, times s.
"""
import math

import numpy as np

from brov2_hybrid.control import law_kernels
from brov2_hybrid.validate import as_finite, as_integer, as_vector


class DesiredRateEstimator(object):
    """Moving-average estimate of d(eta2d)/dt from timestamped samples, no lookahead.

    Over the last ``window`` finite differences the dt-weighted mean rate is
    sum(wrapped differences) / (t_last - t_first): samples may arrive irregularly.
    Samples with a time not after the last one replace it (a re-sent setpoint).
    The samples live in arrays that the kernels of :mod:`brov2_hybrid.control.law_kernels`
    update (:func:`~brov2_hybrid.control.law_kernels.rate_update`,
    :func:`~brov2_hybrid.control.law_kernels.rate_estimate`), compiled where numba is.
    """

    def __init__(self, window):
        self._kernels = law_kernels.kernels()
        self.times = np.zeros(0)
        self.values = np.zeros((0, 3))
        self.diffs = np.zeros((0, 3))
        self.meta = np.zeros(1, dtype=np.int64)   # meta[COUNT]: samples held, oldest first
        self.window = 1
        self.set_window(window)

    @property
    def count(self):
        """Number of samples held (at most window + 1)."""
        return int(self.meta[law_kernels.COUNT])

    def set_window(self, window):
        """Set the number of finite differences averaged (an integer >= 1)."""
        self.window = as_integer(window, "rate_window", minimum=1)
        if self.window + 2 > len(self.times):      # room for window + 2 samples (one past, before trimming)
            n = self.count
            times, values, diffs = np.zeros(self.window + 2), np.zeros((self.window + 2, 3)), \
                np.zeros((self.window + 2, 3))
            times[:n], values[:n], diffs[:n] = self.times[:n], self.values[:n], self.diffs[:n]
            self.times, self.values, self.diffs = times, values, diffs
        self.meta[law_kernels.COUNT] = self._kernels["rate_trim"](self.times, self.values, self.diffs, self.count,
                                                                  self.window)

    def reset(self):
        """Forget every sample (e.g. after the input was lost)."""
        self.meta[law_kernels.COUNT] = 0

    def update(self, t_s, eta2d):
        """Add a desired attitude sample taken at time ``t_s`` [s]."""
        self._kernels["rate_update"](self.times, self.values, self.diffs, self.meta, self.window,
                                     as_finite(t_s, "t_s"), as_vector(eta2d, 3, "eta2d"))

    def rate(self, now_s=None):
        """Estimated desired rates (3,) [rad/s]; zeros until two samples exist.

        ``now_s`` [s], the time of the tick asking: once the last sample has been held
        longer than the window it was estimated over (now_s - t_last > t_last - t_first),
        the pilot is holding the setpoint and the rate is zero. Without it the last
        estimate would stand for as long as no sample comes: a dive CSV with sparse rows
        (a step written as three rows) would leave the rate of its last jump in the
        derivative term for good and push the vehicle past the target.
        """
        now = math.nan if now_s is None else as_finite(now_s, "now_s")
        out = np.empty(3)
        self._kernels["rate_estimate"](self.times, self.diffs, self.count, now, out)
        return out
