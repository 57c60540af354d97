"""Our vehicle model as the physics of real ArduSub: ArduPilot's JSON SITL interface.

ArduSub SITL started with ``--model JSON:127.0.0.1`` hands its physics to an outside
program over UDP (ArduPilot ``libraries/SITL/SIM_JSON.cpp``, ``JSON::output_servos`` and
``JSON::recv_fdm``; protocol notes in ``libraries/SITL/examples/JSON/readme.md``):

- every physics frame SITL sends, to UDP port ``9002 + 10 N`` (instance ``-I N``), a
  little-endian servo packet ``uint16 magic, uint16 frame_rate, uint32 frame_count,
  uint16 pwm[16]`` (magic 18458; 29569 with ``pwm[32]`` when SERVO_32_ENABLE is set).
  frame_rate is SIM_RATE_HZ; frame_count restarts when SITL restarts.
- the physics answers to the sender's address with one JSON object framed by newlines
  (``JSON::recv_fdm`` parses the text between the last two newlines, so the leading one
  matters): ``timestamp`` [s], ``imu.gyro`` [rad/s, body FRD], ``imu.accel_body``
  [m/s^2, specific force, body FRD], ``position`` [m, NED from home], ``velocity``
  [m/s, NED] and ``quaternion`` [w, x, y, z] body FRD -> NED. ``JSON::parse_sensors``
  is no JSON parser: it finds a key, skips the key, its quote and the colon, and reads a
  vector with ``sscanf("[%f, %f, %f]")``, so a space after the colon fails ("Failed to
  parse Vector3f"); numbers are written as floats.
- with ``-S`` (lockstep) SITL sends the next frame only after a valid reply: the physics
  sets the pace and may run faster than real time.

:class:`JsonPhysics` is the protocol logic around a
:class:`~brov2_hybrid.sim.plant.Plant` (no sockets, unit-tested);
:class:`JsonPhysicsServer` puts it on a UDP port. ArduSub's motor n is servo output n
(its Heavy and vectored frames map motor n to SERVOn), the vehicle file's thruster order.
"""
import collections
import json
import logging
import math
import socket
import struct
import time
from collections import namedtuple


from brov2_hybrid.errors import Brov2Error

LOG = logging.getLogger(__name__)

#: Servo packet magics of SIM_JSON.cpp: 16 and 32 PWM channels.
SERVO_MAGIC_16 = 18458
SERVO_MAGIC_32 = 29569
_HEADER = struct.Struct("<HHI")
_PACKET_SIZES = {SERVO_MAGIC_16: _HEADER.size + 2 * 16, SERVO_MAGIC_32: _HEADER.size + 2 * 32}
#: SITL's ports: JSON physics 9002 + 10 N; MAVLink SERIAL0 on TCP 5760 + 10 N (``-I N``).
JSON_PORT_BASE = 9002
MAVLINK_PORT_BASE = 5760
INSTANCE_PORT_STEP = 10
#: Receive buffer [bytes] (a 32-channel packet is 72).
RECV_BYTES = 1024

ServoFrame = namedtuple("ServoFrame", "frame_rate_hz frame_count pwm_us")
ServoFrame.__doc__ = "One servo packet of ArduPilot's JSON SITL: rate [Hz], frame counter, PWMs [us]."


def json_port(instance):
    """UDP port on which SITL instance ``instance`` (``-I N``) sends its servo packets."""
    return JSON_PORT_BASE + INSTANCE_PORT_STEP * int(instance)


def mavlink_port(instance):
    """TCP port of SITL instance ``instance``'s first MAVLink serial port (SERIAL0)."""
    return MAVLINK_PORT_BASE + INSTANCE_PORT_STEP * int(instance)


