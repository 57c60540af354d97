"""Against real ArduSub (4.5 SITL, built by scripts/build_ardusub.sh) flying our vehicle model.

The facts our code predicts about the firmware every BlueROV2 runs, checked on the
firmware itself: manual mixing (Algorithm 1, truncated PWMs), MANUAL_CONTROL handling,
the override and GCS-heartbeat failsafes, MAVLink 2 signing, arming refusals. The ROS
pipeline on real ArduSub is the rostest ``yaw_step_ardusub.test``.

Without a build these tests are skipped with one line saying so; with
``BROV2_REQUIRE_ARDUSUB=1`` (``.ci/run``) a missing build is a failure.
"""
import os
import time

import numpy as np
import pytest

from brov2_hybrid.link import mavlink_signing
from brov2_hybrid.vehicle.mixers import STOCK, motor_pwm_from_rc
from brov2_hybrid.sim.config import load_firmware_config, load_initial_state, load_sim_options
from brov2_hybrid.sim.joystick import joystick_gain, manual_control_channels



#: Vehicle time waited past MOT_SPOOL_TIME after arming [s]: a few of ArduSub's 400 Hz loops and a
#: SERVO_OUTPUT_RAW period.
SPOOL_MARGIN_S = 0.1


def armed_flight(vehicle, binary):
    """Real ArduSub (the build at ``binary``) on our physics for ``vehicle`` (a free SITL instance), armed in MANUAL."""
    from brov2_hybrid.analysis.ardusub_flight import SitlFlight
    from brov2_hybrid.sim.ardusub_sitl import ArduSubSitl, free_instance
    start = load_initial_state()
    f = SitlFlight(ArduSubSitl(vehicle, load_sim_options(), start.eta(),
                               instance=free_instance(), speedup=50.0, binary=binary))
    try:
        f.set_mode("MANUAL")
        f.attempts_to_arm = f.arm(timeout_s=60.0)
        # After arming, ArduSub's motors spool up over MOT_SPOOL_TIME (vehicle time), and until then the
        # throttle they take is limited (AP_MotorsMulticopter's spool logic): the mixing is not yet its
        # steady one. How much vehicle time passes on its own before the first override depends on the
        # machine's load (the physics runs as fast as it can), so wait for it. (Seen once on a busy
        # machine: the second vector after arming, all channels 1900, mixed as if heave were 0.04.)
        settle(f, float(f.get_param("MOT_SPOOL_TIME")) + SPOOL_MARGIN_S)
    except BaseException:
        f.close()
        raise
    return f


@pytest.fixture(scope="module")
def sitl(vehicle, ardusub_binary):
    f = armed_flight(vehicle, ardusub_binary)
    try:
        yield f
    finally:
        f.close()


@pytest.fixture
def flight(sitl):
    """The module's vehicle, armed in MANUAL again if a test (or the GCS failsafe, while another
    test's SITL ran and nobody sent this one heartbeats) disarmed it."""
    sitl.drain()                       # what queued up while another test ran
    sitl.recv(("HEARTBEAT",), 3.0)
    if sitl.mode != "MANUAL":
        sitl.set_mode("MANUAL")
    if not sitl.armed:
        sitl.arm(timeout_s=30.0)
    return sitl


def vehicle_now_s(flight):
    """ArduSub's clock now [s]: what queued up unread is dropped first (ArduSub in lockstep runs
    ahead of a busy reader), so the ATTITUDE read next is a fresh one."""
    flight.drain()
    msg = flight.recv(("ATTITUDE",), 10.0)
    assert msg is not None, "ArduSub stopped sending ATTITUDE"
    return msg.time_boot_ms / 1000.0


def settle(flight, vehicle_s):
    """Keep reading until ArduSub's clock has moved ``vehicle_s`` on; returns the last ATTITUDE."""
    return flight.wait_time(vehicle_now_s(flight) + vehicle_s)


