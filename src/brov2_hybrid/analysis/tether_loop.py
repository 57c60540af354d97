"""The tether in the in-process closed loop (``brov2-analyze tether-loop``; docs/simulator.md "Tether").

Two cases of ``params/analysis.yaml`` section ``tether_loop``, each flown by the in-process
loop (:class:`~brov2_hybrid.loop.closed_loop.ClosedLoop`, which steps a tethered plant in
Python) with the simulator's tether (``params/simulator.yaml`` section ``tether``):

* ``pull`` -- hold level in a current from the side, on a short tether from a base up-current:
  the cable's pull at the attachment point is a steady moment. Flown without the tether, on it
  with the paper's PD, and on it with integral action (:data:`PULL_CASES`). The outcome test
  ``test_option_outcomes.py::test_the_tether_pulls_a_steady_yaw_error_that_integral_action_removes``
  asserts on :func:`fly_pull_case`, the function this table is made with.
* ``dive`` -- the bundled dive in the launch file's tethered current, without and on the
  simulator's default tether (the law of ``params/controller.yaml``): IAE per axis and the pull.

Angles rad inside, deg in the table; forces N, NED; times s.
"""
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.analysis.context import AXES, write_csv
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.params import Section, load_yaml

SECTION = "tether_loop"
#: The pull case's runs, in table order: (name, tether on, integral action on).
PULL_CASES = (("no tether (the current alone)", False, False),
              ("tether, PD", True, False),
              ("tether, PD + integral action", True, True))
#: The dive case's runs, in table order: (name, tether on).
DIVE_CASES = (("no tether (the current alone)", False), ("tether", True))


@dataclass(frozen=True)
class TetherLoopSettings:
    """``params/analysis.yaml`` section ``tether_loop`` (NED [m, m/s], s, rad/s)."""

    pull_omega_d_rad_s: float
    pull_duration_s: float
    pull_steady_after_s: float
    pull_current_ned_m_s: tuple
    pull_length_m: float
    pull_base_ned_m: tuple
    desired_rate_hz: float
    dive_csv: str
    dive_current_ned_m_s: tuple


