"""The paper's experiments (Sec. 3, 5, App. C): each writes CSV + PNG and returns a summary.

Every ``*_experiment(ctx, ...)`` function runs its jobs through ``ctx.runner``
(local processes or Dask), writes ``<name>.csv`` and figures into ``ctx.out_dir`` and
returns a dict that :mod:`brov2_hybrid.analysis.report` turns into REPORT.md. The
worker functions (``run_*_job``) are module-level so that they pickle; each worker
process builds its :class:`ClosedLoop` once per loop setting.

Angles are rad inside and deg in CSV columns named ``*_deg``; times s; rates rad/s.
"""
import csv
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.dive_csv import load_dive_csv
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.gains import trim_linear_drag
from brov2_hybrid.kinematics import wrap_angle
from brov2_hybrid.logfile import read_log
from brov2_hybrid.mixers import QUANTITATIVE, STOCK
from brov2_hybrid.vehicle import load_vehicle
from brov2_hybrid.params import load_controller_params
from brov2_hybrid.rc import load_rc_map
from brov2_hybrid.analysis import lti, metrics, plots, sysid
from brov2_hybrid.analysis.closed_loop import ClosedLoop, sine_dive, step_dive
from brov2_hybrid.analysis.runner import Runner
from brov2_hybrid.analysis.settings import load_analysis_settings

AXES = ("roll", "pitch", "yaw")
LINEAR = ("surge", "sway", "heave")
YAW = 2


class Context(object):
    """Where and how experiments run: settings, output folder, runner, loop settings."""

    def __init__(self, settings=None, out_dir="analysis_out", runner=None, loop=None):
        self.settings = settings or load_analysis_settings()
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.runner = runner or Runner()
        self.loop = loop or self.settings.loop
        self.setup = load_vehicle(self.loop.vehicle)
        self.controller_params = load_controller_params()
        self.rc_map = self.setup.rc_map
        self._controllers = {}

    def path(self, name):
        return os.path.join(self.out_dir, name)

    def controller(self, omega_d_rad_s):
        """Controller at omega_d (cached) for gains and LTI predictions."""
        key = round(float(omega_d_rad_s), 9)
        if key not in self._controllers:
            self._controllers[key] = lti.controller_for(key, self.setup, self.controller_params)
        return self._controllers[key]


