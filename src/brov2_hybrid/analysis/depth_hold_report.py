"""Table, REPORT.md section, terminal lines and figure of the depth hold vs ALT_HOLD comparison
(:mod:`brov2_hybrid.analysis.depth_hold_compare`); verdicts are computed from the figures."""
import numpy as np

from brov2_hybrid.analysis import plots
from brov2_hybrid.analysis.report_format import fmt, image

FIGURE = "depth_hold_compare.png"


def console_lines(summary):
    """Terminal lines: one per pilot."""
    return "\n".join("  %-18s hold RMS %6.3f m  max %6.3f m  effort (vertical) %6.1f s  step %6.3f m of %.3f m, "
                     "settling %s s  ArduSub's depth - true %6.3f m" % (
                         r["case"], r["hold_rms_m"], r["hold_max_m"], r["hold_effort_vertical_s"], r["step_final_m"],
                         r["step_commanded_m"], fmt(r["step_settling_s"]), r["reading_offset_m"])
                     for r in summary["rows"])


def _verdict(summary):
    """Sentences comparing the two rows (hybrid first, ALT_HOLD second), from the figures."""
    h, a = summary["rows"][0], summary["rows"][1]

    def ratio(key):
        return "%.2f x" % (h[key] / a[key]) if a[key] else "n/a"

    return ["- Hold: the hybrid depth hold's RMS error is %s ALT_HOLD's (%s m vs %s m), its largest error %s "
            "(%s m vs %s m), at %s the vertical motors' effort." % (
                ratio("hold_rms_m"), fmt(h["hold_rms_m"], "%.3f"), fmt(a["hold_rms_m"], "%.3f"), ratio("hold_max_m"),
                fmt(h["hold_max_m"], "%.3f"), fmt(a["hold_max_m"], "%.3f"), ratio("hold_effort_vertical_s")),
            "- Step of %s m asked (full stick for %g s at %g m/s): the hybrid moved %s m, ALT_HOLD %s m." % (
                fmt(h["step_commanded_m"], "%.2f"), summary["plan"]["step_s"], summary["max_depth_rate_m_s"],
                fmt(h["step_final_m"], "%.3f"), fmt(a["step_final_m"], "%.3f")),
            "- What the pilots read: ArduSub's reported depth was %s m / %s m deeper than the physics on "
            "average (hybrid's / ALT_HOLD's flight; least squares: reported = %s x true + %s m and %s x true + %s m). "
            "Its first report read %s m / %s m while the vehicle floated at %s m / %s m. Both pilots hold on "
            "ArduSub's depth; the errors above are on the physics' true depth." % (
                fmt(h["reading_offset_m"], "%.3f"), fmt(a["reading_offset_m"], "%.3f"), fmt(h["reading_scale"], "%.3f"),
                fmt(h["reading_intercept_m"], "%.3f"), fmt(a["reading_scale"], "%.3f"),
                fmt(a["reading_intercept_m"], "%.3f"), fmt(h["first_reading_m"], "%.3f"), fmt(a["first_reading_m"], "%.3f"),
                fmt(h["first_reading_true_m"], "%.3f"), fmt(a["first_reading_true_m"], "%.3f"))]

def _ranged(row, key, pattern="%.3f"):
    """``mean (min..max)`` of a measure over the flights (the mean alone without a range)."""
    span = row.get(key + "_range")
    text = fmt(row[key], pattern)
    return text if not span else "%s (%s..%s)" % (text, fmt(span[0], pattern), fmt(span[1], pattern))


