"""Timing of the analysis tools for ``make bench`` (prints figures, asserts nothing).

* :func:`run` - real-time factor of the in-process closed loop (yaw step and the
  bundled dive, one process), for each firmware's output stage, against the reference
  loop (``ClosedLoop.run(dive, ticks=reference_ticks)``) measured in the same run.
  Goal: >= 500x real time per core on the bundled dive, both output stages.
* :func:`run_robustness` - wall time of ``brov2-analyze robustness`` at a few samples on
  this machine's cores, projected to 1000 samples (6000 closed-loop jobs). Goal:
  1000 samples in <= 10 minutes on 2 cores.
* :func:`run_reproduce` - wall time of the whole ``brov2-analyze reproduce`` on this
  machine's cores. Goal: < 10 minutes on 2 cores.
* :func:`run_tether` - the bundled dive in-process on the tether (simulator.yaml section
  tether) against without it, in the same current. Goal: at most 2x slower.

``python -m brov2_hybrid.bench.loop [--no-reproduce]``.
"""
import argparse
import math
import os
import tempfile
import time
from dataclasses import replace

from brov2_hybrid import paths
from brov2_hybrid.dive.dive_csv import load_dive_csv
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.bench.reference_loop import reference_ticks
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.analysis.settings import load_analysis_settings

RTF_GOAL = 500.0
TETHER_SLOWDOWN_GOAL = 2.0
REPRODUCE_GOAL_S = 600.0
ROBUSTNESS_GOAL_S = 600.0
#: Samples per omega_d and law of the timed robustness sweep (projected to 1000).
ROBUSTNESS_BENCH_SAMPLES = 40


def real_time_factor(loop, dive, duration_s=None, repeats=3, reference=False):
    """Best-of-``repeats`` simulated seconds per wall second of ``loop.run(dive)`` (``reference``: of the
    loop as first written, :func:`~brov2_hybrid.bench.reference_loop.reference_ticks`)."""
    best = math.inf
    sim = None
    for _ in range(repeats):
        start = time.perf_counter()
        res = loop.run(dive, duration_s, ticks=reference_ticks if reference else None)
        best = min(best, time.perf_counter() - start)
        sim = res.duration_s
    return sim / best, sim, best


def against_reference(loop, dive, repeats=2):
    """(fast, reference) real-time factors of ``loop`` on ``dive``, runs interleaved, best of each."""
    fast, ref = 0.0, 0.0
    for _ in range(repeats):
        fast = max(fast, real_time_factor(loop, dive, repeats=1)[0])
        ref = max(ref, real_time_factor(loop, dive, repeats=1, reference=True)[0])
    return fast, ref


def run(reproduce=True):
    """Print the real-time factors; with ``reproduce`` also time the whole reproduction."""
    settings = load_analysis_settings()
    loop = ClosedLoop(settings.loop)
    s = settings.step
    step = step_dive(s.step_rad, s.step_time_s, 20.0, settings.loop.desired_rate_hz)
    rtf, sim, wall = real_time_factor(loop, step)
    print("in-process closed loop: yaw step, %.0f s simulated in %.3f s: %.0fx real time (goal >= %.0fx; "
          "control %g Hz, physics %g Hz, %s)" % (sim, wall, rtf, RTF_GOAL, settings.loop.control_rate_hz,
                                                 1.0 / loop.dt_s, settings.loop.latency_label()))
    dive = load_dive_csv(os.path.join(paths.package_root(), settings.dive.csv_file))
    print("in-process closed loop, bundled 6-DOF dive (%.0f s), per core, goal >= %.0fx real time; baseline: the "
          "loop as first written (bench.reference_loop: its tick loop, the plant's Python stepper "
          "and the stock search as first written; the control law, RC map and mixers are the one shared "
          "implementation, so their own speed-ups count on both sides), same run, interleaved:" % (dive.duration_s, RTF_GOAL))
    for mixer in ("quantitative", "stock"):
        fast, ref = against_reference(ClosedLoop(replace(settings.loop, mixer=mixer)), dive)
        print("  %-12s firmware: %4.0fx real time (baseline %4.0fx): %.2fx faster, goal %s"
              % (mixer, fast, ref, fast / ref, "met" if fast >= RTF_GOAL else "NOT met"))
    run_tether(settings, dive)
    run_robustness()
    if reproduce:
        with tempfile.TemporaryDirectory(prefix="brov2_reproduce_") as out_dir:
            run_reproduce(out_dir)


