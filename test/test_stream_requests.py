"""What the MAVLink bridge asks the vehicle to send (brov2_hybrid.link.stream_requests); the
REQUEST_DATA_STREAM groups are checked against ArduSub in test_ardusub.py."""
from brov2_hybrid.link import stream_requests as sr


def test_interval_and_streams():
    assert sr.interval_us(50.0) == 20000.0 and sr.interval_us(0) == -1.0
    names = [n for n, _ in sr.stream_requests("ATTITUDE_QUATERNION", 50, 25, 10, 5)]
    assert names == ["ATTITUDE_QUATERNION", "SERVO_OUTPUT_RAW", "GLOBAL_POSITION_INT", "SYSTEM_TIME"]


def test_summary_names_each_request_and_what_only_set_message_interval_starts():
    quaternion = sr.stream_requests("ATTITUDE_QUATERNION", 50, 25, 10, 5)
    assert sr.summary(quaternion) == (
        "requested streams ATTITUDE_QUATERNION 50 Hz, SERVO_OUTPUT_RAW 25 Hz, GLOBAL_POSITION_INT 10 Hz, "
        "SYSTEM_TIME 5 Hz; ATTITUDE_QUATERNION only by SET_MESSAGE_INTERVAL (a firmware without it never "
        "sends it: attitude_source euler)")
    assert sr.summary(sr.stream_requests("ATTITUDE", 50, 25, 10, 5)).endswith("SYSTEM_TIME 5 Hz")
