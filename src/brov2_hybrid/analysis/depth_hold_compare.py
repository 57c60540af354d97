"""The hybrid autopilot's depth hold against ArduSub's ALT_HOLD, on real ArduSub SITL with our physics.

Same plant (our vehicle model under real ArduSub 4.5 SITL), same flight plan, one fresh SITL per
pilot booted at ``start_depth_m`` (the surface: ArduSub's depth is relative to the shallowest point
since its boot, ``Sub::read_barometer``):

* ``hybrid``: the hybrid autopilot in MANUAL at ``omega_d_rad_s`` with its depth hold on, closed on
  ArduSub's reported depth (GLOBAL_POSITION_INT, as the bridge and MAVROS give it), stock
  compensated output stage (:class:`~.ardusub_pilots.HybridPilot`);
* ``ALT_HOLD``: ArduSub's own depth and attitude control with its default gains (attitudes by
  SET_ATTITUDE_TARGET, translations by RC, the heave stick its climb-rate stick;
  :class:`~.ardusub_pilots.ArduSubAttitudePilot`), PILOT_SPEED_UP / PILOT_SPEED_DN set to the depth
  hold's ``max_depth_rate_m_s`` so that full stick asks both pilots for the same depth rate.

The plan (:func:`flight_plan`): descend with full stick, settle, fly the bundled dive with its heave
stick at 0 (hold depth under its attitudes and translations), a full-stick depth step, settle.
Measures on the physics' true depth at each ATTITUDE message's time (:func:`hold_measures`,
:func:`step_measures`) and the depth ArduSub reported against the truth at its own time
(:func:`reading_measures`). Effort: integral over time of sum |PWM - 1500| / 400 of the motor
outputs [s] (:func:`~.ardusub_experiment.motor_effort_s`), vertical motors 5-8 and all.
"""
import json
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.analysis import metrics
from brov2_hybrid.analysis.ardusub_experiment import motor_effort_s
from brov2_hybrid.analysis.context import write_csv
from brov2_hybrid.analysis.report_format import jsonable
from brov2_hybrid.dive.dive_csv import Dive, load_dive_csv
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.params import Section, load_yaml

#: Motor outputs of the vertical thrusters (ArduSub's Heavy frame: 5-8) and of all eight.
VERTICAL_MOTORS = (5, 6, 7, 8)
ALL_MOTORS = tuple(range(1, 9))
#: ArduSub parameters read (and the two speeds set) for the ALT_HOLD flight.
ALT_HOLD_PARAMS = ("PILOT_SPEED_UP", "PILOT_SPEED_DN", "PILOT_ACCEL_Z", "THR_DZ")
HYBRID, ALT_HOLD = "hybrid depth hold", "ArduSub ALT_HOLD"


@dataclass(frozen=True)
class DepthHoldCompareSettings:
    """The ``depth_hold_compare`` section of ``params/analysis.yaml`` (times in s, depths in m)."""

    omega_d_rad_s: float
    dive_csv: str
    start_depth_m: float
    ready_after_boot_s: float
    plan_rate_hz: float
    descent_s: float
    settle_s: float
    step_s: float
    after_step_s: float
    reference_window_s: float
    final_window_s: float
    settle_band: float
    max_reader_lag_s: float
    flights_per_pilot: int


