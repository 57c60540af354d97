"""``brov2-analyze tether --case free-float``: seed 003's free-floating tethered vehicle (Sec. 6, Figs. 8-10).

AAU's BlueROV2 Heavy (its Table A1, ``params/vehicles/aau_bluerov2_heavy.yaml``) is released
at rest below the base on a tether (``params/simulator.yaml`` section ``tether``, cut to the
case's length) in a constant current, motors at neutral, and drifts until the cable holds it.
The case and the checks against what the seed reports are ``params/analysis.yaml`` section
``tether_free_float``. The run is repeated with half the step and with twice the nodes
(convergence). Writes ``tether_free_float.json`` and ``tether_free_float.png``.

NED [m] from the base, seconds of simulated time, newtons.
"""
import json
import os
import time
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid.analysis.report_format import jsonable
from brov2_hybrid.sim.config import load_sim_options
from brov2_hybrid.sim.plant import Plant
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

CASES = ("free-float",)
SECTION = "tether_free_float"


@dataclass(frozen=True)
class FreeFloatCase:
    """The case and its checks (``params/analysis.yaml`` section ``tether_free_float``)."""

    vehicle: str
    length_m: float
    current_ned_m_s: np.ndarray
    release_depth_m: float
    duration_s: float
    sample_period_s: float
    snapshot_period_s: float
    steady_window_s: float
    seed_snapshot_ned_m: np.ndarray
    snapshot_tolerance_m: float
    surface_depth_tolerance_m: float
    east_over_north_min: float
    steady_force_change_max: float
    convergence_tolerance_m: float


