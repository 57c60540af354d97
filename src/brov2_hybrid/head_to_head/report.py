"""The head-to-head's verdict as markdown: the generated block ``head_to_head`` of docs/experiments.md
(:func:`markdown_table`, rendered from the saved summary by :mod:`brov2_hybrid.analysis.doc_tables`,
which reaches this module by name) and the lines for the terminal (:func:`console_lines`).

Where each side wins is read from the points' medians: per scoring dive and hybrid placement, ArduSub's
best setting (least summed true-attitude IAE) behind the same pilot link (the pilot's input reaches
either vehicle over the same tether) against the hybrid's best in that placement at no more motor effort,
and apart at no more electric energy; then axis by axis.
"""
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES as AXES
from brov2_hybrid.head_to_head.scoring import best_at_effort

ORDER = ("ardusub", "tether", "realistic", "onboard")


def _latency(summary, placement, pilot_link_ms=None):
    """A point's latency: the loop's (ArduSub's: on board), and how late the pilot's input reached it."""
    if placement == "ardusub":
        return "on board, 400 Hz; pilot input +%g ms" % pilot_link_ms if pilot_link_ms is not None \
            else "on board, 400 Hz"
    p = summary["placements"].get(placement)
    if not p:
        return placement
    text = "%g Hz + %g / %g ms" % (p["telemetry_rate_hz"], 1000 * p["telemetry_delay_s"], 1000 * p["command_delay_s"])
    if p.get("reference_delay_s"):
        text += "; pilot input +%g ms" % (1000 * p["reference_delay_s"])
    return text


def _link_ms(summary, placement):
    p = summary["placements"].get(placement) or {}
    return 1000.0 * p["pilot_link_s"] if "pilot_link_s" in p else None


def _span(p, key, form="%.0f"):
    return (form + " (" + form + "..." + form + ")") % (p[key], p[key + "_min"], p[key + "_max"])


def verdicts(summary):
    """One sentence per (scoring dive, hybrid placement): who wins on summed true IAE at no more motor effort,
    and at no more electric energy, against ArduSub behind the same pilot link."""
    out = []
    for dive in summary["dives"]:
        pts = [p for p in summary["points"] if p["dive"] == dive["name"]]
        for placement in ORDER[1:]:
            if not any(p["placement"] == placement for p in pts):
                continue
            link = _link_ms(summary, placement)
            ref = best_at_effort(pts, "ardusub", pilot_link_ms=link)
            if ref is None:
                out.append("%s, hybrid %s: no scored ArduSub flight behind the same pilot link, no verdict."
                           % (dive["name"], placement))
                continue
            head = "%s, hybrid %s (%s) vs ArduSub %s with the pilot's input +%g ms (IAE %.0f deg s)" % (
                dive["name"], placement, _latency(summary, placement), ref["setting"], ref["pilot_link_ms"],
                ref["iae_true_sum"])
            parts = [_at_budget(pts, ref, placement, budget, unit, name)
                     for budget, unit, name in (("effort_s", "s", "motor effort"), ("energy_kj", "kJ", "electric energy"))
                     if budget in ref and ref[budget] == ref[budget]]      # NaN: no power table
            out.append("%s: %s. %s" % (head, "; ".join(parts), _per_axis(pts, ref, placement)))
    return out


def _per_axis(pts, ref, placement):
    """Where the hybrid's best (least summed true IAE, at any cost) and ArduSub differ, axis by axis."""
    best = best_at_effort(pts, "hybrid", placement=placement)
    pairs = [(axis, best["iae_true_%s" % axis], ref["iae_true_%s" % axis]) for axis in AXES]
    ahead = [axis for axis, mine, theirs in pairs if mine < theirs]
    return "Per axis, true IAE hybrid (%s) / ArduSub [deg s]: %s; the hybrid ahead on %s." % (
        best["setting"], ", ".join("%s %.0f / %.0f" % p for p in pairs), " and ".join(ahead) if ahead else "none")