def load_depth_hold_compare_settings(path=None):
    """Read :class:`DepthHoldCompareSettings`; errors name file and key."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, "depth_hold_compare")
    names = [n for n in DepthHoldCompareSettings.__dataclass_fields__
             if n not in ("dive_csv", "start_depth_m", "flights_per_pilot")]
    values = {n: s.positive(n) for n in names}
    if values["reference_window_s"] > values["settle_s"] or values["final_window_s"] > values["after_step_s"]:
        raise Brov2Error("%s: expected reference_window_s <= settle_s and final_window_s <= after_step_s"
                         % s.key("reference_window_s"))
    return DepthHoldCompareSettings(dive_csv=s.string("dive_csv"), start_depth_m=s.number("start_depth_m", 0.0),
                                    flights_per_pilot=s.integer("flights_per_pilot", 1), **values)


def flight_plan(bundled, s):
    """(dive, start of the hold [s], start of the step [s]) of one comparison flight.

    ``bundled``: the dive flown during the hold (its heave stick set to 0); ``s``: the settings."""
    dt = 1.0 / s.plan_rate_hz
    pre = np.arange(0.0, s.descent_s + s.settle_s - 1e-9, dt)
    post = np.arange(0.0, s.step_s + s.after_step_s + 1e-9, dt)
    t_hold = s.descent_s + s.settle_s
    t_step = t_hold + float(bundled.t_s[-1] - bundled.t_s[0]) + dt
    t = np.concatenate([pre, t_hold + bundled.t_s - bundled.t_s[0], t_step + post])
    eta = np.vstack([np.zeros((pre.size, 3)), bundled.eta2d_rad, np.zeros((post.size, 3))])
    u = np.vstack([np.zeros((pre.size, 3)), bundled.u_linear, np.zeros((post.size, 3))])
    u[:, 2] = 0.0
    u[t < s.descent_s, 2] = 1.0
    u[(t >= t_step) & (t < t_step + s.step_s), 2] = 1.0
    return Dive(t_s=t, eta2d_rad=eta, u_linear=u, source="descent, %s at heave 0, depth step" % bundled.source), \
        t_hold, t_step


def _pwm(log, motors):
    return np.column_stack([log["pwm%d_us" % i] for i in motors])


def hold_measures(log, t_hold, t_step, s):
    """Depth error of the hold part [t_hold, t_step) on the true depth ``log["depth_m"]`` [m].

    The held depth is the mean true depth over ``reference_window_s`` before ``t_hold`` (each
    pilot holds the depth it settled at); error = true depth - held depth. Returns the held depth,
    the error's RMS and largest magnitude, its mean over the hold's last ``reference_window_s``
    (drift) and the motor effort of the hold [s], vertical motors and all."""
    t, d = log["time_s"], log["depth_m"]
    before = (t >= t_hold - s.reference_window_s) & (t < t_hold)
    hold = (t >= t_hold) & (t < t_step)
    if not np.any(before) or not np.any(hold):
        raise Brov2Error("hold_measures: the log has no samples before %.1f s or in %.1f..%.1f s"
                         % (t_hold, t_hold, t_step))
    held = float(np.mean(d[before]))
    e = d[hold] - held
    end = t[hold] >= t_step - s.reference_window_s
    return {"held_depth_m": held, "hold_rms_m": float(np.sqrt(np.mean(e * e))),
            "hold_max_m": float(np.max(np.abs(e))), "hold_drift_m": float(np.mean(e[end])),
            "hold_effort_vertical_s": motor_effort_s(t[hold], _pwm(log, VERTICAL_MOTORS)[hold]),
            "hold_effort_all_s": motor_effort_s(t[hold], _pwm(log, ALL_MOTORS)[hold])}


def step_measures(log, t_step, commanded_m, s):
    """The depth step from ``t_step`` on the true depth [m]: change from the depth at the step
    (mean over ``reference_window_s`` before it: ``step_start_depth_m``), the final change (mean over the log's last
    ``final_window_s``) against ``commanded_m`` (stick time x rate), the peak beyond the final
    change, the settling time [s] into +-``settle_band`` x the final change and the effort [s]."""
    t, d = log["time_s"], log["depth_m"]
    before = (t >= t_step - s.reference_window_s) & (t < t_step)
    after = t >= t_step
    if not np.any(before) or not np.any(after):
        raise Brov2Error("step_measures: the log has no samples around the step at %.1f s" % t_step)
    start = float(np.mean(d[before]))
    change = d[after] - start
    final = float(np.mean(change[t[after] >= t[-1] - s.final_window_s]))
    settling = (metrics.settling_time(t[after], change, final, t_step, band=s.settle_band)
                if abs(final) > 0 else math.nan)
    return {"step_start_depth_m": start, "step_commanded_m": float(commanded_m), "step_final_m": final,
            "step_error_m": final - float(commanded_m), "step_overshoot_m": float(np.max(change) - final),
            "step_settling_s": float(settling),
            "step_effort_vertical_s": motor_effort_s(t[after], _pwm(log, VERTICAL_MOTORS)[after])}


def reading_measures(readings):
    """ArduSub's reported depth against the physics' true depth at the report's time.

    ``readings`` (n, 3): time [s], reported depth, true depth [m, positive down]. Returns the
    offset (mean of reported - true: > 0 reads deeper than the truth), the RMS of what is left
    after it, the least-squares line reported = scale x true + intercept [m] and the first
    report with the true depth at its time."""
    r = np.asarray(readings, dtype=float).reshape(-1, 3)
    r = r[np.all(np.isfinite(r), axis=1)]
    out = {"reading_offset_m": math.nan, "reading_rms_m": math.nan, "reading_scale": math.nan,
           "reading_intercept_m": math.nan, "first_reading_m": math.nan, "first_reading_true_m": math.nan,
           "readings": int(len(r))}
    if len(r):
        diff = r[:, 1] - r[:, 2]
        out.update(reading_offset_m=float(np.mean(diff)), reading_rms_m=float(np.std(diff)),
                   first_reading_m=float(r[0, 1]), first_reading_true_m=float(r[0, 2]))
    if len(r) > 1 and np.ptp(r[:, 2]) > 0:
        scale, intercept = np.polyfit(r[:, 2], r[:, 1], 1)
        out.update(reading_scale=float(scale), reading_intercept_m=float(intercept))
    return out


def pilot_measures(log, t_hold, t_step, commanded_m, s):
    """Every measure of one flight's log (:func:`hold_measures`, :func:`step_measures`,
    :func:`reading_measures`), the true depth at the start and the reader's largest lag [s]."""
    out = {"start_depth_m": float(log["depth_m"][0]),
           "max_reader_lag_s": float(np.max(log["reader_lag_s"])) if "reader_lag_s" in log else math.nan}
    out.update(hold_measures(log, t_hold, t_step, s))
    out.update(step_measures(log, t_step, commanded_m, s))
    out.update(reading_measures(log.get("depth_readings", np.zeros((0, 3)))))
    return out


