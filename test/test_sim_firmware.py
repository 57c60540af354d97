"""The simulated ArduSub firmware (brov2_hybrid.sim.firmware) on its own: parameters, arming and
mode, RC override semantics and time-outs, the pilot-input failsafe, the command delay.
MANUAL_CONTROL and the GCS failsafe: test_sim_firmware_gcs.py.
"""
import pytest
from brov2_hybrid.link.ardusub import CHAN_NOCHANGE, CHAN_RELEASE, MANUAL, MODES

from firmware_bench import GCS, NEUTRAL, channels, expected_pwm, firmware  # noqa: F401  (fixtures)


def test_defaults_match_ardusub(vehicle):
    fw = firmware(vehicle)
    p = fw.params
    assert p.get("SYSID_MYGCS") == 255 and p.get("RC_OVERRIDE_TIME") == 3.0
    assert p.get("FS_PILOT_INPUT") == 2 and p.get("FS_PILOT_TIMEOUT") == 3.0
    assert p.get("MOT_MIXER") == 0 and fw.mode == MANUAL and not fw.armed


def test_disarmed_motors_are_neutral_whatever_the_input(vehicle):
    fw = firmware(vehicle)
    fw.handle_rc_override(0.0, GCS, channels(ch4=1900, ch5=1900))
    assert fw.update(0.0) == NEUTRAL


def test_armed_manual_motors_follow_algorithm_2(vehicle):
    fw = firmware(vehicle)
    fw.set_armed(0.0, True)
    fw.handle_rc_override(0.0, GCS, channels(ch4=1600, ch5=1700, ch3=1450))
    rc = [1500, 1500, 1450, 1600, 1700, 1500, 1500, 1500]
    assert fw.update(0.01) == expected_pwm(vehicle, "quantitative", rc)
    assert fw.params.set("MOT_MIXER", 1)[0]
    assert fw.update(0.02) == expected_pwm(vehicle, "stock", rc)


def test_release_and_no_change_semantics(vehicle):
    fw = firmware(vehicle)
    fw.handle_rc_override(0.0, GCS, channels(ch4=1600, ch5=1700))
    fw.handle_rc_override(0.1, GCS, channels(ch4=CHAN_RELEASE))        # ch5 unchanged
    rc = fw.rc_channels(0.1)
    assert rc[3] == 1500 and rc[4] == 1700
    values = [CHAN_NOCHANGE] * 8 + [0] * 9 + [1234]                    # ch18 set, 9-17: 0 = no change
    fw.handle_rc_override(0.2, GCS, values)
    fw.handle_rc_override(0.3, GCS, [CHAN_NOCHANGE] * 8 + [0] * 10)    # 0 on ch18 does not release
    assert fw.rc_channels(0.3)[17] == 1234


def test_override_from_another_system_is_ignored(vehicle):
    fw = firmware(vehicle)
    fw.set_armed(0.0, True)
    assert not fw.handle_rc_override(0.0, 1, channels(ch4=1900))
    assert fw.update(0.0) == NEUTRAL
    assert fw.counters["override_rejected_sysid"] == 1
    assert fw.params.set("SYSID_MYGCS", 1)[0]
    assert fw.handle_rc_override(0.1, 1, channels(ch4=1900))
    assert not fw.handle_rc_override(0.1, GCS, channels(ch4=1100))
    assert fw.rc_channels(0.1)[3] == 1900


@pytest.mark.parametrize("timeout, expect_live_at_10s", [(3.0, False), (-1.0, True)])
def test_override_times_out_per_channel(vehicle, timeout, expect_live_at_10s):
    fw = firmware(vehicle, rc_override_time_s=timeout, fs_pilot_input=0)
    fw.handle_rc_override(0.0, GCS, channels(ch4=1600))
    fw.handle_rc_override(2.0, GCS, channels(ch5=1700))
    rc = fw.rc_channels(2.999)
    assert rc[3] == 1600 and rc[4] == 1700
    if timeout > 0:
        assert fw.next_event_s(2.5) == pytest.approx(3.0)
        rc = fw.rc_channels(3.0)
        assert rc[3] == 1500 and rc[4] == 1700  # ch4 expired, ch5 still fresh
        assert fw.rc_channels(5.0)[4] == 1500
    assert (fw.rc_channels(10.0)[3] == 1600) == expect_live_at_10s


