"""Allocation matrix, pseudo-inverse and tau_max against the paper (Eq. 4, 6, Sec. 2.2.2)."""
import math
import os

import numpy as np
import pytest

from brov2_hybrid.vehicle import allocation
from brov2_hybrid.errors import Brov2Error

# Eq. 6 as printed in the paper (rows: thrusters 1-8; columns: surge..yaw).
PAPER_T_PINV = np.array([
    [-0.35, 0.35, 0, 0, 0, 1.32],
    [-0.35, -0.35, 0, 0, 0, -1.32],
    [0.35, 0.35, 0, 0, 0, -1.32],
    [0.35, -0.35, 0, 0, 0, 1.32],
    [0.18, 0.10, 0.25, 1.15, -2.08, 0],
    [0.18, -0.10, 0.25, -1.15, -2.08, 0],
    [-0.18, 0.10, 0.25, 1.15, 2.08, 0],
    [-0.18, -0.10, 0.25, -1.15, 2.08, 0],
])
PAPER_TAU_MAX = np.array([141.29, 141.29, 199.81, 43.56, 23.98, 37.72])
# ArduSub Heavy factors: per motor (roll, pitch, yaw, throttle, forward, lateral).
ARDUSUB_SIGNS = np.array([
    [0, 0, 1, 0, -1, 1], [0, 0, -1, 0, -1, -1], [0, 0, -1, 0, 1, 1], [0, 0, 1, 0, 1, -1],
    [1, -1, 0, -1, 0, 0], [-1, -1, 0, -1, 0, 0], [1, 1, 0, -1, 0, 0], [-1, 1, 0, -1, 0, 0],
])


def test_column_is_direction_and_moment(vehicle):
    """Hand-computed column of thruster 1: d = (-1, 1, 0)/sqrt2, r = (0.156, 0.111, 0.085)."""
    s = 1 / math.sqrt(2)
    expected = [-s, s, 0.0, -0.085 * s, -0.085 * s, (0.156 + 0.111) * s]
    np.testing.assert_allclose(vehicle.T[:, 0], expected, atol=1e-12)


def test_yaw_row_is_0189_not_099(vehicle):
    """Erratum: Eq. 4 prints +-0.99 in the yaw row; the geometry gives +-0.189."""
    np.testing.assert_allclose(np.abs(vehicle.T[5, :4]), 0.1888, atol=5e-4)
    np.testing.assert_allclose(vehicle.T[5, 4:], 0.0, atol=1e-12)


def test_pseudo_inverse_reproduces_eq6(vehicle):
    np.testing.assert_allclose(vehicle.T_pinv, PAPER_T_PINV, atol=0.005)


def test_pseudo_inverse_is_right_inverse(vehicle):
    np.testing.assert_allclose(vehicle.T @ vehicle.T_pinv, np.eye(6), atol=1e-12)


def test_signs_agree_with_ardusub_factors(vehicle):
    """Every non-zero ArduSub factor has the sign of the matching T entry."""
    T_hat = allocation.heuristic_matrix(ARDUSUB_SIGNS)
    nonzero = T_hat != 0
    assert np.all(np.sign(vehicle.T[nonzero]) == np.sign(T_hat[nonzero]))
    np.testing.assert_array_equal(vehicle.T_hat, T_hat)


def test_tau_max_from_paper_limit(vehicle):
    """49.95 N per thruster gives the paper's tau_max.

    The printed figures are rounded to 0.01, and pitch (23.976 -> 23.98) and yaw
    (37.722 -> 37.72) cannot both be met to 0.01 % by any single limit (pitch needs
    49.953..49.963 N, yaw 49.943..49.953 N), so we check 0.02 % and 0.01 absolute.
    """
    tau_max = allocation.tau_max_from_limit(vehicle.T, vehicle.thrusters.directions, 49.95)
    np.testing.assert_allclose(tau_max, PAPER_TAU_MAX, rtol=2e-4)
    np.testing.assert_allclose(tau_max, PAPER_TAU_MAX, atol=0.0101)
    np.testing.assert_allclose(vehicle.tau_max, tau_max)


def test_tau_max_is_reachable_within_its_group(vehicle):
    """tau_max_j comes from the group's thrusters at +-f_max and moves no other DOF of
    that group. Surge and sway leak into the other group: the horizontal thrusters sit
    z = 0.085 m below the CG, so a force (X, Y) there adds K = -z Y and M = z X
    (4 * 0.085/sqrt2 * 49.95 = 12.0 N m at full surge or sway)."""
    horizontal, vertical = allocation.thruster_groups(vehicle.thrusters.directions)
    for j in range(6):
        in_h = j in allocation.HORIZONTAL_DOFS
        group, dofs = (horizontal, allocation.HORIZONTAL_DOFS) if in_h else (vertical, allocation.VERTICAL_DOFS)
        m = np.where(group, 49.95 * np.sign(vehicle.T[j]), 0.0)
        tau = vehicle.T @ m
        assert tau[j] == pytest.approx(vehicle.tau_max[j])
        np.testing.assert_allclose(tau[[k for k in dofs if k != j]], 0.0, atol=1e-9)
        leak = tau[[k for k in range(6) if k not in dofs]]
        if in_h:  # leak into (heave, roll, pitch)
            np.testing.assert_allclose(leak, [0.0, -0.085 * tau[1], 0.085 * tau[0]], atol=1e-9)
        else:  # leak into (surge, sway, yaw)
            np.testing.assert_allclose(leak, 0.0, atol=1e-9)
    assert 0.085 * vehicle.tau_max[0] == pytest.approx(4 * 0.085 / math.sqrt(2) * 49.95)


