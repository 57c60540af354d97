"""Commands of the simulated ArduSub: COMMAND_LONG, COMMAND_INT and SET_MODE (:class:`CommandHandler`).

As ArduSub's GCS_MAVLINK: arm/disarm 400, DO_SET_MODE 176, GET_HOME_POSITION 410,
SET_MESSAGE_INTERVAL 511, REQUEST_MESSAGE 512, REQUEST_AUTOPILOT_CAPABILITIES 520;
others -> COMMAND_ACK UNSUPPORTED. Every command is acknowledged, broadcast or not; a
non-finite param1..param4 is DENIED. SET_MODE is acknowledged with its message id as
the command number. Only custom modes are accepted; which one the
:class:`~brov2_hybrid.sim.firmware.Firmware` decides.
"""
import logging
import math

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.sim import telemetry
from brov2_hybrid.sim.firmware import SEVERITY_WARNING

LOG = logging.getLogger(__name__)

#: ArduSub 4.1.0 "official" as AUTOPILOT_VERSION.flight_sw_version.
FLIGHT_SW_VERSION = (4 << 24) | (1 << 16) | (0 << 8) | 255
CAPABILITIES = (mavlink.MAV_PROTOCOL_CAPABILITY_PARAM_FLOAT | mavlink.MAV_PROTOCOL_CAPABILITY_MISSION_INT
                | mavlink.MAV_PROTOCOL_CAPABILITY_COMMAND_INT | mavlink.MAV_PROTOCOL_CAPABILITY_MAVLINK2)


