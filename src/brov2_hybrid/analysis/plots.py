"""PNG figures of the experiments (matplotlib, Agg backend; no display needed).

One function per figure, named after the paper's figure it redraws. Inputs are plain
arrays (angles already in degrees where the axis says deg); each function writes
``path`` and returns it.
"""
import math

import numpy as np

from brov2_hybrid.analysis.metrics import HALF_POWER_GAIN
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES
from brov2_hybrid.figures import plt, save_figure  # noqa: F401  (save_figure: callers use plots.save_figure)

AXES = ANGULAR_DOF_NAMES


def _label(ax, xlabel=None, ylabel=None, title=None, legend=None, grid=None, **legend_options):
    """Finish one axes as the figures do: axis labels, a title (font size 9), a legend of font
    size ``legend`` (None: none; ``legend_options`` such as ncol, loc go to it) and a light
    grid (``grid``: more ``Axes.grid`` keywords, e.g. which="both"). None leaves a label out."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title, fontsize=9)
    if legend is not None:
        ax.legend(fontsize=legend, **legend_options)
    ax.grid(alpha=0.3, **(grid or {}))


def _colors(n):
    cmap = plt.get_cmap("viridis")
    return [cmap(x) for x in np.linspace(0.0, 0.85, max(n, 1))]


def step_responses(path, curves, step_deg, band, latency_label):
    """Fig. 13: yaw step responses. ``curves``: list of dicts with omega_d, t_s, and any
    of sim_deg (with delta k_d), sim_plain_deg (kappa = 0), lti_plain_deg, lti_deg."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    styles = (("sim_deg", "-", "simulation, k_d + dk_d"), ("sim_plain_deg", ":", "simulation, k_d only"),
              ("lti_plain_deg", "--", "LTI Eq. 22, k_d"), ("lti_deg", "-.", "LTI Eq. 22, k_d + dk_d"))
    for color, c in zip(_colors(len(curves)), curves):
        for key, ls, label in styles:
            if key in c:
                ax.plot(c["t_s"], c[key], ls, color=color, lw=1.4,
                        label="w_d = %.1f: %s" % (c["omega_d"], label))
    ax.axhspan(step_deg * (1 - band), step_deg * (1 + band), color="0.85", zorder=0,
               label="+-%g %% band" % (100 * band))
    _label(ax, "time [s]", "yaw [deg]", "Yaw step 0 -> %g deg (Fig. 13)\nloop latency: %s" % (step_deg, latency_label),
           legend=6, ncol=2, loc="lower right")
    return save_figure(fig, path)


def settling_times(path, omega_d, sim_s, lti_s, lti_plain_s, overshoot_pct, band, latency_label):
    """Fig. 14: settling time (+-band) against omega_d, with the overshoot below."""
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    ax.plot(omega_d, sim_s, "o-", label="simulation (k_d + dk_d)")
    ax.plot(omega_d, lti_s, "s--", ms=4, label="LTI Eq. 22 (k_d + dk_d)")
    ax.plot(omega_d, lti_plain_s, "^:", ms=4, label="LTI Eq. 22 (k_d)")
    _label(ax, None, "settling time +-%g %% [s]" % (100 * band), "Settling time (Fig. 14)\nloop latency: %s"
           % latency_label, legend=8)
    ax2.plot(omega_d, overshoot_pct, "o-", color="C3")
    ax2.axhline(100 * band, color="k", lw=0.8, ls="--", label="band edge")
    _label(ax2, "omega_d [rad/s]", "overshoot [%]", legend=8)
    return save_figure(fig, path)


def bode(path, series, latency_label):
    """Fig. A1. ``series``: list of dicts omega_d, w (rad/s), gain, phase_rad, lti_w, lti_gain, lti_phase_rad."""
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7.5, 6.5), sharex=True)
    for color, s in zip(_colors(len(series)), series):
        ax.plot(s["w"], s["gain"], "o", ms=3, color=color, label="simulation w_d = %.1f" % s["omega_d"])
        ax.plot(s["lti_w"], s["lti_gain"], "-", color=color, lw=1, label="LTI w_d = %.1f" % s["omega_d"])
        ax.axvline(s["omega_d"], color=color, lw=0.6, ls=":")
        ax2.plot(s["w"], np.degrees(s["phase_rad"]), "o", ms=3, color=color)
        ax2.plot(s["lti_w"], np.degrees(s["lti_phase_rad"]), "-", color=color, lw=1)
    ax.axhline(HALF_POWER_GAIN, color="k", lw=1.2, label="-3 dB (0.71)")
    ax.axhline(1.0, color="0.5", lw=0.6, ls="--")
    ax.set_xscale("log")
    _label(ax, None, "gain |H|", "Yaw frequency response, +-30 deg sines (Fig. A1)\nloop latency: %s" % latency_label,
           legend=7, grid={"which": "both"}, ncol=2)
    _label(ax2, "omega [rad/s] (dotted: omega = omega_d)", "phase [deg]", grid={"which": "both"})
    return save_figure(fig, path)


