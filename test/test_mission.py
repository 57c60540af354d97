"""The mission sequence (brov2_hybrid.node_logic.mission) against a scripted vehicle on a simulated
wall clock: connect, mode, arm, firmware latch, override check, end of the dive, and
every way it stops (exit code and the message that says why).

The vehicle turns the overrides it receives into motor outputs through ArduSub's manual
chain (mixers.motor_pwm_from_rc, as the simulator's firmware) with the mixer of the
firmware it runs; the real OverrideVerifier and FirmwareDetector judge them.
"""
import math
import re

import numpy as np
import pytest

from brov2_hybrid.node_logic import exit_codes as ec
from brov2_hybrid.node_logic import mission as ms
from brov2_hybrid.node_logic import mission_io as mio
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.vehicle.firmware_detector import FirmwareDetector
from brov2_hybrid.vehicle.firmware_output import FIRMWARE_CHOICES
from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc
from brov2_hybrid.node_logic.node_params import ParamReader, load_node_params
from brov2_hybrid.link.override import OverrideVerifier
from brov2_hybrid.vehicle.rc import load_rc_map

STEP_S = 0.02           # the scripted vehicle's and autopilot's period [s]


@pytest.fixture(scope="module")
def rc_map():
    return load_rc_map()


def _settings(**changes):
    values = dict(mode="MANUAL", connect_timeout_s=30.0, max_override_time_s=1.0, command_timeout_s=5.0, end_hold_s=1.0,
                  disarm_at_end=True, exit_at_end=True, mode_attempts=3, arm_timeout_s=20.0, arm_retry_wait_s=1.0,
                  release_wait_s=0.3, firmware="auto", firmware_timeout_s=6.0)
    values.update(changes)
    return mio.MissionSettings(**values)