def load_case(path=None):
    """:class:`FreeFloatCase` from ``path`` (default ``params/analysis.yaml``)."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, SECTION)
    return FreeFloatCase(
        vehicle=s.string("vehicle"), length_m=s.positive("length_m"), current_ned_m_s=s.vector("current_ned_m_s", 3),
        release_depth_m=s.positive("release_depth_m"), duration_s=s.positive("duration_s"),
        sample_period_s=s.positive("sample_period_s"), snapshot_period_s=s.positive("snapshot_period_s"),
        steady_window_s=s.positive("steady_window_s"), seed_snapshot_ned_m=s.vector("seed_snapshot_ned_m", 3),
        snapshot_tolerance_m=s.positive("snapshot_tolerance_m"),
        surface_depth_tolerance_m=s.positive("surface_depth_tolerance_m"),
        east_over_north_min=s.positive("east_over_north_min"),
        steady_force_change_max=s.positive("steady_force_change_max"),
        convergence_tolerance_m=s.positive("convergence_tolerance_m"))


def fly(case, segments=None, dt_s=None, duration_s=None, step_s=None):
    """Fly the case; returns dict of arrays: ``path`` rows [t, n, e, d] every sample period,
    ``force`` rows [t, Fn, Fe, Fd] (the tether's pull on the vehicle, NED [N]), ``snapshots``
    [(t, nodes (n + 1, 3))], and the run's ``segments``, ``dt_s`` (the plant's step), ``step_s`` (the
    cable's), ``solves`` (the cable steps solved) and ``wall_s``. Without ``segments``, ``dt_s`` or ``step_s``, the simulator's."""
    options = load_sim_options()
    tether = options.tether
    tether = tether.with_changes(enabled=True, length_m=case.length_m,
                                 segments=int(segments) if segments else tether.segments,
                                 step_s=float(step_s) if step_s else tether.step_s)
    options = replace(options, tether=tether, current_ned_m_s=np.array(case.current_ned_m_s, dtype=float),
                      dt_s=float(dt_s) if dt_s else options.dt_s).validated()
    plant = Plant(load_vehicle(case.vehicle), options)
    base = tether.base_ned_m
    plant.reset(eta=np.concatenate([base + np.array([0.0, 0.0, case.release_depth_m]), np.zeros(3)]))
    duration = case.duration_s if duration_s is None else float(duration_s)
    n_samples = int(round(duration / case.sample_period_s))
    every = max(1, int(round(case.snapshot_period_s / case.sample_period_s)))
    path = np.zeros((n_samples + 1, 4))
    force = np.zeros((n_samples + 1, 4))
    snapshots = []
    start = time.perf_counter()
    for k in range(n_samples + 1):
        if k:
            plant.advance(case.sample_period_s)
        t = plant.t_s
        path[k] = [t] + list(plant.eta[:3] - tether.base_at(t)[0])
        force[k] = [t] + list(plant.tether.force_ned())
        if k % every == 0:
            snapshots.append((t, plant.tether.p - tether.base_at(t)[0]))
    return {"path": path, "force": force, "snapshots": snapshots, "segments": tether.segments,
            "dt_s": plant.dt_s, "step_s": tether.step_s, "solves": plant.tether.solves,
            "wall_s": time.perf_counter() - start}


def largest_gap_m(path_a, path_b):
    """Largest distance [m] between two paths (rows [t, n, e, d]) at their common sample times."""
    rows = min(len(path_a), len(path_b))
    return float(np.max(np.linalg.norm(path_a[:rows, 1:4] - path_b[:rows, 1:4], axis=1)))


def summarize(case, run, finer_step=None, more_nodes=None):
    """The result: steady position and force, the checks against the seed, convergence."""
    path, force = run["path"], run["force"]
    steady = path[:, 0] >= path[-1, 0] - case.steady_window_s
    final = path[-1, 1:4]
    steady_force = force[steady, 1:4].mean(axis=0)
    spread, magnitude = np.max(np.linalg.norm(force[steady, 1:4] - steady_force, axis=1)), np.linalg.norm(steady_force)
    change = spread / magnitude if magnitude > 0.0 else 0.0
    nearest = np.linalg.norm(path[:, 1:4] - case.seed_snapshot_ned_m, axis=1)
    k = int(np.argmin(nearest))
    checks = {
        "passes_fig8_position": {"value_m": float(nearest[k]), "at_s": float(path[k, 0]),
                                 "tolerance_m": case.snapshot_tolerance_m,
                                 "ok": bool(nearest[k] <= case.snapshot_tolerance_m)},
        "at_the_surface": {"value_m": float(final[2]), "tolerance_m": case.surface_depth_tolerance_m,
                           "ok": bool(0.0 <= final[2] <= case.surface_depth_tolerance_m)},
        "further_east_than_north": {"east_over_north": float(final[1] / final[0]), "min": case.east_over_north_min,
                                    "ok": bool(final[0] > 0.0 and final[1] / final[0] >= case.east_over_north_min)},
        "force_constant": {"change": float(change), "max": case.steady_force_change_max,
                           "ok": bool(change <= case.steady_force_change_max)},
    }
    convergence = {}
    for name, other in (("half_step", finer_step), ("double_nodes", more_nodes)):
        if other is not None:
            gap = largest_gap_m(path, other["path"])
            convergence[name] = {"segments": other["segments"], "dt_s": other["dt_s"], "step_s": other["step_s"],
                                 "wall_s": other["wall_s"],
                                 "largest_path_gap_m": gap,
                                 "final_position_gap_m": float(np.linalg.norm(final - other["path"][-1, 1:4])),
                                 "tolerance_m": case.convergence_tolerance_m,
                                 "ok": bool(gap <= case.convergence_tolerance_m)}
    verdict = all(c["ok"] for c in checks.values()) and all(c["ok"] for c in convergence.values())
    return {
        "case": "free-float", "vehicle": case.vehicle, "length_m": case.length_m,
        "current_ned_m_s": case.current_ned_m_s, "release_depth_m": case.release_depth_m,
        "segments": run["segments"], "dt_s": run["dt_s"], "step_s": run["step_s"], "duration_s": float(path[-1, 0]), "wall_s": run["wall_s"],
        "steady_window_s": case.steady_window_s,
        "final_position_ned_m": final, "distance_from_base_m": float(np.linalg.norm(final)),
        "steady_force_ned_n": steady_force, "steady_force_n": float(np.linalg.norm(steady_force)),
        "seed_fig8_position_ned_m": case.seed_snapshot_ned_m,
        "checks": checks, "convergence": convergence, "verdict": "agrees" if verdict else "DIFFERS",
        "path_ned_m": path, "force_ned_n": force,
    }


def run_free_float(out_dir, case=None, convergence=True):
    """Fly the case (and its convergence runs), write ``tether_free_float.json`` and the figure
    into ``out_dir``; returns the result dict (:func:`summarize`) with its ``files``."""
    case = case or load_case()
    run = fly(case)
    finer = more = None
    if convergence:
        finer = fly(case, dt_s=0.5 * run["dt_s"], step_s=0.5 * run["step_s"])
        more = fly(case, segments=2 * run["segments"])
    result = summarize(case, run, finer, more)
    os.makedirs(out_dir, exist_ok=True)
    json_path = os.path.join(out_dir, "tether_free_float.json")
    with open(json_path, "w") as handle:
        json.dump(jsonable(result), handle, indent=1)
    from brov2_hybrid.analysis.tether_plots import plot_free_float
    figure = plot_free_float(run, case, os.path.join(out_dir, "tether_free_float.png"))
    result["files"] = [json_path, figure]
    return result


def free_float_summary(out_dir, convergence=True):
    """:func:`run_free_float` with the default case, without its path and force arrays: the summary
    ``make reproduce`` (``brov2-analyze reproduce``) keeps and writes the generated block
    ``tether_free_float`` from, as ``brov2-analyze tether --docs`` does."""
    result = run_free_float(out_dir, load_case(), convergence=convergence)
    summary = {k: v for k, v in result.items() if k not in ("path_ned_m", "force_ned_n")}
    summary["files"] = [os.path.basename(f) for f in result["files"]]
    return summary


def console_lines(result):
    """What ``brov2-analyze tether`` prints."""
    f, c = result["final_position_ned_m"], result["checks"]
    lines = ["tether free-float (%s, %g m, %d segments, dt %.4f s, %.0f s in %.1f s wall): steady position "
             "N %.2f E %.2f D %.2f m from the base, steady pull %.1f N [%.1f, %.1f, %.1f] -> %s"
             % (result["vehicle"], result["length_m"], result["segments"], result["dt_s"], result["duration_s"],
                result["wall_s"], f[0], f[1], f[2], result["steady_force_n"], *result["steady_force_ned_n"],
                result["verdict"])]
    lines.append("  path passes %.2f m from Fig. 8's [%s] at %.1f s (tolerance %.1f m)"
                 % (c["passes_fig8_position"]["value_m"], ", ".join("%.2f" % a for a in result["seed_fig8_position_ned_m"]),
                    c["passes_fig8_position"]["at_s"], c["passes_fig8_position"]["tolerance_m"]))
    for name, conv in result["convergence"].items():
        lines.append("  %s (%d segments, dt %.5f s, cable step %.5f s): paths differ by at most %.3f m, final positions "
                     "by %.4f m" % (name, conv["segments"], conv["dt_s"], conv["step_s"], conv["largest_path_gap_m"],
                                    conv["final_position_gap_m"]))
    return lines


def markdown_table(summary):
    """The free-float case beside what seed 003 reports, with the verdict (the generated block
    ``tether_free_float`` of docs/simulator.md, written by ``brov2-analyze tether --docs``)."""
    c, f, force = summary["checks"], summary["final_position_ned_m"], summary["steady_force_ned_n"]
    ok = {True: "agrees", False: "**differs**"}
    fig8 = c["passes_fig8_position"]
    lines = ["AAU's vehicle (`%s`) released %g m below the base on a %g m tether (%d segments, plant step %g s, "
             "cable step %g s) in a current of [%s] m/s, motors at neutral, %g s:" % (
                 summary["vehicle"], summary["release_depth_m"], summary["length_m"], summary["segments"],
                 summary["dt_s"], summary["step_s"], ", ".join("%g" % a for a in summary["current_ned_m_s"]), summary["duration_s"]),
             "",
             "| | seed 003 (Sec. 6, Figs. 8-10) | this simulator | tolerance | verdict |",
             "| --- | --- | --- | --- | --- |",
             "| vehicle on its way up | Fig. 8 draws it at N %.2f, E %.2f, D %.2f m | the path passes %.2f m from "
             "there, at %.0f s | %g m | %s |" % (tuple(summary["seed_fig8_position_ned_m"]) + (
                 fig8["value_m"], fig8["at_s"], fig8["tolerance_m"], ok[fig8["ok"]])),
             "| steady position | \"approximately at the surface\" after 100 s | N %.2f, E %.2f, D %.2f m (%.2f m "
             "from the base) | depth <= %g m | %s |" % (f[0], f[1], f[2], summary["distance_from_base_m"],
                                                        c["at_the_surface"]["tolerance_m"],
                                                        ok[c["at_the_surface"]["ok"]]),
             "| direction of drift | \"further East compared to North\" | east / north = %.3f | >= %g | %s |" % (
                 c["further_east_than_north"]["east_over_north"], c["further_east_than_north"]["min"],
                 ok[c["further_east_than_north"]["ok"]]),
             "| tether force | \"after 150 s, the force in x, y, z is constant\" (Fig. 9, no values given) | "
             "[%.1f, %.1f, %.1f] N (%.1f N) over the last %g s; it varies by %.1f %% | %.0f %% | %s |" % (
                 force[0], force[1], force[2], summary["steady_force_n"], summary["steady_window_s"], 100 * c["force_constant"]["change"],
                 100 * c["force_constant"]["max"], ok[c["force_constant"]["ok"]])]
    for name, label in (("half_step", "half the step"), ("double_nodes", "twice the nodes")):
        conv = summary["convergence"].get(name)
        if conv:
            lines.append("| convergence: %s | (the seed ran ode15s) | %d segments, plant step %g s, cable step %g s: "
                         "paths %.3f m apart at most, final positions %.4f m | %g m | %s |" % (
                             label, conv["segments"], conv["dt_s"], conv["step_s"], conv["largest_path_gap_m"],
                             conv["final_position_gap_m"], conv["tolerance_m"], ok[conv["ok"]]))
    lines += ["", "Verdict: **%s**." % summary["verdict"]]
    return lines


def add_parser(sub, common):
    """The ``tether`` subcommand of ``brov2-analyze``."""
    p = sub.add_parser("tether", parents=[common], help="seed 003's tether cases: --case free-float (Sec. 6, "
                       "Figs. 8-10) with its convergence runs")
    p.add_argument("--case", choices=CASES, default=CASES[0], help="the case (default %(default)s)")
    p.add_argument("--no-convergence", action="store_true", help="skip the half-step and double-node runs")
    p.add_argument("--docs", action="store_true", help="also write docs/tables/tether_free_float.json and its "
                   "generated block (docs/simulator.md)")
    return p


def run_command(args):
    """Run ``brov2-analyze tether``; returns the exit code (0)."""
    result = run_free_float(args.out, load_case(args.params), convergence=not args.no_convergence)
    for line in console_lines(result):
        print(line)
    files = result["files"]
    if args.docs:
        if args.no_convergence or args.params:
            raise Brov2Error("--docs: the table comes from the default settings with the convergence runs")
        from brov2_hybrid.analysis import doc_tables
        table = {k: v for k, v in result.items() if k not in ("path_ned_m", "force_ned_n")}
        files = files + doc_tables.write_docs({"tether_free_float": table})
    print("wrote %s" % ", ".join(files))
    return 0

