"""The MAVLink bridge's receive side (brov2_hybrid.link.fcu_messages): each vehicle message,
framed and parsed by pymavlink as the link delivers it, reaches the right output, converted."""
import math

import numpy as np
import pytest
from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link import link_state
from brov2_hybrid.link import fcu_messages as fm

VEHICLE, AUTOPILOT = 1, 1          # target system / component
ARDUSUB_MANUAL = 19                # ArduSub/mode.h Mode::Number::MANUAL


def framed(msg, system=VEHICLE, component=AUTOPILOT):
    """``msg`` as received: packed by a sender with these ids, parsed back by pymavlink."""
    return mavlink.MAVLink(None).decode(bytearray(msg.pack(mavlink.MAVLink(None, system, component))))


class Recorder(object):
    """The node's side: every output call, in order."""

    def __init__(self):
        self.calls = []
        self.outputs = fm.Outputs(*(self._record(name) for name in fm.Outputs._fields))

    def _record(self, name):
        return lambda *args: self.calls.append((name,) + args)

    def names(self):
        return [c[0] for c in self.calls]


def _receiver(attitude_msg="ATTITUDE_QUATERNION", signed=False):
    schedule = link_state.LinkSchedule(2.0, 3.0, 1.0, 5.0, 0.9, 50.0)
    out = Recorder()
    return fm.FcuMessages(schedule, out.outputs, VEHICLE, AUTOPILOT, attitude_msg, signed), schedule, out


def heartbeat(base_mode, custom_mode=ARDUSUB_MANUAL, mav_type=mavlink.MAV_TYPE_SUBMARINE, status=4):
    return mavlink.MAVLink_heartbeat_message(mav_type, mavlink.MAV_AUTOPILOT_ARDUPILOTMEGA, base_mode,
                                             custom_mode, status, 3)


def test_the_vehicles_heartbeat_connects_once_then_updates_the_state():
    rx, schedule, out = _receiver()
    armed_manual = mavlink.MAV_MODE_FLAG_SAFETY_ARMED | mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
    rx.handle(framed(heartbeat(armed_manual)), 1.0)
    assert out.calls == [("connected", 1.0)] and schedule.connected(1.0)
    assert rx.state == {"armed": True, "guided": False, "manual_input": False, "mode": "MANUAL", "system_status": 4}
    schedule.was_connected = True               # the node published it
    rx.handle(framed(heartbeat(mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED)), 1.5)
    assert out.names() == ["connected", "state"] and not rx.state["armed"]


def test_heartbeats_of_a_gcs_another_component_or_another_system_do_not_connect():
    rx, schedule, out = _receiver()
    rx.handle(framed(heartbeat(0, mav_type=mavlink.MAV_TYPE_GCS)), 1.0)     # another GCS on system 1
    rx.handle(framed(heartbeat(0), component=mavlink.MAV_COMP_ID_CAMERA), 1.0)
    assert out.calls == [] and not schedule.connected(1.0)
    assert schedule.monitor.silent_for(1.0) == 0.0     # but the target system talks: no silence
    rx.handle(framed(heartbeat(0), system=2), 9.0)
    assert out.calls == [] and schedule.monitor.silent_for(9.0) == 8.0   # another system: ignored


def test_attitude_is_converted_to_enu_flu_from_the_chosen_message_only():
    rx, _, out = _receiver("ATTITUDE")
    # NED yaw 90 deg (facing east), rates p, q, r in FRD: ENU/FLU identity, rates (p, -q, -r)
    rx.handle(framed(mavlink.MAVLink_attitude_message(1234, 0.0, 0.0, math.pi / 2, 0.1, 0.2, 0.3)), 2.0)
    rx.handle(framed(mavlink.MAVLink_attitude_quaternion_message(1240, 1, 0, 0, 0, 0, 0, 0)), 2.1)  # not chosen
    ((name, kind, time_boot_ms, q, w, error, mono),) = out.calls
    assert (name, kind, time_boot_ms, error, mono) == ("attitude", "ATTITUDE", 1234, "", 2.0)
    np.testing.assert_allclose(np.abs(q), [0, 0, 0, 1], atol=1e-6)
    np.testing.assert_allclose(w, [0.1, -0.2, -0.3], atol=1e-6)     # float32 on the wire


def test_an_attitude_that_cannot_be_converted_is_nan_with_the_reason():
    rx, _, out = _receiver()
    rx.handle(framed(mavlink.MAVLink_attitude_quaternion_message(7, 0, 0, 0, 0, 0.1, 0.2, 0.3)), 1.0)
    (_, kind, _, q, w, error, _), = out.calls
    assert kind == "ATTITUDE_QUATERNION" and error
    assert np.all(np.isnan(q)) and np.all(np.isnan(w))


def test_telemetry_messages_reach_their_outputs_converted():
    rx, _, out = _receiver()
    servos = [1100 + 10 * k for k in range(16)]
    servos[8:] = [0] * 8                                   # no outputs 9..16: the 8 main ones, as MAVROS
    rx.handle(framed(mavlink.MAVLink_servo_output_raw_message(0, 0, *servos)), 1.0)
    rx.handle(framed(mavlink.MAVLink_global_position_int_message(5, 0, 0, 10000, -2500, 0, 0, 0, 0)), 1.1)
    rx.handle(framed(mavlink.MAVLink_system_time_message(1700000000000000, 4321)), 1.2)
    rx.handle(framed(mavlink.MAVLink_statustext_message(mavlink.MAV_SEVERITY_WARNING, b"PreArm: Leak")), 1.3)
    assert out.calls == [("rc_out", servos[:8]), ("depth", 2.5), ("system_time", 4321, 1.2),
                         ("statustext", mavlink.MAV_SEVERITY_WARNING, "PreArm: Leak")]


def test_replies_are_recorded_for_the_waiting_services():
    rx, _, out = _receiver()
    rx.handle(framed(mavlink.MAVLink_command_ack_message(mavlink.MAV_CMD_COMPONENT_ARM_DISARM,
                                                         mavlink.MAV_RESULT_DENIED)), 5.0)
    rx.handle(framed(mavlink.MAVLink_param_value_message(b"SYSID_MYGCS", 255.0, mavlink.MAV_PARAM_TYPE_INT16,
                                                         900, 12)), 5.0)
    assert rx.acks.wait(mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 5.0, 0.0) == mavlink.MAV_RESULT_DENIED
    assert rx.acks.wait(mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 5.1, 0.0) is None    # older than asked
    assert rx.param_values.wait("SYSID_MYGCS", 5.0, 0.0) == (255.0, mavlink.MAV_PARAM_TYPE_INT16)
    assert out.calls == []


def test_frames_refused_by_signing_are_reported_only_on_a_signed_link():
    bad = mavlink.MAVLink_bad_data(b"\xfd\x09", "Invalid signature")
    for signed, expected in ((True, [("unsigned", bad, 3.0)]), (False, [])):
        rx, schedule, out = _receiver(signed=signed)
        rx.handle(bad, 3.0)
        rx.handle(mavlink.MAVLink_bad_data(b"\x00", "invalid MAVLink prefix"), 3.0)
        assert out.calls == expected and schedule.monitor.last_message is None


def test_an_unknown_attitude_message_is_refused():
    with pytest.raises(Brov2Error, match="attitude message: expected one of"):
        _receiver("SCALED_IMU")
