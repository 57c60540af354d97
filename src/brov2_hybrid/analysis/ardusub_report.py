"""REPORT.md section and terminal lines of the real-ArduSub comparison
(:mod:`brov2_hybrid.analysis.ardusub_experiment`); verdicts are computed from the figures."""
from brov2_hybrid.analysis.context import AXES
from brov2_hybrid.analysis.report_format import fmt


def console_lines(summary):
    """Terminal lines: the step table and the dive table."""
    lines = ["  %-22s %-11s IAE %7.2f deg s  settling %5.2f s  overshoot %5.1f %%  effort %6.2f s"
             % (r["case"], r["input"], r["iae_deg_s"], r["settling_s"], r["overshoot_pct"], r["effort_s"])
             for r in summary["steps"]]
    lines += ["  dive %-28s IAE r/p/y %6.1f / %6.1f / %6.1f deg s  effort %7.1f s"
              % (r["case"], r["iae_roll_deg_s"], r["iae_pitch_deg_s"], r["iae_yaw_deg_s"], r["effort_s"])
              for r in summary["dive"]]
    return "\n".join(lines)


def _pct(a, b):
    return 100.0 * (a - b) / b


def markdown_table(summary):
    """The bundled dive's and the steps' tables (REPORT.md and the generated block of the docs)."""
    lines = ["### The bundled dive (150 s)", "",
             "IAE on ArduSub's own attitude estimate (what a logger on the vehicle records) and on the physics' "
             "truth; the run's shallowest true depth and the attitude reader's largest lag behind ArduSub; "
             "hybrid topside latency: telemetry %s ms, command %s ms." % (
                 fmt(1e3 * summary.get("telemetry_delay_s", 0.0), "%.0f"),
                 fmt(1e3 * summary.get("command_delay_s", 0.0), "%.0f")), "",
             "| case | IAE roll / pitch / yaw [deg s] | true IAE roll / pitch / yaw [deg s] | max error r / p / y [deg] "
             "| effort [s] | min depth [m] | reader lag [ms] |", "|---|---|---|---|---|---|---|"]
    for r in summary["dive"]:
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["case"], " / ".join(fmt(r.get("iae_%s_deg_s" % a), "%.1f") for a in AXES),
            " / ".join(fmt(r.get("true_iae_%s_deg_s" % a), "%.1f") for a in AXES),
            " / ".join(fmt(r.get("max_error_%s_deg" % a), "%.1f") for a in AXES), fmt(r.get("effort_s"), "%.0f"),
            fmt(r.get("min_depth_m"), "%.1f"),
            fmt(None if r.get("max_reader_lag_s") is None else 1e3 * r["max_reader_lag_s"], "%.0f")))
    lines += ["", "### One step per axis", "",
              "| case | input | IAE [deg s] | settling [s] | overshoot [%] | effort [s] |", "|---|---|---|---|---|---|"]
    for r in summary["steps"]:
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            r["case"], r["input"], fmt(r["iae_deg_s"]), fmt(r["settling_s"]), fmt(r["overshoot_pct"], "%.1f"),
            fmt(r["effort_s"])))
    return lines + ["", "ArduSub tuned over its rate P/I/D, angle P and acceleration limit per axis (x%s of each); "
                    "ATC_INPUT_TC, ATC_SLEW_YAW and the rate filters were left at their defaults." %
                    ", x".join("%g" % f for f in summary["tune_factors"])]


