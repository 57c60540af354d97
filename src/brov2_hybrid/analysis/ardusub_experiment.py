"""The hybrid autopilot against ArduSub's own attitude control, on real ArduSub.

Same plant (our vehicle model under real ArduSub 4.5 SITL), same desired attitudes:

* ``hybrid``: the hybrid autopilot in MANUAL with the stock-compensated output stage, at
  each omega_d of the ``ardusub`` section (:class:`~.ardusub_pilots.HybridPilot`);
* ``ardusub default``: ArduSub's attitude controller with its default gains, commanded
  by SET_ATTITUDE_TARGET in ALT_HOLD (:class:`~.ardusub_pilots.ArduSubAttitudePilot`,
  which says why that path);
* ``ardusub tuned``: the same after :func:`tune_ardusub`;
* ``hybrid, our simulator``: the in-process loop with the stock mixer and output stage,
  for "real ArduSub vs our simulator".

Inputs: a step on each axis (roll, pitch, yaw; one SITL session, yaw steps relative to the
heading at their start) and the bundled dive (a fresh SITL per run, starting level at
yaw 0). Measures: IAE, settling time, overshoot, motor effort (integral over time of
sum_i |PWM_i - 1500| / 400 of the motor outputs [s]: Eq. 26 on the motors and per second,
so it does not depend on the tick rate, and it counts what ArduSub's controller spends,
which the RC channels do not show), and ArduSub's attitude estimate against the truth
(RMS and the lag that best aligns them).

Tuning (:func:`tune_ardusub`), ArduPilot's usual manual order per axis: the rate loop
gains (ATC_RAT_*_P/I/D scaled together), then the angle P (ATC_ANG_*_P), then the
acceleration limit that shapes the commanded steps (ATC_ACCEL_*_MAX); each over the
``tune_factors`` of its default, keeping the factor with the least step IAE + effort weight.
"""
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid.link import ardusub
from brov2_hybrid.dive.dive_csv import Dive, load_dive_csv
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.vehicle.mixers import STOCK
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid import paths
from brov2_hybrid.analysis import metrics, plots
from brov2_hybrid.analysis.context import AXES, write_csv
from brov2_hybrid.analysis.ardusub_fly import run_on

#: ArduSub attitude-controller parameters per axis (AC_AttitudeControl_Sub): rate gains, angle P, accel limit.
RATE_GAINS = {"roll": ("ATC_RAT_RLL_P", "ATC_RAT_RLL_I", "ATC_RAT_RLL_D"),
              "pitch": ("ATC_RAT_PIT_P", "ATC_RAT_PIT_I", "ATC_RAT_PIT_D"),
              "yaw": ("ATC_RAT_YAW_P", "ATC_RAT_YAW_I", "ATC_RAT_YAW_D")}
ANGLE_P = {"roll": "ATC_ANG_RLL_P", "pitch": "ATC_ANG_PIT_P", "yaw": "ATC_ANG_YAW_P"}
ACCEL_MAX = {"roll": "ATC_ACCEL_R_MAX", "pitch": "ATC_ACCEL_P_MAX", "yaw": "ATC_ACCEL_Y_MAX"}


@dataclass(frozen=True)
class ArduSubCompareSettings:
    """The ``ardusub`` section of ``params/analysis.yaml``."""

    speedup: float
    omega_d_rad_s: tuple
    step_deg: dict
    hold_s: float
    after_step_s: float
    tune_factors: tuple
    effort_weight_deg: float
    dive_csv: str
    ready_after_boot_s: float
    start_depth_m: float
    min_depth_m: float
    max_reader_lag_s: float
    redive_m: float
    redive_settle_s: float


