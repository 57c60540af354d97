"""Performance measures of the paper's experiments (Sec. 5.2-5.3, App. C, Eq. 25-26).

* :func:`settling_time` - time after the step from which the response stays within
  +-band of the step (docs/DESIGN.md section 8: +-5 % of 90 deg).
* :func:`rise_time` - first time the response covers 90 % of the step.
* :func:`overshoot` / :func:`undershoot` - largest excursion beyond the target / the
  wrong way, in % of the step.
* :func:`iae` / :func:`cumulative_iae` - integral of the absolute error (Fig. 18).
* :func:`energy` / :func:`cumulative_energy` - sum of |PWM - 1500| / 400 over control
  ticks (Eq. 26, Fig. 19).
* :func:`normalized_error` - Eq. 25, (1/T) int |e| / |psi| dt.
* :func:`gain_phase` - gain from half peak-to-peak, phase from peak times (App. C).
* :func:`bandwidth` - first frequency where a gain curve falls below 1/sqrt(2).
* :func:`unity_crossing` - frequency where the gain falls back through 1 after its peak.
* :func:`median_ci` - distribution-free confidence interval of a median (Monte Carlo spread).

Signals are 1-D arrays sampled at increasing times ``t_s`` [s]; angles in rad.
"""
import math

import numpy as np
from scipy import signal as sps

from brov2_hybrid.link.ardusub import PWM_HALF_RANGE_US, PWM_NEUTRAL_US
from brov2_hybrid.errors import Brov2Error

#: -3 dB (Eq. A21).
HALF_POWER_GAIN = math.sqrt(2.0) / 2.0


def _series(t_s, y, name="y"):
    t = np.asarray(t_s, dtype=float)
    v = np.asarray(y, dtype=float)
    if t.ndim != 1 or v.shape != t.shape:
        raise Brov2Error("%s: expected a 1-D array the length of t_s (%d), got shape %s"
                         % (name, t.size, v.shape))
    if t.size < 2:
        raise Brov2Error("%s: expected at least 2 samples, got %d" % (name, t.size))
    if np.any(np.diff(t) <= 0):
        raise Brov2Error("t_s: expected strictly increasing times")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(v))):
        raise Brov2Error("%s: expected finite values" % name)
    return t, v


def settling_time(t_s, y, target, t_step_s, initial=0.0, band=0.05):
    """Time [s] after ``t_step_s`` from which ``y`` stays within +-band*|target - initial| of target.

    The crossing into the band is interpolated linearly between samples. Returns NaN
    when the response is outside the band at the last sample (never settled) and 0 when
    it never leaves the band after the step.
    """
    t, v = _series(t_s, y)
    tol = band * abs(float(target) - float(initial))
    if tol <= 0.0:
        raise Brov2Error("settling_time: expected target != initial and band > 0")
    after = t >= t_step_s
    if not np.any(after):
        raise Brov2Error("settling_time: no samples after the step time %g s" % t_step_s)
    ta, err = t[after], np.abs(v[after] - target)
    outside = np.nonzero(err > tol)[0]
    if outside.size == 0:
        return 0.0
    k = int(outside[-1])
    if k == ta.size - 1:
        return float("nan")
    # Interpolate the time at which |error| falls to tol between samples k and k+1.
    e0, e1 = err[k], err[k + 1]
    frac = (e0 - tol) / (e0 - e1) if e0 != e1 else 1.0
    return float(ta[k] + frac * (ta[k + 1] - ta[k]) - t_step_s)


def rise_time(t_s, y, target, t_step_s, initial=0.0, fraction=0.9):
    """Time [s] after the step at which ``y`` first covers ``fraction`` of the step (NaN if never)."""
    t, v = _series(t_s, y)
    step = float(target) - float(initial)
    if step == 0.0:
        raise Brov2Error("rise_time: expected target != initial")
    progress = (v - initial) / step
    reached = np.nonzero((t >= t_step_s) & (progress >= fraction))[0]
    if reached.size == 0:
        return float("nan")
    k = int(reached[0])
    if k == 0 or t[k - 1] < t_step_s:
        return float(t[k] - t_step_s)
    p0, p1 = progress[k - 1], progress[k]
    return float(t[k - 1] + (fraction - p0) / (p1 - p0) * (t[k] - t[k - 1]) - t_step_s)


def overshoot(t_s, y, target, t_step_s, initial=0.0):
    """Largest excursion beyond ``target`` after the step, in % of the step (>= 0)."""
    t, v = _series(t_s, y)
    step = float(target) - float(initial)
    if step == 0.0:
        raise Brov2Error("overshoot: expected target != initial")
    beyond = (v[t >= t_step_s] - target) * math.copysign(1.0, step)
    return float(max(0.0, np.max(beyond)) / abs(step) * 100.0) if beyond.size else 0.0


