"""What the package asks a real MAVROS to request from the vehicle, and when
(brov2_hybrid.link.mavros_streams.StreamKeeper), on a scripted clock."""
import pytest

from brov2_hybrid.errors import ParameterError
from brov2_hybrid.link import mavros_streams as ms

STREAMS = [ms.Stream("ATTITUDE_QUATERNION", 50.0, "/mavros/imu/data"),
           ms.Stream("SERVO_OUTPUT_RAW", 25.0, "/mavros/rc/out"),
           ms.Stream("GLOBAL_POSITION_INT", 10.0, "/mavros/global_position/rel_alt"),
           ms.Stream("SYSTEM_TIME", 5.0, "")]


def _keeper():
    return ms.StreamKeeper(STREAMS, settle_s=0.5, check_after_s=2.0, stale_s=1.0, rerequest_period_s=5.0)


def _names(streams):
    return [s.message for s in streams]


def test_the_set_message_interval_command_of_each_stream():
    # MAVLink common.xml: ATTITUDE_QUATERNION 31, SERVO_OUTPUT_RAW 36, GLOBAL_POSITION_INT 33,
    # SYSTEM_TIME 2; MAV_CMD_SET_MESSAGE_INTERVAL 511 with param2 the interval in microseconds
    assert [ms.interval_command(s) for s in STREAMS] == [
        (511, 31.0, 20000.0), (511, 36.0, 40000.0), (511, 33.0, 100000.0), (511, 2.0, 200000.0)]
    with pytest.raises(ParameterError, match="unknown MAVLink message 'ATTITUDE_QUATERNIONS'"):
        ms.StreamKeeper([ms.Stream("ATTITUDE_QUATERNIONS", 50.0)], 0.5, 2.0, 1.0, 5.0)


def test_nothing_is_requested_before_the_vehicle_is_seen_then_everything_once():
    k = _keeper()
    for t in (0.0, 1.0, 10.0):
        assert k.update(t).requests == []          # MAVROS has not seen a heartbeat: a request would be lost
    k.on_link(10.0, True)
    assert k.update(10.2).requests == []           # settling
    assert _names(k.update(10.6).requests) == _names(STREAMS)
    for t in (10.7, 11.0, 11.5):
        for s in STREAMS:
            k.on_topic(t, s.topic)
        act = k.update(t)
        assert act.requests == [] and act.warn == []
    assert k.requests_sent == 4


def test_all_arriving_is_told_once():
    k = _keeper()
    k.on_link(0.0, True)
    k.update(1.0)
    told = []
    for i in range(50):
        t = 1.0 + 0.1 * i
        for s in STREAMS:
            k.on_topic(t, s.topic)
        told += k.update(t).info
    assert told == ["the vehicle sends ATTITUDE_QUATERNION (/mavros/imu/data), SERVO_OUTPUT_RAW (/mavros/rc/out), "
                    "GLOBAL_POSITION_INT (/mavros/global_position/rel_alt)"]


def test_a_missing_stream_is_named_and_re_requested_alone():
    k = _keeper()
    k.on_link(0.0, True)
    assert len(k.update(1.0).requests) == 4
    warns, requests = [], []
    for i in range(1, 121):                         # 12 s, every stream but the motor outputs arrives
        t = 1.0 + 0.1 * i
        for s in STREAMS:
            if s.message != "SERVO_OUTPUT_RAW":
                k.on_topic(t, s.topic)
        act = k.update(t)
        warns += [(round(t, 1), w) for w in act.warn]
        requests += [(round(t, 1), s.message) for s in act.requests]
    # re-requested every 5 s, alone; warned 2 s after each request
    assert requests == [(6.0, "SERVO_OUTPUT_RAW"), (11.0, "SERVO_OUTPUT_RAW")]
    assert [t for t, _ in warns] == [3.0, 8.0, 13.0]
    assert warns[0][1].startswith("no SERVO_OUTPUT_RAW (id 36, 25 Hz) on /mavros/rc/out from the vehicle 2.0 s "
                                  "after requesting it with MAV_CMD_SET_MESSAGE_INTERVAL")
    assert "ATTITUDE" not in warns[0][1]


def test_a_stream_that_returns_is_told_and_no_longer_requested():
    k = _keeper()
    k.on_link(0.0, True)
    k.update(1.0)
    for t in (2.0, 3.5):
        k.on_topic(t, "/mavros/imu/data")
        k.on_topic(t, "/mavros/global_position/rel_alt")
    assert "SERVO_OUTPUT_RAW" in k.update(3.5).warn[0]
    k.on_topic(3.6, "/mavros/rc/out")
    k.on_topic(3.6, "/mavros/imu/data")
    k.on_topic(3.6, "/mavros/global_position/rel_alt")
    act = k.update(3.6)
    assert act.info[0] == "SERVO_OUTPUT_RAW arrives again" and act.warn == [] and act.requests == []


def test_a_reconnection_requests_everything_again():
    k = _keeper()
    k.on_link(0.0, True)
    k.update(1.0)
    for s in STREAMS:
        k.on_topic(1.5, s.topic)
    k.update(1.5)
    k.on_link(2.0, False)                           # vehicle rebooted: MAVROS lost its heartbeat
    assert k.update(5.0).requests == []
    k.on_link(20.0, True)
    assert k.update(20.2).requests == []
    assert _names(k.update(20.5).requests) == _names(STREAMS)
    assert k.requests_sent == 8


def test_a_vehicle_silent_after_a_quick_reboot_is_asked_again_without_a_reconnection():
    k = _keeper()
    k.on_link(0.0, True)
    k.update(1.0)
    for i in range(10):                             # streams flow for a second, then stop
        for s in STREAMS:
            k.on_topic(1.0 + 0.1 * i, s.topic)
    assert k.update(2.0).requests == []
    assert k.update(2.5).requests == []
    # nothing since 1.9 s: missing from 2.9 s, re-requested 5 s after the first request
    assert _names(k.update(6.0).requests) == ["ATTITUDE_QUATERNION", "SERVO_OUTPUT_RAW", "GLOBAL_POSITION_INT"]
