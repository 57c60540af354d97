"""The MAVLink bridge's message contents (brov2_hybrid.link.mavros_conversions): attitude to
MAVROS IMU (frames, NaN safety), depth, RC out, State from HEARTBEAT, SetMode, ParamValue."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from pymavlink.dialects.v20 import ardupilotmega as mavlink
from scipy.spatial.transform import Rotation

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link import mavros_conversions as conv
from brov2_hybrid.link.ardusub import MODE_FLAG_CUSTOM_MODE_ENABLED, MODE_FLAG_SAFETY_ARMED, MODES
from brov2_hybrid.control import autopilot_safety as safety
from brov2_hybrid.physics.kinematics import (
    euler_from_quaternion,
    euler_ned_frd_from_enu_flu_quaternion,
    quaternion_from_euler,
    wrap_angle,
)


def test_heading_north_is_ninety_degrees_in_enu():
    """NED yaw psi (from north, clockwise) is ENU yaw pi/2 - psi (from east, anticlockwise)."""
    for psi in (0.0, 0.3, -1.2, 2.5):
        q, _ = conv.imu_from_euler(0.0, 0.0, psi, 0, 0, 0)
        assert wrap_angle(euler_from_quaternion(q)[2] - (math.pi / 2 - psi)) == pytest.approx(0, abs=1e-12)


def test_roll_right_side_down_keeps_its_sign_in_enu_flu():
    """FRD roll + (right side down) is a rotation about forward; FLU y, z flip so roll keeps its sign
    (ENU/FLU roll + is also right side down) and pitch (nose up) changes sign (MAVROS ftf)."""
    q, w = conv.imu_from_euler(0.2, 0.0, 0.0, 0.1, 0.2, 0.3)
    # independent check with scipy: the body's right side (FLU -y) points below the horizon (ENU -z)
    right_enu = Rotation.from_quat(q).apply([0.0, -1.0, 0.0])
    assert right_enu[2] == pytest.approx(-math.sin(0.2))
    e = euler_from_quaternion(q)
    assert e[0] == pytest.approx(0.2) and e[1] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(w, [0.1, -0.2, -0.3])
    q, _ = conv.imu_from_euler(0.0, 0.3, math.pi / 2, 0, 0, 0)          # facing east, nose up
    assert euler_from_quaternion(q)[1] == pytest.approx(-0.3)


angles = st.floats(-3.0, 3.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.floats(-1.2, 1.2), st.floats(-1.2, 1.2), angles)
def test_bridge_then_control_law_conversion_is_identity(roll, pitch, yaw):
    """The bridge's MAVLink -> ENU/FLU conversion, undone by control_law's, returns eta2."""
    q, _ = conv.imu_from_euler(roll, pitch, yaw, 0, 0, 0)
    eta = euler_ned_frd_from_enu_flu_quaternion(q)
    np.testing.assert_allclose(wrap_angle(eta - [roll, pitch, yaw]), 0, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.floats(-1.2, 1.2), st.floats(-1.2, 1.2), angles)
def test_quaternion_and_euler_attitude_agree(roll, pitch, yaw):
    x, y, z, w = quaternion_from_euler([roll, pitch, yaw])
    qa, _ = conv.imu_from_euler(roll, pitch, yaw, 0, 0, 0)
    qb, _ = conv.imu_from_quaternion(w, x, y, z, 0, 0, 0)           # MAVLink order w, x, y, z
    assert abs(float(np.dot(qa, qb))) == pytest.approx(1.0, abs=1e-12)


def test_unconvertible_attitude_gives_nan_imu_and_a_neutral_control_law():
    """A zero quaternion or a NaN field must not raise in the bridge: it publishes NaN,
    which the control law's conversion and safety core turn into a neutral command."""
    q, w, error = conv.imu_or_nan(conv.imu_from_quaternion, 0.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3)
    assert np.all(np.isnan(q)) and np.all(np.isnan(w)) and "non-zero quaternion" in error
    q_msg = conv.quaternion_msg_order(q)
    assert len(q_msg) == 4 and all(math.isnan(v) for v in q_msg)
    assert all(math.isnan(v) for v in conv.quaternion_msg_order([0.0, 0.0, 0.0, 0.0]))
    q, w, error = conv.imu_or_nan(conv.imu_from_euler, math.nan, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert np.all(np.isnan(q)) and error
    # a good attitude passes unchanged
    q, w, error = conv.imu_or_nan(conv.imu_from_euler, 0.2, 0.0, 0.0, 0.1, 0.2, 0.3)
    assert error == "" and euler_from_quaternion(q)[0] == pytest.approx(0.2)
    # control_law's side: the NaN orientation cannot be converted -> NaN attitude -> neutral
    with pytest.raises(Brov2Error):
        euler_ned_frd_from_enu_flu_quaternion(q_msg)


def test_nan_attitude_from_the_bridge_makes_the_core_neutral(vehicle, controller_params):
    from brov2_hybrid.control.law import HybridController
    core = safety.AutopilotCore(HybridController(vehicle.body, controller_params, vehicle.tau_max), 0.5, 1.0)
    core.set_desired(1.0, [0.0, 0.0, 0.5], [0.3, 0.0, 0.0])
    core.set_attitude(1.0, np.full(3, np.nan), np.full(3, np.nan))    # what control_law stores
    r = core.tick(1.0)
    assert r.mode == safety.MODE_NAN and not np.any(r.tau_body_frd)


def test_depth_is_minus_relative_alt_in_millimetres():
    """GLOBAL_POSITION_INT.relative_alt: mm above home, which ArduSub keeps at the surface."""
    assert conv.depth_from_relative_alt(-2500) == 2.5
    assert conv.depth_from_relative_alt(120) == pytest.approx(-0.12)   # above the surface (a wave)
    assert conv.DEPTH_MESSAGE == "GLOBAL_POSITION_INT"


def test_servo_channels_are_the_main_eight_unless_an_aux_output_is_set():
    main = [1500 + k for k in range(8)]
    assert conv.servo_channels(main + [0] * 8) == main
    assert conv.servo_channels(iter(main + [0] * 8)) == main          # any iterable
    full = main + [0] * 7 + [1100]
    assert conv.servo_channels(full) == full


def test_only_the_target_components_non_gcs_heartbeat_is_the_vehicles():
    assert conv.is_vehicle_heartbeat(mavlink.MAV_TYPE_SUBMARINE, 1, 1)
    assert not conv.is_vehicle_heartbeat(mavlink.MAV_TYPE_GCS, 1, 1)       # another ground station
    assert not conv.is_vehicle_heartbeat(mavlink.MAV_TYPE_SUBMARINE, 100, 1)   # e.g. a camera component


def test_state_from_heartbeat():
    s = conv.state_from_heartbeat(128 | 64 | 1, 19)
    assert s == {"armed": True, "guided": False, "manual_input": True, "mode": "MANUAL"}
    s = conv.state_from_heartbeat(1, 2)
    assert not s["armed"] and s["mode"] == "ALT_HOLD"
    assert conv.state_from_heartbeat(1, 77)["mode"] == "MODE(77)"


def test_state_fields_never_report_armed_while_disconnected():
    state = {"armed": True, "guided": False, "manual_input": True, "mode": "MANUAL", "system_status": 4}
    up = conv.state_fields(state, True)
    assert up == {"connected": True, "armed": True, "guided": False, "manual_input": True, "mode": "MANUAL",
                  "system_status": 4}
    down = conv.state_fields(state, False)
    assert down["connected"] is False and down["armed"] is False and down["mode"] == "MANUAL"


def test_parse_mode():
    assert conv.parse_mode(0, "MANUAL") == (MODE_FLAG_CUSTOM_MODE_ENABLED, 19)
    assert conv.parse_mode(0, "manual") == (1, 19)
    assert conv.parse_mode(0, "2") == (1, 2)
    assert conv.parse_mode(192, "") == (192, 0)
    with pytest.raises(Brov2Error, match="unknown ArduSub mode 'LOITERX'"):
        conv.parse_mode(0, "LOITERX")
    with pytest.raises(Brov2Error, match="expected a custom_mode name"):
        conv.parse_mode(0, "")


def test_set_mode_keeps_the_armed_flag_of_an_armed_vehicle_as_mavros():
    assert conv.set_mode_fields(0, "MANUAL", False) == (MODE_FLAG_CUSTOM_MODE_ENABLED, MODES["MANUAL"])
    assert conv.set_mode_fields(0, "manual", True) == (MODE_FLAG_CUSTOM_MODE_ENABLED | MODE_FLAG_SAFETY_ARMED,
                                                     MODES["MANUAL"])
    # a plain base mode is sent as asked, armed or not
    assert conv.set_mode_fields(mavlink.MAV_MODE_MANUAL_ARMED, "", True) == (mavlink.MAV_MODE_MANUAL_ARMED, 0)
    with pytest.raises(Brov2Error, match="unknown ArduSub mode"):
        conv.set_mode_fields(0, "NOSUCH", True)


def test_param_value_fields_fill_mavros_param_value_as_mavros():
    """PARAM_VALUE carries every value as a float; MAVROS puts integer types (MAV_PARAM_TYPE
    1-8) in ParamValue.integer and REAL32/REAL64 (9, 10) in ParamValue.real."""
    assert conv.param_value_fields(255.0, mavlink.MAV_PARAM_TYPE_INT16) == (255, 0.0)
    assert conv.param_value_fields(2.0, mavlink.MAV_PARAM_TYPE_INT8) == (2, 0.0)
    assert conv.param_value_fields(3.0, mavlink.MAV_PARAM_TYPE_REAL32) == (0, 3.0)
    assert conv.param_value_fields(-1.0, mavlink.MAV_PARAM_TYPE_REAL32) == (0, -1.0)