def undershoot(t_s, y, target, t_step_s, initial=0.0):
    """Largest excursion the wrong way (non-minimum phase dip) after the step, in % (>= 0)."""
    t, v = _series(t_s, y)
    step = float(target) - float(initial)
    if step == 0.0:
        raise Brov2Error("undershoot: expected target != initial")
    wrong = (initial - v[t >= t_step_s]) * math.copysign(1.0, step)
    return float(max(0.0, np.max(wrong)) / abs(step) * 100.0) if wrong.size else 0.0


def cumulative_iae(t_s, error):
    """Running integral of |error| dt (trapezoidal), same length as ``t_s``, starting at 0."""
    t, e = _series(t_s, error, "error")
    a = np.abs(e)
    return np.concatenate([[0.0], np.cumsum(0.5 * (a[1:] + a[:-1]) * np.diff(t))])


def iae(t_s, error):
    """Integral of the absolute error over the record (trapezoidal) [unit of error x s]."""
    return float(cumulative_iae(t_s, error)[-1])


def cumulative_energy(pwm_us, neutral_us=PWM_NEUTRAL_US, half_range_us=PWM_HALF_RANGE_US):
    """Running sum of Eq. 26, |PWM - neutral| / half_range, one term per control tick."""
    p = np.asarray(pwm_us, dtype=float)
    if p.ndim != 1 or not np.all(np.isfinite(p)):
        raise Brov2Error("pwm_us: expected a 1-D array of finite PWMs")
    return np.cumsum(np.abs(p - neutral_us) / half_range_us)


def energy(pwm_us, neutral_us=PWM_NEUTRAL_US, half_range_us=PWM_HALF_RANGE_US):
    """Eq. 26: sum over control ticks of |PWM - neutral| / half_range (dimensionless)."""
    c = cumulative_energy(pwm_us, neutral_us, half_range_us)
    return float(c[-1]) if c.size else 0.0


def normalized_error(t_s, y, y_ref, t_start_s, window_s, floor):
    """Eq. 25: (1/T) int_{t_start}^{t_start+T} |y - y_ref| / max(|y_ref|, floor) dt.

    ``floor`` (> 0, unit of y) keeps the ratio finite where the reference heading
    is near zero (just after the step). Returned as a fraction (x100 for %).
    """
    t, v = _series(t_s, y)
    _, r = _series(t_s, y_ref, "y_ref")
    if floor <= 0.0 or window_s <= 0.0:
        raise Brov2Error("normalized_error: expected floor > 0 and window_s > 0")
    inside = (t >= t_start_s) & (t <= t_start_s + window_s)
    if np.count_nonzero(inside) < 2:
        raise Brov2Error("normalized_error: fewer than 2 samples in [%g, %g] s"
                         % (t_start_s, t_start_s + window_s))
    ratio = np.abs(v[inside] - r[inside]) / np.maximum(np.abs(r[inside]), floor)
    ti = t[inside]
    return float(np.sum(0.5 * (ratio[1:] + ratio[:-1]) * np.diff(ti)) / (ti[-1] - ti[0]))


def _peak_times(t, v, min_distance_s):
    """Times of local maxima, refined by a parabola through each peak and its neighbours."""
    dt = float(np.median(np.diff(t)))
    idx, _ = sps.find_peaks(v, distance=max(1, int(0.8 * min_distance_s / dt)))
    out = []
    for i in idx:
        if 0 < i < v.size - 1:
            y0, y1, y2 = v[i - 1], v[i], v[i + 1]
            den = y0 - 2.0 * y1 + y2
            shift = 0.5 * (y0 - y2) / den if den != 0.0 else 0.0
            out.append(t[i] + float(np.clip(shift, -1.0, 1.0)) * 0.5 * (t[i + 1] - t[i - 1]))
    return np.array(out)


