"""Desired-rate estimates of the control law: d(eta2d)/dt for Eq. 18, and the filtered desired trajectory.

The pilot's (or the dive's) desired attitude arrives as timestamped samples, with no
lookahead; :class:`DesiredRateEstimator` averages their wrapped finite differences (the
derivative term's eta2d_dot), :class:`ReferenceFilter` smooths them into an attitude, rate
and acceleration (the optional reference feed-forward's trajectory). Used by
:class:`brov2_hybrid.control.law.HybridController`. Angles rad, times s.
"""
import math

import numpy as np

from brov2_hybrid.control import law_kernels
from brov2_hybrid.validate import as_finite, as_integer, as_positive, as_vector


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


class ReferenceFilter(object):
    """The desired trajectory, smoothed: attitude, rate and acceleration of the pilot's eta2d.

    Per axis a critically damped second-order state-variable filter,

        x_f'' = omega_f^2 wrap(u - x_f) - 2 omega_f x_f',    X_f / U = omega_f^2 / (s + omega_f)^2,

    driven by the desired attitude u and integrated exactly between samples (no step-size
    limit). Its output (x_f, x_f', x_f'') is a trajectory the vehicle can follow: the reference
    feed-forward (:func:`~brov2_hybrid.control.law_kernels.reference_torque`) takes the
    inverse dynamics along it.

    * **Delay**: 2 / omega_f at low frequency (the group delay of (s + omega_f)^-2; 0.2 s at
      omega_f 10 rad/s), plus the age of the last sample when a tick falls between samples (up
      to one sample period: 20 ms for a 50 Hz stream; none in the in-process loop, whose ticks
      and 50 Hz inputs coincide). A sine of frequency w is delayed by 2 atan(w / omega_f) / w.
    * **Tremor**: a tremor A sin(w t) well above omega_f comes out as at most omega_f^2 A / w of
      rate and omega_f^2 A of acceleration (instead of A w and A w^2: a pilot's 8 Hz tremor is
      attenuated (50 / omega_f)^2 times), so omega_f sets the trade between delay and tremor.
    * **A 50 Hz stream**: samples at most ``max_gap_s`` apart are joined by straight lines
      (a first-order hold), so the staircase of a sampled ramp gives its rate and zero
      acceleration, without the 50 Hz saw-tooth a held input would put into x_f'' (of
      amplitude omega_f^2 rate / (2 x 50 Hz)). Between samples the trajectory stays at the
      last sample's state until the next is due (one interval of the stream), then settles
      on the held sample: a stream that stops, or a dive CSV's sparse rows, is a setpoint
      held. A sample after a longer gap is a step, followed at once.

    The state lives in arrays that :func:`~brov2_hybrid.control.law_kernels.reference_update`
    and :func:`~brov2_hybrid.control.law_kernels.reference_output` update, compiled where numba is.
    Angles rad, times s.

    Parameters
    ----------
    omega_rad_s : float
        The filter's natural frequency omega_f, > 0 [rad/s].
    max_gap_s : float
        The longest gap between two samples of a stream, > 0 [s].
    """

    def __init__(self, omega_rad_s, max_gap_s):
        self._kernels = law_kernels.kernels()
        #: rows: x_f [rad], x_f' [rad/s] and the last sample [rad] per axis (roll, pitch, yaw)
        self.state = np.zeros((3, 3))
        self.meta = np.array([math.nan, 0.0])    # LAST_T: the last sample's time (NaN: none), STAY
        self.omega_rad_s = 1.0
        self.max_gap_s = 1.0
        self.set_omega(omega_rad_s)
        self.set_max_gap(max_gap_s)

    def set_omega(self, omega_rad_s):
        """Set the natural frequency omega_f (> 0) [rad/s]; the state carries on."""
        self.omega_rad_s = as_positive(omega_rad_s, "omega_rad_s")

    def set_max_gap(self, max_gap_s):
        """Set the longest gap (> 0) [s] between two samples of a stream."""
        self.max_gap_s = as_positive(max_gap_s, "max_gap_s")

    def reset(self):
        """Forget every sample: the next one starts the filter at rest on it."""
        self.meta[law_kernels.LAST_T] = math.nan

    def update(self, t_s, eta2d):
        """Add a desired attitude sample (3,) [rad] taken at time ``t_s`` [s]."""
        self._kernels["reference_update"](self.state, self.meta, self.omega_rad_s, self.max_gap_s,
                                          as_finite(t_s, "t_s"), as_vector(eta2d, 3, "eta2d"))

    def trajectory(self, now_s=None):
        """The filtered attitude, Euler rates and accelerations at ``now_s`` [s], a (3, 3) array of
        rows [rad], [rad/s], [rad/s^2] (zeros before the first sample); None: at the last sample."""
        out = np.empty((3, 3))
        self._kernels["reference_output"](self.state, self.meta, self.omega_rad_s,
                                          math.nan if now_s is None else as_finite(now_s, "now_s"), out)
        return out
