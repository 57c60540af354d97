"""REPORT.md's per-experiment sections: a heading, the table of our figures, the figures.

Each ``*_section(summary, ...)`` returns the Markdown lines of one experiment's summary
(the dict its ``*_experiment`` function returned); :func:`brov2_hybrid.analysis.report.write_report`
puts them together.
"""
from brov2_hybrid.analysis.report_format import fmt, image, index_at
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES


def step_section(step):
    """Step-response section: settling, overshoot and undershoot per omega_d beside the LTI
    predictions, the kappa = 0 runs if any, and the figures."""
    out = ["## Step response (Sec. 5.2, Fig. 13-14)", "",
           "Loop latency: %s. Settling time: time after the step at t = 1 s from which yaw stays "
           "within +-%g %% of 90 deg." % (step["latency"], 100 * step["band"]), "",
           "| omega_d [rad/s] | settling [s] | overshoot [%] | undershoot [%] | LTI k_d+dk_d settling [s] | LTI k_d settling [s] |",
           "|---|---|---|---|---|---|"]
    for k, w in enumerate(step["omega_d"]):
        out.append("| %g | %s | %.1f | %.1f | %s | %s |" % (
            w, fmt(step["settling_s"][k]), step["overshoot_pct"][k], step["undershoot_pct"][k],
            fmt(step["lti_settling_s"][k]), fmt(step["lti_plain_settling_s"][k])))
    if step.get("plain"):
        out += ["", "Without delta k_d (kappa = 0), as the paper's first nonlinear runs: " + "; ".join(
            "omega_d %g: overshoot %.1f %%, settling %s s" % (p["omega_d"], p["overshoot_pct"], fmt(p["settling_s"]))
            for p in step["plain"]) + "."]
    out += ["", image("step_response.png"), "", image("settling_time.png"), ""]
    return out


def bode_section(bode):
    """Frequency-response section: gain at omega_d, unity crossing, -3 dB bandwidth and peak gain per
    omega_d beside the LTI figures, and the Bode plot."""
    out = ["## Frequency response (App. C, Fig. A1)", "", "Loop latency: %s. +-30 deg yaw sines, %g..%g Hz (%d "
           "frequencies); gain = half peak-to-peak ratio, phase from peak times." % (
               bode["latency"], bode["freqs_hz"][0], bode["freqs_hz"][1], bode["freqs_hz"][2]), "",
           "| omega_d | gain at omega_d | LTI gain at omega_d | gain = 1 at [rad/s] | -3 dB bandwidth [rad/s] | LTI -3 dB [rad/s] | peak gain |",
           "|---|---|---|---|---|---|---|"]
    for r in bode["per_omega_d"]:
        out.append("| %g | %s | %s | %s | %s | %s | %s |" % (
            r["omega_d"], fmt(r["gain_at_omega_d"]), fmt(r["lti_gain_at_omega_d"]), fmt(r["unity_crossing_rad_s"]),
            fmt(r["bandwidth_rad_s"]), fmt(r["lti_bandwidth_rad_s"]), fmt(r["peak_gain"])))
    out += ["", image("bode.png"), ""]
    return out


def dive_section(dive):
    """Dive section: IAE [deg s], RMS error [deg] and energy (Eq. 26) per axis and omega_d, the log
    path of each run, and the figures."""
    out = ["## Full dive (Sec. 5.3, Fig. 17-19)", "", "Loop latency: %s. Dive: `%s`." % (dive["latency"], dive["dive"]),
           "", "| omega_d | IAE roll | IAE pitch | IAE yaw [deg s] | RMS error r/p/y [deg] | energy roll | pitch | yaw | log |",
           "|---|---|---|---|---|---|---|---|---|"]
    for m in sorted(dive["per_omega_d"], key=lambda m: m["omega_d"]):
        out.append("| %g | %.1f | %.1f | %.1f | %.2f / %.2f / %.2f | %.1f | %.1f | %.1f | `%s` |" % (
            m["omega_d"], m["iae_roll_deg_s"], m["iae_pitch_deg_s"], m["iae_yaw_deg_s"], m["rms_error_roll_deg"],
            m["rms_error_pitch_deg"], m["rms_error_yaw_deg"], m["energy_roll"], m["energy_pitch"],
            m["energy_yaw"], m["log_path"]))
    out += ["", image("dive_trajectories.png"), "", image("dive_iae.png"), "", image("dive_energy.png"), ""]
    return out


