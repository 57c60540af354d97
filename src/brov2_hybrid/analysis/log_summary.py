"""IAE and energy of any control-tick log: the cut to the flown part, the figures, the plot.

One place for both users: ``brov2-analyze summarize LOG.csv`` (:func:`summarize_log`,
any log, CSV) and ``make run``'s summary of a ROS run (:mod:`brov2_hybrid.analysis.run_summary`,
a flown dive required, JSON); the dive experiment and the firmware comparison use
:func:`log_metrics` on their in-process logs.

A ROS log also holds the ticks before the dive started and after it ended (modes
NO_ATTITUDE_NEUTRAL, NO_INPUT_HOLD, SHUTDOWN); :func:`dive_part` keeps the rows from the
first to the last ACTIVE tick. IAE per angular axis = integral of |wrap(eta_d - eta)| dt
[deg s] (paper Fig. 18); energy per DOF = sum over ticks of |PWM - 1500| / 400 of its RC
channel (Eq. 26).
"""
import os

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.tick_log.logfile import read_log
from brov2_hybrid.vehicle.rc import load_rc_map
from brov2_hybrid.analysis import metrics, plots
from brov2_hybrid.analysis.context import AXES, LINEAR, write_csv


def log_metrics(log, rc_map):
    """IAE per angular axis [deg s], Eq. 26 energy per DOF, and running curves, for any log."""
    t = log["time_s"] - log["time_s"][0]
    desired = np.column_stack([log["%s_d_rad" % a] for a in AXES])
    actual = np.column_stack([log["%s_rad" % a] for a in AXES])
    error = wrap_angle(desired - actual)
    iae_curves = np.column_stack([metrics.cumulative_iae(t, np.degrees(error[:, k])) for k in range(3)])
    pwm = np.column_stack([log["rc%d_us" % ch] for ch in rc_map.channels])  # surge..yaw
    # 0 / 65535 are MAVLink's "release" / "no change": the vehicle sees neutral.
    pwm = np.where((pwm == 0) | (pwm == 65535), rc_map.neutral_us, pwm)
    energy_curves = np.column_stack([metrics.cumulative_energy(pwm[:, k], rc_map.neutral_us, rc_map.half_range_us)
                                     for k in range(6)])
    out = {"duration_s": float(t[-1]), "ticks": int(len(t))}
    for k, a in enumerate(AXES):
        out["iae_%s_deg_s" % a] = float(iae_curves[-1, k])
        out["rms_error_%s_deg" % a] = float(np.sqrt(np.mean(np.degrees(error[:, k]) ** 2)))
        out["max_error_%s_deg" % a] = float(np.max(np.abs(np.degrees(error[:, k]))))
    for k, d in enumerate(LINEAR + AXES):
        out["energy_%s" % d] = float(energy_curves[-1, k])
    curves = {"t_s": t, "desired_deg": np.degrees(desired), "actual_deg": np.degrees(desired - error),
              "iae_deg_s": iae_curves, "energy": energy_curves[:, 3:], "linear_pwm": pwm[:, :3]}
    return out, curves


def dive_part(log, require_active=True):
    """The rows from the first to the last ACTIVE tick, one row per instant (a new dict of arrays).

    A log with fewer than two ACTIVE ticks (not flown by a ROS autopilot, e.g. an in-process
    log without modes) raises :class:`Brov2Error` when ``require_active``, else is taken whole.
    """
    modes = np.array(log["mode"])
    active = np.flatnonzero(modes == "ACTIVE")
    if active.size >= 2:
        idx = np.arange(int(active[0]), int(active[-1]) + 1)
    elif require_active:
        raise Brov2Error("log: expected ACTIVE control ticks (a flown dive), found modes %s"
                         % sorted(set(log["mode"])))
    else:
        idx = np.arange(len(modes))
    t = log["time_s"][idx]
    keep = idx[np.concatenate([[True], np.diff(t) > 0])] if idx.size else idx
    out = {k: v[keep] for k, v in log.items() if k != "mode"}
    out["mode"] = list(modes[keep])
    return out


def measure_log(log_path, out_dir, rc_map=None, require_active=True):
    """Cut a log CSV to its flown part (:func:`dive_part`), measure it and plot ``<stem>_summary.png``.

    Returns (figures of :func:`log_metrics`, the cut log, the PNG's path).
    """
    rc_map = rc_map or load_rc_map()
    log = dive_part(read_log(log_path), require_active)
    if len(log["time_s"]) < 2:
        raise Brov2Error("%s: expected at least 2 rows to summarize" % log_path)
    os.makedirs(out_dir, exist_ok=True)
    figures, curves = log_metrics(log, rc_map)
    stem = os.path.splitext(os.path.basename(log_path))[0]
    png = plots.log_summary(os.path.join(out_dir, stem + "_summary.png"), curves["t_s"], curves["desired_deg"],
                            curves["actual_deg"], curves["iae_deg_s"], curves["energy"],
                            "%s (omega_d %.2f rad/s)" % (os.path.basename(log_path), float(np.median(log["omega_d_rad_s"]))))
    return figures, log, png


def summarize_log(log_path, out_dir, rc_map=None):
    """IAE and energy per axis of any log CSV, written as ``<stem>_summary.csv`` and a PNG.

    A ROS log is cut to its flown part (first to last ACTIVE tick); a log without ACTIVE
    ticks is taken whole."""
    m, _, png = measure_log(log_path, out_dir, rc_map, require_active=False)
    stem = os.path.splitext(os.path.basename(log_path))[0]
    csv_path = write_csv(os.path.join(out_dir, stem + "_summary.csv"), ["quantity", "value"], sorted(m.items()))
    m["files"] = [csv_path, png]
    return m
