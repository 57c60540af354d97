"""Robustness sweep: Monte Carlo over model mismatch, current, latency, noise.

Each sample draws, from one seeded ``numpy.random.Generator`` (``robustness.seed`` in
params/analysis.yaml, read into :class:`~brov2_hybrid.analysis.settings.RobustnessSettings`),
a plant that differs from the one the controller is tuned for:

* rigid-body mass, inertia (per axis), added mass and linear / quadratic drag (per DOF)
  scaled by U(1 - f, 1 + f) (f = ``mass_fraction`` etc.);
* buoyancy - weight shifted by U(-b, b) N; the CB's height above the CG scaled by U(1 - h, 1 + h);
* a constant horizontal current of U(0, current_max) m/s in a uniform direction;
* a loop latency U(0, latency_max) s split evenly between telemetry and command;
* Gaussian IMU noise (attitude / rate standard deviations scaled by U(0, 1)), its own seed.

The tethered sweep (``tether_samples`` per omega_d and law, from a generator of its own seeded
``seed + 1``, so the untethered samples stay as they are) draws the same mismatch and flies it on
the simulator's tether (``params/simulator.yaml`` section ``tether``: from the surface straight
above the start) of length U(``tether_length_m``) in the sample's current. The loop steps a
tethered plant in Python: a tethered job takes seconds, hence few samples.

The controller keeps the nominal parameters. Every sample flies a yaw step (settling time,
overshoot) and the plateau dive of :mod:`brov2_hybrid.analysis.integral` (IAE of roll +
pitch + yaw) at each omega_d with PD and PD+I; PD and PD+I see the same samples.
"""
import functools
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.analysis import metrics
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.analysis.context import AXES
from brov2_hybrid.analysis.integral import plateau_dive
from brov2_hybrid.analysis.settings import LatencyCase, RobustnessSettings
from brov2_hybrid.errors import GimbalLock

LAWS = ("PD", "PD+I")
#: robustness_summary.csv: per measure (column prefix, unit suffix) these statistics
#: (median_lo / median_hi: the median's 95 % distribution-free confidence interval).
SUMMARY_MEASURES = (("settling", "_s"), ("overshoot", "_pct"), ("iae", "_deg_s"))
SUMMARY_STATS = ("median", "median_lo", "median_hi", "p90", "max")


@dataclass(frozen=True)
class Sample:
    """One drawn perturbation (plain floats and tuples, so it pickles and prints)."""

    index: int
    mass_scale: float
    inertia_scale: tuple
    added_mass_scale: tuple
    linear_drag_scale: tuple
    quadratic_drag_scale: tuple
    net_buoyancy_n: float
    cb_height_scale: float
    current_ned_m_s: tuple
    latency_s: float
    noise_scale: float
    noise_seed: int
    tether_length_m: float = 0.0     # 0: no tether


def draw_samples(s, n=None):
    """``n`` (default ``s.samples``) samples from ``numpy.random.default_rng(s.seed)``."""
    return _draw(np.random.default_rng(s.seed), s, s.samples if n is None else int(n))


def draw_tethered_samples(s, n=None):
    """``n`` (default ``s.tether_samples``) samples of the tethered sweep: the mismatch of
    :func:`draw_samples` from ``numpy.random.default_rng(s.seed + 1)``, then per sample a tether
    length U(``s.tether_length_m``) [m]."""
    rng = np.random.default_rng(s.seed + 1)
    drawn = _draw(rng, s, s.tether_samples if n is None else int(n))
    lo, hi = s.tether_length_m
    return [replace(smp, tether_length_m=float(rng.uniform(lo, hi))) for smp in drawn]