class ScriptedFcu(mio.MissionIO):
    """A vehicle and autopilot on a simulated clock, advanced by the mission's sleeps.

    It connects at ``connect_at_s``, enters a requested mode ``mode_delay_s`` later
    (unless ``accepts_mode`` is false), answers arming requests with ``arm_replies`` in
    turn (then success) and is armed 0.1 s after a successful one (unless
    ``arm_takes_effect`` is false). Before ``prearm_until_s`` it refuses arming as ArduSub
    does after boot: result 4 (MAV_RESULT_FAILED) and a STATUSTEXT ``prearm_text``. Armed, the autopilot sends a small random override
    each step and the vehicle outputs what its ``firmware`` makes of it ("ignores": motors
    stay neutral, a wrong SYSID_MYGCS; "unknown": twice stock's deflection). The dive
    ends ``dive_s`` after engagement.
    """

    def __init__(self, vehicle, rc_map, firmware="quantitative", connect_at_s=0.5, mode_delay_s=0.2,
                 accepts_mode=True, arm_replies=(), arm_takes_effect=True, dive_s=10.0, disarm_at_s=math.inf,
                 prearm_until_s=0.0, prearm_text="PreArm: Battery 1 unhealthy", override_time_s=1.0,
                 sends=("attitude", "outputs")):
        self.vehicle, self.rc_map, self.firmware = vehicle, rc_map, firmware
        self.connect_at_s, self.mode_delay_s, self.accepts_mode = connect_at_s, mode_delay_s, accepts_mode
        self.arm_replies, self.arm_takes_effect = list(arm_replies), arm_takes_effect
        self.dive_s, self.disarm_at_s = dive_s, disarm_at_s
        self.prearm_until_s, self.prearm_text = prearm_until_s, prearm_text
        self.params = {"RC_OVERRIDE_TIME": override_time_s}     # None: the read fails
        self.sends = sends              # the streams the vehicle sends: attitude, outputs
        self.t = 0.0
        self.shutdown_at_s = math.inf
        self.connected, self.armed, self.mode = False, False, "STABILIZE"
        self._pending = []              # (due s, attribute, value)
        self.events = []                # (t, what, value): requests and publications
        self.logs = []                  # (level, text)
        self.engaged_at_s = None
        self.dives_done = 0
        self.rng = np.random.default_rng(7)
        self.mission = None

    # MissionIO
    def now_s(self):
        return self.t

    def is_shutdown(self):
        return self.t >= self.shutdown_at_s

    def sleep(self, seconds):
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t = min(self.t + STEP_S, end)
            self._step()
        self.t = max(self.t, end)           # a sleep shorter than 1 ns still passes time

    def set_mode(self, mode):
        self.events.append((self.t, "set_mode", mode))
        if self.accepts_mode:
            self._pending.append((self.t + self.mode_delay_s, "mode", mode))

    def arm(self, armed):
        self.events.append((self.t, "arm", armed))
        if armed and self.t < self.prearm_until_s:
            self.mission.on_statustext(6, "Arming motors")              # said, but not a reason (no prefix, INFO)
            self.mission.on_statustext(6, "an unrelated INFO text")
            self.mission.on_statustext(2, self.prearm_text)             # MAV_SEVERITY_CRITICAL, as check_failed
            return mio.CommandReply(False, 4)
        reply = self.arm_replies.pop(0) if self.arm_replies else mio.CommandReply(True, 0)
        if reply is not None and reply.success and self.arm_takes_effect:
            self._pending.append((self.t + 0.1, "armed", armed))
        return reply

    def get_param(self, name):
        self.params_read = getattr(self, "params_read", []) + [(self.t, name)]
        return self.params.get(name)

    def publish_engaged(self, engaged):
        self.events.append((self.t, "engaged", engaged))
        self.engaged_at_s = self.t if engaged else None

    def publish_release(self, release):
        self.events.append((self.t, "release", release))

    def publish_firmware(self, firmware):
        self.events.append((self.t, "firmware", firmware))

    def log(self, level, text):
        self.logs.append((level, text))

    # the vehicle
    def _outputs(self, channels):
        if self.firmware == "ignores":
            return [1500] * 8
        lo, hi = self.vehicle.thrusters.pwm_min_us, self.vehicle.thrusters.pwm_max_us
        mixer = self.vehicle.mixer("stock" if self.firmware == "unknown" else self.firmware)
        pwm = motor_pwm_from_rc(channels, self.rc_map, mixer, lo, hi)
        return [1500 + 2 * (p - 1500) for p in pwm] if self.firmware == "unknown" else pwm

    def _step(self):
        if not self.connected and self.t >= self.connect_at_s:
            self.connected = True
        for item in [p for p in self._pending if p[0] <= self.t]:
            self._pending.remove(item)
            setattr(self, item[1], item[2])
        if self.t >= self.disarm_at_s:
            self.armed = False
        self.mission.on_state(self.connected, self.armed, self.mode)
        if self.armed:
            channels = self.rc_map.channel_array_from_u(self.rng.uniform(-0.2, 0.2, 6), 18, 65535)
            self.mission.on_override(channels)
            if "attitude" in self.sends:
                self.mission.on_attitude()
            if "outputs" in self.sends:
                self.mission.on_outputs(self._outputs(channels))
        if self.engaged_at_s is not None and self.t >= self.engaged_at_s + self.dive_s:
            self.dives_done += 1
            self.engaged_at_s = None
            self.mission.on_dive_done(True)

    # reading the record
    def published(self, *whats):
        return [(what, value) for _, what, value in self.events if what in whats]

    def time_of(self, what, value):
        return next(t for t, w, v in self.events if w == what and v == value)

    def texts(self, level):
        return [text for lvl, text in self.logs if lvl == level]


def _mission(vehicle, rc_map, settings=None, **fcu):
    io = ScriptedFcu(vehicle, rc_map, **fcu)
    verifier = OverrideVerifier(3.0, 20, rc_map.neutral_us)
    detector = FirmwareDetector(vehicle, rc_map, 3.0, 3, 1.0)
    io.mission = ms.Mission(settings or _settings(), verifier, detector, io)
    return io.mission, io


