"""ArduSub / MAVLink facts (brov2_hybrid.link.ardusub) against pymavlink's generated enums.

pymavlink is generated from the MAVLink XML (common.xml, ardupilotmega.xml): an
independent copy of the numbers we write down once in link/ardusub.py.
"""
import pytest
from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.link import ardusub, mavros_conversions, stream_requests
from brov2_hybrid.sim import firmware, telemetry


def test_modes_match_the_sub_mode_enum():
    """ardupilotmega.xml SUB_MODE lists ArduSub's Mode::Number (MOTORDETECT spelled without _)."""
    enum = {entry.name[len("SUB_MODE_"):]: number for number, entry in mavlink.enums["SUB_MODE"].items()
            if not entry.name.endswith("ENUM_END")}
    assert {name.replace("_", ""): number for name, number in ardusub.MODES.items()} == \
        {name.replace("_", ""): number for name, number in enum.items()}
    assert ardusub.MANUAL == mavlink.SUB_MODE_MANUAL == 19
    assert ardusub.MODE_NAMES[21] == "SURFTRAK"


@pytest.mark.parametrize("name", ["CUSTOM_MODE_ENABLED", "GUIDED_ENABLED", "MANUAL_INPUT_ENABLED", "SAFETY_ARMED"])
def test_mode_flags_match_mavlink(name):
    assert getattr(ardusub, "MODE_FLAG_" + name) == getattr(mavlink, "MAV_MODE_FLAG_" + name)


def test_override_values_and_channel_count():
    """RC_CHANNELS_OVERRIDE carries 18 uint16 channels; UINT16_MAX is "no change"."""
    fields = mavlink.MAVLink_rc_channels_override_message.fieldnames
    assert sum(1 for f in fields if f.startswith("chan") and f.endswith("_raw")) == ardusub.N_OVERRIDE_CHANNELS
    assert ardusub.CHAN_NOCHANGE == 2 ** 16 - 1 and ardusub.CHAN_RELEASE == 0


def test_stream_groups_are_mavlink_streams_of_known_messages():
    for group, names in ardusub.STREAM_GROUPS.items():
        assert hasattr(mavlink, "MAV_DATA_STREAM_" + group)
        for name in names:
            assert hasattr(mavlink, "MAVLINK_MSG_ID_" + name)
    # ArduSub/GCS_Mavlink.cpp: SYSTEM_TIME is in EXTRA3 (the bridge used to ask EXTENDED_STATUS)
    assert ardusub.stream_group_of("SYSTEM_TIME") == "EXTRA3"
    assert ardusub.stream_group_of("VFR_HUD") == "EXTRA2"
    with pytest.raises(KeyError, match="HIGHRES_IMU"):
        ardusub.stream_group_of("HIGHRES_IMU")


def test_bridge_and_simulator_share_the_facts():
    """One table: the bridge's and the simulator's names are the facts module's objects."""
    assert mavros_conversions.MODES is ardusub.MODES
    assert firmware.MODE_NAMES is ardusub.MODE_NAMES
    assert telemetry.STREAM_GROUPS[mavlink.MAV_DATA_STREAM_EXTRA3] is ardusub.STREAM_GROUPS["EXTRA3"]


def test_bridge_data_stream_requests_take_the_highest_rate_per_group():
    streams = stream_requests.stream_requests("ATTITUDE_QUATERNION", 50, 10, 20, 2)
    assert stream_requests.data_stream_requests(streams) == [("RC_CHANNELS", 10.0), ("POSITION", 20.0), ("EXTRA3", 2.0)]
    assert stream_requests.data_stream_requests([("ATTITUDE", 5), ("SIM_STATE", 30)]) == [("EXTRA1", 30.0)]


def test_attitude_quaternion_comes_only_by_message_interval():
    # ArduSub/GCS_Mavlink.cpp STREAM_EXTRA1_msgs: ATTITUDE, SIMSTATE, AHRS2, PID_TUNING
    with pytest.raises(KeyError):
        ardusub.stream_group_of("ATTITUDE_QUATERNION")
    streams = stream_requests.stream_requests("ATTITUDE_QUATERNION", 50, 10, 20, 2)
    assert stream_requests.interval_only(streams) == ["ATTITUDE_QUATERNION"]
    assert stream_requests.interval_only(stream_requests.stream_requests("ATTITUDE", 50, 10, 20, 2)) == []
