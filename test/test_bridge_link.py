"""The MAVLink bridge's link logic (brov2_hybrid.link.bridge_link): link state machine, signing
handshake, /clock relay, COMMAND_ACK waits, override path and the small vehicle-message
decisions; and its settings (brov2_hybrid.link.bridge_settings)."""
import os
import threading

import pytest
import yaml
from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.link import bridge_core as bc
from brov2_hybrid.link import bridge_link as bl
from brov2_hybrid.link import bridge_settings as bset
from brov2_hybrid import paths
from brov2_hybrid.link.ardusub import (
    CHAN_NOCHANGE,
    CHAN_RELEASE,
    MODE_FLAG_CUSTOM_MODE_ENABLED,
    MODE_FLAG_SAFETY_ARMED,
    MODES,
)
from brov2_hybrid.link.bridge_settings import BridgeSettings
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.node_logic.node_params import ParamReader, load_node_params


def test_only_the_target_components_non_gcs_heartbeat_is_the_vehicles():
    assert bl.is_vehicle_heartbeat(mavlink.MAV_TYPE_SUBMARINE, 1, 1)
    assert not bl.is_vehicle_heartbeat(mavlink.MAV_TYPE_GCS, 1, 1)       # another ground station
    assert not bl.is_vehicle_heartbeat(mavlink.MAV_TYPE_SUBMARINE, 100, 1)   # e.g. a camera component


def test_servo_channels_are_the_main_eight_unless_an_aux_output_is_set():
    main = [1500 + k for k in range(8)]
    assert bl.servo_channels(main + [0] * 8) == main
    assert bl.servo_channels(iter(main + [0] * 8)) == main          # any iterable
    full = main + [0] * 7 + [1100]
    assert bl.servo_channels(full) == full


def test_state_fields_never_report_armed_while_disconnected():
    state = {"armed": True, "guided": False, "manual_input": True, "mode": "MANUAL", "system_status": 4}
    up = bl.state_fields(state, True)
    assert up == {"connected": True, "armed": True, "guided": False, "manual_input": True, "mode": "MANUAL",
                  "system_status": 4}
    down = bl.state_fields(state, False)
    assert down["connected"] is False and down["armed"] is False and down["mode"] == "MANUAL"


def test_set_mode_keeps_the_armed_flag_of_an_armed_vehicle_as_mavros():
    assert bl.set_mode_fields(0, "MANUAL", False) == (MODE_FLAG_CUSTOM_MODE_ENABLED, MODES["MANUAL"])
    assert bl.set_mode_fields(0, "manual", True) == (MODE_FLAG_CUSTOM_MODE_ENABLED | MODE_FLAG_SAFETY_ARMED,
                                                     MODES["MANUAL"])
    # a plain base mode is sent as asked, armed or not
    assert bl.set_mode_fields(mavlink.MAV_MODE_MANUAL_ARMED, "", True) == (mavlink.MAV_MODE_MANUAL_ARMED, 0)
    with pytest.raises(Brov2Error, match="unknown ArduSub mode"):
        bl.set_mode_fields(0, "NOSUCH", True)


def _schedule():
    # link_timeout 2 s, silence 3 s, heartbeat every 1 s, streams every 5 s when below 0.9 * 50 Hz
    return bl.LinkSchedule(2.0, 3.0, 1.0, 5.0, 0.9, 50.0)


def test_link_schedule_connects_on_heartbeat_and_sends_heartbeats_and_requests_on_time():
    s = _schedule()
    asked = []

    def rate(value):
        return lambda: asked.append(value) or value

    s.opened(0.0)
    assert s.turn(0.0, rate(0.0)) == bl.LinkTurn(None, None, True, False)   # no vehicle HEARTBEAT yet
    assert asked == []                       # the attitude rate is asked only when a request is due
    s.on_heartbeat(0.1)
    s.on_message(0.1)
    turn = s.turn(0.1, rate(0.0))
    assert turn == bl.LinkTurn(None, True, False, True)        # connected; attitude missing: request
    s.was_connected = True
    assert s.turn(0.2, rate(0.0)) == bl.LinkTurn(None, None, False, False)   # next request at 5.1
    assert s.turn(1.0, rate(0.0)).heartbeat
    s.on_heartbeat(5.0)
    s.on_message(5.0)
    assert s.turn(5.1, rate(50.0)) == bl.LinkTurn(None, None, True, False)   # rate fine: no request
    assert asked == [0.0, 50.0]
    # threshold: 0.9 * 50 = 45 Hz; the next request is due at 10.1
    s.on_heartbeat(10.0)
    s.on_message(10.0)
    assert s.turn(10.1, rate(44.9)).request_streams


