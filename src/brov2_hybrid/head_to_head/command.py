"""``brov2-analyze head-to-head``: the hybrid against tuned ArduSub with the stored settings of both.

    brov2-analyze head-to-head [--dive FILE ...] [--trials N] [--out DIR] [--jobs J] [--dask ADDR]
    brov2-analyze head-to-head --tune [--tune-trials N] [--tune-only SIDE ...]   tune, store, then score
    brov2-analyze head-to-head --docs                     also write the verdict block (docs/experiments.md)

Every stored ArduSub setting (:mod:`~.stored`, placement ``ardusub``), behind each placement's pilot
link (how late a pilot's input at the surface reaches the vehicle; and behind none), and every stored
hybrid setting of every placement flies every scoring dive (``--dive`` files, else the held-out dives:
:func:`~.inputs.held_out_dives`) ``--trials`` times, each flight on a fresh real ArduSub SITL
(:mod:`~.flights`). Writes ``fronts.csv`` (one row per scored flight: :data:`~.scoring.COLUMNS`),
``points.csv`` (medians and spread per point), ``refused.csv`` (the flights that did not count, with
the reason) and the IAE-vs-effort figures per dive (true attitude and ArduSub's estimate). With
``--attitude-only`` each dive also flies with its translations at 0: that flight's effort is the
attitude-only effort.

``analysis.cli`` reaches this module by name (:func:`add_parser`, :func:`run`), so analysis/ does not
import this room.
"""
import os

from brov2_hybrid.analysis.context import write_csv
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.head_to_head import figures, inputs, report, scoring, stored
from brov2_hybrid.head_to_head.flights import ARDUSUB, HYBRID, FlightJob, fresh_sitl_settings, run_flight_job

REFUSED_COLUMNS = ("pilot", "placement", "setting", "pilot_link_ms", "dive", "trial", "reason")


def add_parser(sub, parents):
    """The ``head-to-head`` subcommand and its options on the subparsers ``sub``."""
    p = sub.add_parser("head-to-head", parents=parents,
                       help="the hybrid (tether / realistic / onboard) vs tuned ArduSub with the stored settings of "
                            "both on real ArduSub SITL: fronts.csv, IAE-vs-effort figures (make ardusub first)")
    p.add_argument("--dive", action="append", default=[], metavar="FILE",
                   help="a dive CSV to score on (repeatable; default: the held-out synthetic dives)")
    p.add_argument("--trials", type=int, default=None, help="flights per point (default: head_to_head.trials)")
    p.add_argument("--attitude-only", action="store_true", help="also fly each scoring dive with its surge, sway "
                   "and heave commands at 0 (dive '<name> attitude-only'): its effort is the attitude-only effort")
    p.add_argument("--tune", action="store_true", help="tune both sides on the training set first and store the "
                   "settings in params/head_to_head/ (long: head_to_head.tune_trials per side and weighting; every "
                   "flight is journaled in OUT/tune_journal.jsonl, and the same command into the same --out resumes)")
    p.add_argument("--tune-trials", type=int, default=None, help="--tune's budget per side and weighting")
    p.add_argument("--tune-only", action="append", default=[], metavar="SIDE", help="with --tune: tune only this "
                   "side (ardusub or a placement of hybrid_tuned.yaml; repeatable); the others keep their stored "
                   "settings, and the stored file's status says which")
    p.add_argument("--store", metavar="DIR", default=None, help="the stored settings' folder: read, and written by "
                   "--tune (default: params/head_to_head; give another to try a tuning without replacing them)")
    p.add_argument("--docs", action="store_true", help="also write docs/tables/head_to_head.json and its "
                   "generated block (docs/experiments.md); not with --dive or --trials")
    return p


def run(ctx, args):
    """Run the subcommand for ``args`` in ``ctx`` (analysis Context); returns the summary dict."""
    progress = (lambda text: None) if getattr(args, "quiet", False) else print
    for name, default in (("dive", []), ("trials", None), ("tune", False), ("tune_trials", None), ("store", None),
                          ("attitude_only", False), ("tune_only", [])):
        setattr(args, name, getattr(args, name, default))      # reproduce passes a bare namespace
    if any(getattr(args, n, None) is not None for n in ("telemetry_rate", "telemetry_delay", "command_delay", "omega_d")):
        raise Brov2Error("head-to-head: the hybrid's settings and latencies are the stored ones (params/head_to_head/"
                         "hybrid_tuned.yaml); no --omega-d, --telemetry-rate, --telemetry-delay or --command-delay")
    if getattr(args, "docs", False) and (args.dive or args.trials is not None or args.tune_trials is not None
                                         or args.store is not None):
        raise Brov2Error("head-to-head --docs: the documents' verdict comes from the held-out dives, the "
                         "settings' trials and the stored settings (no --dive, --trials, --tune-trials or --store)")
    if args.store is not None and not os.path.isdir(args.store):
        raise Brov2Error("--store %s: not a folder (copy params/head_to_head/ there first)" % args.store)
    if args.trials is not None and args.trials < 1:
        raise Brov2Error("--trials: expected an integer >= 1, got %d" % args.trials)
    tuned = None
    if args.tune_only and not args.tune:
        raise Brov2Error("--tune-only: only with --tune")
    if args.tune:
        from brov2_hybrid.head_to_head.tune_run import tune_and_store
        tuned = tune_and_store(ctx, args.tune_trials, progress, args.store, only=args.tune_only)
    summary = head_to_head_experiment(ctx, args.dive, args.trials, progress, store=args.store,
                                      attitude_only=args.attitude_only)
    progress(report.console_lines(summary))
    if tuned is not None:
        summary["tuning"] = tuned
    return summary