def _draw(rng, s, n):
    out = []

    def scale(f, size=None):
        v = rng.uniform(1.0 - f, 1.0 + f, size)
        return tuple(float(x) for x in v) if size else float(v)

    for k in range(n):
        speed, heading = rng.uniform(0.0, s.current_max_m_s), rng.uniform(-math.pi, math.pi)
        out.append(Sample(
            index=k, mass_scale=scale(s.mass_fraction), inertia_scale=scale(s.inertia_fraction, 3),
            added_mass_scale=scale(s.added_mass_fraction, 6), linear_drag_scale=scale(s.drag_fraction, 6),
            quadratic_drag_scale=scale(s.drag_fraction, 6),
            net_buoyancy_n=float(rng.uniform(-s.net_buoyancy_n, s.net_buoyancy_n)),
            cb_height_scale=scale(s.cb_height_fraction),
            current_ned_m_s=(float(speed * math.cos(heading)), float(speed * math.sin(heading)), 0.0),
            latency_s=float(rng.uniform(0.0, s.latency_max_s)), noise_scale=float(rng.uniform(0.0, 1.0)),
            noise_seed=int(rng.integers(0, 2 ** 31 - 1))))
    return out


def perturbed_vehicle(vehicle, sample):
    """Copy of ``vehicle`` whose body carries ``sample``'s mismatch (the simulator's plant)."""
    v = vehicle.body
    r_cb = v.r_cb_m.copy()
    r_cb[2] = v.r_cg_m[2] + (v.r_cb_m[2] - v.r_cg_m[2]) * sample.cb_height_scale
    body = replace(
        v, mass_kg=v.mass_kg * sample.mass_scale, inertia_kg_m2=v.inertia_kg_m2 * np.array(sample.inertia_scale),
        added_mass=v.added_mass * np.array(sample.added_mass_scale),
        linear_drag=v.linear_drag * np.array(sample.linear_drag_scale),
        quadratic_drag=v.quadratic_drag * np.array(sample.quadratic_drag_scale),
        buoyancy_n=v.buoyancy_n + sample.net_buoyancy_n, r_cb_m=r_cb)
    return replace(vehicle, body=body)


@dataclass(frozen=True)
class RobustJob:
    """One closed-loop job of the sweep: ``sample`` flown at ``omega_d_rad_s`` with (``integral``)
    or without integral action, on the loop settings ``loop``; ``band`` is the settling band."""
    loop: object
    settings: RobustnessSettings
    sample: Sample
    omega_d_rad_s: float
    integral: bool
    band: float


@functools.lru_cache(maxsize=4)
def _base_models(vehicle_name):
    """(simulator options, vehicle) from their files, read once per process: a worker flies
    hundreds of jobs, and parsing the YAML files for each cost a tenth of a job."""
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    return load_sim_options(), load_vehicle(vehicle_name)


