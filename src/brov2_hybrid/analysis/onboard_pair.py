"""On board against topside, as a user flies them: ``make run`` twice on real ArduSub SITL.

The measure of the on-board placement (docs/onboard.md "Onboard vs topside on SITL"): the bundled
dive flown by ``scripts/run_dive.sh`` (what ``make run`` runs) with the topside law at the default
omega_d, and again with the law in the vehicle's Lua script at the omega_d it can afford on board
(``params/analysis.yaml`` section ``onboard_pair``). Each side is flown ``trials`` times, one run
after the other; the score is the run summary's summed IAE (roll + pitch + yaw, on the attitude the
vehicle reports), and the verdict the ratio of the medians against the goal. The on-board runs also
give the script's real rate and loop periods on SITL, from its own reports as the bridge logged them.

Only real flights are scored (:func:`refusal`): a run whose ``make run`` failed, that left no run
summary, whose summary names another placement or omega_d, that flew less of the dive than it lasts,
or whose law was not ACTIVE on every logged tick is refused with the reason and flown again, up to
``attempts`` times.
"""
import glob
import json
import os
import re
import statistics
import subprocess
from dataclasses import dataclass

from brov2_hybrid import paths
from brov2_hybrid.dive.dive_csv import load_dive_csv
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.params import Section, load_controller_params, load_yaml

SECTION = "onboard_pair"
#: The line of ``scripts/run_dive.sh`` that names the run's folder.
RUN_FOLDER = re.compile(r"^make run: run folder (\S+)\s*$", re.M)
AXES = ANGULAR_DOF_NAMES


@dataclass(frozen=True)
class PairSettings:
    """``params/analysis.yaml`` section ``onboard_pair``."""

    topside_args: tuple          # make run ARGS of the topside runs
    onboard_args: tuple          # make run ARGS of the on-board runs
    trials: int                  # accepted runs per side
    attempts: int                # runs per accepted one at most (refused runs are flown again)
    goal_ratio: float            # on board / topside summed IAE at most this (issue: 0.6)
    duration_margin_s: float     # a run's summary may cover this much less than the dive lasts [s]
    timeout_s: float             # one make run at most [wall s]


def load_pair_settings(path=None):
    """:class:`PairSettings` from ``path`` (default ``params/analysis.yaml``)."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, SECTION)
    settings = PairSettings(topside_args=tuple(s.string_list("topside_args")),
                            onboard_args=tuple(s.string_list("onboard_args")), trials=s.integer("trials", 1),
                            attempts=s.integer("attempts", 1), goal_ratio=s.positive("goal_ratio"),
                            duration_margin_s=s.positive("duration_margin_s"), timeout_s=s.positive("timeout_s"))
    for key, args in (("topside_args", settings.topside_args), ("onboard_args", settings.onboard_args)):
        if "sim:=ardusub" not in args:
            raise Brov2Error("%s:%s.%s: expected sim:=ardusub among %r (the pair is flown on real ArduSub SITL)"
                             % (path, SECTION, key, list(args)))
    return settings


def launch_arg(args, name, default=None):
    """The value of ``name:=value`` in ``args`` (the last one), else ``default``."""
    values = [a.split(":=", 1)[1] for a in args if a.startswith(name + ":=")]
    return values[-1] if values else default


def with_dive(args):
    """``args`` with ``dive:=`` the analysis' bundled dive (``params/analysis.yaml`` dive.csv_file) unless they
    name one: the pair flies, and checks against, the dive it names, not the launch file's own default."""
    from brov2_hybrid.analysis.settings import load_analysis_settings
    if launch_arg(args, "dive") is not None:
        return list(args)
    return list(args) + ["dive:=%s" % os.path.join(paths.package_root(), load_analysis_settings().dive.csv_file)]


def expected_run(args):
    """(placement, omega_d [rad/s], dive duration [s]) a run of ``make run ARGS=with_dive(args)`` must report:
    the launch's defaults (``params/controller.yaml``) unless ``args`` set them."""
    args = with_dive(args)
    placement = launch_arg(args, "placement", "topside")
    omega = launch_arg(args, "omega_d")
    omega_d = float(omega) if omega is not None else load_controller_params().omega_d_rad_s
    return placement, omega_d, load_dive_csv(launch_arg(args, "dive")).duration_s


def fly(args, timeout_s, env=None, run=subprocess.run):
    """Run ``scripts/run_dive.sh`` with ``args``; returns {args, exit_code, output, folder, summary}
    (folder and summary None when the run named none or wrote none)."""
    done = run(["bash", os.path.join(paths.package_root(), "scripts", "run_dive.sh")] + list(args),
               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout_s,
               env=env)
    match = RUN_FOLDER.findall(done.stdout)
    folder = match[-1] if match else None
    summary = script = None
    if folder:
        found = sorted(glob.glob(os.path.join(folder, "*_summary.json")))
        if len(found) == 1:
            with open(found[0]) as handle:
                summary = json.load(handle)
        script = script_reports(os.path.join(folder, "roslaunch.log"))
    return {"args": list(args), "exit_code": done.returncode, "output": done.stdout, "folder": folder,
            "summary": summary, "script": script}