def outputs_after(flight, channels, vehicle_s=0.15):
    """Override ``channels`` (1..8); the motor outputs of the first SERVO_OUTPUT_RAW stamped
    ``vehicle_s`` or more of vehicle time after ArduSub reported ``channels`` as its RC input
    (RC_CHANNELS). Counted from when ArduSub had the override, not from when it was sent: ArduSub
    in lockstep runs ahead of a busy reader, and 0.15 s of vehicle time may pass before an
    override sent "now" reaches it."""
    flight.message_interval("RC_CHANNELS", 50.0)
    flight.drain()
    flight.override(channels)
    had_s = None
    while True:
        msg = flight.recv(("RC_CHANNELS", "SERVO_OUTPUT_RAW"), 10.0)
        assert msg is not None, "ArduSub stopped sending RC_CHANNELS / SERVO_OUTPUT_RAW"
        if msg.get_type() == "RC_CHANNELS":
            if had_s is None and [getattr(msg, "chan%d_raw" % i) for i in range(1, 7)] == list(channels[:6]):
                had_s = msg.time_boot_ms / 1000.0
        elif had_s is not None and msg.time_usec / 1e6 >= had_s + vehicle_s:
            return list(flight.servo_outputs[:8])
        flight.override(channels)      # keep the override fresh while waiting


def test_arming_right_after_boot_is_retried_until_accepted(flight):
    # ArduSub refuses to arm for 1-2 s after boot (PreArm); SitlFlight.arm retried.
    assert flight.armed and flight.mode == "MANUAL"
    assert flight.attempts_to_arm >= 1


def mixer_vectors(rng):
    """>= 50 RC vectors (channels 1-6): singles, saturating groups and random ones."""
    vectors = [[1500] * 6, [1900] * 6, [1100] * 6, [1900, 1900, 1100, 1100, 1900, 1900],
               [1100, 1900, 1500, 1900, 1100, 1500], [1500, 1500, 1500, 1900, 1900, 1900],
               [1900, 1900, 1900, 1500, 1500, 1500], [1700, 1300, 1850, 1250, 1600, 1150]]
    for ch in range(6):
        for pwm in (1100, 1300, 1700, 1900):
            v = [1500] * 6
            v[ch] = pwm
            vectors.append(v)
    vectors += [list(v) for v in rng.integers(1100, 1901, (26, 6))]
    return vectors


def mixing_mismatches(flight, vehicle, seed):
    """(rc, ArduSub's motor outputs, ours) for every vector of :func:`mixer_vectors` that differs."""
    mixer, t = vehicle.mixer(STOCK), vehicle.thrusters
    vectors = mixer_vectors(np.random.default_rng(seed))
    assert len(vectors) >= 50
    mismatches = []
    for rc in vectors:
        channels = [int(p) for p in rc] + [0, 0]
        got = outputs_after(flight, channels)[:vehicle.n_thrusters]
        want = motor_pwm_from_rc(channels, vehicle.rc_map, mixer, t.pwm_min_us, t.pwm_max_us)
        if got != want:
            mismatches.append((rc, got, want))
    flight.override([1500] * 6 + [0, 0])
    return mismatches


def test_manual_mixing_equals_our_algorithm_1_exactly(flight, vehicle):
    """Motor outputs of real ArduSub == brov2_hybrid.vehicle.mixers (stock, truncated), every motor, every vector."""
    mismatches = mixing_mismatches(flight, vehicle, 14)
    assert not mismatches, "ArduSub vs our Algorithm 1 (rc, ArduSub, ours): %s" % mismatches[:5]


def test_six_thruster_vectored_frame_mixing_equals_ours(ardusub_binary):
    """FRAME_CONFIG 1 (the 6-thruster BlueROV2): ArduSub sums per motor and limits motors 1-4's
    forward command while heaving (output_armed_stabilizing_vectored); ours must agree exactly."""
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    vehicle = load_vehicle("bluerov2")
    f = armed_flight(vehicle, ardusub_binary)
    try:
        assert int(f.get_param("FRAME_CONFIG")) == 1
        mismatches = mixing_mismatches(f, vehicle, 6)
        assert not mismatches, "ArduSub vs ours, vectored frame (rc, ArduSub, ours): %s" % mismatches[:5]
    finally:
        f.close()