def run_robust_job(job):
    """One sample at one omega_d with one law: yaw-step metrics and plateau-dive IAE."""
    base_options, vehicle = _base_models(job.loop.vehicle)
    s, smp = job.settings, job.sample
    half = 0.5 * smp.latency_s
    loop_settings = job.loop.with_latency(LatencyCase("robustness", job.loop.telemetry_rate_hz, half, half))
    options = replace(base_options, current_ned_m_s=np.array(smp.current_ned_m_s),
                      noise_enabled=smp.noise_scale > 0.0,
                      attitude_noise_std_rad=s.attitude_noise_std_rad * smp.noise_scale,
                      rate_noise_std_rad_s=s.rate_noise_std_rad_s * smp.noise_scale, seed=smp.noise_seed)
    if smp.tether_length_m > 0.0:
        options = replace(options, tether=options.tether.with_changes(enabled=True, length_m=smp.tether_length_m))
    loop = ClosedLoop(loop_settings, vehicle=vehicle, sim_options=options, plant_vehicle=perturbed_vehicle(vehicle, smp))
    ctl = {"integral_enabled": job.integral, "integral_ratio": s.ratio}
    step_rad = math.radians(s.step_deg)
    res = _flown(loop, step_dive(step_rad, s.step_time_s, s.step_duration_s, loop_settings.desired_rate_hz),
                 s.step_duration_s, omega_d_rad_s=job.omega_d_rad_s, controller_options=ctl)
    dive, _ = plateau_dive(math.radians(s.attitude_deg), s.plateau_s, loop_settings.desired_rate_hz)
    res_d = _flown(loop, dive, omega_d_rad_s=job.omega_d_rad_s, controller_options=ctl)
    out = {"sample": smp.index, "omega_d": job.omega_d_rad_s, "law": LAWS[int(job.integral)],
           "settling_s": math.inf, "overshoot_pct": math.nan, "dive_iae_deg_s": math.inf,
           "lost": res is None or res_d is None, "latency_s": smp.latency_s,
           "current_m_s": float(np.hypot(*smp.current_ned_m_s[:2])), "tether_length_m": smp.tether_length_m,
           "sim_s": sum(r.duration_s for r in (res, res_d) if r), "wall_s": sum(r.wall_s for r in (res, res_d) if r)}
    if res is not None:
        t, yaw = res.t_s, res.log["yaw_rad"]
        out.update(settling_s=metrics.settling_time(t, yaw, step_rad, s.step_time_s, band=job.band),
                   overshoot_pct=metrics.overshoot(t, yaw, step_rad, s.step_time_s))
    if res_d is not None:
        out["dive_iae_deg_s"] = float(sum(metrics.iae(res_d.t_s, np.degrees(wrap_angle(
            res_d.log["%s_d_rad" % a] - res_d.log["%s_rad" % a]))) for a in AXES))
    return out


def _flown(loop, dive, duration_s=None, **options):
    """``loop.run``'s result, or None when the vehicle pitched through +-90 deg (GimbalLock: the law lost
    the attitude; a sampled plant on a tether in a current can be pulled over). Such a run is counted as
    lost, its figures infinite (settling, IAE) or undefined (overshoot), never dropped."""
    try:
        return loop.run(dive, duration_s, **options)
    except GimbalLock:
        return None


def _stats(values):
    """Median (with its 95 % distribution-free confidence interval), p90 and max of the finite values."""
    v = np.array([x for x in values if x is not None and math.isfinite(x)])
    if not v.size:
        nan = float("nan")
        return {"median": nan, "median_lo": nan, "median_hi": nan, "p90": nan, "max": nan, "n": 0}
    lo, hi = metrics.median_ci(v)
    return {"median": float(np.median(v)), "median_lo": lo, "median_hi": hi, "p90": float(np.percentile(v, 90)),
            "max": float(v.max()), "n": int(v.size)}


