"""The 6-DOF dive (Sec. 5.3, Fig. 17-19): the bundled (or a given) dive CSV at each omega_d.

Per run: IAE, RMS and largest error per angular axis and Eq. 26 energy per DOF
(:func:`~brov2_hybrid.analysis.log_summary.log_metrics`); ``dive_metrics.csv``, the logs
and three figures.
"""
import os

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.dive.dive_csv import load_dive_csv
from brov2_hybrid.analysis import plots
from brov2_hybrid.analysis.context import AXES, LINEAR, write_csv
from brov2_hybrid.analysis.jobs import DiveJob, run_dive_job
from brov2_hybrid.analysis.log_summary import log_metrics


def dive_experiment(ctx, dive_path=None, omegas=None):
    """Sec. 5.3: the 6-DOF dive at omega_d in {2, 3, 4} (Fig. 17-19)."""
    d = ctx.settings.dive
    dive_path = dive_path or d.csv_file
    if not os.path.isabs(dive_path) and not os.path.exists(dive_path):
        dive_path = os.path.join(paths.package_root(), dive_path)
    dive = load_dive_csv(dive_path)  # validate before starting workers
    input_hz = 1.0 / float(np.median(np.diff(dive.t_s)))
    omegas = tuple(omegas or d.omega_d_rad_s)
    log_dir = ctx.path("logs")
    os.makedirs(log_dir, exist_ok=True)
    jobs = [DiveJob(ctx.loop, w, dive_path, os.path.join(log_dir, "dive_w%.2f.csv" % w)) for w in omegas]
    results = ctx.runner.map(run_dive_job, jobs, "dive")
    rows, runs, per = [], [], []
    keys = (["iae_%s_deg_s" % a for a in AXES] + ["rms_error_%s_deg" % a for a in AXES]
            + ["max_error_%s_deg" % a for a in AXES] + ["energy_%s" % x for x in LINEAR + AXES])
    for r in results:
        m, curves = log_metrics(r["log"], ctx.rc_map)
        m["omega_d"] = r["omega_d"]
        m["log_path"] = os.path.relpath(r["log_path"], ctx.out_dir)
        per.append(m)
        rows.append([r["omega_d"]] + [m[k] for k in keys] + [m["log_path"]])
        curves["omega_d"] = r["omega_d"]
        runs.append(curves)
    write_csv(ctx.path("dive_metrics.csv"), ["omega_d_rad_s"] + keys + ["log"], rows)
    label = ctx.loop.latency_label(round(input_hz, 3))
    figs = [plots.dive_trajectories(ctx.path("dive_trajectories.png"), runs, label),
            plots.dive_iae(ctx.path("dive_iae.png"), runs, label),
            plots.dive_energy(ctx.path("dive_energy.png"), runs, label)]
    return {"latency": label, "dive": os.path.relpath(dive_path, paths.package_root())
            if dive_path.startswith(paths.package_root()) else dive_path,
            "per_omega_d": per, "files": ["dive_metrics.csv"] + [os.path.basename(f) for f in figs]
            + [m["log_path"] for m in per],
            "sim_s": sum(r["sim_s"] for r in results), "wall_s": sum(r["wall_s"] for r in results)}
