"""The saturation-aware allocator (brov2_hybrid.vehicle.saturating_allocation) against independent expectations.

Expectations come from the thruster geometry (hand-derived maxima of pure manoeuvres),
the thrust table's end points (the limits), T @ forces (what is delivered) and a brute-
force search over the null space of T (scipy.linalg.null_space, a grid of z): never
from the allocator's own LP / NNLS.
"""
import math
import os

import numpy as np
import pytest
from scipy.linalg import null_space

from brov2_hybrid.vehicle import allocation
from brov2_hybrid.vehicle.saturating_allocation import SaturatingAllocator, least_distance
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

ANGULAR = [3, 4, 5]
LINEAR = [0, 1, 2]
#: Forces within the limits to this [N] (the LP path clips to the exact limits).
LIMIT_TOL_N = 1e-9
#: Delivered torque equals the requested one to this [N m] (LP tolerance 1e-7 relative).
TORQUE_TOL = 1e-5


@pytest.fixture(scope="module")
def heavy():
    return load_vehicle("bluerov2_heavy")


@pytest.fixture(scope="module")
def sat(heavy):
    return SaturatingAllocator(heavy)


def _limits(vehicle):
    """(reverse, forward) limits [N] read from the thrust table's end points."""
    return -float(vehicle.table.force_n[0]), float(vehicle.table.force_n[-1])


def _within_limits(vehicle, f):
    rev, fwd = _limits(vehicle)
    return np.all(f >= -rev - LIMIT_TOL_N) and np.all(f <= fwd + LIMIT_TOL_N)


def _scale_of(delivered, requested):
    """s with delivered = s * requested (least squares), and the residual."""
    req = np.asarray(requested)
    s = float(delivered @ req / (req @ req))
    return s, float(np.max(np.abs(delivered - s * req)))


def test_within_the_limits_it_is_the_pseudo_inverse(heavy, sat):
    pinv = allocation.PseudoInverseAllocator(heavy)
    rng = np.random.default_rng(1)
    checked = 0
    for u in rng.uniform(-0.5, 0.5, (400, 6)):
        f = pinv.forces(u)
        if _within_limits(heavy, f):
            np.testing.assert_array_equal(sat.forces(u), f)
            checked += 1
    assert checked > 100


def test_pure_yaw_beyond_the_limits_is_the_geometric_maximum(heavy, sat):
    # Yaw arm of each horizontal thruster: (|x| + |y|) / sqrt2 (thrust at 45 deg). Full
    # yaw: two thrusters forward at the table's maximum, two in reverse at its maximum.
    x, y = np.abs(heavy.thrusters.positions_m[0, :2])
    arm = (x + y) / math.sqrt(2.0)
    rev, fwd = _limits(heavy)
    yaw_max = 2.0 * arm * (fwd + rev)
    f = sat.forces([0, 0, 0, 0, 0, 1.0])
    tau = heavy.T @ f
    assert _within_limits(heavy, f)
    np.testing.assert_allclose(tau, [0, 0, 0, 0, 0, yaw_max], atol=TORQUE_TOL)
    assert yaw_max < heavy.tau_max[5]               # the request is beyond what the thrusters give
    f_neg = sat.forces([0, 0, 0, 0, 0, -1.0])
    np.testing.assert_allclose(heavy.T @ f_neg, [0, 0, 0, 0, 0, -yaw_max], atol=TORQUE_TOL)


def test_a_yaw_the_pseudo_inverse_cannot_give_uses_the_null_space_least_norm(heavy, sat):
    # u_yaw = 0.85: Eq. 9 asks +-a per horizontal thruster with a > the reverse limit;
    # adding the same force c to all four (their null-space direction: no wrench) keeps the
    # yaw; the least-norm choice is the smallest c that brings the reverse ones to the limit.
    x, y = np.abs(heavy.thrusters.positions_m[0, :2])
    arm = (x + y) / math.sqrt(2.0)
    rev, fwd = _limits(heavy)
    yaw = 0.85 * heavy.tau_max[5]
    a = yaw / (4.0 * arm)
    assert a > rev and a - rev + a < fwd             # Eq. 9 exceeds the reverse limit; the shift fits
    c = a - rev
    forward = np.sign(heavy.T[5, :4]) > 0             # thrusters 1 and 4 turn the vehicle to positive yaw
    expected = np.zeros(8)
    expected[:4] = np.where(forward, a + c, -a + c)
    f = sat.forces([0, 0, 0, 0, 0, 0.85])
    np.testing.assert_allclose(f, expected, atol=1e-9)
    np.testing.assert_allclose(heavy.T @ f, [0, 0, 0, 0, 0, yaw], atol=1e-9)