def dive_trajectories(path, runs, latency_label):
    """Fig. 17: rows = omega_d, columns = roll/pitch/yaw, desired vs actual [deg].
    ``runs``: list of dicts omega_d, t_s, desired_deg (n,3), actual_deg (n,3)."""
    fig, axes = plt.subplots(len(runs), 3, figsize=(11, 2.3 * len(runs) + 0.6), sharex=True, squeeze=False)
    for i, run in enumerate(runs):
        for j, axis in enumerate(AXES):
            a = axes[i, j]
            a.plot(run["t_s"], run["desired_deg"][:, j], "k--", lw=0.9, label="desired")
            a.plot(run["t_s"], run["actual_deg"][:, j], "C0", lw=0.9, label="actual")
            if i == 0:
                a.set_title(axis)
            if j == 0:
                a.set_ylabel("w_d = %.1f\n[deg]" % run["omega_d"])
            a.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    for a in axes[-1]:
        a.set_xlabel("time [s]")
    fig.suptitle("AR pilot dive (Fig. 17); loop latency: %s" % latency_label, fontsize=9)
    return save_figure(fig, path)


def dive_iae(path, runs, latency_label):
    """Fig. 18: running integral of |error| per axis [deg s]; ``runs``: omega_d, t_s, iae_deg_s (n,3)."""
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=False)
    for color, run in zip(_colors(len(runs)), runs):
        for j, axis in enumerate(AXES):
            axes[j].plot(run["t_s"], run["iae_deg_s"][:, j], color=color, label="w_d = %.1f" % run["omega_d"])
    for j, axis in enumerate(AXES):
        axes[j].set_title("%s" % axis)
        axes[j].set_xlabel("time [s]")
        axes[j].grid(alpha=0.3)
    axes[0].set_ylabel("integral |error| [deg s]")
    axes[0].legend(fontsize=8)
    fig.suptitle("Integral of absolute error (Fig. 18); loop latency: %s" % latency_label, fontsize=9)
    return save_figure(fig, path)


def dive_energy(path, runs, latency_label):
    """Fig. 19: top, linear RC PWMs [us]; bottom, running Eq. 26 sum per angular DOF.
    ``runs``: omega_d, t_s, linear_pwm (n,3), energy (n,3)."""
    fig, axes = plt.subplots(2, 3, figsize=(11, 5.5))
    titles = ("surge: forward channel", "sway: lateral channel", "heave: throttle channel (+ up)")
    for j, name in enumerate(titles):
        axes[0, j].plot(runs[0]["t_s"], runs[0]["linear_pwm"][:, j], "k", lw=0.8)
        axes[0, j].set_title("%s, open loop" % name, fontsize=9)
        axes[0, j].set_ylabel("[us]")
        axes[0, j].grid(alpha=0.3)
    for color, run in zip(_colors(len(runs)), runs):
        for j, axis in enumerate(AXES):
            axes[1, j].plot(run["t_s"], run["energy"][:, j], color=color, label="w_d = %.1f" % run["omega_d"])
    for j, axis in enumerate(AXES):
        axes[1, j].set_title("%s: sum |PWM-1500|/400 (Eq. 26)" % axis, fontsize=9)
        axes[1, j].set_xlabel("time [s]")
        axes[1, j].grid(alpha=0.3)
    axes[1, 0].legend(fontsize=8)
    fig.suptitle("Commands and energy (Fig. 19); loop latency: %s" % latency_label, fontsize=9)
    return save_figure(fig, path)