def _at_budget(pts, ref, placement, budget, unit, name):
    """The verdict's clause for one budget (motor effort or electric energy): the hybrid's best at no more
    than ArduSub spent, or, when none is, its best at any cost."""
    mine = best_at_effort(pts, "hybrid", ref[budget], placement, budget=budget)
    if mine is None:
        low = min((p for p in pts if p["placement"] == placement), key=lambda p: p[budget])
        best = best_at_effort(pts, "hybrid", placement=placement)
        ratio = best["iae_true_sum"] / ref["iae_true_sum"] if ref["iae_true_sum"] > 0 else float("inf")
        return ("at no more %s than ArduSub's %.0f %s no hybrid setting (its least is %.0f %s), so ArduSub wins "
                "there, and at any %s the hybrid's best, %s, reaches IAE %.0f deg s at %.0f %s (hybrid / ArduSub IAE "
                "%.2f: %s)" % (name, ref[budget], unit, low[budget], unit, name, best["setting"],
                               best["iae_true_sum"], best[budget], unit, ratio,
                               "better, for more %s" % name if ratio < 1.0 else "worse and dearer"))
    ratio = mine["iae_true_sum"] / ref["iae_true_sum"] if ref["iae_true_sum"] > 0 else float("inf")
    who = "the hybrid wins" if ratio < 1.0 else "ArduSub wins"
    return ("at no more %s than ArduSub's %.0f %s, hybrid %s reaches IAE %.0f deg s at %.0f %s, %s (hybrid / "
            "ArduSub IAE %.2f)" % (name, ref[budget], unit, mine["setting"], mine["iae_true_sum"], mine[budget], unit,
                                   who, ratio))


def markdown_table(summary):
    """The generated block's lines: one table per scoring dive, then the verdicts."""
    lines = ["Scoring dives: %s; %d trial%s per point, medians with (min...max); %d flights scored, %d refused "
             "(flown again, up to the settings' attempts)." % (
                 ", ".join("%s (%.0f s)" % (d["name"], d["duration_s"]) for d in summary["dives"]), summary["trials"],
                 "" if summary["trials"] == 1 else "s", summary["flights"], summary["refusals"]),
             "Stored settings: ArduSub %s; hybrid %s. IAE summed over roll, pitch and yaw [deg s] on the physics' "
             "true attitude and on ArduSub's estimate; effort: motor effort [s]; energy: the electric energy the "
             "thrusters drew, from the T200 bench table's power [kJ]; depth: true depth against the "
             "heave stick's depth (both hold depth) [m]." % ("; ".join(summary["ardusub_status"]),
                                                           summary["hybrid_status"]), ""]
    for dive in summary["dives"]:
        lines += ["#### %s" % dive["name"], "",
                  "| pilot | placement (latency) | setting | true IAE r / p / y | true IAE sum | estimate IAE sum | "
                  "effort [s] | energy [kJ] | depth RMS / max [m] |", "|---|---|---|---|---|---|---|---|---|"]
        pts = [p for p in summary["points"] if p["dive"] == dive["name"]]
        pts.sort(key=lambda p: (ORDER.index(p["placement"]) if p["placement"] in ORDER else 9, p["setting"],
                                p.get("pilot_link_ms", 0.0)))
        for p in pts:
            lines.append("| %s | %s (%s) | %s | %.0f / %.0f / %.0f | %s | %s | %s | %s | %.2f / %.2f |" % (
                p["pilot"], p["placement"], _latency(summary, p["placement"], p.get("pilot_link_ms")), p["setting"],
                p["iae_true_roll"],
                p["iae_true_pitch"], p["iae_true_yaw"], _span(p, "iae_true_sum"), _span(p, "iae_est_sum"),
                _span(p, "effort_s"), _span(p, "energy_kj", "%.1f") if "energy_kj" in p else "n/a", p["depth_rms_m"],
                p["depth_max_m"]))
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

