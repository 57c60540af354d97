"""What the vehicle model and the gain design give, without the closed loop:
yaw drag and inertia identification (Sec. 3), the gains table (App. B) and the trim B-check (Sec. 5.1).

Each writes its CSV and figures into ``ctx.out_dir`` and returns the summary REPORT.md
is written from.
"""
import os

import numpy as np

from brov2_hybrid.control.gains import trim_linear_drag
from brov2_hybrid.analysis import lti, plots, sysid
from brov2_hybrid.analysis.context import AXES, YAW, write_csv
from brov2_hybrid.analysis.jobs import SysidJob, run_sysid_job


def sysid_experiment(ctx, runs=None, model="updated"):
    """Sec. 3: N_r, N_r|r| from steady rates, then I_zz by RMSE; simulated runs by default."""
    sy = ctx.settings.sysid
    simulated = runs is None
    if simulated:
        jobs = [SysidJob(n, sy.duration_s, 1.0 / sy.sample_rate_hz, model, ctx.loop.mixer, ctx.loop.vehicle)
                for n in sy.torques_nm]
        runs = ctx.runner.map(run_sysid_job, jobs, "sysid")
    drag = sysid.fit_drag(runs, sy.steady_window_s)
    body = ctx.vehicle.body
    added = float(body.added_mass[5])
    inertia = sysid.fit_inertia(runs, drag, added, sy.inertia_bounds_kg_m2, sy.settle_tolerance, sy.settle_window_s)
    rows, fitted = [], []
    for run, r_f, win in zip(runs, drag.steady_rates_rad_s, inertia.windows):
        inside = (run.t_s >= win[0]) & (run.t_s <= win[1])
        t = run.t_s[inside]
        fitted.append((t, sysid.simulate_rate(t, run.torque_nm, inertia.inertia_kg_m2 + added, drag, win[0], win[2])))
        rows.append([run.source, run.torque_nm, r_f, win[0], win[1], win[2]])
    write_csv(ctx.path("sysid_runs.csv"), ["run", "torque_nm", "steady_rate_rad_s", "t0_s", "tf_s", "r0_rad_s"], rows)
    truth = {"linear": float(body.linear_drag[5]), "quadratic": float(body.quadratic_drag[5]),
             "inertia": float(body.inertia_kg_m2[2])}
    fit = {"linear": drag.linear_nm_s, "quadratic": drag.quadratic_nm_s2, "inertia": inertia.inertia_kg_m2}
    write_csv(ctx.path("sysid_fit.csv"), ["quantity", "fitted", "model_value", "unit"],
              [["N_r", fit["linear"], truth["linear"], "N m s/rad"],
               ["N_r|r|", fit["quadratic"], truth["quadratic"], "N m s^2/rad^2"],
               ["I_zz", fit["inertia"], truth["inertia"], "kg m^2"],
               ["N_rdot (given)", added, added, "kg m^2"], ["rmse", inertia.rmse_rad_s, "", "rad/s"]])
    r_top = 1.1 * float(np.max(np.abs(drag.steady_rates_rad_s)))
    rr = np.linspace(0.0, r_top, 100)
    model_torque = truth["linear"] * rr + truth["quadratic"] * rr * rr
    figs = [plots.sysid_drag(ctx.path("sysid_drag.png"), drag.torques_nm, drag.steady_rates_rad_s,
                             (rr, drag.torque(rr)), (rr, model_torque)),
            plots.sysid_inertia(ctx.path("sysid_inertia.png"), runs, fitted, inertia.windows, inertia.grid_kg_m2,
                                inertia.grid_rmse, inertia.inertia_kg_m2)]
    return {"simulated": simulated, "model": model if simulated else None, "fit": fit, "truth": truth,
            "added_mass": added, "rmse_rad_s": inertia.rmse_rad_s, "torques_nm": [r.torque_nm for r in runs],
            "steady_rates": [float(x) for x in drag.steady_rates_rad_s],
            "files": ["sysid_runs.csv", "sysid_fit.csv"] + [os.path.basename(f) for f in figs]}


