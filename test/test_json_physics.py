"""ArduPilot JSON SITL interface served by our vehicle model (brov2_hybrid.sim.json_physics).

Checked against the protocol as ArduPilot's libraries/SITL/SIM_JSON.cpp implements it
(packet layout, newline framing, "[%f, %f, %f]" vectors) and against the vehicle model
stepped directly.
"""
import os
import re
import socket
import struct
import threading
import time

import numpy as np
import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.sim import json_physics as jp
from brov2_hybrid.sim.config import load_sim_options, start_eta
from brov2_hybrid.sim.plant import Plant
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

NEUTRAL = [1500] * 8


@pytest.fixture(scope="module")
def vehicle():
    return load_vehicle()


def new_physics(vehicle, depth_m=5.0):
    plant = Plant(vehicle, load_sim_options())
    plant.reset(eta=start_eta(depth_m, [0.0, 0.0, 0.0]))
    return jp.JsonPhysics(plant)


def sitl_parse(reply):
    """What SIM_JSON.cpp's recv_fdm/parse_sensors take from a reply (text between the last two newlines)."""
    text = reply.decode("ascii")
    assert text.startswith("\n") and text.endswith("\n"), "reply must be framed by newlines"
    body = text.split("\n")[-2]
    fields = {}
    for key in ("gyro", "accel_body", "position", "velocity", "quaternion"):
        # parse_sensors: strstr(key), skip the key + 2 characters (quote, colon), sscanf "[%f, %f, %f]".
        start = body.index('"%s"' % key) + 1 + len(key) + 2
        assert body[start] == "[", "sscanf's '[' must be the first character after %s's colon" % key
        parts = body[start + 1:body.index("]", start)].split(", ")
        for part in parts:
            assert re.match(r"^-?\d+\.\d*(e[+-]?\d+)?$", part), (key, part)
        fields[key] = np.array([float(p) for p in parts])
    start = body.index('"timestamp"') + len("timestamp") + 3
    fields["timestamp"] = float(body[start:body.index(",", start)])
    return fields


def test_ports_follow_the_instance():
    assert (jp.json_port(0), jp.mavlink_port(0)) == (9002, 5760)
    assert (jp.json_port(3), jp.mavlink_port(3)) == (9032, 5790)


def test_servo_packet_round_trip_and_layout():
    pwm = [1100, 1200, 1300, 1400, 1600, 1700, 1800, 1900, 0, 0, 0, 0, 0, 0, 0, 1234]
    data = jp.servo_packet(400, 77, pwm)
    # SIM_JSON.cpp servo_packet_16: uint16 magic, uint16 frame_rate, uint32 frame_count, uint16 pwm[16]
    assert len(data) == 40
    assert struct.unpack("<HHI", data[:8]) == (18458, 400, 77)
    frame = jp.parse_servo_packet(data)
    assert frame.frame_rate_hz == 400 and frame.frame_count == 77 and list(frame.pwm_us) == pwm


def test_32_channel_packet_is_read():
    data = struct.pack("<HHI32H", 29569, 1200, 5, *range(1000, 1032))
    frame = jp.parse_servo_packet(data)
    assert len(frame.pwm_us) == 32 and frame.pwm_us[31] == 1031


@pytest.mark.parametrize("data, words", [
    (b"\x01\x02", "at least 8"),
    (struct.pack("<HHI16H", 1234, 400, 0, *NEUTRAL, *([0] * 8)), "magic 1234"),
    (struct.pack("<HHI8H", 18458, 400, 0, *NEUTRAL), "expected 40"),
    (struct.pack("<HHI16H", 18458, 0, 0, *NEUTRAL, *([0] * 8)), "frame_rate 0"),
])
def test_bad_packets_are_refused_with_the_reason(data, words):
    with pytest.raises(Brov2Error, match=words):
        jp.parse_servo_packet(data)


def test_reply_is_what_sitl_parses(vehicle):
    physics = new_physics(vehicle)
    reply = physics.on_frame(jp.parse_servo_packet(jp.servo_packet(400, 0, NEUTRAL)))
    fields = sitl_parse(reply)
    plant = physics.plant
    assert fields["timestamp"] == pytest.approx(plant.t_s) and plant.t_s == pytest.approx(1 / 400.0)
    np.testing.assert_allclose(fields["position"], [0.0, 0.0, 5.0], atol=1e-4)
    np.testing.assert_allclose(fields["quaternion"], [1.0, 0.0, 0.0, 0.0], atol=1e-9)
    # At rest, level: the accelerometer reads minus gravity (up), plus the small net buoyancy.
    assert fields["accel_body"][2] == pytest.approx(-9.80665, abs=0.1)
    np.testing.assert_allclose(fields["accel_body"][:2], 0.0, atol=1e-9)


