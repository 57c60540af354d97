"""One dive flown on real ArduSub SITL from this process: :func:`fly` ticks a pilot on every ATTITUDE
message (vehicle time) of a :class:`~brov2_hybrid.analysis.ardusub_flight.SitlFlight` and logs what the
pilot saw beside the physics' truth, and whether the vehicle was armed and in which mode on each row.
"""
import math
import time
from dataclasses import dataclass

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.dofs import DOF_NAMES
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link import ardusub
from brov2_hybrid.physics.kinematics import euler_from_quaternion
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid.tick_log.logfile import NUMERIC_COLUMNS, TETHER_COLUMNS

_COL = {name: k for k, name in enumerate(NUMERIC_COLUMNS)}


def truth_at(history, t_s):
    """True (roll, pitch, yaw) [rad] and depth [m, positive down] of the physics at time ``t_s``
    from :attr:`JsonPhysics.history` (the last state at or before ``t_s``; NaN if none kept)."""
    for t, q, depth_m in reversed(list(history)):
        if t <= t_s + 1e-9:
            return euler_from_quaternion(q), depth_m
    return np.full(3, np.nan), math.nan


def fly(flight, pilot, dive, duration_s=None, yaw_offset_rad=0.0):
    """Fly ``dive`` with ``pilot`` from now; one tick per ATTITUDE message (vehicle time).

    The dive's yaw is taken relative to ``yaw_offset_rad`` (e.g. the heading at the start).
    Returns (log dict of :data:`NUMERIC_COLUMNS` arrays + 'mode' + 'reader_lag_s' +
    'depth_reading_m' + 'depth_readings', true attitude (k, 3) [rad] of the physics at each tick's
    ArduSub time). The log's attitude is ArduSub's estimate, what the pilot saw, as the ROS logger
    records it; its ``depth_m`` is the physics' true depth at the ATTITUDE message's time (as the
    true attitude), ``depth_reading_m`` the newest depth ArduSub had reported by then
    (GLOBAL_POSITION_INT, NaN before the first), and ``depth_readings`` (n, 3) every such report:
    flight time [s], ArduSub's depth, the physics' depth at that time [m, positive down].
    ``vehicle_armed`` and ``vehicle_mode`` per tick: what ArduSub's newest HEARTBEAT said
    (:func:`refusal` judges whether the run flew).
    ``reader_lag_s`` per tick: how far the physics (lockstep with ArduSub) was ahead of
    the ATTITUDE message being read [s, vehicle time] -- a reader that falls behind flies on a
    stale attitude, and a command sent while the vehicle's clock has run on arrives late, so while
    it flies the physics is paced by what the pilot has answered
    (:attr:`~brov2_hybrid.sim.json_physics.JsonPhysics.pace`): the clock runs at most one ATTITUDE
    period (:attr:`SitlFlight.stream_rates_hz`) plus ``pace_margin_s`` (params/analysis.yaml,
    section ardusub) past the newest attitude ticked on, so the pilot's loop has the delays of its
    placement and not the machine's: on a busy machine the vehicle's clock waits for the pilot. A pilot
    that has read everything ArduSub sent and waits for the next ATTITUDE does not hold the clock
    (:meth:`SitlFlight.reader_idle`): that ATTITUDE comes only as the clock runs on.
    """
    duration = dive.duration_s if duration_s is None else float(duration_s)
    offset = np.array([0.0, 0.0, yaw_offset_rad])
    physics = flight.sitl.physics
    # Vehicle time of the newest ATTITUDE answered: paces the physics, from now on (the first rows are
    # not flown on attitudes that queued up while nobody read: see _fly_paced). The physics is held
    # first (lockstep ArduSub at speedup 50 runs 0.1 s in a few ms of wall time), then told from when.
    consumed = [-math.inf]
    before = physics.pace, physics.reader_idle, physics.max_lead_s       # the session's pace, if any
    rate_hz = getattr(flight, "stream_rates_hz", {}).get("ATTITUDE")
    if rate_hz:
        physics.max_lead_s = pace_lead_s(rate_hz)
    physics.pace = lambda: consumed[0]
    # a reader waiting with everything read does not hold the physics (JsonPhysics.reader_idle)
    physics.reader_idle = getattr(flight, "reader_idle", None)
    consumed[0] = physics.plant.t_s
    try:
        return _fly_paced(flight, pilot, dive, duration, offset, physics, consumed)
    finally:
        physics.pace, physics.reader_idle, physics.max_lead_s = before


