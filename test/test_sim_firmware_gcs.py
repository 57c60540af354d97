"""The simulated ArduSub firmware: MANUAL_CONTROL (joystick axes to channels as ArduSub maps them)
and the GCS heartbeat failsafe (FS_GCS_ENABLE and its actions).
"""
import pytest
from brov2_hybrid.link.ardusub import MANUAL
from brov2_hybrid.sim.config import load_firmware_config

from firmware_bench import GCS, channels, expected_pwm, firmware  # noqa: F401  (fixtures)


def joystick_pwm(gain, x, y, z, r, thr_gain=1.0):
    """Independent restatement of ArduSub's joystick.cpp arithmetic (truncate, then limit)."""
    def lim(v):
        return min(1900, max(1100, int(v)))
    rpy, thr = 0.4 * gain, 0.8 * gain * thr_gain
    return [1500, 1500, lim(z * thr + 1500 - 500 * thr), lim(r * rpy + 1500), lim(x * rpy + 1500),
            lim(y * rpy + 1500), 1500, 1500, 1100, 1100, 1100]


@pytest.mark.parametrize("gain, x, y, z, r", [
    (0.5, 0, 0, 500, 0),            # sticks centred: neutral
    (0.5, 1000, -1000, 1000, 1000),  # full stick at the default gain: 1500 +/- 200 (throttle 1700)
    (1.0, 1000, -1000, 0, -1000),   # full gain: 1900 / 1100
    (0.25, 333, -77, 611, 999),     # truncation toward zero
])
def test_manual_control_maps_axes_like_ardusub(vehicle, gain, x, y, z, r):
    fw = firmware(vehicle, js_gain_default=gain)
    assert fw.handle_manual_control(1.0, GCS, x, y, z, r)
    assert fw.rc_channels(1.0)[:11] == joystick_pwm(gain, x, y, z, r)


def test_manual_control_hand_computed_values(vehicle):
    fw = firmware(vehicle)                              # gain 0.5
    assert fw.manual_control_channels(1000, 0, 1000, -500)[2:6] == [1700, 1400, 1700, 1500]
    assert fw.params.set("JS_THR_GAIN", 2.0)[0]
    assert fw.manual_control_channels(0, 0, 1000, 0)[2] == 1900   # 0.8*0.5*2 = 0.8: 1500 + 400
    assert fw.manual_control_channels(0, 0, 0, 0)[2] == 1100


def test_manual_control_flies_and_counts_as_pilot_input(vehicle):
    fw = firmware(vehicle, fs_gcs_enable=0)    # the pilot-input failsafe alone
    fw.set_armed(0.0, True)
    fw.handle_manual_control(2.0, GCS, 0, 0, 500, 1000)    # yaw right, gain 0.5 -> ch4 1700
    rc = [1500, 1500, 1500, 1700, 1500, 1500, 1500, 1500]
    assert fw.update(2.0) == expected_pwm(vehicle, "quantitative", rc)
    fw.update(4.99)
    assert fw.armed                                         # input at 2 s: failsafe at 5 s
    fw.update(5.0)
    assert not fw.armed


def test_manual_control_from_another_system_is_ignored(vehicle):
    fw = firmware(vehicle)
    assert not fw.handle_manual_control(0.5, 1, 1000, 0, 500, 0)
    assert fw.rc_channels(0.5)[4] == 1500 and fw.counters["manual_control_rejected_sysid"] == 1
    assert fw.last_pilot_input_s(0.5) == 0.0


