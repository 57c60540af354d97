"""brov2_sitl over loopback TCP: links and timing (reconnects, malformed traffic, telemetry
delay, noise, the UDP link, the command line and the ROS node script, the pilot-input
failsafe's clock, MANUAL_CONTROL, intervals across reconnects, home and version answers).
Fixtures: sim_gcs.py.
"""
import dataclasses
import math
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from sim_gcs import (CHAN_NOCHANGE, NEUTRAL8, REPO, SPEEDUP, Gcs, SimTap, expected_servos, gcs, mavlink,  # noqa: F401
                     mavutil, servos, sim)  # gcs, sim: the fixtures
from brov2_hybrid.sim.config import load_link_config, load_sim_options
from brov2_hybrid.sim.simulator import Simulator

def test_reconnect(sim):
    first = Gcs(sim.port)
    first.close()
    second = Gcs(sim.port)
    try:
        second.arm()
        assert second.wait_type("HEARTBEAT").base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED
    finally:
        second.close()
    counters = sim.counters()["server"]
    assert counters["accepted"] == 2


def test_malformed_and_unknown_messages_are_counted_not_fatal(sim):
    rng = random.Random(1)
    raw = socket.create_connection(("127.0.0.1", sim.port), timeout=5)
    raw.sendall(bytes(rng.getrandbits(8) for _ in range(2000)))
    raw.sendall(b"\xfd\x20\x00\x00\x07\xff\xbe\x45\x00\x00" + b"\x00" * 40)  # RC override, bad CRC
    gcs = Gcs(sim.port)
    try:
        gcs.m.mav.set_position_target_local_ned_send(0, 1, 1, mavlink.MAV_FRAME_LOCAL_NED, 0xFFF,
                                                     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)  # valid, not implemented
        gcs.sync()
        counters = sim.counters()
        gcs.arm()  # still serving
        gcs.arm(0)
    finally:
        gcs.close()
        raw.close()
    assert counters["server"]["bad_data"] > 0
    assert counters["protocol"]["unhandled"].get("SET_POSITION_TARGET_LOCAL_NED") == 1
    assert counters["firmware"]["override_accepted"] == 0  # the frame with a bad CRC was dropped


def test_nonsense_command_values_are_refused_not_fatal(gcs):
    ack = gcs.command(mavlink.MAV_CMD_DO_SET_MODE, mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, float("nan"))
    assert ack.result == mavlink.MAV_RESULT_DENIED
    assert gcs.command(mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, float("inf"), 1000).result == mavlink.MAV_RESULT_DENIED
    gcs.arm()  # still alive


def test_telemetry_delay_holds_messages_back(sim, gcs):
    """After SIM_TLM_DELAY = 1 s, each ATTITUDE goes out 1 s of vehicle time after its stamp
    (to within a firmware tick and the whole-ms stamp); before, at once. Measured against the
    simulator's own clock at sending, so the wall clock's pace plays no part."""
    tap = SimTap(sim)
    deadline = time.time() + 10.0
    while len(tap.sent("ATTITUDE")) < 5:   # some sent without delay first
        assert time.time() < deadline, "no ATTITUDE sent"
        time.sleep(0.01)
    gcs.set_param("SIM_TLM_DELAY", 1.0)
    t_set = tap.handled("PARAM_SET", lambda p: p.param_id == "SIM_TLM_DELAY")[0][0]
    gcs.wait_type("ATTITUDE", lambda m: m.time_boot_ms / 1000.0 > t_set + 0.5)  # delayed ones arrive
    lags = [(t_s - msg.time_boot_ms / 1000.0, msg.time_boot_ms / 1000.0) for t_s, msg in tap.sent("ATTITUDE")]
    before = [lag for lag, stamp in lags if stamp < t_set - 0.002]
    after = [lag for lag, stamp in lags if stamp > t_set + 0.002]
    assert before and after
    assert max(before) < 0.001 + 1e-9
    assert 1.0 - 1e-9 <= min(after) and max(after) < 1.0 + sim.tick_s + 0.001 + 1e-9


