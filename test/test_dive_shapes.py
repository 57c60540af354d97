"""Dives built in code (brov2_hybrid.dive.shapes) and the log-replay inputs (brov2_hybrid.analysis.log_replay)."""
import math

import numpy as np
import pytest

from brov2_hybrid.analysis.log_replay import aligned_dive, dive_from_log
from brov2_hybrid.dive.shapes import sine_dive, step_dive
from brov2_hybrid.errors import Brov2Error


def test_step_dive_holds_zero_then_the_step_on_one_axis():
    d = step_dive(0.5, 1.0, 2.0, 10.0, axis=0)
    assert np.allclose(d.t_s, np.arange(21) / 10.0)             # both ends included
    assert np.all(d.eta2d_rad[d.t_s < 1.0, 0] == 0.0)
    assert np.all(d.eta2d_rad[d.t_s >= 1.0, 0] == 0.5)
    assert np.all(d.eta2d_rad[:, 1:] == 0.0) and np.all(d.u_linear == 0.0)


def test_sine_dive_samples_the_sine_on_yaw():
    d = sine_dive(0.2, 0.5, 4.0, 20.0)
    assert d.t_s.size == 81
    assert np.allclose(d.eta2d_rad[:, 2], 0.2 * np.sin(2 * math.pi * 0.5 * d.t_s))
    assert np.all(d.eta2d_rad[:, :2] == 0.0)
    assert d.source == "sine 0.5 Hz"


def test_aligned_dive_moves_the_step_to_the_given_time():
    d = aligned_dive(step_dive(0.3, 2.0, 8.0, 20.0), 3.0)
    first_moved = d.t_s[np.argmax(d.eta2d_rad[:, 2] > 0.15)]
    assert first_moved == pytest.approx(3.0)
    assert d.t_s[0] == 0.0 and d.eta2d_rad[0, 2] == 0.0         # held at the first row before


def test_aligned_dive_refuses_a_dive_without_a_yaw_step():
    with pytest.raises(Brov2Error, match="no yaw step"):
        aligned_dive(sine_dive(0.0, 1.0, 2.0, 10.0), 1.0)


def test_dive_from_log_drops_repeated_times_and_clips_linear_commands():
    log = {"time_s": np.array([5.0, 5.1, 5.1, 5.2]),
           "roll_d_rad": np.zeros(4), "pitch_d_rad": np.zeros(4), "yaw_d_rad": np.array([0.0, 0.1, 0.1, 0.2]),
           "surge_cmd": np.array([0.0, 2.0, 2.0, -3.0]), "sway_cmd": np.zeros(4), "heave_cmd": np.zeros(4)}
    d = dive_from_log(log)
    assert np.allclose(d.t_s, [0.0, 0.1, 0.2])
    assert np.allclose(d.eta2d_rad[:, 2], [0.0, 0.1, 0.2])
    assert np.allclose(d.u_linear[:, 0], [0.0, 1.0, -1.0])