def robustness_experiment(ctx, omegas=None, samples=None, settings=None):
    """The Monte Carlo sweep on ``ctx.runner``: per-run CSV, summary CSV, box plot. ``samples``
    (``--samples``) sets the samples per omega_d and law, and caps the tethered sweep's at as many."""
    from brov2_hybrid.analysis.context import write_csv
    s = settings or ctx.settings.robustness
    if samples is not None:
        s = replace(s, samples=int(samples), tether_samples=min(s.tether_samples, int(samples)))
    omegas = tuple(omegas or s.omega_d_rad_s)
    drawn = draw_samples(s)
    tethered = draw_tethered_samples(s)
    band = ctx.settings.step.settle_band
    jobs = [RobustJob(ctx.loop, s, smp, w, integ, band) for w in omegas for integ in (False, True)
            for smp in drawn + tethered]
    all_runs = ctx.runner.map(run_robust_job, jobs, "robustness")
    write_csv(ctx.path("robustness_runs.csv"),
              ["sample", "omega_d_rad_s", "law", "settling_time_s", "overshoot_pct", "dive_iae_deg_s", "lost",
               "latency_s", "current_m_s", "tether_length_m"],
              [[r["sample"], r["omega_d"], r["law"], r["settling_s"], r["overshoot_pct"], r["dive_iae_deg_s"], int(r["lost"]),
                r["latency_s"], r["current_m_s"], r["tether_length_m"]] for r in all_runs])
    runs = [r for r in all_runs if not r["tether_length_m"]]
    table = _table(omegas, runs)
    tether_table = _table(omegas, [r for r in all_runs if r["tether_length_m"]]) if tethered else []
    write_csv(ctx.path("robustness_summary.csv"),
              ["omega_d_rad_s", "law", "tether", "unsettled", "lost"]
              + ["%s_%s%s" % (name, stat, unit) for name, unit in SUMMARY_MEASURES for stat in SUMMARY_STATS],
              [[r["omega_d"], r["law"], tether, r["unsettled"], r["lost"]]
               + [r[key][stat] for key in ("settling_s", "overshoot_pct", "dive_iae_deg_s") for stat in SUMMARY_STATS]
               for tether, rows in ((0, table), (1, tether_table)) for r in rows])
    fig = _plot(ctx.path("robustness.png"), omegas, runs)
    return {"seed": s.seed, "samples": s.samples, "omega_d": list(omegas), "ratio": s.ratio, "table": table,
            "tether_samples": len(tethered), "tether_length_m": list(s.tether_length_m), "tether_table": tether_table,
            "ranges": ("mass %g %%, inertia %g %%, added mass %g %%, drag %g %%, B - W +-%g N, CB height +-%g %%, "
                       "current 0-%g m/s, latency 0-%g ms, IMU noise up to %g rad / %g rad/s" % (
                           100 * s.mass_fraction, 100 * s.inertia_fraction, 100 * s.added_mass_fraction,
                           100 * s.drag_fraction, s.net_buoyancy_n, 100 * s.cb_height_fraction, s.current_max_m_s,
                           1000 * s.latency_max_s, s.attitude_noise_std_rad, s.rate_noise_std_rad_s)),
            "files": ["robustness_runs.csv", "robustness_summary.csv", os.path.basename(fig)],
            "sim_s": sum(r["sim_s"] for r in all_runs), "wall_s": sum(r["wall_s"] for r in all_runs)}


def _table(omegas, runs):
    """Per omega_d and law: the :func:`_stats` of settling, overshoot and plateau-dive IAE (of the runs
    that kept the attitude), the unsettled runs and the lost ones (pitched through 90 deg: :func:`_flown`)."""
    table = []
    for w in omegas:
        for law in LAWS:
            sel = [r for r in runs if r["omega_d"] == w and r["law"] == law]
            table.append({"omega_d": w, "law": law,
                          "settling_s": _stats([r["settling_s"] for r in sel]),
                          "overshoot_pct": _stats([r["overshoot_pct"] for r in sel]),
                          "dive_iae_deg_s": _stats([r["dive_iae_deg_s"] for r in sel]),
                          "unsettled": sum(1 for r in sel if not math.isfinite(r["settling_s"])),
                          "lost": sum(1 for r in sel if r["lost"])})
    return table


def _plot(path, omegas, runs):
    from brov2_hybrid.analysis.plots import plt, save_figure
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    quantities = (("settling_s", "yaw-step settling time [s]"), ("overshoot_pct", "yaw-step overshoot [%]"),
                  ("dive_iae_deg_s", "plateau-dive IAE roll+pitch+yaw [deg s]"))
    for ax, (key, label) in zip(axes, quantities):
        data, pos, ticks = [], [], []
        for k, w in enumerate(omegas):
            for j, law in enumerate(LAWS):
                v = [r[key] for r in runs if r["omega_d"] == w and r["law"] == law and math.isfinite(r[key])]
                data.append(v or [float("nan")])
                pos.append(3 * k + j)
            ticks.append(3 * k + 0.5)
        box = ax.boxplot(data, positions=pos, widths=0.8, patch_artist=True)
        for k, patch in enumerate(box["boxes"]):
            patch.set_facecolor("C0" if k % 2 == 0 else "C1")
        ax.set_xticks(ticks)
        ax.set_xticklabels(["%g" % w for w in omegas])
        ax.set_xlabel("omega_d [rad/s] (blue PD, orange PD+I)")
        ax.set_ylabel(label)
    return save_figure(fig, path)