def test_roll_is_kept_and_heave_scaled_along_its_direction(heavy, sat):
    # Full upward heave with roll 0.3: the vertical thrusters on the side that must push
    # less sit at the reverse limit; roll = 2 y (f_a + rev) fixes the others' force f_a.
    y = abs(heavy.thrusters.positions_m[4, 1])
    rev, _ = _limits(heavy)
    roll = 0.3 * heavy.tau_max[3]
    heave_max = 4.0 * rev - roll / y                  # |sum of the four| at best
    f = sat.forces([0, 0, -1.0, 0.3, 0, 0])
    tau = heavy.T @ f
    assert _within_limits(heavy, f)
    np.testing.assert_allclose(tau, [0, 0, -heave_max, roll, 0, 0], atol=TORQUE_TOL)
    assert heave_max < heavy.tau_max[2]


def _null_space_grid_best(vehicle, tau_ang, tau_lin, half_width_n=120.0, points=401):
    """Largest s in [0, 1] with tau_ang + s tau_lin deliverable, found on a grid of the null space.

    A lower bound of the true maximum (the grid may miss the best z); None if no grid
    point delivers tau_ang at all.
    """
    rows = list(vehicle.actuated_dofs)                 # passive rows are free
    T = vehicle.T[rows]
    N = null_space(T)
    p, q = np.linalg.pinv(T) @ tau_ang[rows], np.linalg.pinv(T) @ tau_lin[rows]
    g = np.linspace(-half_width_n, half_width_n, points)
    Z = np.stack(np.meshgrid(*([g] * N.shape[1]), indexing="ij"), -1).reshape(-1, N.shape[1])
    base = p[None, :] + Z @ N.T                       # forces at s = 0, one row per z
    rev, fwd = _limits(vehicle)
    lo, hi = np.zeros(len(Z)), np.ones(len(Z))
    for i in range(T.shape[1]):
        if abs(q[i]) < 1e-12:
            ok = (base[:, i] >= -rev) & (base[:, i] <= fwd)
            hi = np.where(ok, hi, -1.0)
            continue
        a, b = (-rev - base[:, i]) / q[i], (fwd - base[:, i]) / q[i]
        lo, hi = np.maximum(lo, np.minimum(a, b)), np.minimum(hi, np.maximum(a, b))
    feasible = hi >= lo
    return float(hi[feasible].max()) if feasible.any() else None


@pytest.mark.parametrize("seed", range(12))
def test_saturated_commands_keep_the_torque_and_scale_the_translation(heavy, sat, seed):
    rng = np.random.default_rng(100 + seed)
    u = np.concatenate([rng.choice([-1.0, 1.0], 3) * rng.uniform(0.6, 1.0, 3), rng.uniform(-0.5, 0.5, 3)])
    tau = heavy.tau_max * u
    assert not _within_limits(heavy, heavy.T_pinv @ tau)      # Eq. 9 would exceed a limit
    f = sat.forces(u)
    assert _within_limits(heavy, f)
    delivered = heavy.T @ f
    np.testing.assert_allclose(delivered[ANGULAR], tau[ANGULAR], atol=TORQUE_TOL)
    s, off_direction = _scale_of(delivered[LINEAR], tau[LINEAR])
    assert off_direction < TORQUE_TOL and 0.0 <= s < 1.0
    tau_ang, tau_lin = np.where(np.isin(np.arange(6), ANGULAR), tau, 0.0), np.where(np.isin(np.arange(6), LINEAR), tau, 0.0)
    best = _null_space_grid_best(heavy, tau_ang, tau_lin)
    assert best is not None and s >= best - 1e-9         # no grid point does better


