"""Replay a logged run in the in-process loop and compare it with the log.

A log (:data:`brov2_hybrid.tick_log.logfile.LOG_COLUMNS`, e.g. from the ROS ``logger``
node) of a yaw step is flown again by :class:`~brov2_hybrid.loop.closed_loop.ClosedLoop`
with the same omega_d, start attitude and input; :func:`compare_with_log` compares the
settling times (``brov2-analyze compare-log``, ``test/rostest_yaw_step.py``). The input is
either the dive CSV the logged run played, shifted onto the log's step
(:func:`aligned_dive`), or the log's own desired columns (:func:`dive_from_log`).
Times s, angles rad, NED/FRD.
"""
import math

import numpy as np

from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.dive.dive_csv import Dive
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.tick_log.logfile import DESIRED_COLUMNS, LINEAR_CMD_COLUMNS


def dive_from_log(log):
    """The desired attitude and linear commands of a log, as a Dive (times from 0)."""
    t = np.asarray(log["time_s"], dtype=float)
    eta = np.column_stack([log[c] for c in DESIRED_COLUMNS])
    lin = np.column_stack([log[c] for c in LINEAR_CMD_COLUMNS])
    keep = np.concatenate([[True], np.diff(t) > 0])
    return Dive(t_s=t[keep] - t[0], eta2d_rad=eta[keep], u_linear=np.clip(lin[keep], -1.0, 1.0), source="log")


def _step_index(yaw_d):
    """First sample that moved more than half way from the first to the last value."""
    start, final = float(yaw_d[0]), float(yaw_d[-1])
    moved = np.nonzero(np.abs(yaw_d - start) > 0.5 * abs(final - start))[0]
    return int(moved[0]) if moved.size else None


def aligned_dive(dive, step_time_s):
    """``dive`` shifted so that its yaw step falls at ``step_time_s``, held at its first row before."""
    k = _step_index(np.unwrap(dive.eta2d_rad[:, 2]))
    if k is None:
        raise Brov2Error("%s: the dive holds no yaw step" % (dive.source or "dive"))
    shift = step_time_s - float(dive.t_s[k] - dive.t_s[0])
    t = dive.t_s - dive.t_s[0] + shift
    keep = t > 0.0
    t = np.concatenate([[0.0], t[keep]])
    eta = np.vstack([dive.eta2d_rad[:1], dive.eta2d_rad[keep]])
    lin = np.vstack([dive.u_linear[:1], dive.u_linear[keep]])
    return Dive(t_s=t, eta2d_rad=eta, u_linear=lin, source=dive.source)


def compare_with_log(log_csv_path, settings=None, band=0.05, tolerance=0.10, loop=None, dive_csv_path=None):
    """Replay a logged yaw step in the in-process loop and compare settling times.

    The log (e.g. from the ROS ``logger`` node) supplies omega_d (median of the
    ``omega_d_rad_s`` column), the start attitude and the step time (first sample of
    ``yaw_d_rad`` more than half way to its final value). The input replayed is the dive
    CSV the logged run played (``dive_csv_path``, aligned on the step; recommended: the
    control law estimates the desired rate from the input samples, so their rate
    matters), else the log's own desired columns at the log's tick rate. Settling is
    measured on each run's yaw with the +-``band`` rule. Usable from rostest or pytest:
    ``result["ok"]`` is True when the settling times differ by <= ``tolerance``.

    Returns
    -------
    dict with ros_settling_s, inprocess_settling_s, relative_difference, ok, omega_d_rad_s,
    step_time_s, step_rad, duration_s, latency (the in-process loop's), log_path, input.
    """
    from brov2_hybrid.analysis import metrics
    from brov2_hybrid.dive.dive_csv import load_dive_csv
    from brov2_hybrid.tick_log.logfile import read_log
    log = read_log(log_csv_path)
    # Rows logged while the autopilot had no input or attitude carry NaN angles: skip them.
    finite = np.isfinite(log["yaw_d_rad"]) & np.isfinite(log["yaw_rad"])
    log = {k: (np.asarray(v)[finite] if k != "mode" else [m for m, f in zip(v, finite) if f]) for k, v in log.items()}
    if not log["time_s"].size:
        raise Brov2Error("%s: no row with a finite desired and actual yaw" % log_csv_path)
    t = log["time_s"] - log["time_s"][0]
    yaw_d = np.unwrap(log["yaw_d_rad"])
    start, final = float(yaw_d[0]), float(yaw_d[-1])
    k = _step_index(yaw_d)
    if k is None or abs(final - start) < 1e-6:
        raise Brov2Error("%s: column 'yaw_d_rad' holds no step (constant %.4f rad)" % (log_csv_path, start))
    step_time = float(t[k])
    omega_d = float(np.median(log["omega_d_rad_s"]))
    yaw = np.unwrap(log["yaw_rad"])
    ros_settle = metrics.settling_time(t, yaw, final, step_time, initial=start, band=band)
    loop = loop or ClosedLoop(settings)
    # Depth is NaN in the rows logged before the first depth message arrived.
    depths = log["depth_m"][np.isfinite(log["depth_m"])]
    initial = np.concatenate([[0.0, 0.0, float(depths[0]) if depths.size else 0.0],
                              [log["roll_rad"][0], log["pitch_rad"][0], log["yaw_rad"][0]]])
    if dive_csv_path:
        # The logged desired sample just before the log's step row was the last pre-step
        # input; the input row itself arrived between the two log rows.
        dive = aligned_dive(load_dive_csv(dive_csv_path), step_time)
    else:
        dive = dive_from_log(log)
    res = loop.run(dive, duration_s=float(t[-1]), omega_d_rad_s=omega_d, initial_eta=initial)
    sim_yaw = np.unwrap(res.log["yaw_rad"])
    sim_settle = metrics.settling_time(res.t_s, sim_yaw, final, step_time, initial=start, band=band)
    diff = abs(sim_settle - ros_settle) / ros_settle if ros_settle > 0 else float("nan")
    return {"ros_settling_s": ros_settle, "inprocess_settling_s": sim_settle, "relative_difference": diff,
            "ok": bool(math.isfinite(diff) and diff <= tolerance), "omega_d_rad_s": omega_d,
            "step_time_s": step_time, "step_rad": final - start, "duration_s": float(t[-1]),
            "latency": loop.settings.latency_label(1.0 / float(np.median(np.diff(dive.t_s[1:])))),
            "log_path": log_csv_path, "input": dive_csv_path or "log rows"}