def test_link_schedule_reports_a_lost_link_and_reconnects_after_silence():
    s = _schedule()
    s.opened(0.0)
    s.on_heartbeat(0.5)
    s.on_message(0.5)
    assert s.turn(0.5, lambda: 50.0).connected_now is True
    s.was_connected = True
    s.on_message(2.0)                        # messages but no HEARTBEAT: lost after 2 s
    assert s.turn(2.4, lambda: 50.0).connected_now is None
    assert s.turn(2.6, lambda: 50.0).connected_now is False
    s.was_connected = False
    turn = s.turn(5.1, lambda: 50.0)         # 3.1 s without any message
    assert turn.close_reason == "no message for 3.0 s" and not turn.heartbeat
    s.closed()
    assert not s.connected(5.1) and s.timeout_s == 2.0
    s.opened(6.0)                            # silence counts from the new link's start
    assert s.turn(8.9, lambda: 0.0).close_reason is None
    assert s.turn(9.1, lambda: 0.0).close_reason is not None


def test_signing_link_keys_the_talking_vehicle_at_most_once_a_second():
    off = bl.SigningLink(False, 1)
    assert not off.setup_due(0.0) and not off.on_rejected((1, 1, 0), 0.0)
    assert off.rejected == 1
    s = bl.SigningLink(True, 1)
    assert s.setup_due(0.0)
    assert not s.setup_due(0.5)
    assert not s.on_rejected((1, 1, 30), 0.9)          # the vehicle, but keyed 0.9 s ago
    assert s.on_rejected((1, 1, 30), 1.0)
    assert not s.on_rejected((2, 1, 30), 5.0)          # another system: counted, not keyed
    assert not s.on_rejected(None, 5.0)
    assert s.rejected == 4
    s.opened()                                         # a new link: at once again
    assert s.setup_due(1.2)


def test_clock_relay_only_goes_forward_and_keeps_time_running_while_the_link_is_down():
    c = bl.ClockRelay(0.01)
    assert c.accept(1.0, 100.0) and c.last_s == 1.0
    assert not c.accept(1.0, 100.1) and not c.accept(0.5, 100.1)
    assert c.last_s == 1.0 and c.last_mono == 100.0
    assert not c.keepalive_due(100.5, started=True, connected=True)
    assert not c.keepalive_due(100.5, started=False, connected=False)
    assert not c.keepalive_due(100.005, started=True, connected=False)
    assert c.keepalive_due(100.01, started=True, connected=False)


def test_command_acks_wait_for_an_ack_after_the_request():
    acks = bl.CommandAcks()
    acks.record(400, 4, 1.0)                           # an old ACK (before the request)
    assert acks.wait(400, 2.0, 0.05) is None
    assert acks.wait(400, 1.0, 0.05) == 4
    since = 5.0
    t = threading.Timer(0.02, acks.record, (400, 0, since + 0.01))
    t.start()
    try:
        assert acks.wait(400, since, 5.0) == 0
    finally:
        t.join()
    assert acks.wait(511, 0.0, 0.01) is None           # never acknowledged


class _Wire(object):
    """A fake link: records what is sent; ``up`` says whether sends go out."""

    def __init__(self):
        self.sent, self.up, self.stale_warnings, self.stopped, self.now = [], True, 0, False, 0.0

    def send(self, channels):
        if self.up:
            self.sent.append(list(channels))
        return self.up

    def overrides(self, period_s=0.05, timeout_s=1.0):
        return bl.OverrideLink(bc.OverrideForwarder(period_s, timeout_s), self.send, lambda: self.stopped,
                               self._stale, clock=lambda: self.now)

    def _stale(self):
        self.stale_warnings += 1


def _override(yaw_us):
    return [1500, 1500, 1500, yaw_us, 1500, 1500] + [CHAN_NOCHANGE] * 12


def test_override_link_sends_at_once_resends_while_fresh_and_releases_once_when_stale():
    w = _Wire()
    o = w.overrides()
    o.on_override(_override(1600))
    assert w.sent == [_override(1600)]
    with pytest.raises(Brov2Error):
        o.on_override([1500] * 3)                      # wrong length: nothing sent
    assert len(w.sent) == 1
    w.sent.clear()
    for k in range(1, 11):                             # turns 0.1 s apart, period 0.05 s: a re-send each turn
        o.forward(0.1 * k)
    assert w.sent == [_override(1600)] * 10
    w.sent.clear()
    release = [CHAN_RELEASE] * 6 + [CHAN_NOCHANGE] * 12   # only the six channels we took
    w.up = False                                       # link down when the input goes stale
    o.forward(1.2)
    assert w.sent == [] and w.stale_warnings == 1
    w.up = True
    o.forward(1.3)                                     # the release goes out when it can, warned once
    o.forward(1.4)
    assert w.sent == [release] and w.stale_warnings == 1


