"""Yaw step sweeps over omega_d: the step response (Sec. 5.2, Fig. 13-14), the same sweep per
loop latency (docs/DESIGN.md section 8) and stock vs updated vehicle model (Fig. 16, Table 1, Eq. 25).

Each writes its CSV and figures into ``ctx.out_dir`` and returns the summary REPORT.md
is written from. Angles rad inside, deg in CSV columns named ``*_deg``; times s.
"""
import math
import os
from dataclasses import replace

import numpy as np

from brov2_hybrid.analysis import lti, metrics, plots
from brov2_hybrid.analysis.context import YAW, write_csv
from brov2_hybrid.analysis.jobs import step_sweep


def first_band_exit(omegas, overshoots, band):
    """Smallest omega_d whose overshoot leaves the +-band (None if none does)."""
    for w, o in zip(omegas, overshoots):
        if o > 100.0 * band:
            return w
    return None


def _lti_curves(ctx, w, t):
    c = ctx.controller(w)
    s = ctx.settings.step
    return (np.degrees(lti.step_response(c, t, s.step_rad, s.step_time_s, with_delta_kd=False)),
            np.degrees(lti.step_response(c, t, s.step_rad, s.step_time_s, with_delta_kd=True)))


def step_experiment(ctx, omegas=None):
    """Sec. 5.2: yaw steps over omega_d (Fig. 13, 14) against Eq. 22."""
    s = ctx.settings.step
    omegas = tuple(omegas or s.omega_d_rad_s)
    plot_w = [w for w in s.plot_omega_d_rad_s]
    main = step_sweep(ctx, ctx.loop, omegas, "step")
    plain = step_sweep(ctx, ctx.loop, plot_w, "step kappa=0", kappa=0.0)
    rows, lti_s, lti_plain_s = [], [], []
    for r in main:
        c = ctx.controller(r["omega_d"])
        with_d = lti.step_metrics(c, s.step_rad, s.step_time_s, s.lti_duration_s, s.settle_band)
        without = lti.step_metrics(c, s.step_rad, s.step_time_s, s.lti_duration_s, s.settle_band, with_delta_kd=False)
        r["lti"], r["lti_plain"] = with_d, without
        lti_s.append(with_d["settling_time_s"])
        lti_plain_s.append(without["settling_time_s"])
        g = c.gains
        rows.append([r["omega_d"], r["settling_s"], r["overshoot_pct"], r["undershoot_pct"], r["rise_s"],
                     with_d["settling_time_s"], with_d["overshoot_pct"], with_d["undershoot_pct"],
                     without["settling_time_s"], without["overshoot_pct"], without["undershoot_pct"],
                     float(g.kp[YAW]), float(g.kd[YAW]), float(g.delta_kd[YAW]),
                     lti.damping_ratio(c), lti.damping_ratio(c, with_delta_kd=False), ctx.loop.latency_label()])
    write_csv(ctx.path("step_sweep.csv"),
              ["omega_d_rad_s", "settling_time_s", "overshoot_pct", "undershoot_pct", "rise_time_s",
               "lti_settling_time_s", "lti_overshoot_pct", "lti_undershoot_pct",
               "lti_plain_settling_time_s", "lti_plain_overshoot_pct", "lti_plain_undershoot_pct",
               "kp_nm_rad", "kd_nm_s_rad", "delta_kd_nm_s_rad", "lti_zeta", "lti_plain_zeta", "loop_latency"], rows)
    curves = []
    by_w = {round(r["omega_d"], 6): r for r in main}
    for p in plain:
        r = by_w.get(round(p["omega_d"], 6))
        if r is None:
            r = step_sweep(ctx, ctx.loop, [p["omega_d"]], "step")[0]
        t = r["t_s"]
        lti_plain, lti_with = _lti_curves(ctx, p["omega_d"], t)
        curves.append({"omega_d": p["omega_d"], "t_s": t, "sim_deg": np.degrees(r["yaw_rad"]),
                       "sim_plain_deg": np.degrees(p["yaw_rad"]), "lti_plain_deg": lti_plain, "lti_deg": lti_with})
    step_deg = math.degrees(s.step_rad)
    figs = [plots.step_responses(ctx.path("step_response.png"), curves, step_deg, s.settle_band,
                                 ctx.loop.latency_label()),
            plots.settling_times(ctx.path("settling_time.png"), omegas, [r["settling_s"] for r in main],
                                 lti_s, lti_plain_s, [r["overshoot_pct"] for r in main], s.settle_band,
                                 ctx.loop.latency_label())]
    exit_w = first_band_exit(omegas, [r["overshoot_pct"] for r in main], s.settle_band)
    return {
        "latency": ctx.loop.latency_label(), "omega_d": list(omegas),
        "settling_s": [r["settling_s"] for r in main], "overshoot_pct": [r["overshoot_pct"] for r in main],
        "undershoot_pct": [r["undershoot_pct"] for r in main], "rise_s": [r["rise_s"] for r in main],
        "lti_settling_s": lti_s, "lti_plain_settling_s": lti_plain_s,
        "lti_plain_undershoot_pct": [r["lti_plain"]["undershoot_pct"] for r in main],
        "lti_undershoot_pct": [r["lti"]["undershoot_pct"] for r in main],
        "plain": [{"omega_d": p["omega_d"], "settling_s": p["settling_s"], "overshoot_pct": p["overshoot_pct"],
                   "undershoot_pct": p["undershoot_pct"]} for p in plain],
        "first_band_exit_omega_d": exit_w, "band": s.settle_band,
        "files": ["step_sweep.csv"] + [os.path.basename(f) for f in figs],
        "sim_s": sum(r["sim_s"] for r in main + plain), "wall_s": sum(r["wall_s"] for r in main + plain),
    }