def test_one_frame_is_one_period_in_whole_steps(vehicle):
    physics = new_physics(vehicle)
    for k in range(6):
        physics.on_frame(jp.ServoFrame(1200, k, NEUTRAL))
    # 6 frames at 1200 Hz = 5 ms = 2 steps of 2.5 ms (the remainder is carried, not lost).
    assert physics.plant.t_s == pytest.approx(0.005)
    for k in range(6, 400):
        physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
    assert physics.plant.t_s == pytest.approx(0.005 + 394 / 400.0)


def test_unstarted_outputs_are_neutral_not_full_reverse(vehicle):
    physics = new_physics(vehicle)
    physics.on_frame(jp.ServoFrame(400, 0, [0] * 16))
    np.testing.assert_allclose(physics.plant.thruster_forces_n(), 0.0)


def test_motor_pwms_drive_the_model_as_directly(vehicle):
    """Motor n = servo output n; the state after a yaw burst equals the model stepped by hand."""
    # ArduSub Heavy yaw: motors 1 and 4 one way, 2 and 3 the other (yaw factors +1 -1 -1 +1).
    pwm = [1600, 1400, 1400, 1600, 1500, 1500, 1500, 1500]
    physics = new_physics(vehicle)
    for k in range(200):
        reply = physics.on_frame(jp.ServoFrame(400, k, pwm + [0] * 8))
    reference = Plant(vehicle, load_sim_options())
    reference.reset(eta=start_eta(5.0, [0, 0, 0]))
    reference.set_motor_pwm(pwm)
    reference.step(200)
    fields = sitl_parse(reply)
    np.testing.assert_allclose(fields["gyro"], reference.nu[3:6], atol=1e-12)
    assert fields["gyro"][2] > 0.1, "positive yaw factors must turn the vehicle clockwise (r > 0, FRD)"
    np.testing.assert_allclose(fields["velocity"], reference.velocity_ned_m_s(), atol=1e-12)


def test_restart_of_sitl_is_counted_and_time_goes_on(vehicle):
    physics = new_physics(vehicle)
    for k in (10, 11, 12, 0, 1):
        physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
    assert physics.restarts == 1 and physics.plant.t_s == pytest.approx(5 / 400.0)


def test_server_answers_the_sender_over_udp(vehicle):
    server = jp.JsonPhysicsServer(new_physics(vehicle), "127.0.0.1", 0)
    sitl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sitl.settimeout(5.0)
    thread = threading.Thread(target=server.run, kwargs={"duration_s": 3 / 400.0})
    thread.start()
    try:
        sitl.sendto(b"garbage", ("127.0.0.1", server.port))
        replies = []
        for k in range(3):
            sitl.sendto(jp.servo_packet(400, k, NEUTRAL), ("127.0.0.1", server.port))
            replies.append(sitl_parse(sitl.recvfrom(4096)[0]))
    finally:
        thread.join(5.0)
        server.close()
        sitl.close()
    assert [r["timestamp"] for r in replies] == pytest.approx([0.0025, 0.005, 0.0075])
    assert server.bad_packets == 1


def test_port_in_use_is_a_clear_error(vehicle):
    first = jp.JsonPhysicsServer(new_physics(vehicle), "127.0.0.1", 0)
    try:
        with pytest.raises(Brov2Error, match="cannot bind udp:127.0.0.1:%d" % first.port):
            jp.JsonPhysicsServer(new_physics(vehicle), "127.0.0.1", first.port)
    finally:
        first.close()


def test_free_instance_has_every_sitl_port_free():
    import random
    from brov2_hybrid.sim.ardusub_sitl import free_instance
    taken = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    taken.bind(("127.0.0.1", jp.json_port(30)))
    try:
        # the generator offers 30 first: its physics port is taken, so the next draw is returned
        rng = random.Random(0)
        draws = iter([30, 31])
        rng.randrange = lambda low, high: next(draws)
        assert free_instance(rng=rng) == 31
    finally:
        taken.close()


