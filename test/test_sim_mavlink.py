"""brov2_sitl over loopback TCP with a real pymavlink client (sysid 255, MAVLink 2): the vehicle as a
ground station sees it (heartbeat, depth, overrides and mixers, failsafes, parameters, modes,
streams). Links, timing and other inputs: test_sim_mavlink_links.py. Fixtures: sim_gcs.py.
"""
import math
import threading
import time

import numpy as np
import pytest

from sim_gcs import (NEUTRAL8, SPEEDUP, YAW_RIGHT, Gcs, SimTap, expected_servos, gcs, mavlink,  # noqa: F401
                     servos, sim)  # gcs, sim: the fixtures
from brov2_hybrid.link.mavros_conversions import depth_from_relative_alt
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

def test_heartbeat_is_an_ardusub_submarine_in_manual(gcs):
    hb = gcs.wait_type("HEARTBEAT")
    assert hb.type == mavlink.MAV_TYPE_SUBMARINE and hb.autopilot == mavlink.MAV_AUTOPILOT_ARDUPILOTMEGA
    assert hb.custom_mode == 19 and not hb.base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED
    seen = set()
    gcs.wait_for(lambda m: seen.add(m.get_type()) or seen >= {
        "ATTITUDE", "ATTITUDE_QUATERNION", "RAW_IMU", "SCALED_PRESSURE2", "VFR_HUD", "GLOBAL_POSITION_INT",
        "SERVO_OUTPUT_RAW", "RC_CHANNELS", "SYS_STATUS", "SYSTEM_TIME", "SIM_STATE"}, what="every stream")


@pytest.mark.parametrize("sim", [0.0, 584.0], indirect=True, ids=["home_at_sea_level", "home_584_m"])
def test_depth_is_reported_consistently(sim, gcs):
    """5 m start depth (rising slowly): pressure and GLOBAL_POSITION_INT.relative_alt give the
    depth wherever home is; VFR_HUD.alt and GLOBAL_POSITION_INT.alt are above sea level, as
    ArduSub sends them (GCS_MAVLINK::vfr_hud_alt), so -VFR_HUD.alt is the depth only at home
    altitude 0 (a lake at 584 m: VFR_HUD.alt = 579)."""
    home = sim.link_config.home_alt_m
    depth = home - gcs.wait_type("SIM_STATE").alt       # SIM_STATE.alt: above sea level
    assert 4.0 < depth <= 5.0
    pressure = gcs.wait_type("SCALED_PRESSURE2")
    assert (pressure.press_abs * 100 - 101325.0) / (1000.0 * 9.80665) == pytest.approx(depth, abs=0.1)
    position = gcs.wait_type("GLOBAL_POSITION_INT")
    assert depth_from_relative_alt(position.relative_alt) == pytest.approx(depth, abs=0.1)
    assert position.alt / 1000.0 == pytest.approx(home - depth, abs=0.1)
    assert gcs.wait_type("VFR_HUD").alt == pytest.approx(home - depth, abs=0.1)


def test_yaw_override_turns_clockwise_with_algorithm_2_outputs(vehicle, gcs):
    gcs.arm()
    gcs.manual()
    gcs.override = YAW_RIGHT
    expected = expected_servos(vehicle, YAW_RIGHT)
    assert np.any(np.abs(expected - 1500) > 50)
    out = gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
    start = gcs.wait_type("ATTITUDE")
    yaw = [start.yaw]
    gcs.wait_type("ATTITUDE", lambda m: yaw.append(m.yaw) or m.time_boot_ms > start.time_boot_ms + 3000)
    turned = np.diff(np.unwrap(yaw))
    assert np.all(turned >= 0) and np.sum(turned) > math.radians(30)
    assert gcs.wait_type("ATTITUDE").yawspeed > 0.5
    hb = gcs.wait_type("HEARTBEAT")
    assert hb.base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED and out is not None


@pytest.mark.parametrize("vehicle", [load_vehicle("bluerov2")], ids=["bluerov2"])
def test_six_thruster_vehicle_mixes_its_frame_and_pads_the_servo_outputs(vehicle, gcs):
    """The vehicle file's frame reaches the simulated firmware: six motors mixed for the
    vectored frame, SERVO_OUTPUT_RAW's servo7/8 read 0, and yaw right turns clockwise."""
    gcs.arm()
    gcs.manual()
    gcs.override = YAW_RIGHT
    expected = np.concatenate([expected_servos(vehicle, YAW_RIGHT), [0.0, 0.0]])
    assert vehicle.n_thrusters == 6 and np.any(np.abs(expected[:6] - 1500) > 50)
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
    start = gcs.wait_type("ATTITUDE")
    gcs.wait_type("ATTITUDE", lambda m: m.time_boot_ms > start.time_boot_ms + 2000)
    assert gcs.wait_type("ATTITUDE").yawspeed > 0.3