def _cell(st, fmt="%.2f"):
    """'median [lo, hi] / p90 / max' of a :func:`_stats` dict ([lo, hi]: the median's 95 % interval;
    '[n/a]' with too few samples for one, fewer than 6)."""
    ci = ("[" + fmt + ", " + fmt + "]") % (st["median_lo"], st["median_hi"]) \
        if math.isfinite(st["median_lo"]) else "[n/a]"
    return (fmt + " %s / " + fmt + " / " + fmt) % (st["median"], ci, st["p90"], st["max"])


def console_lines(summary):
    """The summary of :func:`robustness_experiment` as console text: one line per omega_d and law."""
    return "\n".join(["seed %d, %d samples per omega_d and law (median [95 %% interval] / p90 / max):" % (
        summary["seed"], summary["samples"])] + [
        "  omega_d %g %-4s settling %s s (unsettled %d), overshoot %s %%, dive IAE %s deg s" % (
            r["omega_d"], r["law"], _cell(r["settling_s"]), r["unsettled"], _cell(r["overshoot_pct"]),
            _cell(r["dive_iae_deg_s"], "%.0f")) for r in summary["table"]] + [
        "  on a tether (%d samples): omega_d %g %-4s settling %s s (unsettled %d, lost %d), overshoot %s %%, dive IAE %s deg s" % (
            summary["tether_samples"], r["omega_d"], r["law"], _cell(r["settling_s"]), r["unsettled"], r["lost"],
            _cell(r["overshoot_pct"]), _cell(r["dive_iae_deg_s"], "%.0f")) for r in summary.get("tether_table", [])])


def report_section(summary):
    """The REPORT.md section (Markdown) of :func:`robustness_experiment`'s summary: ranges, table, figure."""
    lines = ["## Robustness: Monte Carlo PD vs PD+I", "",
             "Seed %d, %d samples per omega_d and law (the same plants for both laws), scale ranges +-: %s. "
             "Cells: median [its 95 %% distribution-free confidence interval] / p90 / max." % (summary["seed"], summary["samples"], summary["ranges"]), "",
             ]
    return lines + markdown_table(summary) + ["", "![](robustness.png)", ""]


def markdown_table(summary):
    """Per omega_d and law: yaw-step settling, unsettled runs, overshoot and plateau-dive IAE
    (median [95 % CI] / p90 / max; REPORT.md and the generated block of the docs)."""
    lines = _table_lines(summary["table"])
    lines += ["", "Seed %d, %d samples per omega_d and law (the same plants for both laws); ranges: %s. "
              "Cells: median [its 95 %% distribution-free confidence interval] / p90 / max."
              % (summary["seed"], summary["samples"], summary["ranges"])]
    if summary.get("tether_table"):
        lo, hi = summary["tether_length_m"]
        lines += ["", "On a tether: %d more samples per omega_d and law (seed %d + 1), the same ranges, each on the "
                  "simulator's tether from the surface above the start, %g-%g m long, in the sample's current:"
                  % (summary["tether_samples"], summary["seed"], lo, hi), ""] + _table_lines(summary["tether_table"])
    return lines


def _table_lines(table):
    lines = ["| omega_d | law | yaw settling [s] | unsettled | lost (pitched to 90°) | overshoot [%] | plateau-dive IAE [deg s] |",
             "|---|---|---|---|---|---|---|"]
    return lines + ["| %g | %s | %s | %d | %d | %s | %s |" % (
        r["omega_d"], r["law"], _cell(r["settling_s"]), r["unsettled"], r["lost"], _cell(r["overshoot_pct"]),
        _cell(r["dive_iae_deg_s"], "%.0f")) for r in table]
