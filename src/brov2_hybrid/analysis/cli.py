"""``brov2-analyze``: the paper's experiments from the command line.

    brov2-analyze step | bode | dive | latency | compare-models | sysid | gains | trim | firmware
    brov2-analyze integral | robustness [--samples N]   PD vs PD+I
    brov2-analyze allocators                   saturation-aware allocation vs Eq. 9 on an aggressive dive
    brov2-analyze options                      which law option helps on which kind of input
    brov2-analyze omega-limit [--docs]         how far omega_d can go: loop margins, latency, lag, noise
    brov2-analyze design --vehicle FILE        what a vehicle can do: gains, margins, thrust headroom per omega_d
    brov2-analyze ardusub                      hybrid vs ArduSub's attitude control on real ArduSub
    brov2-analyze depth-hold-compare [--docs]  the hybrid depth hold vs ArduSub's ALT_HOLD on real ArduSub
    brov2-analyze onboard-pair [--docs]        make run on board (the Lua script) vs topside, real ArduSub SITL
    brov2-analyze head-to-head [--dive FILE]   the hybrid vs tuned ArduSub, stored settings (head_to_head room)
    brov2-analyze tether --case free-float     seed 003's free-floating tethered vehicle, with convergence runs
    brov2-analyze tether-loop                  the tether in the closed loop: its steady pull vs PD and PD+I, the dive on it
    brov2-analyze reproduce [--out DIR]        everything + REPORT.md
    brov2-analyze summarize LOG.csv [--out DIR]
    brov2-analyze compare-log LOG.csv          logged yaw step vs the in-process loop
    brov2-analyze identify --plant FILE | --log LOG.csv   identify a vehicle (docs/identification.md)
    brov2-analyze identify-coverage [--docs]   do the identification's intervals hold the truth (repeated flights)

Each command writes CSVs and PNGs into ``--out`` (default ``analysis_out``), prints where, and runs its sweep
over the cores (``--jobs``) or a Dask cluster (``--dask ADDRESS``). Settings: ``params/analysis.yaml``
(``--params``). ``--docs`` also rewrites the command's generated table in docs/ (``make reproduce``: all).
"""
import argparse
import importlib
import json
import math
import os
import sys
import time
from dataclasses import replace

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.vehicle.mixers import KINDS as MIXER_KINDS
from brov2_hybrid.sim.config import MODELS
from brov2_hybrid.vehicle.vehicle_file import add_vehicle_argument
from brov2_hybrid.analysis import report, tether_experiment, tether_loop
from brov2_hybrid.analysis.bode_experiment import bode_experiment
from brov2_hybrid.analysis.console_summary import console_lines
from brov2_hybrid.analysis.context import AXES, LINEAR, Context
from brov2_hybrid.analysis.dive_experiment import dive_experiment
from brov2_hybrid.analysis.firmware_experiment import firmware_experiment
from brov2_hybrid.analysis.log_summary import summarize_log
from brov2_hybrid.analysis.model_experiments import gains_experiment, sysid_experiment, trim_experiment
from brov2_hybrid.analysis.report_format import jsonable
from brov2_hybrid.analysis.runner import Runner
from brov2_hybrid.analysis.settings import LatencyCase, load_analysis_settings
from brov2_hybrid.analysis.step_experiments import compare_models_experiment, latency_experiment, step_experiment

COMMANDS = ("step", "bode", "dive", "latency", "compare-models", "sysid", "gains", "trim", "firmware", "integral",
            "robustness", "allocators", "options", "omega-limit", "design", "ardusub", "depth-hold-compare",
            "onboard-pair", "head-to-head", "tether", "tether-loop", "reproduce", "summarize", "compare-log", "identify", "identify-coverage")
#: Commands of other rooms, by module name (analysis/ must not import them): ``add_parser(sub, parents)``, ``run(ctx, args)``.
_ROOMS = {"head-to-head": "brov2_hybrid.head_to_head.command"}
#: Commands with a parser and a runner of their own (``add_parser``, ``run`` as above): other rooms' and these.
_OWN_PARSERS = dict(_ROOMS, **{"onboard-pair": "brov2_hybrid.analysis.onboard_pair"})

