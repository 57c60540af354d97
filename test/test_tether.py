"""The lumped-mass tether (brov2_hybrid.sim.tether, tether_model): analytic cases, invariants, the plant's coupling."""
import dataclasses
import math

import numpy as np
import pytest

from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import load_yaml
from brov2_hybrid import paths
from brov2_hybrid.sim import tether as tether_math
from brov2_hybrid.sim.config import load_sim_options
from brov2_hybrid.sim.plant import Plant
from brov2_hybrid.sim.tether_model import Tether, load_tether_settings
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


@pytest.fixture(scope="module")
def settings():
    """Table A1's cable from params/simulator.yaml, switched on."""
    return load_sim_options().tether.with_changes(enabled=True)


def fixed_ends(settings, end_ned_m, current=(0.0, 0.0, 0.0), seconds=20.0, h=0.0025, perturb=0.0):
    """A cable between the base at the origin and a fixed end; returns (p, v, constants)."""
    c = settings.constants(np.array(current))
    n = settings.segments
    end = np.array(end_ned_m, dtype=float)
    p = np.linspace(0.0, 1.0, n + 1)[:, None] * end
    p[1:n] += perturb * np.random.default_rng(0).normal(size=(n - 1, 3))
    v = np.zeros((n + 1, 3))
    zero = np.zeros(3)
    step = tether_math.kernels()["step"]       # compiled where numba is (the same numbers: tested below)
    for _ in range(int(round(seconds / h))):
        p, v, _ = step(p, v, h, zero, zero, end, zero, c, settings.newton_iterations,
                                   settings.newton_tolerance_m_s)
    return p, v, c


def test_the_defaults_are_table_a1s_cable(settings):
    """seed 003 Table A1: 0.043 kg/m, 7.5 mm, C_perp 1.2, C_par 0.01, C_t 100 N s/m, E 6.437e10 N/m^2."""
    assert (settings.mass_per_length_kg_m, settings.diameter_m, settings.normal_drag_coefficient,
            settings.tangential_drag_coefficient, settings.internal_damping_n_s_m,
            settings.young_modulus_n_m2) == (0.043, 0.0075, 1.2, 0.01, 100.0, 6.437e10)
    assert load_sim_options().tether.enabled is False          # off unless asked for


def test_a_stretched_cable_settles_straight_with_the_elastic_tension(settings):
    """Ends 0.1 % further apart than the cable is long, nodes knocked off the line: they settle
    on the line, evenly spaced, and the pull on each end is E A * strain (Eq. 36)."""
    s = settings.with_changes(length_m=10.0, segments=8)
    p, v, c = fixed_ends(s, [0.0, 0.0, 10.01], perturb=0.01)
    strain = 0.001
    area = math.pi * 0.25 * s.diameter_m ** 2
    expected = s.young_modulus_n_m2 * area * strain
    np.testing.assert_allclose(p[:, :2], 0.0, atol=1e-9)
    np.testing.assert_allclose(np.diff(p[:, 2]), 10.01 / 8, rtol=1e-9)
    np.testing.assert_allclose(tether_math.end_force(p, v, c[0], c[1], c[2]), [0.0, 0.0, -expected], rtol=1e-7,
                               atol=1e-9)
    np.testing.assert_allclose(tether_math.base_force(p, v, c[0], c[1], c[2]), [0.0, 0.0, expected], rtol=1e-7,
                               atol=1e-9)


def test_a_slack_cable_pulls_nothing(settings):
    """Ends closer together than the cable's length, still water: no segment carries compression."""
    s = settings.with_changes(length_m=10.0, segments=8)
    p, v, c = fixed_ends(s, [0.0, 0.0, 9.0], seconds=2.0)
    for j in range(s.segments):
        assert tether_math.segment_axial(p, v, j, c[0], c[1], c[2])[0] == 0.0


def test_the_ends_hold_the_drag_of_a_cable_across_the_current(settings):
    """A taut cable across a current, at rest: the pull on its two ends carries the normal drag
    1/2 rho d C_perp U^2 (Eq. 31) of the n - 1 interior nodes' share of the cable, (n - 1) / n of
    its length, along the current (momentum balance; the half segments at the given end nodes
    load those nodes, and the vehicle feels only its end's axial tension, as seed 003 says)."""
    s = settings.with_changes(length_m=10.0, segments=10)
    current = 0.5
    p, v, c = fixed_ends(s, [0.0, 0.0, 10.002], current=(current, 0.0, 0.0), seconds=20.0)
    pull = tether_math.end_force(p, v, c[0], c[1], c[2]) + tether_math.base_force(p, v, c[0], c[1], c[2])
    drag = 0.5 * s.water_density_kg_m3 * s.diameter_m * s.normal_drag_coefficient * current ** 2 * 10.002 * 0.9
    # The cable bows a little, so its length across the flow is a little more than the chord.
    np.testing.assert_allclose(pull, [drag, 0.0, 0.0], rtol=2e-3, atol=1e-6)
    assert np.max(np.abs(v[1:-1])) < 1e-6


