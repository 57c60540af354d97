"""Bag input: every way a bag can be unusable gives a project error naming the file.

The bad bags are made at test time from a good one written with rosbag (truncated,
index cut off, record header overwritten, a text file, an empty file).
"""
import math
import os
import shutil
import struct

import numpy as np
import pytest

from brov2_hybrid.errors import InputDataError

rosbag = pytest.importorskip("rosbag")
rospy = pytest.importorskip("rospy")
genpy_dynamic = pytest.importorskip("genpy.dynamic")
from std_msgs.msg import Bool, Header  # noqa: E402

from brov2_hybrid.dive.playback import load_bag_dive  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "data", "bad_inputs")
TOPIC = "/brov2/desired_state"


def _desired_state_class():
    # brov2_hybrid.msg lives in the catkin workspace, not in src/ (pytest's path):
    # build the class from msg/DesiredState.msg as rosbag does when reading.
    with open(os.path.join(HERE, "..", "msg", "DesiredState.msg")) as f:
        text = f.read()
    full = text + "\n" + "=" * 80 + "\nMSG: std_msgs/Header\n" + Header._full_text
    return genpy_dynamic.generate_dynamic("brov2_hybrid/DesiredState", full)["brov2_hybrid/DesiredState"]


DesiredState = _desired_state_class()


def bad(name):
    return os.path.join(BAD, name)


def assert_parts(message, *parts):
    for part in parts:
        assert part in message, "%r not in %r" % (part, message)


def write_bag(path, pitches_rad=(0.0, 0.1, 0.2), surge=0.3):
    with rosbag.Bag(str(path), "w") as bag:
        for k, pitch in enumerate(pitches_rad):
            msg = DesiredState()
            msg.header.stamp = rospy.Time.from_sec(100.0 + 0.5 * k)
            msg.pitch_rad, msg.surge = pitch, surge
            bag.write(TOPIC, msg, msg.header.stamp)
        bag.write("/brov2/dive_done", Bool(data=True), rospy.Time.from_sec(100.0))
    return str(path)


def bag_refused(path, topic=TOPIC):
    with pytest.raises(InputDataError) as info:
        load_bag_dive(path, topic)
    return str(info.value)


def test_good_bag_loads(tmp_path):
    d = load_bag_dive(write_bag(tmp_path / "good.bag"), TOPIC)
    np.testing.assert_allclose(d.t_s, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(d.eta2d_rad[:, 1], [0.0, 0.1, 0.2])
    assert d.source.endswith("good.bag:" + TOPIC)


def test_truncated_bag_says_how_to_reindex(tmp_path):
    good = write_bag(tmp_path / "good.bag")
    cut = str(tmp_path / "cut.bag")
    with open(good, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read()[:os.path.getsize(good) // 2])
    assert_parts(bag_refused(cut), "cut.bag: unindexed bag", "rosbag reindex %s" % cut)


def test_reindexed_bag_loads_again(tmp_path):
    # the advice works: a bag whose index was cut off loads after reindexing
    good = write_bag(tmp_path / "good.bag")
    fixed = str(tmp_path / "fixed.bag")
    shutil.copy(good, fixed)
    with open(fixed, "r+b") as f:                 # drop the index (written at close)
        bag = rosbag.Bag(good)
        index_pos = bag._index_data_pos
        bag.close()
        f.truncate(index_pos)
    bag_refused(fixed)
    with rosbag.Bag(fixed, "a", allow_unindexed=True) as bag:
        for _ in bag.reindex():
            pass
    assert len(load_bag_dive(fixed, TOPIC)) == 3


def test_damaged_bag_header_is_named(tmp_path):
    good = write_bag(tmp_path / "good.bag")
    data = bytearray(open(good, "rb").read())
    # after the 13-byte "#ROSBAG V2.0\n" magic: the bag header record's header length
    data[13:17] = struct.pack("<I", 0x7FFFFFF0)
    path = str(tmp_path / "corrupt.bag")
    open(path, "wb").write(bytes(data))
    assert_parts(bag_refused(path), "corrupt.bag: unindexed bag", "damaged", "rosbag reindex")


def test_every_single_byte_corruption_gives_a_dive_or_a_project_error(tmp_path):
    # Property: whichever byte of a bag is damaged, loading returns a dive (the byte
    # was in a number the checks accept) or raises InputDataError naming the file --
    # never a rosbag / genpy / struct exception.
    good = write_bag(tmp_path / "good.bag")
    data = open(good, "rb").read()
    path = str(tmp_path / "flipped.bag")
    # skip the bag header record's data: padding (spaces) up to 4 KiB, unread by rosbag
    header_len = struct.unpack("<I", data[13:17])[0]
    padding_end = 21 + header_len + struct.unpack("<I", data[17 + header_len:21 + header_len])[0]
    kinds = {"loaded": 0, "refused": 0}
    # every 3rd byte keeps the test at a few seconds and still hits every record header
    for offset in list(range(0, 21 + header_len, 3)) + list(range(padding_end, len(data), 3)):
        flipped = bytearray(data)
        flipped[offset] ^= 0xFF
        with open(path, "wb") as f:
            f.write(bytes(flipped))
        try:
            load_bag_dive(path, TOPIC)
            kinds["loaded"] += 1
        except InputDataError as exc:
            assert str(exc).startswith(path + ":"), str(exc)
            kinds["refused"] += 1
    assert kinds["refused"] > 0 and kinds["loaded"] > 0, kinds


def test_not_a_bag(tmp_path):
    path = str(tmp_path / "dive.bag")
    shutil.copy(bad("bom_crlf_good.csv"), path)
    assert_parts(bag_refused(path), "dive.bag: cannot read bag", "does not appear to be a bag file")


def test_empty_and_missing_bags(tmp_path):
    empty = tmp_path / "empty.bag"
    empty.write_bytes(b"")
    assert_parts(bag_refused(str(empty)), "empty.bag: cannot read bag", "empty file")
    assert_parts(bag_refused(str(tmp_path / "missing.bag")), "missing.bag: cannot read bag", "No such file")


def test_bag_without_the_topic_lists_its_topics(tmp_path):
    path = write_bag(tmp_path / "good.bag")
    assert_parts(bag_refused(path, "/wrong/topic"), "good.bag: no messages on topic '/wrong/topic'",
                 "/brov2/desired_state (brov2_hybrid/DesiredState)", "/brov2/dive_done (std_msgs/Bool)")


def test_bag_topic_of_another_type(tmp_path):
    path = write_bag(tmp_path / "good.bag")
    assert_parts(bag_refused(path, "/brov2/dive_done"),
                 "good.bag: topic '/brov2/dive_done': expected type brov2_hybrid/DesiredState, found std_msgs/Bool")


def test_bag_pitch_over_limit_and_command_over_one(tmp_path):
    path = write_bag(tmp_path / "pitch.bag", pitches_rad=(0.0, math.radians(85.0)))
    assert_parts(bag_refused(path), "pitch.bag:%s: message 2: field 'pitch_rad'" % TOPIC, "(85.00 deg)")
    path = write_bag(tmp_path / "surge.bag", surge=1.0000001)
    assert_parts(bag_refused(path), "surge.bag:%s: message 1: field 'surge'" % TOPIC, "got 1.0000001")
