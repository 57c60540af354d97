"""Saturation-aware allocation vs the paper's Eq. 9 on an aggressive dive (``brov2-analyze allocators``).

The dive (:func:`aggressive_dive`, generated from ``params/analysis.yaml`` section
``allocators``): full surge, sway and heave plateaus (command +-1, the sign alternating
from one attitude to the next) at each of the four (+-a, +-a) roll/pitch pairs
(a = 35 deg), each plateau opening with a yaw ramp at 60, 75 or 90 deg/s (cycling,
direction alternating). Every run flies it in the in-process loop with the vehicle file's
``allocator`` key set to each allocator (:func:`vehicle_file_with_allocator`: a copy of
the vehicle file in the output folder), for each firmware output stage (``quantitative``:
the vehicle runs Algorithm 2 with that allocator; ``stock``: stock ArduSub, the
compensated output stage aiming at Algorithm 2's motor outputs with that allocator) and
each omega_d. Per run: IAE per angular axis over the dive, the worst steady error per
axis (mean |error| over the last ``steady_fraction`` of a plateau, worst plateau) and
the share of ticks on which Eq. 9 asks a thruster for more than its thrust table gives.

Angles rad inside, deg in the CSV columns named ``*_deg``; IAE deg s.
"""
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.dive.dive_csv import Dive
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.tick_log.logfile import PWM_COLUMNS, U_COLUMNS
from brov2_hybrid.params import Section, load_yaml, vehicle_file
from brov2_hybrid.analysis import metrics
from brov2_hybrid.analysis.context import AXES, write_csv

SECTION = "allocators"
#: The paper's allocator: the baseline every other allocator is compared with.
BASELINE = "pseudo_inverse"


@dataclass(frozen=True)
class AllocatorSettings:
    """``params/analysis.yaml`` section ``allocators`` (angles rad, rates rad/s, times s)."""

    allocators: tuple
    output_stages: tuple
    omega_d_rad_s: tuple
    attitude_rad: float
    plateau_s: float
    lead_in_s: float
    yaw_rates_rad_s: tuple
    yaw_ramp_s: float
    yaw_ramp_delay_s: float
    measure_fraction: float
    desired_rate_hz: float


def load_allocator_settings(path=None):
    """Read section ``allocators`` of ``params/analysis.yaml`` (or ``path``)."""
    from brov2_hybrid.vehicle.allocation import ALLOCATORS
    from brov2_hybrid.vehicle.mixers import KINDS
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, SECTION)

    def names(key, choices):
        value = s.raw(key)
        if not (isinstance(value, list) and value and all(v in choices for v in value)):
            raise ParameterError("%s: expected a list from %s, got %r" % (s.key(key), sorted(choices), value))
        return tuple(value)

    def nonnegative(key):
        value = s.finite(key)
        if value < 0.0:
            raise ParameterError("%s: expected a value >= 0, got %r" % (s.key(key), value))
        return value

    allocators = names("allocators", ALLOCATORS)
    if BASELINE not in allocators:
        raise ParameterError("%s: expected %r (the baseline) among them" % (s.key("allocators"), BASELINE))
    fraction = s.positive("steady_fraction")
    if fraction > 1.0:
        raise ParameterError("%s: expected a fraction in (0, 1], got %r" % (s.key("steady_fraction"), fraction))
    ramp, delay, plateau = s.positive("yaw_ramp_s"), nonnegative("yaw_ramp_delay_s"), s.positive("plateau_s")
    if delay + ramp > (1.0 - fraction) * plateau:
        raise ParameterError("%s: the yaw ramp (yaw_ramp_delay_s + yaw_ramp_s) must end before the measured "
                             "last steady_fraction of the plateau" % s.key("yaw_ramp_s"))
    return AllocatorSettings(
        allocators=allocators, output_stages=names("output_stages", KINDS),
        omega_d_rad_s=s.positive_list("omega_d_rad_s"), attitude_rad=math.radians(s.positive("attitude_deg")),
        plateau_s=plateau, lead_in_s=nonnegative("lead_in_s"),
        yaw_rates_rad_s=tuple(math.radians(v) for v in s.positive_list("yaw_rates_deg_s")), yaw_ramp_s=ramp,
        yaw_ramp_delay_s=delay, measure_fraction=fraction, desired_rate_hz=s.positive("desired_rate_hz"))


