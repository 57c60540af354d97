"""REPORT.md: each reproduced result beside the paper's statement (REFERENCE.md 8).

:func:`checks` turns the experiment summaries into rows (statement, our figure,
verdict); :func:`write_report` writes the table, one section per experiment with
its figures, the loop latency beside every closed-loop result and the wall time.
Verdicts are plain: "agrees", "partly" or "disagrees", each with the numbers behind it.
"""
import datetime
import math
import os

import numpy as np

AGREES, PARTLY, DISAGREES = "agrees", "partly", "disagrees"


def _f(x, fmt="%.2f"):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return fmt % x


def jsonable(obj):
    """Summaries without numpy arrays / NaN, for JSON."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _monotone(values, increasing):
    v = [x for x in values]
    pairs = list(zip(v[:-1], v[1:]))
    return all((b > a) if increasing else (b < a) for a, b in pairs)


def _at(summary, w):
    for k, x in enumerate(summary["omega_d"]):
        if abs(x - w) < 1e-9:
            return k
    return None


# --------------------------------------------------------------------------- checks
def check_kd_sign(gains, step):
    kd, kdt = gains["kd_at_2"], gains["kd_total_at_2"]
    und, und_d = gains["lti_plain_undershoot_at_2_pct"], gains["lti_undershoot_at_2_pct"]
    k = _at(step, 2.0) if step else None
    sim = (", simulation undershoot %s %%" % _f(step["undershoot_pct"][k])) if k is not None else ""
    ok = kd < 0.0 < kdt and und > 0.0 and und_d < 1e-6
    return ("At omega_d = 2 the plain k_d is negative (non-minimum-phase undershoot); "
            "k_d + delta k_d is positive (Sec. 5.2)",
            "k_d = %.3f, k_d + delta k_d = %.3f N m s/rad; LTI zero at s = +%.2f; LTI undershoot %.1f %% "
            "with k_d, %.1f %% with k_d + delta k_d%s" % (kd, kdt, gains["lti_plain_zero_at_2"], und, und_d, sim),
            AGREES if ok else DISAGREES)


def check_near_critical(step):
    band = 100 * step["band"]
    low = [(w, o) for w, o in zip(step["omega_d"], step["overshoot_pct"]) if w <= 3.0 + 1e-9]
    worst = max(low, key=lambda p: p[1])
    k3, k4 = _at(step, 3.0), _at(step, 4.0)
    slight = [("omega_d = %g: %.1f %%" % (step["omega_d"][k], step["overshoot_pct"][k])) for k in (k3, k4) if k is not None]
    ok = worst[1] <= band
    return ("Near-critically damped for omega_d <= 3 (overshoot inside +-5 %); slight overshoot at 3 and 4",
            "largest overshoot for omega_d <= 3: %.1f %% at omega_d = %g; %s"
            % (worst[1], worst[0], ", ".join(slight)), AGREES if ok else DISAGREES)


def check_jump(step, latency):
    jump = latency["paper_jump"] if latency else 3.5
    w = step["first_band_exit_omega_d"]
    over = step["overshoot_pct"]
    k = int(np.argmax(over))
    if w is None:
        text = ("no step leaves the +-%g %% band (largest overshoot %.1f %% at omega_d = %g), so the "
                "settling time has no jump" % (100 * step["band"], over[k], step["omega_d"][k]))
        verdict = DISAGREES
    elif abs(w - jump) < 1e-9:
        text = "first overshoot leaves the band from omega_d = %g" % w
        verdict = AGREES
    else:
        text = "first overshoot leaves the band from omega_d = %g instead of %g" % (w, jump)
        verdict = PARTLY
    text += " with the default loop latency (%s)" % step["latency"]
    if latency:
        best = [c for c in latency["cases"] if c["name"] == latency["best"]][0]
        text += "; closest latency case: %s, jump at omega_d = %s" % (
            best["label"], _f(best["first_band_exit_omega_d"], "%g"))
        if verdict == DISAGREES and best["first_band_exit_omega_d"] is not None:
            verdict = PARTLY
    return ("Settling time jumps for omega_d >= %g: the first overshoot leaves the +-5 %% band (Fig. 14)" % jump,
            text, verdict)


def check_sim_vs_lti(step):
    pairs = [(w, s, l) for w, s, l in zip(step["omega_d"], step["settling_s"], step["lti_plain_settling_s"])
             if w <= 3.0 + 1e-9]
    faster = [p for p in pairs if p[1] is not None and math.isfinite(p[1]) and p[1] < p[2]]
    text = "; ".join("omega_d %g: %s s vs LTI %s s" % (w, _f(s), _f(l)) for w, s, l in pairs[::2])
    verdict = AGREES if len(faster) == len(pairs) else (PARTLY if faster else DISAGREES)
    return ("The simulation settles faster than the LTI prediction (k_d) at low omega_d (Fig. 14)",
            text, verdict)


def check_unity_gain(bode):
    rows = bode["per_omega_d"]
    text = "; ".join("omega_d %g: |H(j omega_d)| = %s (LTI %s), gain falls through 1 at %s rad/s, -3 dB at %s rad/s "
                     "(%s omega_d; LTI %s rad/s)"
                     % (r["omega_d"], _f(r["gain_at_omega_d"]), _f(r["lti_gain_at_omega_d"]),
                        _f(r["unity_crossing_rad_s"]), _f(r["bandwidth_rad_s"]),
                        _f(_ratio(r["bandwidth_rad_s"], r["omega_d"])), _f(r["lti_bandwidth_rad_s"])) for r in rows)
    unity = [_ratio(r["unity_crossing_rad_s"], r["omega_d"]) for r in rows]
    ratios = [_ratio(r["bandwidth_rad_s"], r["omega_d"]) for r in rows]
    if all(u is not None and abs(u - 1.0) <= 0.15 for u in unity):
        verdict = AGREES
    elif all(x is not None for x in ratios) and np.std(ratios) <= 0.15 * np.mean(ratios):
        verdict = PARTLY  # bandwidth still proportional to omega_d, but not at unity gain
    else:
        verdict = DISAGREES
    return ("Gain ~ 1 at omega = omega_d; 0.71 <= |H| <= 1 is the working bandwidth, one-to-one with omega_d (App. C)",
            text, verdict)


def _ratio(a, b):
    return None if a is None or not math.isfinite(a) else a / b


def check_kappa(step):
    plain = {round(p["omega_d"], 6): p for p in step.get("plain", [])}
    pairs = []
    for k, w in enumerate(step["omega_d"]):
        p = plain.get(round(w, 6))
        if p is not None:
            pairs.append((w, p["overshoot_pct"], step["overshoot_pct"][k]))
    if not pairs:
        return None
    ok = all(o0 > o20 for _, o0, o20 in pairs) and pairs[0][1] > 100 * step["band"]
    return ("Without delta k_d the nonlinear step is underdamped; kappa = 20 makes it near-critical (Sec. 5.2, Fig. 13)",
            "overshoot with k_d only vs with k_d + delta k_d: " + "; ".join(
                "omega_d %g: %.1f %% vs %.1f %%" % p for p in pairs), AGREES if ok else DISAGREES)


def check_dive(dive):
    per = sorted(dive["per_omega_d"], key=lambda m: m["omega_d"])
    ws = [m["omega_d"] for m in per]
    err_rows, en_rows, err_ok, en_ok = [], [], [], []
    for axis in ("roll", "pitch", "yaw"):
        e = [m["iae_%s_deg_s" % axis] for m in per]
        n = [m["energy_%s" % axis] for m in per]
        err_ok.append(_monotone(e, False))
        en_ok.append(_monotone(n, True))
        err_rows.append("%s %s" % (axis, " -> ".join("%.0f" % x for x in e)))
        en_rows.append("%s %s" % (axis, " -> ".join("%.0f" % x for x in n)))
    label = "omega_d %s" % " -> ".join("%g" % w for w in ws)
    return [("Integral of absolute error falls as omega_d rises (Fig. 18)",
             "IAE [deg s], %s: %s" % (label, "; ".join(err_rows)),
             AGREES if all(err_ok) else (PARTLY if any(err_ok) else DISAGREES)),
            ("Energy (Eq. 26) rises with omega_d (Fig. 19)",
             "sum |PWM-1500|/400, %s: %s" % (label, "; ".join(en_rows)),
             AGREES if all(en_ok) else (PARTLY if any(en_ok) else DISAGREES))]


def check_stock(compare):
    per = compare["per_omega_d"]
    slower = []
    parts = []
    for p in per:
        s, u = p["stock_rise_s"], p["updated_rise_s"]
        slow = (s is None or not math.isfinite(s)) or s > u
        slower.append(slow)
        parts.append("omega_d %g: rise %s s vs %s s, e = %.0f %%" % (p["omega_d"], _f(s), _f(u), p["eq25_error_pct"]))
    verdict = AGREES if all(slower) else (PARTLY if any(slower) else DISAGREES)
    return ("The stock SITL model responds much more slowly than the updated one (Fig. 16, Table 1)",
            "90 %% rise time stock vs updated, Eq. 25 error of stock relative to updated: %s" % "; ".join(parts),
            verdict)


def check_sysid(sysid, paper):
    fit, truth = sysid["fit"], sysid["truth"]
    tol = paper.sysid_tolerance
    q_err = abs(fit["quadratic"] / truth["quadratic"] - 1.0)
    i_err = abs(fit["inertia"] / truth["inertia"] - 1.0)
    # N_r is zero in the model: judge it by its share of the drag at the largest steady rate.
    r_top = max(abs(x) for x in sysid.get("steady_rates", [1.0])) if sysid.get("steady_rates") else 1.0
    lin_share = abs(fit["linear"]) * r_top / (truth["quadratic"] * r_top * r_top)
    ok = q_err <= tol and i_err <= tol and lin_share <= tol
    return ("Sec. 3: N_r = 0, N_r|r| = %.2f N m s^2, I_zz = %.1f kg m^2 from open-loop yaw-torque runs"
            % (paper.yaw_quadratic_drag_nm_s2, paper.yaw_inertia_kg_m2),
            "fitted on the simulator: N_r = %.3f, N_r|r| = %.3f (%.1f %% off the model's %.2f), I_zz = %.3f "
            "(%.1f %% off %.2f)" % (fit["linear"], fit["quadratic"], 100 * q_err, truth["quadratic"],
                                    fit["inertia"], 100 * i_err, truth["inertia"]),
            AGREES if ok else DISAGREES)


def checks(summaries, settings):
    rows = []
    s = summaries
    step = s.get("step")
    if "gains" in s:
        rows.append(check_kd_sign(s["gains"], step))
    if step:
        kappa = check_kappa(step)
        if kappa:
            rows.append(kappa)
        rows.append(check_near_critical(step))
        rows.append(check_jump(step, s.get("latency")))
        rows.append(check_sim_vs_lti(step))
    if "bode" in s:
        rows.append(check_unity_gain(s["bode"]))
    if "dive" in s and len(s["dive"]["per_omega_d"]) > 1:
        rows.extend(check_dive(s["dive"]))
    if "compare_models" in s:
        rows.append(check_stock(s["compare_models"]))
    if "sysid" in s and s["sysid"]["simulated"]:
        rows.append(check_sysid(s["sysid"], settings.paper))
    return rows


# --------------------------------------------------------------------------- sections
def _img(name):
    return "![%s](%s)" % (name, name)


def _step_section(step):
    out = ["## Step response (Sec. 5.2, Fig. 13-14)", "",
           "Loop latency: %s. Settling time: time after the step at t = 1 s from which yaw stays "
           "within +-%g %% of 90 deg." % (step["latency"], 100 * step["band"]), "",
           "| omega_d [rad/s] | settling [s] | overshoot [%] | undershoot [%] | LTI k_d+dk_d settling [s] | LTI k_d settling [s] |",
           "|---|---|---|---|---|---|"]
    for k, w in enumerate(step["omega_d"]):
        out.append("| %g | %s | %.1f | %.1f | %s | %s |" % (
            w, _f(step["settling_s"][k]), step["overshoot_pct"][k], step["undershoot_pct"][k],
            _f(step["lti_settling_s"][k]), _f(step["lti_plain_settling_s"][k])))
    if step.get("plain"):
        out += ["", "Without delta k_d (kappa = 0), as the paper's first nonlinear runs: " + "; ".join(
            "omega_d %g: overshoot %.1f %%, settling %s s" % (p["omega_d"], p["overshoot_pct"], _f(p["settling_s"]))
            for p in step["plain"]) + "."]
    out += ["", _img("step_response.png"), "", _img("settling_time.png"), ""]
    return out


def _bode_section(bode):
    out = ["## Frequency response (App. C, Fig. A1)", "", "Loop latency: %s. +-30 deg yaw sines, %g..%g Hz (%d "
           "frequencies); gain = half peak-to-peak ratio, phase from peak times." % (
               bode["latency"], bode["freqs_hz"][0], bode["freqs_hz"][1], bode["freqs_hz"][2]), "",
           "| omega_d | gain at omega_d | LTI gain at omega_d | gain = 1 at [rad/s] | -3 dB bandwidth [rad/s] | LTI -3 dB [rad/s] | peak gain |",
           "|---|---|---|---|---|---|---|"]
    for r in bode["per_omega_d"]:
        out.append("| %g | %s | %s | %s | %s | %s | %s |" % (
            r["omega_d"], _f(r["gain_at_omega_d"]), _f(r["lti_gain_at_omega_d"]), _f(r["unity_crossing_rad_s"]),
            _f(r["bandwidth_rad_s"]), _f(r["lti_bandwidth_rad_s"]), _f(r["peak_gain"])))
    out += ["", _img("bode.png"), ""]
    return out


def _dive_section(dive):
    out = ["## Full dive (Sec. 5.3, Fig. 17-19)", "", "Loop latency: %s. Dive: `%s`." % (dive["latency"], dive["dive"]),
           "", "| omega_d | IAE roll | IAE pitch | IAE yaw [deg s] | RMS error r/p/y [deg] | energy roll | pitch | yaw | log |",
           "|---|---|---|---|---|---|---|---|---|"]
    for m in sorted(dive["per_omega_d"], key=lambda m: m["omega_d"]):
        out.append("| %g | %.1f | %.1f | %.1f | %.2f / %.2f / %.2f | %.1f | %.1f | %.1f | `%s` |" % (
            m["omega_d"], m["iae_roll_deg_s"], m["iae_pitch_deg_s"], m["iae_yaw_deg_s"], m["rms_error_roll_deg"],
            m["rms_error_pitch_deg"], m["rms_error_yaw_deg"], m["energy_roll"], m["energy_pitch"],
            m["energy_yaw"], m["log_path"]))
    out += ["", _img("dive_trajectories.png"), "", _img("dive_iae.png"), "", _img("dive_energy.png"), ""]
    return out


def _latency_section(lat, band):
    out = ["## Loop latency (REFERENCE.md 8)", "",
           "The paper does not report its loop latency. The step sweep repeated per latency case; "
           "agreement = number of omega_d at which 'first overshoot leaves the +-%g %% band' matches the "
           "paper (leaves it exactly for omega_d >= %g)." % (100 * band, lat["paper_jump"]), "",
           "| case | latency | first band exit [rad/s] | agreement | overshoot at 3 / 3.5 / 4 [%] |", "|---|---|---|---|---|"]
    for c in lat["cases"]:
        picks = []
        for w in (3.0, 3.5, 4.0):
            k = _at(c, w)
            picks.append(_f(c["overshoot_pct"][k], "%.1f") if k is not None else "n/a")
        out.append("| %s | %s | %s | %d/%d | %s |" % (c["name"], c["label"], _f(c["first_band_exit_omega_d"], "%g"),
                                                     c["agreement"], c["n"], " / ".join(picks)))
    out += ["", "Most like the paper's Fig. 14: **%s** (%s)." % (lat["best"], lat["best_label"]), "",
            _img("latency.png"), ""]
    return out


def _compare_section(cm, paper):
    table = dict(zip(paper.table1_omega_d_rad_s, zip(paper.table1_error_old_model_pct,
                                                     paper.table1_error_new_model_pct)))
    out = ["## Stock vs updated model (Fig. 16, Table 1, Eq. 25)", "",
           "Loop latency: %s. Eq. 25 over %g s from the step, stock model relative to the updated one "
           "(the tank data are not public); the paper's Table 1 compares each model with the tank." % (
               cm["latency"], cm["window_s"]), "",
           "| omega_d | rise 90 %% updated [s] | rise stock [s] | settling updated [s] | settling stock [s] | "
           "e stock vs updated [%] | paper e_old / e_new vs tank [%] |", "|---|---|---|---|---|---|---|"]
    for p in cm["per_omega_d"]:
        ref = table.get(p["omega_d"])
        out.append("| %g | %s | %s | %s | %s | %.1f | %s |" % (
            p["omega_d"], _f(p["updated_rise_s"]), _f(p["stock_rise_s"]), _f(p["updated_settling_s"]),
            _f(p["stock_settling_s"]), p["eq25_error_pct"], ("%.2f / %.2f" % ref) if ref else "-"))
    out += ["", _img("compare_models.png"), ""]
    return out


def _sysid_section(sy):
    fit, truth = sy["fit"], sy["truth"]
    src = "simulated runs of the %s model" % sy["model"] if sy["simulated"] else "user logs"
    return ["## System identification (Sec. 3)", "",
            "From %s at torques %s N m (open loop, no controller)." % (src, ", ".join("%.2f" % n for n in sy["torques_nm"])),
            "", "| quantity | fitted | model | paper |", "|---|---|---|---|",
            "| N_r [N m s/rad] | %.4f | %.2f | 0 |" % (fit["linear"], truth["linear"]),
            "| N_r\\|r\\| [N m s^2/rad^2] | %.4f | %.2f | 2.42 |" % (fit["quadratic"], truth["quadratic"]),
            "| I_zz [kg m^2] (N_rdot = %.2f given) | %.4f | %.2f | 1.0 |" % (sy["added_mass"], fit["inertia"], truth["inertia"]),
            "", "RMSE of the Eq. 12 fit over the unsteady windows: %.4f rad/s." % sy["rmse_rad_s"], "",
            _img("sysid_drag.png"), "", _img("sysid_inertia.png"), ""]


def _gains_section(gains, trim):
    out = ["## Gains and trim (App. B, Sec. 5.1)", "",
           "B-check (roll, pitch, yaw) = %s N m s/rad from the least-squares line through the origin over "
           "0..%s rad/s (%d samples); the paper's yaw value is 5.97." % (
               ", ".join("%.3f" % b for b in trim["b_check"]), "/".join("%g" % v for v in trim["rate_max_rad_s"]),
               trim["samples"]), "",
           "| omega_d | axis | k_p | k_d | delta k_d | k_d + delta k_d | zeta (k_d) | zeta (k_d + dk_d) |",
           "|---|---|---|---|---|---|---|---|"]
    for r in gains["rows"]:
        if r[1] == "yaw":
            out.append("| %g | %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |" % (r[0], r[1], r[2], r[3], r[4], r[5], r[8], r[9]))
    out += ["", "All axes: `gains.csv`.", "", _img("trim.png"), "", _img("gains.png"), ""]
    return out


def write_report(ctx, summaries, wall_s):
    """Write ``REPORT.md`` into ctx.out_dir; return its path."""
    settings = ctx.settings
    s = summaries
    lines = ["# Reproduction of Ng & Krieg (2024), Sec. 3, 5 and App. C", "",
             "Generated by `brov2-analyze reproduce` on %s in %.0f s wall (%s). Simulated time %.0f s." % (
                 datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), wall_s, ctx.runner.describe(),
                 sum(v.get("sim_s", 0.0) for v in s.values())),
             "",
             "Every closed-loop result comes from the in-process loop: the project's control law "
             "(HybridController, kappa = %g), RC channel quantisation, the %s mixer and the %s vehicle model at "
             "%g Hz physics; control at %g Hz. Default loop latency: %s. Settings: `params/analysis.yaml`, "
             "`params/controller.yaml`, `params/simulator.yaml`." % (
                 ctx.controller_params.kappa, ctx.loop.mixer, ctx.loop.model,
                 round(1.0 / _sim_dt()), ctx.loop.control_rate_hz, ctx.loop.latency_label()), "",
             "## The paper's statements and ours", "", "| paper | here | verdict |", "|---|---|---|"]
    for statement, ours, verdict in checks(s, settings):
        lines.append("| %s | %s | **%s** |" % (statement, ours.replace("|", "\\|"), verdict))
    lines.append("")
    if "gains" in s and "trim" in s:
        lines += _gains_section(s["gains"], s["trim"])
    if "step" in s:
        lines += _step_section(s["step"])
    if "latency" in s:
        lines += _latency_section(s["latency"], settings.step.settle_band)
    if "bode" in s:
        lines += _bode_section(s["bode"])
    if "dive" in s:
        lines += _dive_section(s["dive"])
    if "compare_models" in s:
        lines += _compare_section(s["compare_models"], settings.paper)
    if "sysid" in s:
        lines += _sysid_section(s["sysid"])
    if "firmware" in s:
        lines += _firmware_section(s["firmware"])
    for name in ("integral", "robustness"):   # issue 10: sections live in their own modules
        if name in s:
            import importlib
            lines += importlib.import_module("brov2_hybrid.analysis." + name).report_section(s[name])
    lines += ["## Run times", "", "| experiment | wall [s] | simulated [s] |", "|---|---|---|"]
    for name, v in s.items():
        lines.append("| %s | %.1f | %s |" % (name, v.get("elapsed_s", 0.0), _f(v.get("sim_s"), "%.0f")))
    lines.append("")
    path = os.path.join(ctx.out_dir, "REPORT.md")
    with open(path, "w") as handle:
        handle.write("\n".join(lines))
    return path


def _firmware_rows(fw):
    """(case, omega_d) rows of the closed-loop comparison as table lines."""
    out = []
    for r in fw["closed_loop"]:
        out.append("| %s | %g | %s | %s | %s | %s | %s |" % (
            r["case"], r["omega_d"], _f(r["settling_s"]), _f(r["step_iae_deg_s"], "%.1f"),
            " / ".join(_f(r["dive_iae_%s_deg_s" % a], "%.0f") for a in ("roll", "pitch", "yaw")),
            _f(r["settling_s_vs_quantitative_pct"], "%+.1f"), " / ".join(
                _f(r[c + "_vs_quantitative_pct"], "%+.1f") for c in
                ["step_iae_deg_s"] + ["dive_iae_%s_deg_s" % a for a in ("roll", "pitch", "yaw")])))
    return out


def _firmware_section(fw):
    out = ["## Stock ArduSub vs the paper's firmware (issue 8)", "",
           "Real BlueROV2 Heavies run stock ArduSub (Algorithm 1, linear PWM), not the paper's modified "
           "firmware (Algorithm 2, thrust table). The output stage `stock` (brov2_hybrid.firmware_output) "
           "chooses the RC values for which stock Algorithm 1 outputs Algorithm 2's motor PWMs (its wrench); "
           "`stock_wrench` (\"stock to requested wrench\") aims at tau_max u itself. "
           "Torque fidelity: requested vs delivered wrench (T times the thrust-table forces of the motor PWMs); "
           "error = largest per-DOF |error| as % of tau_max over random u ~ U(-a, a)^6; single-DOF "
           "commands +-a e_j give the delivered fraction.", "",
           "| stage | a | median error [%] | p95 error [%] | single-DOF delivered / requested |",
           "|---|---|---|---|---|"]
    for r in fw["fidelity"]:
        out.append("| %s | %g | %.2f | %.2f | %.2f .. %.2f |" % (
            r["stage"], r["u_amplitude"], r["median_error_pct"], r["p95_error_pct"], r["single_dof_min_ratio"],
            r["single_dof_max_ratio"]))
    out += ["", "Compensated stage: largest median error for a <= 0.3: %.2f %% of tau_max (goal <= 1 %%); "
            "single-DOF commands |u| >= %g delivered within %g %%: %s." % (
                fw["compensated_median_error_pct_max_to_0.3"], fw["small_u"], 100 * fw["small_u_tolerance"],
                "yes" if fw["compensated_small_loss_ok"] else "NO"), "",
            _img("firmware_torque_fidelity.png"), "",
            "Closed loop (loop latency: %s): yaw step 0 -> 90 deg and the bundled dive per case; the last "
            "columns are the difference from the quantitative firmware (goal for stock compensated: within "
            "5 %%)." % fw["latency"], "",
            "| case | omega_d | settling [s] | step IAE [deg s] | dive IAE r / p / y [deg s] | settling vs quant. [%] "
            "| IAE step / dive r / p / y vs quant. [%] |", "|---|---|---|---|---|---|---|"]
    out += _firmware_rows(fw)
    out += ["", _img("firmware_step.png"), ""]
    return out


def _sim_dt():
    from brov2_hybrid.sim.config import load_sim_options
    return load_sim_options().dt_s


def console_lines(command, summary):
    """A few lines of the key figures of one experiment for the terminal."""
    if command == "step":
        return "\n".join(["loop latency: %s" % summary["latency"]] + [
            "  omega_d %4.2f: settling %s s (LTI %s s), overshoot %4.1f %%" % (
                w, _f(s), _f(l), o) for w, s, l, o in zip(summary["omega_d"], summary["settling_s"],
                                                       summary["lti_settling_s"], summary["overshoot_pct"])])
    if command == "bode":
        return "\n".join(["loop latency: %s" % summary["latency"]] + [
            "  omega_d %g: gain at omega_d %s, -3 dB at %s rad/s (LTI %s)" % (
                r["omega_d"], _f(r["gain_at_omega_d"]), _f(r["bandwidth_rad_s"]), _f(r["lti_bandwidth_rad_s"]))
            for r in summary["per_omega_d"]])
    if command == "dive":
        return "\n".join(["loop latency: %s" % summary["latency"]] + [
            "  omega_d %g: IAE r/p/y %.1f / %.1f / %.1f deg s, energy r/p/y %.1f / %.1f / %.1f" % (
                m["omega_d"], m["iae_roll_deg_s"], m["iae_pitch_deg_s"], m["iae_yaw_deg_s"],
                m["energy_roll"], m["energy_pitch"], m["energy_yaw"]) for m in summary["per_omega_d"]])
    if command == "latency":
        return "\n".join(["  %-12s %s: first band exit at %s, agreement %d/%d" % (
            c["name"], c["label"], _f(c["first_band_exit_omega_d"], "%g"), c["agreement"], c["n"])
            for c in summary["cases"]] + ["most like Fig. 14: %s" % summary["best"]])
    if command == "compare-models":
        return "\n".join(["loop latency: %s" % summary["latency"]] + [
            "  omega_d %g: rise updated %s s, stock %s s; Eq. 25 error %.1f %%" % (
                p["omega_d"], _f(p["updated_rise_s"]), _f(p["stock_rise_s"]), p["eq25_error_pct"])
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
            r["case"], r["omega_d"], _f(r["settling_s"]), _f(r["settling_s_vs_quantitative_pct"], "%+.1f"),
            _f(r["step_iae_deg_s"], "%.1f"),
            " / ".join(_f(r["dive_iae_%s_deg_s" % a], "%.0f") for a in ("roll", "pitch", "yaw")),
            " / ".join(_f(r["dive_iae_%s_deg_s_vs_quantitative_pct" % a], "%+.1f") for a in ("roll", "pitch", "yaw")))
            for r in summary["closed_loop"]]
        return "\n".join(lines)
    if command == "trim":
        return "  B-check (roll, pitch, yaw) = %s N m s/rad" % ", ".join("%.3f" % b for b in summary["b_check"])
    if command in ("integral", "robustness"):
        import importlib
        return importlib.import_module("brov2_hybrid.analysis." + command).console_lines(summary)
    return ""