# ---------------------------------------------------------------- a dive flown to its end
def test_auto_firmware_engages_once_told_then_ends_the_dive(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map)
    assert mission.run() == ec.EXIT_OK
    assert io.published("firmware", "engaged", "release") == [
        ("firmware", "quantitative"), ("engaged", True), ("release", True), ("engaged", False)]
    assert [(w, v) for _, w, v in io.events if w in ("set_mode", "arm")] == [
        ("set_mode", "MANUAL"), ("arm", True), ("arm", False)]
    armed_s = io.time_of("arm", True)
    assert armed_s >= io.connect_at_s + io.mode_delay_s          # armed only once in the mode
    assert io.time_of("engaged", True) > armed_s                   # the dive waits for the firmware
    # end: hold 1 s after the dive, release, 0.3 s later disarm
    done_s = io.time_of("engaged", True) + io.dive_s
    assert io.time_of("release", True) == pytest.approx(done_s + 1.0, abs=2 * ms.POLL_S)
    assert io.time_of("arm", False) - io.time_of("release", True) == pytest.approx(0.3, abs=1e-9)
    assert "RC override reaches the vehicle (motor outputs follow it)" in io.texts(mio.INFO)
    assert any(t.startswith("the vehicle runs quantitative firmware") for t in io.texts(mio.INFO))
    assert "disarmed" in io.texts(mio.INFO) and not io.texts(mio.FATAL) and not io.texts(mio.ERROR)


def test_configured_firmware_engages_at_arming_and_is_confirmed(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(firmware="stock"), firmware="stock")
    assert mission.run() == ec.EXIT_OK
    assert io.time_of("engaged", True) == pytest.approx(io.time_of("arm", True) + 0.1, abs=2 * ms.POLL_S)
    assert io.published("firmware") == [("firmware", "stock")]
    assert any(t.startswith("motor outputs confirm firmware stock") for t in io.texts(mio.INFO))


def test_without_exit_at_end_it_flies_the_next_dive_until_shutdown(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(firmware="stock", exit_at_end=False, disarm_at_end=False),
                           firmware="stock", dive_s=2.0)
    io.shutdown_at_s = 20.0
    assert mission.run() == ec.EXIT_OK
    assert io.t == pytest.approx(20.0, abs=ms.POLL_S)
    assert io.published("release").count(("release", True)) == 1     # the one dive, then idle until shutdown
    assert ("arm", False) not in [(w, v) for _, w, v in io.events]      # disarm_at_end false


# ---------------------------------------------------------------- stops, with the reason
@pytest.mark.parametrize("value, level, text", [
    (1.0, mio.INFO, "the vehicle's RC_OVERRIDE_TIME is 1 s"),
    (0.5, mio.INFO, "the vehicle's RC_OVERRIDE_TIME is 0.5 s"),
    (3.0, mio.WARN, "the vehicle's RC_OVERRIDE_TIME is 3 s: if this autopilot's link dies (e.g. kill -9 of the "
                   "bridge or mavros_node) the motors keep the last override for 3 s; set RC_OVERRIDE_TIME <= 1 s"),
    (-1.0, mio.WARN, "the vehicle's RC_OVERRIDE_TIME is -1: overrides never expire, so if this autopilot's link dies "
                    "(e.g. kill -9 of the bridge or mavros_node) the motors keep the last override until the "
                    "pilot-input failsafe; set RC_OVERRIDE_TIME <= 1 s"),
    (None, mio.WARN, "could not read the vehicle's RC_OVERRIDE_TIME: if this autopilot's link dies, the motors keep "
                    "the last override for that long (set it to <= 1 s)"),
])
def test_rc_override_time_is_read_and_a_long_one_warned(vehicle, rc_map, value, level, text):
    """kill -9 of the link process releases nothing: the vehicle holds our last override
    for RC_OVERRIDE_TIME (ArduSub's default 3 s). Read once connected, before arming."""
    mission, io = _mission(vehicle, rc_map, _settings(firmware="stock"), firmware="stock", override_time_s=value)
    assert mission.run() == ec.EXIT_OK
    assert text in io.texts(level)
    (t_read, name), = io.params_read
    assert name == "RC_OVERRIDE_TIME" and io.connect_at_s <= t_read <= io.time_of("arm", True)
    if level == mio.INFO:
        assert not io.texts(mio.WARN)


