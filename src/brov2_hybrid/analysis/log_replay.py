"""Replay a logged run in the in-process loop and compare it with the log.

A log (:data:`brov2_hybrid.tick_log.logfile.LOG_COLUMNS`, e.g. from the ROS ``logger``
node) of a yaw step is flown again by :class:`~brov2_hybrid.loop.closed_loop.ClosedLoop`
with the same omega_d, start attitude, input and loop dead time; :func:`compare_with_log`
compares the two yaw responses (``brov2-analyze compare-log``, ``test/rostest_yaw_step.py``).
The input is either the dive CSV the logged run played, shifted onto the log's step
(:func:`aligned_dive`), or the log's own desired columns (:func:`dive_from_log`).

Why the dead time is measured and what is compared:

* A logged run's loop latency (attitude age at the tick, command transport, the
  firmware's loop) is not the nominal one of ``params/analysis.yaml`` and grows with the
  machine's load. :func:`dead_time_s` measures it in the log and in a nominal replay the
  same way, as the time from the step tick to the first tick whose yaw has moved 1 % of
  the step (the yaw, not the rate: a firmware's gyro filter delays the logged rate more
  than the angle the comparison is about); the replay adds the log's excess to its
  command delay. All of it
  goes before the plant: in one loop delays commute, so the true yaw of a loop with the
  whole delay before the plant is the measured yaw (what the ROS log holds) of a loop with
  part of it in the telemetry.
* The agreement is judged on the paper's Eq. 25 error (:func:`metrics.normalized_error`,
  the ``compare_models`` window from the step), an integral of the whole response. The
  +-5 % settling time, also reported, is the crossing time of a band edge: a 1 deg
  overshoot or a single late attitude sample moves it by tenths of a second.

Times s, angles rad, NED/FRD.
"""
import math

import numpy as np

from dataclasses import replace

from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.dive.dive_csv import Dive
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.tick_log.logfile import DESIRED_COLUMNS, LINEAR_CMD_COLUMNS


#: The Eq. 25 yaw errors of a logged step and its replay agree when they differ by at most this fraction
#: of the logged one (``compare-log``'s default, and the tests' bound for every stack it replays).
TOLERANCE = 0.10

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


#: Share of the step a response has to move for :func:`compare_with_log` to call it started.
ONSET_FRACTION = 0.01


def dead_time_s(t_s, y, step_time_s, fraction=ONSET_FRACTION):
    """Time [s] from the step tick to the first tick whose ``y`` left its pre-step value.

    "Left" means by more than ``fraction`` of its largest departure after the step. Measured
    on the logged (ROS: as the control law saw it) or true (in-process) yaw alike, so the
    difference of two runs' values is their difference in loop latency, to a tick.
    Returns NaN when ``y`` never moves.
    """
    t = np.asarray(t_s, dtype=float)
    r = np.asarray(y, dtype=float)
    before = r[(t < step_time_s) & np.isfinite(r)]
    base = float(before[-1]) if before.size else float(r[np.isfinite(r)][0])
    after = (t >= step_time_s) & np.isfinite(r)
    departure = np.where(after, np.abs(r - base), 0.0)
    if not np.any(departure > 0.0):
        return float("nan")
    moved = np.nonzero(departure > fraction * departure.max())[0]
    return float(t[moved[0]] - step_time_s)


def _with_command_delay(loop, extra_s):
    """A loop like ``loop`` whose commands reach the motors ``extra_s`` later."""
    settings = replace(loop.settings, command_delay_s=loop.settings.command_delay_s + extra_s)
    return ClosedLoop(settings, vehicle=loop.vehicle, controller_params=loop.controller_params,
                      sim_options=loop.sim_options, rc_map=loop.rc_map)


def compare_with_log(log_csv_path, settings=None, band=0.05, tolerance=None, loop=None, dive_csv_path=None,
                     window_s=None, floor_rad=None):
    """:func:`compare_log` of the log CSV at ``log_csv_path`` (:func:`~brov2_hybrid.tick_log.logfile.read_log`)."""
    from brov2_hybrid.tick_log.logfile import read_log
    return compare_log(read_log(log_csv_path), log_csv_path, settings, band, tolerance, loop, dive_csv_path,
                       window_s, floor_rad)