def latency_sweep(path, cases, band, paper_jump):
    """Settling time and overshoot against omega_d, one line per latency case.
    ``cases``: list of dicts label, omega_d, settling_s, overshoot_pct."""
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7.5, 6.5), sharex=True)
    for color, c in zip(_colors(len(cases)), cases):
        ax.plot(c["omega_d"], c["settling_s"], "o-", ms=3, color=color, label=c["label"])
        ax2.plot(c["omega_d"], c["overshoot_pct"], "o-", ms=3, color=color)
    for a in (ax, ax2):
        a.axvline(paper_jump, color="k", lw=0.8, ls=":")
        a.grid(alpha=0.3)
    ax2.axhline(100 * band, color="k", lw=0.8, ls="--")
    ax.set_ylabel("settling time [s]")
    ax.set_title("Step sweep against loop latency (dotted: paper's jump at w_d = %g)" % paper_jump, fontsize=9)
    ax.legend(fontsize=7)
    ax2.set_ylabel("overshoot [%]")
    ax2.set_xlabel("omega_d [rad/s]")
    return save_figure(fig, path)


def compare_models(path, responses, errors, step_deg, latency_label):
    """Fig. 16: step responses of both models; right, Eq. 25 error per omega_d.
    ``responses``: list of dicts omega_d, t_s, updated_deg, stock_deg; ``errors``: (omega_d list, e list [%])."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [2, 1]})
    for color, r in zip(_colors(len(responses)), responses):
        ax.plot(r["t_s"], r["updated_deg"], "-", color=color, label="updated w_d = %.1f" % r["omega_d"])
        ax.plot(r["t_s"], r["stock_deg"], "--", color=color, label="stock w_d = %.1f" % r["omega_d"])
    ax.axhline(step_deg, color="0.5", lw=0.6)
    _label(ax, "time [s]", "yaw [deg]", "Stock vs updated model (Fig. 16)\nloop latency: %s" % latency_label,
           legend=7, ncol=2)
    ax2.bar([str(w) for w in errors[0]], errors[1], color="C1")
    _label(ax2, "omega_d [rad/s]", "Eq. 25 mean normalized error [%]", "stock relative to updated", grid={"axis": "y"})
    return save_figure(fig, path)


def sysid_drag(path, torques, rates, fit_curve, model_curve):
    """Fig. 8: steady yaw rate against torque with the fitted and model drag curves.
    ``fit_curve``/``model_curve``: (r, N) arrays."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(rates, torques, "o", label="steady state (mean of window)")
    ax.plot(fit_curve[0], fit_curve[1], "-", label="least-squares fit")
    ax.plot(model_curve[0], model_curve[1], "--", label="model")
    _label(ax, "yaw rate r [rad/s]", "yaw torque N [N m]", "Drag from open-loop yaw-torque runs (Fig. 8)", legend=8)
    return save_figure(fig, path)


def sysid_inertia(path, runs, fitted, windows, grid, rmse, inertia):
    """Fig. 10: measured r(t) with the fitted Eq. 12 solutions; right, RMSE against I_zz."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [2, 1]})
    for color, run, fit, win in zip(_colors(len(runs)), runs, fitted, windows):
        ax.plot(run.t_s, run.r_rad_s, color=color, lw=1, label="N = %.1f N m" % run.torque_nm)
        ax.plot(fit[0], fit[1], "k--", lw=0.8)
        ax.axvline(win[1], color=color, lw=0.5, ls=":")
    _label(ax, "time from torque onset [s]", "r [rad/s]",
           "Unsteady window and Eq. 12 fit (dashed), I_zz = %.3f kg m^2 (Fig. 10)" % inertia, legend=7)
    ax2.plot(grid, rmse, "-")
    ax2.axvline(inertia, color="k", ls="--", lw=0.8)
    _label(ax2, "I_zz [kg m^2]", "RMSE [rad/s]")
    return save_figure(fig, path)


def trim(path, rate, drag, slope, rate_max):
    """Fig. 12: nonlinear yaw drag and the trimmed line through the origin."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(rate, drag, label="B_L r + B_NL r|r|")
    ax.plot(rate, slope * rate, "--", label="trimmed line, slope %.2f N m s/rad" % slope)
    ax.axvline(rate_max, color="0.5", lw=0.6, ls=":")
    _label(ax, "yaw rate [rad/s]", "drag torque [N m]", "Trim (Fig. 12), fitted over 0..%.2f rad/s" % rate_max,
           legend=8)
    return save_figure(fig, path)