def test_an_undeliverable_torque_is_scaled_along_its_direction(heavy, sat):
    u = np.array([0.3, -0.2, 0.1, 1.0, -1.0, 1.0])
    f = sat.forces(u)
    assert _within_limits(heavy, f)
    delivered = heavy.T @ f
    s_a, off = _scale_of(delivered[ANGULAR], (heavy.tau_max * u)[ANGULAR])
    assert off < TORQUE_TOL and 0.0 < s_a < 1.0
    # No null-space grid point delivers the whole torque even without translation.
    tau_ang = np.where(np.isin(np.arange(6), ANGULAR), heavy.tau_max * u, 0.0)
    assert _null_space_grid_best(heavy, tau_ang, np.zeros(6)) is None


def test_six_thruster_vehicle_with_a_passive_dof(tmp_path):
    """bluerov2 (pitch passive): the same properties over the actuated DOFs."""
    v = _vehicle_named("bluerov2", "saturating", tmp_path)
    assert isinstance(v.allocator, SaturatingAllocator)
    pinv = allocation.PseudoInverseAllocator(v)
    rng = np.random.default_rng(3)
    saturated = torque_scaled = 0
    for u in rng.uniform(-1.0, 1.0, (60, 6)):
        u[4] = 0.0                                      # the controller never commands a passive DOF
        f = v.allocator.forces(u)
        assert _within_limits(v, f)
        if _within_limits(v, pinv.forces(u)):
            np.testing.assert_array_equal(f, pinv.forces(u))
            continue
        saturated += 1
        delivered, tau = v.T @ f, v.tau_max * u
        s_a, off_a = _scale_of(delivered[[3, 5]], tau[[3, 5]])
        s_l, off_l = _scale_of(delivered[LINEAR], tau[LINEAR])
        assert off_a < TORQUE_TOL and off_l < TORQUE_TOL and -1e-9 <= s_l <= 1.0 + 1e-9 and s_a <= 1.0 + 1e-9
        if s_a < 1.0 - 1e-6:                           # the torque scaled: no translation was wanted more
            tau_ang = np.where(np.isin(np.arange(6), [3, 5]), tau, 0.0)
            assert _null_space_grid_best(v, tau_ang, np.zeros(6)) is None
            torque_scaled += 1
    assert saturated > 10 and torque_scaled > 0


def _vehicle_named(name, allocator, tmp_path):
    """The vehicle ``name`` with its file's ``allocator`` key changed (thrust CSV path made absolute)."""
    import yaml
    from brov2_hybrid import params
    path = params.vehicle_file(name)
    with open(path) as handle:
        data = yaml.safe_load(handle)
    data["allocator"] = allocator
    data["thrust_table"]["csv_file"] = os.path.normpath(os.path.join(os.path.dirname(path),
                                                                     data["thrust_table"]["csv_file"]))
    out = tmp_path / ("%s_%s.yaml" % (name, allocator))
    out.write_text(yaml.safe_dump(data))
    return load_vehicle(str(out))


def test_named_in_a_vehicle_file_it_drives_algorithm_2(heavy, tmp_path):
    v = _vehicle_named("bluerov2_heavy", "saturating", tmp_path)
    u = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.5])            # full surge and half yaw: Eq. 9 saturates
    delivered = v.T @ v.table.force_from_pwm(v.mixer().pwm(u))
    paper = heavy.T @ heavy.table.force_from_pwm(heavy.mixer().pwm(u))
    yaw = 0.5 * v.tau_max[5]
    assert abs(delivered[5] - yaw) < 0.01 * yaw             # through the table: PWM steps only
    assert abs(paper[5] - yaw) > 0.1 * yaw                  # the clipped pseudo-inverse loses yaw


def test_least_distance_program():
    np.testing.assert_allclose(least_distance(np.eye(2), [1.0, 2.0]), [1.0, 2.0], atol=1e-12)
    np.testing.assert_allclose(least_distance(np.eye(2), [-1.0, -2.0]), [0.0, 0.0], atol=1e-12)
    # z1 + z2 >= 2: the closest point of the half-plane is (1, 1).
    np.testing.assert_allclose(least_distance([[1.0, 1.0]], [2.0]), [1.0, 1.0], atol=1e-12)
    assert least_distance([[1.0], [-1.0]], [1.0, 0.0]) is None     # z >= 1 and z <= 0
    assert least_distance(np.zeros((2, 0)), [1.0, -1.0]) is None
    np.testing.assert_array_equal(least_distance(np.zeros((2, 0)), [0.0, -1.0]), np.zeros(0))