def test_no_vehicle(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, connect_at_s=math.inf)
    assert mission.run() == ec.EXIT_NO_VEHICLE
    assert io.t == pytest.approx(30.0, abs=ms.POLL_S)
    assert io.texts(mio.FATAL) == ["no vehicle connected within 30 s (check fcu_url and that the simulator / "
                                  "vehicle is running)"]
    assert io.events == []                                  # no request, nothing engaged


def test_shutdown_while_waiting_for_the_vehicle_says_so_not_the_timeout(vehicle, rc_map):
    """Ctrl-C 6 s into the 30 s wait: 'shut down after 6.0 s', never 'within 30 s'."""
    mission, io = _mission(vehicle, rc_map, connect_at_s=math.inf)
    io.shutdown_at_s = 6.0
    assert mission.run() == ec.EXIT_SHUTDOWN
    assert io.t == pytest.approx(6.0, abs=ms.POLL_S)
    assert io.texts(mio.WARN) == ["shut down after 6.0 s while waiting for the vehicle (none connected yet)"]
    assert io.texts(mio.FATAL) == [] and io.events == []


def test_shutdown_while_setting_the_mode_or_arming_says_so(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, accepts_mode=False)
    io.shutdown_at_s = 7.0
    assert mission.run() == ec.EXIT_SHUTDOWN
    assert io.texts(mio.WARN) == ["shut down after 7.0 s while setting mode MANUAL"] and not io.texts(mio.FATAL)
    mission, io = _mission(vehicle, rc_map, prearm_until_s=math.inf)
    io.shutdown_at_s = 3.0
    assert mission.run() == ec.EXIT_SHUTDOWN
    # told at the end of the retry pause it was in (arm_retry_wait_s 1 s), no request after
    assert re.match(r"shut down after (3\.\d) s while arming \(3 attempts in", io.texts(mio.WARN)[-1]), io.texts(mio.WARN)
    assert len([e for e in io.events if e[1] == "arm"]) == 3
    assert not io.texts(mio.FATAL)


def test_shutdown_during_the_dive_says_the_dive_did_not_finish(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(firmware="stock"), firmware="stock", dive_s=30.0)
    io.shutdown_at_s = 10.0
    assert mission.run() == ec.EXIT_SHUTDOWN
    assert io.texts(mio.WARN)[-1] == "shut down after 10.0 s while the dive was running (not finished)"
    assert not any("dive finished" in t for t in io.texts(mio.INFO))


def test_mode_never_entered(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, accepts_mode=False)
    assert mission.run() == ec.EXIT_NO_VEHICLE
    assert [w for _, w, _ in io.events] == ["set_mode"] * 3
    times = [t for t, _, _ in io.events]
    assert np.diff(times) == pytest.approx([5.0, 5.0], abs=ms.POLL_S)   # one command timeout each
    assert io.texts(mio.FATAL) == ["the vehicle did not enter mode MANUAL after 3 requests (it reports 'STABILIZE')"]


def test_arming_retries_name_each_failure_then_succeed(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, arm_replies=[None, mio.CommandReply(False, 4)])
    assert mission.run() == ec.EXIT_OK
    arms = [t for t, w, v in io.events if w == "arm" and v]
    assert np.diff(arms) == pytest.approx([1.0, 1.0], abs=1e-9)        # arm_retry_wait_s apart
    left = 20.0 - (arms[1] - arms[0])
    assert io.texts(mio.WARN) == [
        "arming attempt 1 failed (no reply from /mavros/cmd/arming), retrying (%.1f s left)" % left,
        "arming attempt 2 failed (refused by the vehicle, result 4), retrying (%.1f s left)" % (left - 1.0)]


