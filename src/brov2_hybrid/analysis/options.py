"""Which controller option helps on which kind of input (``brov2-analyze options``).

The law's optional terms (integral action, drag feed-forward, both, the reference feed-forward) against the paper's PD,
each flown in the in-process loop on four kinds of input (section ``options`` of
``params/analysis.yaml``):

* ``bundled`` -- the bundled AR-pilot dive: slow head motion with tremor, small linear commands;
* ``smooth`` -- smooth fast turns: a sine per axis (yaw +-90 deg, about 1 rad/s at its peak);
* ``disturbed`` -- full surge, sway and heave plateaus at +-30 deg roll and pitch (the open-loop
  DOFs push the attitude: drag moments, thruster coupling);
* ``step`` -- a 90 deg yaw step;
* ``tethered`` -- the bundled dive on the simulator's tether (``params/simulator.yaml`` section
  ``tether``) in a current (``tethered_current_ned_m_s``): the cable's steady pull and its jerks
  (docs/simulator.md "Tether"). The loop steps a tethered plant in Python: each run takes seconds.

Per run: IAE per axis [deg s] and their sum, and the attitude effort (Eq. 26 energy of the
roll, pitch and yaw RC channels). :func:`option_rows` compares each option with the PD on
the same input and omega_d (change in % of the PD's figure): the table docs/experiments.md's
"Which option helps on which input" section shows (written by ``make reproduce``). Angles rad inside.
"""
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.analysis.context import AXES, write_csv
from brov2_hybrid.dive.dive_csv import Dive, load_dive_csv
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section, load_yaml

SECTION = "options"
#: The law variants, in table order: name -> HybridController.configure keywords.
OPTIONS = (("PD", (("integral_enabled", False), ("drag_feedforward_enabled", False))),
           ("PD+I", (("integral_enabled", True), ("drag_feedforward_enabled", False))),
           ("drag FF", (("integral_enabled", False), ("drag_feedforward_enabled", True))),
           ("PD+I+drag FF", (("integral_enabled", True), ("drag_feedforward_enabled", True))),
           ("ref FF", (("integral_enabled", False), ("drag_feedforward_enabled", False),
                       ("reference_feedforward_enabled", True))))
BASELINE = "PD"
#: The kinds of input, in table order, and what each stands for.
INPUTS = {"bundled": "bundled AR-pilot dive (slow, tremor)",
          "smooth": "smooth fast turns (sines, yaw +-90 deg)",
          "disturbed": "full translation at +-30 deg roll/pitch",
          "step": "90 deg yaw step",
          "tethered": "bundled dive on the tether, in a current"}


@dataclass(frozen=True)
class OptionSettings:
    """``params/analysis.yaml`` section ``options`` (angles rad, times s)."""

    omega_d_rad_s: tuple
    inputs: tuple
    dive_csv: str
    smooth_amplitude_rad: tuple      # roll, pitch, yaw
    smooth_period_s: tuple           # roll, pitch, yaw
    smooth_duration_s: float
    plateau_attitude_rad: float
    plateau_s: float
    step_rad: float
    step_time_s: float
    step_duration_s: float
    desired_rate_hz: float
    tethered_current_ned_m_s: tuple = (0.0, 0.0, 0.0)    # tethered: the current [m/s, NED]