def load_compare_settings(path=None):
    """Read :class:`ArduSubCompareSettings`; errors name file and key."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, "ardusub")
    steps = s.raw("step_deg")
    if not (isinstance(steps, dict) and set(steps) == set(AXES)
            and all(isinstance(v, (int, float)) and 0 < abs(v) < 180 for v in steps.values())):
        raise ParameterError("%s: expected {roll: DEG, pitch: DEG, yaw: DEG}, each 0 < |step| < 180"
                             % s.key("step_deg"))
    factors = tuple(float(f) for f in s.vector("tune_factors", len(s.raw("tune_factors") or [])))
    if not factors or min(factors) <= 0:
        raise ParameterError("%s: expected positive factors" % s.key("tune_factors"))
    return ArduSubCompareSettings(
        speedup=s.positive("speedup"),
        omega_d_rad_s=tuple(float(w) for w in s.vector("omega_d_rad_s", len(s.raw("omega_d_rad_s") or []))),
        step_deg={k: float(v) for k, v in steps.items()}, hold_s=s.positive("hold_s"),
        after_step_s=s.positive("after_step_s"), tune_factors=factors,
        effort_weight_deg=s.positive("effort_weight_deg"), dive_csv=str(s.raw("dive_csv")),
        ready_after_boot_s=s.positive("ready_after_boot_s"), start_depth_m=s.positive("start_depth_m"),
        min_depth_m=s.positive("min_depth_m"), max_reader_lag_s=s.positive("max_reader_lag_s"),
        redive_m=s.positive("redive_m"), redive_settle_s=s.positive("redive_settle_s"))


def step_input(axis, step_rad, hold_s, after_s, rate_hz=50.0):
    """Hold 0 for ``hold_s``, then ``axis`` at ``step_rad`` for ``after_s``."""
    t = np.arange(0.0, hold_s + after_s + 0.5 / rate_hz, 1.0 / rate_hz)
    eta = np.zeros((t.size, 3))
    eta[t >= hold_s - 1e-9, AXES.index(axis)] = step_rad
    return Dive(t_s=t, eta2d_rad=eta, u_linear=np.zeros((t.size, 3)), source="%s step" % axis)


def motor_effort_s(t_s, pwm_us, neutral_us=ardusub.PWM_NEUTRAL_US, half_range_us=ardusub.PWM_HALF_RANGE_US):
    """Integral over time of sum_i |PWM_i - neutral| / half_range [s] (motor outputs, (k, n))."""
    load = np.sum(np.abs(_reported(pwm_us, neutral_us) - neutral_us), axis=1) / half_range_us
    return _time_integral(t_s, load)


def _reported(pwm_us, neutral_us):
    """Motor outputs (k, n) [us] as floats, an output not reported yet (0) read as neutral."""
    p = np.asarray(pwm_us, dtype=float)
    return np.where(p <= 0, neutral_us, p)


def _time_integral(t_s, load):
    """Trapezoidal time integral of ``load`` (k,) over ``t_s`` (k,) [s]."""
    return float(np.sum(0.5 * (load[1:] + load[:-1]) * np.diff(t_s))) if load.size > 1 else 0.0


def electric_energy_kj(t_s, pwm_us, table_pwm_us, table_power_w, neutral_us=ardusub.PWM_NEUTRAL_US):
    """What the thrusters draw from the battery [kJ]: the time integral of sum_i P(PWM_i), P the bench
    table's electric power [W] at that PWM (``table_pwm_us``, ``table_power_w``: a T200 CSV's ``pwm_us``
    and ``power_w``, linear between its rows). Unlike :func:`motor_effort_s` it counts nothing inside
    the thrusters' dead band, where they turn no propeller and draw no current, and counts a PWM by
    what it costs, which grows faster than linearly with it."""
    load = np.sum(np.interp(_reported(pwm_us, neutral_us), table_pwm_us, table_power_w), axis=1)
    return _time_integral(t_s, load) / 1000.0


def power_table(vehicle):
    """(pwm_us, power_w) of ``vehicle``'s T200 bench table (its thrust table's CSV), or None when that CSV
    has no ``power_w`` column (the energy figures then read NaN)."""
    from brov2_hybrid.errors import InputDataError
    from brov2_hybrid.vehicle.thrust_table import read_t200_csv
    try:
        return read_t200_csv(vehicle.thrusters.csv_file, "power_w")
    except InputDataError:
        return None


def estimate_quality(t_s, estimate, truth, max_lag_s=0.2):
    """ArduSub's attitude estimate vs the truth: RMS error per axis [deg] and best lag [s].

    The lag is the shift of the estimate, on a 1 ms grid, that minimises the summed RMS
    error of roll, pitch and yaw (the estimate's delay through EKF3 and its streams).
    """
    ok = np.all(np.isfinite(truth), axis=1)
    t, est, tru = t_s[ok], estimate[ok], truth[ok]
    err = np.degrees(wrap_angle(est - tru))
    rms = np.sqrt(np.mean(err ** 2, axis=0))
    best_lag, best = 0.0, math.inf
    for lag in np.arange(0.0, max_lag_s + 1e-9, 0.001):
        shifted = np.column_stack([np.interp(t, t - lag, np.unwrap(est[:, k])) for k in range(3)])
        cost = float(np.sum(np.sqrt(np.mean(np.degrees(wrap_angle(shifted - tru))[5:-5] ** 2, axis=0))))
        if cost < best:
            best, best_lag = cost, float(lag)
    out = {"est_rms_%s_deg" % a: float(rms[k]) for k, a in enumerate(AXES)}
    out["est_lag_s"] = best_lag
    return out


def step_metrics(log, axis, step_rad, hold_s, band):
    """Per step run: IAE after the step on the axis [deg s], settling [s], overshoot [%], effort [s]."""
    t = log["time_s"]
    desired = log["%s_d_rad" % axis]
    actual = desired - wrap_angle(desired - log["%s_rad" % axis])
    start = float(desired[0])
    after = t >= hold_s - 1e-9
    tt = t[after] - hold_s
    error = np.degrees(wrap_angle(desired - actual))[after]
    y = np.degrees(actual[after] - start)
    target = math.degrees(step_rad)
    pwm = np.column_stack([log["pwm%d_us" % i] for i in range(1, ardusub.SERVO_OUTPUTS + 1)])[after]
    return {"iae_deg_s": metrics.iae(tt, error), "settling_s": metrics.settling_time(tt, y, target, 0.0, band=band),
            "overshoot_pct": metrics.overshoot(tt, y, target, 0.0), "effort_s": motor_effort_s(tt, pwm)}


# ---------------------------------------------------------------------- sessions

def flight_sim_options(ctx):
    """The physics options of :func:`new_flight`'s SITL: params/simulator.yaml's with the loop's model."""
    from dataclasses import replace
    from brov2_hybrid.sim.config import load_sim_options
    return replace(load_sim_options(), model=ctx.loop.model)


def new_flight(ctx, cs, start_depth_m=None):
    """A fresh ArduSub SITL on our physics (level, yaw 0, at ``start_depth_m`` [m], default the
    settings': deep enough that the positively buoyant vehicle, rising while ArduSub boots disarmed,
    is still well under water when the runs start), flown from here once ArduSub's clock is at
    ``ready_after_boot_s``. ArduSub's depth is relative to the shallowest point since its boot."""
    from brov2_hybrid.sim.ardusub_sitl import ArduSubSitl, free_instance
    from brov2_hybrid.sim.config import start_eta
    from brov2_hybrid.analysis.ardusub_flight import SitlFlight
    options = flight_sim_options(ctx)
    sitl = ArduSubSitl(ctx.vehicle, options, start_eta(cs.start_depth_m if start_depth_m is None else start_depth_m, [0.0, 0.0, 0.0]),
                       instance=free_instance(), speedup=cs.speedup)
    flight = SitlFlight(sitl)
    try:
        flight.wait_time(cs.ready_after_boot_s)
    except Exception:
        flight.close()
        raise
    return flight


def hybrid_pilot(ctx, omega_d_rad_s):
    """The hybrid autopilot at ``omega_d_rad_s`` [rad/s] as a pilot for ArduSub SITL: the loop's
    controller and the stock compensated output stage (the vehicle runs stock ArduSub), in MANUAL."""
    from brov2_hybrid.analysis.ardusub_pilots import HybridPilot
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    from dataclasses import replace
    loop = ClosedLoop(replace(ctx.loop, mixer=STOCK, output_stage="stock"), ctx.vehicle)
    return HybridPilot(loop.new_controller(omega_d_rad_s), loop.output, ctx.vehicle.tau_max,
                       ctx.loop.telemetry_delay_s, ctx.loop.command_delay_s)


def ardusub_pilot(ctx):
    """ArduSub's own attitude controller as a pilot (ALT_HOLD + SET_ATTITUDE_TARGET; translations
    by RC override through the context's RC map)."""
    from brov2_hybrid.analysis.ardusub_pilots import ArduSubAttitudePilot
    return ArduSubAttitudePilot(ctx.rc_map)


def step_runs(flight, pilot, cs, band, label, rows, logs):
    """One step per axis with ``pilot`` on ``flight``; appends metric rows and the logs."""
    for axis in AXES:
        step = math.radians(cs.step_deg[axis])
        log, truth = run_on(flight, pilot, step_input(axis, step, cs.hold_s, cs.after_step_s), axis == "yaw", cs)
        m = step_metrics(log, axis, step, cs.hold_s, band)
        rows.append([label, "%s step" % axis, m["iae_deg_s"], m["settling_s"], m["overshoot_pct"], m["effort_s"]])
        logs[(label, axis)] = log


def tune_ardusub(flight, pilot, cs, band, progress=print):
    """ArduPilot's manual order per axis on step runs (see the module docstring).

    Leaves the tuned gains set on ``flight`` and returns ({param: value}, trial rows).
    """
    tuned, trials = {}, []
    for axis in AXES:
        step = math.radians(cs.step_deg[axis])
        for group in (RATE_GAINS[axis], (ANGLE_P[axis],), (ACCEL_MAX[axis],)):
            base = {name: float(flight.get_param(name)) for name in group}
            best = None
            for factor in cs.tune_factors:
                for name, value in base.items():
                    flight.set_param(name, value * factor)
                log, _ = run_on(flight, pilot, step_input(axis, step, cs.hold_s, cs.after_step_s), axis == "yaw", cs)
                m = step_metrics(log, axis, step, cs.hold_s, band)
                cost = m["iae_deg_s"] + cs.effort_weight_deg * m["effort_s"]
                trials.append([axis, "+".join(group), factor, m["iae_deg_s"], m["settling_s"], m["overshoot_pct"],
                               m["effort_s"], cost])
                progress("ardusub tune %s %s x%g: IAE %.2f deg s, settling %.2f s, overshoot %.1f %%, "
                         "effort %.2f s" % (axis, group[0], factor, m["iae_deg_s"], m["settling_s"],
                                            m["overshoot_pct"], m["effort_s"]))
                if best is None or cost < best[0]:
                    best = (cost, factor)
            for name, value in base.items():
                tuned[name] = value * best[1]
                flight.set_param(name, tuned[name])
    return tuned, trials


def dive_metrics(log, truth):
    """IAE / max error per axis (against ArduSub's estimate, as the logger records), effort, estimate quality."""
    t = log["time_s"]
    out = {}
    for k, axis in enumerate(AXES):
        err = np.degrees(wrap_angle(log["%s_d_rad" % axis] - log["%s_rad" % axis]))
        out["iae_%s_deg_s" % axis] = metrics.iae(t, err)
        out["max_error_%s_deg" % axis] = float(np.max(np.abs(err)))
        if truth is not None:
            true_err = np.degrees(wrap_angle(log["%s_d_rad" % axis] - truth[:, k]))
            ok = np.isfinite(true_err)
            out["true_iae_%s_deg_s" % axis] = metrics.iae(t[ok], true_err[ok])
    pwm = np.column_stack([log["pwm%d_us" % i] for i in range(1, ardusub.SERVO_OUTPUTS + 1)])
    out["effort_s"] = motor_effort_s(t, pwm)
    out["min_depth_m"] = float(np.min(log["depth_m"]))
    out["max_reader_lag_s"] = float(np.max(log["reader_lag_s"])) if "reader_lag_s" in log else math.nan
    if truth is not None:
        estimate = np.column_stack([log["%s_rad" % a] for a in AXES])
        out.update(estimate_quality(t, estimate, truth))
    return out


def ardusub_experiment(ctx, omegas=None, progress=print):
    """The comparison; writes ardusub_steps.csv, ardusub_dive.csv, ardusub_tuning.csv and plots.

    ``omegas``: the hybrid's omega_d values [rad/s] (default: the section's); the loop's
    telemetry and command delays (``--telemetry-delay``, ``--command-delay``) apply to the
    hybrid's topside loop (ArduSub's own controller runs on board)."""
    cs = load_compare_settings(getattr(ctx.settings, "source", None))
    if omegas:
        cs = replace(cs, omega_d_rad_s=tuple(float(w) for w in omegas))
    band = ctx.settings.step.settle_band
    dive = load_dive_csv(cs.dive_csv if os.path.isabs(cs.dive_csv) else os.path.join(paths.package_root(), cs.dive_csv))
    step_rows, logs = [], {}
    # Steps and tuning: one SITL session.
    flight = new_flight(ctx, cs)
    try:
        for w in cs.omega_d_rad_s:
            step_runs(flight, hybrid_pilot(ctx, w), cs, band, "hybrid w=%g" % w, step_rows, logs)
            progress("ardusub: hybrid omega_d %g steps done" % w)
        step_runs(flight, ardusub_pilot(ctx), cs, band, "ardusub default", step_rows, logs)
        defaults = {name: float(flight.get_param(name))
                    for axis in AXES for name in RATE_GAINS[axis] + (ANGLE_P[axis], ACCEL_MAX[axis])}
        tuned, trials = tune_ardusub(flight, ardusub_pilot(ctx), cs, band, progress)
        step_runs(flight, ardusub_pilot(ctx), cs, band, "ardusub tuned", step_rows, logs)
    finally:
        flight.close()
    # The bundled dive: a fresh SITL per case (same start); the hybrid at every omega_d, the
    # middle one also on our own simulator.
    w_dive = cs.omega_d_rad_s[len(cs.omega_d_rad_s) // 2]
    dive_rows, dive_logs = [], {}
    cases = [("hybrid w=%g" % w, lambda w=w: hybrid_pilot(ctx, w), {}) for w in cs.omega_d_rad_s]
    cases += [("ardusub default", lambda: ardusub_pilot(ctx), {}), ("ardusub tuned", lambda: ardusub_pilot(ctx), tuned)]
    for label, make_pilot, params in cases:
        flight = new_flight(ctx, cs)
        try:
            for name, value in params.items():
                flight.set_param(name, value)
            log, truth = run_on(flight, make_pilot(), dive, relative_yaw=False, cs=cs)
        finally:
            flight.close()
        m = dive_metrics(log, truth)
        dive_rows.append([label] + [m[k] for k in DIVE_KEYS])
        dive_logs[label] = log
        progress("ardusub: dive %s: IAE %.1f / %.1f / %.1f deg s" % (label, m["iae_roll_deg_s"],
                                                                    m["iae_pitch_deg_s"], m["iae_yaw_deg_s"]))
    sim = simulator_reference(ctx, dive, w_dive)
    dive_rows.append(["hybrid w=%g, our simulator" % w_dive] + [sim.get(k, math.nan) for k in DIVE_KEYS])
    write_csv(ctx.path("ardusub_steps.csv"), STEP_HEADER, step_rows)
    write_csv(ctx.path("ardusub_dive.csv"), ["case"] + list(DIVE_KEYS), dive_rows)
    write_csv(ctx.path("ardusub_tuning.csv"), TUNING_HEADER, trials)
    write_csv(ctx.path("ardusub_gains.csv"), ["parameter", "default", "tuned"],
              [[name, defaults[name], tuned.get(name, defaults[name])] for name in sorted(defaults)])
    files = ["ardusub_steps.csv", "ardusub_dive.csv", "ardusub_tuning.csv", "ardusub_gains.csv"]
    files += plot_comparison(ctx, logs, dive_logs, cs)
    return {"steps": [dict(zip(STEP_HEADER, r)) for r in step_rows],
            "dive": [dict(zip(["case"] + list(DIVE_KEYS), r)) for r in dive_rows],
            "gains": {"default": defaults, "tuned": tuned}, "files": files, "omega_d_dive": w_dive,
            "speedup": cs.speedup, "tune_factors": list(cs.tune_factors),
            "telemetry_delay_s": ctx.loop.telemetry_delay_s, "command_delay_s": ctx.loop.command_delay_s}


STEP_HEADER = ["case", "input", "iae_deg_s", "settling_s", "overshoot_pct", "effort_s"]
TUNING_HEADER = ["axis", "parameters", "factor", "iae_deg_s", "settling_s", "overshoot_pct", "effort_s", "cost"]
DIVE_KEYS = tuple(["iae_%s_deg_s" % a for a in AXES] + ["max_error_%s_deg" % a for a in AXES] + ["effort_s"]
                  + ["true_iae_%s_deg_s" % a for a in AXES] + ["est_rms_%s_deg" % a for a in AXES] + ["est_lag_s"]
                  + ["min_depth_m", "max_reader_lag_s"])


def simulator_reference(ctx, dive, omega_d_rad_s):
    """The hybrid autopilot on our own simulator (in-process loop, stock mixer and output stage)."""
    from dataclasses import replace
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    loop = ClosedLoop(replace(ctx.loop, mixer=STOCK, output_stage="stock"), ctx.vehicle)
    result = loop.run(dive, omega_d_rad_s=omega_d_rad_s)
    return dive_metrics(result.log, None)


def plot_comparison(ctx, step_logs, dive_logs, cs):
    """Step responses per axis (every case) and the dive's attitude error per case; returns file names."""
    plt = plots.plt
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for k, axis in enumerate(AXES):
        ax = axes[k]
        for (label, a), log in sorted(step_logs.items()):
            if a != axis:
                continue
            t = log["time_s"] - cs.hold_s
            start = log["%s_d_rad" % axis][0]
            y = np.degrees(np.unwrap(log["%s_rad" % axis]) - start)
            ax.plot(t, y, label=label, lw=1.2)
        ax.axhline(cs.step_deg[axis], color="k", lw=0.6, ls="--")
        ax.set_title("%s step %g deg" % (axis, cs.step_deg[axis]))
        ax.set_xlabel("time after the step [s]")
        ax.set_ylabel("%s [deg]" % axis)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    names = ["ardusub_steps.png"]
    plots.save_figure(fig, ctx.path(names[0]))
    fig, axes = plt.subplots(3, 1, figsize=(11, 7), sharex=True)
    for label, log in dive_logs.items():
        for k, axis in enumerate(AXES):
            err = np.degrees(wrap_angle(log["%s_d_rad" % axis] - log["%s_rad" % axis]))
            axes[k].plot(log["time_s"], err, lw=0.7, label=label)
            axes[k].set_ylabel("%s error [deg]" % axis)
            axes[k].grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    axes[-1].set_xlabel("time [s]")
    names.append("ardusub_dive.png")
    plots.save_figure(fig, ctx.path(names[1]))
    return names