def script_reports(launch_log):
    """The on-board script's own rate and loop periods over the whole run, as the bridge logged them at
    its end (the last "... reports ... since the start" line of ``launch_log``;
    :func:`~brov2_hybrid.onboard.uplink.parse_reports_summary`), or None (no such line: a topside run)."""
    from brov2_hybrid.onboard.uplink import parse_reports_summary
    if not os.path.exists(launch_log):
        return None
    with open(launch_log, errors="replace") as handle:
        lines = [line for line in handle if "on-board script reports" in line and "since the start" in line]
    return parse_reports_summary(lines[-1]) if lines else None


def refusal(flight, placement, omega_d, duration_s, margin_s):
    """Why ``flight`` (:func:`fly`) is not a real flight of ``placement`` at ``omega_d`` over a dive of
    ``duration_s``, or None when it is."""
    if flight["exit_code"] != 0:
        return "make run exited %d" % flight["exit_code"]
    summary = flight["summary"]
    if summary is None:
        return "no run summary (*_summary.json) in the run folder %s" % (
            os.path.basename(flight["folder"].rstrip("/")) if flight["folder"] else None)
    if summary.get("placement") != placement:
        return "the run summary names placement %r, not %r" % (summary.get("placement"), placement)
    if summary.get("omega_d_rad_s") is None or abs(summary["omega_d_rad_s"] - omega_d) > 1e-9:
        return "the run summary names omega_d %r, not %g" % (summary.get("omega_d_rad_s"), omega_d)
    if not summary.get("duration_s") or summary["duration_s"] < duration_s - margin_s:
        return "the log covers %s s of the %.0f s dive" % (summary.get("duration_s"), duration_s)
    if summary.get("ticks_not_active"):
        return "%d of %d logged ticks were not ACTIVE (the law did not fly all of the dive)" % (
            summary["ticks_not_active"], summary.get("ticks", 0))
    if any(summary.get("iae_%s_deg_s" % a) is None for a in AXES):
        return "the run summary has no IAE"
    return None


def summed_iae(summary):
    """Roll + pitch + yaw IAE [deg s] of a run summary."""
    return sum(summary["iae_%s_deg_s" % a] for a in AXES)


def onboard_pair_experiment(ctx=None, settings=None, progress=print, fly_run=None, env=None):
    """Fly both sides (:class:`PairSettings`); returns the summary :func:`markdown_table` renders. Raises
    Brov2Error when a side has no accepted run after its attempts (nothing to compare)."""
    settings = settings or load_pair_settings()
    if fly_run is None:
        from brov2_hybrid.sim.ardusub_sitl import free_instance
        if env is None and ctx is not None:     # the runs' folders beside the experiment's other output
            env = dict(os.environ, BROV2_RUNS_DIR=os.path.join(os.path.abspath(ctx.out_dir), "onboard_pair_runs"))

        def fly_run(args):      # a free SITL instance each run (another SITL may be running)
            return fly(with_dive(args) + ["instance:=%d" % free_instance()], settings.timeout_s, env=env)
    sides = {}
    for side, args in (("topside", settings.topside_args), ("onboard", settings.onboard_args)):
        placement, omega_d, duration_s = expected_run(args)
        flights, refused = [], []
        for attempt in range(settings.trials * settings.attempts):
            if len(flights) == settings.trials:
                break
            flight = fly_run(args)
            why = refusal(flight, placement, omega_d, duration_s, settings.duration_margin_s)
            if why:
                refused.append({"attempt": attempt + 1, "reason": why,
                                "folder": os.path.basename(flight["folder"].rstrip("/")) if flight["folder"] else None})
                progress("onboard-pair: %s run %d refused: %s" % (side, attempt + 1, why))
                continue
            s = flight["summary"]
            flights.append({"folder": os.path.basename(flight["folder"].rstrip("/")), "sum_deg_s": summed_iae(s),
                            "script": flight.get("script"), **{a: s["iae_%s_deg_s" % a] for a in AXES}})
            progress("onboard-pair: %s run %d: summed IAE %.1f deg s" % (side, attempt + 1, summed_iae(s)))
        if not flights:
            raise Brov2Error("onboard-pair: no %s run flew (%d refused: %s)"
                             % (side, len(refused), "; ".join(r["reason"] for r in refused)))
        sides[side] = {"args": list(args), "placement": placement, "omega_d_rad_s": omega_d,
                       "dive_duration_s": duration_s, "flights": flights, "refused": refused,
                       "median_sum_deg_s": statistics.median(f["sum_deg_s"] for f in flights)}
    ratio = sides["onboard"]["median_sum_deg_s"] / sides["topside"]["median_sum_deg_s"]
    return {"sides": sides, "ratio": ratio, "goal_ratio": settings.goal_ratio,
            "verdict": "met" if ratio <= settings.goal_ratio else "not met"}


