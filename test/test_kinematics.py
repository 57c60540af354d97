"""Kinematics (Eq. 15, 19), Euler/quaternion and MAVROS frame conversions."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation

from brov2_hybrid.physics import kinematics as k
from brov2_hybrid.errors import Brov2Error

angle = st.floats(-math.pi, math.pi, allow_nan=False)
pitch = st.floats(-1.5, 1.5, allow_nan=False)  # away from +-90 deg


@settings(max_examples=100, deadline=None)
@given(angle, pitch, angle)
def test_J1_matches_scipy_and_is_a_rotation(phi, theta, psi):
    R = k.J1([phi, theta, psi])
    np.testing.assert_allclose(R, Rotation.from_euler("ZYX", [psi, theta, phi]).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0)


@settings(max_examples=100, deadline=None)
@given(angle, pitch, angle)
def test_J2_times_J2_inv_is_identity(phi, theta, psi):
    eta2 = [phi, theta, psi]
    np.testing.assert_allclose(k.J2(eta2) @ k.J2_inv(eta2), np.eye(3), atol=1e-9)


def test_J2_matches_finite_difference_of_rotation():
    """Euler rates from J2 reproduce the body rates of R(t): skew(nu) = R^T R_dot."""
    eta2 = np.array([0.3, -0.4, 1.2])
    nu2 = np.array([0.2, -0.5, 0.7])
    h = 1e-6
    R_dot = (k.J1(eta2 + h * (k.J2(eta2) @ nu2)) - k.J1(eta2 - h * (k.J2(eta2) @ nu2))) / (2 * h)
    S = k.J1(eta2).T @ R_dot
    np.testing.assert_allclose([S[2, 1], S[0, 2], S[1, 0]], nu2, atol=1e-6)


def test_J2_raises_at_gimbal_lock():
    with pytest.raises(Brov2Error, match="gimbal lock"):
        k.J2([0.0, math.pi / 2, 0.0])


@settings(max_examples=100, deadline=None)
@given(angle, pitch, angle)
def test_euler_quaternion_round_trip(phi, theta, psi):
    q = k.quaternion_from_euler([phi, theta, psi])
    np.testing.assert_allclose(q, Rotation.from_euler("ZYX", [psi, theta, phi]).as_quat(), atol=1e-12)
    np.testing.assert_allclose(k.wrap_angle(k.euler_from_quaternion(q) - [phi, theta, psi]), 0, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(angle, pitch, angle)
def test_ned_enu_orientation_round_trip(phi, theta, psi):
    q = k.quaternion_from_euler([phi, theta, psi])
    back = k.quaternion_enu_flu_to_ned_frd(k.quaternion_ned_frd_to_enu_flu(q))
    assert abs(abs(float(back @ q)) - 1.0) < 1e-12  # same rotation (q or -q)


@settings(max_examples=100, deadline=None)
@given(angle, pitch, angle)
def test_enu_flu_angles_as_mavros(phi, theta, psi):
    """Seen in ENU/FLU: roll unchanged, pitch negated, yaw = pi/2 - psi (east = 0)."""
    q_enu = k.quaternion_ned_frd_to_enu_flu(k.quaternion_from_euler([phi, theta, psi]))
    r_enu = Rotation.from_quat(q_enu).as_matrix()
    # FLU body axes expressed in ENU must equal the FRD axes mapped NED->ENU and flipped.
    R_ned = k.J1([phi, theta, psi])
    P = np.array([[0, 1, 0], [1, 0, 0], [0, 0, -1]])  # NED <-> ENU
    F = np.diag([1, -1, -1])                           # FRD <-> FLU
    np.testing.assert_allclose(r_enu, P @ R_ned @ F, atol=1e-12)
    roll, pit, yaw = k.euler_from_quaternion(q_enu)
    np.testing.assert_allclose(k.wrap_angle([roll - phi, pit + theta, yaw - (math.pi / 2 - psi)]), 0, atol=1e-9)


def test_vector_conversions():
    np.testing.assert_array_equal(k.vector_ned_to_enu([1, 2, 3]), [2, 1, -3])
    np.testing.assert_array_equal(k.vector_frd_to_flu([1, 2, 3]), [1, -2, -3])
    np.testing.assert_array_equal(k.vector_enu_to_ned(k.vector_ned_to_enu([1, 2, 3])), [1, 2, 3])


@pytest.mark.parametrize("a, expected", [
    (math.radians(10 - 350), math.radians(20)),
    (-math.pi, math.pi),
    (3 * math.pi, math.pi),
    (0.5, 0.5),
])
def test_wrap_angle(a, expected):
    assert k.wrap_angle(a) == pytest.approx(expected)


@pytest.mark.parametrize("fn", [k.J1, k.J2, k.J2_inv, k.quaternion_from_euler])
def test_rejects_nan_and_shape(fn):
    with pytest.raises(Brov2Error, match="finite"):
        fn([0.0, float("nan"), 0.0])
    with pytest.raises(Brov2Error, match=r"expected shape \(3,\)"):
        fn([0.0, 0.0])


def test_rejects_zero_quaternion():
    with pytest.raises(Brov2Error, match="non-zero quaternion"):
        k.euler_from_quaternion([0, 0, 0, 0])


@pytest.mark.parametrize("a", [float("nan"), float("inf"), [0.1, float("nan")], np.full((3, 4), np.nan),
                               np.append(np.zeros(20), -np.inf)])
def test_wrap_angle_rejects_nan_and_infinity(a):
    """A NaN angle has no wrapped value: refused like every other public function's input."""
    with pytest.raises(Brov2Error, match="angle_rad: expected (a )?finite"):
        k.wrap_angle(a)