def gains_experiment(ctx, omegas=None):
    """App. B: k_p, k_d, delta k_d, k_d + delta k_d per axis, and Eq. 22's damping."""
    omegas = tuple(omegas or ctx.settings.gains_omega_d_rad_s)
    rows = []
    kp, kd, kdt = [], [], []
    for w in omegas:
        c = ctx.controller(w)
        g = c.gains
        for k, axis in enumerate(AXES):
            rows.append([w, axis, float(g.kp[k]), float(g.kd[k]), float(g.delta_kd[k]), float(g.kd_total[k]),
                         float(c.total_inertia[k]), float(c.b_check[k]),
                         lti.damping_ratio(c, axis=k, with_delta_kd=False), lti.damping_ratio(c, axis=k)])
        kp.append(float(g.kp[YAW]))
        kd.append(float(g.kd[YAW]))
        kdt.append(float(g.kd_total[YAW]))
    write_csv(ctx.path("gains.csv"), ["omega_d_rad_s", "axis", "kp_nm_rad", "kd_nm_s_rad", "delta_kd_nm_s_rad",
                                      "kd_total_nm_s_rad", "total_inertia_kg_m2", "b_check_nm_s_rad",
                                      "lti_zeta_kd", "lti_zeta_kd_total"], rows)
    fig = plots.gains(ctx.path("gains.png"), omegas, kp, kd, kdt)
    c2 = ctx.controller(2.0)  # the paper's non-minimum-phase case (Sec. 5.2)
    s = ctx.settings.step
    plain = lti.step_metrics(c2, s.step_rad, s.step_time_s, s.lti_duration_s, s.settle_band, with_delta_kd=False)
    with_d = lti.step_metrics(c2, s.step_rad, s.step_time_s, s.lti_duration_s, s.settle_band)
    return {"omega_d": list(omegas), "rows": rows, "kappa": float(c2.gains.kappa),
            "kd_at_2": float(c2.gains.kd[YAW]), "kd_total_at_2": float(c2.gains.kd_total[YAW]),
            "lti_plain_undershoot_at_2_pct": plain["undershoot_pct"],
            "lti_undershoot_at_2_pct": with_d["undershoot_pct"],
            "lti_plain_zero_at_2": float(-c2.gains.kp[YAW] / c2.gains.kd[YAW]),
            "files": ["gains.csv", os.path.basename(fig)]}


def trim_experiment(ctx, rate_max=None):
    """Sec. 5.1: B-check per angular axis over a range of velocity spans, and Fig. 12."""
    v = ctx.vehicle.body
    p = ctx.controller_params
    spans = tuple(rate_max or ctx.settings.trim_rate_max_rad_s)
    rows = []
    for vm in spans:
        b = trim_linear_drag(v.linear_drag[3:], v.quadratic_drag[3:], np.full(3, vm), p.trim_samples)
        rows.append([vm] + [float(x) for x in b])
    used = trim_linear_drag(v.linear_drag[3:], v.quadratic_drag[3:], p.trim_rate_max_rad_s, p.trim_samples)
    write_csv(ctx.path("trim.csv"), ["rate_max_rad_s", "b_check_roll", "b_check_pitch", "b_check_yaw"], rows)
    top = float(p.trim_rate_max_rad_s[YAW])
    r = np.linspace(0.0, 1.2 * top, 200)
    drag = v.linear_drag[5] * r + v.quadratic_drag[5] * r * np.abs(r)
    fig = plots.trim(ctx.path("trim.png"), r, drag, float(used[YAW]), top)
    return {"b_check": [float(x) for x in used], "rate_max_rad_s": [float(x) for x in p.trim_rate_max_rad_s],
            "samples": p.trim_samples, "files": ["trim.csv", os.path.basename(fig)]}
