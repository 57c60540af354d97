"""Flying real ArduSub SITL (on our physics) from this process, over MAVLink.

:class:`SitlFlight` starts :class:`~brov2_hybrid.sim.ardusub_sitl.ArduSubSitl` (the
ArduSub binary + our vehicle model, physics served in a thread of this process, so
the true state is at hand beside ArduSub's own estimate), connects as the ground
station (system 255 = ArduSub's SYSID_MYGCS), asks for the streams, and offers what a
pilot does: modes, arming (retried while ArduSub's PreArm checks refuse), RC override,
SET_ATTITUDE_TARGET and parameters.

:func:`fly` runs one dive against a pilot, ticking on every ATTITUDE message (ArduSub's
estimate, vehicle time), and returns a log in :data:`brov2_hybrid.tick_log.logfile.LOG_COLUMNS`
plus the true attitude from the physics. Pilots
(:mod:`brov2_hybrid.analysis.ardusub_pilots`):

* :class:`~brov2_hybrid.analysis.ardusub_pilots.HybridPilot` - the hybrid autopilot in MANUAL: the same HybridController,
  normalisation and firmware output stage as the ``control_law`` and
  ``thruster_allocation`` nodes, RC override out.
* :class:`~brov2_hybrid.analysis.ardusub_pilots.ArduSubAttitudePilot` - ArduSub's own attitude controller. ArduSub 4.5 takes
  an absolute attitude without a position fix only in ALT_HOLD: ``GCS_MAVLINK_Sub::
  handle_message`` (ArduSub/GCS_Mavlink.cpp) stores a SET_ATTITUDE_TARGET whose
  type_mask ignores throttle (bit 6) in ``set_attitude_target_no_gps``, and
  ``ModeAlthold::run_pre`` (ArduSub/mode_althold.cpp) flies that quaternion with
  ``input_euler_angle_roll_pitch_yaw`` for 5 s after each message. GUIDED needs a
  position estimate (``ModeGuided::init``, ``Sub::position_ok``), and STABILIZE takes
  yaw as a rate stick (``ModeStabilize::run``), so neither commands an attitude cleanly.
  Surge and sway go through RC override as for the hybrid; heave is ALT_HOLD's climb-rate
  stick (``ModeAlthold::control_depth``), not an open-loop thrust.
"""
import logging
import math
import threading
import time

import numpy as np

from brov2_hybrid.link import ardusub
from brov2_hybrid.link.mavros_conversions import depth_from_relative_alt
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.kinematics import euler_from_quaternion, quaternion_from_euler
from brov2_hybrid.tick_log.logfile import NUMERIC_COLUMNS
from brov2_hybrid.dofs import DOF_NAMES

LOG = logging.getLogger(__name__)

GCS_SYSTEM_ID = 255
GCS_COMPONENT_ID = 190
#: SET_ATTITUDE_TARGET type_mask: ignore body rates (bits 0-2) and throttle (bit 6).
ATTITUDE_ONLY_MASK = 0b1000111
_COL = {name: k for k, name in enumerate(NUMERIC_COLUMNS)}


def _mavutil():
    from pymavlink import mavutil
    return mavutil