def report_section(summary):
    """REPORT.md section "Hybrid autopilot vs ArduSub's attitude control" (verdicts from the figures)."""
    lines = ["## Hybrid autopilot vs ArduSub's attitude control", ""]
    if "skipped" in summary:
        return lines + ["Not run: %s." % summary["skipped"], ""]
    dive = {r["case"]: r for r in summary["dive"]}
    w = summary["omega_d_dive"]
    hybrid, sim = dive["hybrid w=%g" % w], dive["hybrid w=%g, our simulator" % w]
    default, tuned = dive["ardusub default"], dive["ardusub tuned"]
    lines += [
        "Real ArduSub 4.5 SITL flying our vehicle model (`brov2-analyze ardusub`, docs/simulator.md \"Real ArduSub on our "
        "physics\"). The hybrid autopilot flies in MANUAL with the stock-compensated output stage; ArduSub's own "
        "attitude controller is commanded by SET_ATTITUDE_TARGET in ALT_HOLD (the one way ArduSub 4.5 takes an "
        "absolute attitude without a position fix), with its default gains and with gains tuned on this vehicle "
        "(rate P/I/D, angle P, acceleration limit per axis, each tried at x%s; gains below). Attitudes are "
        "ArduSub's own estimate, as a logger on the vehicle records them; effort is the time integral of "
        "sum |PWM - 1500| / 400 over the motors [s]." % ", x".join("%g" % f for f in summary["tune_factors"]), "",
        ] + markdown_table(summary)
    lines += ["", "![steps](ardusub_steps.png)", "", "![dive](ardusub_dive.png)", "", "### Verdict", ""]
    def against(other):
        lower = [a for a in AXES if hybrid["iae_%s_deg_s" % a] < other["iae_%s_deg_s" % a]]
        where = ("lower on every axis" if len(lower) == 3 else "lower on %s only" % ", ".join(lower) if lower
                 else "not lower on any axis")
        return "%s (%s)" % (where, ", ".join("%s %+.0f %%" % (a, _pct(hybrid["iae_%s_deg_s" % a],
                                                                     other["iae_%s_deg_s" % a])) for a in AXES))

    lines.append("- Dive at omega_d %g: the hybrid autopilot's IAE is %s against ArduSub's tuned controller, "
                 "and %s against its default gains." % (w, against(tuned), against(default)))
    hybrids = [r for r in summary["dive"] if r["case"].startswith("hybrid") and "simulator" not in r["case"]]
    for axis in AXES:
        key = "iae_%s_deg_s" % axis
        best = min(hybrids, key=lambda r: r[key])
        lines.append("- Dive, %s: best hybrid (%s) %.1f deg s, tuned ArduSub %.1f deg s (%s)." % (
            axis, best["case"], best[key], tuned[key],
            "hybrid lower" if best[key] < tuned[key] else "ArduSub lower"))
    steps = {(r["case"], r["input"]): r for r in summary["steps"]}
    for axis in AXES:
        best = min((r for r in summary["steps"] if r["case"].startswith("hybrid") and r["input"] == "%s step" % axis),
                   key=lambda r: r["iae_deg_s"])
        t = steps[("ardusub tuned", "%s step" % axis)]
        lines.append("- %s step: best hybrid (%s) IAE %.2f deg s at effort %.2f s; tuned ArduSub %.2f deg s at "
                     "effort %.2f s." % (axis, best["case"], best["iae_deg_s"], best["effort_s"], t["iae_deg_s"],
                                         t["effort_s"]))
    lines.append("- Real ArduSub vs our simulator (hybrid, same dive, IAE against the attitude each one "
                 "reports): %s. ArduSub's attitude estimate against the physics' truth: RMS %.2f / %.2f / %.2f deg "
                 "(roll / pitch / yaw), best-aligning lag %.0f ms (EKF3 at 400 Hz adds no delay at 50 Hz "
                 "control). Against the truth the hybrid's IAE on ArduSub is %.0f / %.0f / %.0f deg s: the "
                 "vehicle holds the heading ArduSub believes, and the estimate's heading offset (EKF3 yaw from "
                 "the simulated compass) is what separates the yaw figures." % (
                     ", ".join("%s %+.1f %%" % (a, _pct(hybrid["iae_%s_deg_s" % a], sim["iae_%s_deg_s" % a]))
                               for a in AXES),
                     hybrid["est_rms_roll_deg"], hybrid["est_rms_pitch_deg"], hybrid["est_rms_yaw_deg"],
                     1000 * hybrid["est_lag_s"], hybrid["true_iae_roll_deg_s"], hybrid["true_iae_pitch_deg_s"],
                     hybrid["true_iae_yaw_deg_s"]))
    lines += ["", "Gains (default -> tuned): " + ", ".join(
        "%s %g -> %g" % (k, v, summary["gains"]["tuned"].get(k, v))
        for k, v in sorted(summary["gains"]["default"].items()) if summary["gains"]["tuned"].get(k, v) != v), ""]
    return lines
