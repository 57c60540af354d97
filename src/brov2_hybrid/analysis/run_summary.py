"""Summary of one autopilot run's tick log: IAE and energy per axis, and plots.

    python -m brov2_hybrid.analysis.run_summary LOG.csv [--out DIR]

Used by ``make run`` (scripts/run_dive.sh). The log of a ROS run also holds the ticks
before the dive started and after it ended (modes NO_ATTITUDE_NEUTRAL, NO_INPUT_HOLD,
SHUTDOWN); the summary covers the dive itself: from the first to the last ACTIVE tick.
IAE per angular axis = integral of |wrap(eta_d - eta)| dt [deg s] (paper Fig. 18);
energy per DOF = sum over ticks of |PWM - 1500| / 400 of its RC channel (Eq. 26); with the
depth hold on, the depth error RMS (setpoint - depth, over the ticks that held depth); on a
simulated tether, its pull on the vehicle [N, NED] (the log's tether columns: :func:`tether_figures`).
The cut, the figures and the plot are :mod:`brov2_hybrid.analysis.log_summary`'s (as for
``brov2-analyze summarize``), here with a flown dive required and the figures as JSON.
``--placement`` names where the law ran (``make run`` passes the launch's placement); with
``onboard`` (the vehicle's Lua script, docs/onboard.md) no RC override was sent, so the Eq. 26
energy, counted on the override's PWMs, is not measured (null).
"""
import argparse
import json
import os
import sys

import numpy as np

from brov2_hybrid.analysis.log_summary import measure_log
from brov2_hybrid.analysis.metrics import depth_error
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, DOF_NAMES
from brov2_hybrid.placement import PLACEMENTS
from brov2_hybrid.tick_log.logfile import TETHER_COLUMNS

#: What the summary says of each placement.
PLACEMENT_TEXT = {"topside": "the law ran topside (control_law -> RC override)",
                  "onboard": "the law ran on board (the vehicle's Lua script)"}

#: The tether figures of the summary (each None without a tether).
TETHER_KEYS = ("tether_force_mean_ned_n", "tether_force_mean_abs_ned_n", "tether_force_max_abs_ned_n",
               "tether_force_mean_n", "tether_force_max_n")


def tether_figures(log):
    """The simulated tether's pull over the rows that report one (finite tether columns), NED [N]:
    its mean, the mean and largest of |F| per axis (seed 003's Table 9 counts the mean of |F|), the
    mean and largest magnitude, and ``tether_rows``; without a tether the figures are None."""
    force = np.column_stack([np.asarray(log[c], dtype=float) for c in TETHER_COLUMNS])
    force = force[np.all(np.isfinite(force), axis=1)]
    out = {"tether_rows": int(len(force))}
    if not len(force):
        out.update({key: None for key in TETHER_KEYS})
        return out
    magnitude = np.linalg.norm(force, axis=1)
    out.update({"tether_force_mean_ned_n": force.mean(axis=0).tolist(),
                "tether_force_mean_abs_ned_n": np.abs(force).mean(axis=0).tolist(),
                "tether_force_max_abs_ned_n": np.abs(force).max(axis=0).tolist(),
                "tether_force_mean_n": float(magnitude.mean()), "tether_force_max_n": float(magnitude.max())})
    return out