def combine_flights(flights):
    """One pilot's row from the measures of its flights (list of dicts): the mean of every measure,
    ``flights``, and the smallest and largest of each as ``<key>_range`` ([min, max])."""
    out = {"flights": len(flights)}
    for key in flights[0]:
        values = np.array([f[key] for f in flights], dtype=float)
        out[key] = float(np.mean(values))
        out[key + "_range"] = [float(np.min(values)), float(np.max(values))]
    return out


def _fly(ctx, cs, s, make_pilot, dive, alt_hold_rate_cm_s):
    """One flight on a fresh SITL; (log, ArduSub parameters {name: (default, flown)})."""
    from brov2_hybrid.analysis import ardusub_experiment as ax
    from brov2_hybrid.analysis.ardusub_fly import run_on
    flight = ax.new_flight(ctx, replace(cs, ready_after_boot_s=s.ready_after_boot_s), s.start_depth_m)
    try:
        params = {name: float(flight.get_param(name)) for name in ALT_HOLD_PARAMS}
        flown = dict(params)
        pilot = make_pilot()
        if alt_hold_rate_cm_s is not None:
            for name in ("PILOT_SPEED_UP", "PILOT_SPEED_DN"):
                flown[name] = float(flight.set_param(name, alt_hold_rate_cm_s))
        log, _ = run_on(flight, pilot, dive, relative_yaw=False)
    finally:
        flight.close()
    lag = float(np.max(log["reader_lag_s"]))
    if lag > s.max_reader_lag_s:
        raise Brov2Error("the attitude reader fell %.3f s behind ArduSub (bound %.3f s, "
                         "depth_hold_compare.max_reader_lag_s): the machine is too busy for this comparison"
                         % (lag, s.max_reader_lag_s))
    return log, pilot, {name: (params[name], flown[name]) for name in ALT_HOLD_PARAMS}