def test_the_compiled_step_gives_the_python_numbers(settings):
    """numba's step (where it is installed) answers bit for bit as the Python function."""
    kernels = tether_math.kernels()
    rng = np.random.default_rng(7)
    n = 12
    p = np.linspace(0.0, 1.0, n + 1)[:, None] * np.array([3.0, 4.0, 12.01])
    p[1:n] += rng.normal(0.0, 0.02, (n - 1, 3))
    v = rng.normal(0.0, 0.3, (n + 1, 3))
    s = settings.with_changes(length_m=13.0, segments=n)
    args = (p, v, 0.0025, np.zeros(3), np.zeros(3), p[n] + 0.001, np.array([0.4, 0.0, 0.0]),
            s.constants(np.array([0.3, 0.2, 0.0])), 6, 1e-6)
    for a, b in zip(kernels["step"](*args), tether_math.step(*args)):
        np.testing.assert_array_equal(a, b)


def test_the_block_tridiagonal_solver_solves_the_system():
    """The implicit step's linear solve (block elimination, 3 x 3 blocks) against numpy's dense solve, on a
    random symmetric, diagonally dominant block tridiagonal system like a cable's Jacobian."""
    rng = np.random.default_rng(7)
    m = 9
    upper = rng.normal(size=(m, 3, 3))
    diag = np.empty((m, 3, 3))
    for r in range(m):
        a = rng.normal(size=(3, 3))
        diag[r] = a @ a.T + 20.0 * np.eye(3)
    rhs = rng.normal(size=(m, 3))
    dense = np.zeros((3 * m, 3 * m))
    for r in range(m):
        dense[3 * r:3 * r + 3, 3 * r:3 * r + 3] = diag[r]
        if r + 1 < m:
            dense[3 * r:3 * r + 3, 3 * r + 3:3 * r + 6] = upper[r]
            dense[3 * r + 3:3 * r + 6, 3 * r:3 * r + 3] = upper[r].T
    x = np.empty((m, 3))
    tether_math.solve_block_tridiagonal_into(diag, upper, rhs, np.empty((m, 3, 3)), np.empty((m, 3)), x,
                                             np.empty((m, 3, 3)), np.empty((3, 3)))
    np.testing.assert_allclose(x.ravel(), np.linalg.solve(dense, rhs.ravel()), rtol=1e-10, atol=1e-12)
    inv = np.empty((3, 3))
    tether_math.inverse3_into(diag[0], inv)
    np.testing.assert_allclose(inv @ diag[0], np.eye(3), atol=1e-12)


