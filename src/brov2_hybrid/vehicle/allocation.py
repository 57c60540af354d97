"""Thruster allocation: T (Eq. 1-4), its pseudo-inverse T-dagger (Eq. 5-6), tau_max.

Column i of the 6 x n allocation matrix (n thrusters: 8 on the Heavy, 6 on the standard
BlueROV2) is ``[d_i ; r_i x d_i]`` (Eq. 2-3) so that ``tau = T @ m`` (Eq. 1) maps
thruster forces m [N] to the body wrench tau = [X, Y, Z, K, M, N] (FRD, N and N m).

A thruster layout that cannot actuate every DOF (the standard BlueROV2 has no pitch
authority: ArduSub's "vectored" frame gives every motor a pitch factor of 0) declares
those DOFs passive: T-dagger is the pseudo-inverse over the actuated rows, with zero
columns for the passive DOFs, so a command in a passive DOF moves no thruster.

Allocators (:data:`ALLOCATORS`) turn the normalised command u into thruster forces; a
vehicle file names its allocator (``allocator:``). An allocator is built from the whole
:class:`~brov2_hybrid.vehicle.vehicle_file.Vehicle` (T, T-dagger, tau_max, passive DOFs, the thrust
table and so each thruster's forward and reverse limit). The paper's is
:class:`PseudoInverseAllocator` (Eq. 9, used by Algorithm 2; the default);
``saturating`` (:mod:`brov2_hybrid.vehicle.saturating_allocation`) keeps every thruster within
the thrust table, angular torques first. A new allocator is one class with ``name``,
``__init__(vehicle)``, ``forces(u)`` and ``force_matrix`` -- the matrix F (n, 6) with
forces = F (tau_max u) when the allocator is linear, None when it is not -- plus one
entry in :data:`ALLOCATORS`; the quantitative mixer, and so the output stages, the
simulator, the nodes and the in-process loop, then use it for every vehicle that names
it: a linear allocator through its matrix (one compiled product), any other through
``forces`` (the loop then runs its Python tick loop). Nothing probes an allocator's
attributes: :func:`check_allocator` refuses a class that does not state ``force_matrix``.

Erratum (paper Eq. 4): the yaw row is printed as +-0.99; the thruster geometry gives
+-0.189, which is also what the paper's own Eq. 6 and tau_max need. We build T from the
geometry, so it carries 0.189.
"""
import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_choice, as_matrix, as_positive, as_vector

# Which thrusters produce which DOF (ArduSub's two mixing groups, Algorithm 1):
# horizontal thrusters give surge, sway and yaw; vertical ones heave, roll and pitch.
HORIZONTAL_DOFS = (0, 1, 5)
VERTICAL_DOFS = (2, 3, 4)
#: tau_max of a passive DOF [N or N m]: a placeholder so that u = tau / tau_max is defined;
#: the controller never commands a passive DOF and T-dagger allocates nothing to it.
PASSIVE_TAU_MAX = 1.0


def allocation_matrix(positions_m, directions):
    """Return the 6 x n thruster allocation matrix T.

    Parameters
    ----------
    positions_m : array_like, shape (n, 3)
        Thruster positions from the centre of mass, FRD [m].
    directions : array_like, shape (n, 3)
        Unit thrust directions for positive thrust, FRD.

    Returns
    -------
    T : ndarray, shape (6, n)
        ``T[:3, i] = d_i`` and ``T[3:, i] = r_i x d_i``.
    """
    r = as_matrix(positions_m, (_rows(positions_m, "positions_m"), 3), "positions_m")
    d = as_matrix(directions, r.shape, "directions")
    if not np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-9):
        raise Brov2Error("directions: expected unit vectors, got norms %s" % np.linalg.norm(d, axis=1))
    return np.vstack([d.T, np.cross(r, d).T])


def _rows(a, name):
    """Number of rows of a 2-D array_like (for shape checks of n-thruster arrays)."""
    shape = np.shape(a)
    if len(shape) != 2 or shape[0] < 1:
        raise Brov2Error("%s: expected a 2-D array with one row per thruster, got shape %s" % (name, shape))
    return shape[0]