def aggressive_dive(s):
    """The dive of :class:`AllocatorSettings` ``s`` and its plateaus.

    Returns
    -------
    dive : Dive
    plateaus : list of (start_s, end_s, roll_rad, pitch_rad, dof index, sign)
    """
    plateaus, ramps = [], []
    t0 = s.lead_in_s
    k = 0
    yaw = 0.0
    for pair, (roll, pitch) in enumerate(((1, 1), (-1, 1), (1, -1), (-1, -1))):
        sign = 1.0 if pair % 2 == 0 else -1.0
        for dof in range(3):
            plateaus.append((t0, t0 + s.plateau_s, roll * s.attitude_rad, pitch * s.attitude_rad, dof, sign))
            rate = s.yaw_rates_rad_s[k % len(s.yaw_rates_rad_s)] * (1.0 if k % 2 == 0 else -1.0)
            ramps.append((t0 + s.yaw_ramp_delay_s, rate, yaw))
            yaw += rate * s.yaw_ramp_s
            t0 += s.plateau_s
            k += 1
    end = t0 + s.lead_in_s
    t = np.arange(0.0, end + 0.5 / s.desired_rate_hz, 1.0 / s.desired_rate_hz)
    eta = np.zeros((t.size, 3))
    lin = np.zeros((t.size, 3))
    for (start, stop, roll, pitch, dof, sign), (ramp_start, rate, yaw0) in zip(plateaus, ramps):
        inside = (t >= start - 1e-9) & (t < stop - 1e-9)
        eta[inside, 0], eta[inside, 1] = roll, pitch
        lin[inside, dof] = sign
        ramp = np.clip(t - ramp_start, 0.0, s.yaw_ramp_s)
        eta[t >= start - 1e-9, 2] = (yaw0 + rate * ramp)[t >= start - 1e-9]
    return Dive(t_s=t, eta2d_rad=eta, u_linear=lin, source="aggressive dive (params/analysis.yaml allocators)"), plateaus


def vehicle_file_with_allocator(name_or_path, allocator, out_dir):
    """A copy of the vehicle file ``vehicle`` (name or path) naming ``allocator``, in ``out_dir``; its path.

    The thrust table's CSV path is made absolute so the copy loads from anywhere.
    """
    import yaml
    source = vehicle_file(name_or_path)
    data = load_yaml(source)
    data["allocator"] = allocator
    table = data.get("thrust_table") or {}
    if isinstance(table.get("csv_file"), str) and not os.path.isabs(table["csv_file"]):
        table["csv_file"] = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(source)), table["csv_file"]))
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.abspath(os.path.join(out_dir, "vehicle_%s_%s.yaml" % (data.get("name", "vehicle"), allocator)))
    with open(path, "w") as handle:
        yaml.safe_dump(data, handle, sort_keys=False)
    return path


def dive_figures(log, plateaus, measure_fraction, vehicle):
    """Per-run figures of the aggressive dive.

    IAE [deg s] and worst steady |error| [deg] per axis; the % of ticks on which Eq. 9
    (the log's u) asks a thruster for more than its thrust table gives; and the
    translation delivered: the body force along each plateau's commanded DOF (the log's
    motor PWMs through the thrust table, times T), averaged over the plateaus' steady
    windows, in % of tau_max (what a full command asks for).
    """
    t = log["time_s"]
    out = {}
    err = {a: np.degrees(wrap_angle(log["%s_d_rad" % a] - log["%s_rad" % a])) for a in AXES}
    for a in AXES:
        out["iae_%s_deg_s" % a] = metrics.iae(t, err[a])
        steady = []
        for start, end, _, _, _, _ in plateaus:
            k = (t >= end - measure_fraction * (end - start)) & (t < end)
            steady.append(float(np.mean(np.abs(err[a][k]))))
        out["worst_steady_%s_deg" % a] = max(steady)
    pwm = np.column_stack([log[c] for c in PWM_COLUMNS[:vehicle.n_thrusters]])
    wrench = vehicle.wrench_from_pwm(pwm)
    delivered = []
    for start, end, _, _, dof, sign in plateaus:
        k = (t >= end - measure_fraction * (end - start)) & (t < end)
        delivered.append(float(np.mean(sign * wrench[k, dof])) / vehicle.tau_max[dof])
    out["translation_delivered_pct"] = 100.0 * float(np.mean(delivered))
    u = np.column_stack([log[c] for c in U_COLUMNS])
    ok = np.all(np.isfinite(u), axis=1)
    forces = (vehicle.tau_max * u[ok]) @ vehicle.T_pinv.T
    beyond = (forces > vehicle.table.max_forward_n) | (forces < -vehicle.table.max_reverse_n)
    out["eq9_beyond_limits_pct"] = 100.0 * float(np.mean(np.any(beyond, axis=1))) if ok.any() else math.nan
    return out