def gains(path, omega_d, kp, kd, kd_total):
    """k_p, k_d and k_d + delta k_d against omega_d for the yaw axis."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(omega_d, kp, "o-", label="k_p [N m/rad]")
    ax.plot(omega_d, kd, "s--", label="k_d [N m s/rad]")
    ax.plot(omega_d, kd_total, "^-", label="k_d + dk_d [N m s/rad]")
    ax.axhline(0.0, color="k", lw=0.6)
    _label(ax, "omega_d [rad/s]", None, "Yaw gains (Eq. A17, A18, 23)", legend=8)
    return save_figure(fig, path)


def log_summary(path, t_s, desired_deg, actual_deg, iae_deg_s, energy, title):
    """Any log: desired vs actual per axis, running IAE and running Eq. 26 energy."""
    fig, axes = plt.subplots(3, 3, figsize=(11, 7), sharex=True)
    for j, axis in enumerate(AXES):
        axes[0, j].plot(t_s, desired_deg[:, j], "k--", lw=0.9, label="desired")
        axes[0, j].plot(t_s, actual_deg[:, j], "C0", lw=0.9, label="actual")
        axes[0, j].set_title(axis)
        axes[1, j].plot(t_s, iae_deg_s[:, j], "C1")
        axes[2, j].plot(t_s, energy[:, j], "C2")
        axes[2, j].set_xlabel("time [s]")
        for i in range(3):
            axes[i, j].grid(alpha=0.3)
    axes[0, 0].set_ylabel("[deg]")
    axes[1, 0].set_ylabel("integral |error| [deg s]")
    axes[2, 0].set_ylabel("Eq. 26 energy")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return save_figure(fig, path)


def finite_or_nan(values):
    """``values`` with None and non-finite entries replaced by NaN (a gap in a plotted line)."""
    return [v if (v is not None and math.isfinite(v)) else float("nan") for v in values]


def torque_fidelity(path, rows, small_u):
    """Output stages: median / p95 wrench error and single-DOF delivered fraction over |u|.
    ``rows``: dicts of firmware_experiment.torque_fidelity."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    stages = []
    for r in rows:
        if r["stage"] not in stages:
            stages.append(r["stage"])
    for color, st in zip(_colors(len(stages)), stages):
        sel = [r for r in rows if r["stage"] == st]
        a = [r["u_amplitude"] for r in sel]
        ax.plot(a, [r["median_error_pct"] for r in sel], "o-", color=color, label="%s, median" % st)
        ax.plot(a, [r["p95_error_pct"] for r in sel], ":", color=color, label="%s, p95" % st)
        ax2.fill_between(a, [r["single_dof_min_ratio"] for r in sel], [r["single_dof_max_ratio"] for r in sel],
                         color=color, alpha=0.35, label=st)
    ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _label(ax, "|u| level a (random u ~ U(-a, a)^6)", "max per-DOF wrench error [% of tau_max]", legend=7)
    ax2.axhspan(0.9, 1.1, color="0.9", zorder=0)
    ax2.axvline(small_u, color="0.5", lw=0.8, ls="--")
    ax2.set_xscale("log")
    _label(ax2, "single-DOF command |u_j|", "delivered / requested (range over DOFs, signs)", legend=7)
    fig.suptitle("Requested vs delivered wrench through the thrust table: quantitative firmware, "
                 "stock ArduSub naive and compensated", fontsize=9)
    return save_figure(fig, path)


def firmware_steps(path, curves, step_deg, band, latency_label):
    """Yaw steps per output stage; ``curves``: dicts with case, omega_d, t_s, yaw_deg."""
    omegas = sorted({c["omega_d"] for c in curves})
    fig, axes = plt.subplots(1, len(omegas), figsize=(4 * len(omegas), 3.6), sharey=True, squeeze=False)
    styles = {"quantitative firmware": "-", "stock naive": ":", "stock compensated": "--",
              "stock to requested wrench": "-."}
    for ax, w in zip(axes[0], omegas):
        for c in curves:
            if c["omega_d"] == w:
                ax.plot(c["t_s"], c["yaw_deg"], styles.get(c["case"], "-"), lw=1.4, label=c["case"])
        ax.axhspan(step_deg * (1 - band), step_deg * (1 + band), color="0.88", zorder=0)
        ax.set_title("w_d = %.1f rad/s" % w, fontsize=9)
        ax.set_xlabel("time [s]")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("yaw [deg]")
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.suptitle("Yaw step on stock vs quantitative firmware; loop latency: %s" % latency_label, fontsize=9)
    return save_figure(fig, path)
