"""Integral action: LTI design numbers and in-process evidence.

LTI (Eq. 22 extended): with the integral gain k_i = epsilon omega_d k_p acting on the
deviation from the Eq. 22 reference model, the reference-to-attitude transfer of the
nominal plant stays Eq. 22 (the integrator state stays 0), while a disturbance torque d
reaches the attitude error through

    E(s) / D(s) = s / ((I + M_A) s^3 + (B-check + k_d,tot) s^2 + k_p s + k_i),

zero at s = 0: no steady error. :func:`lti_table` lists its poles per omega_d and, for
comparison, the step overshoot a plain PID (integrator on eta2d - eta2) would add.
:func:`integral_experiment` flies a plateau dive (full surge / sway / heave at +-30 deg
roll and pitch) with PD and PD+I and yaw steps with PD+I in the in-process loop.
Angles rad inside, deg in CSV columns named ``*_deg``.
"""
import math
import os
from dataclasses import dataclass

import numpy as np
from scipy import signal as sps

from brov2_hybrid.dive.dive_csv import Dive
from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.analysis import lti
from brov2_hybrid.analysis.context import AXES, LINEAR


def plateau_dive(attitude_rad, plateau_s, rate_hz):
    """Full surge, sway and heave plateaus (+1 each) at each of the four (+-a, +-a) roll/pitch pairs.

    Returns the Dive and the list of plateaus (start_s, end_s, roll_rad, pitch_rad, dof index).
    """
    segments = []
    t0 = 0.0
    for roll, pitch in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
        for dof in range(3):
            segments.append((t0, t0 + plateau_s, roll * attitude_rad, pitch * attitude_rad, dof))
            t0 += plateau_s
    t = np.arange(0.0, t0 + 0.5 / rate_hz, 1.0 / rate_hz)
    eta = np.zeros((t.size, 3))
    lin = np.zeros((t.size, 3))
    for start, end, roll, pitch, dof in segments:
        k = (t >= start - 1e-9) & (t < end - 1e-9)
        eta[k, 0], eta[k, 1] = roll, pitch
        lin[k, dof] = 1.0
    eta[-1], lin[-1] = eta[-2], lin[-2]
    return Dive(t_s=t, eta2d_rad=eta, u_linear=lin, source="plateaus"), segments


def steady_errors(log, segments, measure_fraction):
    """Per plateau: mean |error| (deg) per axis over the last ``measure_fraction`` of it."""
    t = log["time_s"]
    out = []
    for start, end, roll, pitch, dof in segments:
        k = (t >= end - measure_fraction * (end - start)) & (t < end)
        errs = []
        for a in AXES:
            e = wrap_angle(log["%s_d_rad" % a][k] - log["%s_rad" % a][k])
            errs.append(float(np.degrees(np.mean(np.abs(e)))))
        out.append({"dof": LINEAR[dof], "roll_d_deg": math.degrees(roll), "pitch_d_deg": math.degrees(pitch),
                    "roll_err_deg": errs[0], "pitch_err_deg": errs[1], "yaw_err_deg": errs[2]})
    return out


def pid_denominator(controller, axis=2):
    """(I + M_A) s^3 + (B-check + k_d,tot) s^2 + k_p s + k_i, highest power first."""
    inertia, b = float(controller.total_inertia[axis]), float(controller.b_check[axis])
    return np.array([inertia, b + float(controller.gains.kd_total[axis]), float(controller.gains.kp[axis]),
                     float(controller.ki[axis])])


def lti_row(controller, ratio, duration_s, axis=2, dt_s=1e-3):
    """LTI design numbers at one omega_d for integral ratio ``ratio``."""
    controller.configure(integral_ratio=ratio)
    den = pid_denominator(controller, axis)
    t = np.arange(0.0, duration_s, dt_s)
    _, y_pd = sps.step(lti.transfer_function(controller, axis), T=t)
    # A plain PID (integrator on eta2d - eta2): numerator k_d s^2 + k_p s + k_i.
    num_plain = [float(controller.gains.kd_total[axis]), float(controller.gains.kp[axis]), den[3]]
    _, y_plain = sps.step(sps.TransferFunction(num_plain, den), T=t)
    # Disturbance torque step 1 N m -> attitude error, with and without the integrator.
    _, e_d = sps.step(sps.TransferFunction([1.0, 0.0], den), T=t)
    e_pd = 1.0 / float(controller.gains.kp[axis])
    late = np.nonzero(np.abs(e_d) > 0.1 * e_pd)[0]
    return {"omega_d": controller.gains.omega_d_rad_s, "ratio": ratio, "ki": den[3],
            "poles": [[float(p.real), float(p.imag)] for p in np.roots(den)], "overshoot_pct": 100.0 * max(float(y_pd.max()) - 1.0, 0.0),
            "plain_pid_overshoot_pct": 100.0 * max(float(y_plain.max()) - 1.0, 0.0),
            "disturbance_10pct_s": float(t[late[-1]]) if late.size else 0.0,
            "disturbance_peak_over_pd": float(e_d.max()) / e_pd}