def _fly_paced(flight, pilot, dive, duration, offset, physics, consumed):
    """:func:`fly`'s loop while the physics is paced by ``consumed`` (see JsonPhysics.pace)."""
    rows, truth, lags, readings, depth_now, armed, modes = [], [], [], [], [], [], []
    t0 = last_read = None
    next_row = 0
    eta2d, u_lin = dive.eta2d_rad[0] + offset, dive.u_linear[0]
    dive_t = dive.t_s - dive.t_s[0]
    stall_end = time.monotonic() + 30.0
    last_depth = None
    # An ATTITUDE older than this queued up before the flight, while nobody read: read, not flown.
    # (Not drained beforehand: the newest of them may be the one the held physics waits for.)
    stale_before = consumed[0] - physics.max_lead_s
    while True:
        msg = flight.recv(("ATTITUDE",), 2.0)
        if msg is None:
            if time.monotonic() > stall_end:
                raise Brov2Error("no ATTITUDE from ArduSub for 30 s during the flight")
            continue
        stall_end = time.monotonic() + 30.0
        t_boot = msg.time_boot_ms / 1000.0
        if last_read is not None and t_boot <= last_read or t_boot < stale_before:
            continue                     # a repeated (or late) ATTITUDE: no new state, no tick
        last_read = t_boot
        if t0 is None:
            t0 = t_boot
        t = t_boot - t0
        if t > duration + 1e-9:
            break
        while next_row < len(dive_t) and dive_t[next_row] <= t + 1e-9:
            eta2d, u_lin = dive.eta2d_rad[next_row] + offset, dive.u_linear[next_row]
            pilot.on_desired(t, eta2d)
            next_row += 1
        eta2 = np.array([msg.roll, msg.pitch, msg.yaw])
        nu2 = np.array([msg.rollspeed, msg.pitchspeed, msg.yawspeed])
        reading = flight.depth_reading
        history = list(physics.history)
        if reading is not None and reading != last_depth:
            pilot.on_depth(reading[0] - t0, reading[1])
            last_depth = reading
            readings.append((reading[0] - t0, reading[1], truth_at(history, reading[0])[1]))
        tau, u, rc = pilot.tick(flight, t, eta2d, u_lin, eta2, nu2)
        consumed[0] = max(consumed[0], t_boot)   # answered: the vehicle's clock may run on
        armed.append(flight.armed)
        modes.append(flight.mode)
        row = np.zeros(len(NUMERIC_COLUMNS))
        row[_COL["time_s"]] = t
        row[[_COL[c] for c in ("roll_d_rad", "pitch_d_rad", "yaw_d_rad")]] = eta2d
        row[[_COL[c] for c in ("roll_rad", "pitch_rad", "yaw_rad")]] = eta2
        row[[_COL[c] for c in ("p_rad_s", "q_rad_s", "r_rad_s")]] = nu2
        row[[_COL[c] for c in ("surge_cmd", "sway_cmd", "heave_cmd")]] = u_lin
        row[[_COL[c] for c in ("tau_x_n", "tau_y_n", "tau_z_n", "tau_k_nm", "tau_m_nm", "tau_n_nm")]] = tau
        row[[_COL["u_%s" % d] for d in DOF_NAMES]] = u
        row[[_COL["rc%d_us" % ch] for ch in range(1, 7)]] = [rc.get(ch, 0) for ch in range(1, 7)]
        servo = flight.servo_outputs or [0] * ardusub.SERVO_OUTPUTS
        row[[_COL["pwm%d_us" % i] for i in range(1, ardusub.SERVO_OUTPUTS + 1)]] = servo
        row[_COL["omega_d_rad_s"]] = pilot.omega_d_rad_s
        eta2_true, depth_true = truth_at(history, t_boot)
        row[_COL["depth_m"]] = depth_true
        row[_COL["depth_setpoint_m"]] = pilot.depth_setpoint_m
        tether = physics.plant.tether
        row[[_COL[c] for c in TETHER_COLUMNS]] = tether.force_ned() if tether is not None else math.nan
        rows.append(row)
        truth.append(eta2_true)
        depth_now.append(last_depth[1] if last_depth is not None else math.nan)
        lags.append(max(history[-1][0] - t_boot, 0.0) if history else 0.0)
    data = np.array(rows)
    log = {name: data[:, k] for k, name in enumerate(NUMERIC_COLUMNS)}
    log["mode"] = [pilot.mode] * len(rows)
    log["reader_lag_s"] = np.array(lags)
    log["depth_reading_m"] = np.array(depth_now)
    log["depth_readings"] = np.array(readings).reshape(-1, 3)
    log["vehicle_armed"] = np.array(armed, dtype=bool)
    log["vehicle_mode"] = modes
    return log, np.array(truth)