def run_tether(settings, dive):
    """Print the bundled dive's in-process wall time with the tether and without it, both in the
    current of the tether's free-floating case (``params/analysis.yaml`` tether_free_float)."""
    from brov2_hybrid.analysis.tether_experiment import load_case
    from brov2_hybrid.sim.config import load_sim_options
    options = replace(load_sim_options(), current_ned_m_s=load_case().current_ned_m_s)
    walls = {}
    for enabled in (False, True):
        loop = ClosedLoop(settings.loop, sim_options=replace(options, tether=options.tether.with_changes(enabled=enabled)))
        walls[enabled] = real_time_factor(loop, dive, repeats=1 if enabled else 3)[2]
    ratio = walls[True] / walls[False]
    tether = loop.plant.tether
    print("in-process closed loop, bundled dive (%.0f s) on a %g m tether (%d segments, cable step %g s) in a %.2f m/s "
          "current: %.2f s wall, %.2f s without it: %.1fx slower (goal <= %.0fx: %s; compiled both; %d cable steps "
          "solved, %.1f Newton iterations each, are most of it)"
          % (dive.duration_s, options.tether.length_m, options.tether.segments, options.tether.step_s,
             math.hypot(*options.current_ned_m_s), walls[True], walls[False], ratio, TETHER_SLOWDOWN_GOAL,
             "met" if ratio <= TETHER_SLOWDOWN_GOAL else "NOT met", tether.solves,
             tether.iterations / max(tether.solves, 1)))


def run_robustness(samples=ROBUSTNESS_BENCH_SAMPLES):
    """Time ``brov2-analyze robustness --samples N`` on all cores; print it and its projection to
    1000 samples (the pool's start-up counted in full, so the projection errs long); return the wall time [s]."""
    from brov2_hybrid.analysis import cli
    with tempfile.TemporaryDirectory(prefix="brov2_robustness_") as out_dir:
        start = time.perf_counter()
        code = cli.main(["robustness", "--samples", str(samples), "--out", out_dir, "--quiet"])
        wall = time.perf_counter() - start
    jobs = 6 * samples                  # 3 omega_d x (PD, PD+I)
    projected = wall * 1000.0 / samples
    print("brov2-analyze robustness --samples %d: %d closed-loop jobs (yaw step + plateau dive, 108 s simulated "
          "each) in %.1f s on %d cores, %.0f ms per job and core; 1000 samples projected: %.0f s (goal <= %.0f s: "
          "%s), exit %d" % (samples, jobs, wall, os.cpu_count() or 1, wall * (os.cpu_count() or 1) / jobs * 1e3,
                            projected, ROBUSTNESS_GOAL_S, "met" if projected <= ROBUSTNESS_GOAL_S else "NOT met",
                            code))
    return wall


def run_reproduce(out_dir=None, jobs=None):
    """Time ``brov2-analyze reproduce`` end to end; return the wall time [s]."""
    from brov2_hybrid.analysis import cli
    out_dir = out_dir or tempfile.mkdtemp(prefix="brov2_reproduce_")
    argv = ["reproduce", "--out", out_dir, "--quiet"] + (["--jobs", str(jobs)] if jobs else [])
    start = time.perf_counter()
    code = cli.main(argv)
    wall = time.perf_counter() - start
    print("brov2-analyze reproduce: %.0f s wall on %d cores (goal < %.0f s), exit %d"
          % (wall, os.cpu_count() or 1, REPRODUCE_GOAL_S, code))
    return wall


def main(argv=None):
    """Command line (``python -m brov2_hybrid.bench.loop [--no-reproduce]``): print the loop's
    real-time factors and, unless ``--no-reproduce``, the wall time of a whole reproduction."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-reproduce", action="store_true", help="skip timing the whole reproduction")
    args = parser.parse_args(argv)
    run(reproduce=not args.no_reproduce)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