def latency_section(lat, band):
    """Loop-latency section: per latency case the first band exit, the agreement with the paper's
    jump and the overshoot at omega_d 3 / 3.5 / 4; ``band`` is the settling band (fraction)."""
    out = ["## Loop latency (docs/DESIGN.md section 8)", "",
           "The paper does not report its loop latency. The step sweep repeated per latency case; "
           "agreement = number of omega_d at which 'first overshoot leaves the +-%g %% band' matches the "
           "paper (leaves it exactly for omega_d >= %g)." % (100 * band, lat["paper_jump"]), "",
           "| case | latency | first band exit [rad/s] | agreement | overshoot at 3 / 3.5 / 4 [%] |", "|---|---|---|---|---|"]
    for c in lat["cases"]:
        picks = []
        for w in (3.0, 3.5, 4.0):
            k = index_at(c, w)
            picks.append(fmt(c["overshoot_pct"][k], "%.1f") if k is not None else "n/a")
        out.append("| %s | %s | %s | %d/%d | %s |" % (c["name"], c["label"], fmt(c["first_band_exit_omega_d"], "%g"),
                                                     c["agreement"], c["n"], " / ".join(picks)))
    out += ["", "Most like the paper's Fig. 14: **%s** (%s)." % (lat["best"], lat["best_label"]), "",
            image("latency.png"), ""]
    return out


def compare_section(cm, paper):
    """Stock vs updated model section: rise and settling times and the Eq. 25 error per omega_d,
    beside the paper's Table 1 (``paper``: the settings' paper numbers)."""
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
            p["omega_d"], fmt(p["updated_rise_s"]), fmt(p["stock_rise_s"]), fmt(p["updated_settling_s"]),
            fmt(p["stock_settling_s"]), p["eq25_error_pct"], ("%.2f / %.2f" % ref) if ref else "-"))
    out += ["", image("compare_models.png"), ""]
    return out


def sysid_section(sy):
    """System-identification section: fitted N_r, N_r|r| and I_zz beside the model's and the
    paper's, the fit's RMSE, and the figures."""
    fit, truth = sy["fit"], sy["truth"]
    src = "simulated runs of the %s model" % sy["model"] if sy["simulated"] else "user logs"
    return ["## System identification (Sec. 3)", "",
            "From %s at torques %s N m (open loop, no controller)." % (src, ", ".join("%.2f" % n for n in sy["torques_nm"])),
            "", "| quantity | fitted | model | paper |", "|---|---|---|---|",
            "| N_r [N m s/rad] | %.4f | %.2f | 0 |" % (fit["linear"], truth["linear"]),
            "| N_r\\|r\\| [N m s^2/rad^2] | %.4f | %.2f | 2.42 |" % (fit["quadratic"], truth["quadratic"]),
            "| I_zz [kg m^2] (N_rdot = %.2f given) | %.4f | %.2f | 1.0 |" % (sy["added_mass"], fit["inertia"], truth["inertia"]),
            "", "RMSE of the Eq. 12 fit over the unsteady windows: %.4f rad/s." % sy["rmse_rad_s"], "",
            image("sysid_drag.png"), "", image("sysid_inertia.png"), ""]


def gains_section(gains, trim):
    """Gains section: the trim's B-check and the yaw rows of the k_p / k_d / delta k_d table (all
    axes in gains.csv); ``trim`` is the trim experiment's summary."""
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
    out += ["", "All axes: `gains.csv`.", "", image("trim.png"), "", image("gains.png"), ""]
    return out


def _firmware_rows(fw):
    """(case, omega_d) rows of the closed-loop comparison as table lines."""
    out = []
    for r in fw["closed_loop"]:
        out.append("| %s | %g | %s | %s | %s | %s | %s |" % (
            r["case"], r["omega_d"], fmt(r["settling_s"]), fmt(r["step_iae_deg_s"], "%.1f"),
            " / ".join(fmt(r["dive_iae_%s_deg_s" % a], "%.0f") for a in ANGULAR_DOF_NAMES),
            fmt(r["settling_s_vs_quantitative_pct"], "%+.1f"), " / ".join(
                fmt(r[c + "_vs_quantitative_pct"], "%+.1f") for c in
                ["step_iae_deg_s"] + ["dive_iae_%s_deg_s" % a for a in ANGULAR_DOF_NAMES])))
    return out


def firmware_section(fw):
    """Firmware section: torque fidelity of each output stage and the closed-loop step
    and dive per case against the quantitative firmware."""
    out = ["## Stock ArduSub vs the paper's firmware", "",
           "Real BlueROV2 Heavies run stock ArduSub (Algorithm 1, linear PWM), not the paper's modified "
           "firmware (Algorithm 2, thrust table). The output stage `stock` (brov2_hybrid.vehicle.firmware_output) "
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
            image("firmware_torque_fidelity.png"), "",
            "Closed loop (loop latency: %s): yaw step 0 -> 90 deg and the bundled dive per case; the last "
            "columns are the difference from the quantitative firmware (goal for stock compensated: within "
            "5 %%)." % fw["latency"], "",
            "| case | omega_d | settling [s] | step IAE [deg s] | dive IAE r / p / y [deg s] | settling vs quant. [%] "
            "| IAE step / dive r / p / y vs quant. [%] |", "|---|---|---|---|---|---|---|"]
    out += _firmware_rows(fw)
    out += ["", image("firmware_step.png"), ""]
    return out
