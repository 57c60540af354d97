"""brov2-analyze tether --case free-float: seed 003's free-floating tethered vehicle (Sec. 6, Figs. 8-10)."""
import dataclasses
import json

import numpy as np
import pytest

from brov2_hybrid.analysis import tether_experiment
from brov2_hybrid.analysis.cli import main


@pytest.fixture(scope="module")
def case():
    return tether_experiment.load_case()


def test_the_free_float_case_reproduces_the_seed(tmp_path, case):
    """The command writes the JSON the issue names and every check against the seed holds: the
    path passes Fig. 8's position, the vehicle ends at the surface, further east than north, on
    a taut 15 m cable, the force constant after 150 s."""
    assert main(["tether", "--case", "free-float", "--no-convergence", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "tether_free_float.json").read_text())
    assert (tmp_path / "tether_free_float.png").stat().st_size > 10000
    assert result["verdict"] == "agrees", result["checks"]
    path = np.array(result["path_ned_m"])
    assert path[-1, 0] >= 150.0 and np.all(np.diff(path[:, 0]) <= 0.5 + 1e-9)
    final = np.array(result["final_position_ned_m"])
    np.testing.assert_allclose(final, path[-1, 1:4])
    assert 0.0 < final[0] < final[1]                                    # drifts north-east, east ahead
    assert abs(np.linalg.norm(final) - case.length_m) < 0.01 * case.length_m   # held on the taut cable
    assert result["checks"]["passes_fig8_position"]["value_m"] < case.snapshot_tolerance_m
    force = np.array(result["steady_force_ned_n"])
    # The cable pulls the vehicle back toward the base, against the current.
    assert force[0] < 0.0 and force[1] < 0.0 and np.dot(force, final) < 0.0


def test_without_the_tether_the_seed_is_not_reproduced(case):
    """Outcome: the same case with the tether switched off (its length far beyond the run's
    drift, so it never tightens) drifts away with the current and fails the seed's checks."""
    loose = dataclasses.replace(case, length_m=500.0, duration_s=60.0)
    result = tether_experiment.summarize(loose, tether_experiment.fly(loose))
    assert result["verdict"] == "DIFFERS"
    assert not result["checks"]["passes_fig8_position"]["ok"]
    assert np.linalg.norm(result["final_position_ned_m"][:2]) > 25.0


def test_halving_the_step_or_doubling_the_nodes_moves_the_path_by_millimetres(case):
    """Convergence on the case's first 60 s (the swing up, where the cable moves most): half the plant's
    and the cable's step, twice the nodes."""
    short = dataclasses.replace(case, duration_s=60.0)
    run = tether_experiment.fly(short)
    finer = tether_experiment.fly(short, dt_s=0.5 * run["dt_s"], step_s=0.5 * run["step_s"])
    more = tether_experiment.fly(short, segments=2 * run["segments"])
    result = tether_experiment.summarize(short, run, finer, more)
    for name in ("half_step", "double_nodes"):
        assert result["convergence"][name]["largest_path_gap_m"] < case.convergence_tolerance_m, name


def test_the_cable_steps_once_per_step_s_and_keeps_the_path_of_a_step_every_plant_step(case):
    """Outcome of ``tether.step_s``: over the case's first 20 s the cable is solved about once per
    step_s (halves where a solve did not converge), not at every plant step, and the vehicle's path
    stays within the case's convergence tolerance of the cable stepped with every plant step."""
    short = dataclasses.replace(case, duration_s=20.0)
    every = tether_experiment.fly(short, step_s=1e-9)       # rounds to one plant step
    run = tether_experiment.fly(short)
    plant_steps = int(round(short.duration_s / run["dt_s"]))
    per_step = int(round(run["step_s"] / run["dt_s"]))
    assert per_step > 1                                      # the default spans many plant steps
    assert every["solves"] == plant_steps
    assert plant_steps / per_step <= run["solves"] <= 4 * plant_steps / per_step
    assert tether_experiment.largest_gap_m(run["path"], every["path"]) < case.convergence_tolerance_m