def test_all_channels_full_saturate_to_the_truncated_value(flight):
    # The measured case of issue 14: all channels 1900 -> 1366 on a Heavy's motors, not 1367.
    got = outputs_after(flight, [1900] * 6 + [0, 0])
    flight.override([1500] * 6 + [0, 0])
    assert 1366 in got and 1367 not in got


def test_manual_control_gives_our_simulators_channels_and_motors(flight, vehicle):
    """MANUAL_CONTROL -> RC channels and motors: ArduSub == our simulator's joystick transform."""
    fw = load_firmware_config()
    gain = joystick_gain(float(flight.get_param("JS_GAIN_DEFAULT")))
    thr_gain = float(flight.get_param("JS_THR_GAIN"))
    assert (gain, thr_gain) == (pytest.approx(joystick_gain(fw.js_gain_default)), pytest.approx(fw.js_thr_gain))
    flight.message_interval("RC_CHANNELS", 20.0)
    flight.override([0] * 8)  # release: MANUAL_CONTROL drives the channels
    settle(flight, 0.1)
    mixer = vehicle.mixer(STOCK)
    t = vehicle.thrusters
    inputs = [(0, 0, 500, 0), (1000, 0, 500, 0), (-1000, 0, 500, 0), (0, 1000, 500, 0), (0, -1000, 500, 0),
              (0, 0, 1000, 0), (0, 0, 0, 0), (0, 0, 500, 1000), (0, 0, 500, -1000), (500, -300, 700, 250),
              (-700, 800, 200, -900), (1000, 1000, 1000, 1000), (-1000, -1000, 0, -1000)]
    wrong = []
    for x, y, z, r in inputs:
        want = manual_control_channels(x, y, z, r, gain, thr_gain)
        for _ in range(4):
            flight.link.mav.manual_control_send(flight.link.target_system, x, y, z, r, 0)
            settle(flight, 0.05)
        rc = flight.recv(("RC_CHANNELS",), 5.0)
        got_rc = [getattr(rc, "chan%d_raw" % i) for i in range(1, 7)]
        got_motors = list(flight.servo_outputs[:vehicle.n_thrusters])
        want_motors = motor_pwm_from_rc(want, vehicle.rc_map, mixer, t.pwm_min_us, t.pwm_max_us)
        if got_rc != list(want[:6]) or got_motors != want_motors:
            wrong.append(((x, y, z, r), got_rc, list(want[:6]), got_motors, want_motors))
    flight.link.mav.manual_control_send(flight.link.target_system, 0, 0, 500, 0, 0)
    assert not wrong, wrong[:3]


def test_override_is_released_after_rc_override_time(flight):
    """ArduSub keeps the last override RC_OVERRIDE_TIME [s] of vehicle time, then neutral."""
    hold_s = float(flight.get_param("RC_OVERRIDE_TIME"))
    assert 0 < hold_s <= 1.0, "params/ardusub_sitl.parm sets RC_OVERRIDE_TIME 1 (README 'Safety')"
    yaw = [1500, 1500, 1500, 1700, 1500, 1500, 0, 0]
    moved = outputs_after(flight, yaw)
    assert moved[:4] != [1500] * 4
    stop = flight.recv(("ATTITUDE",), 5.0).time_boot_ms / 1000.0
    released_at = None
    while released_at is None:
        msg = flight.recv(("ATTITUDE",), 5.0)
        t = msg.time_boot_ms / 1000.0
        if flight.servo_outputs[:8] == [1500] * 8:
            released_at = t
        assert t - stop < hold_s + 2.0, "outputs still %s %.1f s after the last override" % (flight.servo_outputs, t - stop)
    assert hold_s - 0.1 <= released_at - stop <= hold_s + 0.3