def test_manual_control_and_rc_override_share_the_channels(vehicle):
    fw = firmware(vehicle, fs_pilot_input=0)
    fw.handle_manual_control(0.0, GCS, 1000, 0, 500, 0)         # forward 1700, yaw 1500
    fw.handle_rc_override(1.0, GCS, channels(ch4=1600))         # newest writer of ch4 wins
    rc = fw.rc_channels(1.0)
    assert rc[3] == 1600 and rc[4] == 1700
    fw.handle_manual_control(2.0, GCS, 0, 0, 500, 0)            # joystick rewrites 1-11
    rc = fw.rc_channels(2.0)
    assert rc[3] == 1500 and rc[4] == 1500
    # RC_OVERRIDE_TIME applies to joystick-written channels as to overrides.
    fw.handle_rc_override(4.0, GCS, channels(ch5=1800))
    rc = fw.rc_channels(5.0)
    assert rc[4] == 1800 and rc[2] == 1500 and rc[8] == 1500   # ch9 (lights, 1100) expired at 5 s


# ---------------------------------------------------------------- GCS heartbeat failsafe
def test_gcs_failsafe_defaults_match_ardusub_4_5(vehicle):
    fw = firmware(vehicle)
    assert fw.params.get("FS_GCS_ENABLE") == 2          # FS_GCS_DISARM (ArduSub/Parameters.cpp)
    assert fw.gcs_timeout_s == 2.5                       # FS_GCS_TIMEOUT_MS (ArduSub/defines.h)


def test_gcs_failsafe_disarms_2_5_s_after_the_last_heartbeat(vehicle):
    """A station that sent HEARTBEATs and stops: disarmed 2.5 s after the last one, with
    ArduSub's text (only once the vehicle has been up 30 s: last_gcs_warn_ms starts at 0)."""
    fw = firmware(vehicle, fs_pilot_input=0)
    for t in range(30, 41):                              # 1 Hz heartbeats, boot + 30..40 s
        fw.handle_heartbeat(float(t), GCS)
        fw.update(float(t))
    fw.set_armed(40.0, True)
    fw.pop_messages()
    assert fw.next_event_s(40.0) == pytest.approx(42.5)
    fw.update(42.499)
    assert fw.armed and not fw.failsafe_gcs
    fw.update(42.5)
    assert not fw.armed and fw.failsafe_gcs and fw.counters["gcs_failsafe"] == 1
    assert fw.pop_messages() == [(4, "MYGCS: 255, heartbeat lost"), (6, "Disarming motors")]
    # still lost: the warning is repeated every 30 s, the action is not
    assert fw.next_event_s(43.0) == pytest.approx(72.5)
    fw.update(60.0)
    assert fw.pop_messages() == []
    fw.update(72.5)
    assert fw.pop_messages() == [(4, "MYGCS: 255, heartbeat lost")]
    # heard again: cleared; armed again and lost again: acts again
    fw.handle_heartbeat(80.0, GCS)
    fw.update(80.0)
    assert not fw.failsafe_gcs
    fw.set_armed(80.0, True)
    fw.update(82.5)
    assert not fw.armed and fw.counters["gcs_failsafe"] == 2


def test_gcs_failsafe_text_waits_for_30_s_after_boot(vehicle):
    fw = firmware(vehicle, fs_pilot_input=0)
    fw.handle_heartbeat(1.0, GCS)
    fw.set_armed(1.0, True)
    fw.pop_messages()
    fw.update(3.5)
    assert not fw.armed                                  # disarmed at 3.5 s ...
    assert fw.pop_messages() == [(6, "Disarming motors")]   # ... without the text before 30 s
    fw.update(30.0)
    assert fw.pop_messages() == [(4, "MYGCS: 255, heartbeat lost")]


def test_overrides_and_manual_control_count_as_gcs_heartbeats_other_systems_do_not(vehicle):
    fw = firmware(vehicle, fs_pilot_input=0)
    fw.set_armed(0.0, True)
    fw.handle_heartbeat(0.0, GCS)
    fw.handle_heartbeat(2.0, 1)                           # another system: not our GCS
    fw.handle_rc_override(2.0, GCS, channels(ch4=1600))  # counts (handle_rc_channels_override)
    fw.handle_manual_control(4.0, GCS, 0, 0, 500, 0)     # counts ("considered to be a 'heartbeat'")
    fw.update(6.4)
    assert fw.armed
    fw.update(6.5)
    assert not fw.armed and fw.failsafe_gcs


