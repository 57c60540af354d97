"""Attitude kinematics and ROS frame conventions (Fossen 2011; paper Eq. 15-19).

eta2 = (phi, theta, psi) are ZYX Euler angles of body FRD in inertial NED [rad];
nu2 = (p, q, r) the body angular rates [rad/s]. Quaternions are (x, y, z, w), the ROS
order. J1 maps body vectors to NED; J2 maps body rates to Euler-angle rates.

ROS topics use REP-103 (body FLU ``base_link``, world ENU). The conversions below are
exactly MAVROS's ``ftf`` ones: ``q_enu_flu = Q_NED_ENU * q_ned_frd * Q_FRD_FLU`` with
Q_NED_ENU = rpy(pi, 0, pi/2) and Q_FRD_FLU = rpy(pi, 0, 0); vectors map
NED <-> ENU as (x, y, z) -> (y, x, -z) and FRD <-> FLU as (x, y, z) -> (x, -y, -z).

Properties (tested): J1 is orthonormal with det 1; J2(eta2) @ J2_inv(eta2) == I away
from theta = +-90 deg; quaternion <-> Euler round trip; each frame map is its own
inverse. Every public function refuses NaN and infinity (Brov2Error).
"""
import math

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_finite, as_vector

#: |cos(theta)| below this is treated as gimbal lock (theta within ~0.06 deg of +-90).
GIMBAL_LOCK_COS = 1e-3


_TWO_PI = 2.0 * math.pi


def wrap_angle(angle_rad):
    """Wrap angle(s) to (-pi, pi] [rad]; works on floats and arrays of any shape.

    pi - ((pi - a) mod 2 pi), with the modulo's result in [0, 2 pi).

    Raises
    ------
    Brov2Error
        If an angle is NaN or infinite (it has no wrapped value) or not a number.
    """
    try:
        a = np.asarray(angle_rad, dtype=float)
    except (TypeError, ValueError) as exc:
        raise Brov2Error("angle_rad: expected numbers, got %r (%s)" % (angle_rad, exc))
    if a.ndim == 0:
        return wrap_angle_float(float(a))
    if a.size <= 8:  # short vectors (every control tick): Python floats beat numpy's overhead
        values = a.tolist() if a.ndim == 1 else a.ravel().tolist()
        if not all(map(math.isfinite, values)):
            raise Brov2Error("angle_rad: expected finite angles, got %s" % a.tolist())
        return np.array([wrapped(x) for x in values]).reshape(a.shape)
    if not np.all(np.isfinite(a)):
        raise Brov2Error("angle_rad: expected finite angles, got NaN or infinity in an array of shape %s"
                         % (a.shape,))
    return math.pi - np.mod(math.pi - a, _TWO_PI)


def wrap_angle_float(angle_rad):
    """:func:`wrap_angle` of one float, as a float (the same formula, for per-axis loops).

    Raises Brov2Error if the angle is NaN or infinite.
    """
    try:
        finite = math.isfinite(angle_rad)
    except TypeError:
        raise Brov2Error("angle_rad: expected one number, got %r" % (angle_rad,))
    if not finite:
        raise Brov2Error("angle_rad: expected a finite angle, got %r" % (angle_rad,))
    return wrapped(angle_rad)


def wrapped(angle_rad):
    """:func:`wrap_angle` of one finite float, unchecked (a kernel, compiled by numba in the
    control law's tick, :mod:`brov2_hybrid.control.law_kernels`): pi - ((pi - a) mod 2 pi)."""
    return math.pi - (math.pi - angle_rad) % _TWO_PI


def down_axis_in_body(phi, theta):
    """Third row of J1: the NED down axis in body FRD coordinates, R^T [0, 0, 1].

    From roll ``phi`` and pitch ``theta`` [rad] (two numbers: this runs every physics step).
    """
    try:
        if math.isfinite(phi) and math.isfinite(theta):
            return down_axis(phi, theta)
    except TypeError:
        pass
    raise Brov2Error("phi, theta: expected two finite angles [rad], got %r, %r" % (phi, theta))