@dataclass(frozen=True)
class PlateauJob:
    """One run of the integral experiment: the plateau dive (:func:`plateau_dive`) at one omega_d
    [rad/s], with the integral action on (``integral``, k_i ratio ``ratio``) or off (PD).

    ``attitude_rad``: the +-roll/pitch of the plateaus; ``plateau_s`` their length; ``rate_hz`` the
    dive's row rate; ``measure_fraction`` the steady part of each plateau that is measured."""

    loop: object
    omega_d_rad_s: float
    integral: bool
    ratio: float
    attitude_rad: float
    plateau_s: float
    rate_hz: float
    measure_fraction: float


def run_plateau_job(job):
    """Fly one :class:`PlateauJob` in the in-process loop; returns omega_d, integral, the per-plateau
    steady errors (:func:`steady_errors`, deg) and the run's simulated and wall times [s]."""
    from brov2_hybrid.analysis.jobs import closed_loop_for
    loop = closed_loop_for(job.loop)
    dive, segments = plateau_dive(job.attitude_rad, job.plateau_s, job.rate_hz)
    res = loop.run(dive, omega_d_rad_s=job.omega_d_rad_s,
                   controller_options={"integral_enabled": job.integral, "integral_ratio": job.ratio})
    return {"omega_d": job.omega_d_rad_s, "integral": job.integral,
            "plateaus": steady_errors(res.log, segments, job.measure_fraction),
            "sim_s": res.duration_s, "wall_s": res.wall_s}


def integral_experiment(ctx, omegas=None, settings=None):
    """PD vs PD+I: LTI table, plateau-dive steady errors and yaw steps; CSVs + a plot.

    ``settings``: an :class:`~brov2_hybrid.analysis.settings.IntegralSettings` (default: ``ctx.settings.integral``)."""
    from brov2_hybrid.analysis.context import write_csv
    s = settings or ctx.settings.integral
    omegas = tuple(omegas or s.omega_d_rad_s)
    step_ws = tuple(omegas if omegas != s.omega_d_rad_s else s.step_omega_d_rad_s)
    lti_rows = []
    for w in sorted(set(step_ws + omegas)):
        c = lti.controller_for(w, ctx.vehicle, ctx.controller_params)
        lti_rows.append(lti_row(c, s.ratio, s.lti_duration_s))
    write_csv(ctx.path("integral_lti.csv"),
              ["omega_d_rad_s", "ratio", "ki_nm_rad_s", "poles", "overshoot_pct", "plain_pid_overshoot_pct",
               "disturbance_to_10pct_s", "disturbance_peak_over_pd"],
              [[r["omega_d"], r["ratio"], r["ki"], " ".join("%.3g%+.3gj" % tuple(p) for p in r["poles"]),
                r["overshoot_pct"], r["plain_pid_overshoot_pct"], r["disturbance_10pct_s"],
                r["disturbance_peak_over_pd"]] for r in lti_rows])
    jobs = [PlateauJob(ctx.loop, w, integ, s.ratio, s.attitude_rad, s.plateau_s, s.desired_rate_hz,
                       s.measure_fraction) for w in omegas for integ in (False, True)]
    st = ctx.settings.step
    from brov2_hybrid.analysis.jobs import StepJob, run_step_job
    jobs_step = [StepJob(ctx.loop, w, None, st.step_rad, st.step_time_s, st.duration_s, st.settle_band,
                         (("integral_enabled", integ), ("integral_ratio", s.ratio)))
                 for w in step_ws for integ in (False, True)]
    plate = ctx.runner.map(run_plateau_job, jobs, "integral plateaus")
    steps = ctx.runner.map(run_step_job, jobs_step, "integral steps")
    for job, r in zip(jobs_step, steps):
        r["integral"] = dict(job.controller_options)["integral_enabled"]
    rows = []
    for r in plate:
        for p in r["plateaus"]:
            rows.append([r["omega_d"], "PD+I" if r["integral"] else "PD", p["dof"], p["roll_d_deg"], p["pitch_d_deg"],
                         p["roll_err_deg"], p["pitch_err_deg"], p["yaw_err_deg"]])
    write_csv(ctx.path("integral_plateaus.csv"),
              ["omega_d_rad_s", "law", "plateau", "roll_d_deg", "pitch_d_deg", "roll_err_deg", "pitch_err_deg",
               "yaw_err_deg"], rows)
    write_csv(ctx.path("integral_steps.csv"), ["omega_d_rad_s", "law", "settling_time_s", "overshoot_pct"],
              [[r["omega_d"], "PD+I" if r["integral"] else "PD", r["settling_s"], r["overshoot_pct"]] for r in steps])
    worst = {}
    for r in plate:
        for dof in LINEAR:
            ps = [p for p in r["plateaus"] if p["dof"] == dof]
            worst[(r["omega_d"], r["integral"], dof)] = max(max(p["roll_err_deg"], p["pitch_err_deg"]) for p in ps)
    fig = _plot(ctx.path("integral_plateaus.png"), omegas, worst)
    return {"ratio": s.ratio, "omega_d": list(omegas), "lti": lti_rows,
            "worst_roll_pitch_err_deg": {"%g %s %s" % (w, "PD+I" if i else "PD", d): v
                                         for (w, i, d), v in worst.items()},
            "steps": [{k: r[k] for k in ("omega_d", "integral", "settling_s", "overshoot_pct")} for r in steps],
            "files": ["integral_lti.csv", "integral_plateaus.csv", "integral_steps.csv", os.path.basename(fig)],
            "sim_s": sum(r["sim_s"] for r in plate + steps), "wall_s": sum(r["wall_s"] for r in plate + steps)}