def markdown_table(summary):
    """The comparison's table and verdict (REPORT.md and the generated block of docs/depth-hold.md)."""
    p = summary["plan"]
    lines = ["Flight per pilot (fresh SITL booted at %g m, ArduSub --speedup %g): full stick down %g s, %g s "
             "settling, the bundled dive (`%s`, %.0f s) with its heave stick at 0, full stick down %g s, %g s "
             "settling. Hybrid at omega_d %g, topside latency: telemetry %s ms, command %s ms. Depths are the "
             "physics' true depth at each ATTITUDE message's time; each figure is the mean over %d flights per pilot, "
             "each on a fresh SITL (smallest..largest in brackets); step settling: into +-%g %% of the step's final "
             "change for good (n/a: not within the flight)." % (
                 p["start_depth_m"], summary["speedup"], p["descent_s"], p["settle_s"], summary["dive"], p["hold_s"],
                 p["step_s"], p["after_step_s"], summary["omega_d"], fmt(1e3 * summary["telemetry_delay_s"], "%.0f"),
                 fmt(1e3 * summary["command_delay_s"], "%.0f"), summary["rows"][0].get("flights", 1),
                 100 * summary["settle_band"]), "",
             "| pilot | mode | depth it holds on | hold RMS [m] | hold max [m] | hold drift [m] | hold effort "
             "vertical / all [s] | step asked / moved [m] | step overshoot [m] | step settling [s] | ArduSub's depth - true: "
             "mean / RMS about it [m] | reader lag [ms] |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary["rows"]:
        lines.append("| %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s / %s | %s |" % (
            r["case"], r["mode"], r["reads"], _ranged(r, "hold_rms_m"), _ranged(r, "hold_max_m"),
            fmt(r["hold_drift_m"], "%+.3f"), fmt(r["hold_effort_vertical_s"], "%.0f"), fmt(r["hold_effort_all_s"], "%.0f"),
            fmt(r["step_commanded_m"], "%.2f"), _ranged(r, "step_final_m"), fmt(r["step_overshoot_m"], "%.3f"),
            fmt(r["step_settling_s"], "%.1f"), _ranged(r, "reading_offset_m", "%+.3f"), fmt(r["reading_rms_m"], "%.3f"),
            fmt(None if r.get("max_reader_lag_s") is None else 1e3 * r["max_reader_lag_s"], "%.0f")))
    params = summary.get("alt_hold_params", {})
    lines += ["", "ALT_HOLD's parameters (ArduSub default -> flown): " + ", ".join(
        "%s %g -> %g" % (k, v["default"], v["flown"]) for k, v in sorted(params.items())) + ".", ""]
    return lines + _verdict(summary)


def report_section(summary):
    """REPORT.md section "Depth hold vs ArduSub's ALT_HOLD"."""
    lines = ["## Depth hold vs ArduSub's ALT_HOLD", ""]
    if "skipped" in summary:
        return lines + ["Not run: %s." % summary["skipped"], ""]
    return lines + ["Real ArduSub 4.5 SITL flying our vehicle model (`brov2-analyze depth-hold-compare`, "
                    "docs/depth-hold.md).", ""] + markdown_table(summary) + ["", image(FIGURE), ""]


def plot_flights(ctx, logs, rows, t_hold, t_step, commanded_m, step_s):
    """True depth over each flight, the hold's error and the step's change; returns the file names.

    ``logs`` / ``rows``: {case: flight log} / {case: its measures}."""
    plt = plots.plt
    fig, axes = plt.subplots(3, 1, figsize=(11, 9))
    for case, log in logs.items():
        t, d = log["time_s"], log["depth_m"]
        line, = axes[0].plot(t, d, lw=1.0, label="%s: true depth" % case)
        axes[0].plot(t, log["depth_reading_m"], lw=0.6, ls=":", color=line.get_color(),
                     label="%s: ArduSub's reported depth" % case)
        hold = (t >= t_hold) & (t < t_step)
        axes[1].plot(t[hold] - t_hold, d[hold] - rows[case]["held_depth_m"], lw=0.8, color=line.get_color(), label=case)
        after = t >= t_step
        axes[2].plot(t[after] - t_step, d[after] - rows[case]["step_start_depth_m"], lw=1.0, color=line.get_color(), label=case)
    ramp = np.array([0.0, step_s, t[-1] - t_step])
    axes[2].plot(ramp, np.clip(ramp, 0.0, step_s) * commanded_m / step_s, "k--", lw=0.7, label="asked (stick x rate)")
    for x in (t_hold, t_step):
        axes[0].axvline(x, color="k", lw=0.5)
    labels = (("flight time [s]", "depth [m, down]"), ("time in the hold [s]", "true depth - held depth [m]"),
              ("time after the step [s]", "depth change [m]"))
    for ax, (xl, yl) in zip(axes, labels):
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].invert_yaxis()
    fig.tight_layout()
    plots.save_figure(fig, ctx.path(FIGURE))
    return [FIGURE]
