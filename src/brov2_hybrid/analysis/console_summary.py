"""A few lines of each experiment's key figures for the terminal (``brov2-analyze COMMAND``)."""
import importlib

from brov2_hybrid.analysis.report_format import fmt
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES


def console_lines(command, summary):
    """A few lines of the key figures of one experiment for the terminal."""
    if command == "step":
        return "\n".join(["loop latency: %s" % summary["latency"]] + [
            "  omega_d %4.2f: settling %s s (LTI %s s), overshoot %4.1f %%" % (
                w, fmt(s), fmt(l), o) for w, s, l, o in zip(summary["omega_d"], summary["settling_s"],
                                                       summary["lti_settling_s"], summary["overshoot_pct"])])
    if command == "bode":
        return "\n".join(["loop latency: %s" % summary["latency"]] + [
            "  omega_d %g: gain at omega_d %s, -3 dB at %s rad/s (LTI %s)" % (
                r["omega_d"], fmt(r["gain_at_omega_d"]), fmt(r["bandwidth_rad_s"]), fmt(r["lti_bandwidth_rad_s"]))
            for r in summary["per_omega_d"]])
    if command == "dive":
        return "\n".join(["loop latency: %s" % summary["latency"]] + [
            "  omega_d %g: IAE r/p/y %.1f / %.1f / %.1f deg s, energy r/p/y %.1f / %.1f / %.1f" % (
                m["omega_d"], m["iae_roll_deg_s"], m["iae_pitch_deg_s"], m["iae_yaw_deg_s"],
                m["energy_roll"], m["energy_pitch"], m["energy_yaw"]) for m in summary["per_omega_d"]])
    if command == "latency":
        return "\n".join(["  %-12s %s: first band exit at %s, agreement %d/%d" % (
            c["name"], c["label"], fmt(c["first_band_exit_omega_d"], "%g"), c["agreement"], c["n"])
            for c in summary["cases"]] + ["most like Fig. 14: %s" % summary["best"]])
    if command == "compare-models":
        return "\n".join(["loop latency: %s" % summary["latency"]] + [
            "  omega_d %g: rise updated %s s, stock %s s; Eq. 25 error %.1f %%" % (
                p["omega_d"], fmt(p["updated_rise_s"]), fmt(p["stock_rise_s"]), p["eq25_error_pct"])
            for p in summary["per_omega_d"]])
    if command == "sysid":
        f, t = summary["fit"], summary["truth"]
        return ("  N_r %.4f (model %.2f), N_r|r| %.4f (model %.2f), I_zz %.4f (model %.2f), RMSE %.4f rad/s"
                % (f["linear"], t["linear"], f["quadratic"], t["quadratic"], f["inertia"], t["inertia"],
                   summary["rmse_rad_s"]))
    if command == "gains":
        return "\n".join("  omega_d %g %-5s kp %.3f kd %.3f dkd %.3f kd+dkd %.3f" % tuple(r[:6])
                         for r in summary["rows"])
    if command == "firmware":
        lines = ["  %-22s a = %-5g median %6.2f %%  p95 %6.2f %%  single-DOF %.2f..%.2f" % (
            r["stage"], r["u_amplitude"], r["median_error_pct"], r["p95_error_pct"], r["single_dof_min_ratio"],
            r["single_dof_max_ratio"]) for r in summary["fidelity"]]
        lines += ["  %-22s omega_d %g: settling %s s (%s %%), step IAE %s deg s, dive IAE r/p/y %s (%s %%)" % (
            r["case"], r["omega_d"], fmt(r["settling_s"]), fmt(r["settling_s_vs_quantitative_pct"], "%+.1f"),
            fmt(r["step_iae_deg_s"], "%.1f"),
            " / ".join(fmt(r["dive_iae_%s_deg_s" % a], "%.0f") for a in ANGULAR_DOF_NAMES),
            " / ".join(fmt(r["dive_iae_%s_deg_s_vs_quantitative_pct" % a], "%+.1f") for a in ANGULAR_DOF_NAMES))
            for r in summary["closed_loop"]]
        return "\n".join(lines)
    if command == "trim":
        return "  B-check (roll, pitch, yaw) = %s N m s/rad" % ", ".join("%.3f" % b for b in summary["b_check"])
    if command in ("integral", "robustness", "allocators", "options", "omega-limit", "design", "identify-coverage",
                   "tether-loop"):
        return importlib.import_module("brov2_hybrid.analysis." + command.replace("-", "_")).console_lines(summary)
    if command in ("ardusub", "depth-hold-compare", "onboard-pair"):
        module = {"ardusub": "ardusub_report", "depth-hold-compare": "depth_hold_report",
                  "onboard-pair": "onboard_pair"}[command]
        return importlib.import_module("brov2_hybrid.analysis." + module).console_lines(summary)
    return ""
