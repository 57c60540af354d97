"""Thruster allocation: T (Eq. 1-4), its pseudo-inverse T-dagger (Eq. 5-6), tau_max.

Column i of the 6x8 allocation matrix is ``[d_i ; r_i x d_i]`` (Eq. 2-3) so that
``tau = T @ m`` (Eq. 1) maps thruster forces m [N] to the body wrench
tau = [X, Y, Z, K, M, N] (FRD, N and N m).

Erratum (paper Eq. 4): the yaw row is printed as +-0.99; the thruster geometry gives
+-0.189, which is also what the paper's own Eq. 6 and tau_max need. We build T from the
geometry, so it carries 0.189.
"""
import numpy as np

from brov2_hybrid.errors import Brov2Error, as_matrix, as_positive

# Which thrusters produce which DOF (ArduSub's two mixing groups, Algorithm 1):
# horizontal thrusters give surge, sway and yaw; vertical ones heave, roll and pitch.
HORIZONTAL_DOFS = (0, 1, 5)
VERTICAL_DOFS = (2, 3, 4)


def allocation_matrix(positions_m, directions):
    """Return the 6x8 thruster allocation matrix T.

    Parameters
    ----------
    positions_m : array_like, shape (8, 3)
        Thruster positions from the centre of mass, FRD [m].
    directions : array_like, shape (8, 3)
        Unit thrust directions for positive thrust, FRD.

    Returns
    -------
    T : ndarray, shape (6, 8)
        ``T[:3, i] = d_i`` and ``T[3:, i] = r_i x d_i``.
    """
    r = as_matrix(positions_m, (8, 3), "positions_m")
    d = as_matrix(directions, (8, 3), "directions")
    if not np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-9):
        raise Brov2Error("directions: expected unit vectors, got norms %s" % np.linalg.norm(d, axis=1))
    return np.vstack([d.T, np.cross(r, d).T])


def pseudo_inverse(T):
    """Return the Moore-Penrose pseudo-inverse T-dagger (8x6) of T (Eq. 5).

    Property: ``T @ pseudo_inverse(T) == I_6`` for a full-rank T.
    """
    T = as_matrix(T, (6, 8), "T")
    if np.linalg.matrix_rank(T) < 6:
        raise Brov2Error("T: expected rank 6 (every DOF actuated), got rank %d" % np.linalg.matrix_rank(T))
    return np.linalg.pinv(T)


def thruster_groups(directions, tol=1e-6):
    """Split thrusters into horizontal (no z thrust) and vertical (z thrust only).

    Returns
    -------
    horizontal, vertical : ndarray of bool, shape (8,)
    """
    d = as_matrix(directions, (8, 3), "directions")
    horizontal = np.abs(d[:, 2]) < tol
    vertical = np.linalg.norm(d[:, :2], axis=1) < tol
    return horizontal, vertical


def tau_max_from_limit(T, directions, force_limit_n):
    """Largest force/torque in each DOF alone with its thrusters at the limit (Sec. 2.2.2).

    Rule: tau_max_j = f_max * sum_i |T_ji| over the thrusters of DOF j's group (horizontal
    thrusters for surge, sway and yaw; vertical thrusters for heave, roll and pitch),
    i.e. every thruster of the group pushes at +-f_max in the sense that helps DOF j.
    With f_max = 49.95 N this gives the paper's [141.29, 141.29, 199.81] N and
    [43.56, 23.98, 37.72] N m. The rule ignores coupling into the other group: the
    horizontal thrusters sit 0.085 m below the CG, so full surge also pitches and full
    sway also rolls the vehicle (4 * 0.085/sqrt2 * f_max = 12.0 N m at 49.95 N).

    Parameters
    ----------
    T : array_like, shape (6, 8)
    directions : array_like, shape (8, 3)
    force_limit_n : float
        Symmetric per-thruster force limit f_max [N].

    Returns
    -------
    tau_max : ndarray, shape (6,)
    """
    T = as_matrix(T, (6, 8), "T")
    f_max = as_positive(force_limit_n, "force_limit_n")
    horizontal, vertical = thruster_groups(directions)
    tau_max = np.empty(6)
    for j in range(6):
        group = horizontal if j in HORIZONTAL_DOFS else vertical
        tau_max[j] = f_max * np.sum(np.abs(T[j, group]))
    if np.any(tau_max <= 0):
        raise Brov2Error("tau_max: DOF %s cannot be produced by its thruster group" % np.where(tau_max <= 0)[0])
    return tau_max


def heuristic_matrix(ardusub_factors):
    """Return ArduSub's heuristic allocation matrix T-hat (6x8, Eq. 7).

    Parameters
    ----------
    ardusub_factors : array_like, shape (8, 6)
        Per motor (roll, pitch, yaw, throttle, forward, lateral) factors.

    Returns
    -------
    T_hat : ndarray, shape (6, 8)
        Rows (surge, sway, heave, roll, pitch, yaw) = (forward, lateral, -throttle,
        roll, pitch, yaw); heave is positive down, throttle positive up.
    """
    f = as_matrix(ardusub_factors, (8, 6), "ardusub_factors")
    roll, pitch, yaw, throttle, forward, lateral = f.T
    return np.vstack([forward, lateral, -throttle, roll, pitch, yaw])