def load_tether_loop_settings(path=None):
    """Read section ``tether_loop`` of ``params/analysis.yaml`` (or ``path``)."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, SECTION)
    return TetherLoopSettings(
        pull_omega_d_rad_s=s.positive("pull_omega_d_rad_s"), pull_duration_s=s.positive("pull_duration_s"),
        pull_steady_after_s=s.positive("pull_steady_after_s"),
        pull_current_ned_m_s=tuple(float(a) for a in s.vector("pull_current_ned_m_s", 3)),
        pull_length_m=s.positive("pull_length_m"),
        pull_base_ned_m=tuple(float(a) for a in s.vector("pull_base_ned_m", 3)),
        desired_rate_hz=s.positive("desired_rate_hz"), dive_csv=s.string("dive_csv"),
        dive_current_ned_m_s=tuple(float(a) for a in s.vector("dive_current_ned_m_s", 3)))


def _sim_options(current_ned_m_s, enabled, **tether_changes):
    from brov2_hybrid.sim.config import load_sim_options
    base = load_sim_options()
    return replace(base, current_ned_m_s=np.array(current_ned_m_s, dtype=float),
                   tether=base.tether.with_changes(enabled=bool(enabled), **tether_changes))


def _pull_stats(plant):
    """The tether's pull on the vehicle over the run: last, mean and largest |F| per NED axis [N]
    (seed 003's Table 9 counts the mean of |F|), the cable steps solved and their Newton iterations each;
    None for each without a tether."""
    tether = plant.tether
    if tether is None or not tether.steps:
        return {"tether_force_final_ned_n": None, "tether_force_mean_abs_ned_n": None,
                "tether_force_max_abs_ned_n": None, "cable_steps": None, "newton_iterations_per_cable_step": None}
    return {"tether_force_final_ned_n": [float(a) for a in tether.force_ned()],
            "tether_force_mean_abs_ned_n": [float(a) for a in tether.pull_sum_n / tether.steps],
            "tether_force_max_abs_ned_n": [float(a) for a in tether.pull_max_n],
            "cable_steps": tether.solves, "newton_iterations_per_cable_step": tether.iterations / max(tether.solves, 1)}


def fly_pull_case(loop_settings, settings, tether, integral):
    """Hold level for ``settings.pull_duration_s`` in the pull case's current, with or without
    the tether (``tether``) and integral action (``integral``).

    Returns dict: ``mean_yaw_deg`` and ``mean_roll_deg`` after ``pull_steady_after_s``, the pull
    (:func:`_pull_stats`), ``sim_s`` and ``wall_s``."""
    from brov2_hybrid.dive.shapes import step_dive
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    dive = step_dive(0.0, 1.0, settings.pull_duration_s, settings.desired_rate_hz)
    options = _sim_options(settings.pull_current_ned_m_s, tether, length_m=settings.pull_length_m,
                           base_ned_m=np.array(settings.pull_base_ned_m, dtype=float))
    loop = ClosedLoop(loop_settings, sim_options=options)
    result = loop.run(dive, omega_d_rad_s=settings.pull_omega_d_rad_s,
                      controller_options={"integral_enabled": bool(integral)})
    late = result.log["time_s"] > settings.pull_steady_after_s
    out = {"mean_yaw_deg": math.degrees(float(np.mean(result.log["yaw_rad"][late]))),
           "mean_roll_deg": math.degrees(float(np.mean(result.log["roll_rad"][late]))),
           "sim_s": result.duration_s, "wall_s": result.wall_s}
    out.update(_pull_stats(loop.plant))
    return out


def fly_dive_case(loop_settings, settings, tether):
    """The bundled dive (``settings.dive_csv``) in the dive case's current, on the simulator's default
    tether or without it; the law of ``params/controller.yaml``.

    Returns dict: ``omega_d``, IAE per axis [deg s], the pull (:func:`_pull_stats`), ``sim_s``, ``wall_s``."""
    from brov2_hybrid.analysis.log_summary import log_metrics
    from brov2_hybrid.dive.dive_csv import load_dive_csv
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    path = settings.dive_csv if os.path.isabs(settings.dive_csv) else os.path.join(paths.package_root(),
                                                                                   settings.dive_csv)
    loop = ClosedLoop(loop_settings, sim_options=_sim_options(settings.dive_current_ned_m_s, tether))
    result = loop.run(load_dive_csv(path))
    m, _ = log_metrics(result.log, loop.rc_map)
    out = {"omega_d": float(result.omega_d_rad_s), "sim_s": result.duration_s, "wall_s": result.wall_s}
    out.update({"iae_%s_deg_s" % a: m["iae_%s_deg_s" % a] for a in AXES})
    out.update(_pull_stats(loop.plant))
    if tether:
        out["tether_length_m"] = float(loop.plant.tether.settings.length_m)
        out["tether_segments"] = int(loop.plant.tether.settings.segments)
    return out


@dataclass(frozen=True)
class TetherLoopJob:
    """One run: ``case`` ('pull' or 'dive') number ``index`` of :data:`PULL_CASES` / :data:`DIVE_CASES`."""

    loop: object
    settings: TetherLoopSettings
    case: str
    index: int


def run_tether_loop_job(job):
    """Fly one :class:`TetherLoopJob`; its row (the case's name and figures)."""
    if job.case == "pull":
        name, tether, integral = PULL_CASES[job.index]
        row = fly_pull_case(job.loop, job.settings, tether, integral)
    else:
        name, tether = DIVE_CASES[job.index]
        row = fly_dive_case(job.loop, job.settings, tether)
    row.update(case=job.case, name=name, tether=tether)
    return row


def tether_loop_experiment(ctx, omegas=None, settings=None):
    """Both cases; ``tether_loop.csv``; the summary for REPORT.md and the generated blocks
    ``tether_pull`` and ``tether_dive`` of docs/simulator.md. Each case states its own omega_d:
    ``omegas`` (``--omega-d``) is refused."""
    if omegas:
        raise Brov2Error("tether-loop: each case has its own omega_d (params/analysis.yaml section %s); "
                         "--omega-d does not apply" % SECTION)
    s = settings or load_tether_loop_settings()
    jobs = [TetherLoopJob(ctx.loop, s, "pull", k) for k in range(len(PULL_CASES))]
    jobs += [TetherLoopJob(ctx.loop, s, "dive", k) for k in range(len(DIVE_CASES))]
    rows = ctx.runner.map(run_tether_loop_job, jobs, "tether-loop")
    header = ["case", "name", "mean_yaw_deg", "mean_roll_deg"] + ["iae_%s_deg_s" % a for a in AXES] + [
        "tether_force_mean_abs_%s_n" % d for d in "ned"] + ["tether_force_max_abs_%s_n" % d for d in "ned"]

    def cells(r):
        mean, peak = r["tether_force_mean_abs_ned_n"] or [math.nan] * 3, r["tether_force_max_abs_ned_n"] or [math.nan] * 3
        return [r["case"], r["name"], r.get("mean_yaw_deg", math.nan), r.get("mean_roll_deg", math.nan)] + [
            r.get("iae_%s_deg_s" % a, math.nan) for a in AXES] + list(mean) + list(peak)
    write_csv(ctx.path("tether_loop.csv"), header, [cells(r) for r in rows])
    return {"pull": [r for r in rows if r["case"] == "pull"], "dive": [r for r in rows if r["case"] == "dive"],
            "settings": {"pull_omega_d_rad_s": s.pull_omega_d_rad_s, "pull_duration_s": s.pull_duration_s,
                         "pull_steady_after_s": s.pull_steady_after_s,
                         "pull_current_ned_m_s": list(s.pull_current_ned_m_s), "pull_length_m": s.pull_length_m,
                         "pull_base_ned_m": list(s.pull_base_ned_m), "dive_csv": s.dive_csv,
                         "dive_current_ned_m_s": list(s.dive_current_ned_m_s)},
            "latency": ctx.loop.latency_label(), "files": ["tether_loop.csv"],
            "sim_s": sum(r["sim_s"] for r in rows), "wall_s": sum(r["wall_s"] for r in rows)}


def _deg(x):
    """``x`` to two decimals, without a minus on a zero."""
    return "%.2f" % (round(x, 2) + 0.0)


def _vector(v, fmt="%g"):
    return "[%s]" % ", ".join(fmt % a for a in v)


def _norm(v):
    return math.sqrt(sum(a * a for a in v))


def pull_table(summary):
    """The pull case: mean yaw and roll after the settling time, without the tether, on it with PD and
    with PD + integral action (the generated block ``tether_pull`` of docs/simulator.md)."""
    s = summary["settings"]
    on = [r for r in summary["pull"] if r["tether"]]
    pull = _norm(on[0]["tether_force_final_ned_n"]) if on else math.nan
    after = "after %g s" % s["pull_steady_after_s"]
    lines = ["The Heavy holds level for %g s at omega_d %g in a current of %s m/s, on a %g m tether from a base at "
             "%s m NED (the vehicle starts below the origin). At the end the cable pulls %.1f N at the attachment "
             "point (PD):" % (s["pull_duration_s"], s["pull_omega_d_rad_s"], _vector(s["pull_current_ned_m_s"]),
                             s["pull_length_m"], _vector(s["pull_base_ned_m"]), pull),
             "", "| | mean yaw %s | mean roll %s |" % (after, after), "| --- | --- | --- |"]
    for r in summary["pull"]:
        lines.append("| %s | %s° | %s° |" % (r["name"], _deg(r["mean_yaw_deg"]), _deg(r["mean_roll_deg"])))
    return lines + ["", "Loop: %s." % summary["latency"]]


def dive_table(summary):
    """The bundled dive without and on the tether: IAE per axis and the pull (the generated block
    ``tether_dive`` of docs/simulator.md)."""
    s = summary["settings"]
    dive = summary["dive"]
    on = [r for r in dive if r["tether"]]
    what = ("on the simulator's default tether (%g m, %d segments, from the surface above the start)"
            % (on[0]["tether_length_m"], on[0]["tether_segments"])) if on else "without a tether"
    lines = ["`%s` at omega_d %g in a current of %s m/s, %s:" % (
                 s["dive_csv"], dive[0]["omega_d"], _vector(s["dive_current_ned_m_s"]), what),
             "", "| | IAE roll / pitch / yaw [deg s] | mean \\|F\\| north / east / down [N] | "
             "largest \\|F\\| north / east / down [N] |", "| --- | --- | --- | --- |"]
    for r in dive:
        iae = " / ".join("%.0f" % r["iae_%s_deg_s" % a] for a in AXES)
        if r["tether"]:
            mean = " / ".join("%.1f" % a for a in r["tether_force_mean_abs_ned_n"])
            peak = " / ".join("%.0f" % a for a in r["tether_force_max_abs_ned_n"])
        else:
            mean = peak = "—"
        lines.append("| %s | %s | %s | %s |" % (r["name"], iae, mean, peak))
    return lines + ["", "Loop: %s." % summary["latency"]]


def markdown_table(summary):
    """Both tables (REPORT.md)."""
    return pull_table(summary) + [""] + dive_table(summary)


def report_section(summary):
    """REPORT.md lines."""
    return ["## The tether in the closed loop", "",
            "What the tether's steady pull does to PD and PD+I, and what the tether does to the bundled dive "
            "(docs/simulator.md \"Tether\").", ""] + markdown_table(summary) + [""]


def add_parser(sub, parents):
    """The ``tether-loop`` subcommand of ``brov2-analyze`` (run by the CLI's experiment table)."""
    p = sub.add_parser("tether-loop", parents=parents, help="the tether in the closed loop: its steady pull against "
                       "PD and PD+I, and the bundled dive on it (docs/simulator.md \"Tether\")")
    p.add_argument("--docs", action="store_true", help="also write docs/tables/tether_pull.json, tether_dive.json and "
                   "their generated blocks (docs/simulator.md)")
    return p


def console_lines(summary):
    """One line per run."""
    lines = []
    for r in summary["pull"]:
        lines.append("  pull  %-32s mean yaw %7.2f deg, roll %7.2f deg" % (r["name"], r["mean_yaw_deg"],
                                                                          r["mean_roll_deg"]))
    for r in summary["dive"]:
        lines.append("  dive  %-32s IAE r/p/y %7.1f /%7.1f /%7.1f deg s%s" % (
            r["name"], r["iae_roll_deg_s"], r["iae_pitch_deg_s"], r["iae_yaw_deg_s"],
            "" if not r["tether"] else ", largest |F| N/E/D %.0f / %.0f / %.0f N" % tuple(r["tether_force_max_abs_ned_n"])))
    return "\n".join(lines)
