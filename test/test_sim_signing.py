"""MAVLink 2 signing end to end over loopback: brov2_sitl keyed as ArduPilot is, a signed
pilot configured exactly as mavlink_bridge configures itself (mavlink_signing.sign_connection
/ send_setup_signing), and unsigned or wrongly signed senders that must change nothing."""
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

os.environ["MAVLINK20"] = "1"
from pymavlink import mavutil  # noqa: E402

from brov2_hybrid.link import mavlink_signing as ms  # noqa: E402
from brov2_hybrid.sim.config import load_link_config  # noqa: E402
from brov2_hybrid.sim.simulator import Simulator  # noqa: E402
from sim_gcs import SPEEDUP, YAW_RIGHT, Gcs, expected_servos, servos  # noqa: E402

mavlink = mavutil.mavlink
KEY = bytes(range(100, 132))
OTHER_KEY = bytes(range(32))
ARM = mavlink.MAV_CMD_COMPONENT_ARM_DISARM


def start(vehicle, signing_key=None):
    link = load_link_config()
    link.address = "tcp:127.0.0.1:0"
    link.udp_out = None
    sim = Simulator(vehicle=vehicle, link_config=link, speedup=SPEEDUP, initial_eta=[0, 0, 5.0, 0, 0, 0],
                    signing_key=signing_key)
    thread = threading.Thread(target=sim.run, daemon=True)
    thread.start()
    return sim, thread


@pytest.fixture
def keyed_sim(vehicle):
    sim, thread = start(vehicle, KEY)
    yield sim
    sim.stop()
    thread.join(5.0)
    sim.close()


@pytest.fixture
def unkeyed_sim(vehicle):
    sim, thread = start(vehicle)
    yield sim
    sim.stop()
    thread.join(5.0)
    sim.close()


def signed_gcs(port, key=KEY, compid=190):
    station = Gcs(port, compid=compid)   # the vehicle's signed HEARTBEAT reads fine unkeyed
    ms.sign_connection(station.m, key)
    return station


UNSIGNED_ATTACKER = textwrap.dedent("""
    import os, sys, time
    os.environ["MAVLINK20"] = "1"
    from pymavlink import mavutil
    m = mavutil.mavlink_connection("tcp:127.0.0.1:%d" % int(sys.argv[1]), source_system=255,
                                   source_component=191, autoreconnect=False)
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        m.mav.rc_channels_override_send(1, 1, 1900, 1900, 1900, 1900, 1900, 1900, 1500, 1500)
        m.mav.command_long_send(1, 1, 400, 0, 0, 21196, 0, 0, 0, 0, 0)   # forced disarm
        time.sleep(0.02)
    m.close()
""")


def test_unsigned_override_from_another_process_is_dropped_while_the_signed_pilot_flies(vehicle, keyed_sim):
    pilot = signed_gcs(keyed_sim.port)
    try:
        pilot.arm()
        pilot.manual()
        pilot.override = YAW_RIGHT
        expected = expected_servos(vehicle, YAW_RIGHT)
        pilot.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
        attacker = subprocess.Popen([sys.executable, "-c", UNSIGNED_ATTACKER, str(keyed_sim.port), "2.0"])
        try:
            warning = pilot.wait_type("STATUSTEXT", lambda m: "255/191" in m.text)
            assert "unsigned" in warning.text and "badly" not in warning.text
            outputs = []
            pilot.wait_type("SERVO_OUTPUT_RAW", lambda m: outputs.append(servos(m)) or attacker.poll() is not None)
        finally:
            assert attacker.wait(10) == 0
        np.testing.assert_allclose(outputs, np.tile(expected, (len(outputs), 1)), atol=1.0)
        assert len(outputs) > 5
        assert pilot.wait_type("HEARTBEAT").base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED
        counters = keyed_sim.counters()
        rejected = counters["protocol"]["signature_rejected_by_source"]["255/191"]
        assert rejected >= 20 and counters["firmware"]["override_rejected_sysid"] == 0
        # One warning for the source within signing_warning_interval_s, not one per message.
        texts = [m for m in [pilot.m.recv_match(type="STATUSTEXT", blocking=False) for _ in range(200)] if m]
        assert all("255/191" not in m.text for m in texts)
    finally:
        pilot.close()


def test_wrongly_signed_override_is_dropped(vehicle, keyed_sim):
    pilot = signed_gcs(keyed_sim.port)
    forger = signed_gcs(keyed_sim.port, key=OTHER_KEY, compid=192)
    try:
        pilot.arm()
        pilot.manual()
        pilot.override = YAW_RIGHT
        expected = expected_servos(vehicle, YAW_RIGHT)
        pilot.wait_type("SERVO_OUTPUT_RAW", lambda m: np.all(np.abs(servos(m) - expected) <= 1.0))
        for _ in range(30):
            forger.send_override([1900] * 8)
        warning = pilot.wait_type("STATUSTEXT", lambda m: "255/192" in m.text)
        assert "badly signed" in warning.text
        for _ in range(5):
            np.testing.assert_allclose(servos(pilot.wait_type("SERVO_OUTPUT_RAW")), expected, atol=1.0)
        assert keyed_sim.counters()["protocol"]["signature_rejected_by_source"]["255/192"] >= 30
    finally:
        forger.close()
        pilot.close()