def down_axis(phi, theta):
    """:func:`down_axis_in_body` of two finite floats, unchecked (a kernel): a 3-tuple."""
    cth = math.cos(theta)
    return -math.sin(theta), cth * math.sin(phi), cth * math.cos(phi)


def J1(eta2):
    """Rotation matrix R (3x3) from body FRD to NED for ZYX Euler angles eta2 [rad]."""
    phi, theta, psi = as_vector(eta2, 3, "eta2")
    cphi, sphi = math.cos(phi), math.sin(phi)
    cth, sth = math.cos(theta), math.sin(theta)
    cpsi, spsi = math.cos(psi), math.sin(psi)
    return np.array([
        [cpsi * cth, -spsi * cphi + cpsi * sth * sphi, spsi * sphi + cpsi * cphi * sth],
        [spsi * cth, cpsi * cphi + sphi * sth * spsi, -cpsi * sphi + sth * spsi * cphi],
        [-sth, cth * sphi, cth * cphi],
    ])


def J2(eta2):
    """Eq. 15: Euler-rate transform, eta2_dot = J2(eta2) @ nu2 (3x3).

    Raises
    ------
    Brov2Error
        Within gimbal lock (|cos theta| < GIMBAL_LOCK_COS), where J2 is singular.
    """
    phi, theta, _ = as_vector(eta2, 3, "eta2")
    return _J2(phi, theta)


def J2_from_roll_pitch(phi, theta):
    """:func:`J2` from roll ``phi`` and pitch ``theta`` [rad] (J2 does not depend on yaw).

    The per-tick form: two floats instead of a validated (3,) vector.
    """
    return _J2(as_finite(phi, "phi"), as_finite(theta, "theta"))


def _J2(phi, theta):
    """J2 from already-validated roll and pitch [rad]."""
    cth = math.cos(theta)
    if abs(cth) < GIMBAL_LOCK_COS:
        raise Brov2Error("eta2: pitch %.4f rad is at gimbal lock (+-pi/2); J2 is singular" % theta)
    return j2_matrix(phi, theta)


def j2_matrix(phi, theta):
    """J2 (3x3) from finite roll and pitch [rad] outside gimbal lock, unchecked (a kernel)."""
    cth = math.cos(theta)
    cphi, sphi, tth = math.cos(phi), math.sin(phi), math.tan(theta)
    return np.array([
        [1.0, sphi * tth, cphi * tth],
        [0.0, cphi, -sphi],
        [0.0, sphi / cth, cphi / cth],
    ])


def J2_inv(eta2):
    """Eq. 19: inverse Euler-rate transform, nu2 = J2_inv(eta2) @ eta2_dot (3x3).

    Defined at every attitude (it is J2's inverse wherever J2 exists).
    """
    phi, theta, _ = as_vector(eta2, 3, "eta2")
    return j2_inv_matrix(phi, theta)


def J2_inv_from_roll_pitch(phi, theta):
    """:func:`J2_inv` from roll ``phi`` and pitch ``theta`` [rad] (the per-tick form)."""
    return j2_inv_matrix(as_finite(phi, "phi"), as_finite(theta, "theta"))


def j2_inv_matrix(phi, theta):
    """J2_inv (3x3) from finite roll and pitch [rad], unchecked (a kernel)."""
    cphi, sphi = math.cos(phi), math.sin(phi)
    cth, sth = math.cos(theta), math.sin(theta)
    return np.array([
        [1.0, 0.0, -sth],
        [0.0, cphi, sphi * cth],
        [0.0, -sphi, cphi * cth],
    ])


def quaternion_from_euler(eta2):
    """ZYX Euler angles (roll, pitch, yaw) [rad] -> unit quaternion (x, y, z, w)."""
    phi, theta, psi = as_vector(eta2, 3, "eta2") * 0.5
    cr, sr = math.cos(phi), math.sin(phi)
    cp, sp = math.cos(theta), math.sin(theta)
    cy, sy = math.cos(psi), math.sin(psi)
    return np.array([
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    ])


