"""Saturation-aware thruster allocation: every thruster within its thrust table, angular torques first.

The paper's allocation (Eq. 9, :class:`brov2_hybrid.vehicle.allocation.PseudoInverseAllocator`)
asks each thruster for m = T-dagger tau and lets the thrust table clip what a thruster
cannot give (Algorithm 2), which changes the direction of the delivered wrench: a full
surge command on the Heavy already asks 49.95 N of reverse thrust (the T200 gives 39.9 N
at 16 V), and whatever yaw the controller asks for on top is partly lost. This allocator
(``allocator: saturating`` in a vehicle file) keeps every force inside the table's limits
(forward ``table.max_forward_n`` and reverse ``table.max_reverse_n``, which differ) and,
when the request cannot be met, keeps the roll, pitch and yaw torque and shortens the
translation along its own direction. There is no tau_max box: only the thrusters limit.

With tau = diag(tau_max) u split into its angular part tau_A (roll, pitch, yaw; zero
translation) and linear part tau_L, over the actuated DOFs (passive rows are free):

1. m = T-dagger tau (Eq. 9). Within the limits it is the answer, the same floating-point
   numbers as the pseudo-inverse allocator.
2. Else the minimum-norm m within the limits with T m = tau, if one exists: with N an
   orthonormal basis of null(T) (the Heavy has two directions: all four horizontal
   thrusters pushing against each other, and the vertical ones twisting), m = T-dagger
   tau + N z and |m|^2 = |T-dagger tau|^2 + |z|^2, so this is the least-distance program
   min |z| subject to lb <= T-dagger tau + N z <= ub, solved exactly (finite active-set
   algorithm, no iteration tolerance) by Lawson & Hanson's LDP: one non-negative least
   squares problem (Solving Least Squares Problems, 1974, ch. 23; ``scipy.optimize.nnls``).
   Within the limits the pseudo-inverse is this solution (z = 0), so the allocator is
   continuous at the limits.
3. Else a linear program (``scipy.optimize.linprog``, HiGHS simplex) finds the largest
   s in [0, 1] for which tau_A + s tau_L is deliverable; if even tau_A alone is not,
   first the largest angular scale s_A (translation scale free in [0, 1]), then the
   largest translation scale at that s_A. Step 2 then picks the minimum-norm forces for
   that wrench (bounds widened by :data:`LP_MARGIN_N` for the LP's own tolerance; the
   result is clipped back to the limits).

So this is a prioritised (lexicographic) QP, solved exactly by one LDP/NNLS when the
request is deliverable and by at most two small LPs plus one LDP when it is not.

Units: forces N, torques N m, body FRD; 6-DOF order (surge, sway, heave, roll, pitch, yaw).
"""
import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_matrix, as_vector

#: Angular DOF indices (roll, pitch, yaw) of tau: kept first.
ANGULAR_DOFS = (3, 4, 5)
#: Bounds are widened by this much [N] when the forces for a wrench found by the LP are
#: computed: HiGHS meets its constraints to ~1e-7 relative, so the LP's optimum may sit
#: that far outside the exact limits. The forces are clipped back to the limits afterwards.
LP_MARGIN_N = 1e-6
#: NNLS residual norm below which the least-distance program is infeasible (its residual
#: is 1 - h^T u at most 1; exact zero means incompatible constraints).
LDP_INFEASIBLE_RESIDUAL = 1e-9


def least_distance(G, h):
    """Shortest z with ``G @ z >= h``, or None when no z satisfies it (Lawson & Hanson LDP).

    Parameters
    ----------
    G : array_like, shape (m, k)
    h : array_like, shape (m,)

    Returns
    -------
    z : ndarray, shape (k,), or None
        The minimiser of |z| subject to G z >= h (unique: a strictly convex objective on
        a convex set), from one NNLS problem: u >= 0 minimising |E u - e_(k+1)| with
        E = [G^T; h^T]; r = E u - e_(k+1) is zero when the constraints are incompatible,
        else z = -r[:k] / r[k].
    """
    if np.ndim(G) != 2:
        raise Brov2Error("G: expected an m x k matrix, got shape %s" % (np.shape(G),))
    G = as_matrix(G, np.shape(G), "G")
    h = as_vector(h, G.shape[0], "h")
    k = G.shape[1]
    if k == 0:
        return np.zeros(0) if np.all(h <= 0.0) else None
    from scipy.optimize import nnls
    E = np.vstack([G.T, h[None, :]])
    target = np.zeros(k + 1)
    target[-1] = 1.0
    weights, rnorm = nnls(E, target)
    if rnorm < LDP_INFEASIBLE_RESIDUAL:
        return None
    r = E @ weights - target
    return -r[:k] / r[k]


