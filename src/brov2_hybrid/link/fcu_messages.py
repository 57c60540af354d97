"""What each message from the vehicle does in the MAVLink bridge (``nodes/mavlink_bridge``).

:class:`FcuMessages` takes every message the bridge receives (a pymavlink message) and
dispatches it by type through one table (:attr:`FcuMessages.handlers`): it keeps the
link's timers (:class:`~brov2_hybrid.link.link_state.LinkSchedule`), the vehicle's state from
its HEARTBEAT, the replies the services wait for (COMMAND_ACK, PARAM_VALUE) and hands what is to
be published, converted as MAVROS does (:mod:`brov2_hybrid.link.mavros_conversions`), to
:data:`Outputs`: the node's callbacks, which only build and publish the ROS messages.
Only messages from the target system count; a HEARTBEAT counts only from the vehicle itself
(the target component, not a GCS). ``mono``: seconds on a monotonic wall clock.
"""
import collections

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link import link_state
from brov2_hybrid.link import mavros_conversions as conv

#: The node's side. ``connected(mono)``: the vehicle's first HEARTBEAT since the link was down;
#: ``state()``: a HEARTBEAT while connected (publish :attr:`FcuMessages.state`);
#: ``attitude(kind, time_boot_ms, q, w, error, mono)``: the attitude (``q``, ``w`` from
#: :func:`~brov2_hybrid.link.mavros_conversions.imu_or_nan`, NaN with ``error`` set when it
#: could not be converted); ``rc_out(channels)``; ``depth(depth_m)`` [m, positive down];
#: ``system_time(time_boot_ms, mono)``; ``statustext(severity, text)``; ``unsigned(msg, mono)``:
#: a frame refused by signing (only when the link is signed).
Outputs = collections.namedtuple("Outputs", "connected state attitude rc_out depth system_time statustext unsigned")

#: Attitude message -> (conversion, its attitude fields); the body rates follow.
ATTITUDE_FIELDS = {
    "ATTITUDE_QUATERNION": (conv.imu_from_quaternion, lambda msg: (msg.q1, msg.q2, msg.q3, msg.q4)),
    "ATTITUDE": (conv.imu_from_euler, lambda msg: (msg.roll, msg.pitch, msg.yaw)),
}


class FcuMessages(object):
    """The bridge's receive side: :meth:`handle` each message of the vehicle
    ``target_system``/``target_component``; the attitude is taken from ``attitude_msg`` (a key of
    :data:`ATTITUDE_FIELDS`) only; ``signed``: the link is signed (frames refused by signing
    go to ``outputs.unsigned``)."""

    def __init__(self, schedule, outputs, target_system, target_component, attitude_msg, signed):
        if attitude_msg not in ATTITUDE_FIELDS:
            raise Brov2Error("attitude message: expected one of %s, got %r" % (sorted(ATTITUDE_FIELDS), attitude_msg))
        self.schedule = schedule
        self.out = outputs
        self.target_system = int(target_system)
        self.target_component = int(target_component)
        self.signed = bool(signed)
        #: The last vehicle HEARTBEAT (conv.state_from_heartbeat plus system_status).
        self.state = {"armed": False, "guided": False, "manual_input": False, "mode": "", "system_status": 0}
        self.acks = link_state.CommandAcks()           # COMMAND_ACK by command id: result
        self.param_values = link_state.CommandAcks()   # PARAM_VALUE by name: (value, type)
        self.handlers = {
            "HEARTBEAT": self._heartbeat,
            attitude_msg: self._attitude,
            "SERVO_OUTPUT_RAW": self._servo_output,
            conv.DEPTH_MESSAGE: lambda msg, mono: self.out.depth(conv.depth_from_relative_alt(msg.relative_alt)),
            "SYSTEM_TIME": lambda msg, mono: self.out.system_time(msg.time_boot_ms, mono),
            "COMMAND_ACK": lambda msg, mono: self.acks.record(msg.command, msg.result, mono),
            "PARAM_VALUE": lambda msg, mono: self.param_values.record(msg.param_id, (msg.param_value,
                                                                                     msg.param_type), mono),
            "STATUSTEXT": lambda msg, mono: self.out.statustext(msg.severity, msg.text),
        }

    def handle(self, msg, mono):
        """One message received at ``mono``: frames refused by signing go to ``unsigned``; others
        of the target system restart the silence timer and go to their handler (none: ignored)."""
        kind = msg.get_type()
        if kind == "BAD_DATA":
            if self.signed and msg.reason == "Invalid signature":
                self.out.unsigned(msg, mono)
            return
        if msg.get_srcSystem() != self.target_system:
            return
        self.schedule.on_message(mono)
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(msg, mono)

    def _heartbeat(self, msg, mono):
        if not conv.is_vehicle_heartbeat(msg.type, msg.get_srcComponent(), self.target_component):
            return
        self.schedule.on_heartbeat(mono)
        self.state = dict(conv.state_from_heartbeat(msg.base_mode, msg.custom_mode), system_status=msg.system_status)
        if not self.schedule.was_connected:
            self.out.connected(mono)
        else:
            self.out.state()

    def _attitude(self, msg, mono):
        convert, fields = ATTITUDE_FIELDS[msg.get_type()]
        q, w, error = conv.imu_or_nan(convert, *(fields(msg) + (msg.rollspeed, msg.pitchspeed, msg.yawspeed)))
        self.out.attitude(msg.get_type(), msg.time_boot_ms, q, w, error, mono)

    def _servo_output(self, msg, mono):
        self.out.rc_out(conv.servo_channels(getattr(msg, "servo%d_raw" % i, 0) for i in range(1, 17)))