def test_noise_is_on_attitude_but_not_on_the_true_state(vehicle):
    link = load_link_config()
    link.address = "tcp:127.0.0.1:0"
    link.udp_out = None
    options = dataclasses.replace(load_sim_options(), noise_enabled=True, attitude_noise_std_rad=0.01)
    simulator = Simulator(vehicle=vehicle, sim_options=options, link_config=link, speedup=SPEEDUP,
                          initial_eta=[0, 0, 5.0, 0, 0, 0])
    thread = threading.Thread(target=simulator.run, daemon=True)
    thread.start()
    try:
        gcs = Gcs(simulator.port)
        measured, true = [], []
        gcs.wait_for(lambda m: (measured.append(m.roll) if m.get_type() == "ATTITUDE" else
                                true.append(m.roll) if m.get_type() == "SIM_STATE" else None)
                     or (len(measured) > 100 and len(true) > 10))
        gcs.close()
    finally:
        simulator.stop()
        thread.join(5)
        simulator.close()
    assert 0.007 < np.std(measured) < 0.013
    assert np.max(np.abs(true)) < 1e-9


def test_udp_out_link_is_bidirectional(vehicle):
    ground = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ground.bind(("127.0.0.1", 0))
    link = load_link_config()
    link.address = "tcp:127.0.0.1:0"
    link.udp_out = "127.0.0.1:%d" % ground.getsockname()[1]
    ground.close()
    simulator = Simulator(vehicle=vehicle, link_config=link, speedup=SPEEDUP, initial_eta=[0, 0, 5.0, 0, 0, 0])
    thread = threading.Thread(target=simulator.run, daemon=True)
    thread.start()
    try:
        station = mavutil.mavlink_connection("udpin:" + link.udp_out, source_system=255, source_component=190)
        assert station.wait_heartbeat(timeout=10) is not None
        station.mav.command_long_send(1, 1, mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0)
        ack = station.recv_match(type="COMMAND_ACK", blocking=True, timeout=10)
        station.close()
    finally:
        simulator.stop()
        thread.join(5)
        simulator.close()
    assert ack is not None and ack.result == mavlink.MAV_RESULT_ACCEPTED


def _start_cli(extra):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"))
    proc = subprocess.Popen([sys.executable] + extra, cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 20
    lines = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        found = re.search(r"listening on tcp:127\.0\.0\.1:(\d+)", line)
        if found:
            return proc, int(found.group(1))
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("simulator did not start: %s" % "".join(lines))


def test_command_line_runs_and_exits_cleanly_on_sigint():
    proc, port = _start_cli(["-m", "brov2_hybrid.sim", "--address", "tcp:127.0.0.1:0", "--speedup", "2",
                             "--initial-depth-m", "3", "--initial-attitude-deg", "0", "0", "90",
                             "--model", "stock", "--mixer", "stock"])
    try:
        gcs = Gcs(port)
        assert math.degrees(gcs.wait_type("ATTITUDE").yaw) == pytest.approx(90.0, abs=0.5)
        assert -gcs.wait_type("SIM_STATE").alt == pytest.approx(3.0, abs=0.3)
        gcs.arm()
        gcs.close()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
    assert "stopped at t =" in err and "Traceback" not in err


def test_ros_node_script_works_without_a_ros_master():
    proc, port = _start_cli([os.path.join(REPO, "nodes", "brov2_sitl"), "__name:=brov2_sitl",
                             "--address", "tcp:127.0.0.1:0", "--duration-s", "1.0"])
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err


# ------------------------------------------------------------ as ArduSub meets ground stations

def is_armed(msg):
    return bool(msg.base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED)


def test_pilot_failsafe_counts_from_boot_and_stays_latched_when_armed_later(sim, gcs):
    """Sub::failsafe_pilot_input_check: with no input since boot the failsafe fires at
    FS_PILOT_TIMEOUT while disarmed and latches; a client that arms later is not disarmed
    before it has sent input and stopped again."""
    gcs.wait_type("HEARTBEAT", lambda m: m.system_status == mavlink.MAV_STATE_CRITICAL)  # latched
    assert sim.counters()["firmware"]["pilot_failsafe"] == 1
    assert gcs.command(mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 1).result == mavlink.MAV_RESULT_ACCEPTED
    t_armed = sim.t_s
    # 3.5 s of vehicle time without input: still armed (latched, nothing fires again).
    gcs.wait_type("SYSTEM_TIME", lambda m: m.time_boot_ms / 1000.0 > t_armed + 3.5)
    assert is_armed(gcs.wait_type("HEARTBEAT"))
    assert sim.counters()["firmware"]["pilot_failsafe"] == 1
    gcs.override = NEUTRAL8                     # input resumes: latch clears
    gcs.wait_type("HEARTBEAT", lambda m: m.system_status == mavlink.MAV_STATE_ACTIVE)
    gcs.override = None                         # ... and stops: disarmed 3 s later
    gcs.wait_type("HEARTBEAT", lambda m: not is_armed(m))
    assert sim.counters()["firmware"]["pilot_failsafe"] == 2


def joystick_servos(vehicle, gain, x, y, z, r):
    rpy, thr = 0.4 * gain, 0.8 * gain
    rc = [1500, 1500, int(z * thr + 1500 - 500 * thr), int(r * rpy + 1500), int(x * rpy + 1500),
          int(y * rpy + 1500), 1500, 1500]
    return expected_servos(vehicle, rc)


def test_manual_control_flies_the_vehicle(vehicle, sim, gcs):
    gcs.joystick = (1, 0, 0, 500, 0)
    assert gcs.command(mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 1).result == mavlink.MAV_RESULT_ACCEPTED
    gcs.manual()
    gcs.joystick = (1, 600, 0, 500, -1000)      # forward 1620, yaw 1300 at gain 0.5
    expected = joystick_servos(vehicle, 0.5, 600, 0, 500, -1000)
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
    rc = gcs.wait_type("RC_CHANNELS", lambda m: m.chan5_raw == 1620)
    assert (rc.chan3_raw, rc.chan4_raw, rc.chan9_raw) == (1500, 1300, 1100)
    # Joystick gain is a parameter (JS_GAIN_DEFAULT).
    assert gcs.set_param("JS_GAIN_DEFAULT", 1.0).param_value == 1.0
    expected = joystick_servos(vehicle, 1.0, 600, 0, 500, -1000)
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
    gcs.joystick = (1, 0, 0, 500, 0)
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(servos(m) == 1500))
    assert sim.counters()["firmware"]["manual_control_accepted"] > 0
    assert is_armed(gcs.wait_type("HEARTBEAT"))