def markdown_table(summary):
    """The generated block ``onboard_pair`` (docs/onboard.md): one row per side, then the verdict."""
    lines = ["`make run` on real ArduSub 4.5 SITL, the bundled dive, each side flown %s, one run after the other; "
             "summed IAE (roll + pitch + yaw) on the attitude the vehicle reports, medians with (min...max):"
             % ("%d times" % len(summary["sides"]["topside"]["flights"])
                if len(summary["sides"]["topside"]["flights"]) == len(summary["sides"]["onboard"]["flights"])
                else "the number of times shown"),
             "",
             "| make run ARGS | placement | omega_d [rad/s] | runs scored / refused | IAE roll / pitch / yaw [deg s] "
             "| summed IAE [deg s] | the script's rate [Hz], its loop period [ms] |",
             "|---|---|---|---|---|---|---|"]
    for side in ("topside", "onboard"):
        d = summary["sides"][side]
        sums = [f["sum_deg_s"] for f in d["flights"]]
        axes = " / ".join("%.0f" % statistics.median(f[a] for f in d["flights"]) for a in AXES)
        lines.append("| `%s` | %s | %g | %d / %d | %s | %.0f (%.0f...%.0f) | %s |"
                     % (" ".join(d["args"]), d["placement"], d["omega_d_rad_s"], len(d["flights"]), len(d["refused"]),
                        axes, d["median_sum_deg_s"], min(sums), max(sums), script_cell(d["flights"])))
    lines += ["", "On board / topside: **%.2f** (goal <= %g: **%s**)." % (summary["ratio"], summary["goal_ratio"],
                                                                         summary["verdict"])]
    refused = [(side, r) for side in ("topside", "onboard") for r in summary["sides"][side]["refused"]]
    if refused:
        lines += [""] + ["* refused, %s run %d: %s" % (side, r["attempt"], r["reason"]) for side, r in refused]
    return lines


def script_cell(flights):
    """The script's reports over ``flights``: the median rate of each run, the lowest and highest report, the
    shortest and longest loop period and the median of each report's longest; "—" without reports."""
    reports = [f["script"] for f in flights if f.get("script")]
    if not reports:
        return "—"
    text = "%s median (%d...%d)" % (", ".join("%d" % r["rate_hz_median"] for r in reports),
                                    min(r["rate_hz_min"] for r in reports), max(r["rate_hz_max"] for r in reports))
    periods = [r for r in reports if r["period_ms_max"] is not None]
    if periods:
        text += "; %d...%d, longest per report %s median" % (
            min(r["period_ms_min"] for r in periods), max(r["period_ms_max"] for r in periods),
            ", ".join("%d" % r["longest_ms_median"] for r in periods))
    return text


def add_parser(sub, parents):
    """The ``onboard-pair`` subcommand (``brov2-analyze``) on the subparsers ``sub``."""
    p = sub.add_parser("onboard-pair", parents=parents,
                       help="the bundled dive by make run on real ArduSub SITL, topside at the default omega_d and on "
                            "board (the Lua script) at a higher one: summed IAE and their ratio (params/analysis.yaml "
                            "onboard_pair; make ardusub first)")
    p.add_argument("--docs", action="store_true", help="also write docs/tables/onboard_pair.json and its generated "
                   "block (docs/onboard.md)")
    return p


def run(ctx, args):
    """``brov2-analyze onboard-pair``: :func:`onboard_pair_experiment` in ``ctx``; returns its summary."""
    return onboard_pair_experiment(ctx, progress=(lambda text: None) if getattr(args, "quiet", False) else print)


def console_lines(summary):
    """Terminal lines: each side's median and the ratio."""
    return "\n".join(["  %-8s %s: summed IAE %.1f deg s (median of %d; %d refused)"
                      % (side, " ".join(summary["sides"][side]["args"]), summary["sides"][side]["median_sum_deg_s"],
                         len(summary["sides"][side]["flights"]), len(summary["sides"][side]["refused"]))
                      for side in ("topside", "onboard")]
                     + ["  on board / topside %.2f (goal <= %g: %s)" % (summary["ratio"], summary["goal_ratio"],
                                                                        summary["verdict"])])


def report_section(summary):
    """REPORT.md section "On board vs topside (make run)"."""
    lines = ["## On board vs topside (make run)", ""]
    if "skipped" in summary:
        return lines + ["Not run: %s." % summary["skipped"], ""]
    return lines + markdown_table(summary) + [""]