def test_tau_max_from_table_limit(vehicle):
    """From the 16 V table the symmetric limit is the reverse thrust, 39.9 N."""
    limit = vehicle.table.symmetric_limit_n
    assert limit == pytest.approx(4.069476 * 9.80665, rel=1e-6)
    tau_max = allocation.tau_max_from_limit(vehicle.T, vehicle.thrusters.directions, limit)
    np.testing.assert_allclose(tau_max / PAPER_TAU_MAX, limit / 49.95, rtol=3e-4)


@pytest.mark.parametrize("bad, match", [
    (np.zeros((6, 8)), "rank"),
    (np.full((6, 8), np.nan), "finite"),
    (np.zeros((8, 6)), r"shape \(6, 6\), got \(8, 6\)"),
    (np.zeros(6), r"6 x n matrix"),
])
def test_pseudo_inverse_rejects_bad_matrices(bad, match):
    with pytest.raises(Brov2Error, match=match):
        allocation.pseudo_inverse(bad)


def test_allocation_rejects_non_unit_directions(vehicle):
    with pytest.raises(Brov2Error, match="unit vectors"):
        allocation.allocation_matrix(vehicle.thrusters.positions_m, 2 * vehicle.thrusters.directions)


def test_tau_max_rejects_nonpositive_limit(vehicle):
    with pytest.raises(Brov2Error, match="> 0"):
        allocation.tau_max_from_limit(vehicle.T, vehicle.thrusters.directions, 0.0)


# --------------------------------------------------------------------------- allocator registry
def _vehicle_file_with(tmp_path, allocator):
    """A copy of the Heavy's vehicle file naming ``allocator`` (thrust CSV path made absolute)."""
    import yaml
    from brov2_hybrid import params
    path = params.vehicle_file("bluerov2_heavy")
    with open(path) as handle:
        data = yaml.safe_load(handle)
    data["allocator"] = allocator
    data["thrust_table"]["csv_file"] = os.path.normpath(os.path.join(os.path.dirname(path),
                                                                     data["thrust_table"]["csv_file"]))
    out = tmp_path / ("heavy_%s.yaml" % allocator)
    out.write_text(yaml.safe_dump(data))
    return str(out)


def test_the_pseudo_inverse_allocator_is_eq9(vehicle):
    u = np.array([0.1, -0.2, 0.3, 0.05, -0.05, 0.2])
    assert vehicle.allocator.name == "pseudo_inverse"
    np.testing.assert_array_equal(vehicle.allocator.forces(u), vehicle.T_pinv @ (vehicle.tau_max * u))
    np.testing.assert_allclose(vehicle.T @ vehicle.allocator.forces(u), vehicle.tau_max * u, atol=1e-9)


def test_a_new_allocator_is_one_class_and_one_registry_entry(tmp_path, monkeypatch):
    """Registered under a name and named in a vehicle file, it drives Algorithm 2."""
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle

    class HalfAllocator(allocation.PseudoInverseAllocator):     # a stand-in for e.g. a QP
        name = "half"

        def forces(self, u):
            return 0.5 * super().forces(u)

    monkeypatch.setitem(allocation.ALLOCATORS, HalfAllocator.name, HalfAllocator)
    heavy = load_vehicle("bluerov2_heavy")
    half = load_vehicle(_vehicle_file_with(tmp_path, "half"))
    u = np.array([0, 0, 0, 0, 0, 0.4])
    assert isinstance(half.allocator, HalfAllocator)
    np.testing.assert_allclose(half.allocator.forces(u), 0.5 * heavy.allocator.forces(u))
    delivered = half.table.force_from_pwm(half.mixer().pwm(u))     # the quantitative mixer uses it
    np.testing.assert_allclose(half.T @ delivered, [0, 0, 0, 0, 0, 0.2 * heavy.tau_max[5]], atol=0.05)


def test_an_unknown_allocator_names_the_file_and_key(tmp_path):
    from brov2_hybrid.errors import ParameterError
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    path = _vehicle_file_with(tmp_path, "qp_not_written_yet")
    with pytest.raises(ParameterError, match=r"heavy_qp_not_written_yet\.yaml:allocator: expected one of "
                                             r"\['pseudo_inverse', 'saturating'\], got 'qp_not_written_yet'"):
        load_vehicle(path)


def test_an_allocator_must_say_whether_it_is_linear(vehicle):
    """No attribute probing: an allocator without force_matrix is refused by name; the two bundled
    allocators state theirs (Eq. 9's matrix; None for the saturation-aware one), and the mixer
    takes exactly that."""
    from brov2_hybrid.errors import Brov2Error
    from brov2_hybrid.vehicle.allocation import PseudoInverseAllocator, check_allocator
    from brov2_hybrid.vehicle.mixers import Mixer
    from brov2_hybrid.vehicle.saturating_allocation import SaturatingAllocator

    class Silent(object):
        name = "silent"
        tau_max = vehicle.tau_max
        T_pinv = vehicle.T_pinv                 # what the old probe looked for: not a contract

        def forces(self, u):
            return self.T_pinv @ (self.tau_max * u)
    with pytest.raises(Brov2Error, match="silent.*force_matrix"):
        check_allocator(Silent())
    with pytest.raises(Brov2Error, match="force_matrix"):
        Mixer("quantitative", Silent(), vehicle.table, vehicle.T_hat, 2, 0.0)
    assert PseudoInverseAllocator(vehicle).force_matrix is not None
    saturating = SaturatingAllocator(vehicle)
    assert saturating.force_matrix is None
    assert Mixer("quantitative", saturating, vehicle.table, vehicle.T_hat, 2, 0.0).force_matrix is None