def test_manual_control_for_another_vehicle_or_from_another_system_is_ignored(vehicle, sim, gcs):
    gcs.override = NEUTRAL8
    gcs.arm()
    other = Gcs(sim.port, sysid=200)
    try:
        for _ in range(20):
            gcs.m.mav.manual_control_send(2, 1000, 0, 500, 0, 0)    # addressed to vehicle 2
            gcs.m.mav.manual_control_send(0, 1000, 0, 500, 0, 0)    # broadcast: ArduSub ignores it too
            other.m.mav.manual_control_send(1, 1000, 0, 500, 0, 0)  # not SYSID_MYGCS
        other.sync()
        gcs.sync()
        gcs.drain()
        for _ in range(3):
            np.testing.assert_array_equal(servos(gcs.wait_type("SERVO_OUTPUT_RAW")), 1500)
    finally:
        other.close()
    counters = sim.counters()
    assert counters["protocol"]["not_for_us"] >= 40
    assert counters["firmware"]["manual_control_rejected_sysid"] == 20
    assert counters["firmware"]["manual_control_accepted"] == 0


def test_rc_override_and_manual_control_share_channels(vehicle, sim, gcs):
    gcs.joystick = (1, 1000, 0, 500, 0)         # forward 1700 (gain 0.5), yaw neutral
    assert gcs.command(mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 1).result == mavlink.MAV_RESULT_ACCEPTED
    gcs.wait_type("RC_CHANNELS", lambda m: m.chan5_raw == 1700)
    gcs.joystick = None
    gcs.override = [CHAN_NOCHANGE, CHAN_NOCHANGE, CHAN_NOCHANGE, 1600] + [CHAN_NOCHANGE] * 4
    rc = gcs.wait_type("RC_CHANNELS", lambda m: m.chan4_raw == 1600, timeout=5)
    assert rc.chan5_raw == 1700                 # the joystick's forward holds until RC_OVERRIDE_TIME
    expected = expected_servos(vehicle, [1500, 1500, 1500, 1600, 1700, 1500, 1500, 1500])
    gcs.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0), timeout=2)
    rc = gcs.wait_type("RC_CHANNELS", lambda m: m.chan5_raw == 1500)  # expired 3 s after the joystick
    assert rc.chan4_raw == 1600 and is_armed(gcs.wait_type("HEARTBEAT"))



def attitude_period_ms(station, n=12):
    station.drain()
    stamps = []
    station.wait_type("ATTITUDE", lambda m: stamps.append(m.time_boot_ms) or len(stamps) > n)
    return np.median(np.diff(stamps[2:]))


