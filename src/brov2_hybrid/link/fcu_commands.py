"""What the MAVLink bridge (``nodes/mavlink_bridge``) sends the vehicle, and the replies it waits for.

:class:`FcuCommands` builds each message the bridge sends -- the GCS HEARTBEAT, the stream
requests (:mod:`brov2_hybrid.link.stream_requests`), RC_CHANNELS_OVERRIDE -- and answers the
bridge's services as MAVROS does: arming (COMMAND_LONG ARM_DISARM, then its COMMAND_ACK),
parameter read (PARAM_REQUEST_READ, then the PARAM_VALUE), mode (SET_MODE, no answer awaited).
It sends through ``send(fn)``, which calls ``fn(mav)`` with the connection's pymavlink
``MAVLink`` object and returns whether the message went out (False: no link, or the send failed);
the replies are those the receive side records (:class:`brov2_hybrid.link.link_state.CommandAcks`).
Times are seconds on a monotonic wall clock.
"""
import time

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link import mavros_conversions as conv
from brov2_hybrid.link import stream_requests


class FcuCommands(object):
    """The bridge's messages to the vehicle ``target_system``/``target_component``.

    ``schedule`` (a :class:`~brov2_hybrid.link.link_state.LinkSchedule`) says whether the
    vehicle is connected (``was_connected``: what the bridge published); ``acks`` and
    ``param_values`` hold the vehicle's COMMAND_ACKs (by command id) and PARAM_VALUEs (by
    name, (value, type)); the services wait up to ``timeout_s`` for them. ``warn(text)``
    reports a refused or unanswered request.
    """

    def __init__(self, send, target_system, target_component, timeout_s, schedule, acks, param_values, warn,
                 clock=time.monotonic):
        self._send = send
        self.target = (int(target_system), int(target_component))
        self.timeout_s = float(timeout_s)
        self.schedule = schedule
        self.acks = acks
        self.param_values = param_values
        self._warn = warn
        self._clock = clock

    def heartbeat(self):
        """Send the GCS HEARTBEAT (keeps ArduSub's GCS failsafe quiet). Returns whether it went out."""
        return self._send(lambda m: m.heartbeat_send(mavlink.MAV_TYPE_GCS, mavlink.MAV_AUTOPILOT_INVALID,
                                                     0, 0, mavlink.MAV_STATE_ACTIVE))

    def override(self, channels):
        """Send RC_CHANNELS_OVERRIDE with the 18 ``channels`` (PWM [us]). Returns whether it went out."""
        return self._send(lambda m: m.rc_channels_override_send(*(self.target + tuple(channels))))

    def request_streams(self, streams):
        """Ask for each (message name, rate Hz) of ``streams`` with MAV_CMD_SET_MESSAGE_INTERVAL, then
        per stream group with REQUEST_DATA_STREAM (the fallback for firmware without it).

        Returns the messages only SET_MESSAGE_INTERVAL can start
        (:func:`~brov2_hybrid.link.stream_requests.interval_only`)."""
        for name, rate in streams:
            msg_id = getattr(mavlink, "MAVLINK_MSG_ID_" + name)
            interval = stream_requests.interval_us(rate)
            self._send(lambda m: m.command_long_send(self.target[0], self.target[1],
                                                     mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0,
                                                     msg_id, interval, 0, 0, 0, 0, 0))
        for group, rate in stream_requests.data_stream_requests(streams):
            stream = getattr(mavlink, "MAV_DATA_STREAM_" + group)
            self._send(lambda m: m.request_data_stream_send(self.target[0], self.target[1],
                                                            stream, int(round(rate)), 1))
        return stream_requests.interval_only(streams)

    def arm(self, value):
        """Arm (``value`` True) or disarm: COMMAND_LONG MAV_CMD_COMPONENT_ARM_DISARM, then wait up to
        ``timeout_s`` for its COMMAND_ACK.

        Returns (success, MAV_RESULT): the vehicle's result (success when ACCEPTED), or
        (False, MAV_RESULT_FAILED) when the vehicle is not connected or sends no ACK (with a warning).
        """
        if not self.schedule.was_connected:
            self._warn("arming request refused: vehicle not connected")
            return False, mavlink.MAV_RESULT_FAILED
        since = self._clock()
        self._send(lambda m: m.command_long_send(self.target[0], self.target[1],
                                                 mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 0,
                                                 1.0 if value else 0.0, 0, 0, 0, 0, 0, 0))
        result = self.acks.wait(mavlink.MAV_CMD_COMPONENT_ARM_DISARM, since, self.timeout_s)
        if result is None:
            self._warn("no COMMAND_ACK for %s within %.1f s" % ("arm" if value else "disarm", self.timeout_s))
            return False, mavlink.MAV_RESULT_FAILED
        return result == mavlink.MAV_RESULT_ACCEPTED, result

    def param_get(self, param_id):
        """Read the vehicle's parameter ``param_id``: PARAM_REQUEST_READ, then wait up to ``timeout_s``
        for its PARAM_VALUE.

        Returns (integer, real) as MAVROS fills mavros_msgs/ParamValue
        (:func:`~brov2_hybrid.link.mavros_conversions.param_value_fields`), or None when the vehicle
        is not connected or no answer came (a warning then).
        """
        if not self.schedule.was_connected:
            return None
        since = self._clock()
        self._send(lambda m: m.param_request_read_send(self.target[0], self.target[1],
                                                       param_id.encode("ascii", "replace")[:16], -1))
        reply = self.param_values.wait(param_id, since, self.timeout_s)
        if reply is None:
            self._warn("no PARAM_VALUE for %s within %.1f s" % (param_id, self.timeout_s))
            return None
        return conv.param_value_fields(*reply)

    def set_mode(self, base_mode, custom_mode, armed):
        """Send SET_MODE as MAVROS does (:func:`~brov2_hybrid.link.mavros_conversions.set_mode_fields`:
        an ``armed`` vehicle stays armed). Returns whether it went out; an unknown mode is warned
        about and not sent (False). No answer is awaited."""
        try:
            base, custom = conv.set_mode_fields(base_mode, custom_mode, armed)
        except Brov2Error as exc:
            self._warn(str(exc))
            return False
        return self._send(lambda m: m.set_mode_send(self.target[0], base, custom))