def compare_log(log, log_csv_path, settings=None, band=0.05, tolerance=None, loop=None, dive_csv_path=None,
                window_s=None, floor_rad=None):
    """Replay a logged yaw step in the in-process loop and compare the responses.

    ``log``: the columns of a log (:func:`~brov2_hybrid.tick_log.logfile.read_log`; at least time_s, the
    desired and actual attitude, the linear commands, depth_m and omega_d_rad_s, ``mode`` optional);
    ``log_csv_path`` names it in errors and in the result.

    The log (e.g. from the ROS ``logger`` node) supplies omega_d (median of the
    ``omega_d_rad_s`` column), the start attitude, the step time (first sample of
    ``yaw_d_rad`` more than half way to its final value) and the loop's dead time
    (:func:`dead_time_s` on ``yaw_rad``; its excess over the nominal replay's is added to
    the replay's command delay). The input replayed is the dive CSV the logged run played
    (``dive_csv_path``, aligned on the step; recommended: the control law estimates the
    desired rate from the input samples, so their rate matters), else the log's own
    desired columns at the log's tick rate. Each run's yaw response is measured by Eq. 25
    (mean |yaw - target| / |step| over ``window_s`` from the step, ``floor_rad`` for a
    step near zero; default: the ``compare_models`` section of ``params/analysis.yaml``,
    cut to the log's length) and by the +-``band`` settling time. Usable from rostest or
    pytest: ``result["ok"]`` is True when the Eq. 25 errors differ by <= ``tolerance``
    (relative); the module docstring says why not the settling times.

    Returns
    -------
    dict with ros_error, inprocess_error, relative_difference (of the errors), ok,
    ros_settling_s, inprocess_settling_s, settling_difference, dead_time_s (the log's),
    added_delay_s, window_s, omega_d_rad_s, step_time_s, step_rad, duration_s, latency
    (the replay's), log_path, input.
    """
    from brov2_hybrid.analysis import metrics
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.dive.dive_csv import load_dive_csv
    if window_s is None or floor_rad is None:
        compare = load_analysis_settings().compare
        window_s = compare.error_window_s if window_s is None else window_s
        floor_rad = compare.error_floor_rad if floor_rad is None else floor_rad
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
    # The step starts from the last desired yaw before it (the first rows may hold another:
    # the heading held while the firmware is probed).
    start = float(yaw_d[k - 1]) if k > 0 else start
    window_s = min(float(window_s), float(t[-1]) - step_time)
    omega_d = float(np.median(log["omega_d_rad_s"]))
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

    def measures(t_s, yaw_rad):
        """(Eq. 25 error, settling time) of one run's yaw, relative to the step's start."""
        y = np.unwrap(yaw_rad) - start
        error = metrics.normalized_error(t_s, y, np.full(y.shape, final - start), step_time, window_s, floor_rad)
        return error, metrics.settling_time(t_s, y, final - start, step_time, initial=0.0, band=band)

    def replay(with_loop):
        res = with_loop.run(dive, duration_s=float(t[-1]), omega_d_rad_s=omega_d, initial_eta=initial)
        return res, dead_time_s(res.t_s, np.unwrap(res.log["yaw_rad"]), step_time)

    ros_error, ros_settle = measures(t, log["yaw_rad"])
    logged_dead_time = dead_time_s(t, np.unwrap(log["yaw_rad"]), step_time)
    res, nominal_dead_time = replay(loop)
    added = logged_dead_time - nominal_dead_time     # NaN if a yaw never moved: no correction
    added = loop.dt_s * round(added / loop.dt_s) if math.isfinite(added) else 0.0   # whole physics steps
    if added > 0.0:
        loop = _with_command_delay(loop, added)
        res, _ = replay(loop)
    else:
        added = 0.0
    sim_error, sim_settle = measures(res.t_s, res.log["yaw_rad"])
    diff = abs(sim_error - ros_error) / ros_error if ros_error > 0 else float("nan")
    settle_diff = abs(sim_settle - ros_settle) / ros_settle if ros_settle > 0 else float("nan")
    return {"ros_error": ros_error, "inprocess_error": sim_error, "relative_difference": diff,
            "ok": bool(math.isfinite(diff) and diff <= (TOLERANCE if tolerance is None else tolerance)),
            "ros_settling_s": ros_settle, "inprocess_settling_s": sim_settle, "settling_difference": settle_diff,
            "dead_time_s": logged_dead_time, "added_delay_s": added, "window_s": window_s,
            "omega_d_rad_s": omega_d, "step_time_s": step_time, "step_rad": final - start, "duration_s": float(t[-1]),
            "latency": loop.settings.latency_label(1.0 / float(np.median(np.diff(dive.t_s[1:])))),
            "log_path": log_csv_path, "input": dive_csv_path or "log rows"}


def console_lines(log_csv_path, r):
    """What ``brov2-analyze compare-log`` prints for the result ``r`` of :func:`compare_with_log`."""
    return ["%s: omega_d %.2f, step %.1f deg at %.2f s: Eq. 25 error over %.1f s %.4f logged vs %.4f in-process "
            "(%s; logged dead time %.3f s), difference %.1f %% -> %s" % (
                log_csv_path, r["omega_d_rad_s"], math.degrees(r["step_rad"]), r["step_time_s"], r["window_s"],
                r["ros_error"], r["inprocess_error"], r["latency"], r["dead_time_s"], 100 * r["relative_difference"],
                "agree" if r["ok"] else "DIFFER"),
            "  settling %.3f s logged vs %.3f s in-process (%.1f %% apart; not judged: a band-edge crossing)"
            % (r["ros_settling_s"], r["inprocess_settling_s"], 100 * r["settling_difference"]),
            "  input replayed: %s" % r["input"]]