def test_override_time_zero_disables_overrides(vehicle):
    fw = firmware(vehicle, rc_override_time_s=0.0)
    assert not fw.handle_rc_override(0.0, GCS, channels(ch4=1600))
    assert fw.rc_channels(0.0)[3] == 1500


def test_pilot_input_failsafe_disarms_after_the_timeout(vehicle):
    fw = firmware(vehicle, fs_gcs_enable=0)    # the pilot-input failsafe alone (GCS failsafe: below)
    fw.set_armed(1.0, True)
    fw.handle_rc_override(2.0, GCS, channels(ch4=1600))
    fw.update(2.0)
    assert fw.next_event_s(2.0) == pytest.approx(5.0)  # FS_PILOT_TIMEOUT after the last input
    fw.update(4.99)
    assert fw.armed
    fw.pop_messages()
    fw.update(5.0)
    assert not fw.armed and fw.failsafe_pilot_input
    assert any(text == "Lost manual control" for _, text in fw.pop_messages())
    assert fw.rc_channels(5.0)[3] == 1500  # controls went neutral


def test_pilot_input_failsafe_warn_only_keeps_the_vehicle_armed(vehicle):
    fw = firmware(vehicle, fs_pilot_input=1)
    fw.set_armed(0.0, True)
    fw.update(3.5)
    assert fw.armed and fw.failsafe_pilot_input
    assert any(text == "Lost manual control" for _, text in fw.pop_messages())
    fw.handle_rc_override(4.0, GCS, channels(ch4=1600))
    fw.update(4.0)
    assert not fw.failsafe_pilot_input


def test_only_manual_mode_is_accepted(vehicle):
    fw = firmware(vehicle)
    accepted, text = fw.set_mode(MODES["STABILIZE"])
    assert not accepted and "STABILIZE" in text and fw.mode == MANUAL
    assert any("not supported" in t for _, t in fw.pop_messages())
    assert fw.set_mode(MANUAL)[0]


def test_command_delay_holds_input_back(vehicle):
    fw = firmware(vehicle, command_delay_s=0.25, fs_pilot_input=0)
    fw.set_armed(0.0, True)
    fw.handle_rc_override(1.0, GCS, channels(ch4=1700))
    assert fw.next_event_s(1.0) == pytest.approx(1.25)
    assert fw.update(1.2499) == NEUTRAL
    assert fw.update(1.25) == expected_pwm(vehicle, "quantitative", [1500, 1500, 1500, 1700])
    # The override times out RC_OVERRIDE_TIME after the firmware saw it.
    assert fw.rc_channels(4.2499)[3] == 1700 and fw.rc_channels(4.25)[3] == 1500


def test_sim_cmd_delay_parameter_sets_the_command_delay(vehicle):
    fw = firmware(vehicle, command_delay_s=0.25, fs_pilot_input=0)
    assert fw.params.get("SIM_CMD_DELAY") == 0.25 and fw.command_delay_s == 0.25
    assert fw.params.set("SIM_CMD_DELAY", 0.5) == (True, "")
    assert fw.command_delay_s == 0.5 and fw.params.get("SIM_CMD_DELAY") == 0.5
    assert fw.params.set("SIM_CMD_DELAY", 6.0) == (False, "SIM_CMD_DELAY: 6 outside 0..5")
    assert fw.command_delay_s == 0.5                         # a refused value changes nothing
    fw.set_armed(0.0, True)
    fw.handle_rc_override(1.0, GCS, channels(ch4=1700))
    assert fw.update(1.4999) == NEUTRAL and fw.update(1.5) != NEUTRAL