def arm_ack(station, value, timeout=10.0):
    station.m.mav.command_long_send(1, 1, ARM, 0, value, 0, 0, 0, 0, 0, 0)
    return station.wait_type("COMMAND_ACK", lambda a: a.command == ARM, timeout=timeout)


def test_setup_signing_keys_every_link_and_an_all_zero_key_disables(unkeyed_sim):
    plain = Gcs(unkeyed_sim.port, compid=193)
    pilot = Gcs(unkeyed_sim.port)
    try:
        assert arm_ack(plain, 0).result == mavlink.MAV_RESULT_ACCEPTED      # unkeyed: anyone may talk
        ms.sign_connection(pilot.m, KEY)
        ms.send_setup_signing(pilot.m, 1, 1, KEY)                          # as mavlink_bridge's signing_setup
        assert arm_ack(pilot, 0).result == mavlink.MAV_RESULT_ACCEPTED      # signed: accepted
        assert unkeyed_sim.protocol.signing_enabled
        with pytest.raises(AssertionError, match="timed out"):
            arm_ack(plain, 0, timeout=1.0)                                  # the other link is keyed too
        plain.m.mav.setup_signing_send(1, 1, bytes(32), 0)                  # unsigned re-keying: dropped
        plain.m.mav.heartbeat_send(mavlink.MAV_TYPE_GCS, mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 0)
        assert arm_ack(pilot, 0).result == mavlink.MAV_RESULT_ACCEPTED
        assert unkeyed_sim.protocol.signing_enabled
        # Telemetry is signed with the key: a pymavlink receiver with it verifies it.
        hb = pilot.wait_type("HEARTBEAT")
        assert hb.get_signed() and pilot.m.mav.signing.goodsig_count > 0
        # ArduPilot's load_signing_key: all-zero key and timestamp 0 switch signing off.
        pilot.m.mav.setup_signing_send(1, 1, bytes(32), 0)
        deadline = time.time() + 5.0
        while unkeyed_sim.protocol.signing_enabled and time.time() < deadline:
            time.sleep(0.01)
        assert not unkeyed_sim.protocol.signing_enabled
        assert arm_ack(plain, 0, timeout=5.0).result == mavlink.MAV_RESULT_ACCEPTED
        # The still-keyed pilot now refuses the vehicle's unsigned telemetry (as the bridge would).
        bad = pilot.wait_for(lambda m: m.get_type() == "BAD_DATA" and m.reason == "Invalid signature")
        assert ms.sender_of(bad)[0] == 1
    finally:
        plain.close()
        pilot.close()
    assert unkeyed_sim.counters()["protocol"]["signature_rejected_by_source"]["255/193"] >= 3


def test_simulator_command_line_reads_the_key_file(tmp_path):
    from brov2_hybrid.sim.simulator import build_arg_parser, simulator_from_args
    path = tmp_path / "vehicle.key"
    path.write_text("passphrase: tether secret\n")
    args = build_arg_parser().parse_args(["--address", "tcp:127.0.0.1:0", "--signing-key-file", str(path)])
    sim = simulator_from_args(args)
    try:
        assert sim.protocol.signing.secret_key == ms.key_from_passphrase("tether secret")
        assert sim.protocol.signing.timestamp >= ms.timestamp_now() - 100 * 60 * 100000
    finally:
        sim.close()
    path.write_text("0123")
    from brov2_hybrid.errors import ParameterError
    with pytest.raises(ParameterError, match=str(path)):
        simulator_from_args(build_arg_parser().parse_args(["--signing-key-file", str(path)]))


def test_setup_signing_is_refused_while_armed_as_on_ardupilot(unkeyed_sim):
    """GCS_MAVLINK::handle_setup_signing: no new key while armed (checked on real ArduSub in
    test_real_ardusub.py); the vehicle says why and stays unkeyed."""
    pilot = Gcs(unkeyed_sim.port)
    try:
        assert arm_ack(pilot, 1).result == mavlink.MAV_RESULT_ACCEPTED
        pilot.m.mav.setup_signing_send(1, 1, KEY, ms.timestamp_now())
        text = pilot.wait_type("STATUSTEXT", lambda m: "signing" in m.text)
        assert text.text == "ERROR: Won't setup signing when armed"
        assert not unkeyed_sim.protocol.signing_enabled
        assert arm_ack(pilot, 0).result == mavlink.MAV_RESULT_ACCEPTED
        ms.send_setup_signing(pilot.m, 1, 1, KEY)
        deadline = time.time() + 5.0
        while not unkeyed_sim.protocol.signing_enabled and time.time() < deadline:
            time.sleep(0.01)
        assert unkeyed_sim.protocol.signing_enabled, "disarmed, the same SETUP_SIGNING keys the vehicle"
    finally:
        pilot.close()