def latency_experiment(ctx, omegas=None, cases=None):
    """docs/DESIGN.md section 8: the step sweep for several loop latencies; which looks most like Fig. 14."""
    s = ctx.settings.step
    omegas = tuple(omegas or s.omega_d_rad_s)
    cases = tuple(cases or ctx.settings.latency_cases)
    jump = ctx.settings.paper_jump_omega_d_rad_s
    rows, summary = [], []
    for case in cases:
        loop = ctx.loop.with_latency(case)
        res = step_sweep(ctx, loop, omegas, "latency %s" % case.name)
        overs = [r["overshoot_pct"] for r in res]
        # Agreement with Fig. 14's pattern: inside the band below the jump, outside from it on.
        agree = sum(1 for w, o in zip(omegas, overs) if (o > 100 * s.settle_band) == (w >= jump - 1e-9))
        for r in res:
            rows.append([case.name, loop.latency_label(), loop.loop_latency_s, r["omega_d"], r["settling_s"],
                         r["overshoot_pct"], r["rise_s"]])
        summary.append({"name": case.name, "label": loop.latency_label(), "loop_latency_s": loop.loop_latency_s,
                        "omega_d": list(omegas), "settling_s": [r["settling_s"] for r in res],
                        "overshoot_pct": overs, "first_band_exit_omega_d": first_band_exit(omegas, overs, s.settle_band),
                        "agreement": agree, "n": len(omegas),
                        "sim_s": sum(r["sim_s"] for r in res), "wall_s": sum(r["wall_s"] for r in res)})
    best = max(summary, key=lambda c: (c["agreement"], -c["loop_latency_s"]))
    write_csv(ctx.path("latency.csv"), ["case", "latency", "loop_latency_s", "omega_d_rad_s", "settling_time_s",
                                        "overshoot_pct", "rise_time_s"], rows)
    fig = plots.latency_sweep(ctx.path("latency.png"),
                              [{"label": c["label"], "omega_d": c["omega_d"],
                                "settling_s": plots.finite_or_nan(c["settling_s"]),
                                "overshoot_pct": c["overshoot_pct"]} for c in summary], s.settle_band, jump)
    return {"cases": summary, "best": best["name"], "best_label": best["label"], "paper_jump": jump,
            "files": ["latency.csv", os.path.basename(fig)],
            "sim_s": sum(c["sim_s"] for c in summary), "wall_s": sum(c["wall_s"] for c in summary)}


def compare_models_experiment(ctx, omegas=None):
    """Fig. 16 / Table 1: stock vs updated vehicle model on the same yaw steps (Eq. 25)."""
    cm, s = ctx.settings.compare, ctx.settings.step
    omegas = tuple(omegas or cm.omega_d_rad_s)
    updated = step_sweep(ctx, replace(ctx.loop, model="updated"), omegas, "compare updated", cm.duration_s)
    stock = step_sweep(ctx, replace(ctx.loop, model="stock"), omegas, "compare stock", cm.duration_s)
    rows, per, responses = [], [], []
    for u, k in zip(updated, stock):
        e = 100.0 * metrics.normalized_error(u["t_s"], k["yaw_rad"], u["yaw_rad"], s.step_time_s,
                                             cm.error_window_s, cm.error_floor_rad)
        rows.append([u["omega_d"], u["settling_s"], k["settling_s"], u["rise_s"], k["rise_s"],
                     u["overshoot_pct"], k["overshoot_pct"], e])
        per.append({"omega_d": u["omega_d"], "updated_settling_s": u["settling_s"], "stock_settling_s": k["settling_s"],
                    "updated_rise_s": u["rise_s"], "stock_rise_s": k["rise_s"],
                    "updated_overshoot_pct": u["overshoot_pct"], "stock_overshoot_pct": k["overshoot_pct"],
                    "eq25_error_pct": e})
        responses.append({"omega_d": u["omega_d"], "t_s": u["t_s"], "updated_deg": np.degrees(u["yaw_rad"]),
                          "stock_deg": np.degrees(k["yaw_rad"])})
    write_csv(ctx.path("compare_models.csv"),
              ["omega_d_rad_s", "updated_settling_time_s", "stock_settling_time_s", "updated_rise_time_s",
               "stock_rise_time_s", "updated_overshoot_pct", "stock_overshoot_pct", "eq25_error_pct"], rows)
    shown = [r for r in responses if any(abs(r["omega_d"] - w) < 1e-9 for w in s.plot_omega_d_rad_s)] or responses
    fig = plots.compare_models(ctx.path("compare_models.png"), shown,
                               ([p["omega_d"] for p in per], [p["eq25_error_pct"] for p in per]),
                               math.degrees(s.step_rad), ctx.loop.latency_label())
    return {"latency": ctx.loop.latency_label(), "per_omega_d": per, "window_s": cm.error_window_s,
            "files": ["compare_models.csv", os.path.basename(fig)],
            "sim_s": sum(r["sim_s"] for r in updated + stock), "wall_s": sum(r["wall_s"] for r in updated + stock)}