def test_the_pull_acts_at_the_attachment_point(settings):
    """The body wrench is R^T F at the attachment point: its moment is r_a x R^T F."""
    tether = Tether(settings, np.zeros(3), [-0.2, 0.1, -0.05])
    yaw = 0.7
    state = [0.0, 0.0, 5.0, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)] + [0.0] * 6
    tether.reset(state)
    tether.p[-2] = tether.p[-1] + np.array([0.0, 0.0, -2.0 * tether.settings.segment_length_m])  # stretched upward
    k_axial, l0, damping = tether.settings.constants(np.zeros(3))[:3]
    tether.hold[1:4] = tether_math.end_force(tether.p, tether.v, k_axial, l0, damping)   # the pull held
    wrench = tether.wrench_body(state)
    force_ned = tether.force_ned()
    R = np.array([[math.cos(yaw), -math.sin(yaw), 0.0], [math.sin(yaw), math.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(wrench[:3], R.T @ force_ned, rtol=1e-12)
    np.testing.assert_allclose(wrench[3:], np.cross([-0.2, 0.1, -0.05], R.T @ force_ned), rtol=1e-12)
    assert force_ned[2] < 0.0           # the cable pulls the vehicle up, toward its next node


def test_a_slack_tether_in_still_water_leaves_the_vehicle_alone():
    """Tether on, no current, a 30 m cable to a vehicle 5 m down: it never tightens, so the plant
    flies as without it (the same numbers)."""
    vehicle = load_vehicle()
    base = load_sim_options()
    runs = []
    for enabled in (False, True):
        options = dataclasses.replace(base, tether=base.tether.with_changes(enabled=enabled, length_m=30.0))
        plant = Plant(vehicle, options)
        plant.reset(eta=np.array([0.0, 0.0, 5.0, 0.0, 0.0, 0.3]))
        plant.set_motor_pwm([1600, 1400, 1550, 1500, 1560, 1560, 1440, 1440])
        plant.advance(2.0)
        runs.append(plant.eta)
        if enabled:
            assert not np.any(plant.tether.force_ned())
    np.testing.assert_array_equal(runs[0], runs[1])


def test_a_tether_in_a_current_holds_the_vehicle_back():
    """Outcome: in a 0.5 m/s current the untethered vehicle drifts with the water; on a 15 m
    tether it stops, taut, 15 m from the base (fails when the tether is switched off)."""
    vehicle = load_vehicle("aau_bluerov2_heavy")
    base = load_sim_options()
    distances = {}
    for enabled in (False, True):
        options = dataclasses.replace(base, current_ned_m_s=np.array([0.5, 0.0, 0.0]),
                                      tether=base.tether.with_changes(enabled=enabled, length_m=15.0))
        plant = Plant(vehicle, options)
        plant.reset(eta=np.array([0.0, 0.0, 15.0, 0.0, 0.0, 0.0]))
        plant.advance(60.0)
        distances[enabled] = float(np.linalg.norm(plant.eta[:3]))
    assert distances[False] > 25.0
    assert 14.9 < distances[True] < 15.1


def test_bad_tether_settings_name_the_file_and_the_key(tmp_path):
    data = load_yaml(paths.params_path("simulator.yaml"))
    data["tether"]["segments"] = 1
    with pytest.raises(ParameterError, match=r"x\.yaml:tether\.segments: expected an integer"):
        load_tether_settings("x.yaml", data)
    data["tether"]["segments"] = 10
    data["tether"]["stiffness"] = 3
    with pytest.raises(ParameterError, match=r"x\.yaml:tether: unknown key\(s\) \['stiffness'\]"):
        load_tether_settings("x.yaml", data)


def test_the_summary_line_averages_the_pull_as_table_9_does():
    """The simulators' closing line: mean |F| per NED axis over the steps and the largest."""
    vehicle = load_vehicle("aau_bluerov2_heavy")
    base = load_sim_options()
    options = dataclasses.replace(base, current_ned_m_s=np.array([0.5, 0.0, 0.0]),
                                  tether=base.tether.with_changes(enabled=True, length_m=15.0))
    plant = Plant(vehicle, options)
    plant.reset(eta=np.array([0.0, 0.0, 15.0, 0.0, 0.0, 0.0]))
    pulls = []
    for _ in range(200):
        plant.step(1)
        pulls.append(np.abs(plant.tether.force_ned()))
    tether = plant.tether
    np.testing.assert_allclose(tether.pull_sum_n / tether.steps, np.mean(pulls, axis=0), rtol=1e-12)
    np.testing.assert_allclose(tether.pull_max_n, np.max(pulls, axis=0), rtol=1e-12)
    assert tether.summary_line().startswith("tether (15 m, 10 segments): 200 steps, pull on the vehicle")


def test_the_simulators_command_line_turns_the_tether_on():
    """brov2_sitl / ardusub_sitl --tether (the launch file's tether:=true): the plant gets the tether."""
    import argparse
    from brov2_hybrid.sim.command_line import add_physics_arguments, physics_from_args
    parser = add_physics_arguments(argparse.ArgumentParser())
    for argv, enabled in (([], False), (["--tether", "--current-ned-m-s", "0.2", "0.1", "0"], True)):
        vehicle, options, eta = physics_from_args(parser.parse_args(argv))
        assert options.tether.enabled is enabled
        assert (Plant(vehicle, options).tether is not None) is enabled
    np.testing.assert_array_equal(options.current_ned_m_s, [0.2, 0.1, 0.0])


def test_a_cable_step_that_newton_cannot_solve_whole_is_taken_in_halves():
    """The vehicle driven hard on a slack cable that snaps taut (a snap's outcome depends on the step at
    any step, so no path is compared): some 0.1 s cable steps do not converge whole and are taken in
    halves (more solves than cable steps), every figure stays finite, and the cable holds the vehicle:
    its attachment point never gets further from the base than the cable's length and a strain far
    above any the pulls here stretch it by."""
    vehicle = load_vehicle("bluerov2_heavy")
    base = load_sim_options()
    length = 12.0
    for step_s in (1e-9, 0.1):          # 1e-9 rounds to one plant step
        options = dataclasses.replace(base, current_ned_m_s=np.array([0.3, 0.2, 0.0]), tether=base.tether.with_changes(
            enabled=True, length_m=length, base_ned_m=np.array([0.0, 0.0, 0.0]), step_s=step_s))
        plant = Plant(vehicle, options)
        plant.reset(eta=np.array([0.0, 0.0, 8.0, 0.0, 0.0, 0.0]))     # 8 m below the base: slack
        plant.set_motor_pwm([1700, 1700, 1300, 1300, 1500, 1500, 1500, 1500])
        reach = []
        for _ in range(200):                                          # 20 s
            plant.advance(0.1)
            end, _ = plant.tether.attachment_state(plant._x)             # the plant's 13-state
            reach.append(np.linalg.norm(end - options.tether.base_ned_m))
            assert np.all(np.isfinite(plant.tether.p)) and np.all(np.isfinite(plant.tether.force_ned()))
        assert max(reach) < length * 1.001, step_s
        assert max(reach) > length * 0.85, step_s                     # it did reach the cable (bowed by the current)
        if step_s == 0.1:
            assert plant.tether.solves > 200                          # some cable steps were split


def test_the_newton_settings_decide_how_the_cable_steps_are_solved():
    """Outcome of ``newton_iterations`` and ``newton_tolerance_m_s`` on a cable swinging taut in a current:
    fewer iterations allowed, more cable steps are taken in halves (with two, many down to one plant
    step, whose solve then stops short, and the path goes astray by several millimetres); a looser
    tolerance, fewer iterations a solve, the vehicle's path within a millimetre."""
    vehicle = load_vehicle("aau_bluerov2_heavy")
    base = load_sim_options()
    runs = {}
    for name, changes in (("default", {}), ("two iterations", {"newton_iterations": 2}),
                          ("loose", {"newton_tolerance_m_s": 1e-3})):
        options = dataclasses.replace(base, current_ned_m_s=np.array([0.3536, 0.3536, 0.0]),
                                      tether=base.tether.with_changes(enabled=True, length_m=15.0, **changes))
        plant = Plant(vehicle, options)
        plant.reset(eta=np.array([0.0, 0.0, 15.0, 0.0, 0.0, 0.0]))
        plant.advance(20.0)
        t = plant.tether
        runs[name] = (t.solves, t.iterations / t.solves, np.array(plant.eta[:3]))
    assert runs["two iterations"][0] > runs["default"][0]
    assert runs["loose"][1] < runs["default"][1]
    assert np.linalg.norm(runs["loose"][2] - runs["default"][2]) < 0.001
    assert np.linalg.norm(runs["two iterations"][2] - runs["default"][2]) > 0.005


def test_the_axial_force_is_continuous_where_a_segment_goes_taut(settings):
    """The damped law is clipped as a whole: a segment pulled apart at 0.2 m/s carries about C_t x 0.2 N
    on both sides of its unstretched length (clipping the elastic term at l0 and adding the damping
    only beyond it made the force jump there, and Newton's iterates cycle across a jump)."""
    k, l0, damping = settings.axial_stiffness_n_m, settings.segment_length_m, settings.internal_damping_n_s_m
    forces = []
    for length in (l0 - 1e-9, l0 + 1e-9):
        p = np.array([[0.0, 0.0, 0.0], [length, 0.0, 0.0]])
        v = np.array([[0.0, 0.0, 0.0], [0.2, 0.0, 0.0]])
        forces.append(tether_math.segment_axial(p, v, 0, k, l0, damping)[0])
    assert forces[0] == pytest.approx(damping * 0.2, rel=1e-3)
    assert abs(forces[1] - forces[0]) < 1e-2
    p = np.array([[0.0, 0.0, 0.0], [l0 - 1e-3, 0.0, 0.0]])           # slack by a millimetre: none
    assert tether_math.segment_axial(p, np.zeros((2, 3)), 0, k, l0, damping)[0] == 0.0


def test_the_bundled_dive_on_the_tether_solves_every_cable_step_whole():
    """The bench's case (bench.loop.run_tether): the bundled dive on the simulator's tether in the
    free-floating case's current. The current holds segments at the edge of slack; every cable step
    converges whole (none taken in halves), in a few Newton iterations."""
    from brov2_hybrid.analysis.tether_experiment import load_case
    from brov2_hybrid.bench.loop import load_analysis_settings
    from brov2_hybrid.dive.dive_csv import load_dive_csv
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    s = load_analysis_settings()
    dive = load_dive_csv(paths.package_root() + "/" + s.dive.csv_file)
    options = load_sim_options()
    options = dataclasses.replace(options, current_ned_m_s=load_case().current_ned_m_s,
                                  tether=options.tether.with_changes(enabled=True))
    loop = ClosedLoop(s.loop, sim_options=options)
    loop.run(dive)
    t = loop.plant.tether
    assert t.solves == round(dive.duration_s / options.tether.step_s)
    assert t.iterations / t.solves < 0.6 * options.tether.newton_iterations