def _as_quaternion(q, name="q", normalise=True):
    """q as a checked, non-zero float quaternion (4,), scaled to unit norm unless ``normalise`` is False."""
    q = as_vector(q, 4, name)
    norm = math.sqrt(float(q @ q))
    if norm < 1e-9:
        raise Brov2Error("%s: expected a non-zero quaternion (x, y, z, w), got %s" % (name, q.tolist()))
    return q / norm if normalise else q


def euler_from_quaternion(q):
    """Unit quaternion (x, y, z, w) -> ZYX Euler angles (roll, pitch, yaw) [rad].

    Yaw and roll in (-pi, pi], pitch in [-pi/2, pi/2]. The quaternion is normalised.
    """
    return np.array(euler_angles(_as_quaternion(q, normalise=False)))   # euler_angles normalises


def rotation_ned_frd(qw, qx, qy, qz):
    """The rotation body FRD -> NED of the unit quaternion (w, x, y, z), row by row, unchecked (a
    kernel): (R11, R12, R13, R21, R22, R23, R31, R32, R33); the third row is NED down in body axes."""
    xx, yy, zz = qx * qx, qy * qy, qz * qz
    xy, xz, yz = qx * qy, qx * qz, qy * qz
    wx, wy, wz = qw * qx, qw * qy, qw * qz
    return (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
            2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
            2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy))


def euler_angles(q):
    """:func:`euler_from_quaternion` of a finite quaternion array (x, y, z, w) (4,), scaled to
    unit norm first, unchecked (a kernel, the plant's attitude): (roll, pitch, yaw) [rad]."""
    norm = math.sqrt(q @ q)
    x, y, z, w = q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    sin_pitch = max(-1.0, min(1.0, 2.0 * (w * y - z * x)))
    pitch = math.asin(sin_pitch)
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw


def quaternion_multiply(a, b):
    """Hamilton product a * b of quaternions in (x, y, z, w) order."""
    ax, ay, az, aw = as_vector(a, 4, "a").tolist()
    bx, by, bz, bw = as_vector(b, 4, "b").tolist()
    return np.array([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ])


# MAVROS ftf constants: both rotations are their own inverse (180 deg turns).
Q_NED_ENU = quaternion_from_euler([math.pi, 0.0, math.pi / 2.0])
Q_FRD_FLU = quaternion_from_euler([math.pi, 0.0, 0.0])


def quaternion_ned_frd_to_enu_flu(q_ned_frd):
    """Orientation of body FRD in NED -> orientation of body FLU in ENU (MAVROS)."""
    q = _as_quaternion(q_ned_frd, "q_ned_frd")
    return quaternion_multiply(quaternion_multiply(Q_NED_ENU, q), Q_FRD_FLU)


def quaternion_enu_flu_to_ned_frd(q_enu_flu):
    """Orientation of body FLU in ENU -> orientation of body FRD in NED (MAVROS)."""
    q = _as_quaternion(q_enu_flu, "q_enu_flu")
    return quaternion_multiply(quaternion_multiply(Q_NED_ENU, q), Q_FRD_FLU)


def vector_ned_to_enu(v):
    """Inertial vector NED -> ENU: (x, y, z) -> (y, x, -z). Also ENU -> NED."""
    x, y, z = as_vector(v, 3, "v")
    return np.array([y, x, -z])


vector_enu_to_ned = vector_ned_to_enu


def vector_frd_to_flu(v):
    """Body vector FRD -> FLU: (x, y, z) -> (x, -y, -z). Also FLU -> FRD."""
    x, y, z = as_vector(v, 3, "v")
    return np.array([x, -y, -z])


vector_flu_to_frd = vector_frd_to_flu


def euler_ned_frd_from_enu_flu_quaternion(q_enu_flu):
    """Attitude eta2 = (roll, pitch, yaw) [rad], NED/FRD, from a ROS ENU/FLU quaternion."""
    return euler_from_quaternion(quaternion_enu_flu_to_ned_frd(q_enu_flu))