def parse_servo_packet(data):
    """Decode one SITL servo packet (bytes) into a :class:`ServoFrame`.

    Raises :class:`~brov2_hybrid.errors.Brov2Error` naming what is wrong (unknown magic,
    wrong length, zero frame rate).
    """
    if len(data) < _HEADER.size:
        raise Brov2Error("JSON SITL servo packet: %d bytes, expected at least %d" % (len(data), _HEADER.size))
    magic, rate, count = _HEADER.unpack_from(data)
    size = _PACKET_SIZES.get(magic)
    if size is None:
        raise Brov2Error("JSON SITL servo packet: magic %d, expected %d (16 channels) or %d (32)"
                         % (magic, SERVO_MAGIC_16, SERVO_MAGIC_32))
    if len(data) != size:
        raise Brov2Error("JSON SITL servo packet: %d bytes with magic %d, expected %d" % (len(data), magic, size))
    if rate <= 0:
        raise Brov2Error("JSON SITL servo packet: frame_rate 0 (SIM_RATE_HZ must be > 0)")
    pwm = struct.unpack_from("<%dH" % ((size - _HEADER.size) // 2), data, _HEADER.size)
    return ServoFrame(rate, count, pwm)


def servo_packet(frame_rate_hz, frame_count, pwm_us):
    """Encode a 16-channel servo packet as SITL sends it (for tests and tools)."""
    pwm = list(pwm_us) + [0] * (16 - len(pwm_us))
    return _HEADER.pack(SERVO_MAGIC_16, int(frame_rate_hz), int(frame_count)) + struct.pack("<16H", *pwm[:16])


def _vector(values):
    # SITL's sscanf reads "[a, b, c]" right after the colon.
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


def state_reply(timestamp_s, gyro_frd, accel_frd, position_ned, velocity_ned, quaternion_wxyz):
    """The JSON datagram answering one servo packet (bytes, framed by newlines)."""
    # No space after a colon: parse_sensors skips exactly the key, its closing quote and
    # the colon, then sscanf's "[" must match the next character.
    text = ('{"timestamp":%r,"imu":{"gyro":%s,"accel_body":%s},"position":%s,'
            '"velocity":%s,"quaternion":%s}'
            % (float(timestamp_s), _vector(gyro_frd), _vector(accel_frd), _vector(position_ned),
               _vector(velocity_ned), _vector(quaternion_wxyz)))
    return ("\n" + text + "\n").encode("ascii")


def parse_state_reply(data):
    """Decode a reply written by :func:`state_reply` into a dict (for tests and tools)."""
    return json.loads(data.decode("ascii").strip())


class JsonPhysics(object):
    """ArduPilot's JSON physics protocol around one :class:`Plant`.

    Each servo frame sets the motor PWMs (outputs 1..n of the vehicle), advances the
    model by one frame period (1 / frame_rate, in whole physics steps; the remainder is
    carried to the next frame) and returns the reply. A PWM of 0 (an output SITL has not
    started yet) counts as neutral.

    Parameters
    ----------
    plant : brov2_hybrid.sim.plant.Plant
        Reset to its start pose by the caller.
    """

    #: Physics steps of true attitude and depth kept in :attr:`history` (5 s at 400 Hz).
    HISTORY_STEPS = 2000

    def __init__(self, plant):
        self.plant = plant
        #: (physics time [s], quaternion (x, y, z, w) body FRD -> NED, depth [m, NED down]) after
        #: each frame, for comparing what ArduSub estimated with the truth (SIM_JSON drives
        #: ArduSub's clock from our timestamps, so ArduSub's time_boot_ms is physics time).
        self.history = collections.deque(maxlen=self.HISTORY_STEPS)
        self.n_motors = plant.n_thrusters
        self.neutral_us = float(plant.vehicle.thrusters.pwm_neutral_us)
        self.frames = 0
        self.restarts = 0
        self._last_count = None
        #: Frames SIM_JSON sent again (same frame_count): never stepped; answered only when the
        #: first reply looks lost (see :meth:`on_frame`).
        self.resent_frames = 0
        self._replied_at = 0.0
        self._target_s = plant.t_s
        self._pwm = None
        #: Optional pacing by a reader of ArduSub's telemetry in this process: a callable giving
        #: the vehicle time [s] of the newest message it has consumed (None: not reading now).
        #: While set, a frame is answered only once the physics is at most :attr:`max_lead_s`
        #: ahead of it (ArduSub, in lockstep, waits for the answer): a busy reader slows the
        #: vehicle's clock instead of flying on stale attitudes. After :attr:`pace_timeout_s`
        #: wall seconds without the reader moving on (ArduSub sent nothing newer within the lead:
        #: a gap in its stream), the physics goes on, unpaced until the reader reads something
        #: newer, and counts :attr:`pace_timeouts`: never a deadlock.
        self.pace = None
        self.max_lead_s = 0.1
        self.pace_timeout_s = 2.0
        self.pace_timeouts = 0
        self._unpaced_at = None
        #: Optional, with :attr:`pace`: a callable that is True while the reader has read everything
        #: ArduSub sent and waits for more. Then a frame is answered whatever the lead: ArduSub sends its
        #: next message only as its clock runs on (lockstep SITL writes its MAVLink out at an I/O pass
        #: every 12.5 ms of its time at 400 Hz, so an ATTITUDE reaches the reader 5-14 ms after its
        #: stamp: the next one came up to 34 ms of physics time after the newest one answered, against a
        #: lead of 35 ms), and holding the physics would stall both until :attr:`pace_timeout_s`. The
        #: pilot has answered everything by then: no command waits for the physics. Counted in
        #: :attr:`idle_frames`.
        self.reader_idle = None
        self.idle_frames = 0
        #: Optional keep-alive gate of a ground station in this process: a callable giving the
        #: physics time [s] of its newest HEARTBEAT (None: none sent yet). Lockstep ArduSub's clock
        #: runs as fast as the physics answers (speedup 50 and more) and its GCS failsafe counts
        #: that clock, so a ground station whose heartbeat comes in wall time looks silent to it and
        #: is disarmed ("MYGCS: 255, heartbeat lost"). While set, a frame more than
        #: :attr:`gcs_max_gap_s` past the newest heartbeat waits for the next one; after
        #: :attr:`gcs_wait_s` wall seconds it goes on (counted in :attr:`gcs_waits_timed_out`),
        #: ungated until the ground station sends again: never a deadlock.
        self.gcs_heartbeat_at = None
        self.gcs_max_gap_s = 1.0
        self.gcs_wait_s = 60.0
        self.gcs_waits_timed_out = 0
        self._gcs_released_at = None
        self._depth_request = None
        #: A :class:`~brov2_hybrid.sim.tether_state.TetherReporter` given the tether after every frame (or None).
        self.tether_report = None

    #: SIM_JSON resends an unanswered servo frame after this long [s, wall] (JSON::recv_fdm: 1 s).
    RESEND_PERIOD_S = 1.0

    def request_depth(self, depth_m):
        """Carry the vehicle to ``depth_m`` [m, down] at the next frame, as a diver brings a buoyant
        ROV back down between runs: same attitude and angular rates, linear velocity zero."""
        self._depth_request = float(depth_m)

    def _hold_behind(self, attribute, lead_s, timeout_s, released, idle=None):
        """Block while the physics is more than ``lead_s`` past the vehicle time that the callable in
        ``attribute`` (read anew each turn: it may be unset meanwhile) gives (None: not gated); after ``timeout_s`` wall seconds without it moving on, go on and return that time (it is not
        waited for again), else None. ``released``: the time last gone on without. ``idle``: the name of an
        attribute holding a callable (or None); while it says True the physics is not held (returns None)."""
        end = None
        while True:
            source = getattr(self, attribute)
            t = source() if source is not None else None
            if t is None or t == released or self.plant.t_s - t <= lead_s:
                return None
            waiting = getattr(self, idle) if idle is not None else None
            if waiting is not None and waiting():
                self.idle_frames += 1
                return None
            now = time.monotonic()
            end = now + timeout_s if end is None else end
            if now > end:
                return t
            time.sleep(0.0005)

    def _wait_for_reader(self):
        """Block while the physics is more than :attr:`max_lead_s` ahead of :attr:`pace`'s reader, unless
        that reader waits with nothing to read (:attr:`reader_idle`)."""
        stuck = self._hold_behind("pace", self.max_lead_s, self.pace_timeout_s, self._unpaced_at, "reader_idle")
        if stuck is not None:
            self.pace_timeouts += 1
            self._unpaced_at = stuck

    def _wait_for_gcs(self):
        """Block while the physics is more than :attr:`gcs_max_gap_s` past the ground station's newest
        heartbeat (:attr:`gcs_heartbeat_at`)."""
        stuck = self._hold_behind("gcs_heartbeat_at", self.gcs_max_gap_s, self.gcs_wait_s, self._gcs_released_at)
        if stuck is not None:
            self.gcs_waits_timed_out += 1
            self._gcs_released_at = stuck
            LOG.warning("no ground-station HEARTBEAT for %.1f s of wall time: the physics goes on without it",
                        self.gcs_wait_s)

    def on_frame(self, frame):
        """Apply one :class:`ServoFrame`; returns the JSON reply (bytes)."""
        self._wait_for_reader()
        self._wait_for_gcs()
        plant = self.plant
        if self._depth_request is not None:
            eta, nu = plant.eta.copy(), plant.nu.copy()
            eta[2], nu[0:3] = self._depth_request, 0.0
            plant.reset(eta=eta, nu=nu, t_s=plant.t_s)
            self._pwm = None                     # reset() set the motors neutral: apply this frame's
            self._depth_request = None
        if frame.frame_count == self._last_count:
            # The same frame again: SIM_JSON resends its servos after 1 s (wall) without a reply
            # (JSON::recv_fdm), e.g. while this physics waited for a reader or a ground station,
            # and the resend queues behind the frame being answered. That frame has its reply:
            # a second one would be taken as the next frame's, and ArduSub would run one frame
            # behind the physics from then on, a frame more per resend. Only a resend that comes
            # later than SIM_JSON's resend period after the reply means the reply was lost.
            self.resent_frames += 1
            if time.monotonic() - self._replied_at < self.RESEND_PERIOD_S:
                return None
            return self.reply()
        if self._last_count is not None and frame.frame_count < self._last_count:
            # SITL restarted (reboot): its clock starts again, ours goes on (SIM_JSON
            # tolerates a physics time that keeps increasing).
            self.restarts += 1
            LOG.warning("ArduSub SITL restarted (frame count %d after %d); physics continues at t = %.3f s",
                        frame.frame_count, self._last_count, plant.t_s)
        self._last_count = frame.frame_count
        pwm = [float(p) if p > 0 else self.neutral_us for p in frame.pwm_us[:self.n_motors]]
        if pwm != self._pwm:
            plant.set_motor_pwm(pwm)
            self._pwm = pwm
        self._target_s += 1.0 / frame.frame_rate_hz
        n = int(math.floor((self._target_s - plant.t_s) / plant.dt_s + 0.5))
        if n > 0:
            plant.step(n)
        self.history.append((plant.t_s, plant.quaternion_ned_frd(), float(plant.eta[2])))
        if self.tether_report is not None:
            self.tether_report.update(plant.t_s, plant)
        self.frames += 1
        self._replied_at = time.monotonic()
        return self.reply()

    def reply(self):
        """The reply for the model's present state (bytes)."""
        plant = self.plant
        qx, qy, qz, qw = plant.quaternion_ned_frd()
        eta = plant.eta
        return state_reply(plant.t_s, plant.nu[3:6], plant.specific_force_body(), eta[0:3],
                           plant.velocity_ned_m_s(), (qw, qx, qy, qz))


class JsonPhysicsServer(object):
    """:class:`JsonPhysics` on the UDP port of one SITL instance.

    Parameters
    ----------
    physics : JsonPhysics
    host : str
        Address to bind (SITL sends to 127.0.0.1 unless told ``--model JSON:ADDR``).
    port : int
        UDP port (:func:`json_port` of the instance; 0 picks a free one, see :attr:`port`).
    """

    #: Longest wait in recv [s]: how quickly :meth:`stop` takes effect.
    POLL_S = 0.2

    def __init__(self, physics, host="127.0.0.1", port=JSON_PORT_BASE):
        self.physics = physics
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.bind((host, int(port)))
        except OSError as exc:
            self.sock.close()
            raise Brov2Error("JSON physics: cannot bind udp:%s:%d (%s); is another simulator on "
                             "this SITL instance?" % (host, port, exc))
        self.sock.settimeout(self.POLL_S)
        self.port = self.sock.getsockname()[1]
        self.bad_packets = 0
        self._stop = False

    def stop(self):
        """Ask :meth:`run` to return (safe from another thread or a signal handler)."""
        self._stop = True

    @property
    def stopping(self):
        """True once :meth:`stop` was called."""
        return self._stop

    def serve_once(self):
        """Answer one servo packet; False when none came within :attr:`POLL_S`."""
        try:
            data, peer = self.sock.recvfrom(RECV_BYTES)
        except socket.timeout:
            return False
        try:
            frame = parse_servo_packet(data)
        except Brov2Error as exc:
            self.bad_packets += 1
            if self.bad_packets <= 3:
                LOG.warning("%s (from %s:%d; ignored)", exc, peer[0], peer[1])
            return True
        reply = self.physics.on_frame(frame)
        if reply is not None:                # None: a resent frame already answered
            self.sock.sendto(reply, peer)
        return True

    def run(self, duration_s=None):
        """Serve until :meth:`stop` (or ``duration_s`` of physics time)."""
        end = math.inf if duration_s is None else self.physics.plant.t_s + float(duration_s)
        LOG.info("JSON physics on udp:%d (model %s, %d motors)", self.port, self.physics.plant.kind,
                 self.physics.n_motors)
        waiting = 0
        while not self._stop and self.physics.plant.t_s < end:
            if self.serve_once():
                waiting = 0
                continue
            waiting += 1
            if waiting == int(5.0 / self.POLL_S):
                LOG.info("JSON physics: no frame from ArduSub SITL for 5 s (not started, or waiting "
                         "for a MAVLink client on its TCP port before it boots)")

    def close(self):
        """Close the UDP socket, freeing the port (after :meth:`run` has returned)."""
        self.sock.close()

