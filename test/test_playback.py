"""Dive playback (brov2_hybrid.dive.playback): rows released when due, looping, the dive
source (CSV or bag), and recorded desired states checked as dive rows. Bag files
themselves: test_bag_input.py."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from brov2_hybrid.dive import playback
from brov2_hybrid.dive.dive_csv import Dive, write_dive_csv
from brov2_hybrid.errors import Brov2Error, InputDataError


def _dive(times, yaw):
    n = len(times)
    eta = np.zeros((n, 3))
    eta[:, 2] = yaw
    return Dive(t_s=np.array(times, float), eta2d_rad=eta, u_linear=np.zeros((n, 3)))


def test_playback_releases_rows_only_when_due():
    pb = playback.DivePlayback(_dive([2.0, 2.5, 3.0], [0.1, 0.2, 0.3]), start_s=10.0)
    assert pb.pop_due(9.99) == [] and pb.next_due_s() == 10.0
    rows = pb.pop_due(10.6)
    assert [r[0] for r in rows] == [10.0, 10.5]            # stamped with their due time
    np.testing.assert_allclose([r[1][2] for r in rows], [0.1, 0.2])
    assert not pb.finished and pb.pop_due(10.99) == []
    assert [r[0] for r in pb.pop_due(11.0)] == [11.0]
    assert pb.finished and pb.next_due_s() is None and pb.pop_due(100.0) == []


def test_end_message_says_finished_only_when_the_last_row_was_released():
    pb = playback.DivePlayback(_dive([0.0, 0.5, 1.0, 1.5, 2.0], [0.0] * 5), start_s=10.0)
    pb.pop_due(11.2)                                          # rows at 10.0, 10.5, 11.0 out
    assert pb.rows_released == 3
    assert pb.end_message(11.2) == "dive stopped before its end: at row 3 of 5 (1.2 s of 2.0 s)"
    assert pb.end_message(9.0) == "dive stopped before its end: at row 3 of 5 (0.0 s of 2.0 s)"
    pb.pop_due(12.0)
    assert pb.end_message(12.0) == "dive finished (5 rows)"


def test_end_message_of_a_looping_dive_names_the_loop():
    pb = playback.DivePlayback(_dive([0.0, 1.0], [0.0, 1.0]), start_s=0.0, loop=True, loop_gap_s=0.5)
    pb.pop_due(1.7)                                           # 0.0, 1.0, then loop 2's first row at 1.5
    assert pb.end_message(1.7) == "dive stopped before its end: at row 1 of 2 (0.2 s of 1.0 s) in loop 2"


def test_playback_loops_with_a_gap():
    pb = playback.DivePlayback(_dive([0.0, 1.0], [0.0, 1.0]), start_s=0.0, loop=True, loop_gap_s=0.5)
    stamps = [r[0] for r in pb.pop_due(4.0)]
    assert stamps == [0.0, 1.0, 1.5, 2.5, 3.0, 4.0]
    assert not pb.finished


# ---------------------------------------------------------------- bag samples -> dive
def _desired_msg(stamp_s, yaw, type_name=playback.DESIRED_STATE_TYPE):
    header = SimpleNamespace(stamp=SimpleNamespace(to_sec=lambda: stamp_s))
    return SimpleNamespace(_type=type_name, header=header, roll_rad=0.0, pitch_rad=0.0, yaw_rad=yaw,
                           surge=0.1, sway=0.0, heave=0.0)


def test_desired_samples_from_bag_messages():
    msgs = [(_desired_msg(10.0, 0.1), 50.0), (_desired_msg(0.0, 0.2), 50.5)]   # 2nd: no stamp -> record time
    assert playback.desired_samples(msgs, "x.bag:/t") == [(10.0, 0.0, 0.0, 0.1, 0.1, 0.0, 0.0),
                                                    (50.5, 0.0, 0.0, 0.2, 0.1, 0.0, 0.0)]


def test_desired_samples_name_the_wrong_type():
    msgs = [(_desired_msg(1.0, 0.0), 1.0), (SimpleNamespace(_type="std_msgs/Bool", data=True), 2.0)]
    with pytest.raises(InputDataError, match="x.bag:/t: message 2: expected type brov2_hybrid/DesiredState, "
                                             "found std_msgs/Bool"):
        playback.desired_samples(msgs, "x.bag:/t")



def test_dive_from_samples_rebases_time_and_validates():
    d = playback.dive_from_samples([(100.0, 0, 0, 0.1, 0, 0, 0), (100.5, 0, 0, 0.2, 0.5, 0, 0)], "x.bag:/t")
    np.testing.assert_allclose(d.t_s, [0.0, 0.5])
    np.testing.assert_allclose(d.eta2d_rad[:, 2], [0.1, 0.2])
    with pytest.raises(InputDataError, match="x.bag:/t: message 2: field 'stamp': expected time to increase"):
        playback.dive_from_samples([(1.0, 0, 0, 0, 0, 0, 0), (1.0, 0, 0, 0, 0, 0, 0)], "x.bag:/t")
    with pytest.raises(InputDataError, match="message 1: field 'yaw_rad': expected a finite number"):
        playback.dive_from_samples([(1.0, 0, 0, math.nan, 0, 0, 0)], "x.bag:/t")
    with pytest.raises(InputDataError, match="message 1: field 'heave': expected a command in"):
        playback.dive_from_samples([(1.0, 0, 0, 0, 0, 0, 1.5)], "x.bag:/t")
    with pytest.raises(InputDataError, match="no desired-state messages"):
        playback.dive_from_samples([], "x.bag:/t")


# ---------------------------------------------------------------- dive source
def test_load_dive_takes_exactly_one_source(tmp_path):
    path = str(tmp_path / "dive.csv")
    write_dive_csv(path, [0.0, 1.0], np.radians([[0, 0, 10], [0, 5, 20]]), [[0.1, 0, 0], [0.2, 0, -0.1]])
    d = playback.load_dive(dive_file=path, max_abs_pitch_deg=60.0)
    assert d.source == path and len(d) == 2
    np.testing.assert_allclose(np.degrees(d.eta2d_rad[1]), [0, 5, 20], atol=1e-6)
    with pytest.raises(Brov2Error, match="exactly one of ~dive_file .* and ~bag_file"):
        playback.load_dive(dive_file=path, bag_file="run.bag", bag_topic="/t")
    with pytest.raises(Brov2Error, match="exactly one of"):
        playback.load_dive()


def test_load_dive_applies_the_pitch_limit_to_the_csv(tmp_path):
    path = str(tmp_path / "steep.csv")
    write_dive_csv(path, [0.0], np.radians([[0, 50, 0]]), [[0, 0, 0]])
    assert len(playback.load_dive(dive_file=path, max_abs_pitch_deg=60.0)) == 1
    with pytest.raises(InputDataError, match=r"steep.csv:2: column 'pitch_deg': expected a desired pitch within \+-45"):
        playback.load_dive(dive_file=path, max_abs_pitch_deg=45.0)
