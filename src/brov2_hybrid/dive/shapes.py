"""Simple dives built in code: a step or a sine on one attitude axis.

The inputs of the step, latency, Bode and robustness experiments and of many tests.
Each is a :class:`~brov2_hybrid.dive.dive_csv.Dive` sampled at ``rate_hz`` from t = 0 s
to ``duration_s`` (both ends included), linear commands zero. Axis 0/1/2 = roll/pitch/yaw,
angles rad, NED/FRD.
"""
import math

import numpy as np

from brov2_hybrid.dive.dive_csv import Dive


def _sample_times_s(duration_s, rate_hz):
    """Sample times [s] 0, 1/rate_hz, ... up to ``duration_s`` (included when on the grid)."""
    return np.arange(0.0, duration_s + 0.5 / rate_hz, 1.0 / rate_hz)


def step_dive(step_rad, step_time_s, duration_s, rate_hz, axis=2):
    """A dive that holds 0 and steps ``axis`` (default yaw) to ``step_rad`` at ``step_time_s``."""
    t = _sample_times_s(duration_s, rate_hz)
    eta = np.zeros((t.size, 3))
    eta[t >= step_time_s - 1e-9, axis] = step_rad
    return Dive(t_s=t, eta2d_rad=eta, u_linear=np.zeros((t.size, 3)), source="step")


def sine_dive(amplitude_rad, freq_hz, duration_s, rate_hz, axis=2):
    """A dive with ``axis`` (default yaw) = amplitude sin(2 pi f t), sampled at ``rate_hz``."""
    t = _sample_times_s(duration_s, rate_hz)
    eta = np.zeros((t.size, 3))
    eta[:, axis] = amplitude_rad * np.sin(2.0 * math.pi * freq_hz * t)
    return Dive(t_s=t, eta2d_rad=eta, u_linear=np.zeros((t.size, 3)), source="sine %g Hz" % freq_hz)
