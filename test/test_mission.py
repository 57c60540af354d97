"""The mission sequence (brov2_hybrid.mission.sequence) against a scripted vehicle (scripted_fcu.py):
connect, mode, arm, firmware latch, end of the dive, and every way the start stops (exit code and
the message that says why). The checks during the dive: test_mission_checks.py.
"""
import math
import re
import numpy as np
import pytest
from brov2_hybrid.mission import exit_codes as ec
from brov2_hybrid.mission import sequence as ms
from brov2_hybrid.mission import interfaces as mio
from brov2_hybrid.link.override import OverrideVerifier
from brov2_hybrid.vehicle.firmware_detector import FirmwareDetector

from scripted_fcu import ScriptedFcu, make_mission, mission_settings, rc_map  # noqa: F401  (fixtures)


def test_auto_firmware_engages_once_told_then_ends_the_dive(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map)
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
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="stock"), firmware="stock")
    assert mission.run() == ec.EXIT_OK
    assert io.time_of("engaged", True) == pytest.approx(io.time_of("arm", True) + 0.1, abs=2 * ms.POLL_S)
    assert io.published("firmware") == [("firmware", "stock")]
    assert any(t.startswith("motor outputs confirm firmware stock") for t in io.texts(mio.INFO))


def test_without_exit_at_end_it_flies_the_next_dive_until_shutdown(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="stock", exit_at_end=False, disarm_at_end=False),
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
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="stock"), firmware="stock", override_time_s=value)
    assert mission.run() == ec.EXIT_OK
    assert text in io.texts(level)
    (t_read, name), = io.params_read
    assert name == "RC_OVERRIDE_TIME" and io.connect_at_s <= t_read <= io.time_of("arm", True)
    if level == mio.INFO:
        assert not io.texts(mio.WARN)


def test_no_vehicle(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, connect_at_s=math.inf)
    assert mission.run() == ec.EXIT_NO_VEHICLE
    assert io.t == pytest.approx(30.0, abs=ms.POLL_S)
    assert io.texts(mio.FATAL) == ["no vehicle connected within 30 s (check fcu_url and that the simulator / "
                                  "vehicle is running)"]
    assert io.events == []                                  # no request, nothing engaged


def test_shutdown_while_waiting_for_the_vehicle_says_so_not_the_timeout(vehicle, rc_map):
    """Ctrl-C 6 s into the 30 s wait: 'shut down after 6.0 s', never 'within 30 s'."""
    mission, io = make_mission(vehicle, rc_map, connect_at_s=math.inf)
    io.shutdown_at_s = 6.0
    assert mission.run() == ec.EXIT_SHUTDOWN
    assert io.t == pytest.approx(6.0, abs=ms.POLL_S)
    assert io.texts(mio.WARN) == ["shut down after 6.0 s while waiting for the vehicle (none connected yet)"]
    assert io.texts(mio.FATAL) == [] and io.events == []


def test_shutdown_while_setting_the_mode_or_arming_says_so(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, accepts_mode=False)
    io.shutdown_at_s = 7.0
    assert mission.run() == ec.EXIT_SHUTDOWN
    assert io.texts(mio.WARN) == ["shut down after 7.0 s while setting mode MANUAL"] and not io.texts(mio.FATAL)
    mission, io = make_mission(vehicle, rc_map, prearm_until_s=math.inf)
    io.shutdown_at_s = 3.0
    assert mission.run() == ec.EXIT_SHUTDOWN
    # told at the end of the retry pause it was in (arm_retry_wait_s 1 s), no request after
    assert re.match(r"shut down after (3\.\d) s while arming \(3 attempts in", io.texts(mio.WARN)[-1]), io.texts(mio.WARN)
    assert len([e for e in io.events if e[1] == "arm"]) == 3
    assert not io.texts(mio.FATAL)


def test_shutdown_during_the_dive_says_the_dive_did_not_finish(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="stock"), firmware="stock", dive_s=30.0)
    io.shutdown_at_s = 10.0
    assert mission.run() == ec.EXIT_SHUTDOWN
    assert io.texts(mio.WARN)[-1] == "shut down after 10.0 s while the dive was running (not finished)"
    assert not any("dive finished" in t for t in io.texts(mio.INFO))


def test_mode_never_entered(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, accepts_mode=False)
    assert mission.run() == ec.EXIT_NO_VEHICLE
    assert [w for _, w, _ in io.events] == ["set_mode"] * 3
    times = [t for t, _, _ in io.events]
    assert np.diff(times) == pytest.approx([5.0, 5.0], abs=ms.POLL_S)   # one command timeout each
    assert io.texts(mio.FATAL) == ["the vehicle did not enter mode MANUAL after 3 requests (it reports 'STABILIZE')"]