def test_message_interval_persists_on_the_port_across_reconnects(sim):
    first = Gcs(sim.port)
    try:
        ack = first.command(mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, mavlink.MAVLINK_MSG_ID_ATTITUDE, 100000)
        assert ack.result == mavlink.MAV_RESULT_ACCEPTED
        assert attitude_period_ms(first) == 100                       # 10 Hz instead of 50
        first.m.mav.request_data_stream_send(1, 1, mavlink.MAV_DATA_STREAM_EXTRA2, 0, 0)  # VFR_HUD off
        first.sync()
    finally:
        first.close()
    second = Gcs(sim.port)
    try:
        assert attitude_period_ms(second) == 100                      # still 10 Hz after reconnect
        with pytest.raises(AssertionError, match="timed out"):
            second.wait_type("VFR_HUD", timeout=0.5)
        ack = second.command(mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, mavlink.MAVLINK_MSG_ID_ATTITUDE, 0)
        assert ack.result == mavlink.MAV_RESULT_ACCEPTED              # 0 = back to the default
        assert attitude_period_ms(second) == 1000 / sim.link_config.stream_rates_hz["ATTITUDE"]
    finally:
        second.close()


def test_home_position_autopilot_version_and_mission_answers(sim, gcs):
    link = sim.link_config
    home_lat, home_lon = int(round(link.home_lat_deg * 1e7)), int(round(link.home_lon_deg * 1e7))
    # MAV_CMD_GET_HOME_POSITION (MAVROS home_position plugin): HOME_POSITION + ACK accepted.
    def request(command, answer, *params):
        """Send ``command``; return the ``answer`` message (sent before the ACK) and the ACK."""
        params = list(params) + [0] * (7 - len(params))
        gcs.m.mav.command_long_send(1, 1, command, 0, *params)
        reply = gcs.wait_type(answer)
        return reply, gcs.wait_type("COMMAND_ACK", lambda a: a.command == command)

    home, ack = request(mavlink.MAV_CMD_GET_HOME_POSITION, "HOME_POSITION")
    assert ack.result == mavlink.MAV_RESULT_ACCEPTED
    assert (home.latitude, home.longitude, home.altitude) == (home_lat, home_lon, int(round(link.home_alt_m * 1000)))
    assert list(home.q) == [1.0, 0.0, 0.0, 0.0]
    _, ack = request(mavlink.MAV_CMD_REQUEST_MESSAGE, "HOME_POSITION", mavlink.MAVLINK_MSG_ID_HOME_POSITION)
    assert ack.result == mavlink.MAV_RESULT_ACCEPTED
    origin, ack = request(mavlink.MAV_CMD_REQUEST_MESSAGE, "GPS_GLOBAL_ORIGIN", mavlink.MAVLINK_MSG_ID_GPS_GLOBAL_ORIGIN)
    assert ack.result == mavlink.MAV_RESULT_ACCEPTED and origin.latitude == home_lat
    # 520, as MAVROS sends it first: broadcast, param1 = 1 -> AUTOPILOT_VERSION and an ACK.
    gcs.m.mav.command_long_send(0, 0, mavlink.MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES, 0, 1, 0, 0, 0, 0, 0, 0)
    version = gcs.wait_type("AUTOPILOT_VERSION")
    assert version.capabilities & mavlink.MAV_PROTOCOL_CAPABILITY_MAVLINK2
    ack = gcs.wait_type("COMMAND_ACK", lambda a: a.command == mavlink.MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES)
    assert ack.result == mavlink.MAV_RESULT_ACCEPTED
    ack = gcs.command(mavlink.MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES, 0)   # param1 must be 1
    assert ack.result == mavlink.MAV_RESULT_FAILED
    # Mission download (MAVROS waypoint/geofence/rallypoint plugins): empty, then the GCS's ACK.
    for mission_type in (mavlink.MAV_MISSION_TYPE_MISSION, mavlink.MAV_MISSION_TYPE_FENCE):
        gcs.m.mav.mission_request_list_send(1, 1, mission_type)
        count = gcs.wait_type("MISSION_COUNT", lambda m, k=mission_type: m.mission_type == k)
        assert count.count == 0 and count.target_system == 255
        gcs.m.mav.mission_ack_send(1, 1, mavlink.MAV_MISSION_ACCEPTED, mission_type)
    gcs.sync()
    counters = sim.counters()["protocol"]
    assert counters["mission_acks"] == 2 and "MISSION_ACK" not in counters["unhandled"]