def test_a_reader_paces_the_physics(vehicle):
    """With a reader set (JsonPhysics.pace), a frame is answered only once the physics is at most
    max_lead_s ahead of what the reader consumed; a reader that stops reading costs one
    pace_timeout_s per frame and is counted, never a hang."""
    physics = new_physics(vehicle)
    consumed = [0.0]
    physics.pace = lambda: consumed[0]
    physics.max_lead_s = 0.05
    physics.pace_timeout_s = 5.0
    done = threading.Event()
    answered = []

    def frames():
        for k in range(40):                       # 40 frames at 400 Hz: 0.1 s of physics
            physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
            answered.append(physics.plant.t_s)
        done.set()
    worker = threading.Thread(target=frames, daemon=True)
    worker.start()
    assert not done.wait(0.5)                     # blocked: 0.05 s ahead of a reader at 0
    assert max(answered) <= 0.05 + 1e-9 + 1.0 / 400.0
    consumed[0] = 1.0                             # the reader catches up
    assert done.wait(10.0)
    assert physics.plant.t_s == pytest.approx(0.1) and physics.pace_timeouts == 0
    physics.pace_timeout_s = 0.01                 # a reader that reads nothing more: one time-out,
    for k in range(40, 600):                      # then unpaced until it reads something newer
        physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
    assert physics.pace_timeouts == 1 and physics.plant.t_s == pytest.approx(1.5)
    physics.pace = None                           # no reader: no pacing
    before = physics.pace_timeouts
    physics.on_frame(jp.ServoFrame(400, 600, NEUTRAL))
    assert physics.pace_timeouts == before


def test_a_reader_with_nothing_to_read_does_not_hold_the_physics(vehicle):
    """Lockstep SITL writes its MAVLink out at an I/O pass every 12.5 ms of its time (400 Hz), so the next
    ATTITUDE reached the reader up to 34 ms of physics time after the newest one answered (measured, at a
    lead of 35 ms; a longer gap in the stream, more): held there, the physics waited for an ATTITUDE that
    ArduSub sends only as its clock runs on, one pace_timeout_s (2 s) per ATTITUDE -- flights 100 times
    slower than real time. A reader that has read everything and waits (JsonPhysics.reader_idle) lets
    every frame through; a busy one still holds the physics at max_lead_s."""
    physics = new_physics(vehicle)
    consumed = [0.0]
    idle = [True]
    physics.pace = lambda: consumed[0]
    physics.reader_idle = lambda: idle[0]
    physics.max_lead_s = 0.035
    physics.pace_timeout_s = 0.5
    start = time.monotonic()
    for k in range(40):                           # 0.1 s of physics, the reader answered up to 0 s
        physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
    assert physics.plant.t_s == pytest.approx(0.1)
    assert physics.pace_timeouts == 0 and time.monotonic() - start < 0.4
    assert physics.idle_frames == 40 - int(round(0.035 * 400)) - 1
    idle[0] = False                               # the reader is busy with an ATTITUDE: held at the lead
    consumed[0] = 0.1
    done = threading.Event()

    def frames():
        for k in range(40, 80):
            physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
        done.set()
    threading.Thread(target=frames, daemon=True).start()
    assert not done.wait(0.2)
    assert physics.plant.t_s <= 0.1 + 0.035 + 1.0 / 400.0 + 1e-9
    idle[0] = True                                # it answered and waits: the physics goes on at once
    assert done.wait(0.2)
    assert physics.pace_timeouts == 0


def test_the_physics_waits_for_the_ground_stations_heartbeat(vehicle):
    """Lockstep ArduSub's GCS failsafe counts vehicle time: with a ground station's heartbeat gate set
    (JsonPhysics.gcs_heartbeat_at), the physics goes no further than gcs_max_gap_s past its newest
    heartbeat, goes on when the next one comes, and after gcs_wait_s of wall time goes on counted."""
    physics = new_physics(vehicle)
    physics.gcs_max_gap_s, physics.gcs_wait_s = 0.05, 5.0
    sent = [None]
    physics.gcs_heartbeat_at = lambda: sent[0]
    for k in range(40):                           # no heartbeat sent yet: not gated
        physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
    assert physics.plant.t_s == pytest.approx(0.1)
    sent[0] = physics.plant.t_s
    done, answered = threading.Event(), []

    def frames():
        for k in range(40, 80):
            physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
            answered.append(physics.plant.t_s)
        done.set()
    worker = threading.Thread(target=frames, daemon=True)
    worker.start()
    assert not done.wait(0.5)                     # held 0.05 s past the heartbeat
    assert max(answered) <= 0.1 + 0.05 + 1e-9 + 1.0 / 400.0
    sent[0] = 0.2                                 # the next heartbeat
    assert done.wait(10.0)
    assert physics.plant.t_s == pytest.approx(0.2) and physics.gcs_waits_timed_out == 0
    physics.gcs_wait_s = 0.01                     # a ground station gone quiet: one time-out, then ungated
    for k in range(80, 200):
        physics.on_frame(jp.ServoFrame(400, k, NEUTRAL))
    assert physics.gcs_waits_timed_out == 1 and physics.plant.t_s == pytest.approx(0.5)


