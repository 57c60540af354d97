"""What the MAVLink bridge sends and how its services answer (brov2_hybrid.link.fcu_commands),
against a fake vehicle: every frame is encoded by pymavlink and parsed back, and the fake may
answer a request the way ArduSub does (COMMAND_ACK, PARAM_VALUE)."""
import time

import pytest
from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.link import link_state
from brov2_hybrid.link import fcu_commands as fc

GCS, VEHICLE, AUTOPILOT = (255, 190), 1, 1
ARDUSUB_MANUAL = 19                  # ArduSub/mode.h Mode::Number::MANUAL
SHORT_WAIT_S = 0.05                  # how long the services wait when no answer will come


class FakeVehicle(object):
    """A link whose frames the vehicle parses; ``reply(msg)`` may answer each one."""

    def __init__(self, acks, param_values):
        self.received = []
        self.up = True
        self.acks, self.param_values = acks, param_values
        self.reply = lambda msg: None
        self._parser = mavlink.MAVLink(None)
        self._mav = mavlink.MAVLink(self, *GCS)

    def write(self, buf):
        """pymavlink's sink for the GCS's encoded frames."""
        msg = self._parser.decode(bytearray(buf))
        assert (msg.get_srcSystem(), msg.get_srcComponent()) == GCS
        self.received.append(msg)
        self.reply(msg)

    def send(self, fn):
        """The bridge's send: False while the link is down."""
        if not self.up:
            return False
        fn(self._mav)
        return True

    def types(self):
        return [m.get_type() for m in self.received]


def _commands(connected=True, timeout_s=SHORT_WAIT_S):
    schedule = link_state.LinkSchedule(2.0, 3.0, 1.0, 5.0, 0.9, 50.0)
    schedule.was_connected = connected
    vehicle = FakeVehicle(link_state.CommandAcks(), link_state.CommandAcks())
    warnings = []
    commands = fc.FcuCommands(vehicle.send, VEHICLE, AUTOPILOT, timeout_s, schedule, vehicle.acks,
                                  vehicle.param_values, warnings.append)
    return commands, vehicle, warnings


def test_heartbeat_and_override_frames():
    commands, vehicle, _ = _commands()
    assert commands.heartbeat() and commands.override(range(1100, 1118))
    beat, override = vehicle.received
    assert beat.type == mavlink.MAV_TYPE_GCS and beat.autopilot == mavlink.MAV_AUTOPILOT_INVALID
    assert (override.target_system, override.target_component) == (VEHICLE, AUTOPILOT)
    assert [getattr(override, "chan%d_raw" % k) for k in range(1, 19)] == list(range(1100, 1118))
    vehicle.up = False
    assert not commands.heartbeat()


def test_streams_are_asked_by_interval_then_by_group():
    commands, vehicle, _ = _commands()
    streams = [("ATTITUDE_QUATERNION", 50.0), ("SERVO_OUTPUT_RAW", 10.0), ("GLOBAL_POSITION_INT", 5.0),
               ("SYSTEM_TIME", 4.0), ("RC_CHANNELS", 20.0)]
    assert commands.request_streams(streams) == ["ATTITUDE_QUATERNION"]    # in no REQUEST_DATA_STREAM group
    intervals = [(m.param1, m.param2) for m in vehicle.received if m.get_type() == "COMMAND_LONG"]
    assert all(m.command == mavlink.MAV_CMD_SET_MESSAGE_INTERVAL for m in vehicle.received[:5])
    assert intervals == [(mavlink.MAVLINK_MSG_ID_ATTITUDE_QUATERNION, 20000), (mavlink.MAVLINK_MSG_ID_SERVO_OUTPUT_RAW, 1e5),
                         (mavlink.MAVLINK_MSG_ID_GLOBAL_POSITION_INT, 2e5), (mavlink.MAVLINK_MSG_ID_SYSTEM_TIME, 2.5e5),
                         (mavlink.MAVLINK_MSG_ID_RC_CHANNELS, 5e4)]
    groups = [(m.req_stream_id, m.req_message_rate, m.start_stop) for m in vehicle.received[5:]]
    # ArduSub's groups (GCS_Mavlink.cpp): servo outputs and RC channels share RC_CHANNELS, at the higher rate
    assert groups == [(mavlink.MAV_DATA_STREAM_RC_CHANNELS, 20, 1), (mavlink.MAV_DATA_STREAM_POSITION, 5, 1),
                      (mavlink.MAV_DATA_STREAM_EXTRA3, 4, 1)]