def load_option_settings(path=None):
    """Read section ``options`` of ``params/analysis.yaml`` (or ``path``)."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, SECTION)
    inputs = s.raw("inputs")
    if not (isinstance(inputs, list) and inputs and all(i in INPUTS for i in inputs)):
        raise ParameterError("%s: expected a list from %s, got %r" % (s.key("inputs"), sorted(INPUTS), inputs))
    return OptionSettings(
        omega_d_rad_s=s.positive_list("omega_d_rad_s"),
        inputs=tuple(inputs), dive_csv=str(s.raw("dive_csv")),
        smooth_amplitude_rad=tuple(math.radians(a) for a in s.positive_vector("smooth_amplitude_deg", 3)),
        smooth_period_s=tuple(float(p) for p in s.positive_vector("smooth_period_s", 3)),
        smooth_duration_s=s.positive("smooth_duration_s"),
        plateau_attitude_rad=math.radians(s.positive("plateau_attitude_deg")), plateau_s=s.positive("plateau_s"),
        step_rad=math.radians(s.positive("step_deg")), step_time_s=s.positive("step_time_s"),
        step_duration_s=s.positive("step_duration_s"), desired_rate_hz=s.positive("desired_rate_hz"),
        tethered_current_ned_m_s=tuple(float(a) for a in s.vector("tethered_current_ned_m_s", 3)))


def smooth_dive(s):
    """A sine per axis (amplitudes and periods of :class:`OptionSettings` ``s``), no linear command."""
    t = np.arange(0.0, s.smooth_duration_s + 0.5 / s.desired_rate_hz, 1.0 / s.desired_rate_hz)
    eta = np.column_stack([a * np.sin(2.0 * math.pi * t / p) for a, p in zip(s.smooth_amplitude_rad,
                                                                            s.smooth_period_s)])
    return Dive(t_s=t, eta2d_rad=eta, u_linear=np.zeros((t.size, 3)), source="smooth sines")


def input_dive(name, s):
    """The Dive of input ``name`` (a key of :data:`INPUTS`) from :class:`OptionSettings` ``s``."""
    if name in ("bundled", "tethered"):
        path = s.dive_csv if os.path.isabs(s.dive_csv) else os.path.join(paths.package_root(), s.dive_csv)
        return load_dive_csv(path)
    if name == "smooth":
        return smooth_dive(s)
    if name == "disturbed":
        from brov2_hybrid.analysis.integral import plateau_dive
        return plateau_dive(s.plateau_attitude_rad, s.plateau_s, s.desired_rate_hz)[0]
    if name == "step":
        return step_dive(s.step_rad, s.step_time_s, s.step_duration_s, s.desired_rate_hz)
    raise ParameterError("options input: expected one of %s, got %r" % (sorted(INPUTS), name))


@dataclass(frozen=True)
class OptionJob:
    """One run: input ``input_name`` with the law variant ``option`` (a name of :data:`OPTIONS`)."""

    loop: object
    omega_d_rad_s: float
    input_name: str
    option: str
    settings: OptionSettings


def run_option_job(job):
    """Fly one :class:`OptionJob`: IAE per axis and summed [deg s], attitude effort (Eq. 26, roll +
    pitch + yaw channels), the run's simulated and wall times."""
    from brov2_hybrid.analysis.jobs import closed_loop_for
    from brov2_hybrid.analysis.log_summary import log_metrics
    loop = closed_loop_for(job.loop) if job.input_name != "tethered" else tethered_loop(job.loop, job.settings)
    res = loop.run(input_dive(job.input_name, job.settings), omega_d_rad_s=job.omega_d_rad_s,
                   controller_options=dict(dict(OPTIONS)[job.option]))
    m, _ = log_metrics(res.log, loop.rc_map)
    out = {"omega_d": job.omega_d_rad_s, "input": job.input_name, "option": job.option}
    out.update({"iae_%s_deg_s" % a: m["iae_%s_deg_s" % a] for a in AXES})
    out["iae_sum_deg_s"] = sum(m["iae_%s_deg_s" % a] for a in AXES)
    out["effort"] = sum(m["energy_%s" % a] for a in AXES)
    out.update(sim_s=res.duration_s, wall_s=res.wall_s)
    return out


def tethered_loop(loop_settings, s):
    """A :class:`~brov2_hybrid.loop.closed_loop.ClosedLoop` on ``loop_settings`` whose plant flies the
    simulator's tether (``params/simulator.yaml`` section ``tether``) in the current of :class:`OptionSettings`
    ``s`` (a new one per run: the tether's state and counts start afresh)."""
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    from brov2_hybrid.sim.config import load_sim_options
    base = load_sim_options()
    options = replace(base, current_ned_m_s=np.array(s.tethered_current_ned_m_s, dtype=float),
                      tether=base.tether.with_changes(enabled=True))
    return ClosedLoop(loop_settings, sim_options=options)


def option_jobs(loop, s, omegas=None):
    """Every (omega_d, input, option) run of :class:`OptionSettings` ``s`` on ``loop`` (LoopSettings)."""
    return [OptionJob(loop, w, i, o, s) for w in (omegas or s.omega_d_rad_s) for i in s.inputs for o, _ in OPTIONS]


