"""How far omega_d can go (``brov2-analyze omega-limit``): stability margins and flown figures.

What limits omega_d on a real BlueROV2 Heavy is what the paper's model leaves out: the
topside loop's latency (ATTITUDE over the tether, the command back as RC override), the
T200's spin-up and the IMU's noise. Per omega_d and per condition (section ``omega_limit``
of ``params/analysis.yaml``; each names its telemetry rate and delay, command delay,
thruster lag and whether the IMU is noisy):

* **Margins of the Eq. 22 loop** (:func:`loop_margins`): the open loop of one axis is
  L(s) = (k_p + k_d,tot s) / ((I + M_A) s^2 + B-check s) e^(-s T): crossover omega_c
  (|L| = 1), phase margin without delay, and the delay margin PM / omega_c: the loop
  delay at which the linear loop becomes unstable. The condition's effective delay T
  (:func:`effective_delay_s`) is telemetry delay + command delay + half a control period
  (the command held until the next tick) + the thruster lag's low-frequency delay (first
  order: its time constant; third order K(s): a1 / a0 - b1 / b0). control_law ticks on each
  attitude as it arrives (``trigger: attitude``, the default, as the in-process loop does), so the
  attitude waits for no timer: a fixed-timer loop would add up to a control period more. With the
  loop-delay compensation on (a condition's ``delay_compensation``), the law predicts over
  all of these but the thruster lag, which alone is left in the loop. The
  smallest margin over roll, pitch and yaw is reported. A condition may run the law at a rate of
  its own (``control_rate_hz``: the on-board Lua script's, with the attitude read on the vehicle and
  no tether in the loop).
* **Flown** in the in-process loop with the condition's latency, lag and noise: a yaw step
  (overshoot, settling) and the bundled dive (summed IAE, attitude effort: Eq. 26 energy
  of the roll, pitch and yaw channels).

:func:`safe_omega_d` picks the highest omega_d that is safe under the design condition:
delay margin at least ``min_delay_margin_ratio`` times its effective delay, and a flown
step that settles within ``max_settling_s`` with at most ``max_overshoot_pct`` overshoot;
:func:`best_dive_omega_d` the omega_d with the lowest dive IAE. Angles rad inside.
"""
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.analysis import metrics
from brov2_hybrid.analysis.context import AXES, write_csv
from brov2_hybrid.control.gains import loop_margins
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section, load_yaml

SECTION = "omega_limit"
LAGS = ("none", "first_order", "third_order")


@dataclass(frozen=True)
class Condition:
    """One operating condition: loop latency, thruster lag and IMU noise."""

    name: str
    telemetry_rate_hz: float
    telemetry_delay_s: float
    command_delay_s: float
    thruster_lag: str
    noise: bool
    #: the law predicts over the condition's delays (control/delay_compensation.py; key optional, default off)
    delay_compensation: bool = False
    #: the law's own rate [Hz] where it is not the loop's (the on-board script's; key optional)
    control_rate_hz: float = None


@dataclass(frozen=True)
class OmegaLimitSettings:
    """``params/analysis.yaml`` section ``omega_limit``."""

    omega_d_rad_s: tuple
    conditions: tuple
    design_condition: str
    min_delay_margin_ratio: float
    max_overshoot_pct: float
    max_settling_s: float
    step_rad: float
    step_time_s: float
    step_duration_s: float
    dive_csv: str


