"""The bundled AR pilot dive (data/dives/ar_pilot_dive.csv) and its synthesis."""
import os

import numpy as np
import pytest

from brov2_hybrid import paths
from brov2_hybrid.analysis.synth_dive import dive_statistics, load_recipe, synthesize
from brov2_hybrid.dive.dive_csv import load_dive_csv

DIVE = os.path.join(paths.package_root(), "data", "dives", "ar_pilot_dive.csv")


@pytest.fixture(scope="module")
def dive():
    return load_dive_csv(DIVE)


def test_bundled_dive_is_valid_and_two_to_three_minutes(dive):
    assert 120.0 <= dive.duration_s <= 180.0
    assert np.all(np.diff(dive.t_s) > 0)


def test_angles_and_rates_in_a_pilots_range(dive):
    s = dive_statistics(dive)
    for axis in ("roll", "pitch"):
        assert -30.0 <= s[axis + "_min_deg"] and s[axis + "_max_deg"] <= 30.0
    assert -180.0 < s["yaw_min_deg"] and s["yaw_max_deg"] < 180.0
    for axis in ("roll", "pitch", "yaw"):
        assert s[axis + "_peak_rate_deg_s"] <= 45.0


def test_every_dof_is_exercised(dive):
    deg = np.degrees(dive.eta2d_rad)
    for k in range(3):
        assert np.ptp(deg[:, k]) >= 30.0                       # real angle moves on each axis
    for k in range(3):
        u = dive.u_linear[:, k]
        assert np.max(np.abs(u)) <= 0.5 + 1e-9
        assert np.max(u) >= 0.15 or np.min(u) <= -0.15         # a real linear command on each DOF
        assert np.mean(np.abs(u) > 0.1) > 0.1                  # ... for a real share of the dive


def test_starts_and_ends_level_and_still(dive):
    head, tail = dive.t_s < 1.0, dive.t_s > dive.t_s[-1] - 1.0
    assert np.all(np.abs(dive.eta2d_rad[head]) < 1e-9) and np.all(dive.u_linear[head] == 0.0)
    assert np.all(np.abs(np.degrees(dive.eta2d_rad[tail, :2])) < 0.01) and np.all(dive.u_linear[tail] == 0.0)


def test_synthesis_is_seeded_and_reproduces_the_file(dive):
    again = synthesize(load_recipe())
    np.testing.assert_allclose(again.t_s, dive.t_s, atol=5e-4)
    np.testing.assert_allclose(np.degrees(again.eta2d_rad), np.degrees(dive.eta2d_rad), atol=1e-3)
    np.testing.assert_allclose(again.u_linear, dive.u_linear, atol=1e-3)
