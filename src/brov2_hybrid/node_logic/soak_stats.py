"""Soak-test statistics: is a long-running autopilot flat in memory, tick cost and ticks?

The soak benchmark (``scripts/bench_soak.py``, part of ``make bench``) samples each
node's resident memory and CPU time and records every control tick; these functions
turn those samples into the figures it prints. Plain numpy, no ROS.

Units: time in seconds, memory in bytes (figures in MiB per hour), CPU cost per tick in
milliseconds.
"""
import numpy as np

from brov2_hybrid.errors import Brov2Error

SECONDS_PER_HOUR = 3600.0
MIB = 1024.0 * 1024.0


def _series(t_s, y, name):
    t = np.asarray(t_s, dtype=float)
    v = np.asarray(y, dtype=float)
    if t.ndim != 1 or v.shape != t.shape:
        raise Brov2Error("%s: expected two 1-D arrays of one length, got shapes %s and %s"
                         % (name, t.shape, v.shape))
    keep = np.isfinite(t) & np.isfinite(v)
    return t[keep], v[keep]


def slope_per_hour(t_s, y, name="series"):
    """Least-squares slope of ``y`` against ``t_s`` [unit of y per hour]; NaN with < 3 points.

    A straight line through noisy samples: a leak shows as a steady positive slope, while
    allocator noise averages out. ``t_s`` need not be evenly spaced.
    """
    t, v = _series(t_s, y, name)
    if t.size < 3 or np.ptp(t) <= 0.0:
        return float("nan")
    slope = np.polyfit(t - t[0], v, 1)[0]
    return float(slope * SECONDS_PER_HOUR)


def memory_growth_mib_per_h(t_s, rss_bytes, warmup_s=0.0):
    """Resident-memory growth [MiB/h] after ``warmup_s`` (start-up allocations excluded)."""
    t, v = _series(t_s, rss_bytes, "rss_bytes")
    keep = t >= (t[0] + warmup_s) if t.size else t.astype(bool)
    return slope_per_hour(t[keep], v[keep] / MIB, "rss_bytes")


def cpu_ms_per_tick(t_s, cpu_s, tick_t_s, window_s):
    """CPU time the node spent per control tick [ms], in consecutive windows.

    Parameters
    ----------
    t_s, cpu_s : array_like (n,)
        Sample times and the node's cumulative CPU time (user + system) at them [s].
    tick_t_s : array_like (k,)
        Times of the control ticks on the same clock as ``t_s`` [s].
    window_s : float
        Window length [s]; a window with no tick gives NaN.

    Returns
    -------
    (centres_s, ms_per_tick) : two ndarrays, one entry per window
    """
    t, c = _series(t_s, cpu_s, "cpu_s")
    ticks = np.sort(np.asarray(tick_t_s, dtype=float))
    if not window_s > 0:
        raise Brov2Error("window_s: expected a positive number of seconds, got %r" % (window_s,))
    if t.size < 2:
        return np.empty(0), np.empty(0)
    edges = np.arange(t[0], t[-1] + 1e-9, window_s)
    if edges.size < 2:
        return np.empty(0), np.empty(0)
    cpu_at = np.interp(edges, t, c)
    n_ticks = np.diff(np.searchsorted(ticks, edges))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_tick = np.where(n_ticks > 0, np.diff(cpu_at) / n_ticks * 1e3, np.nan)
    return 0.5 * (edges[:-1] + edges[1:]), per_tick


def tick_gaps(ticks, stamps_s, period_s, tolerance=0.5):
    """Dropped control ticks from the tick counter and the tick stamps.

    Parameters
    ----------
    ticks : array_like of int (n,)
        The control node's tick counter as received (1, 2, ...), in arrival order.
    stamps_s : array_like (n,)
        The ticks' stamps [s] (the loop's clock).
    period_s : float
        Nominal tick period [s] (1 / 50 Hz).
    tolerance : float
        A stamp interval longer than (1 + tolerance) periods counts as late ticks.

    Returns
    -------
    dict with ``received`` (ticks seen), ``missing`` (counter values never seen: ticks
    computed but lost on the way), ``late_intervals`` (intervals between consecutive
    received ticks longer than their counter difference allows) and ``skipped_periods``
    (whole periods inside those intervals that no tick number accounts for: ticks the
    loop did not run). A lost tick is counted once, as missing, not also as skipped.
    """
    k = np.asarray(ticks, dtype=np.int64)
    t = np.asarray(stamps_s, dtype=float)
    if k.shape != t.shape or k.ndim != 1:
        raise Brov2Error("tick_gaps: expected ticks and stamps of one length, got %s and %s" % (k.shape, t.shape))
    if not period_s > 0:
        raise Brov2Error("period_s: expected a positive period, got %r" % (period_s,))
    if k.size == 0:
        return {"received": 0, "missing": 0, "late_intervals": 0, "skipped_periods": 0}
    seen, first = np.unique(k, return_index=True)
    missing = int(seen[-1] - seen[0] + 1 - seen.size)
    dk = np.diff(seen)
    dt = np.diff(t[first])
    late = dt > (dk + tolerance) * period_s
    skipped = np.maximum(np.rint(dt / period_s) - dk, 0.0)
    return {"received": int(k.size), "missing": missing, "late_intervals": int(np.sum(late)),
            "skipped_periods": int(np.sum(skipped[late]))}