def test_arming_retries_name_each_failure_then_succeed(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, arm_replies=[None, mio.CommandReply(False, 4)])
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
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="stock"), firmware="stock", prearm_until_s=2.5)
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
    mission, io = make_mission(vehicle, rc_map, mission_settings(arm_timeout_s=4.0), prearm_until_s=math.inf,
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
    mission, io = make_mission(vehicle, rc_map)
    io.t = 1.0
    mission.on_statustext(2, "PreArm: old")
    io.t = 2.0
    for severity, text in [(6, "Arm: checks passed?"), (6, "plain info"), (4, "Battery low"),
                           (2, "PreArm: Battery 1 unhealthy"), (2, "PreArm: Battery 1 unhealthy")]:
        mission.on_statustext(severity, text)
    assert mission.vehicle_reasons(2.0) == ["Arm: checks passed?", "Battery low", "PreArm: Battery 1 unhealthy"]
    assert mission.vehicle_reasons(3.0) == []


# ---------------------------------------------------------------- placement onboard (docs/onboard.md)
class OnboardFcu(ScriptedFcu):
    """A vehicle running the on-board script: HYB_OMEGA_D exists (unless ``script`` is false) and the
    script says ``texts`` [(seconds after arming, text)] as the template's ``enter`` does."""

    def __init__(self, vehicle, rc_map, texts=(), script=True, **kw):
        super().__init__(vehicle, rc_map, firmware="quantitative", **kw)
        if script:
            self.params = {"HYB_OMEGA_D": 3.0}
        self.texts_due = list(texts)
        self.armed_at_s = None

    def _step(self):
        super()._step()
        if self.armed and self.armed_at_s is None:
            self.armed_at_s = self.t
        while self.texts_due and self.armed_at_s is not None and self.t >= self.armed_at_s + self.texts_due[0][0]:
            self.mission.on_statustext(6, self.texts_due.pop(0)[1])


def onboard_mission(vehicle, rc_map, **fcu):
    io = OnboardFcu(vehicle, rc_map, **fcu)
    settings = mission_settings(placement="onboard", script_param="HYB_OMEGA_D")
    io.mission = ms.Mission(settings, OverrideVerifier(3.0, 20, rc_map.neutral_us),
                            FirmwareDetector(vehicle, rc_map, 3.0, 3, 1.0), io)
    return io.mission, io


@pytest.mark.parametrize("active_after_arming_s", [0.0, 0.5, 4.0])
def test_onboard_reads_the_scripts_parameter_engages_at_arming_and_needs_its_active(vehicle, rc_map,
                                                                                  active_after_arming_s):
    mission, io = onboard_mission(vehicle, rc_map, texts=[(active_after_arming_s, "brov2_hybrid: ACTIVE")])
    assert mission.run() == ec.EXIT_OK
    assert [name for _, name in io.params_read] == ["HYB_OMEGA_D"]           # not RC_OVERRIDE_TIME
    assert io.time_of("engaged", True) == pytest.approx(io.time_of("arm", True) + 0.1, abs=2 * ms.POLL_S)
    assert io.published("firmware") == []                                    # no firmware to tell on board
    assert "the on-board script flies the vehicle ('brov2_hybrid: ACTIVE')" in io.texts(mio.INFO)
    assert not io.texts(mio.FATAL)


def test_onboard_without_the_script_stops_before_arming(vehicle, rc_map):
    mission, io = onboard_mission(vehicle, rc_map, script=False)
    assert mission.run() == ec.EXIT_FIRMWARE
    assert ("arm", True) not in [(w, v) for _, w, v in io.events]
    fatal = io.texts(mio.FATAL)
    assert len(fatal) == 1 and "no parameter HYB_OMEGA_D" in fatal[0] and "not running" in fatal[0]
    assert len(io.params_read) > 5                                            # retried while the script may load


def test_onboard_script_that_never_takes_the_vehicle_stops_the_run(vehicle, rc_map):
    mission, io = onboard_mission(vehicle, rc_map, dive_s=30.0,
                                  texts=[(0.0, "brov2_hybrid: LOST_NEUTRAL: no desired attitude fo")])
    assert mission.run() == ec.EXIT_OVERRIDE_IGNORED
    fatal = io.texts(mio.FATAL)
    assert len(fatal) == 1 and "did not take the vehicle" in fatal[0] and "LOST_NEUTRAL" in fatal[0]
    assert io.published("release")[-1] == ("release", True) and io.events[-2][1:] == ("arm", False)