def gain_phase(t_s, y_in, y_out, freq_hz, t_from_s=None):
    """Gain and phase of a sine response as in App. C.

    Gain = half peak-to-peak of ``y_out`` / half peak-to-peak of ``y_in`` over the
    samples at t >= ``t_from_s``. Phase = circular mean of -2 pi f * lag, the lag of each
    output peak behind the latest input peak at or before it; it lies in (-pi, pi]
    (unwrap across frequency for lags beyond half a period, as App. C does).

    Returns
    -------
    gain : float
    phase_rad : float (NaN if no peak pair was found)
    """
    t, u = _series(t_s, y_in, "y_in")
    _, y = _series(t_s, y_out, "y_out")
    f = float(freq_hz)
    if f <= 0.0:
        raise Brov2Error("freq_hz: expected > 0, got %r" % freq_hz)
    keep = t >= (t[0] if t_from_s is None else t_from_s)
    t, u, y = t[keep], u[keep], y[keep]
    if t.size < 3:
        raise Brov2Error("gain_phase: fewer than 3 samples after t_from_s")
    amp_in = 0.5 * (np.max(u) - np.min(u))
    if amp_in <= 0.0:
        raise Brov2Error("gain_phase: the input does not vary")
    gain = 0.5 * (np.max(y) - np.min(y)) / amp_in
    period = 1.0 / f
    peaks_in = _peak_times(t, u, period)
    peaks_out = _peak_times(t, y, period)
    phases = []
    for tp in peaks_out:
        before = peaks_in[peaks_in <= tp]
        if before.size:
            phases.append(-2.0 * math.pi * f * (tp - before[-1]))
    if not phases:
        return float(gain), float("nan")
    # Circular mean: an output peak just ahead of its input peak (a lag of almost a
    # period) counts as a small lead, not as -2 pi.
    mean = np.angle(np.mean(np.exp(1j * np.array(phases))))
    return float(gain), float(mean)


def bandwidth(omega, gain):
    """First frequency where ``gain`` falls below 1/sqrt(2), interpolated linearly.

    ``omega`` increasing; returns NaN if the gain never falls below the line.
    """
    w = np.asarray(omega, dtype=float)
    g = np.asarray(gain, dtype=float)
    below = np.nonzero(g < HALF_POWER_GAIN)[0]
    if below.size == 0:
        return float("nan")
    k = int(below[0])
    if k == 0:
        return float(w[0])
    g0, g1 = g[k - 1], g[k]
    return float(w[k - 1] + (g0 - HALF_POWER_GAIN) / (g0 - g1) * (w[k] - w[k - 1]))


def unity_crossing(omega, gain):
    """Frequency where the gain, after its maximum, falls through 1 (NaN if it never
    reaches 1 or never falls back below it), interpolated linearly."""
    w = np.asarray(omega, dtype=float)
    g = np.asarray(gain, dtype=float)
    top = int(np.argmax(g))
    if g[top] < 1.0:
        return float("nan")
    below = np.nonzero(g[top:] < 1.0)[0]
    if below.size == 0:
        return float("nan")
    k = top + int(below[0])
    g0, g1 = g[k - 1], g[k]
    return float(w[k - 1] + (g0 - 1.0) / (g0 - g1) * (w[k] - w[k - 1]))


def value_at(x, y, x0):
    """Linear interpolation of y(x) at x0 (x increasing); NaN outside the range."""
    x = np.asarray(x, dtype=float)
    if not x[0] <= x0 <= x[-1]:
        return float("nan")
    return float(np.interp(x0, x, np.asarray(y, dtype=float)))


def median_ci(values, level=0.95):
    """Distribution-free confidence interval (lo, hi) of the median of ``values``.

    The order statistics (x_(j), x_(n+1-j)) with the largest j whose coverage
    1 - 2 P(B <= j - 1), B ~ Binomial(n, 1/2), is still >= ``level`` (the sign-test
    interval: no assumption on the distribution, so it fits settling times and IAEs).
    Non-finite values are dropped. (nan, nan) with too few samples for the level (at 95 %:
    fewer than 6, since (x_(1), x_(5)) covers only 93.75 %).
    """
    v = np.sort(np.asarray([x for x in np.ravel(values) if math.isfinite(x)], dtype=float))
    n = v.size
    if not 0.0 < level < 1.0:
        raise Brov2Error("level: expected a value in (0, 1), got %r" % (level,))
    from scipy.stats import binom
    j = 0
    while j + 1 <= n // 2 and 1.0 - 2.0 * binom.cdf(j, n, 0.5) >= level:
        j += 1                # x_(j+1) .. x_(n-j) still covers the level
    if j == 0:
        return float("nan"), float("nan")
    return float(v[j - 1]), float(v[n - j])


def depth_error(depth_m, depth_setpoint_m):
    """Depth hold error over the ticks that held depth: (RMS, max |e|, ticks) with e = setpoint - depth [m].

    Ticks whose setpoint is NaN (depth hold off, or open loop without a depth reading) or whose
    depth is NaN are left out; (NaN, NaN, 0) when none held depth.
    """
    depth = np.asarray(depth_m, dtype=float)
    target = np.asarray(depth_setpoint_m, dtype=float)
    if depth.shape != target.shape:
        raise Brov2Error("depth_m, depth_setpoint_m: expected one shape, got %s and %s" % (depth.shape, target.shape))
    held = np.isfinite(depth) & np.isfinite(target)
    if not held.any():
        return math.nan, math.nan, 0
    e = target[held] - depth[held]
    return float(np.sqrt(np.mean(e * e))), float(np.max(np.abs(e))), int(held.sum())