def _ack_arming(result):
    def reply(vehicle, msg):
        if msg.get_type() == "COMMAND_LONG" and msg.command == mavlink.MAV_CMD_COMPONENT_ARM_DISARM:
            vehicle.acks.record(msg.command, result, time.monotonic())
    return reply


@pytest.mark.parametrize("result, success", [(mavlink.MAV_RESULT_ACCEPTED, True),
                                             (mavlink.MAV_RESULT_TEMPORARILY_REJECTED, False)])
def test_arming_answers_with_the_vehicles_ack(result, success):
    commands, vehicle, warnings = _commands(timeout_s=60.0)     # the answer comes at once
    vehicle.reply = lambda msg: _ack_arming(result)(vehicle, msg)
    assert commands.arm(True) == (success, result)
    (sent,) = vehicle.received
    assert sent.command == mavlink.MAV_CMD_COMPONENT_ARM_DISARM and sent.param1 == 1.0 and warnings == []
    assert commands.arm(False)[0] == success and vehicle.received[-1].param1 == 0.0


def test_arming_fails_without_the_vehicle_or_its_ack():
    commands, vehicle, warnings = _commands(connected=False)
    assert commands.arm(True) == (False, mavlink.MAV_RESULT_FAILED) and vehicle.received == []
    assert warnings == ["arming request refused: vehicle not connected"]
    commands, vehicle, warnings = _commands()
    assert commands.arm(False) == (False, mavlink.MAV_RESULT_FAILED) and vehicle.types() == ["COMMAND_LONG"]
    assert warnings == ["no COMMAND_ACK for disarm within %.1f s" % SHORT_WAIT_S]


@pytest.mark.parametrize("param_type, value, fields", [(mavlink.MAV_PARAM_TYPE_INT16, 255.0, (255, 0.0)),
                                                       (mavlink.MAV_PARAM_TYPE_REAL32, 2.5, (0, 2.5))])
def test_param_get_answers_with_the_vehicles_value(param_type, value, fields):
    commands, vehicle, warnings = _commands(timeout_s=60.0)

    def reply(msg):
        if msg.get_type() == "PARAM_REQUEST_READ":
            vehicle.param_values.record(msg.param_id, (value, param_type), time.monotonic())
    vehicle.reply = reply
    assert commands.param_get("SYSID_MYGCS") == fields and warnings == []
    (sent,) = vehicle.received
    assert (sent.target_system, sent.param_id, sent.param_index) == (VEHICLE, "SYSID_MYGCS", -1)


def test_param_get_fails_without_the_vehicle_or_its_value():
    commands, vehicle, warnings = _commands(connected=False)
    assert commands.param_get("SYSID_MYGCS") is None and vehicle.received == [] and warnings == []
    commands, vehicle, warnings = _commands()
    assert commands.param_get("FS_PILOT_INPUT") is None
    assert warnings == ["no PARAM_VALUE for FS_PILOT_INPUT within %.1f s" % SHORT_WAIT_S]


def test_set_mode_keeps_an_armed_vehicle_armed_and_refuses_an_unknown_mode():
    commands, vehicle, warnings = _commands()
    assert commands.set_mode(0, "MANUAL", armed=True) and commands.set_mode(0, "manual", armed=False)
    armed, disarmed = vehicle.received
    custom = mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
    assert (armed.target_system, armed.base_mode, armed.custom_mode) == (
        VEHICLE, custom | mavlink.MAV_MODE_FLAG_SAFETY_ARMED, ARDUSUB_MANUAL)
    assert (disarmed.base_mode, disarmed.custom_mode) == (custom, ARDUSUB_MANUAL)
    assert not commands.set_mode(0, "WARP", armed=False) and len(vehicle.received) == 2
    assert len(warnings) == 1 and "unknown ArduSub mode 'WARP'" in warnings[0]
    vehicle.up = False
    assert not commands.set_mode(0, "MANUAL", armed=False)