@dataclass(frozen=True)
class AllocatorJob:
    """One run of the allocators sweep: the aggressive dive with one allocator, output stage and omega_d.

    ``loop`` is the LoopSettings (``mixer`` = the firmware output stage, ``vehicle`` = the copy of the
    vehicle file naming ``allocator``); ``settings`` the section the dive is built from."""

    loop: object            # LoopSettings: mixer = the firmware (output stage), vehicle = the allocator's file
    allocator: str
    omega_d_rad_s: float
    settings: AllocatorSettings


def run_allocator_job(job):
    """The aggressive dive once: :func:`dive_figures` plus the run's times and the log's curves."""
    from brov2_hybrid.analysis.jobs import closed_loop_for
    loop = closed_loop_for(job.loop)
    dive, plateaus = aggressive_dive(job.settings)
    res = loop.run(dive, omega_d_rad_s=job.omega_d_rad_s)
    out = dive_figures(res.log, plateaus, job.settings.measure_fraction, loop.vehicle)
    out.update({"stage": job.loop.mixer, "allocator": job.allocator, "omega_d": job.omega_d_rad_s,
                "sim_s": res.duration_s, "wall_s": res.wall_s,
                "curves": {k: res.log[k] for k in ("time_s",) + tuple("%s%s_rad" % (a, d) for a in AXES
                                                                          for d in ("", "_d"))}})
    return out


def quick_settings(s):
    """Shorter plateaus (a smoke test of ``reproduce --quick``, not the evidence): the ramp still ends
    before the measured part of each plateau."""
    return replace(s, plateau_s=(s.yaw_ramp_delay_s + s.yaw_ramp_s) / (1.0 - s.measure_fraction) + 1.0)


def allocators_experiment(ctx, omegas=None, settings=None, quick=False):
    """Every allocator x output stage x omega_d on the aggressive dive; CSV, plots, summary.

    ``settings``: an :class:`AllocatorSettings` (default: ``params/analysis.yaml``);
    ``quick``: :func:`quick_settings` of it."""
    s = settings or load_allocator_settings(getattr(ctx.settings, "source", None))
    s = quick_settings(s) if quick else s
    omegas = tuple(omegas or s.omega_d_rad_s)
    files = {a: vehicle_file_with_allocator(ctx.loop.vehicle, a, ctx.path("vehicles")) for a in s.allocators}
    jobs = [AllocatorJob(replace(ctx.loop, mixer=stage, output_stage="auto", vehicle=files[a]), a, w, s)
            for stage in s.output_stages for a in s.allocators for w in omegas]
    results = ctx.runner.map(run_allocator_job, jobs, "allocators")
    keys = (["iae_%s_deg_s" % a for a in AXES] + ["worst_steady_%s_deg" % a for a in AXES]
            + ["translation_delivered_pct", "eq9_beyond_limits_pct"])
    write_csv(ctx.path("allocators_metrics.csv"), ["output_stage", "allocator", "omega_d_rad_s"] + keys
              + ["wall_s"], [[r["stage"], r["allocator"], r["omega_d"]] + [r[k] for k in keys] + [r["wall_s"]]
                             for r in results])
    figs = [_plot_bars(ctx.path("allocators_iae.png"), results, s, omegas),
            _plot_curves(ctx.path("allocators_dive.png"), results, s, omegas)]
    runs = [{k: v for k, v in r.items() if k != "curves"} for r in results]
    dive, _ = aggressive_dive(s)
    return {"runs": runs, "omega_d": list(omegas), "allocators": list(s.allocators), "stages": list(s.output_stages),
            "dive": {"duration_s": dive.duration_s, "attitude_deg": math.degrees(s.attitude_rad),
                     "plateau_s": s.plateau_s, "yaw_rates_deg_s": [math.degrees(r) for r in s.yaw_rates_rad_s]},
            "latency": ctx.loop.latency_label(s.desired_rate_hz),
            "files": ["allocators_metrics.csv"] + [os.path.basename(f) for f in figs],
            "sim_s": sum(r["sim_s"] for r in results), "wall_s": sum(r["wall_s"] for r in results)}