def test_signing_with_ardupilots_own_implementation(flight):
    """Keyed by SETUP_SIGNING (our mavlink_signing), ArduSub takes signed overrides and drops unsigned ones.

    ArduPilot facts this relies on (libraries/GCS_MAVLink/GCS_Signing.cpp): handle_setup_signing
    refuses a key while armed ("Won't setup signing when armed"), and accept_unsigned_callback
    always accepts unsigned frames on MAVLINK_COMM_0 (SERIAL0, "assumed to be secure": USB on a
    flight controller, TCP 5760 in SITL). So the vehicle is keyed disarmed, and the check runs
    on SERIAL1 (TCP 5762 + 10 N), as a companion computer's link would be.
    """
    from pymavlink import mavutil
    key = mavlink_signing.key_from_passphrase("brov2 test key")
    main = flight.link
    flight.disarm()
    mavlink_signing.send_setup_signing(main, main.target_system, main.target_component, key)
    settle(flight, 0.2)
    serial1 = mavutil.mavlink_connection("tcp:127.0.0.1:%d" % (flight.sitl.mavlink_port + 2),
                                         source_system=255, source_component=191, autoreconnect=False)

    def serial1_outputs(channels):
        for _ in range(3):
            serial1.mav.rc_channels_override_send(main.target_system, main.target_component, *channels)
            settle(flight, 0.06)
        return list(flight.servo_outputs[:8])

    try:
        flight.arm(timeout_s=30.0)
        mavlink_signing.sign_connection(serial1, key)
        signed = serial1_outputs([1500, 1500, 1500, 1500, 1700, 1500, 0, 0])   # forward, signed
        assert signed[:4] != [1500] * 4, "a signed override must be accepted"
        serial1.mav.signing.sign_outgoing = False
        unsigned = serial1_outputs([1500, 1500, 1500, 1500, 1300, 1500, 0, 0])  # backward, unsigned
        assert unsigned == signed, "an unsigned override on SERIAL1 must be dropped once keyed"
        serial1.mav.signing.sign_outgoing = True
        back = serial1_outputs([1500, 1500, 1500, 1500, 1300, 1500, 0, 0])      # backward, signed
        assert back[:4] != signed[:4]
    finally:
        serial1.close()
        # An all-zero key with timestamp 0 switches signing off again (GCS_Signing.cpp load_signing_key).
        flight.override([1500] * 6 + [0, 0])
        flight.disarm()
        main.mav.setup_signing_send(main.target_system, main.target_component, bytes(32), 0)
        settle(flight, 0.2)
        flight.arm(timeout_s=30.0)


def test_gcs_heartbeat_loss_disarms_after_2_5_s(flight):
    """FS_GCS_ENABLE: no GCS HEARTBEAT for 2.5 s of vehicle time -> disarm (ArduSub 4.5, Sub::failsafe_gcs_check)."""
    assert flight.armed
    assert int(flight.get_param("FS_GCS_ENABLE")) != 0
    flight.override([1500] * 6 + [0, 0])
    silent_from = flight.recv(("ATTITUDE",), 5.0).time_boot_ms / 1000.0
    flight.go_silent()                 # the ground station goes quiet (and the physics stops waiting for it)
    disarmed_at = None
    while disarmed_at is None:
        msg = flight.recv(("ATTITUDE", "HEARTBEAT"), 5.0)
        if msg.get_type() == "ATTITUDE":
            t = msg.time_boot_ms / 1000.0
            assert t - silent_from < 6.0, "still armed %.1f s after the last GCS heartbeat" % (t - silent_from)
        elif not flight.armed:
            disarmed_at = flight.recv(("ATTITUDE",), 5.0).time_boot_ms / 1000.0
    assert 2.4 <= disarmed_at - silent_from <= 3.6
    if disarmed_at > 30.0:
        # Sub::failsafe_gcs_check warns at most every 30 s from boot (last_gcs_warn_ms starts at 0), so
        # on a vehicle up for less than 30 s the disarm comes without the text
        assert any("heartbeat" in text.lower() for text in flight.statustext), flight.statustext[-5:]