def test_override_link_after_stop_sends_only_the_shutdown_release():
    w = _Wire()
    o = w.overrides()
    o.on_override(_override(1450))
    w.sent.clear()
    w.stopped = True
    o.on_override(_override(1700))
    o.forward(0.5)
    assert w.sent == []
    sleeps = []
    assert o.release_all(3, 0.02, linked=True, sleep=sleeps.append) == 3
    assert w.sent == [[CHAN_RELEASE] * 6 + [CHAN_NOCHANGE] * 12] * 3 and sleeps == [0.02, 0.02]
    assert o.release_all(3, 0.02, linked=True, sleep=sleeps.append) == 0   # nothing held any more


def test_override_link_sends_no_release_without_a_link_or_without_channels():
    w = _Wire()
    o = w.overrides()
    assert o.release_all(3, 0.0, linked=True) == 0     # took no channel
    o.on_override(_override(1550))
    w.sent.clear()
    assert o.release_all(3, 0.0, linked=False) == 0 and w.sent == []


def _settings(**overrides):
    return BridgeSettings(ParamReader(load_node_params("mavlink_bridge", overrides), "mavlink_bridge"))


def test_bridge_settings_read_the_params_file_and_derive_periods():
    with open(os.path.join(paths.package_root(), "params", "autopilot.yaml")) as handle:
        raw = yaml.safe_load(handle)["mavlink_bridge"]
    s = _settings()
    assert s.url == raw["fcu_url"] and s.system_id == raw["system_id"]
    assert s.heartbeat_period_s == pytest.approx(1.0 / raw["heartbeat_rate_hz"])
    assert s.override_period_s == pytest.approx(1.0 / raw["override_rate_hz"])
    assert s.signing_key is None and s.key_file == ""
    assert s.streams[0] == (bset.ATTITUDE_MESSAGES[raw["attitude_source"]], raw["attitude_rate_hz"])
    assert _settings(attitude_source="euler").attitude_msg == "ATTITUDE"


def test_bridge_settings_refuse_a_slow_override_and_signing_setup_without_a_key():
    assert _settings(override_rate_hz=10.0).override_period_s == pytest.approx(0.1)
    with pytest.raises(Brov2Error, match="override_rate_hz: expected >= 10 Hz, got 9.5"):
        _settings(override_rate_hz=9.5)
    with pytest.raises(Brov2Error, match="signing_setup: true needs ~signing_key_file"):
        _settings(signing_setup=True)
    with pytest.raises(Brov2Error, match="attitude_source"):
        _settings(attitude_source="gyro")
    keyed = _settings(signing_setup=True,
                      signing_key_file=os.path.join(paths.package_root(), "test", "data", "signing_test.key"))
    assert len(keyed.signing_key) == 32 and keyed.signing_setup


def test_param_value_fields_fill_mavros_param_value_as_mavros():
    """PARAM_VALUE carries every value as a float; MAVROS puts integer types (MAV_PARAM_TYPE
    1-8) in ParamValue.integer and REAL32/REAL64 (9, 10) in ParamValue.real."""
    assert bl.param_value_fields(255.0, mavlink.MAV_PARAM_TYPE_INT16) == (255, 0.0)
    assert bl.param_value_fields(2.0, mavlink.MAV_PARAM_TYPE_INT8) == (2, 0.0)
    assert bl.param_value_fields(3.0, mavlink.MAV_PARAM_TYPE_REAL32) == (0, 3.0)
    assert bl.param_value_fields(-1.0, mavlink.MAV_PARAM_TYPE_REAL32) == (0, -1.0)


def test_replies_are_waited_for_by_key():
    now = [10.0]
    replies = bl.CommandAcks(clock=lambda: now[0])
    replies.record("RC_OVERRIDE_TIME", (3.0, 9), 10.0)
    assert replies.wait("RC_OVERRIDE_TIME", 10.0, 0.0) == (3.0, 9)
    assert replies.wait("RC_OVERRIDE_TIME", 10.5, 0.0) is None      # an older reply does not answer
    assert replies.wait("SYSID_MYGCS", 0.0, 0.0) is None
