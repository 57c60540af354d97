"""The paper's statements against our figures: one row (statement, our figure, verdict) each.

:func:`checks` turns the experiment summaries into the rows of REPORT.md's first table
(docs/DESIGN.md section 8). Verdicts are plain: "agrees", "partly" or "disagrees", each with the
numbers behind it.
"""
import math

import numpy as np

from brov2_hybrid.analysis.report_format import fmt, index_at
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES

AGREES, PARTLY, DISAGREES = "agrees", "partly", "disagrees"


def _monotone(values, increasing):
    v = [x for x in values]
    pairs = list(zip(v[:-1], v[1:]))
    return all((b > a) if increasing else (b < a) for a, b in pairs)


# --------------------------------------------------------------------------- checks
def check_kd_sign(gains, step):
    """Row for Sec. 5.2: at omega_d = 2 the plain k_d is negative (LTI undershoot), k_d + delta k_d
    positive (no undershoot); ``step`` (may be None) adds the simulated undershoot."""
    kd, kdt = gains["kd_at_2"], gains["kd_total_at_2"]
    und, und_d = gains["lti_plain_undershoot_at_2_pct"], gains["lti_undershoot_at_2_pct"]
    k = index_at(step, 2.0) if step else None
    sim = (", simulation undershoot %s %%" % fmt(step["undershoot_pct"][k])) if k is not None else ""
    ok = kd < 0.0 < kdt and und > 0.0 and und_d < 1e-6
    return ("At omega_d = 2 the plain k_d is negative (non-minimum-phase undershoot); "
            "k_d + delta k_d is positive (Sec. 5.2)",
            "k_d = %.3f, k_d + delta k_d = %.3f N m s/rad; LTI zero at s = +%.2f; LTI undershoot %.1f %% "
            "with k_d, %.1f %% with k_d + delta k_d%s" % (kd, kdt, gains["lti_plain_zero_at_2"], und, und_d, sim),
            AGREES if ok else DISAGREES)


def check_near_critical(step):
    """Row for Fig. 13: the step overshoot stays inside the settling band for omega_d <= 3."""
    band = 100 * step["band"]
    low = [(w, o) for w, o in zip(step["omega_d"], step["overshoot_pct"]) if w <= 3.0 + 1e-9]
    worst = max(low, key=lambda p: p[1])
    k3, k4 = index_at(step, 3.0), index_at(step, 4.0)
    slight = [("omega_d = %g: %.1f %%" % (step["omega_d"][k], step["overshoot_pct"][k])) for k in (k3, k4) if k is not None]
    ok = worst[1] <= band
    return ("Near-critically damped for omega_d <= 3 (overshoot inside +-5 %); slight overshoot at 3 and 4",
            "largest overshoot for omega_d <= 3: %.1f %% at omega_d = %g; %s"
            % (worst[1], worst[0], ", ".join(slight)), AGREES if ok else DISAGREES)


def check_jump(step, latency):
    """Row for Fig. 14: the omega_d from which the first overshoot leaves the settling band (the
    settling-time jump, the paper's 3.5) with the default latency; ``latency`` (the latency
    summary, may be None) adds the closest latency case and can lift a "disagrees" to "partly"."""
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
            best["label"], fmt(best["first_band_exit_omega_d"], "%g"))
        if verdict == DISAGREES and best["first_band_exit_omega_d"] is not None:
            verdict = PARTLY
    return ("Settling time jumps for omega_d >= %g: the first overshoot leaves the +-5 %% band (Fig. 14)" % jump,
            text, verdict)


def check_sim_vs_lti(step):
    """Row for Fig. 14: the simulated step settles faster than the LTI (plain k_d) prediction at every
    omega_d <= 3 (agrees), at some (partly) or at none (disagrees)."""
    pairs = [(w, s, l) for w, s, l in zip(step["omega_d"], step["settling_s"], step["lti_plain_settling_s"])
             if w <= 3.0 + 1e-9]
    faster = [p for p in pairs if p[1] is not None and math.isfinite(p[1]) and p[1] < p[2]]
    text = "; ".join("omega_d %g: %s s vs LTI %s s" % (w, fmt(s), fmt(l)) for w, s, l in pairs[::2])
    verdict = AGREES if len(faster) == len(pairs) else (PARTLY if faster else DISAGREES)
    return ("The simulation settles faster than the LTI prediction (k_d) at low omega_d (Fig. 14)",
            text, verdict)


def check_unity_gain(bode):
    """Row for App. C: the closed-loop gain falls through 1 within 15 % of omega_d (agrees); else
    "partly" when the -3 dB bandwidth is still proportional to omega_d (spread <= 15 % of the mean)."""
    rows = bode["per_omega_d"]
    text = "; ".join("omega_d %g: |H(j omega_d)| = %s (LTI %s), gain falls through 1 at %s rad/s, -3 dB at %s rad/s "
                     "(%s omega_d; LTI %s rad/s)"
                     % (r["omega_d"], fmt(r["gain_at_omega_d"]), fmt(r["lti_gain_at_omega_d"]),
                        fmt(r["unity_crossing_rad_s"]), fmt(r["bandwidth_rad_s"]),
                        fmt(_ratio(r["bandwidth_rad_s"], r["omega_d"])), fmt(r["lti_bandwidth_rad_s"])) for r in rows)
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
    """Row for Sec. 5.2 / Fig. 13: without delta k_d (kappa = 0) the step overshoots beyond the band,
    with it less at every omega_d; None when the step summary has no plain (kappa = 0) runs."""
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
    """Two rows for the dive: IAE falls (Fig. 18) and energy (Eq. 26) rises (Fig. 19) with omega_d,
    judged per axis (all axes monotone: agrees, some: partly)."""
    per = sorted(dive["per_omega_d"], key=lambda m: m["omega_d"])
    ws = [m["omega_d"] for m in per]
    err_rows, en_rows, err_ok, en_ok = [], [], [], []
    for axis in ANGULAR_DOF_NAMES:
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
    """Row for Fig. 16 / Table 1: the stock model's 90 % rise is slower than the updated model's at
    every omega_d (a stock step that never rises counts as slower)."""
    per = compare["per_omega_d"]
    slower = []
    parts = []
    for p in per:
        s, u = p["stock_rise_s"], p["updated_rise_s"]
        slow = (s is None or not math.isfinite(s)) or s > u
        slower.append(slow)
        parts.append("omega_d %g: rise %s s vs %s s, e = %.0f %%" % (p["omega_d"], fmt(s), fmt(u), p["eq25_error_pct"]))
    verdict = AGREES if all(slower) else (PARTLY if any(slower) else DISAGREES)
    return ("The stock SITL model responds much more slowly than the updated one (Fig. 16, Table 1)",
            "90 %% rise time stock vs updated, Eq. 25 error of stock relative to updated: %s" % "; ".join(parts),
            verdict)


def check_sysid(sysid, paper):
    """Row for Sec. 3: the fitted N_r|r| and I_zz within ``paper.sysid_tolerance`` (relative) of the
    model, and N_r's share of the drag at the largest steady rate within it too."""
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
    """The rows (statement, our figure, verdict) for the experiments present in ``summaries``
    ({experiment name: summary dict}); ``settings`` gives the paper's numbers. Experiments absent
    (or, for the dive, a single omega_d; for sysid, user logs) give no row."""
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