def test_gcs_failsafe_needs_a_station_seen_once(vehicle):
    fw = firmware(vehicle, fs_pilot_input=0)
    fw.set_armed(0.0, True)
    fw.handle_heartbeat(0.0, 1)                          # not SYSID_MYGCS
    fw.update(100.0)
    assert fw.armed and not fw.failsafe_gcs


@pytest.mark.parametrize("action, armed_after", [(0, True), (1, True), (2, False), (3, False), (4, False)])
def test_gcs_failsafe_actions(vehicle, action, armed_after):
    """0 off, 1 warn only, 2 disarm; 3 (depth hold) and 4 (surface) ask for a mode this
    simulator refuses, so they disarm (ArduSub: GCS_FAILSAFE_HOLDFAILED / _SURFACEFAILED)."""
    fw = firmware(vehicle, fs_pilot_input=0, fs_gcs_enable=action)
    fw.handle_heartbeat(40.0, GCS)
    fw.set_armed(40.0, True)
    fw.pop_messages()
    fw.update(43.0)
    assert fw.armed == armed_after and fw.mode == MANUAL
    texts = [t for _, t in fw.pop_messages()]
    assert ("MYGCS: 255, heartbeat lost" in texts) == (action != 0)
    if action in (3, 4):
        assert any(t.startswith("Mode %s not supported" % ("ALT_HOLD" if action == 3 else "SURFACE")) for t in texts)


def test_pilot_failsafe_still_fires_while_the_station_sends_heartbeats(vehicle):
    """Heartbeats without sticks: the GCS failsafe stays quiet, the pilot-input one disarms."""
    fw = firmware(vehicle)
    fw.set_armed(0.0, True)
    fw.pop_messages()
    for t in (0.0, 1.0, 2.0):
        fw.handle_heartbeat(t, GCS)
        fw.update(t)
    fw.handle_heartbeat(3.0, GCS)
    fw.update(3.0)
    assert not fw.armed and fw.failsafe_pilot_input and not fw.failsafe_gcs
    assert [t for _, t in fw.pop_messages()] == ["Lost manual control", "Disarming motors"]


def test_fs_gcs_enable_is_a_parameter_0_to_4(vehicle):
    fw = firmware(vehicle)
    assert fw.params.set("FS_GCS_ENABLE", 1)[0] and fw.params.get("FS_GCS_ENABLE") == 1
    assert not fw.params.set("FS_GCS_ENABLE", 5)[0] and fw.params.get("FS_GCS_ENABLE") == 1


def test_fs_gcs_enable_out_of_range_in_the_file_is_refused(tmp_path):
    import yaml
    from brov2_hybrid.errors import ParameterError
    from brov2_hybrid.paths import params_path
    with open(params_path("simulator.yaml")) as handle:
        data = yaml.safe_load(handle)
    data["firmware"]["fs_gcs_enable"] = 7
    path = tmp_path / "simulator.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ParameterError, match=r"firmware\.fs_gcs_enable.*expected one of \[0, 1, 2, 3, 4\], got 7"):
        load_firmware_config(str(path))


def test_manual_control_throttle_base_is_a_whole_microsecond_as_in_ardusub():
    """Sub::transform_manual_control_to_rc_override stores throttleBase in an int16_t: with a gain
    whose 500 * throttleScale is not whole, the base loses its fraction before z * scale is added."""
    from brov2_hybrid.sim.joystick import manual_control_channels
    gain = 0.3333                                # throttleScale = 0.8 * 0.3333 = 0.26664
    base = int(1500 - 500 * 0.8 * gain)          # 1366 (1366.68 in float)
    assert manual_control_channels(0, 0, 1000, 0, gain, 1.0)[2] == int(1000 * 0.8 * gain + base) == 1632