def load_omega_limit_settings(path=None):
    """Read section ``omega_limit`` of ``params/analysis.yaml`` (or ``path``)."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, SECTION)
    raw = s.raw("conditions")
    if not (isinstance(raw, list) and raw and all(isinstance(c, dict) for c in raw)):
        raise ParameterError("%s: expected a non-empty list of mappings" % s.key("conditions"))
    conditions = []
    for k, c in enumerate(raw):
        cs = Section(c, path, None)
        cs.section = "%s.conditions[%d]" % (SECTION, k)       # errors name file:omega_limit.conditions[k].key
        conditions.append(Condition(
            name=cs.string("name"), telemetry_rate_hz=cs.positive("telemetry_rate_hz"),
            telemetry_delay_s=cs.number("telemetry_delay_s", minimum=0.0),
            command_delay_s=cs.number("command_delay_s", minimum=0.0),
            thruster_lag=cs.choice("thruster_lag", LAGS), noise=cs.boolean("noise"),
            delay_compensation=cs.boolean("delay_compensation") if "delay_compensation" in c else False,
            control_rate_hz=cs.positive("control_rate_hz") if "control_rate_hz" in c else None))
    names = [c.name for c in conditions]
    design = str(s.raw("design_condition"))
    if design not in names:
        raise ParameterError("%s: expected one of the conditions %s, got %r" % (s.key("design_condition"), names,
                                                                               design))
    return OmegaLimitSettings(
        omega_d_rad_s=s.positive_list("omega_d_rad_s"),
        conditions=tuple(conditions), design_condition=design,
        min_delay_margin_ratio=s.positive("min_delay_margin_ratio"), max_overshoot_pct=s.positive("max_overshoot_pct"),
        max_settling_s=s.positive("max_settling_s"),
        step_rad=math.radians(s.positive("step_deg")), step_time_s=s.positive("step_time_s"),
        step_duration_s=s.positive("step_duration_s"), dive_csv=str(s.raw("dive_csv")))


def lag_delay_s(sim_options, lag):
    """Low-frequency delay [s] of the thruster lag ``lag`` in :class:`~brov2_hybrid.sim.config.SimOptions`:
    0, the first-order time constant, or a1 / a0 - b1 / b0 of the third-order K(s)."""
    if lag == "none":
        return 0.0
    if lag == "first_order":
        return float(sim_options.thruster_time_constant_s)
    num, den = sim_options.third_order_numerator, sim_options.third_order_denominator
    return float(den[-2] / den[-1] - num[-2] / num[-1])


def effective_delay_s(condition, control_rate_hz, sim_options):
    """The loop delay [s] a condition adds (module docstring), the law at ``control_rate_hz`` [Hz] unless the
    condition has a rate of its own; with the delay compensation, what it does not predict over: the
    thruster lag."""
    lag = lag_delay_s(sim_options, condition.thruster_lag)
    if condition.delay_compensation:
        return lag
    rate = condition.control_rate_hz or control_rate_hz
    return condition.telemetry_delay_s + condition.command_delay_s + 0.5 / rate + lag


def condition_loop(loop, condition):
    """The loop settings ``loop`` flown under ``condition``: its telemetry rate and delays, and its own
    control rate when it has one."""
    from brov2_hybrid.analysis.settings import LatencyCase
    flown = loop.with_latency(LatencyCase(condition.name, condition.telemetry_rate_hz, condition.telemetry_delay_s,
                                          condition.command_delay_s))
    return replace(flown, control_rate_hz=condition.control_rate_hz) if condition.control_rate_hz else flown


def condition_options(condition):
    """HybridController.configure keywords a condition flies with."""
    if not condition.delay_compensation:
        return None
    return {"delay_compensation_enabled": True, "delay_compensation_command_delay_s": condition.command_delay_s}


def margins_for(controller):
    """:func:`loop_margins` of the axis with the smallest delay margin (roll, pitch or yaw), and its name."""
    g = controller.gains
    per_axis = [loop_margins(g.kp[k], g.kd_total[k], controller.total_inertia[k], controller.b_check[k])
                for k in range(3)]
    k = int(np.argmin([m["delay_margin_s"] for m in per_axis]))
    out = dict(per_axis[k])
    out["axis"] = AXES[k]
    return out


@dataclass(frozen=True)
class LimitJob:
    """One condition at one omega_d: a yaw step and the bundled dive in the in-process loop."""

    loop: object           # LoopSettings with the condition's latency
    omega_d_rad_s: float
    condition: Condition
    settings: OmegaLimitSettings


def run_limit_job(job):
    """Fly one :class:`LimitJob`: step overshoot [%], settling [s] (None: never settles), dive
    summed IAE [deg s] and attitude effort; ``diverged`` when a run ends in gimbal lock."""
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    from brov2_hybrid.analysis.log_summary import log_metrics
    from brov2_hybrid.dive.dive_csv import load_dive_csv
    from brov2_hybrid.dive.shapes import step_dive
    from brov2_hybrid.errors import Brov2Error
    from brov2_hybrid.sim.config import load_sim_options
    c, s = job.condition, job.settings
    options = replace(load_sim_options(), thruster_lag=c.thruster_lag, noise_enabled=c.noise)
    loop = ClosedLoop(job.loop, sim_options=options)
    out = {"omega_d": job.omega_d_rad_s, "condition": c.name, "diverged": False, "sim_s": 0.0, "wall_s": 0.0}
    step = step_dive(s.step_rad, s.step_time_s, s.step_duration_s, job.loop.desired_rate_hz)
    path = s.dive_csv if os.path.isabs(s.dive_csv) else os.path.join(paths.package_root(), s.dive_csv)
    try:
        r = loop.run(step, omega_d_rad_s=job.omega_d_rad_s, controller_options=condition_options(c))
        yaw = r.log["yaw_rad"]
        out["overshoot_pct"] = metrics.overshoot(r.t_s, yaw, s.step_rad, s.step_time_s)
        out["settling_s"] = metrics.settling_time(r.t_s, yaw, s.step_rad, s.step_time_s, band=0.05)
        out["sim_s"] += r.duration_s
        out["wall_s"] += r.wall_s
        d = loop.run(load_dive_csv(path), omega_d_rad_s=job.omega_d_rad_s, controller_options=condition_options(c))
        m, _ = log_metrics(d.log, loop.rc_map)
        out["dive_iae_sum_deg_s"] = sum(m["iae_%s_deg_s" % a] for a in AXES)
        out["dive_effort"] = sum(m["energy_%s" % a] for a in AXES)
        out["sim_s"] += d.duration_s
        out["wall_s"] += d.wall_s
    except Brov2Error:            # gimbal lock: the loop went unstable
        out["diverged"] = True
    for key in ("overshoot_pct", "settling_s", "dive_iae_sum_deg_s", "dive_effort"):
        out.setdefault(key, None)
    return out


def limit_rows(ctx, s, results):
    """The table: per condition and omega_d, the margins, the effective delay and the flown figures."""
    from brov2_hybrid.sim.config import load_sim_options
    sim = load_sim_options()
    rows = []
    for r in results:
        c = next(c for c in s.conditions if c.name == r["condition"])
        m = margins_for(ctx.controller(r["omega_d"]))
        t_eff = effective_delay_s(c, ctx.loop.control_rate_hz, sim)
        row = dict(r)
        row.update(effective_delay_s=t_eff, crossover_rad_s=m["crossover_rad_s"],
                   phase_margin_deg=m["phase_margin_deg"], delay_margin_s=m["delay_margin_s"], margin_axis=m["axis"],
                   phase_margin_left_deg=m["phase_margin_deg"] - math.degrees(m["crossover_rad_s"] * t_eff))
        settled = r["settling_s"] is not None and math.isfinite(r["settling_s"])
        row["safe"] = bool(not r["diverged"] and settled and r["settling_s"] <= s.max_settling_s
                           and r["overshoot_pct"] <= s.max_overshoot_pct
                           and m["delay_margin_s"] >= s.min_delay_margin_ratio * t_eff)
        rows.append(row)
    return rows


def safe_omega_d(rows, condition):
    """The highest omega_d safe under ``condition`` with every lower omega_d of the grid safe too (None: none)."""
    best = None
    for r in sorted((r for r in rows if r["condition"] == condition), key=lambda r: r["omega_d"]):
        if not r["safe"]:
            break
        best = r["omega_d"]
    return best


def best_dive_omega_d(rows, condition):
    """The omega_d with the lowest summed dive IAE under ``condition`` (None: no dive flown)."""
    flown = [r for r in rows if r["condition"] == condition and r["dive_iae_sum_deg_s"] is not None]
    return min(flown, key=lambda r: r["dive_iae_sum_deg_s"])["omega_d"] if flown else None


CSV_COLUMNS = ("condition", "omega_d", "effective_delay_s", "crossover_rad_s", "phase_margin_deg",
               "phase_margin_left_deg", "delay_margin_s", "margin_axis", "overshoot_pct", "settling_s",
               "dive_iae_sum_deg_s", "dive_effort", "diverged", "safe")


def omega_limit_experiment(ctx, omegas=None, settings=None):
    """Every condition at every omega_d; ``omega_limit.csv``; the safe omega_d per condition."""
    s = settings or load_omega_limit_settings()
    jobs = [LimitJob(condition_loop(ctx.loop, c), w, c, s) for c in s.conditions for w in (omegas or s.omega_d_rad_s)]
    rows = limit_rows(ctx, s, ctx.runner.map(run_limit_job, jobs, "omega-limit"))
    write_csv(ctx.path("omega_limit.csv"), list(CSV_COLUMNS), [[r[k] for k in CSV_COLUMNS] for r in rows])
    safe = {c.name: safe_omega_d(rows, c.name) for c in s.conditions}
    best = {c.name: best_dive_omega_d(rows, c.name) for c in s.conditions}
    return {"rows": [{k: r[k] for k in CSV_COLUMNS} for r in rows], "safe_omega_d": safe, "best_dive_omega_d": best,
            "design_condition": s.design_condition, "min_delay_margin_ratio": s.min_delay_margin_ratio,
            "max_overshoot_pct": s.max_overshoot_pct, "max_settling_s": s.max_settling_s,
            "conditions": [c.__dict__ for c in s.conditions], "files": ["omega_limit.csv"],
            "sim_s": sum(r["sim_s"] for r in rows), "wall_s": sum(r["wall_s"] for r in rows)}


def console_lines(summary):
    """One line per condition and omega_d, then the safe omega_d per condition."""
    def f(v, fmt):
        return "n/a" if v is None else fmt % v
    lines = ["  %-9s omega_d %4g: delay margin %5.0f ms (effective delay %3.0f ms), PM left %5.1f deg, step overshoot "
             "%s %%, settling %s s, dive IAE %s deg s, effort %s%s" % (
                 r["condition"], r["omega_d"], 1e3 * r["delay_margin_s"], 1e3 * r["effective_delay_s"],
                 r["phase_margin_left_deg"], f(r["overshoot_pct"], "%.1f"), f(r["settling_s"], "%.2f"),
                 f(r["dive_iae_sum_deg_s"], "%.0f"), f(r["dive_effort"], "%.0f"),
                 "" if r["safe"] else "  NOT SAFE") for r in summary["rows"]]
    lines += ["  %s: highest safe omega_d %s rad/s, lowest dive IAE at omega_d %s rad/s" % (
        k, f(v, "%g"), f(summary["best_dive_omega_d"][k], "%g")) for k, v in summary["safe_omega_d"].items()]
    return "\n".join(lines)


def markdown_table(summary):
    """Per condition and omega_d: margins, flown figures, safe or not; then the verdict per
    condition (REPORT.md and the generated block of the docs)."""
    def f(v, fmt):
        return "—" if v is None else fmt % v
    lines = ["| condition | omega_d [rad/s] | effective delay [ms] | delay margin [ms] | phase margin left [deg] "
             "| step overshoot [%] | settling [s] | dive IAE [deg s] | attitude effort | safe |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary["rows"]:
        lines.append("| %s | %g | %.0f | %.0f | %.1f | %s | %s | %s | %s | %s |" % (
            r["condition"], r["omega_d"], 1e3 * r["effective_delay_s"], 1e3 * r["delay_margin_s"],
            r["phase_margin_left_deg"], f(r["overshoot_pct"], "%.1f"), f(r["settling_s"], "%.2f"),
            f(r["dive_iae_sum_deg_s"], "%.0f"), f(r["dive_effort"], "%.0f"), "yes" if r["safe"] else "**no**"))
    lines.append("")
    for c in summary["conditions"]:
        name, w = c["name"], summary["safe_omega_d"][c["name"]]
        lines.append("- **%s** (%stelemetry %g Hz + %g ms, command %g ms, thruster lag %s, IMU noise %s%s): highest "
                     "safe omega_d %s rad/s; lowest dive IAE at omega_d %s rad/s." % (
                         name, "law at %g Hz, " % c["control_rate_hz"] if c.get("control_rate_hz") else "",
                         c["telemetry_rate_hz"], 1e3 * c["telemetry_delay_s"], 1e3 * c["command_delay_s"],
                         c["thruster_lag"], "on" if c["noise"] else "off",
                         ", delay compensation on" if c.get("delay_compensation") else "", f(w, "%g"),
                         f(summary["best_dive_omega_d"][name], "%g")))
    lines.append("- Safe: delay margin >= %g x the effective delay, the flown 90 deg yaw step settles within %g s "
                 "with at most %g %% overshoot, and so does every lower omega_d." % (
                     summary["min_delay_margin_ratio"], summary["max_settling_s"], summary["max_overshoot_pct"]))
    return lines


def report_section(summary):
    """REPORT.md lines."""
    return ["## How far omega_d can go", ""] + markdown_table(summary) + [""]