class SitlFlight(object):
    """Real ArduSub SITL on our physics, flown as its ground station from this process.

    Parameters
    ----------
    sitl : brov2_hybrid.sim.ardusub_sitl.ArduSubSitl
        Not started yet; :class:`SitlFlight` starts and closes it.
    stream_rate_hz : float
        ATTITUDE and SERVO_OUTPUT_RAW rate asked for (SET_MESSAGE_INTERVAL).
    connect_timeout_s : float
        Wall seconds to wait for ArduSub's TCP port and first HEARTBEAT.
    """

    def __init__(self, sitl, stream_rate_hz=50.0, connect_timeout_s=60.0):
        self.sitl = sitl
        self.statustext = []
        self._servo = None
        self._hb_wall = 0.0
        self.heartbeat = None
        #: Newest depth reading (ArduSub boot time [s], depth [m, positive down]) from
        #: GLOBAL_POSITION_INT (depth = -relative_alt, as the bridge and MAVROS give it), or None.
        self.depth_reading = None
        sitl.start()
        self._physics = threading.Thread(target=sitl.run, name="json-physics", daemon=True)
        self._physics.start()
        self.link = self._connect(connect_timeout_s)
        for name in ("ATTITUDE", "SERVO_OUTPUT_RAW"):
            self.message_interval(name, stream_rate_hz)
        self.message_interval("GLOBAL_POSITION_INT", 10.0)

    # ------------------------------------------------------------------ link
    def _connect(self, timeout_s):
        mavutil = _mavutil()
        end = time.monotonic() + timeout_s
        url = "tcp:127.0.0.1:%d" % self.sitl.mavlink_port
        while True:
            if self.sitl.returncode is not None:
                raise Brov2Error("ArduSub SITL exited (code %s) before it accepted a connection"
                                 % self.sitl.returncode)
            try:
                link = mavutil.mavlink_connection(url, source_system=GCS_SYSTEM_ID,
                                                  source_component=GCS_COMPONENT_ID, autoreconnect=False)
                break
            except OSError:
                if time.monotonic() > end:
                    raise Brov2Error("no ArduSub SITL on %s within %.0f s" % (url, timeout_s))
                time.sleep(0.2)
        while True:
            self.send_heartbeat(force=True)
            msg = link.recv_match(type="HEARTBEAT", blocking=True, timeout=1.0)
            if msg is not None and msg.get_srcSystem() != GCS_SYSTEM_ID:
                self.heartbeat = msg
                return link
            if time.monotonic() > end:
                raise Brov2Error("ArduSub SITL on %s sent no HEARTBEAT within %.0f s" % (url, timeout_s))

    def send_heartbeat(self, force=False):
        """GCS HEARTBEAT at most every 0.2 s wall (ArduSub disarms 2.5 s after the last one)."""
        now = time.monotonic()
        if force or now - self._hb_wall >= 0.2:
            self._hb_wall = now
            link = getattr(self, "link", None)
            if link is not None:
                link.mav.heartbeat_send(6, 8, 0, 0, 0)  # MAV_TYPE_GCS, MAV_AUTOPILOT_INVALID

    def recv(self, types=None, timeout_s=1.0):
        """Next message (of ``types``), keeping heartbeat, STATUSTEXT and servo outputs up to date."""
        end = time.monotonic() + timeout_s
        while True:
            self.send_heartbeat()
            left = end - time.monotonic()
            if left <= 0:
                return None
            msg = self.link.recv_match(blocking=True, timeout=min(left, 0.2))
            if msg is None:
                continue
            self._note(msg)
            if types is None or msg.get_type() in types:
                return msg

    def _note(self, msg):
        """Keep STATUSTEXT, the servo outputs and the vehicle's HEARTBEAT up to date."""
        kind = msg.get_type()
        if kind == "STATUSTEXT":
            self.statustext.append(msg.text)
            LOG.debug("ArduSub: %s", msg.text)
        elif kind == "SERVO_OUTPUT_RAW":
            self._servo = [getattr(msg, "servo%d_raw" % i) for i in range(1, ardusub.SERVO_OUTPUTS + 1)]
        elif kind == "HEARTBEAT" and msg.get_srcSystem() != GCS_SYSTEM_ID:
            self.heartbeat = msg
        elif kind == "GLOBAL_POSITION_INT":
            self.depth_reading = (msg.time_boot_ms / 1000.0, depth_from_relative_alt(msg.relative_alt))

    def drain(self):
        """Read everything already received (e.g. after the link was left unread) so that
        the next message is a fresh one; returns how many were read."""
        count = 0
        while True:
            self.send_heartbeat()
            msg = self.link.recv_match(blocking=False)
            if msg is None:
                return count
            self._note(msg)
            count += 1

    @property
    def servo_outputs(self):
        """Last SERVO_OUTPUT_RAW motor PWMs (8) [us], or None."""
        return self._servo

    def message_interval(self, name, rate_hz):
        """Ask for MAVLink message ``name`` (e.g. "ATTITUDE") at ``rate_hz`` [Hz] (SET_MESSAGE_INTERVAL;
        no acknowledgement awaited)."""
        mavutil = _mavutil()
        msg_id = getattr(mavutil.mavlink, "MAVLINK_MSG_ID_" + name)
        self.link.mav.command_long_send(self.link.target_system, self.link.target_component,
                                        mavutil.mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0,
                                        msg_id, 1e6 / rate_hz, 0, 0, 0, 0, 0)

    # ------------------------------------------------------------------ vehicle
    def set_param(self, name, value, timeout_s=5.0):
        """PARAM_SET and wait for the PARAM_VALUE echo; returns the value ArduSub holds."""
        mavutil = _mavutil()
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            self.link.mav.param_set_send(self.link.target_system, self.link.target_component, name.encode(),
                                         float(value), mavutil.mavlink.MAV_PARAM_TYPE_REAL32)
            msg = self.recv(("PARAM_VALUE",), 1.0)
            if msg is not None and msg.param_id == name:
                return msg.param_value
        raise Brov2Error("ArduSub did not confirm %s = %r within %.0f s" % (name, value, timeout_s))

    def get_param(self, name, timeout_s=5.0):
        """PARAM_REQUEST_READ; the value ArduSub holds."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            self.link.mav.param_request_read_send(self.link.target_system, self.link.target_component,
                                                  name.encode(), -1)
            msg = self.recv(("PARAM_VALUE",), 1.0)
            if msg is not None and msg.param_id == name:
                return msg.param_value
        raise Brov2Error("ArduSub did not send %s within %.0f s" % (name, timeout_s))

    @property
    def armed(self):
        """True when the last vehicle HEARTBEAT has the safety-armed flag (False before any HEARTBEAT)."""
        return bool(self.heartbeat and self.heartbeat.base_mode & ardusub.MODE_FLAG_SAFETY_ARMED)

    @property
    def mode(self):
        """ArduSub mode name of the last vehicle HEARTBEAT (ardusub.MODE_NAMES), None before any
        HEARTBEAT or for an unknown mode number."""
        return ardusub.MODE_NAMES.get(self.heartbeat.custom_mode) if self.heartbeat else None

    def set_mode(self, name, timeout_s=10.0):
        """Switch to ArduSub mode ``name`` (ardusub.MODES) and wait for the HEARTBEAT to show it."""
        number = ardusub.MODES[name]
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            self.link.set_mode(number)
            stop = time.monotonic() + 1.0
            while time.monotonic() < stop:
                self.recv(("HEARTBEAT",), 0.5)
                if self.mode == name:
                    return
        raise Brov2Error("ArduSub did not enter %s within %.0f s (last STATUSTEXT: %s)"
                         % (name, timeout_s, self.statustext[-3:]))

    def arm(self, timeout_s=60.0):
        """Arm, retrying while ArduSub refuses (PreArm checks right after boot, EKF not ready).

        Returns the number of attempts; raises Brov2Error with ArduSub's last reasons.
        """
        end = time.monotonic() + timeout_s
        attempts = 0
        while time.monotonic() < end:
            attempts += 1
            seen = len(self.statustext)
            self.link.arducopter_arm()
            stop = time.monotonic() + 2.0
            while time.monotonic() < stop:
                self.recv(("HEARTBEAT",), 0.5)
                if self.armed:
                    return attempts
            LOG.info("arming refused (attempt %d): %s", attempts, "; ".join(self.statustext[seen:]) or "no reason")
        reasons = [t for t in self.statustext if "PreArm" in t or "Arm" in t][-3:]
        raise Brov2Error("ArduSub refused to arm for %.0f s (%d attempts): %s"
                         % (timeout_s, attempts, "; ".join(reasons) or "no reason sent"))

    def disarm(self, timeout_s=10.0):
        """Disarm and wait for the HEARTBEAT to show it (it comes at 1 Hz)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            self.link.arducopter_disarm()
            stop = time.monotonic() + 2.0
            while time.monotonic() < stop:
                self.recv(("HEARTBEAT",), 0.5)
                if not self.armed:
                    return
        raise Brov2Error("ArduSub did not disarm within %.0f s" % timeout_s)

    def override(self, channels):
        """RC_CHANNELS_OVERRIDE of channels 1..8 (list of 8 PWMs; 0 = release)."""
        c = [int(v) for v in channels] + [0] * (8 - len(channels))
        self.link.mav.rc_channels_override_send(self.link.target_system, self.link.target_component, *c[:8])

    def attitude_target(self, eta2_rad, time_boot_ms=0):
        """SET_ATTITUDE_TARGET: absolute roll, pitch, yaw [rad] (rates and throttle ignored)."""
        qx, qy, qz, qw = quaternion_from_euler(eta2_rad)
        self.link.mav.set_attitude_target_send(int(time_boot_ms), self.link.target_system,
                                               self.link.target_component, ATTITUDE_ONLY_MASK,
                                               [qw, qx, qy, qz], 0.0, 0.0, 0.0, 0.5)

    def wait_time(self, t_boot_s, timeout_s=120.0):
        """Read until ArduSub's clock (ATTITUDE.time_boot_ms) reaches ``t_boot_s``."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            msg = self.recv(("ATTITUDE",), 1.0)
            if msg is not None and msg.time_boot_ms / 1000.0 >= t_boot_s:
                return msg
        raise Brov2Error("ArduSub's clock did not reach %.1f s within %.0f s" % (t_boot_s, timeout_s))

    def close(self):
        """Close the link, stop the physics thread, then ArduSub (its ports are free on return)."""
        try:
            self.link.close()
        finally:
            self.sitl.stop()
            self._physics.join(5.0)
            self.sitl.close()


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
    ``reader_lag_s`` per tick: how far the physics (lockstep with ArduSub) was ahead of
    the ATTITUDE message being read [s, vehicle time] -- a reader that falls behind flies on a
    stale attitude, so while it flies the physics is paced by what it has read
    (:attr:`~brov2_hybrid.sim.json_physics.JsonPhysics.pace`): on a busy machine the vehicle's
    clock waits for the reader, and the lag stays within ``max_lead_s``.
    """
    duration = dive.duration_s if duration_s is None else float(duration_s)
    offset = np.array([0.0, 0.0, yaw_offset_rad])
    physics = flight.sitl.physics
    consumed = [None]                    # vehicle time of the newest ATTITUDE read: paces the physics
    physics.pace = lambda: consumed[0]
    try:
        return _fly_paced(flight, pilot, dive, duration, offset, physics, consumed)
    finally:
        physics.pace = None


def _fly_paced(flight, pilot, dive, duration, offset, physics, consumed):
    """:func:`fly`'s loop while the physics is paced by ``consumed`` (see JsonPhysics.pace)."""
    rows, truth, lags, readings, depth_now = [], [], [], [], []
    t0 = None
    next_row = 0
    eta2d, u_lin = dive.eta2d_rad[0] + offset, dive.u_linear[0]
    dive_t = dive.t_s - dive.t_s[0]
    stall_end = time.monotonic() + 30.0
    last_depth = None
    while True:
        msg = flight.recv(("ATTITUDE",), 2.0)
        if msg is None:
            if time.monotonic() > stall_end:
                raise Brov2Error("no ATTITUDE from ArduSub for 30 s during the flight")
            continue
        stall_end = time.monotonic() + 30.0
        t_boot = msg.time_boot_ms / 1000.0
        if consumed[0] is not None and t_boot <= consumed[0]:
            continue                     # a repeated (or late) ATTITUDE: no new state, no tick
        consumed[0] = t_boot
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
    return log, np.array(truth)