class SaturatingAllocator(object):
    """Forces within each thruster's thrust-table limits: angular torques first (module docstring).

    Parameters
    ----------
    vehicle : brov2_hybrid.vehicle.vehicle_file.Vehicle
        Uses ``T``, ``T_pinv``, ``tau_max``, ``passive_dofs`` and the thrust table's
        ``max_forward_n`` / ``max_reverse_n`` (one table for every thruster).

    Properties (tested): within the limits ``forces(u)`` is the pseudo-inverse
    allocator's result; the forces always lie in [-max_reverse_n, max_forward_n]; when
    the angular torque is deliverable T @ forces gives it exactly and the translation
    tau_L times the largest deliverable s in [0, 1].
    """

    name = "saturating"
    #: Not linear: no matrix gives its forces, so every output chain calls :meth:`forces`
    #: (the allocator contract of :mod:`brov2_hybrid.vehicle.allocation`).
    force_matrix = None

    def __init__(self, vehicle):
        T = np.asarray(vehicle.T, dtype=float)
        n = T.shape[1]
        self.pinv = as_matrix(vehicle.T_pinv, (n, 6), "T_pinv")
        self.tau_max = as_vector(vehicle.tau_max, 6, "tau_max")
        self.actuated = [j for j in range(6) if j not in vehicle.passive_dofs]
        self.T_a = as_matrix(T[self.actuated], (len(self.actuated), n), "T")
        self.upper_n = np.full(n, float(vehicle.table.max_forward_n))
        self.lower_n = np.full(n, -float(vehicle.table.max_reverse_n))
        rank = np.linalg.matrix_rank(self.T_a)
        if rank < len(self.actuated):
            raise Brov2Error("T: expected rank %d over the actuated DOFs, got %d" % (len(self.actuated), rank))
        # Orthonormal basis of null(T_a): the rows of V^T past the rank.
        self.N = np.linalg.svd(self.T_a)[2][rank:].T
        self._G = np.vstack([self.N, -self.N])
        self.angular_mask = np.array([j in ANGULAR_DOFS for j in self.actuated])

    def forces(self, u):
        """Thruster forces [N], shape (n,), for u (6,) in [-1, 1] (surge..yaw, FRD)."""
        tau = self.tau_max * as_vector(u, 6, "u")
        m = self.pinv @ tau                       # Eq. 9: the same numbers as the pseudo-inverse allocator
        if np.all(m <= self.upper_n) and np.all(m >= self.lower_n):
            return m
        exact = self._least_norm(m, 0.0)
        if exact is not None:
            return exact
        wrench, m_lp = self._scaled_wrench(tau)
        m_p = self.pinv @ wrench
        best = self._least_norm(m_p, LP_MARGIN_N)
        if best is None:                            # only when the LP's vertex is at its own tolerance
            best = m_lp
        return np.minimum(np.maximum(best, self.lower_n), self.upper_n)

    def _least_norm(self, m_p, margin_n):
        """Least-norm forces m_p + N z within the limits widened by ``margin_n``, or None."""
        h = np.concatenate([self.lower_n - margin_n - m_p, m_p - self.upper_n - margin_n])
        z = least_distance(self._G, h)
        return None if z is None else m_p + self.N @ z

    def _scaled_wrench(self, tau):
        """The deliverable wrench s_A tau_A + s_L tau_L (6,) with (s_A, s_L) lexicographically largest.

        Returns the wrench (zero on the passive DOFs) and the LP's forces for it (n,).
        """
        from scipy.optimize import linprog
        tau_a = tau[self.actuated]
        ang = np.where(self.angular_mask, tau_a, 0.0)
        lin = np.where(self.angular_mask, 0.0, tau_a)
        n = self.T_a.shape[1]
        A = np.hstack([self.T_a, -ang[:, None], -lin[:, None]])     # T_a m - s_A tau_A - s_L tau_L = 0
        box = list(zip(self.lower_n, self.upper_n))

        def largest(index, s_a_bounds):
            c = np.zeros(n + 2)
            c[n + index] = -1.0
            res = linprog(c, A_eq=A, b_eq=np.zeros(A.shape[0]), bounds=box + [s_a_bounds, (0.0, 1.0)],
                          method="highs")
            return res.x if res.status == 0 else None

        x = largest(1, (1.0, 1.0))                  # the whole angular torque, most translation
        if x is None:
            x_a = largest(0, (0.0, 1.0))            # the most angular torque (zero wrench is always feasible)
            if x_a is None:
                raise Brov2Error("allocation LP failed for tau %s" % tau.tolist())
            x = largest(1, (x_a[n], x_a[n]))        # then the most translation at that angular scale
            x = x_a if x is None else x
        s_a, s_l = float(np.clip(x[n], 0.0, 1.0)), float(np.clip(x[n + 1], 0.0, 1.0))
        wrench = np.zeros(6)
        wrench[self.actuated] = s_a * ang + s_l * lin
        return wrench, x[:n]