def test_arming_refused_after_boot_is_retried_and_the_prearm_reason_told(vehicle, rc_map):
    """ArduSub refuses arming for 1-2 s after boot ("PreArm: Battery 1 unhealthy"): the
    mission keeps asking (1 s apart) and each warning quotes the vehicle's reason."""
    mission, io = _mission(vehicle, rc_map, _settings(firmware="stock"), firmware="stock", prearm_until_s=2.5)
    assert mission.run() == ec.EXIT_OK
    arms = [t for t, w, v in io.events if w == "arm" and v]
    assert len(arms) == 3 and arms[1] < 2.5 <= arms[2]                 # refused twice, armed on the third
    warnings = io.texts(mio.WARN)
    assert len(warnings) == 2
    for k, text in enumerate(warnings, 1):
        assert text.startswith("arming attempt %d failed (refused by the vehicle, result 4; the vehicle says: "
                               "PreArm: Battery 1 unhealthy)" % k), text
        assert "INFO" not in text and "Arming motors" not in text
    assert not io.texts(mio.FATAL)


def test_arming_gives_up_after_arm_timeout_s_with_the_last_reason(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(arm_timeout_s=4.0), prearm_until_s=math.inf,
                           prearm_text="PreArm: Compass not calibrated")
    assert mission.run() == ec.EXIT_NO_VEHICLE
    arms = [t for t, w, v in io.events if w == "arm" and v]
    assert arms[-1] - arms[0] == pytest.approx(4.0, abs=1e-9)          # asked until the timeout, 1 s apart
    assert len(arms) == 5
    assert io.texts(mio.WARN)[-1] == ("arming attempt 5 failed (refused by the vehicle, result 4; the vehicle says: "
                                     "PreArm: Compass not calibrated)")
    assert io.texts(mio.FATAL) == ["the vehicle did not arm within 4 s (5 attempts); last reason from the vehicle: "
                                  "PreArm: Compass not calibrated"]
    assert io.published("engaged", "release") == []


def test_vehicle_reasons_are_recent_severe_or_arming_texts_without_repeats(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map)
    io.t = 1.0
    mission.on_statustext(2, "PreArm: old")
    io.t = 2.0
    for severity, text in [(6, "Arm: checks passed?"), (6, "plain info"), (4, "Battery low"),
                           (2, "PreArm: Battery 1 unhealthy"), (2, "PreArm: Battery 1 unhealthy")]:
        mission.on_statustext(severity, text)
    assert mission.vehicle_reasons(2.0) == ["Arm: checks passed?", "Battery low", "PreArm: Battery 1 unhealthy"]
    assert mission.vehicle_reasons(3.0) == []


def test_arming_that_never_takes_effect_stops_the_run(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(arm_timeout_s=8.0), arm_takes_effect=False)
    assert mission.run() == ec.EXIT_NO_VEHICLE
    # each attempt waits command_timeout_s (5 s) for the armed state: two fit in 8 s
    assert io.texts(mio.WARN)[-1] == ("arming attempt 2 failed (accepted, but /mavros/state did not report "
                                     "armed within 5.0 s)")
    assert io.texts(mio.FATAL) == ["the vehicle did not arm within 8 s (2 attempts)"]
    assert io.published("engaged", "release") == []


def test_override_ignored_names_the_system_id_and_disarms(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, firmware="ignores")
    assert mission.run() == ec.EXIT_OVERRIDE_IGNORED
    fatal, = io.texts(mio.FATAL)
    assert "SYSID_MYGCS = 255" in fatal and "system_id 255" in fatal
    # the 3 s verification runs from the first override, before the 6 s firmware timeout
    assert io.time_of("release", True) - io.time_of("arm", True) == pytest.approx(0.1 + 3.0, abs=3 * ms.POLL_S)
    assert io.published("engaged", "release") == [("release", True), ("engaged", False)]
    assert io.events[-2][1:] == ("arm", False)


@pytest.mark.parametrize("sends, silent", [((), "no attitude (/mavros/imu/data"),
                                           (("attitude",), "no motor outputs (/mavros/rc/out"),
                                           (("outputs",), "no attitude (/mavros/imu/data")])