def _run(summary, stage, allocator, w):
    for r in summary["runs"]:
        if r["stage"] == stage and r["allocator"] == allocator and r["omega_d"] == w:
            return r
    return None


def change_pct(summary, stage, allocator, w, key):
    """Change of ``key`` from the pseudo-inverse to ``allocator`` [%] (negative: smaller)."""
    base, other = _run(summary, stage, BASELINE, w), _run(summary, stage, allocator, w)
    return 100.0 * (other[key] - base[key]) / base[key] if base[key] else math.nan


def verdict(summary):
    """One sentence per non-baseline allocator, computed from the figures."""
    out = []
    for a in summary["allocators"]:
        if a == BASELINE:
            continue
        for stage in summary["stages"]:
            total = [sum(_run(summary, stage, x, w)["iae_%s_deg_s" % ax] for ax in AXES) for x in (BASELINE, a)
                     for w in summary["omega_d"]]
            n = len(summary["omega_d"])
            base, new = sum(total[:n]), sum(total[n:])
            worse = [(ax, w) for w in summary["omega_d"] for ax in AXES
                     if change_pct(summary, stage, a, w, "iae_%s_deg_s" % ax) > 0.0]
            steady_worse = [(ax, w) for w in summary["omega_d"] for ax in AXES
                            if change_pct(summary, stage, a, w, "worst_steady_%s_deg" % ax) > 0.0]
            moved = [(_run(summary, stage, BASELINE, w)["translation_delivered_pct"],
                      _run(summary, stage, a, w)["translation_delivered_pct"]) for w in summary["omega_d"]]
            out.append("%s firmware: %s %s the summed roll+pitch+yaw IAE by %.0f %% over omega_d %s (%.0f -> %.0f "
                       "deg s), %s; the worst steady error is %s; it delivers %.0f-%.0f %% of the full translation "
                       "force on the plateaus (Eq. 9: %.0f-%.0f %%)."
                       % (stage, a, "lowers" if new < base else "raises", abs(100.0 * (new - base) / base),
                          "/".join("%g" % w for w in summary["omega_d"]), base, new,
                          "higher on %s" % ", ".join("%s at %g" % x for x in worse) if worse else
                          "lower on every axis at every omega_d",
                          "higher on %s" % ", ".join("%s at %g" % x for x in steady_worse) if steady_worse else
                          "lower on every axis at every omega_d",
                          min(m[1] for m in moved), max(m[1] for m in moved),
                          min(m[0] for m in moved), max(m[0] for m in moved)))
    return out


def console_lines(summary):
    """Key figures for the terminal."""
    lines = []
    for r in summary["runs"]:
        lines.append("  %-12s %-14s omega_d %g: IAE r/p/y %s deg s, worst steady r/p/y %s deg, translation "
                     "%3.0f %%, Eq. 9 beyond limits %3.0f %% of ticks" % (
                         r["stage"], r["allocator"], r["omega_d"],
                         " /".join("%6.0f" % r["iae_%s_deg_s" % a] for a in AXES),
                         " /".join("%5.2f" % r["worst_steady_%s_deg" % a] for a in AXES),
                         r["translation_delivered_pct"], r["eq9_beyond_limits_pct"]))
    return "\n".join(lines + ["  " + v for v in verdict(summary)])