def matrix_6xn(T, name="T"):
    """``T`` as a checked 6 x n float array (n thrusters)."""
    if np.ndim(T) != 2:
        raise Brov2Error("%s: expected a 6 x n matrix (n thrusters), got shape %s" % (name, np.shape(T)))
    return as_matrix(T, (6, np.shape(T)[1]), name)


def pseudo_inverse(T, passive_dofs=()):
    """Return the Moore-Penrose pseudo-inverse T-dagger (n x 6) of T (Eq. 5).

    ``passive_dofs`` (DOF indices 0..5) are left out: T-dagger is the pseudo-inverse of
    the actuated rows of T, with zero columns for the passive DOFs. Property:
    ``T[a] @ pseudo_inverse(T, p)[:, a] == I`` over the actuated DOFs a. Raises
    Brov2Error when the actuated rows do not have full rank (a DOF that is neither
    actuated nor declared passive).
    """
    T = matrix_6xn(T)
    passive = sorted(set(int(j) for j in passive_dofs))
    if any(not 0 <= j < 6 for j in passive):
        raise Brov2Error("passive_dofs: expected DOF indices 0..5, got %s" % passive)
    actuated = [j for j in range(6) if j not in passive]
    rank = np.linalg.matrix_rank(T[actuated])
    if rank < len(actuated):
        raise Brov2Error("T: expected rank %d (every DOF but the passive %s actuated), got rank %d"
                         % (len(actuated), passive, rank))
    if not passive:
        return np.linalg.pinv(T)
    T_pinv = np.zeros((T.shape[1], 6))
    T_pinv[:, actuated] = np.linalg.pinv(T[actuated])
    return T_pinv


class PseudoInverseAllocator(object):
    """The paper's allocation (Eq. 9): thruster forces m = T-dagger diag(tau_max) u [N].

    T-dagger is the vehicle's :func:`pseudo_inverse` over the actuated DOFs; forces may
    exceed what a thruster can give (the thrust table clips them, Algorithm 2).

    Parameters
    ----------
    vehicle : brov2_hybrid.vehicle.vehicle_file.Vehicle
        Uses ``T_pinv`` and ``tau_max``.
    """

    name = "pseudo_inverse"

    def __init__(self, vehicle):
        self.T_pinv = as_matrix(vehicle.T_pinv, (np.shape(vehicle.T_pinv)[0], 6), "T_pinv")
        self.tau_max = as_vector(vehicle.tau_max, 6, "tau_max")

    @property
    def force_matrix(self):
        """F (n, 6) with forces = F (tau_max u): this allocator is linear, so the compiled
        output chain may run it as one matrix product (the allocator contract: every
        allocator states ``force_matrix``, None when it is not linear)."""
        return self.T_pinv

    def forces(self, u):
        """Thruster forces [N], shape (n,), for u (6,) in [-1, 1] (surge..yaw, FRD)."""
        return self.T_pinv @ (self.tau_max * as_vector(u, 6, "u"))


def check_allocator(allocator):
    """``allocator`` if it keeps the allocator contract (module docstring), else Brov2Error:
    ``forces`` callable, ``tau_max`` (6,) and ``force_matrix`` stated (None or (n, 6))."""
    name = getattr(allocator, "name", type(allocator).__name__)
    if not callable(getattr(allocator, "forces", None)):
        raise Brov2Error("allocator %r: expected a forces(u) method" % name)
    if not hasattr(allocator, "force_matrix"):
        raise Brov2Error("allocator %r: expected a force_matrix attribute (the matrix F of a linear "
                         "allocator, None for a nonlinear one)" % name)
    if allocator.force_matrix is not None and np.shape(allocator.force_matrix)[1:] != (6,):
        raise Brov2Error("allocator %r: force_matrix: expected shape (n, 6), got %s"
                         % (name, np.shape(allocator.force_matrix)))
    as_vector(allocator.tau_max, 6, "allocator %r: tau_max" % name)
    return allocator