def write_csv(path, header, rows):
    """Write ``rows`` (sequences) under ``header``; floats with 6 significant digits."""
    with open(path, "w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(header)
        for row in rows:
            w.writerow([("%.6g" % v) if isinstance(v, (float, np.floating)) else v for v in row])
    return path


def _nan_to_none(x):
    return None if (x is None or not math.isfinite(x)) else float(x)


# --------------------------------------------------------------------------- workers
_LOOPS = {}


def closed_loop_for(loop_settings):
    """The :class:`ClosedLoop` of these settings, built once per process and shared."""
    loop = _LOOPS.get(loop_settings)
    if loop is None:
        loop = _LOOPS[loop_settings] = ClosedLoop(loop_settings)
    return loop


@dataclass(frozen=True)
class StepJob:
    loop: object
    omega_d_rad_s: float
    kappa: object  # None: params/controller.yaml
    step_rad: float
    step_time_s: float
    duration_s: float
    band: float
    controller_options: tuple = ()   # (name, value) pairs for HybridController.configure


def run_step_job(job):
    """Yaw step at one omega_d: settling time, overshoot, undershoot, rise time, the curve."""
    loop = closed_loop_for(job.loop)
    dive = step_dive(job.step_rad, job.step_time_s, job.duration_s, job.loop.desired_rate_hz)
    res = loop.run(dive, job.duration_s, omega_d_rad_s=job.omega_d_rad_s, kappa=job.kappa,
                   controller_options=dict(job.controller_options))
    t, yaw = res.t_s, res.log["yaw_rad"]
    return {
        "omega_d": job.omega_d_rad_s, "kappa": job.kappa,
        "settling_s": metrics.settling_time(t, yaw, job.step_rad, job.step_time_s, band=job.band),
        "overshoot_pct": metrics.overshoot(t, yaw, job.step_rad, job.step_time_s),
        "undershoot_pct": metrics.undershoot(t, yaw, job.step_rad, job.step_time_s),
        "rise_s": metrics.rise_time(t, yaw, job.step_rad, job.step_time_s),
        "t_s": t, "yaw_rad": yaw, "sim_s": res.duration_s, "wall_s": res.wall_s,
    }


@dataclass(frozen=True)
class BodeJob:
    loop: object
    omega_d_rad_s: float
    freq_hz: float
    amplitude_rad: float
    t_from_s: float
    duration_s: float


def run_bode_job(job):
    """One +-amplitude yaw sine: gain (half peak-to-peak ratio) and phase (peak times)."""
    loop = closed_loop_for(job.loop)
    dive = sine_dive(job.amplitude_rad, job.freq_hz, job.duration_s, job.loop.desired_rate_hz)
    res = loop.run(dive, job.duration_s, omega_d_rad_s=job.omega_d_rad_s)
    gain, phase = metrics.gain_phase(res.t_s, res.log["yaw_d_rad"], res.log["yaw_rad"],
                                     job.freq_hz, job.t_from_s)
    return {"omega_d": job.omega_d_rad_s, "freq_hz": job.freq_hz, "gain": gain, "phase_rad": phase,
            "sim_s": res.duration_s, "wall_s": res.wall_s}


@dataclass(frozen=True)
class DiveJob:
    loop: object
    omega_d_rad_s: float
    dive_path: str
    log_path: str


def run_dive_job(job):
    """The full dive at one omega_d; the log is written to ``log_path`` and returned."""
    loop = closed_loop_for(job.loop)
    dive = load_dive_csv(job.dive_path)
    res = loop.run(dive, omega_d_rad_s=job.omega_d_rad_s, log_path=job.log_path)
    return {"omega_d": job.omega_d_rad_s, "log": res.log, "log_path": res.log_path,
            "sim_s": res.duration_s, "wall_s": res.wall_s}


@dataclass(frozen=True)
class SysidJob:
    torque_nm: float
    duration_s: float
    sample_period_s: float
    model: str
    mixer: str


def run_sysid_job(job):
    """One open-loop constant-yaw-torque run in the vehicle model."""
    from brov2_hybrid.sim.config import load_sim_options
    options = replace(load_sim_options(), model=job.model)
    return sysid.simulate_runs([job.torque_nm], job.duration_s, job.sample_period_s,
                               sim_options=options, mixer_kind=job.mixer)[0]


# --------------------------------------------------------------------------- helpers
def _step_sweep(ctx, loop, omegas, label, duration_s=None, kappa=None):
    s = ctx.settings.step
    jobs = [StepJob(loop, w, kappa, s.step_rad, s.step_time_s, duration_s or s.duration_s, s.settle_band)
            for w in omegas]
    return ctx.runner.map(run_step_job, jobs, label)


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


# --------------------------------------------------------------------------- experiments
def step_experiment(ctx, omegas=None):
    """Sec. 5.2: yaw steps over omega_d (Fig. 13, 14) against Eq. 22."""
    s = ctx.settings.step
    omegas = tuple(omegas or s.omega_d_rad_s)
    plot_w = [w for w in s.plot_omega_d_rad_s]
    main = _step_sweep(ctx, ctx.loop, omegas, "step")
    plain = _step_sweep(ctx, ctx.loop, plot_w, "step kappa=0", kappa=0.0)
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
            r = _step_sweep(ctx, ctx.loop, [p["omega_d"]], "step")[0]
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


def bode_experiment(ctx, omegas=None, freqs_hz=None):
    """App. C: frequency response at omega_d in {2, 3, 4} (Fig. A1) against Eq. 22."""
    b = ctx.settings.bode
    omegas = tuple(omegas or b.omega_d_rad_s)
    freqs = tuple(freqs_hz or b.freqs_hz)
    jobs = []
    for w in omegas:
        for f in freqs:
            t_from = max(b.transient_periods / f, b.min_transient_s)
            jobs.append(BodeJob(ctx.loop, w, f, b.amplitude_rad, t_from, t_from + b.analysed_periods / f))
    # Longest first: better load balance over the workers.
    order = sorted(range(len(jobs)), key=lambda k: -jobs[k].duration_s)
    done = ctx.runner.map(run_bode_job, [jobs[k] for k in order], "bode")
    results = [None] * len(jobs)
    for k, r in zip(order, done):
        results[k] = r
    rows, series, summary = [], [], []
    for w in omegas:
        mine = sorted((r for r in results if r["omega_d"] == w), key=lambda r: r["freq_hz"])
        f = np.array([r["freq_hz"] for r in mine])
        wr = 2.0 * math.pi * f
        gain = np.array([r["gain"] for r in mine])
        phase = np.unwrap(np.array([r["phase_rad"] for r in mine]))
        c = ctx.controller(w)
        lti_gain_at, lti_phase_at = lti.frequency_response(c, wr)
        lti_w = np.logspace(math.log10(wr[0]), math.log10(wr[-1]), 300)
        lti_gain, lti_phase = lti.frequency_response(c, lti_w)
        for k in range(len(mine)):
            rows.append([w, f[k], wr[k], gain[k], 20 * math.log10(gain[k]) if gain[k] > 0 else float("nan"),
                         math.degrees(phase[k]), lti_gain_at[k], math.degrees(lti_phase_at[k])])
        series.append({"omega_d": w, "w": wr, "gain": gain, "phase_rad": phase,
                       "lti_w": lti_w, "lti_gain": lti_gain, "lti_phase_rad": lti_phase})
        summary.append({"omega_d": w, "bandwidth_rad_s": _nan_to_none(metrics.bandwidth(wr, gain)),
                        "lti_bandwidth_rad_s": _nan_to_none(metrics.bandwidth(lti_w, lti_gain)),
                        "gain_at_omega_d": _nan_to_none(metrics.value_at(wr, gain, w)),
                        "unity_crossing_rad_s": _nan_to_none(metrics.unity_crossing(wr, gain)),
                        "lti_gain_at_omega_d": float(lti.frequency_response(c, [w])[0][0]),
                        "peak_gain": float(np.max(gain))})
    write_csv(ctx.path("bode.csv"), ["omega_d_rad_s", "freq_hz", "omega_rad_s", "gain", "gain_db", "phase_deg",
                                     "lti_gain", "lti_phase_deg"], rows)
    fig = plots.bode(ctx.path("bode.png"), series, ctx.loop.latency_label())
    return {"latency": ctx.loop.latency_label(), "per_omega_d": summary, "freqs_hz": [freqs[0], freqs[-1], len(freqs)],
            "files": ["bode.csv", os.path.basename(fig)],
            "sim_s": sum(r["sim_s"] for r in results), "wall_s": sum(r["wall_s"] for r in results)}


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


def latency_experiment(ctx, omegas=None, cases=None):
    """REFERENCE.md 8: the step sweep for several loop latencies; which looks most like Fig. 14."""
    s = ctx.settings.step
    omegas = tuple(omegas or s.omega_d_rad_s)
    cases = tuple(cases or ctx.settings.latency_cases)
    jump = ctx.settings.paper_jump_omega_d_rad_s
    rows, summary = [], []
    for case in cases:
        loop = ctx.loop.with_latency(case)
        res = _step_sweep(ctx, loop, omegas, "latency %s" % case.name)
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
    updated = _step_sweep(ctx, replace(ctx.loop, model="updated"), omegas, "compare updated", cm.duration_s)
    stock = _step_sweep(ctx, replace(ctx.loop, model="stock"), omegas, "compare stock", cm.duration_s)
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


def sysid_experiment(ctx, runs=None, model="updated"):
    """Sec. 3: N_r, N_r|r| from steady rates, then I_zz by RMSE; simulated runs by default."""
    sy = ctx.settings.sysid
    simulated = runs is None
    if simulated:
        jobs = [SysidJob(n, sy.duration_s, 1.0 / sy.sample_rate_hz, model, ctx.loop.mixer) for n in sy.torques_nm]
        runs = ctx.runner.map(run_sysid_job, jobs, "sysid")
    drag = sysid.fit_drag(runs, sy.steady_window_s)
    vehicle = ctx.setup.body
    added = float(vehicle.added_mass[5])
    inertia = sysid.fit_inertia(runs, drag, added, sy.inertia_bounds_kg_m2, sy.settle_tolerance, sy.settle_window_s)
    rows, fitted = [], []
    for run, r_f, win in zip(runs, drag.steady_rates_rad_s, inertia.windows):
        inside = (run.t_s >= win[0]) & (run.t_s <= win[1])
        t = run.t_s[inside]
        fitted.append((t, sysid.simulate_rate(t, run.torque_nm, inertia.inertia_kg_m2 + added, drag, win[0], win[2])))
        rows.append([run.source, run.torque_nm, r_f, win[0], win[1], win[2]])
    write_csv(ctx.path("sysid_runs.csv"), ["run", "torque_nm", "steady_rate_rad_s", "t0_s", "tf_s", "r0_rad_s"], rows)
    truth = {"linear": float(vehicle.linear_drag[5]), "quadratic": float(vehicle.quadratic_drag[5]),
             "inertia": float(vehicle.inertia_kg_m2[2])}
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
    v = ctx.setup.body
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


def _flown_part(log):
    """Rows of a log to summarize: from the first to the last ACTIVE tick when the log has a
    ROS autopilot's modes (else every row), one row per instant."""
    modes = np.array(log["mode"])
    active = np.flatnonzero(modes == "ACTIVE")
    idx = np.arange(int(active[0]), int(active[-1]) + 1) if active.size >= 2 else np.arange(len(modes))
    t = log["time_s"][idx]
    keep = idx[np.concatenate([[True], np.diff(t) > 0])] if idx.size else idx
    out = {k: v[keep] for k, v in log.items() if k != "mode"}
    out["mode"] = list(modes[keep])
    return out


def summarize_log(log_path, out_dir, rc_map=None):
    """IAE and energy per axis of any log CSV, written as ``<stem>_summary.csv`` and a PNG.

    A ROS log is cut to its flown part (first to last ACTIVE tick)."""
    rc_map = rc_map or load_rc_map()
    log = _flown_part(read_log(log_path))
    if len(log["time_s"]) < 2:
        raise Brov2Error("%s: expected at least 2 rows to summarize" % log_path)
    os.makedirs(out_dir, exist_ok=True)
    m, curves = log_metrics(log, rc_map)
    stem = os.path.splitext(os.path.basename(log_path))[0]
    csv_path = write_csv(os.path.join(out_dir, stem + "_summary.csv"), ["quantity", "value"], sorted(m.items()))
    png = plots.log_summary(os.path.join(out_dir, stem + "_summary.png"), curves["t_s"], curves["desired_deg"],
                            curves["actual_deg"], curves["iae_deg_s"], curves["energy"],
                            "%s (omega_d %.2f rad/s)" % (os.path.basename(log_path), float(np.median(log["omega_d_rad_s"]))))
    m["files"] = [csv_path, png]
    return m


# --------------------------------------------------------------------------- firmware (issue 8)
#: (label, vehicle mixer, output stage) of the firmware comparison.
FIRMWARE_CASES = (("quantitative firmware", QUANTITATIVE, "quantitative"),
                  ("stock naive", STOCK, "stock_naive"),
                  ("stock compensated", STOCK, "stock"),
                  ("stock to requested wrench", STOCK, "stock_wrench"))


def torque_fidelity(setup, rc_map, amplitudes, n_random, seed):
    """Requested vs delivered wrench of each output stage over |u| levels.

    Per level a: ``n_random`` commands u ~ U(-a, a)^6 (error = largest per-DOF
    |tau_achieved - tau_requested| / tau_max) and the 12 single-DOF commands +-a e_j
    (delivered fraction tau_achieved_j / tau_requested_j). Returns a list of row dicts.
    """
    from brov2_hybrid.firmware_output import output_stage
    rows = []
    for label, _, stage_name in FIRMWARE_CASES:
        stage = output_stage(stage_name, setup, rc_map)
        rng = np.random.default_rng(seed)
        for a in amplitudes:
            errs = [float(np.max(np.abs(stage.command(u).tau_error / setup.tau_max)))
                    for u in rng.uniform(-a, a, (n_random, 6))]
            ratios = []
            for j in range(6):
                for sign in (1.0, -1.0):
                    u = np.zeros(6)
                    u[j] = sign * a
                    ratios.append(stage.command(u).tau_achieved[j] / (sign * a * setup.tau_max[j]))
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
    fid = torque_fidelity(ctx.setup, ctx.rc_map, fw.amplitudes, fw.random_commands, fw.seed)
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
        steps = _step_sweep(ctx, loop, omegas, "step %s" % label)
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