def summarize(log_path, out_dir, placement="topside"):
    """Write ``<stem>_summary.json`` and a PNG into ``out_dir``; return the figures (with ``placement``:
    topside or onboard, where the law ran; onboard leaves the energy figures None).

    The log must hold a flown dive (ACTIVE ticks): :func:`~brov2_hybrid.analysis.log_summary.dive_part`."""
    figures, log, png = measure_log(log_path, out_dir, require_active=True)
    figures["placement"] = placement
    if placement == "onboard":
        for d in DOF_NAMES:
            figures["energy_%s" % d] = None
    figures["ticks_not_active"] = int(sum(m != "ACTIVE" for m in log["mode"]))
    figures["omega_d_rad_s"] = float(np.median(log["omega_d_rad_s"]))
    rms, worst, held = depth_error(log["depth_m"], log["depth_setpoint_m"])
    figures["depth_hold_ticks"] = held
    figures["depth_error_rms_m"] = rms if held else None
    figures["depth_error_max_m"] = worst if held else None
    figures.update(tether_figures(log))
    stem = os.path.splitext(os.path.basename(log_path))[0]
    json_path = os.path.join(out_dir, stem + "_summary.json")
    with open(json_path, "w") as handle:
        json.dump(figures, handle, indent=2, sort_keys=True)
    figures["files"] = [json_path, png]
    return figures


def format_summary(figures):
    """The figures of :func:`summarize` as console lines: duration, IAE, RMS error and energy per
    axis, and a warning when ticks inside the dive were not ACTIVE."""
    axes = ANGULAR_DOF_NAMES
    dofs = DOF_NAMES
    placement = figures.get("placement", "topside")
    lines = ["placement %s: %s" % (placement, PLACEMENT_TEXT[placement]),
             "dive: %.1f s, %d control ticks, omega_d %.2f rad/s"
             % (figures["duration_s"], figures["ticks"], figures["omega_d_rad_s"]),
             "IAE [deg s]:   " + "  ".join("%s %.1f" % (a, figures["iae_%s_deg_s" % a]) for a in axes)
             + "  (sum %.1f)" % sum(figures["iae_%s_deg_s" % a] for a in axes),
             "RMS error [deg]: " + "  ".join("%s %.2f" % (a, figures["rms_error_%s_deg" % a]) for a in axes)]
    if figures.get("energy_%s" % dofs[0]) is None:
        lines.append("energy (Eq. 26): not measured (no RC override; the motor PWMs are in the log)")
    else:
        lines.append("energy (Eq. 26): " + "  ".join("%s %.1f" % (d, figures["energy_%s" % d]) for d in dofs))
    if figures.get("depth_hold_ticks"):
        lines.append("depth hold: depth error RMS %.3f m, max %.3f m over %d ticks"
                     % (figures["depth_error_rms_m"], figures["depth_error_max_m"], figures["depth_hold_ticks"]))
    if figures.get("tether_rows"):
        lines.append("tether pull [N, NED]: mean |F| north / east / down %s, largest %s; |F| mean %.1f, largest %.1f"
                     % (" / ".join("%.1f" % f for f in figures["tether_force_mean_abs_ned_n"]),
                        " / ".join("%.1f" % f for f in figures["tether_force_max_abs_ned_n"]),
                        figures["tether_force_mean_n"], figures["tether_force_max_n"]))
    if figures.get("ticks_not_active"):
        lines.append("warning: %d ticks inside the dive were not ACTIVE (see the log's mode column)"
                     % figures["ticks_not_active"])
    return "\n".join(lines)


def main(argv=None):
    """Command line: summarize one log; returns 0, or 1 (message on stderr) when the log cannot be
    summarized (unreadable, or no ACTIVE tick)."""
    parser = argparse.ArgumentParser(prog="python -m brov2_hybrid.analysis.run_summary", description=__doc__.splitlines()[0])
    parser.add_argument("log_csv")
    parser.add_argument("--out", default=None, help="output folder (default: the log's folder)")
    parser.add_argument("--placement", choices=PLACEMENTS, default="topside",
                        help="where the law ran (launch arg placement; default topside)")
    args = parser.parse_args(argv)
    try:
        figures = summarize(args.log_csv, args.out or os.path.dirname(os.path.abspath(args.log_csv)), args.placement)
    except Brov2Error as exc:
        sys.stderr.write("run_summary: %s\n" % exc)
        return 1
    print(format_summary(figures))
    print("log:     %s" % args.log_csv)
    for path in figures["files"]:
        print("summary: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