def option_rows(results):
    """Each run with its change against the PD on the same input and omega_d: ``iae_change_pct``
    (summed IAE), ``yaw_iae_change_pct`` and ``effort_change_pct``, in % of the PD's figure."""
    base = {(r["omega_d"], r["input"]): r for r in results if r["option"] == BASELINE}
    rows = []
    for r in results:
        b = base[(r["omega_d"], r["input"])]
        row = dict(r)
        row["iae_change_pct"] = 100.0 * (r["iae_sum_deg_s"] / b["iae_sum_deg_s"] - 1.0)
        row["yaw_iae_change_pct"] = 100.0 * (r["iae_yaw_deg_s"] / b["iae_yaw_deg_s"] - 1.0)
        row["effort_change_pct"] = 100.0 * (r["effort"] / b["effort"] - 1.0)
        rows.append(row)
    return rows


CSV_COLUMNS = ("omega_d", "input", "option", "iae_roll_deg_s", "iae_pitch_deg_s", "iae_yaw_deg_s", "iae_sum_deg_s",
               "iae_change_pct", "yaw_iae_change_pct", "effort", "effort_change_pct")


def options_experiment(ctx, omegas=None, settings=None):
    """Every option on every input at each omega_d; ``options.csv``; the summary for REPORT.md."""
    s = settings or load_option_settings()
    results = ctx.runner.map(run_option_job, option_jobs(ctx.loop, s, omegas), "options")
    rows = option_rows(results)
    write_csv(ctx.path("options.csv"), list(CSV_COLUMNS), [[r[c] for c in CSV_COLUMNS] for r in rows])
    return {"rows": [{c: r[c] for c in CSV_COLUMNS} for r in rows], "latency": ctx.loop.latency_label(),
            "files": ["options.csv"], "sim_s": sum(r["sim_s"] for r in results),
            "wall_s": sum(r["wall_s"] for r in results)}


def console_lines(summary):
    """One line per option and input: summed IAE and its change against the PD."""
    return "\n".join(["  omega_d %g %-9s %-13s IAE r/p/y %7.1f /%7.1f /%7.1f deg s (sum %+6.1f %%, yaw %+6.1f %%), "
            "effort %+6.1f %%" % (r["omega_d"], r["input"], r["option"], r["iae_roll_deg_s"], r["iae_pitch_deg_s"],
                                  r["iae_yaw_deg_s"], r["iae_change_pct"], r["yaw_iae_change_pct"],
                                  r["effort_change_pct"]) for r in summary["rows"]])


def markdown_table(summary):
    """Per input and option: summed roll + pitch + yaw IAE at each omega_d and its change against
    the PD, and the attitude effort's change (REPORT.md and the generated block of the docs)."""
    rows = summary["rows"]
    omegas = sorted(set(r["omega_d"] for r in rows))
    by = {(r["input"], r["option"], r["omega_d"]): r for r in rows}
    head = " / ".join("%g" % w for w in omegas)
    lines = ["| input | option | summed IAE [deg s] at omega_d %s | change vs PD [%%] | attitude effort change [%%] |"
             % head, "|---|---|---|---|---|"]
    for name in [i for i in INPUTS if any(r["input"] == i for r in rows)]:
        for option, _ in OPTIONS:
            cells = [by[(name, option, w)] for w in omegas]
            lines.append("| %s | %s | %s | %s | %s |" % (
                INPUTS[name], option, " / ".join("%.0f" % c["iae_sum_deg_s"] for c in cells),
                "—" if option == BASELINE else " / ".join("%+.0f" % c["iae_change_pct"] for c in cells),
                "—" if option == BASELINE else " / ".join("%+.0f" % c["effort_change_pct"] for c in cells)))
    return lines + ["", "Loop: %s." % summary["latency"]]


def report_section(summary):
    """REPORT.md lines."""
    return ["## Which option helps on which input", "",
            "PD (the paper's law), PD+I (integral action), drag FF (drag feed-forward), both, and ref FF "
            "(the reference feed-forward: the model's inverse dynamics along the filtered eta2d), in the "
            "in-process loop; IAE summed over roll, pitch and yaw; attitude effort: Eq. 26 energy of the "
            "roll, pitch and yaw channels.", ""] + markdown_table(summary) + [""]
