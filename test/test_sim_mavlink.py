"""brov2_sitl over loopback TCP with a real pymavlink client (sysid 255, MAVLink 2).

Each test starts the simulator in-process on a free port (never 5760), running
SPEEDUP times faster than real time so that the 3 s ArduSub timeouts take 0.6 s.
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

os.environ["MAVLINK20"] = "1"
from pymavlink import mavutil  # noqa: E402

from brov2_hybrid.link.mavros_conversions import depth_from_relative_alt  # noqa: E402
from brov2_hybrid.vehicle.rc import load_rc_map  # noqa: E402
from brov2_hybrid.sim.config import load_link_config  # noqa: E402
from brov2_hybrid.sim.simulator import Simulator  # noqa: E402
from brov2_hybrid.sim.config import load_sim_options  # noqa: E402
from brov2_hybrid.vehicle.vehicle_file import load_vehicle  # noqa: E402

mavutil.set_dialect("ardupilotmega")
mavlink = mavutil.mavlink

SPEEDUP = 5.0
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
NEUTRAL8 = [1500] * 8
CHAN_NOCHANGE = 65535
YAW_RIGHT = [1500, 1500, 1500, 1600, 1500, 1500, 1500, 1500]  # channel 4 = yaw


def expected_servos(vehicle, rc8, mixer="quantitative"):
    return vehicle.mixer(mixer).pwm(load_rc_map().u_from_pwm(rc8))


def servos(msg):
    return np.array([getattr(msg, "servo%d_raw" % i) for i in range(1, 9)], dtype=float)


@pytest.fixture
def sim(vehicle, request):
    link = load_link_config()
    link.address = "tcp:127.0.0.1:0"
    link.udp_out = None
    link.home_alt_m = getattr(request, "param", link.home_alt_m)   # indirect parametrize: home altitude
    simulator = Simulator(vehicle=vehicle, link_config=link, speedup=SPEEDUP, initial_eta=[0, 0, 5.0, 0, 0, 0])
    thread = threading.Thread(target=simulator.run, name="brov2_sitl", daemon=True)
    simulator.test_started_s = simulator.clock()   # before run(): simulated time 0 is no earlier
    thread.start()
    yield simulator
    simulator.stop()
    thread.join(5.0)
    simulator.close()
    assert not thread.is_alive()


class SimTap(object):
    """Records, in the simulator's own thread, the simulated time at which each MAVLink
    message goes out and each received one is handled, so that tests can compare message
    stamps with vehicle time rather than with the wall clock (which a loaded machine stretches)."""

    def __init__(self, sim):
        self._sent = []       # (simulated time [s], packed bytes)
        self._handled = []    # (simulated time [s], message)
        send, handle = sim.server.send, sim.protocol.handle

        def tapped_send(connection, data):
            self._sent.append((sim.t_s, bytes(data)))
            send(connection, data)

        def tapped_handle(connection, message, t_s):
            self._handled.append((t_s, message))
            handle(connection, message, t_s)

        sim.server.send = tapped_send
        sim.protocol.handle = tapped_handle

    def sent(self, kind):
        """(send time [s], message) of every ``kind`` message sent so far."""
        parser = mavlink.MAVLink(None)
        out = []
        for t_s, data in list(self._sent):
            for msg in parser.parse_buffer(bytearray(data)) or []:
                if msg.get_type() == kind:
                    out.append((t_s, msg))
        return out

    def handled(self, kind, predicate=lambda msg: True):
        """(handling time [s], message) of every received ``kind`` message with predicate true."""
        return [(t_s, m) for t_s, m in list(self._handled) if m.get_type() == kind and predicate(m)]


class Gcs(object):
    """A pymavlink ground station on the simulator's TCP port."""

    def __init__(self, port, sysid=255, compid=190):
        self.m = mavutil.mavlink_connection("tcp:127.0.0.1:%d" % port, source_system=sysid,
                                            source_component=compid, autoreconnect=False)
        assert self.m.wait_heartbeat(timeout=10) is not None
        self.override = None  # 8 channel values re-sent by wait_for (pilot keeps the stick)
        self.joystick = None  # (target, x, y, z, r) MANUAL_CONTROL re-sent by wait_for
        self._last_sent = 0.0

    def close(self):
        self.m.close()

    def send_override(self, values):
        self.m.mav.rc_channels_override_send(1, 1, *values)

    def wait_for(self, predicate, timeout=10.0, what="message"):
        """First received message with predicate(msg) true; keeps re-sending self.override."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if (self.override is not None or self.joystick is not None) and time.time() - self._last_sent > 0.04:
                if self.override is not None:
                    self.send_override(self.override)
                if self.joystick is not None:
                    self.m.mav.manual_control_send(*self.joystick, 0)
                self._last_sent = time.time()
            msg = self.m.recv_match(blocking=True, timeout=0.04)
            if msg is not None and predicate(msg):
                return msg
        raise AssertionError("timed out waiting for %s" % what)

    def wait_type(self, kind, predicate=lambda msg: True, timeout=10.0):
        return self.wait_for(lambda m: m.get_type() == kind and predicate(m), timeout, kind)

    def drain(self):
        while self.m.recv_match(blocking=False) is not None:
            pass

    def command(self, command, *params):
        params = list(params) + [0] * (7 - len(params))
        self.m.mav.command_long_send(1, 1, command, 0, *params)
        return self.wait_type("COMMAND_ACK", lambda a: a.command == command)

    def arm(self, value=1):
        """Arm (1) or disarm (0). Arming also starts holding neutral sticks, as a pilot with a
        joystick does, so the pilot-input failsafe only fires when a test sets override None."""
        if value and self.override is None:
            self.override = NEUTRAL8
        assert self.command(mavlink.MAV_CMD_COMPONENT_ARM_DISARM, value).result == mavlink.MAV_RESULT_ACCEPTED

    def sync(self):
        """Return once every message sent before has been handled (replies come in order)."""
        self.m.mav.param_request_read_send(1, 1, b"SYSID_MYGCS", -1)
        self.wait_type("PARAM_VALUE", lambda p: p.param_id == "SYSID_MYGCS")

    def manual(self):
        self.m.mav.set_mode_send(1, mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 19)
        ack = self.wait_type("COMMAND_ACK", lambda a: a.command == mavlink.MAVLINK_MSG_ID_SET_MODE)
        assert ack.result == mavlink.MAV_RESULT_ACCEPTED

    def set_param(self, name, value):
        self.m.mav.param_set_send(1, 1, name.encode(), float(value), mavlink.MAV_PARAM_TYPE_REAL32)
        return self.wait_type("PARAM_VALUE", lambda p: p.param_id == name)


@pytest.fixture
def gcs(sim):
    station = Gcs(sim.port)
    yield station
    station.close()


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
