"""Flying real ArduSub SITL (on our physics) from this process, over MAVLink.

:class:`SitlFlight` starts :class:`~brov2_hybrid.sim.ardusub_sitl.ArduSubSitl` (the
ArduSub binary + our vehicle model, physics served in a thread of this process, so
the true state is at hand beside ArduSub's own estimate), connects as the ground
station (system 255 = ArduSub's SYSID_MYGCS), asks for the streams, and offers what a
pilot does: modes, arming (retried while ArduSub's PreArm checks refuse), RC override,
SET_ATTITUDE_TARGET and parameters.

:func:`brov2_hybrid.analysis.ardusub_fly.fly` runs one dive against a pilot, ticking on every
ATTITUDE message (ArduSub's estimate, vehicle time), and returns a log in
:data:`brov2_hybrid.tick_log.logfile.LOG_COLUMNS` plus the true attitude from the physics. Pilots
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
import select
import threading
import time

from brov2_hybrid.link import ardusub
from brov2_hybrid.link.mavros_conversions import depth_from_relative_alt
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.kinematics import quaternion_from_euler

LOG = logging.getLogger(__name__)

GCS_SYSTEM_ID = 255
GCS_COMPONENT_ID = 190
#: The ground station's HEARTBEAT period [s], in wall and in vehicle time alike (whichever runs out
#: first): ArduSub's GCS failsafe fires 2.5 s of vehicle time after the last one (FS_GCS_TIMEOUT_MS,
#: ArduSub 4.5), and lockstep SITL's clock may run 50 times faster than the wall's.
HEARTBEAT_PERIOD_S = 0.2
#: SET_ATTITUDE_TARGET type_mask: ignore body rates (bits 0-2) and throttle (bit 6).
ATTITUDE_ONLY_MASK = 0b1000111


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
        self._hb_vehicle_s = None
        self._silent = False
        #: The rate [Hz] last asked for, per message name (:meth:`message_interval`).
        self.stream_rates_hz = {}
        self.heartbeat = None
        self._reading = True          # busy until recv first waits with nothing to read
        #: Vehicle time [s] of the newest ATTITUDE read (None before the first): paces the physics for the
        #: whole session (below).
        self.newest_attitude_s = None
        #: Newest depth reading (ArduSub boot time [s], depth [m, positive down]) from
        #: GLOBAL_POSITION_INT (depth = -relative_alt, as the bridge and MAVROS give it), or None.
        self.depth_reading = None
        sitl.start()
        # the physics (and so ArduSub's clock) waits for this ground station's heartbeat rather than
        # run past ArduSub's GCS failsafe between two of them (JsonPhysics.gcs_heartbeat_at)
        sitl.physics.gcs_heartbeat_at = lambda: self._hb_vehicle_s
        # The whole session is paced by this reader, not only a flight (fly() paces by what its pilot
        # answered): the physics, so ArduSub's lockstep clock, runs at most one ATTITUDE period plus
        # pace_margin_s past the newest ATTITUDE read, unless the reader waits with everything read. So a
        # command sent between flights (a mode, arming, a parameter, the flight's start) reaches ArduSub
        # within that lead of the messages read, however busy the machine: unpaced, the clock ran on while
        # this process did set-up work, up to the heartbeat gate (JsonPhysics.gcs_max_gap_s, a second).
        # It does not make ArduSub's flights repeatable to the last digit (docs/experiments.md says how far).
        sitl.physics.pace = lambda: self.newest_attitude_s
        sitl.physics.reader_idle = self.reader_idle
        self._set_pace_lead(stream_rate_hz)
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
        self.link = link                 # send_heartbeat sends on it from here on
        while True:
            self.send_heartbeat(force=True)
            msg = link.recv_match(type="HEARTBEAT", blocking=True, timeout=1.0)
            if msg is not None and msg.get_srcSystem() != GCS_SYSTEM_ID:
                self.heartbeat = msg
                return link
            if time.monotonic() > end:
                raise Brov2Error("ArduSub SITL on %s sent no HEARTBEAT within %.0f s" % (url, timeout_s))

    def _set_pace_lead(self, attitude_rate_hz):
        """The session's pace: one ATTITUDE period plus ``pace_margin_s`` (params/analysis.yaml)."""
        from brov2_hybrid.analysis.ardusub_fly import pace_lead_s
        self.sitl.physics.max_lead_s = pace_lead_s(attitude_rate_hz)

    def go_silent(self):
        """The ground station stops sending HEARTBEAT for good (a lost tether, a closed QGC), and the
        physics stops waiting for it (:attr:`JsonPhysics.gcs_heartbeat_at` unset): ArduSub's clock runs
        on and its GCS failsafe sees the silence, as on a vehicle."""
        self._silent = True
        self.sitl.physics.gcs_heartbeat_at = None

    def send_heartbeat(self, force=False):
        """GCS HEARTBEAT once :data:`HEARTBEAT_PERIOD_S` has passed in wall time or in the physics' (vehicle)
        time since the last one (ArduSub disarms 2.5 s of vehicle time after the last one; the physics
        waits for the next one rather than run past that: :class:`~brov2_hybrid.sim.json_physics.JsonPhysics`)."""
        now = time.monotonic()
        vehicle_s = self.sitl.physics.plant.t_s
        due = (force or now - self._hb_wall >= HEARTBEAT_PERIOD_S or self._hb_vehicle_s is None
               or vehicle_s - self._hb_vehicle_s >= HEARTBEAT_PERIOD_S)
        link = getattr(self, "link", None)
        if due and link is not None and not self._silent:
            link.mav.heartbeat_send(6, 8, 0, 0, 0)  # MAV_TYPE_GCS, MAV_AUTOPILOT_INVALID
            self._hb_wall, self._hb_vehicle_s = now, vehicle_s

    def recv(self, types=None, timeout_s=1.0):
        """Next message (of ``types``), keeping heartbeat, STATUSTEXT and servo outputs up to date.

        From the call until it has read everything received and waits on the socket, and from a message
        returned until the next call, this reader is busy (:meth:`reader_idle` False)."""
        end = time.monotonic() + timeout_s
        while True:
            self.send_heartbeat()
            self._reading = True
            msg = self.link.recv_match(blocking=False)
            if msg is None:
                self._reading = False
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.link.select(min(left, 0.2))
                continue
            self._note(msg)
            if types is None or msg.get_type() in types:
                return msg

    def reader_idle(self):
        """True while :meth:`recv` waits with everything ArduSub sent read (nothing on the socket): what
        :attr:`JsonPhysics.reader_idle <brov2_hybrid.sim.json_physics.JsonPhysics.reader_idle>` asks
        (from the physics thread) while a flight paces the physics. Lockstep ArduSub writes its MAVLink
        out before it asks for the next frame, so while the physics holds a frame nothing more comes."""
        if self._reading:
            return False
        fd = getattr(self.link, "fd", None)
        if fd is None:
            return False
        try:
            return not select.select([fd], [], [], 0)[0]
        except (OSError, ValueError):
            return False

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
        elif kind == "ATTITUDE":
            t_s = msg.time_boot_ms / 1000.0
            self.newest_attitude_s = t_s if self.newest_attitude_s is None else max(self.newest_attitude_s, t_s)
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
        self.stream_rates_hz[name] = float(rate_hz)
        if name == "ATTITUDE":
            self._set_pace_lead(rate_hz)

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