def test_wrap_angle_keeps_the_shape_of_any_array():
    a = np.array([[0.0, 2 * math.pi], [-3 * math.pi, 7.0]])
    np.testing.assert_allclose(k.wrap_angle(a), [[0.0, 0.0], [math.pi, 7.0 - 2 * math.pi]], atol=1e-12)
    big = np.linspace(-20, 20, 41)
    np.testing.assert_allclose(np.sin(k.wrap_angle(big)), np.sin(big), atol=1e-12)
    assert np.all((k.wrap_angle(big) > -math.pi) & (k.wrap_angle(big) <= math.pi))


@pytest.mark.parametrize("phi, theta", [(0.3, -0.7), (-1.1, 0.2), (2.5, 1.2)])
def test_roll_pitch_forms_equal_the_eta2_forms(phi, theta):
    """The per-tick forms (two floats) are J2 / J2_inv of (phi, theta, any yaw)."""
    np.testing.assert_array_equal(k.J2_from_roll_pitch(phi, theta), k.J2([phi, theta, 0.4]))
    np.testing.assert_array_equal(k.J2_inv_from_roll_pitch(phi, theta), k.J2_inv([phi, theta, -2.0]))


@pytest.mark.parametrize("fn", [k.J2_from_roll_pitch, k.J2_inv_from_roll_pitch])
def test_roll_pitch_forms_reject_nan_and_vectors(fn):
    with pytest.raises(Brov2Error, match="theta: expected a finite number"):
        fn(0.1, float("nan"))
    with pytest.raises(Brov2Error, match="phi: expected a number"):
        fn([0.1, 0.2], 0.0)


def test_wrap_angle_float_is_wrap_angle_number_for_number():
    from brov2_hybrid.physics.kinematics import wrap_angle, wrap_angle_float
    rng = np.random.default_rng(9)
    angles = np.concatenate([rng.uniform(-20.0, 20.0, 2000), [0.0, -0.0, np.pi, -np.pi, 3 * np.pi, 1e-300]])
    wrapped = [wrap_angle_float(float(a)) for a in angles]
    assert wrapped == wrap_angle(angles).tolist() == [wrap_angle(float(a)) for a in angles]
    with pytest.raises(Brov2Error, match="finite"):
        wrap_angle_float(float("inf"))