def ardusub_links_s(hybrid_placements):
    """The pilot links ArduSub flies behind [s], shortest first: 0 (the pilot's input on the vehicle at once)
    and each placement's ``pilot_link_s``, so that every placement meets ArduSub behind its own link."""
    return sorted({0.0} | {p.pilot_link_s for p, _ in hybrid_placements.values()})


def flight_jobs(ctx, dives, trials, s, cs, depth_rate_m_s, ardusub_settings, hybrid_placements):
    """Every flight: per trial, per dive, each ArduSub setting behind each pilot link
    (:func:`ardusub_links_s`), then each hybrid setting of each placement."""
    cs = fresh_sitl_settings(cs, s)
    links = ardusub_links_s(hybrid_placements)
    jobs = []
    for trial in range(1, trials + 1):
        for name, dive in dives:
            common = dict(dive_name=name, dive=dive, trial=trial, loop=ctx.loop, cs=cs, depth_rate_m_s=depth_rate_m_s,
                          max_attempts=s.max_attempts, descent_s=s.descent_s, settle_s=s.settle_s,
                          translations_as_stock=s.translations_as_stock)
            jobs += [FlightJob(ARDUSUB, None, a.label, a.params, pilot_link_s=link, **common)
                     for a in ardusub_settings for link in links]
            for place, settings in hybrid_placements.values():
                jobs += [FlightJob(HYBRID, place, h.label, h.options, **common) for h in settings]
    return jobs


def head_to_head_experiment(ctx, dive_paths=(), trials=None, progress=print, settings=None, store=None,
                            attitude_only=False):
    """Fly the scoring set with the stored settings (in ``store``, default params/head_to_head/); write
    the files; return the summary.

    Raises Brov2Error before anything flies without an ArduSub build."""
    from brov2_hybrid.analysis.ardusub_experiment import load_compare_settings
    from brov2_hybrid.params import load_controller_params
    from brov2_hybrid.sim.ardusub_sitl import find_ardusub
    find_ardusub()
    source = getattr(ctx.settings, "source", None)
    s = settings or inputs.load_settings(source)
    cs = load_compare_settings(source)
    trials = s.trials if trials is None else int(trials)
    dives = inputs.dive_files(dive_paths) if dive_paths else inputs.held_out_dives(s)
    if attitude_only:
        dives += [("%s attitude-only" % name, inputs.attitude_only(dive)) for name, dive in dives]
    ardusub_settings = stored.load_ardusub_settings(store)
    status, placements = stored.load_hybrid_settings(os.path.join(store, stored.HYBRID_FILE) if store else None)
    rate = load_controller_params().max_depth_rate_m_s
    jobs = flight_jobs(ctx, dives, trials, s, cs, rate, ardusub_settings, placements)
    progress("head-to-head: %d flights (%d dives x %d trials) on %s" % (len(jobs), len(dives), trials,
                                                                       ctx.runner.describe()))
    results = ctx.runner.map(run_flight_job, jobs, "head-to-head")
    rows = [r["row"] for r in results if r["row"] is not None]
    refused = [[j.pilot, j.placement_name, j.setting, j.pilot_link_ms, j.dive_name, j.trial, reason]
               for j, r in zip(jobs, results) for reason in r["refusals"]]
    os.makedirs(ctx.out_dir, exist_ok=True)
    write_csv(ctx.path("fronts.csv"), scoring.COLUMNS, [[r[c] for c in scoring.COLUMNS] for r in rows])
    pts = scoring.points(rows)
    point_columns = list(scoring.POINT_COLUMNS) + ["flights"] + [
        c + suffix for c in scoring.FIGURE_COLUMNS for suffix in ("", "_min", "_max")]
    write_csv(ctx.path("points.csv"), point_columns, [[p[c] for c in point_columns] for p in pts])
    write_csv(ctx.path("refused.csv"), REFUSED_COLUMNS, refused)
    files = ["fronts.csv", "points.csv", "refused.csv"]
    for name, _ in dives:
        for estimate in (False, True):
            png = "iae_effort_%s_%s.png" % (name.replace(" ", "_"), "est" if estimate else "true")
            if any(p["dive"] == name for p in pts):
                figures.iae_effort_figure(ctx.path(png), pts, name, estimate)
                files.append(png)
    lost = [[j.pilot, j.placement_name, "%s (pilot link %g ms)" % (j.setting, j.pilot_link_ms), j.dive_name, j.trial]
            for j, r in zip(jobs, results) if r["row"] is None]
    return {"points": pts, "dives": [{"name": n, "source": d.source, "duration_s": d.duration_s} for n, d in dives],
            "held_out": not dive_paths, "trials": trials, "flights": len(rows), "refusals": len(refused),
            "unscored": lost, "ardusub_status": sorted({a.status for a in ardusub_settings}),
            "hybrid_status": status, "start_depth_m": s.start_depth_m, "speedup": cs.speedup,
            "placements": {n: {"telemetry_rate_hz": p.telemetry_rate_hz, "telemetry_delay_s": p.telemetry_delay_s,
                               "command_delay_s": p.command_delay_s, "pilot_link_s": p.pilot_link_s,
                               "reference_delay_s": p.reference_delay_s} for n, (p, _) in placements.items()},
            "depth_rate_m_s": rate, "files": files}