def test_parameters_are_validated(vehicle):
    p = firmware(vehicle).params
    assert p.set("FS_PILOT_INPUT", 3) == (False, "FS_PILOT_INPUT: 3 outside 0..2")
    assert not p.set("SYSID_MYGCS", 12.5)[0]
    assert not p.set("RC_OVERRIDE_TIME", -0.5)[0]
    assert not p.set("FS_PILOT_TIMEOUT", float("nan"))[0]
    assert p.set("RC_OVERRIDE_TIME", -1)[0] and p.get("RC_OVERRIDE_TIME") == -1
    with pytest.raises(KeyError):
        p.set("NO_SUCH_PARAM", 1)


# --------------------------------------------------------------- ArduSub failsafe semantics
# Sub::failsafe_pilot_input_check (ArduSub/failsafe.cpp): the count runs from the last
# pilot input (boot = 0), armed or not; it fires once and stays latched until input resumes.

def test_pilot_failsafe_counts_from_boot_not_from_arming(vehicle):
    fw = firmware(vehicle)
    fw.set_armed(1.0, True)                 # armed 1 s after boot, no input yet
    assert fw.next_event_s(1.0) == pytest.approx(3.0)   # FS_PILOT_TIMEOUT after boot
    fw.update(2.999)
    assert fw.armed
    fw.update(3.0)
    assert not fw.armed and fw.failsafe_pilot_input


def test_pilot_failsafe_fires_once_while_disarmed_and_latches(vehicle):
    fw = firmware(vehicle, fs_gcs_enable=0)    # the pilot-input failsafe alone
    fw.update(3.0)
    assert fw.failsafe_pilot_input and fw.counters["pilot_failsafe"] == 1
    assert [t for _, t in fw.pop_messages()] == ["Lost manual control"]
    # A client connects 10 s after boot and arms: latched, so nothing fires ...
    fw.set_armed(10.0, True)
    for t in (10.0, 12.0, 13.4):
        fw.update(t)
    assert fw.armed and fw.counters["pilot_failsafe"] == 1
    # ... its first input 3.5 s after arming clears the latch; the vehicle stays armed.
    fw.handle_rc_override(13.5, GCS, channels(ch4=1600))
    fw.update(13.5)
    assert fw.armed and not fw.failsafe_pilot_input
    # Input stops: FS_PILOT_TIMEOUT after the last one the failsafe disarms.
    assert fw.next_event_s(13.5) == pytest.approx(16.5)
    fw.update(16.4999)
    assert fw.armed
    fw.update(16.5)
    assert not fw.armed and fw.counters["pilot_failsafe"] == 2


def test_pilot_failsafe_disabled_never_fires(vehicle):
    fw = firmware(vehicle, fs_pilot_input=0)
    fw.set_armed(0.0, True)
    fw.update(100.0)
    assert fw.armed and not fw.failsafe_pilot_input


def test_override_from_gcs_counts_as_pilot_input_even_when_overrides_are_off(vehicle):
    fw = firmware(vehicle, rc_override_time_s=0.0)
    fw.set_armed(0.0, True)
    fw.handle_rc_override(2.0, GCS, channels(ch4=1600))
    fw.update(4.0)
    assert fw.armed and fw.rc_channels(4.0)[3] == 1500
    assert fw.last_pilot_input_s(4.0) == 2.0
    fw.handle_rc_override(4.5, 1, channels(ch4=1600))   # another system: not pilot input
    assert fw.last_pilot_input_s(4.5) == 2.0


def test_command_delay_delays_pilot_input_for_the_failsafe(vehicle):
    fw = firmware(vehicle, command_delay_s=0.5)
    fw.update(3.0)
    assert fw.failsafe_pilot_input
    fw.handle_rc_override(4.0, GCS, channels(ch4=1600))
    assert fw.last_pilot_input_s(4.49) == 0.0
    fw.update(4.4)
    assert fw.failsafe_pilot_input            # not seen yet
    fw.update(4.5)
    assert not fw.failsafe_pilot_input


# --------------------------------------------------------------- MANUAL_CONTROL