class CommandHandler(object):
    """Runs the commands a :class:`~brov2_hybrid.sim.mavlink_protocol.MavlinkProtocol` receives.

    Replies go out through the protocol (``emit``, ``statustext``); the firmware, plant,
    telemetry builder and link settings are the protocol's. Commands that may change the
    motor outputs set ``protocol.input_changed``.
    """

    def __init__(self, protocol):
        self.protocol = protocol
        self._commands = {
            mavlink.MAV_CMD_COMPONENT_ARM_DISARM: self._cmd_arm_disarm,
            mavlink.MAV_CMD_DO_SET_MODE: self._cmd_do_set_mode,
            mavlink.MAV_CMD_GET_HOME_POSITION: self._cmd_get_home_position,
            mavlink.MAV_CMD_SET_MESSAGE_INTERVAL: self._cmd_set_message_interval,
            mavlink.MAV_CMD_REQUEST_MESSAGE: self._cmd_request_message,
            mavlink.MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES: self._cmd_autopilot_capabilities,
        }

    def _ack(self, connection, command, result, t_s, message=None):
        target_system = message.get_srcSystem() if message is not None else 0
        target_component = message.get_srcComponent() if message is not None else 0
        self.protocol.emit(connection, self.protocol.encoder.command_ack_encode(command, result, 0, 0, target_system,
                                                                              target_component), t_s)

    def on_command_long(self, connection, message, t_s):
        """COMMAND_LONG from ``connection`` at simulated time ``t_s`` [s]: run it (param1..param7) and
        send the COMMAND_ACK."""
        params = [message.param1, message.param2, message.param3, message.param4,
                  message.param5, message.param6, message.param7]
        self._run_command(connection, message, message.command, params, t_s)

    def on_command_int(self, connection, message, t_s):
        """COMMAND_INT from ``connection`` at simulated time ``t_s`` [s]: run it (param1..param4, x, y, z
        as param5..param7) and send the COMMAND_ACK."""
        params = [message.param1, message.param2, message.param3, message.param4,
                  message.x, message.y, message.z]
        self._run_command(connection, message, message.command, params, t_s)

    def _run_command(self, connection, message, command, params, t_s):
        self.protocol.counters["commands"] += 1
        handler = self._commands.get(command)
        if handler is None:
            self._ack(connection, command, mavlink.MAV_RESULT_UNSUPPORTED, t_s, message)
            return
        if not all(math.isfinite(p) for p in params[:4]):
            result = mavlink.MAV_RESULT_DENIED
        else:
            result = handler(connection, params, t_s)
        self._ack(connection, command, result, t_s, message)

    def _cmd_arm_disarm(self, connection, params, t_s):
        if params[0] not in (0.0, 1.0):
            return mavlink.MAV_RESULT_DENIED
        self.protocol.firmware.set_armed(t_s, params[0] == 1.0)
        self.protocol.input_changed = True
        return mavlink.MAV_RESULT_ACCEPTED

    def _change_mode(self, base_mode, custom_mode, t_s):
        if not int(base_mode) & mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED:
            self.protocol.statustext(SEVERITY_WARNING, "Only custom modes are supported", t_s)
            return mavlink.MAV_RESULT_DENIED
        accepted, _ = self.protocol.firmware.set_mode(int(custom_mode))
        self.protocol.input_changed = True
        return mavlink.MAV_RESULT_ACCEPTED if accepted else mavlink.MAV_RESULT_DENIED

    def _cmd_do_set_mode(self, connection, params, t_s):
        return self._change_mode(params[0], params[1], t_s)

    def on_set_mode(self, connection, message, t_s):
        """SET_MODE: change to its custom mode (DENIED without the custom-mode flag or when the firmware
        refuses the mode); acknowledged with SET_MODE's message id as the command number."""
        result = self._change_mode(message.base_mode, message.custom_mode, t_s)
        # ArduPilot acknowledges SET_MODE with the message id as the command number.
        self._ack(connection, mavlink.MAVLINK_MSG_ID_SET_MODE, result, t_s, message)

    def _cmd_set_message_interval(self, connection, params, t_s):
        name = telemetry.MESSAGE_BY_ID.get(int(params[0]))
        if name is None:
            return mavlink.MAV_RESULT_FAILED
        interval_us = params[1]
        if interval_us == 0:
            interval_s = connection.scheduler.default_intervals.get(name)
        elif interval_us < 0:
            interval_s = None
        else:
            interval_s = interval_us * 1e-6
        self.protocol.set_channel_interval(connection, name, interval_s, t_s)
        LOG.info("%s: %s interval %s", connection, name, connection.scheduler.interval_s(name))
        return mavlink.MAV_RESULT_ACCEPTED

    def _cmd_request_message(self, connection, params, t_s):
        emit = self.protocol.emit
        message_id = int(params[0])
        if message_id == mavlink.MAVLINK_MSG_ID_AUTOPILOT_VERSION:
            emit(connection, self._autopilot_version(), t_s)
            return mavlink.MAV_RESULT_ACCEPTED
        if message_id == mavlink.MAVLINK_MSG_ID_HOME_POSITION:
            emit(connection, self._home_position(t_s), t_s)
            return mavlink.MAV_RESULT_ACCEPTED
        if message_id == mavlink.MAVLINK_MSG_ID_GPS_GLOBAL_ORIGIN:
            emit(connection, self._gps_global_origin(t_s), t_s)
            return mavlink.MAV_RESULT_ACCEPTED
        name = telemetry.MESSAGE_BY_ID.get(message_id)
        if name is None:
            return mavlink.MAV_RESULT_FAILED
        sample = telemetry.Sample(self.protocol.plant)
        emit(connection, self.protocol.builder.build(name, sample, self.protocol.firmware), t_s)
        return mavlink.MAV_RESULT_ACCEPTED

    def _cmd_autopilot_capabilities(self, connection, params, t_s):
        # GCS_MAVLINK::handle_command_request_autopilot_capabilities: param1 must be 1.
        # MAVROS's sys_status sends it broadcast (target 0) and does not wait for the
        # ACK; ArduPilot acknowledges anyway, so MAVROS logs "CMD: Unexpected command
        # 520" against a real vehicle too.
        if params[0] != 1.0:
            return mavlink.MAV_RESULT_FAILED
        self.protocol.emit(connection, self._autopilot_version(), t_s)
        return mavlink.MAV_RESULT_ACCEPTED

    def _cmd_get_home_position(self, connection, params, t_s):
        # GCS_MAVLINK::handle_command_get_home_position: home is always set here (the NED
        # origin at home_lat/lon/alt), so HOME_POSITION and GPS_GLOBAL_ORIGIN, ACCEPTED.
        # MAVROS's home_position plugin polls this every 10 s until HOME_POSITION arrives.
        self.protocol.emit(connection, self._home_position(t_s), t_s)
        self.protocol.emit(connection, self._gps_global_origin(t_s), t_s)
        return mavlink.MAV_RESULT_ACCEPTED

    def _home_position(self, t_s):
        # GCS_MAVLINK::send_home_position: local x, y, z 0, q identity, approach 0.
        c = self.protocol.config
        return self.protocol.encoder.home_position_encode(
            int(round(c.home_lat_deg * 1e7)), int(round(c.home_lon_deg * 1e7)), int(round(c.home_alt_m * 1000)),
            0.0, 0.0, 0.0, [1.0, 0.0, 0.0, 0.0], 0.0, 0.0, 0.0, int(t_s * 1e6))

    def _gps_global_origin(self, t_s):
        c = self.protocol.config
        return self.protocol.encoder.gps_global_origin_encode(int(round(c.home_lat_deg * 1e7)),
                                                             int(round(c.home_lon_deg * 1e7)),
                                                             int(round(c.home_alt_m * 1000)), int(t_s * 1e6))

    def _autopilot_version(self):
        return self.protocol.encoder.autopilot_version_encode(CAPABILITIES, FLIGHT_SW_VERSION, 0, 0, 0,
                                                             [0] * 8, [0] * 8, [0] * 8, 0, 0, 0)