#: Commands run as ``module.function(ctx, omegas)`` (modules of brov2_hybrid.analysis).
_EXPERIMENTS = {"integral": ("integral", "integral_experiment"), "allocators": ("allocators", "allocators_experiment"),
                "options": ("options", "options_experiment"), "omega-limit": ("omega_limit", "omega_limit_experiment"),
                "design": ("design", "design_experiment"), "tether-loop": ("tether_loop", "tether_loop_experiment"),
                "identify-coverage": ("identify_coverage", "identify_coverage_experiment")}


def _floats(text):
    try:
        values = [float(v) for v in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected numbers separated by commas, got %r" % text)
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        raise argparse.ArgumentTypeError("expected positive numbers, got %r" % text)
    return values


def build_parser():
    """The ``brov2-analyze`` argument parser: one subcommand per entry of :data:`COMMANDS`, with the
    common options (--out, --params, --jobs, --dask, --quiet) and, where a loop runs, the loop
    options (--mixer, --model, latency, --omega-d, --vehicle)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", default=None, help="output folder (default: out/<command>)")
    common.add_argument("--params", default=None, help="analysis settings YAML (default: params/analysis.yaml)")
    common.add_argument("--jobs", type=int, default=None, help="worker processes (default: number of cores)")
    common.add_argument("--dask", metavar="ADDRESS", default=None,
                        help="run sweeps on a dask.distributed scheduler, e.g. tcp://host:8786")
    common.add_argument("--quiet", action="store_true", help="no progress lines")
    loop = argparse.ArgumentParser(add_help=False)
    loop.add_argument("--mixer", choices=MIXER_KINDS, help="firmware mixer (Algorithm 2 / 1)")
    loop.add_argument("--model", choices=MODELS, help="vehicle model")
    loop.add_argument("--telemetry-rate", type=float, metavar="HZ", help="attitude telemetry rate")
    loop.add_argument("--telemetry-delay", type=float, metavar="S", help="attitude transport delay")
    loop.add_argument("--command-delay", type=float, metavar="S", help="command transport delay")
    loop.add_argument("--omega-d", type=_floats, metavar="LIST", help="omega_d values [rad/s], e.g. 2,3,4")
    add_vehicle_argument(loop)

    parser = argparse.ArgumentParser(
        prog="brov2-analyze", description="Reproduce the experiments of Ng & Krieg (2024): numbers (CSV) and "
        "plots (PNG) for each, REPORT.md for all. Settings: params/analysis.yaml.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    sub.add_parser("step", parents=[common, loop], help="yaw step sweep over omega_d (Fig. 13, 14)")
    p = sub.add_parser("bode", parents=[common, loop], help="frequency response (Fig. A1)")
    p.add_argument("--freqs", type=_floats, metavar="LIST", help="frequencies [Hz] (default: 0.05..1.97 step 0.04)")
    p = sub.add_parser("dive", parents=[common, loop], help="full 6-DOF dive (Fig. 17-19)")
    p.add_argument("--dive", default=None, help="dive CSV (default: the bundled AR pilot dive)")
    sub.add_parser("latency", parents=[common, loop], help="step sweep over loop latencies")
    sub.add_parser("compare-models", parents=[common, loop], help="stock vs updated model (Fig. 16, Eq. 25)")
    p = sub.add_parser("sysid", parents=[common, loop], help="yaw drag and inertia identification (Sec. 3)")
    p.add_argument("--log", action="append", default=[], metavar="CSV",
                   help="a constant-yaw-torque run logged in the brov2_hybrid log format (repeat per run)")
    p.add_argument("--bag", action="append", default=[], metavar="BAG", help="a constant-torque run in a rosbag")
    p.add_argument("--torque-nm", type=float, action="append", default=[],
                   help="torque of each --bag run (in order) when the bag has no torque topic")
    p.add_argument("--torque-topic", default=None, help="geometry_msgs/WrenchStamped topic (base_link_frd) in the bags")
    p.add_argument("--imu-topic", default="/mavros/imu/data", help="sensor_msgs/Imu topic in the bags")
    sub.add_parser("gains", parents=[common, loop], help="k_p, k_d, delta k_d table")
    p = sub.add_parser("trim", parents=[common], help="B-check from the quadratic drag over velocity ranges")
    p.add_argument("--rate-max", type=_floats, metavar="LIST", help="velocity spans v_max [rad/s]")
    sub.add_parser("firmware", parents=[common, loop],
                   help="stock ArduSub vs quantitative firmware: torque fidelity and closed loop per output stage")
    sub.add_parser("integral", parents=[common, loop],
                   help="PD vs PD+I: LTI poles, steady errors on a plateau dive, yaw-step overshoot")
    p = sub.add_parser("robustness", parents=[common, loop],
                       help="Monte Carlo PD vs PD+I over model mismatch, current, latency and noise")
    p.add_argument("--samples", type=int, default=None, help="samples per omega_d and law (default: params)")
    sub.add_parser("allocators", parents=[common, loop],
                   help="saturation-aware allocator vs the paper's Eq. 9: IAE and worst steady error per axis on an "
                        "aggressive dive, both firmware output stages")
    sub.add_parser("options", parents=[common, loop],
                   help="PD vs PD+I vs drag feed-forward vs both on four kinds of input: IAE and effort")
    sub.add_parser("omega-limit", parents=[common, loop],
                   help="how far omega_d can go: Eq. 22 delay margins and flown steps/dives under latency, "
                        "thruster lag and IMU noise; the highest safe omega_d")
    sub.add_parser("design", parents=[common, loop],
                   help="what a vehicle file can do: gains, delay margins and thrust headroom per omega_d "
                        "(e.g. --vehicle out/identify/identified.yaml)")
    sub.add_parser("identify-coverage", parents=[common, loop], help="how often the identification's intervals "
                   "hold the truth over repeated in-process flights (docs/identification.md)")
    sub.add_parser("ardusub", parents=[common, loop],
                   help="hybrid autopilot vs ArduSub's own attitude control (default and tuned gains) on real "
                        "ArduSub SITL flying our model (make ardusub first)")
    sub.add_parser("depth-hold-compare", parents=[common, loop],
                   help="the hybrid depth hold vs ArduSub's ALT_HOLD on real ArduSub SITL flying our model: depth "
                        "error and effort on the bundled dive and a depth step (make ardusub first)")
    for name, document in (("omega-limit", "experiments"), ("identify-coverage", "identification"),
                           ("depth-hold-compare", "depth-hold")):
        sub.choices[name].add_argument("--docs", action="store_true", help="also write docs/tables/%s.json and its "
                                       "generated block (docs/%s.md)" % (name.replace("-", "_"), document))
    for module in _OWN_PARSERS.values():
        importlib.import_module(module).add_parser(sub, [common, loop])
    tether_experiment.add_parser(sub, common)
    tether_loop.add_parser(sub, [common, loop])
    p = sub.add_parser("reproduce", parents=[common, loop], help="every experiment and REPORT.md")
    p.add_argument("--quick", action="store_true", help="coarse sweeps (a smoke test, not the paper's grids)")
    p.add_argument("--docs", action="store_true",
                   help="also write docs/tables/*.json and the generated tables of README.md and docs/ "
                        "(what `make reproduce` does; not with --quick)")
    p = sub.add_parser("summarize", parents=[common], help="IAE / energy per axis and plots of a log CSV")
    p.add_argument("log_csv", help="a brov2_hybrid log CSV (from the logger node or the in-process loop)")
    p = sub.add_parser("compare-log", parents=[common, loop],
                       help="replay a logged yaw step (e.g. from the ROS pipeline) in-process; compare the responses")
    p.add_argument("log_csv", help="a brov2_hybrid log CSV of a yaw step")
    p.add_argument("--tolerance", type=float, default=None, help="allowed relative difference of the Eq. 25 yaw "
                   "errors (default: analysis.log_replay.TOLERANCE)")
    p.add_argument("--dive", default=None, help="the dive CSV the logged run played (recommended)")
    p = sub.add_parser("identify", parents=[common, loop],
                       help="identification flight: fly the excitation on --plant (in-process) or fit --log; "
                            "writes identified.yaml and a report (docs/identification.md)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--plant", metavar="VEHICLE_FILE", help="fly on the plant this vehicle file describes")
    source.add_argument("--log", dest="log_csv", metavar="LOG.csv", help="fit a logger CSV of the flight")
    return parser


def _loop_from_args(settings, args):
    loop = settings.loop
    if getattr(args, "mixer", None):
        loop = replace(loop, mixer=args.mixer)
    if getattr(args, "model", None):
        loop = replace(loop, model=args.model)
    if getattr(args, "vehicle", None):
        loop = replace(loop, vehicle=args.vehicle)
    rate = getattr(args, "telemetry_rate", None)
    tel = getattr(args, "telemetry_delay", None)
    cmd = getattr(args, "command_delay", None)
    if rate is not None or tel is not None or cmd is not None:
        loop = loop.with_latency(LatencyCase(
            "custom", rate if rate is not None else loop.telemetry_rate_hz,
            tel if tel is not None else loop.telemetry_delay_s, cmd if cmd is not None else loop.command_delay_s))
    return loop


def quick_settings(settings):
    """Coarse grids for a fast end-to-end check of ``reproduce`` (not the paper's grids)."""
    return replace(
        settings,
        step=replace(settings.step, omega_d_rad_s=(2.0, 3.0, 4.0), duration_s=6.0, plot_omega_d_rad_s=(2.0, 4.0)),
        bode=replace(settings.bode, omega_d_rad_s=(3.0,), freqs_hz=(0.25, 0.45, 0.85), min_transient_s=1.0,
                     analysed_periods=2.0),
        dive=replace(settings.dive, omega_d_rad_s=(2.0, 4.0)),
        latency_cases=settings.latency_cases[:2],
        compare=replace(settings.compare, omega_d_rad_s=(3.0,), duration_s=6.0),
        sysid=replace(settings.sysid, torques_nm=(4.0, 8.0, 12.0)),
        firmware=replace(settings.firmware, amplitudes=(0.02, 0.05, 0.3, 1.0), random_commands=40,
                         omega_d_rad_s=(3.0,)),
    )


def main(argv=None):
    """Run ``brov2-analyze`` with ``argv`` (default: sys.argv[1:]); returns the exit code.

    0 on success, 1 when ``compare-log`` finds the responses differ, 2 on a
    :class:`~brov2_hybrid.errors.Brov2Error` (bad settings or input; the message goes to stderr).
    argparse exits with 2 itself on bad arguments."""
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except Brov2Error as exc:
        sys.stderr.write("brov2-analyze %s: error: %s\n" % (args.command, exc))
        return 2


def _run(args):
    if args.out is None:
        args.out = os.path.join("out", args.command.replace("-", "_"))
    settings = load_analysis_settings(args.params)
    if args.command in ("identify", "tether"):
        return _identify(args, settings) if args.command == "identify" else tether_experiment.run_command(args)
    if args.command == "summarize":
        m = summarize_log(args.log_csv, args.out)
        print("summary of %s (%.1f s, %d ticks):" % (args.log_csv, m["duration_s"], m["ticks"]))
        for axis in AXES:
            print("  %-5s IAE %8.2f deg s   energy (Eq. 26) %8.2f   RMS error %6.2f deg"
                  % (axis, m["iae_%s_deg_s" % axis], m["energy_%s" % axis], m["rms_error_%s_deg" % axis]))
        for dof in LINEAR:
            print("  %-5s energy (Eq. 26) %8.2f" % (dof, m["energy_%s" % dof]))
        print("wrote %s" % ", ".join(m["files"]))
        return 0
    if args.command == "compare-log":
        from brov2_hybrid.analysis.log_replay import compare_with_log, console_lines as replay_lines
        r = compare_with_log(args.log_csv, _loop_from_args(settings, args), settings.step.settle_band, args.tolerance,
                             dive_csv_path=args.dive)
        print("\n".join(replay_lines(args.log_csv, r)))
        return 0 if r["ok"] else 1
    if getattr(args, "docs", False) and (getattr(args, "quick", False) or args.omega_d or args.params
                                         or _loop_from_args(settings, args) != settings.loop):
        raise Brov2Error("--docs: the documents' tables come from the default settings and grids (no --quick, "
                         "--omega-d, --params, --vehicle, --mixer, --model or latency option)")
    if getattr(args, "quick", False):
        settings = quick_settings(settings)
    runner = Runner(jobs=args.jobs, dask_address=args.dask, progress=not args.quiet)
    ctx = Context(settings, args.out, runner, _loop_from_args(settings, args))
    omegas = getattr(args, "omega_d", None)
    start = time.perf_counter()
    try:
        if args.command == "reproduce":
            summaries = reproduce(ctx, omegas, quick=getattr(args, "quick", False))
            path = report.write_report(ctx, summaries, time.perf_counter() - start)
            if getattr(args, "docs", False):
                from brov2_hybrid.analysis.doc_tables import write_docs
                print("reproduce: wrote %s" % ", ".join(write_docs(summaries)))
            print("reproduce: %.0f s wall on %s; report %s" % (time.perf_counter() - start, runner.describe(), path))
            return 0
        summary = run_one(ctx, args, omegas)
    finally:
        runner.close()
    print("%s: wrote %s" % (args.command, ", ".join(os.path.join(args.out, f) for f in summary.get("files", []))))
    if getattr(args, "docs", False):
        from brov2_hybrid.analysis.doc_tables import write_docs
        print("%s: wrote %s" % (args.command, ", ".join(write_docs({args.command.replace("-", "_"): summary}))))
    with open(os.path.join(args.out, "%s_summary.json" % args.command.replace("-", "_")), "w") as handle:
        json.dump(jsonable(summary), handle, indent=1)
    print(console_lines(args.command, summary))
    print("%s: %.1f s wall on %s" % (args.command, time.perf_counter() - start, runner.describe()))
    return 0


def run_one(ctx, args, omegas):
    """Run the experiment of ``args.command`` (any command but reproduce, summarize and compare-log)
    over ``omegas`` [rad/s] (None: the settings' grid); returns its summary dict.

    Raises Brov2Error for an unknown command."""
    c = args.command
    if c == "step":
        return step_experiment(ctx, omegas)
    if c == "bode":
        return bode_experiment(ctx, omegas, args.freqs)
    if c == "dive":
        return dive_experiment(ctx, args.dive, omegas)
    if c == "latency":
        return latency_experiment(ctx, omegas)
    if c == "compare-models":
        return compare_models_experiment(ctx, omegas)
    if c == "sysid":
        runs = _sysid_runs(args)
        return sysid_experiment(ctx, runs, model=ctx.loop.model)
    if c == "gains":
        return gains_experiment(ctx, omegas)
    if c == "trim":
        return trim_experiment(ctx, args.rate_max)
    if c == "firmware":
        return firmware_experiment(ctx, omegas)
    if c == "robustness":
        return importlib.import_module("brov2_hybrid.analysis.robustness").robustness_experiment(ctx, omegas, args.samples)
    if c in _OWN_PARSERS:
        return importlib.import_module(_OWN_PARSERS[c]).run(ctx, args)
    if c in _EXPERIMENTS:
        module, function = _EXPERIMENTS[c]
        return getattr(importlib.import_module("brov2_hybrid.analysis." + module), function)(ctx, omegas)
    if c == "ardusub":
        from brov2_hybrid.analysis.ardusub_experiment import ardusub_experiment
        return ardusub_experiment(ctx, omegas, progress=print if not args.quiet else (lambda text: None))
    if c == "depth-hold-compare":
        from brov2_hybrid.analysis.depth_hold_compare import depth_hold_compare_experiment
        return depth_hold_compare_experiment(ctx, progress=print if not args.quiet else (lambda text: None))
    raise Brov2Error("unknown command %r (expected one of %s)" % (c, ", ".join(COMMANDS)))


def _identify(args, settings):
    from brov2_hybrid.identify import run
    if args.plant:
        out = run.identify_plant(args.plant, args.out, prior=args.vehicle,
                                 loop_settings=_loop_from_args(settings, args))
    else:
        out = run.identify_log_file(args.log_csv, args.out, args.vehicle)
    room = out["room"]
    print("identify: wrote %s, %s, %s (flight log %s)"
          % (out["vehicle_file"], out["report"], out["figure"], out["log"]))
    print("identify: flight %.1f s, depth %.2f..%.2f m, heading span %.2f turns"
          % (room["duration_s"], room["depth_min_m"], room["depth_max_m"], room["heading_span_turns"]))
    return 0


def _sysid_runs(args):
    from brov2_hybrid.analysis import sysid
    if not args.log and not args.bag:
        return None
    runs = [sysid.run_from_log(p) for p in args.log]
    if args.bag:
        if not args.torque_topic and len(args.torque_nm) != len(args.bag):
            raise Brov2Error("--bag: give --torque-topic, or one --torque-nm per bag (%d bags, %d torques)"
                             % (len(args.bag), len(args.torque_nm)))
        for k, bag in enumerate(args.bag):
            runs.append(sysid.run_from_bag(bag, None if args.torque_topic else args.torque_nm[k],
                                           args.imu_topic, args.torque_topic))
    return runs


def _ardusub_or_reason(ctx, quick, command):
    """Real-ArduSub experiment ``command`` (ardusub, depth-hold-compare) when a build is at hand (not
    with --quick), else why not."""
    from brov2_hybrid.sim.ardusub_sitl import find_ardusub
    if quick:
        return {"skipped": "--quick (run `brov2-analyze %s`)" % command}
    try:
        find_ardusub()
        return run_one(ctx, argparse.Namespace(command=command, quiet=not ctx.runner.progress), None)
    except Brov2Error as exc:       # no build, or a run refused on a busy machine: the rest of the report stands
        return {"skipped": str(exc)}


def reproduce(ctx, omegas=None, quick=False):
    """Every experiment into ctx.out_dir; returns the summaries for the report."""
    from brov2_hybrid.analysis import allocators, identify_coverage, integral, omega_limit, options, robustness
    order = (("gains", lambda: gains_experiment(ctx)),
             ("trim", lambda: trim_experiment(ctx)),
             ("step", lambda: step_experiment(ctx, omegas)),
             ("bode", lambda: bode_experiment(ctx)),
             ("dive", lambda: dive_experiment(ctx)),
             ("latency", lambda: latency_experiment(ctx, omegas)),
             ("compare_models", lambda: compare_models_experiment(ctx)),
             ("sysid", lambda: sysid_experiment(ctx)),
             ("firmware", lambda: firmware_experiment(ctx)),
             ("integral", lambda: integral.integral_experiment(ctx, (3.0,) if quick else None)),
             ("robustness", lambda: robustness.robustness_experiment(ctx, (3.0,) if quick else None,
                                                                     2 if quick else None)),
             ("allocators", lambda: allocators.allocators_experiment(ctx, (3.0,) if quick else None, quick=quick)),
             ("options", lambda: options.options_experiment(ctx, (3.0,) if quick else None)),
             ("omega_limit", lambda: omega_limit.omega_limit_experiment(ctx, (3.0, 6.0) if quick else None)),
             ("identify_coverage", lambda: identify_coverage.identify_coverage_experiment(ctx, quick=quick)),
             ("tether_loop", lambda: tether_loop.tether_loop_experiment(ctx)),
             ("tether_free_float", lambda: tether_experiment.free_float_summary(ctx.out_dir, convergence=not quick)),
             ("ardusub", lambda: _ardusub_or_reason(ctx, quick, "ardusub")),
             ("depth_hold_compare", lambda: _ardusub_or_reason(ctx, quick, "depth-hold-compare")),
             ("onboard_pair", lambda: _ardusub_or_reason(ctx, quick, "onboard-pair")),
             ("head_to_head", lambda: _ardusub_or_reason(ctx, quick, "head-to-head")))
    summaries = {}
    for name, fn in order:
        t0 = time.perf_counter()
        summaries[name] = fn()
        summaries[name]["elapsed_s"] = time.perf_counter() - t0
        if ctx.runner.progress:
            sys.stderr.write("reproduce: %s done in %.1f s\n" % (name, summaries[name]["elapsed_s"]))
    return summaries


if __name__ == "__main__":
    sys.exit(main())