class FlightRefused(Brov2Error):
    """A run on ArduSub that did not fly (disarmed, another mode, motors idle): never scored."""


@dataclass(frozen=True)
class RefusalSettings:
    """When a run did not fly (the ``ardusub`` section of params/analysis.yaml; :func:`refusal`)."""

    motor_deadband_us: float
    command_active: float
    max_idle_share: float
    #: How long after a command ArduSub's motors may take to show it in the log [s, vehicle time]
    #: (the override is read at SITL's next I/O pass, mixed in the next loop and reported in the next
    #: SERVO_OUTPUT_RAW, which a row carries only from the ATTITUDE after it: 2-3 rows at 50 Hz).
    motor_response_s: float = 0.0


def load_refusal_settings(path=None):
    """:class:`RefusalSettings` from ``path`` (default params/analysis.yaml)."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, "ardusub")
    return RefusalSettings(s.number("motor_deadband_us", 0.0), s.number("command_active", 0.0, 1.0),
                           s.number("max_idle_share", 0.0, 1.0), s.number("motor_response_s", 0.0))


def pace_lead_s(attitude_rate_hz, path=None):
    """How far [s, vehicle time] lockstep ArduSub's clock may run past the newest ATTITUDE its reader
    answered (JsonPhysics.max_lead_s): one ATTITUDE period plus ``pace_margin_s`` of ``path``."""
    return 1.0 / attitude_rate_hz + load_pace_margin_s(path)


def load_pace_margin_s(path=None):
    """``ardusub.pace_margin_s`` [s] of ``path`` (default params/analysis.yaml): see :func:`fly`."""
    path = path or paths.params_path("analysis.yaml")
    return Section(load_yaml(path), path, "ardusub").positive("pace_margin_s")


def refusal(log, pilot_mode, settings, command_delay_s=0.0):
    """Why the run in ``log`` (:func:`fly`'s) did not really fly, or None when it did.

    A run is scored only if ArduSub was armed and in ``pilot_mode`` on every row, and its motors
    followed the commands: not neutral (within ``motor_deadband_us`` of ArduSub's neutral PWM)
    on more than ``max_idle_share`` of the rows where the pilot commanded |u| >= ``command_active``
    on some DOF, and not neutral for the whole run (``settings``: :class:`RefusalSettings`). Rows before the first SERVO_OUTPUT_RAW (PWMs 0)
    are not judged for the motors.

    A command shows in the logged motor outputs only some rows later: ``command_delay_s`` (the pilot's
    own link to ArduSub: its logged ``u`` is sent that much later) plus ``motor_response_s`` (ArduSub's
    I/O pass, loop and SERVO_OUTPUT_RAW, carried by the next ATTITUDE's row). So a commanded row counts
    as followed when the motors are off neutral on any row up to that long after it, and a command
    within that long of the log's end (its answer not logged) is not judged. Judged on its own row, a
    step whose command is large for a few rows only was refused for the rows that could not show it
    yet (2 of the 8 rows of the hybrid's 20 deg roll step at omega_d 2: 25 %).
    """
    t = np.asarray(log["time_s"], dtype=float)
    armed = np.asarray(log["vehicle_armed"], dtype=bool)
    if not np.all(armed):
        k = int(np.argmin(armed))
        return "ArduSub was disarmed on %d of %d rows (first at t = %.2f s)" % (np.count_nonzero(~armed), len(t), t[k])
    wrong = [k for k, m in enumerate(log["vehicle_mode"]) if m != pilot_mode]
    if wrong:
        return "ArduSub was in mode %s, not %s, on %d of %d rows (first at t = %.2f s)" % (
            log["vehicle_mode"][wrong[0]], pilot_mode, len(wrong), len(t), t[wrong[0]])
    pwm = np.column_stack([np.asarray(log["pwm%d_us" % i], dtype=float) for i in range(1, ardusub.SERVO_OUTPUTS + 1)])
    known = np.all(pwm > 0, axis=1)
    idle = known & np.all(np.abs(pwm - ardusub.PWM_NEUTRAL_US) <= settings.motor_deadband_us, axis=1)
    if np.any(known) and np.all(idle[known]):
        return "the motors stayed at neutral for the whole run (%d rows with motor outputs)" % np.count_nonzero(known)
    u = np.column_stack([np.asarray(log["u_%s" % d], dtype=float) for d in DOF_NAMES])
    response_s = float(command_delay_s) + settings.motor_response_s
    commanded = known & np.any(np.nan_to_num(np.abs(u)) >= settings.command_active, axis=1)
    if t.size:
        commanded &= t <= t[-1] - response_s + 1e-9
    if np.any(commanded):
        moving = known & ~idle
        # the motors answered row k when they are off neutral on some row j with t_k <= t_j <= t_k + response
        last = np.searchsorted(t, t + response_s + 1e-9, side="right")        # rows k..last-1 are in reach
        before = np.concatenate([[0], np.cumsum(moving)])
        answered = before[last] - before[np.arange(t.size)] > 0
        unanswered = np.count_nonzero(commanded & ~answered)
        share = unanswered / float(np.count_nonzero(commanded))
        if share > settings.max_idle_share:
            return ("the motors stayed at neutral within %.2f s after %.0f %% of the %d rows with a command "
                    "(bound %.0f %%): they did not follow the pilot"
                    % (response_s, 100.0 * share, np.count_nonzero(commanded), 100.0 * settings.max_idle_share))
    return None


def run_on(flight, pilot, dive, relative_yaw, cs=None):
    """Set the pilot's mode, arm if needed, fly ``dive`` (yaw relative to the present heading).

    A run that did not fly is refused (:class:`FlightRefused`: not armed in the pilot's mode
    throughout, or motors that did not follow: :func:`refusal`). With the settings ``cs``
    (:class:`~brov2_hybrid.analysis.ardusub_experiment.ArduSubCompareSettings`), a run is also refused
    (Brov2Error) when the reader fell more than
    ``max_reader_lag_s`` behind lockstep ArduSub (the figures would score a stale attitude: a
    busy machine) or the vehicle came shallower than ``min_depth_m`` (thrust out of the water)."""
    if cs is not None and flight.sitl.plant.eta[2] < cs.start_depth_m - cs.redive_m:
        # The buoyant vehicle rose during earlier runs: carried back down (JsonPhysics.request_depth),
        # then ArduSub's depth estimate is given a few seconds to follow before the run starts.
        flight.sitl.physics.request_depth(cs.start_depth_m)
        flight.drain()
        now = flight.recv(("ATTITUDE",), 5.0)
        if now is not None:
            flight.wait_time(now.time_boot_ms / 1000.0 + cs.redive_settle_s)
    if flight.mode != pilot.mode:
        flight.set_mode(pilot.mode)
    if not flight.armed:
        flight.arm()
    offset = 0.0
    if relative_yaw:
        flight.drain()                   # the heading now, not one queued up unread
        offset = float(flight.recv(("ATTITUDE",), 5.0).yaw)
    log, truth = fly(flight, pilot, dive, yaw_offset_rad=offset)
    why = refusal(log, pilot.mode, load_refusal_settings(), getattr(pilot, "command_delay_s", 0.0))
    if why:
        raise FlightRefused("not a flight, not scored: %s (last STATUSTEXT: %s)"
                            % (why, "; ".join(getattr(flight, "statustext", [])[-3:]) or "none"))
    if cs is not None:
        lag, depth = float(np.max(log["reader_lag_s"])), float(np.min(log["depth_m"]))
        if lag > cs.max_reader_lag_s:
            raise Brov2Error("the attitude reader fell %.3f s behind ArduSub (bound %.3f s, ardusub.max_reader_lag_s): "
                             "the machine is too busy for this comparison; rerun it on a quieter machine"
                             % (lag, cs.max_reader_lag_s))
        if depth < cs.min_depth_m:
            raise Brov2Error("the vehicle rose to %.2f m (bound %.2f m, ardusub.min_depth_m): not submerged for the "
                             "whole run; start deeper (ardusub.start_depth_m)" % (depth, cs.min_depth_m))
    return log, truth
