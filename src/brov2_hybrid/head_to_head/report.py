"""The head-to-head's verdict as markdown: the generated block ``head_to_head`` of docs/experiments.md
(:func:`markdown_table`, rendered from the saved summary by :mod:`brov2_hybrid.analysis.doc_tables`,
which reaches this module by name) and the lines for the terminal (:func:`console_lines`).

Where each side wins is read from the points' medians: per scoring dive, ArduSub's best setting (least
summed true-attitude IAE) against the hybrid's best in each placement at no more motor effort.
"""
from brov2_hybrid.head_to_head.scoring import best_at_effort

ORDER = ("ardusub", "tether", "realistic", "onboard")


def _latency(summary, placement):
    if placement == "ardusub":
        return "on board, 400 Hz"
    p = summary["placements"].get(placement)
    if not p:
        return placement
    return "%g Hz + %g / %g ms" % (p["telemetry_rate_hz"], 1000 * p["telemetry_delay_s"], 1000 * p["command_delay_s"])


def _span(p, key, form="%.0f"):
    return (form + " (" + form + "..." + form + ")") % (p[key], p[key + "_min"], p[key + "_max"])


def verdicts(summary):
    """One sentence per (scoring dive, hybrid placement): who wins on summed true IAE at no more effort."""
    out = []
    for dive in summary["dives"]:
        pts = [p for p in summary["points"] if p["dive"] == dive["name"]]
        ref = best_at_effort(pts, "ardusub")
        if ref is None:
            out.append("%s: no scored ArduSub flight, no verdict." % dive["name"])
            continue
        for placement in ORDER[1:]:
            if not any(p["placement"] == placement for p in pts):
                continue
            mine = best_at_effort(pts, "hybrid", ref["effort_s"], placement)
            head = "%s, hybrid %s (%s) vs ArduSub %s (IAE %.0f deg s at effort %.0f s)" % (
                dive["name"], placement, _latency(summary, placement), ref["setting"], ref["iae_true_sum"],
                ref["effort_s"])
            if mine is None:
                low = min((p for p in pts if p["placement"] == placement), key=lambda p: p["effort_s"])
                best = best_at_effort(pts, "hybrid", placement=placement)
                ratio = best["iae_true_sum"] / ref["iae_true_sum"] if ref["iae_true_sum"] > 0 else float("inf")
                out.append("%s: no hybrid setting at no more effort (its least is %.0f s), so ArduSub wins there; at "
                           "any effort the hybrid's best, %s, reaches IAE %.0f deg s at %.0f s (hybrid / ArduSub IAE "
                           "%.2f: %s)." % (head, low["effort_s"], best["setting"], best["iae_true_sum"], best["effort_s"],
                                          ratio, "better, for more effort" if ratio < 1.0 else "worse and dearer"))
                continue
            ratio = mine["iae_true_sum"] / ref["iae_true_sum"] if ref["iae_true_sum"] > 0 else float("inf")
            who = "the hybrid wins" if ratio < 1.0 else "ArduSub wins"
            out.append("%s: hybrid %s reaches IAE %.0f deg s at effort %.0f s, %s (hybrid / ArduSub IAE %.2f)."
                       % (head, mine["setting"], mine["iae_true_sum"], mine["effort_s"], who, ratio))
    return out


def markdown_table(summary):
    """The generated block's lines: one table per scoring dive, then the verdicts."""
    lines = ["Scoring dives: %s; %d trial%s per point, medians with (min...max); %d flights scored, %d refused "
             "(flown again, up to the settings' attempts)." % (
                 ", ".join("%s (%.0f s)" % (d["name"], d["duration_s"]) for d in summary["dives"]), summary["trials"],
                 "" if summary["trials"] == 1 else "s", summary["flights"], summary["refusals"]),
             "Stored settings: ArduSub %s; hybrid %s. IAE summed over roll, pitch and yaw [deg s] on the physics' "
             "true attitude and on ArduSub's estimate; effort: motor effort [s]; depth: true depth against the "
             "heave stick's depth (both hold depth) [m]." % ("; ".join(summary["ardusub_status"]),
                                                           summary["hybrid_status"]), ""]
    for dive in summary["dives"]:
        lines += ["#### %s" % dive["name"], "",
                  "| pilot | placement (latency) | setting | true IAE r / p / y | true IAE sum | estimate IAE sum | "
                  "effort [s] | depth RMS / max [m] |", "|---|---|---|---|---|---|---|---|"]
        pts = [p for p in summary["points"] if p["dive"] == dive["name"]]
        pts.sort(key=lambda p: (ORDER.index(p["placement"]) if p["placement"] in ORDER else 9, p["setting"]))
        for p in pts:
            lines.append("| %s | %s (%s) | %s | %.0f / %.0f / %.0f | %s | %s | %s | %.2f / %.2f |" % (
                p["pilot"], p["placement"], _latency(summary, p["placement"]), p["setting"], p["iae_true_roll"],
                p["iae_true_pitch"], p["iae_true_yaw"], _span(p, "iae_true_sum"), _span(p, "iae_est_sum"),
                _span(p, "effort_s"), p["depth_rms_m"], p["depth_max_m"]))
        lines.append("")
    lines += ["Verdict (medians; generated from the table above):", ""]
    lines += ["* %s" % v for v in verdicts(summary)]
    if summary.get("unscored"):
        lines += ["", "Not scored (every attempt refused): %s." % "; ".join(
            "%s %s %s on %s, trial %s" % tuple(u) for u in summary["unscored"])]
    return lines


def console_lines(summary):
    """The verdicts, for the terminal."""
    return "\n".join(["  " + v for v in verdicts(summary)])


def report_section(summary):
    """REPORT.md section "Head-to-head with tuned ArduSub": the same tables and verdicts as the docs' block."""
    lines = ["## Head-to-head with tuned ArduSub", ""]
    if "skipped" in summary:
        return lines + ["Not run: %s." % summary["skipped"], ""]
    return lines + ["Real ArduSub 4.5 SITL flying our vehicle model (`brov2-analyze head-to-head`, docs/experiments.md "
                    "\"Head-to-head with tuned ArduSub\"): the stored settings of both sides on the held-out dives.",
                    ""] + markdown_table(summary) + [""]