def make_allocator(name, vehicle):
    """The allocator ``name`` (a key of :data:`ALLOCATORS`) built for ``vehicle`` (a Vehicle).

    (A vehicle file's ``allocator`` is checked by its loader, which names file and key.)
    """
    return check_allocator(ALLOCATORS[as_choice(name, ALLOCATORS, "allocator")](vehicle))


def thruster_groups(directions, tol=1e-6):
    """Split thrusters into horizontal (no z thrust) and vertical (z thrust only).

    Returns
    -------
    horizontal, vertical : ndarray of bool, shape (n,)
    """
    d = as_matrix(directions, (_rows(directions, "directions"), 3), "directions")
    horizontal = np.abs(d[:, 2]) < tol
    vertical = np.linalg.norm(d[:, :2], axis=1) < tol
    return horizontal, vertical


def tau_max_from_limit(T, directions, force_limit_n, passive_dofs=()):
    """Largest force/torque in each DOF alone with its thrusters at the limit (Sec. 2.2.2).

    Rule: tau_max_j = f_max * sum_i |T_ji| over the thrusters of DOF j's group (horizontal
    thrusters for surge, sway and yaw; vertical thrusters for heave, roll and pitch),
    i.e. every thruster of the group pushes at +-f_max in the sense that helps DOF j.
    With f_max = 49.95 N this gives the paper's [141.29, 141.29, 199.81] N and
    [43.56, 23.98, 37.72] N m. The rule ignores coupling into the other group: the
    horizontal thrusters sit 0.085 m below the CG, so full surge also pitches and full
    sway also rolls the vehicle (4 * 0.085/sqrt2 * f_max = 12.0 N m at 49.95 N).

    A passive DOF (``passive_dofs``) is never commanded; its entry is
    :data:`PASSIVE_TAU_MAX` so that u = tau / tau_max stays defined.

    Parameters
    ----------
    T : array_like, shape (6, n)
    directions : array_like, shape (n, 3)
    force_limit_n : float
        Symmetric per-thruster force limit f_max [N].
    passive_dofs : sequence of int

    Returns
    -------
    tau_max : ndarray, shape (6,)
    """
    T = matrix_6xn(T)
    f_max = as_positive(force_limit_n, "force_limit_n")
    horizontal, vertical = thruster_groups(directions)
    if horizontal.size != T.shape[1]:
        raise Brov2Error("directions: expected %d rows (one per column of T), got %d" % (T.shape[1], horizontal.size))
    tau_max = np.empty(6)
    for j in range(6):
        group = horizontal if j in HORIZONTAL_DOFS else vertical
        tau_max[j] = f_max * np.sum(np.abs(T[j, group]))
    passive = list(passive_dofs)
    tau_max[passive] = PASSIVE_TAU_MAX
    if np.any(tau_max <= 0):
        raise Brov2Error("tau_max: DOF %s cannot be produced by its thruster group (declare it in passive_dofs "
                         "if the vehicle cannot actuate it)" % np.where(tau_max <= 0)[0].tolist())
    return tau_max


def heuristic_matrix(ardusub_factors):
    """Return ArduSub's heuristic allocation matrix T-hat (6x8, Eq. 7).

    Parameters
    ----------
    ardusub_factors : array_like, shape (n, 6)
        Per motor (roll, pitch, yaw, throttle, forward, lateral) factors.

    Returns
    -------
    T_hat : ndarray, shape (6, n)
        Rows (surge, sway, heave, roll, pitch, yaw) = (forward, lateral, -throttle,
        roll, pitch, yaw); heave is positive down, throttle positive up.
    """
    f = as_matrix(ardusub_factors, (_rows(ardusub_factors, "ardusub_factors"), 6), "ardusub_factors")
    roll, pitch, yaw, throttle, forward, lateral = f.T
    return np.vstack([forward, lateral, -throttle, roll, pitch, yaw])


# The registry comes last: an allocator module may use the helpers above.
from brov2_hybrid.vehicle.saturating_allocation import SaturatingAllocator  # noqa: E402

#: Allocators by the name a vehicle file gives them (``allocator:``).
ALLOCATORS = {PseudoInverseAllocator.name: PseudoInverseAllocator,
              SaturatingAllocator.name: SaturatingAllocator}