def test_override_from_another_system_has_no_effect(sim, gcs):
    gcs.arm()
    gcs.manual()
    gcs.override = NEUTRAL8  # the real pilot holds neutral (re-sent while gcs waits)
    other = Gcs(sim.port, sysid=1)
    stop = threading.Event()

    def other_pilot():  # pushes yaw all through the checks, not only before them
        while not stop.is_set():
            other.send_override(YAW_RIGHT)
            time.sleep(0.02)

    pusher = threading.Thread(target=other_pilot, name="other_pilot", daemon=True)
    pusher.start()
    try:
        gcs.wait_for(lambda m: sim.counters()["firmware"]["override_rejected_sysid"] >= 20, what="20 rejections")
        gcs.drain()
        for _ in range(10):
            np.testing.assert_array_equal(servos(gcs.wait_type("SERVO_OUTPUT_RAW")), 1500)
            assert gcs.wait_type("RC_CHANNELS").chan4_raw == 1500
        # Neutral because the override was refused, not because the pilot-input failsafe
        # disarmed the vehicle (disarmed motors are 1500 too): still armed after the checks,
        # and nothing re-arms it, so it was armed while they ran.
        assert gcs.wait_type("HEARTBEAT").base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED
        assert sim.firmware.armed
    finally:
        stop.set()
        pusher.join(5.0)
        other.close()


def test_override_timeout_returns_to_neutral(vehicle, sim, gcs):
    assert gcs.set_param("RC_OVERRIDE_TIME", 1.0).param_value == 1.0
    assert gcs.set_param("FS_PILOT_TIMEOUT", 10.0).param_value == 10.0
    tap = SimTap(sim)
    gcs.arm()
    gcs.manual()
    gcs.override = YAW_RIGHT
    expected = expected_servos(vehicle, YAW_RIGHT)
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
    gcs.override = None
    neutral = gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(servos(m) == 1500))
    # Released RC_OVERRIDE_TIME (vehicle time) after the vehicle handled the last override,
    # seen in the first SERVO_OUTPUT_RAW after that (stream period), whatever the wall clock did.
    t_last = max(t for t, _ in tap.handled("RC_CHANNELS_OVERRIDE"))
    period = 1.0 / sim.link_config.stream_rates_hz["SERVO_OUTPUT_RAW"]
    assert 1.0 - 1e-6 <= neutral.time_usec * 1e-6 - t_last <= 1.0 + period + sim.tick_s
    assert gcs.wait_type("RC_CHANNELS").chan4_raw == 1500
    assert gcs.wait_type("HEARTBEAT").base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED


def test_pilot_input_failsafe_disarms(gcs):
    gcs.arm()
    gcs.override = YAW_RIGHT
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.any(servos(m) != 1500))
    gcs.override = None
    gcs.wait_type("STATUSTEXT", lambda m: "Lost manual control" in m.text)
    gcs.wait_type("HEARTBEAT", lambda m: not m.base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED)
    np.testing.assert_array_equal(servos(gcs.wait_type("SERVO_OUTPUT_RAW")), 1500)


def test_gcs_heartbeat_failsafe_disarms(sim, gcs):
    """ArduSub 4.5's GCS failsafe (FS_GCS_ENABLE 2): a station heard once (HEARTBEAT from
    SYSID_MYGCS) and then silent -- no heartbeat, override or MANUAL_CONTROL -- for 2.5 s is
    disarmed. The pilot-input failsafe is pushed out of the way."""
    gcs.m.mav.param_request_read_send(1, 1, b"FS_GCS_ENABLE", -1)
    assert gcs.wait_type("PARAM_VALUE", lambda p: p.param_id == "FS_GCS_ENABLE").param_value == 2
    assert gcs.set_param("FS_PILOT_TIMEOUT", 60).param_value == 60
    gcs.m.mav.heartbeat_send(mavlink.MAV_TYPE_GCS, mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 0)
    gcs.arm()
    gcs.override = None                                   # silence from now on
    gcs.wait_type("HEARTBEAT", lambda m: not m.base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED)
    counters = sim.counters()["firmware"]
    assert counters["gcs_failsafe"] == 1 and counters["pilot_failsafe"] == 0


def test_disarm_stops_the_motors(gcs):
    gcs.arm()
    gcs.override = YAW_RIGHT
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.any(servos(m) != 1500))
    gcs.arm(0)
    gcs.wait_type("HEARTBEAT", lambda m: not m.base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED)
    gcs.drain()
    for _ in range(5):
        np.testing.assert_array_equal(servos(gcs.wait_type("SERVO_OUTPUT_RAW")), 1500)


def test_param_set_of_sysid_mygcs_changes_who_is_accepted(vehicle, sim, gcs):
    assert gcs.set_param("FS_PILOT_TIMEOUT", 60).param_value == 60  # the new GCS takes a while to join
    gcs.arm()
    gcs.manual()
    assert gcs.set_param("SYSID_MYGCS", 1).param_value == 1
    other = Gcs(sim.port, sysid=1)
    try:
        other.override = YAW_RIGHT
        gcs.override = [1500, 1500, 1500, 1400, 1500, 1500, 1500, 1500]  # now ignored
        expected = expected_servos(vehicle, YAW_RIGHT)
        for _ in range(5):
            other.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
            gcs.send_override(gcs.override)
    finally:
        other.close()
    assert sim.counters()["firmware"]["override_rejected_sysid"] > 0


