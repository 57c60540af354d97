"""Stock ArduSub (Algorithm 1) vs the paper's firmware (Algorithm 2).

:func:`torque_fidelity`: requested vs delivered wrench of each output stage
(:mod:`brov2_hybrid.vehicle.firmware_output`); :func:`firmware_experiment`: that table, then the
yaw step sweep and the bundled dive per case of :data:`FIRMWARE_CASES`, compared with
the quantitative firmware.
"""
import math
import os
from dataclasses import replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.vehicle.mixers import QUANTITATIVE, STOCK
from brov2_hybrid.analysis import metrics, plots
from brov2_hybrid.analysis.context import AXES, write_csv
from brov2_hybrid.analysis.jobs import DiveJob, run_dive_job, step_sweep
from brov2_hybrid.analysis.log_summary import log_metrics


#: (label, vehicle mixer, output stage) of the firmware comparison.
FIRMWARE_CASES = (("quantitative firmware", QUANTITATIVE, "quantitative"),
                  ("stock naive", STOCK, "stock_naive"),
                  ("stock compensated", STOCK, "stock"),
                  ("stock to requested wrench", STOCK, "stock_wrench"))


def torque_fidelity(vehicle, rc_map, amplitudes, n_random, seed):
    """Requested vs delivered wrench of each output stage over |u| levels.

    Per level a: ``n_random`` commands u ~ U(-a, a)^6 (error = largest per-DOF
    |tau_achieved - tau_requested| / tau_max) and the 12 single-DOF commands +-a e_j
    (delivered fraction tau_achieved_j / tau_requested_j). Returns a list of row dicts.
    """
    from brov2_hybrid.vehicle.firmware_output import output_stage
    rows = []
    for label, _, stage_name in FIRMWARE_CASES:
        stage = output_stage(stage_name, vehicle, rc_map)
        rng = np.random.default_rng(seed)
        for a in amplitudes:
            errs = [float(np.max(np.abs(stage.command(u).tau_error / vehicle.tau_max)))
                    for u in rng.uniform(-a, a, (n_random, 6))]
            ratios = []
            for j in range(6):
                for sign in (1.0, -1.0):
                    u = np.zeros(6)
                    u[j] = sign * a
                    ratios.append(stage.command(u).tau_achieved[j] / (sign * a * vehicle.tau_max[j]))
            rows.append({"stage": label, "u_amplitude": float(a),
                         "median_error_pct": 100.0 * float(np.median(errs)),
                         "p95_error_pct": 100.0 * float(np.percentile(errs, 95)),
                         "single_dof_min_ratio": float(np.min(ratios)),
                         "single_dof_max_ratio": float(np.max(ratios))})
    return rows


def firmware_experiment(ctx, omegas=None):
    """Stock ArduSub (Algorithm 1) vs the paper's firmware: torque fidelity, then closed loop.

    Closed loop: the yaw step sweep and the bundled dive at each omega_d for the three
    cases of :data:`FIRMWARE_CASES`, compared with the quantitative firmware.
    """
    fw = ctx.settings.firmware
    omegas = tuple(omegas or fw.omega_d_rad_s)
    fid = torque_fidelity(ctx.vehicle, ctx.rc_map, fw.amplitudes, fw.random_commands, fw.seed)
    keys = ("median_error_pct", "p95_error_pct", "single_dof_min_ratio", "single_dof_max_ratio")
    write_csv(ctx.path("firmware_torque_fidelity.csv"), ["stage", "u_amplitude"] + list(keys),
              [[r["stage"], r["u_amplitude"]] + [r[k] for k in keys] for r in fid])

    s = ctx.settings.step
    dive_path = ctx.settings.dive.csv_file
    if not os.path.isabs(dive_path):
        dive_path = os.path.join(paths.package_root(), dive_path)
    log_dir = ctx.path("logs")
    os.makedirs(log_dir, exist_ok=True)
    closed, curves = [], []
    for label, mixer, stage_name in FIRMWARE_CASES:
        loop = replace(ctx.loop, mixer=mixer, output_stage=stage_name)
        steps = step_sweep(ctx, loop, omegas, "step %s" % label)
        dives = ctx.runner.map(run_dive_job, [DiveJob(loop, w, dive_path, os.path.join(
            log_dir, "firmware_%s_dive_w%.2f.csv" % (stage_name, w))) for w in omegas], "dive %s" % label)
        for st, dv in zip(steps, dives):
            err = np.degrees(np.abs(wrap_angle(np.full_like(st["yaw_rad"], s.step_rad) - st["yaw_rad"])))
            t = st["t_s"]
            after = t >= s.step_time_s - 1e-9
            m, _ = log_metrics(dv["log"], ctx.rc_map)
            row = {"case": label, "omega_d": st["omega_d"], "settling_s": st["settling_s"],
                   "overshoot_pct": st["overshoot_pct"], "step_iae_deg_s": metrics.iae(t[after], err[after])}
            for a in AXES:
                row["dive_iae_%s_deg_s" % a] = m["iae_%s_deg_s" % a]
            closed.append(row)
            curves.append({"case": label, "omega_d": st["omega_d"], "t_s": t, "yaw_deg": np.degrees(st["yaw_rad"])})
    ref = {r["omega_d"]: r for r in closed if r["case"] == FIRMWARE_CASES[0][0]}
    cols = ["settling_s", "step_iae_deg_s"] + ["dive_iae_%s_deg_s" % a for a in AXES]
    for r in closed:
        for c in cols:
            base = ref[r["omega_d"]][c]
            r[c + "_vs_quantitative_pct"] = (100.0 * (r[c] - base) / base
                                             if base and math.isfinite(base) and math.isfinite(r[c]) else math.nan)
    header = ["case", "omega_d_rad_s", "overshoot_pct"] + cols + [c + "_vs_quantitative_pct" for c in cols]
    write_csv(ctx.path("firmware_closed_loop.csv"), header,
              [[r["case"], r["omega_d"], r["overshoot_pct"]] + [r[c] for c in cols]
               + [r[c + "_vs_quantitative_pct"] for c in cols] for r in closed])
    label = ctx.loop.latency_label()
    figs = [plots.torque_fidelity(ctx.path("firmware_torque_fidelity.png"), fid, fw.small_u),
            plots.firmware_steps(ctx.path("firmware_step.png"), curves, math.degrees(s.step_rad), s.settle_band,
                                 label)]
    comp = [r for r in fid if r["stage"] == FIRMWARE_CASES[2][0]]
    small = [r for r in comp if r["u_amplitude"] >= fw.small_u - 1e-12]
    return {"latency": label, "fidelity": fid, "closed_loop": closed, "omega_d": list(omegas),
            "small_u": fw.small_u, "small_u_tolerance": fw.small_u_tolerance,
            "compensated_median_error_pct_max_to_0.3": max(
                (r["median_error_pct"] for r in comp if r["u_amplitude"] <= 0.3 + 1e-12), default=math.nan),
            "compensated_small_loss_ok": bool(small) and all(
                abs(r["single_dof_min_ratio"] - 1.0) <= fw.small_u_tolerance
                and abs(r["single_dof_max_ratio"] - 1.0) <= fw.small_u_tolerance
                for r in small if r["u_amplitude"] <= 0.5),
            "files": ["firmware_torque_fidelity.csv", "firmware_closed_loop.csv"]
            + [os.path.basename(f) for f in figs]}