def test_a_depth_request_carries_the_vehicle_down_at_the_next_frame(vehicle):
    physics = new_physics(vehicle, depth_m=2.0)
    for k in range(40):
        physics.on_frame(jp.ServoFrame(400, k, [1600] * 8))
    t, yaw = physics.plant.t_s, physics.plant.eta[5]
    physics.request_depth(20.0)
    physics.on_frame(jp.ServoFrame(400, 40, [1600] * 8))
    assert physics.plant.eta[2] == pytest.approx(20.0, abs=0.01)
    assert physics.plant.t_s == pytest.approx(t + 1.0 / 400.0)
    assert physics.plant.eta[5] == pytest.approx(yaw, abs=0.01)
    assert list(physics.plant.motor_pwm_us) == [1600.0] * 8      # this frame's outputs still apply


class _Commands(object):
    """What ardusub_sitl's ROS shell hands over: the newest command's stamp."""
    command_topic = "/brov2/thruster_command"

    def __init__(self):
        self.followed = False

    def follow(self):
        self.followed = True

    def latest_s(self):
        return 1.25


def test_ardusub_lockstep_paces_the_physics_by_the_controller(tmp_path):
    """``ardusub_sitl --lockstep``: the physics (so ArduSub's clock) runs at most
    lockstep.ardusub_max_lead_s ahead of the newest command; without the ROS shell it is refused."""
    from brov2_hybrid.sim.ardusub_sitl import build_arg_parser, sitl_from_args
    from brov2_hybrid.sim.lockstep import load_lockstep_config
    from brov2_hybrid.errors import Brov2Error
    with pytest.raises(Brov2Error, match="ROS node"):
        sitl_from_args(build_arg_parser().parse_args(["--lockstep"]))
    try:
        from brov2_hybrid.sim.ardusub_sitl import find_ardusub, free_instance
        find_ardusub()
    except Brov2Error as exc:
        if os.environ.get("BROV2_REQUIRE_ARDUSUB") == "1":
            pytest.fail("BROV2_REQUIRE_ARDUSUB=1 but %s" % exc)
        pytest.skip("needs an ArduSub build: %s" % exc)
    commands = _Commands()
    sitl = sitl_from_args(build_arg_parser().parse_args(["--lockstep", "--instance", str(free_instance())]),
                          commands)
    try:
        config = load_lockstep_config()
        assert commands.followed and sitl.physics.pace() == 1.25
        assert sitl.physics.max_lead_s == config.ardusub_max_lead_s == pytest.approx(0.04)
        assert sitl.physics.pace_timeout_s == config.timeout_s
    finally:
        sitl.close()


def test_a_resent_frame_is_not_stepped_and_not_answered_twice(vehicle):
    """SIM_JSON resends its servos after 1 s without a reply (JSON::recv_fdm). A resend that queued
    behind the frame being answered must neither step the physics (ArduSub's clock would fall behind
    ours) nor get a second reply (taken as the next frame's, ArduSub would run a frame behind)."""
    physics = new_physics(vehicle)
    for k in range(3):
        assert physics.on_frame(jp.ServoFrame(400, k, NEUTRAL)) is not None
    t = physics.plant.t_s
    assert physics.on_frame(jp.ServoFrame(400, 2, NEUTRAL)) is None      # the resend, just after the reply
    assert physics.plant.t_s == t and physics.resent_frames == 1
    physics._replied_at -= 2.0 * physics.RESEND_PERIOD_S                  # much later: the reply was lost
    again = physics.on_frame(jp.ServoFrame(400, 2, NEUTRAL))
    assert again is not None and physics.plant.t_s == t                  # answered, still not stepped
    assert physics.on_frame(jp.ServoFrame(400, 3, NEUTRAL)) is not None and physics.plant.t_s > t