def test_params_are_listed_and_read(gcs):
    gcs.m.mav.param_request_list_send(1, 1)
    values = {}
    gcs.wait_type("PARAM_VALUE", lambda p: values.setdefault(p.param_id, p) and len(values) == p.param_count)
    for name in ("SYSID_MYGCS", "RC_OVERRIDE_TIME", "FS_PILOT_INPUT", "FS_PILOT_TIMEOUT", "FS_GCS_ENABLE", "MOT_MIXER",
                 "SIM_MODEL"):
        assert name in values
    assert values["SYSID_MYGCS"].param_value == 255 and values["FS_PILOT_INPUT"].param_value == 2
    gcs.m.mav.param_request_read_send(1, 1, b"RC_OVERRIDE_TIME", -1)
    assert gcs.wait_type("PARAM_VALUE").param_value == 3.0
    gcs.m.mav.param_set_send(1, 1, b"FS_PILOT_INPUT", 7.0, mavlink.MAV_PARAM_TYPE_INT8)
    replies = {}
    gcs.wait_for(lambda m: replies.setdefault(m.get_type(), m) and {"PARAM_VALUE", "STATUSTEXT"} <= set(replies))
    assert replies["PARAM_VALUE"].param_value == 2  # refused, value unchanged
    assert "FS_PILOT_INPUT" in replies["STATUSTEXT"].text


def test_mixer_and_model_are_selectable_by_parameter(vehicle, sim, gcs):
    assert gcs.set_param("MOT_MIXER", 1).param_value == 1
    assert gcs.set_param("SIM_MODEL", 1).param_value == 1
    gcs.arm()
    gcs.override = YAW_RIGHT
    expected = expected_servos(vehicle, YAW_RIGHT, mixer="stock")
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
    assert sim.plant.kind == "stock"


def test_unsupported_mode_is_refused(gcs):
    ack = gcs.command(mavlink.MAV_CMD_DO_SET_MODE, mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 0)  # STABILIZE
    assert ack.result == mavlink.MAV_RESULT_DENIED
    gcs.wait_type("STATUSTEXT", lambda m: "not supported" in m.text)
    assert gcs.wait_type("HEARTBEAT").custom_mode == 19
    assert gcs.command(mavlink.MAV_CMD_DO_SET_MODE, mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 19).result == 0
    assert gcs.command(mavlink.MAV_CMD_NAV_TAKEOFF).result == mavlink.MAV_RESULT_UNSUPPORTED


def test_message_interval_and_data_streams(gcs):
    ack = gcs.command(mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, mavlink.MAVLINK_MSG_ID_ATTITUDE, 10000)
    assert ack.result == mavlink.MAV_RESULT_ACCEPTED
    gcs.drain()
    stamps = []
    gcs.wait_type("ATTITUDE", lambda m: stamps.append(m.time_boot_ms) or len(stamps) > 30)
    assert np.median(np.diff(stamps[5:])) == 10  # 100 Hz of simulated time
    gcs.m.mav.request_data_stream_send(1, 1, mavlink.MAV_DATA_STREAM_EXTRA1, 0, 0)
    gcs.sync()
    with pytest.raises(AssertionError, match="timed out"):
        gcs.wait_type("ATTITUDE", timeout=0.5)
    gcs.m.mav.request_data_stream_send(1, 1, mavlink.MAV_DATA_STREAM_EXTRA1, 20, 1)
    stamps = []
    gcs.wait_type("ATTITUDE", lambda m: stamps.append(m.time_boot_ms) or len(stamps) > 10)
    assert np.median(np.diff(stamps[2:])) == 50


def test_timestamps_follow_simulated_time(sim, gcs):
    """Stamps are the simulated time at which a message is sent; the Unix time of SYSTEM_TIME
    advances with it; simulated time is never ahead of SPEEDUP x the wall time since start.
    (How much faster than the wall clock it runs depends on the machine: that is a benchmark
    figure, not asserted here; the simulator slows down by design when it cannot keep up.)"""
    tap = SimTap(sim)
    first = gcs.wait_type("SYSTEM_TIME")
    later = gcs.wait_type("SYSTEM_TIME", lambda m: m.time_boot_ms >= first.time_boot_ms + 2000)
    wall_s = sim.clock() - sim.test_started_s
    assert later.time_unix_usec - first.time_unix_usec == pytest.approx(
        (later.time_boot_ms - first.time_boot_ms) * 1000, abs=1000)   # boot time is whole ms
    assert later.time_boot_ms / 1000.0 <= SPEEDUP * wall_s
    for kind, at_least in (("ATTITUDE", 20), ("SYSTEM_TIME", 2)):   # 1 Hz: one per 1 s at least
        sent = tap.sent(kind)
        assert len(sent) >= at_least
        for t_s, msg in sent:
            assert t_s - 0.001 < msg.time_boot_ms / 1000.0 <= t_s + 1e-9, (kind, t_s, msg.time_boot_ms)