def _plot(path, omegas, worst):
    from brov2_hybrid.analysis.plots import plt, save_figure
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=True)
    x = np.arange(len(omegas))
    for ax, dof in zip(axes, LINEAR):
        ax.bar(x - 0.2, [worst[(w, False, dof)] for w in omegas], 0.4, label="PD (paper)")
        ax.bar(x + 0.2, [worst[(w, True, dof)] for w in omegas], 0.4, label="PD+I")
        ax.set_xticks(x)
        ax.set_xticklabels(["%g" % w for w in omegas])
        ax.set_xlabel("omega_d [rad/s]")
        ax.set_title("full %s plateau" % dof)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
    axes[0].set_ylabel("worst steady |roll|,|pitch| error [deg]")
    axes[0].legend()
    return save_figure(fig, path)


def console_lines(summary):
    """Key figures for the terminal."""
    lines = ["  LTI omega_d %g, ratio %g: k_i %.3f, disturbance poles %s; overshoot %.2f %% "
             "(plain PID would give %.1f %%); 1 N m disturbance error < 10 %% of the PD's after %.1f s" % (
                 r["omega_d"], r["ratio"], r["ki"], " ".join("%.2f%+.2fj" % tuple(p) for p in r["poles"]),
                 r["overshoot_pct"], r["plain_pid_overshoot_pct"], r["disturbance_10pct_s"]) for r in summary["lti"]]
    for w in summary["omega_d"]:
        for dof in LINEAR:
            lines.append("  omega_d %g full %-5s worst steady roll/pitch error: PD %5.2f deg, PD+I %5.2f deg" % (
                w, dof, summary["worst_roll_pitch_err_deg"]["%g PD %s" % (w, dof)],
                summary["worst_roll_pitch_err_deg"]["%g PD+I %s" % (w, dof)]))
    lines += ["  yaw step omega_d %g %-4s: settling %.2f s, overshoot %.2f %%" % (
        r["omega_d"], "PD+I" if r["integral"] else "PD", r["settling_s"], r["overshoot_pct"]) for r in summary["steps"]]
    return "\n".join(lines)


def report_section(summary):
    """REPORT.md lines."""
    lines = ["## Holding attitude against disturbances: PD vs PD+I", "",
             "Integral ratio epsilon = %g (k_i = epsilon omega_d k_p, on the deviation from the reference "
             "model: the PD law on the vehicle model's inertia and drag). LTI (Eq. 22 extended): the nominal step response is Eq. 22's; a plain PID on "
             "eta_2d - eta_2 would overshoot as listed." % summary["ratio"], "",
             "| omega_d | k_i (yaw) | disturbance poles | step overshoot [%] | plain PID overshoot [%] "
             "| disturbance error < 10 % of PD after [s] |", "|---|---|---|---|---|---|"]
    for r in summary["lti"]:
        lines.append("| %g | %.3f | %s | %.2f | %.1f | %.1f |" % (
            r["omega_d"], r["ki"], " ".join("%.2f%+.2fj" % tuple(p) for p in r["poles"]),
            r["overshoot_pct"], r["plain_pid_overshoot_pct"], r["disturbance_10pct_s"]))
    return lines + [""] + markdown_table(summary) + ["", "![](integral_plateaus.png)", ""]


def markdown_table(summary):
    """Worst steady roll/pitch error on the plateau dive and the yaw steps, PD vs PD+I (REPORT.md
    and the generated block of the docs)."""
    lines = ["Plateau dive (full surge / sway / heave at +-30 deg roll and pitch), worst steady roll/pitch "
             "error over the four attitudes [deg]:", "",
             "| omega_d | law | full surge | full sway | full heave |", "|---|---|---|---|---|"]
    for w in summary["omega_d"]:
        for law in ("PD", "PD+I"):
            lines.append("| %g | %s | %s |" % (w, law, " | ".join(
                "%.2f" % summary["worst_roll_pitch_err_deg"]["%g %s %s" % (w, law, d)] for d in LINEAR)))
    lines += ["", "Yaw step (90 deg) in the in-process loop:", "", "| omega_d | law | settling [s] | overshoot [%] |",
              "|---|---|---|---|"]
    return lines + ["| %g | %s | %.2f | %.2f |" % (r["omega_d"], "PD+I" if r["integral"] else "PD", r["settling_s"],
                                                   r["overshoot_pct"]) for r in summary["steps"]]