def test_telemetry_that_never_arrives_is_told_as_such_not_as_an_ignored_override(vehicle, rc_map, sends, silent):
    mission, io = _mission(vehicle, rc_map, _settings(telemetry_timeout_s=2.0), sends=sends)
    assert mission.run() == ec.EXIT_NO_TELEMETRY
    fatal, = io.texts(mio.FATAL)
    assert fatal.startswith("no telemetry: " + silent) and "SYSID_MYGCS" not in fatal
    assert "mavros_streams" in fatal
    # counted from armed (0.1 s after the request), before the 3 s override check could fail
    assert io.time_of("release", True) - io.time_of("arm", True) == pytest.approx(0.1 + 2.0, abs=3 * ms.POLL_S)
    assert io.events[-2][1:] == ("arm", False)


def test_the_no_telemetry_wait_counts_armed_and_connected_time_without_a_break(vehicle, rc_map):
    settings = _settings(telemetry_timeout_s=2.0)

    class Quiet(mio.MissionIO):
        def now_s(self):
            return 0.0

        def log(self, level, text):
            self.said = (level, text)

    io = Quiet()
    m = ms.Mission(settings, OverrideVerifier(3.0, 20, 1500), FirmwareDetector(vehicle, rc_map, 3.0, 3, 1.0), io)
    m.on_state(True, True, "MANUAL")
    assert m.check_telemetry(0.0) is None          # the wait starts
    assert m.check_telemetry(1.5) is None
    m.on_state(False, True, "MANUAL")              # link lost: the wait restarts when it is back
    assert m.check_telemetry(2.5) is None
    m.on_state(True, True, "MANUAL")
    assert m.check_telemetry(3.0) is None and m.check_telemetry(4.9) is None
    m.on_attitude()                                # heard once: heard for good
    m.on_outputs([1500] * 8)
    assert m.check_telemetry(5.1) is None
    m2 = ms.Mission(settings, OverrideVerifier(3.0, 20, 1500), FirmwareDetector(vehicle, rc_map, 3.0, 3, 1.0),
                    Quiet())
    m2.on_state(True, True, "MANUAL")
    m2.on_attitude()
    m2.check_telemetry(0.0)
    assert m2.check_telemetry(2.1) == ec.EXIT_NO_TELEMETRY
    assert m2.io.said[1].startswith("no telemetry: no motor outputs (/mavros/rc/out: SERVO_OUTPUT_RAW) arrived "
                                    "from the vehicle in 2.1 s armed and connected")


def test_streams_that_arrive_pass_the_telemetry_check(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(telemetry_timeout_s=2.0))
    assert mission.run() == ec.EXIT_OK and io.texts(mio.FATAL) == []


def test_an_override_check_without_any_motor_output_says_no_telemetry(vehicle, rc_map):
    # the telemetry check off: the override check itself tells "nothing arrived" from "stayed neutral"
    mission, io = _mission(vehicle, rc_map, _settings(firmware="stock"), sends=("attitude",))
    assert mission.run() == ec.EXIT_NO_TELEMETRY
    fatal, = io.texts(mio.FATAL)
    assert fatal.startswith("no motor outputs arrived from the vehicle (nothing on /mavros/rc/out) during the "
                            "3.0 s override check") and "SYSID_MYGCS" not in fatal


def test_configured_firmware_the_vehicle_does_not_run(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(firmware="quantitative"), firmware="stock")
    assert mission.run() == ec.EXIT_FIRMWARE
    fatal, = io.texts(mio.FATAL)
    assert "parameter 'firmware' is 'quantitative'" in fatal and "firmware:=stock" in fatal
    assert io.published("firmware") == []                    # a wrong firmware is never latched
    assert io.published("engaged", "release")[-2:] == [("release", True), ("engaged", False)]


def test_auto_without_a_verdict_times_out(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, firmware="unknown")
    assert mission.run() == ec.EXIT_FIRMWARE
    fatal, = io.texts(mio.FATAL)
    assert fatal.startswith("parameter 'firmware' is auto but the vehicle's motor outputs (/mavros/rc/out) "
                            "matched neither") and "set firmware:=stock or firmware:=quantitative" in fatal
    assert io.time_of("release", True) - io.time_of("arm", True) == pytest.approx(0.1 + 6.0, abs=3 * ms.POLL_S)
    assert "RC override reaches the vehicle (motor outputs follow it)" in io.texts(mio.INFO)
    assert ("engaged", True) not in io.published("engaged")


