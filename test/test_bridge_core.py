"""MAVLink bridge logic (brov2_hybrid.link.bridge_core): MAVROS conversions, modes, clock,
override forwarding."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation

from brov2_hybrid.node_logic import autopilot_safety as safety
from brov2_hybrid.link import bridge_core as bc
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.kinematics import (
    euler_from_quaternion,
    euler_ned_frd_from_enu_flu_quaternion,
    quaternion_from_euler,
    wrap_angle,
)
from brov2_hybrid.node_logic.node_params import load_node_params


def test_heading_north_is_ninety_degrees_in_enu():
    """NED yaw psi (from north, clockwise) is ENU yaw pi/2 - psi (from east, anticlockwise)."""
    for psi in (0.0, 0.3, -1.2, 2.5):
        q, _ = bc.imu_from_euler(0.0, 0.0, psi, 0, 0, 0)
        assert wrap_angle(euler_from_quaternion(q)[2] - (math.pi / 2 - psi)) == pytest.approx(0, abs=1e-12)


def test_roll_right_side_down_keeps_its_sign_in_enu_flu():
    """FRD roll + (right side down) is a rotation about forward; FLU y, z flip so roll keeps its sign
    (ENU/FLU roll + is also right side down) and pitch (nose up) changes sign (MAVROS ftf)."""
    q, w = bc.imu_from_euler(0.2, 0.0, 0.0, 0.1, 0.2, 0.3)
    # independent check with scipy: the body's right side (FLU -y) points below the horizon (ENU -z)
    right_enu = Rotation.from_quat(q).apply([0.0, -1.0, 0.0])
    assert right_enu[2] == pytest.approx(-math.sin(0.2))
    e = euler_from_quaternion(q)
    assert e[0] == pytest.approx(0.2) and e[1] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(w, [0.1, -0.2, -0.3])
    q, _ = bc.imu_from_euler(0.0, 0.3, math.pi / 2, 0, 0, 0)          # facing east, nose up
    assert euler_from_quaternion(q)[1] == pytest.approx(-0.3)


angles = st.floats(-3.0, 3.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.floats(-1.2, 1.2), st.floats(-1.2, 1.2), angles)
def test_bridge_then_control_law_conversion_is_identity(roll, pitch, yaw):
    """The bridge's MAVLink -> ENU/FLU conversion, undone by control_law's, returns eta2."""
    q, _ = bc.imu_from_euler(roll, pitch, yaw, 0, 0, 0)
    eta = euler_ned_frd_from_enu_flu_quaternion(q)
    np.testing.assert_allclose(wrap_angle(eta - [roll, pitch, yaw]), 0, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.floats(-1.2, 1.2), st.floats(-1.2, 1.2), angles)
def test_quaternion_and_euler_attitude_agree(roll, pitch, yaw):
    x, y, z, w = quaternion_from_euler([roll, pitch, yaw])
    qa, _ = bc.imu_from_euler(roll, pitch, yaw, 0, 0, 0)
    qb, _ = bc.imu_from_quaternion(w, x, y, z, 0, 0, 0)           # MAVLink order w, x, y, z
    assert abs(float(np.dot(qa, qb))) == pytest.approx(1.0, abs=1e-12)


def test_depth_is_minus_relative_alt_in_millimetres():
    """GLOBAL_POSITION_INT.relative_alt: mm above home, which ArduSub keeps at the surface."""
    assert bc.depth_from_relative_alt(-2500) == 2.5
    assert bc.depth_from_relative_alt(120) == pytest.approx(-0.12)   # above the surface (a wave)
    assert bc.DEPTH_MESSAGE == "GLOBAL_POSITION_INT"


def test_parse_mode():
    assert bc.parse_mode(0, "MANUAL") == (bc.MODE_FLAG_CUSTOM_MODE_ENABLED, 19)
    assert bc.parse_mode(0, "manual") == (1, 19)
    assert bc.parse_mode(0, "2") == (1, 2)
    assert bc.parse_mode(192, "") == (192, 0)
    with pytest.raises(Brov2Error, match="unknown ArduSub mode 'LOITERX'"):
        bc.parse_mode(0, "LOITERX")
    with pytest.raises(Brov2Error, match="expected a custom_mode name"):
        bc.parse_mode(0, "")


def test_state_from_heartbeat():
    s = bc.state_from_heartbeat(128 | 64 | 1, 19)
    assert s == {"armed": True, "guided": False, "manual_input": True, "mode": "MANUAL"}
    s = bc.state_from_heartbeat(1, 2)
    assert not s["armed"] and s["mode"] == "ALT_HOLD"
    assert bc.state_from_heartbeat(1, 77)["mode"] == "MODE(77)"


def test_override_fields_and_release():
    ch = [1600, 1500, 1400, 1500, 1550, 1500] + [65535] * 12
    assert bc.override_fields(ch) == ch
    with pytest.raises(Brov2Error, match="expected 18 channels"):
        bc.override_fields(ch[:8])
    with pytest.raises(Brov2Error, match="0..65535"):
        bc.override_fields([70000] + ch[1:])
    assert bc.release_of(ch) == [0] * 6 + [65535] * 12


def _vehicle_clock():
    p = load_node_params("mavlink_bridge")
    return bc.VehicleClock(p["clock_min_speedup"], p["clock_max_speedup"], p["clock_jump_s"])


def test_vehicle_clock_follows_vehicle_time_and_never_goes_back():
    c = _vehicle_clock()
    assert c.now(0.0) == 0.0 and not c.started
    for k in range(101):                     # 4x speed-up: 20 ms vehicle per 5 ms wall
        t = c.update(k * 0.02, 100.0 + k * 0.005)
    assert t == pytest.approx(2.0)
    assert c.rate == pytest.approx(4.0, rel=0.01)
    # link lost: extrapolate at 4x
    assert c.now(100.5 + 1.0) == pytest.approx(2.0 + 4.0 * 1.0, rel=0.01)
    # vehicle restarted at time 0, 1 s (wall) later: continue from the extrapolated time
    t_restart = c.update(0.02, 101.5)
    assert t_restart >= 2.0 + 3.9
    later = c.update(0.52, 101.625)          # vehicle time advances 0.5 s
    assert later - t_restart == pytest.approx(0.5)


def test_vehicle_clock_refuses_bad_bounds():
    with pytest.raises(Brov2Error, match="vehicle clock: expected 0 < min_rate <= max_rate"):
        bc.VehicleClock(2.0, 1.0, 5.0)
    with pytest.raises(Brov2Error, match="jump_s > 0"):
        bc.VehicleClock(0.1, 100.0, 0.0)


def test_unconvertible_attitude_gives_nan_imu_and_a_neutral_control_law():
    """A zero quaternion or a NaN field must not raise in the bridge: it publishes NaN,
    which the control law's conversion and safety core turn into a neutral command."""
    q, w, error = bc.imu_or_nan(bc.imu_from_quaternion, 0.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3)
    assert np.all(np.isnan(q)) and np.all(np.isnan(w)) and "non-zero quaternion" in error
    q_msg = bc.quaternion_msg_order(q)
    assert len(q_msg) == 4 and all(math.isnan(v) for v in q_msg)
    assert all(math.isnan(v) for v in bc.quaternion_msg_order([0.0, 0.0, 0.0, 0.0]))
    q, w, error = bc.imu_or_nan(bc.imu_from_euler, math.nan, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert np.all(np.isnan(q)) and error
    # a good attitude passes unchanged
    q, w, error = bc.imu_or_nan(bc.imu_from_euler, 0.2, 0.0, 0.0, 0.1, 0.2, 0.3)
    assert error == "" and euler_from_quaternion(q)[0] == pytest.approx(0.2)
    # control_law's side: the NaN orientation cannot be converted -> NaN attitude -> neutral
    with pytest.raises(Brov2Error):
        euler_ned_frd_from_enu_flu_quaternion(q_msg)


def test_nan_attitude_from_the_bridge_makes_the_core_neutral(setup, controller_params):
    from brov2_hybrid.control.law import HybridController
    core = safety.AutopilotCore(HybridController(setup.body, controller_params, setup.tau_max), 0.5, 1.0)
    core.set_desired(1.0, [0.0, 0.0, 0.5], [0.3, 0.0, 0.0])
    core.set_attitude(1.0, np.full(3, np.nan), np.full(3, np.nan))    # what control_law stores
    r = core.tick(1.0)
    assert r.mode == safety.MODE_NAN and not np.any(r.tau_body_frd)


def test_override_forwarder_resends_while_fresh():
    f = bc.OverrideForwarder(period_s=0.05, timeout_s=1.0)
    assert f.due(0.0) is None and f.release() is None
    ch = [1600] * 6 + [65535] * 12
    f.on_override(0.0, ch)
    assert f.due(0.0) == ch
    f.mark_sent(0.0)
    assert f.due(0.03) is None and f.due(0.05) == ch
    f.mark_sent(0.05)
    assert f.due(0.99) == ch and f.due(1.01) is None          # stale after timeout_s
    assert f.release() == [0] * 6 + [65535] * 12
    with pytest.raises(Brov2Error):
        bc.OverrideForwarder(period_s=2.0, timeout_s=1.0)


def test_override_forwarder_releases_once_when_the_input_stops():
    f = bc.OverrideForwarder(period_s=0.05, timeout_s=1.0)
    assert f.stale_release(5.0) == (None, False)                 # never received: nothing to release
    ch = [1600, 1500, 1400, 1500, 1550, 1500] + [65535] * 12
    f.on_override(0.0, ch)
    assert f.stale_release(0.99) == (None, False)                # fresh
    release = [0] * 6 + [65535] * 12
    assert f.stale_release(1.01) == (release, True)              # the fresh -> stale edge: warn
    assert f.stale_release(1.02) == (release, False)             # not sent yet (link down): again, no warning
    f.mark_released()
    assert f.stale_release(1.03) == (None, False) and f.release() is None   # we hold nothing now
    # the input comes back, then stops again: one more release, one more warning
    f.on_override(2.0, ch)
    assert f.due(2.0) == ch
    assert f.stale_release(3.01) == (release, True)


def test_override_forwarder_after_a_release_from_the_autopilot_sends_no_second_release():
    """thruster_allocation released its channels itself (0 on 1-6): when that stream stops
    there is nothing left to release and nothing to warn about."""
    f = bc.OverrideForwarder(period_s=0.05, timeout_s=1.0)
    f.on_override(0.0, [1600] * 6 + [65535] * 12)
    f.on_override(0.5, [0] * 6 + [65535] * 12)
    assert f.stale_release(2.0) == (None, False)


def test_link_monitor():
    m = bc.LinkMonitor(2.0)
    assert not m.connected(0.0) and m.silent_for(0.0) == math.inf
    m.on_heartbeat(1.0)
    m.on_message(1.0)
    assert m.connected(2.9) and not m.connected(3.1) and m.silent_for(4.0) == 3.0


def test_interval_and_streams():
    assert bc.interval_us(50.0) == 20000.0 and bc.interval_us(0) == -1.0
    names = [n for n, _ in bc.stream_requests("ATTITUDE_QUATERNION", 50, 25, 10, 5)]
    assert names == ["ATTITUDE_QUATERNION", "SERVO_OUTPUT_RAW", "GLOBAL_POSITION_INT", "SYSTEM_TIME"]