def depth_hold_compare_experiment(ctx, progress=print, settings=None):
    """Fly both pilots ``flights_per_pilot`` times each; writes depth_hold_compare.json, the first
    flights' depth CSVs and the figure (first flights); the rows hold the flights' means and ranges.

    Raises Brov2Error (before anything is flown or written) without an ArduSub build."""
    from brov2_hybrid.sim.ardusub_sitl import find_ardusub
    from brov2_hybrid.analysis import ardusub_experiment as ax
    from brov2_hybrid.analysis.depth_hold_report import plot_flights
    from brov2_hybrid.params import load_controller_params
    find_ardusub()
    s = settings or load_depth_hold_compare_settings(getattr(ctx.settings, "source", None))
    cs = ax.load_compare_settings(getattr(ctx.settings, "source", None))
    rate_m_s = load_controller_params().max_depth_rate_m_s
    bundled = load_dive_csv(s.dive_csv if os.path.isabs(s.dive_csv) else os.path.join(paths.package_root(), s.dive_csv))
    dive, t_hold, t_step = flight_plan(bundled, s)
    commanded = s.step_s * rate_m_s

    def hybrid():
        pilot = ax.hybrid_pilot(ctx, s.omega_d_rad_s)
        pilot.controller.configure(depth_hold_enabled=True)
        return pilot

    os.makedirs(ctx.out_dir, exist_ok=True)
    rows, logs, alt_hold_params = [], {}, {}
    for case, make, rate in ((HYBRID, hybrid, None), (ALT_HOLD, lambda: ax.ardusub_pilot(ctx), 100.0 * rate_m_s)):
        flights = []
        for k in range(s.flights_per_pilot):
            log, pilot, params = _fly(ctx, cs, s, make, dive, rate)
            if rate is not None:
                alt_hold_params = params
            flights.append(pilot_measures(log, t_hold, t_step, commanded, s))
            logs.setdefault(case, log)
            progress("depth-hold-compare: %s flight %d: hold RMS %.3f m, max %.3f m; step %.3f m of %.3f m; "
                     "ArduSub's depth - true %.3f m" % (case, k + 1, flights[-1]["hold_rms_m"],
                                                        flights[-1]["hold_max_m"], flights[-1]["step_final_m"],
                                                        commanded, flights[-1]["reading_offset_m"]))
        rows.append(dict(case=case, mode=pilot.mode, reads=pilot.depth_source, **combine_flights(flights)))
    files = [write_csv(ctx.path("depth_hold_compare_%s.csv" % ("hybrid" if case == HYBRID else "alt_hold")),
                       ["time_s", "true_depth_m", "reported_depth_m", "depth_setpoint_m", "heave_cmd"],
                       zip(log["time_s"], log["depth_m"], log["depth_reading_m"], log["depth_setpoint_m"],
                           log["heave_cmd"])) for case, log in logs.items()]
    files = [os.path.basename(f) for f in files] + plot_flights(ctx, logs, {r["case"]: r for r in rows}, t_hold,
                                                                t_step, commanded, s.step_s)
    summary = {"rows": rows, "omega_d": s.omega_d_rad_s, "max_depth_rate_m_s": rate_m_s,
               "plan": {"descent_s": s.descent_s, "settle_s": s.settle_s, "hold_s": t_step - t_hold,
                        "step_s": s.step_s, "after_step_s": s.after_step_s, "start_depth_m": s.start_depth_m},
               "settle_band": s.settle_band, "dive": s.dive_csv,
               "alt_hold_params": {k: {"default": v[0], "flown": v[1]} for k, v in alt_hold_params.items()},
               "telemetry_delay_s": ctx.loop.telemetry_delay_s, "command_delay_s": ctx.loop.command_delay_s,
               "speedup": cs.speedup, "files": files}
    with open(ctx.path("depth_hold_compare.json"), "w") as handle:
        json.dump(jsonable({k: v for k, v in summary.items() if k != "files"}), handle, indent=1)
    summary["files"].append("depth_hold_compare.json")
    return summary