def report_section(summary):
    """REPORT.md lines."""
    d = summary["dive"]
    lines = ["## Saturation-aware allocation vs Eq. 9", "",
             "Aggressive dive (%.0f s): full surge / sway / heave plateaus of %g s at (+-%g, +-%g) deg roll/pitch, "
             "each opening with a yaw ramp at %s deg/s. `pseudo_inverse` is the paper's Eq. 9 (the thrust table "
             "clips what a thruster cannot give); `saturating` keeps every thruster within the table, roll/pitch/yaw "
             "first, translation scaled along its direction. Stage `quantitative`: the vehicle runs Algorithm 2 "
             "with that allocator; `stock`: stock ArduSub and the compensated output stage aiming at it. Loop "
             "latency: %s." % (d["duration_s"], d["plateau_s"], d["attitude_deg"], d["attitude_deg"],
                              "/".join("%g" % r for r in d["yaw_rates_deg_s"]), summary["latency"]), "",
             ]
    return lines + markdown_table(summary) + ["", "![](allocators_iae.png)", "", "![](allocators_dive.png)", ""]


def markdown_table(summary):
    """The runs' table and the verdict (REPORT.md and the generated block of the docs)."""
    lines = ["| stage | allocator | omega_d | IAE roll | IAE pitch | IAE yaw [deg s] | worst steady roll | pitch "
             "| yaw [deg] | translation delivered [% of full] | Eq. 9 beyond limits [% ticks] |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary["runs"]:
        lines.append("| %s | %s | %g | %s | %s | %.0f | %.0f |" % (
            r["stage"], r["allocator"], r["omega_d"], " | ".join("%.0f" % r["iae_%s_deg_s" % a] for a in AXES),
            " | ".join("%.2f" % r["worst_steady_%s_deg" % a] for a in AXES), r["translation_delivered_pct"],
            r["eq9_beyond_limits_pct"]))
    return lines + [""] + ["- " + v for v in verdict(summary)]


def _plot_bars(path, results, s, omegas):
    from brov2_hybrid.analysis.plots import plt, save_figure
    fig, axes = plt.subplots(len(s.output_stages), 3, figsize=(11, 3.2 * len(s.output_stages)), squeeze=False)
    x = np.arange(len(omegas))
    width = 0.8 / len(s.allocators)
    for i, stage in enumerate(s.output_stages):
        for j, axis in enumerate(AXES):
            ax = axes[i][j]
            for k, a in enumerate(s.allocators):
                vals = [next(r["iae_%s_deg_s" % axis] for r in results
                             if r["stage"] == stage and r["allocator"] == a and r["omega_d"] == w) for w in omegas]
                ax.bar(x + (k - 0.5 * (len(s.allocators) - 1)) * width, vals, width, label=a)
            ax.set_xticks(x)
            ax.set_xticklabels(["%g" % w for w in omegas])
            ax.set_xlabel("omega_d [rad/s]")
            ax.set_title("%s firmware: %s" % (stage, axis))
        axes[i][0].set_ylabel("IAE [deg s]")
    axes[0][0].legend()
    return save_figure(fig, path)


def _plot_curves(path, results, s, omegas):
    """Roll, pitch, yaw error of each allocator at the middle omega_d, first output stage."""
    from brov2_hybrid.analysis.plots import plt, save_figure
    w = omegas[len(omegas) // 2]
    fig, axes = plt.subplots(3, 1, figsize=(11, 7), sharex=True)
    for a in s.allocators:
        r = next(r for r in results if r["stage"] == s.output_stages[0] and r["allocator"] == a and r["omega_d"] == w)
        c = r["curves"]
        for ax, axis in zip(axes, AXES):
            ax.plot(c["time_s"], np.degrees(wrap_angle(c["%s_d_rad" % axis] - c["%s_rad" % axis])), lw=0.8, label=a)
    for ax, axis in zip(axes, AXES):
        ax.set_ylabel("%s error [deg]" % axis)
        ax.grid(True, lw=0.3)
    axes[0].set_title("aggressive dive, %s firmware, omega_d %g" % (s.output_stages[0], w))
    axes[-1].set_xlabel("time [s]")
    axes[0].legend()
    return save_figure(fig, path)