def test_a_disarmed_vehicle_is_reported_every_5_s(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(firmware="stock"), firmware="stock", dive_s=30.0,
                           disarm_at_s=5.0)
    io.shutdown_at_s = 17.0
    assert mission.run() == ec.EXIT_SHUTDOWN                            # stopped before the dive ended
    assert io.texts(mio.WARN)[:3] == ["the vehicle is not armed"] * 3    # at 5, 10 and 15 s


def test_failed_disarm_at_the_end_says_to_disarm_by_hand(vehicle, rc_map):
    mission, io = _mission(vehicle, rc_map, _settings(firmware="stock"), firmware="stock", dive_s=1.0)
    io.arm_replies = [mio.CommandReply(True, 0), mio.CommandReply(False, 4)]
    assert mission.run() == ec.EXIT_OK
    assert io.texts(mio.ERROR) == ["disarm failed; disarm the vehicle by hand"]


# ---------------------------------------------------------------- settings
def test_settings_from_autopilot_yaml():
    p = ParamReader(load_node_params("mission"), "mission")
    s = mio.MissionSettings.from_params(p, FIRMWARE_CHOICES)
    assert (s.mode, s.connect_timeout_s, s.arm_timeout_s, s.firmware) == (
        p.values["mode"], p.values["connect_timeout_s"], p.values["arm_timeout_s"], p.values["firmware"])
    with pytest.raises(ParameterError, match=r"mission ~firmware: expected one of \['auto', 'quantitative', 'stock'\]"):
        mio.MissionSettings.from_params(ParamReader(load_node_params("mission", {"firmware": "px4"}), "mission"),
                                       FIRMWARE_CHOICES)
    with pytest.raises(ParameterError, match=r"mission ~arm_timeout_s: expected"):
        mio.MissionSettings.from_params(ParamReader(load_node_params("mission", {"arm_timeout_s": 0}), "mission"),
                                       FIRMWARE_CHOICES)


# ---------------------------------------------------------------- the exit code for make run
def test_exit_code_file_round_trip(tmp_path):
    path = str(tmp_path / "mission_exit_code")
    assert ec.read_exit_code(path) is None                  # no file: no code
    ec.write_exit_code(path, ec.EXIT_FIRMWARE)
    assert open(path).read() == "5\n" and ec.read_exit_code(path) == 5
    ec.write_exit_code(path, ec.EXIT_OK)                     # replaced, not appended
    assert ec.read_exit_code(path) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["mission_exit_code"]   # no temporary left
    ec.write_exit_code("", 3)                                # "" = nowhere
    (tmp_path / "junk").write_text("five")
    assert ec.read_exit_code(str(tmp_path / "junk")) is None


def test_every_exit_code_has_a_meaning():
    codes = {ec.EXIT_OK, ec.EXIT_CONFIG, ec.EXIT_NO_VEHICLE, ec.EXIT_OVERRIDE_IGNORED, ec.EXIT_FIRMWARE,
             ec.EXIT_NO_TELEMETRY, ec.EXIT_NODE_DIED, ec.EXIT_SHUTDOWN}
    assert set(ec.EXIT_MEANINGS) == codes and len(codes) == 8


def test_a_dead_required_node_is_read_from_roslaunch_output():
    # as roslaunch 1.15's process monitor prints it (roslaunch/pmon.py, Process.get_exit_description)
    text = ("[mission-9] ...\n================================================================================"
            "REQUIRED process [mavros-3] has died!\nprocess has died [pid 4242, exit code -9, cmd "
            "/root/ws/devel/lib/mavros/mavros_node __name:=mavros].\nlog file: /root/.ros/log/x/mavros-3*.log\n"
            "Initiating shutdown!\n")
    assert ec.required_node_died(text) == ("mavros", -9)
    assert ec.required_node_died("REQUIRED process [csv_reader-7] has died!\nprocess has finished cleanly\n"
                                 "process has died [pid 5, exit code 1, cmd x].") == ("csv_reader", 1)
    assert ec.required_node_died("[mavros-3] process has died [pid 4242, exit code -9, cmd x]") is None