def test_yaw_step_through_the_ros_pipeline_on_real_ardusub(tmp_path, ardusub_binary):
    """rostest test/ardusub/yaw_step_ardusub.test: firmware told as stock, settles, agrees with in-process."""
    import subprocess
    import sys
    from brov2_hybrid.sim.ardusub_sitl import free_instance
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    env = dict(os.environ, ROS_HOME=str(tmp_path), ROS_LOG_DIR=str(tmp_path / "log"))
    test_file = os.path.join(repo, "test", "ardusub", "yaw_step_ardusub.test")
    done = subprocess.run(["rostest", "--text", test_file, "instance:=%d" % free_instance()],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=300, env=env)
    summary = [line for line in done.stdout.splitlines()
               if "yaw step:" in line or "SUMMARY" in line or "FAIL" in line or "ERROR" in line]
    sys.stdout.write("\n".join(summary) + "\n")
    assert done.returncode == 0, done.stdout[-4000:]
    assert "* RESULT: SUCCESS" in done.stdout


class _NeutralPilot(object):
    """Holds every channel at neutral, taking 3 ms of wall time to answer each ATTITUDE (the hybrid's
    law in Python on a busy machine; lockstep ArduSub at speedup 50 runs 0.15 s meanwhile)."""

    mode = "MANUAL"
    omega_d_rad_s = float("nan")
    depth_setpoint_m = float("nan")

    def on_desired(self, t_s, eta2d):
        pass

    def on_depth(self, t_s, depth_m):
        pass

    def tick(self, flight, t_s, eta2d, u_lin, eta2, nu2):
        time.sleep(0.003)
        flight.override([1500] * 6 + [0, 0])
        return np.zeros(6), np.zeros(6), {ch: 1500 for ch in range(1, 7)}


def test_a_pilot_in_this_process_has_no_more_loop_delay_than_its_placement(flight):
    """fly() paces lockstep ArduSub by the newest ATTITUDE the pilot has answered: the vehicle's clock
    is at most pace_margin_s past an ATTITUDE's stamp when the pilot reads it, so its command arrives
    no later than that (with the old pace, 0.1 s past the newest attitude read, the hybrid flew the
    head-to-head with up to 0.1 s more delay than its placement)."""
    from brov2_hybrid.analysis.ardusub_fly import fly, load_pace_margin_s
    from brov2_hybrid.dive.dive_csv import Dive
    flight.message_interval("ATTITUDE", 50.0)
    t = np.arange(0.0, 10.0, 0.02)
    dive = Dive(t_s=t, eta2d_rad=np.zeros((t.size, 3)), u_linear=np.zeros((t.size, 3)), source="still")
    log, _ = fly(flight, _NeutralPilot(), dive)
    lag = np.asarray(log["reader_lag_s"])
    margin = load_pace_margin_s()
    print("reader lag [s, vehicle time]: median %.4f, 95th pct %.4f, max %.4f (margin %.3f); pace time-outs %d"
          % (np.median(lag), np.percentile(lag, 95), lag.max(), margin, flight.sitl.physics.pace_timeouts))
    assert len(lag) > 400
    assert np.median(lag) <= margin + 0.0025      # a physics step of 400 Hz over the margin


def test_between_flights_the_clock_waits_for_a_ground_station_that_does_not_read(flight):
    """SitlFlight paces the whole session by its reader, not only a flight: while this process does not read
    (set-up code between flights, a busy machine), lockstep ArduSub's clock stays within one ATTITUDE
    period plus pace_margin_s of the newest ATTITUDE read, so what it sends next reaches ArduSub at a
    vehicle time set by what it read. Unpaced, the clock ran on until the ground station's heartbeat gate
    held it (JsonPhysics.gcs_max_gap_s past the last heartbeat: a second of vehicle time)."""
    physics = flight.sitl.physics
    vehicle_now_s(flight)
    read_s = flight.newest_attitude_s
    time.sleep(0.5 * physics.pace_timeout_s)          # not reading, for less than the pace's time-out
    lead = physics.plant.t_s - read_s
    print("vehicle clock %.4f s past the newest ATTITUDE read after %.1f s of wall time unread (bound %.4f s)"
          % (lead, 0.5 * physics.pace_timeout_s, physics.max_lead_s))
    assert lead <= physics.max_lead_s + 0.0025        # a 400 Hz physics step over the lead

