"""A lumped-mass tether (seed 003, Sec. 6, Eqs. 24-36; Table A1): node forces and one implicit step.

The tether is n segments (elastic cylinders of unstretched length l0 = length / n) between
n + 1 nodes p_0..p_n in NED [m]: p_0 follows the base, p_n is the attachment point on the
vehicle; the n - 1 interior nodes move. Each interior node carries half of each
neighbouring segment's mass mu l0 and added mass C_a rho (pi d^2 / 4) l0 (I - e e^T) (a
cylinder's added mass acts across its axis only), as Eq. 27 sums them. Forces on an
interior node (Eq. 26): the axial force of its two segments,

    N = E A / l0 (|r| - l0) + C_t (d|r|/dt)   along e = r / |r|, r = p_{j+1} - p_j,

clipped at zero (a slack segment, or one the damping would push, carries no compression:
Eq. 36's tension with Eq. 29's internal damping). The sum is clipped, not each term, so the force is
continuous in the length: a segment short of l0 by less than C_t (d|r|/dt) / (E A / l0) (micrometres
here) while it is pulled apart still carries the damping's tension. (Clipping the elastic term at l0 and
adding the damping only beyond it makes the force jump by C_t d|r|/dt where a segment goes taut, and
Newton's iterates, with the current holding a segment right at that edge, flipped it between slack and
taut and did not converge.) Then the drag of the water flowing past
it at v_c - v (Eqs. 30-34: normal C_perp and tangential C_par components over the node's
half of each neighbouring segment, 1/2 rho d C v|v| l). The tether is neutrally
buoyant (the seed's assumption), so no weight acts on it. The vehicle feels the last
segment's axial force (:func:`end_force`: "the force acting on the ROV is the end node of the
axial tension"); the drag on the half segments at the two given end nodes acts on no one.

Integration (:func:`step_with_vehicle`, run by :func:`brov2_hybrid.sim.stepper.tethered_steps`): the
axial stiffness is E A / l0 = 2.8e6 N/m / l0 for Table A1's cable; a node of 0.1 kg on it rings
at several thousand rad/s, so an explicit step is unstable (the seed ran an implicit solver for
the same reason). Each cable step is backward Euler on every node but the base,

    M (v' - v) = h f(p + h v', v'),    p' = p + h v',

the last node carrying the vehicle: its effective mass at the attachment point (translation and
rotation) and the push of its own forces, held over the step. The cable's pull on the vehicle is
thus implicit as well, and the step may span many plant steps (``tether.step_s``); the vehicle
then flies them with the last segment's pull at the step's end held. Newton's method solves it:
the axial forces' Jacobians K = df/dp and C = df/dv and the drag's slope are block tridiagonal
(3 x 3 blocks, solved by block elimination), the mass taken at the step's start, and a cable step
whose solve does not converge is taken in halves. The drag on the half
segments next to the base and to the vehicle acts on no one. Backward Euler is L-stable (the
stiff axial modes are damped, not resolved) and first order; docs/simulator.md "Tether" shows
that the free-floating case converges as the steps halve and the nodes double. :func:`step`
takes both ends as given (a cable between two prescribed points).

Conventions: NED [m], [m/s], [N]; arrays (n + 1, 3) node by node.
"""
import math

import numpy as np

from brov2_hybrid.physics.kinematics import rotation_ned_frd


def segment_axial(p, v, i, k_axial, l0, damping):
    """(axial force [N] (>= 0), unit vector ex, ey, ez, length [m]) of segment i (node i to i + 1)."""
    rx, ry, rz = p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2]
    length = math.sqrt(rx * rx + ry * ry + rz * rz)
    if length <= 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    ex, ey, ez = rx / length, ry / length, rz / length
    rate = ((v[i + 1, 0] - v[i, 0]) * ex + (v[i + 1, 1] - v[i, 1]) * ey + (v[i + 1, 2] - v[i, 2]) * ez)
    force = k_axial * (length - l0) + damping * rate
    return max(force, 0.0), ex, ey, ez, length


def add_drag(out, slope, j, vx, vy, vz, ex, ey, ez, length, half_rho_d, c_perp, c_par):
    """Add to out[j] the drag [N] on ``length`` [m] of cable along (ex, ey, ez) in water flowing past it at
    (vx, vy, vz) (Eqs. 31-34), and to slope[j] (3, 3) its rate of change with the node's velocity,
    taken along a fixed axis [N s/m] (-d drag / d v: the water's velocity relative to it falls)."""
    dot = vx * ex + vy * ey + vz * ez
    ax, ay, az = dot * ex, dot * ey, dot * ez
    nx, ny, nz = vx - ax, vy - ay, vz - az
    n_mag = math.sqrt(nx * nx + ny * ny + nz * nz)
    a_mag = math.sqrt(ax * ax + ay * ay + az * az)
    k = half_rho_d * length
    out[j, 0] += k * (c_perp * n_mag * nx + c_par * a_mag * ax)
    out[j, 1] += k * (c_perp * n_mag * ny + c_par * a_mag * ay)
    out[j, 2] += k * (c_perp * n_mag * nz + c_par * a_mag * az)
    # d(|n| n)/du = |n| (I - e e^T) + n n^T / |n|; d(|a| a)/du = 2 |a| e e^T
    e0, e1, e2 = ex, ey, ez
    inv_n = 1.0 / n_mag if n_mag > 0.0 else 0.0
    for a in range(3):
        ea = e0 if a == 0 else (e1 if a == 1 else e2)
        na = nx if a == 0 else (ny if a == 1 else nz)
        for b in range(3):
            eb = e0 if b == 0 else (e1 if b == 1 else e2)
            nb = nx if b == 0 else (ny if b == 1 else nz)
            normal = n_mag * ((1.0 if a == b else 0.0) - ea * eb) + na * nb * inv_n
            slope[j, a, b] += k * (c_perp * normal + c_par * 2.0 * a_mag * ea * eb)


def node_loads(p, v, c, forces, stiff, damp, slope):
    """The forces on every node (n + 1, 3) [N] at state (p, v), and per segment the stiffness
    G = dT/dr and damping D = dT/d(rate) (n, 3, 3) of the axial force T on its first node, into
    the given arrays (zeroed here), and per node the drag's slope (n + 1, 3, 3) (:func:`add_drag`). ``c``
    as in :func:`step`."""
    k_axial, l0, damping, seg_mass, seg_added, half_rho_d, c_perp, c_par, cn, ce, cd = c
    n = p.shape[0] - 1
    forces[:] = 0.0
    stiff[:] = 0.0
    damp[:] = 0.0
    slope[:] = 0.0
    e = np.empty(3)
    for j in range(n):
        axial, e[0], e[1], e[2], length = segment_axial(p, v, j, k_axial, l0, damping)
        if axial > 0.0:
            # d(N e)/dr = E A / l0 e e^T + N / |r| (I - e e^T): the axial stiffness and the turning of the
            # whole force (its damping part's own turning left out: it is not symmetric)
            geometric = axial / length
            for a in range(3):
                forces[j, a] += axial * e[a]
                forces[j + 1, a] -= axial * e[a]
                for b in range(3):
                    ee = e[a] * e[b]
                    stiff[j, a, b] = k_axial * ee + geometric * ((1.0 if a == b else 0.0) - ee)
                    damp[j, a, b] = damping * ee
        half = 0.5 * length
        add_drag(forces, slope, j, cn - v[j, 0], ce - v[j, 1], cd - v[j, 2], e[0], e[1], e[2], half, half_rho_d, c_perp,
                 c_par)
        add_drag(forces, slope, j + 1, cn - v[j + 1, 0], ce - v[j + 1, 1], cd - v[j + 1, 2], e[0], e[1], e[2], half,
                 half_rho_d, c_perp, c_par)


def step(p, v, h, base_p, base_v, end_p, end_v, c, iterations, tolerance_m_s):
    """Advance the interior nodes by one backward Euler step of ``h`` [s], both ends given; returns
    (p', v', Newton iterations).

    ``p``, ``v`` (n + 1, 3): node positions [m] and velocities [m/s] now; ``base_p``,
    ``base_v``, ``end_p``, ``end_v`` (3,): the base and the attachment point at the step's
    end; ``c``: :meth:`~brov2_hybrid.sim.tether_model.TetherSettings.constants` (k_axial, l0,
    C_t, mu l0, rho A l0 C_a, 1/2 rho d, C_perp, C_par, current north, east, down). Newton's
    method on M (v' - v) = h f(p + h v', v') (the mass at the step's start), at most
    ``iterations``, until the velocity correction is below ``tolerance_m_s``.
    Plain loops on floats (no BLAS or LAPACK), so that numba gives the Python numbers.
    """
    p_new, v_new = p.copy(), v.copy()
    n = p.shape[0] - 1
    for a in range(3):
        p_new[n, a], v_new[n, a] = end_p[a], end_v[a]
    p_new, v_new, done, _ = newton(p, v, h, base_p, base_v, p_new, v_new, c, iterations, tolerance_m_s, False,
                                   np.zeros((3, 3)), np.zeros(3))
    return p_new, v_new, done


def step_with_vehicle(p, v, h, base_p, base_v, end_mass, end_push, c, iterations, tolerance_m_s):
    """One backward Euler step of ``h`` [s] of every node but the base, the last node (the attachment
    point) carrying the vehicle: returns (p', v', Newton iterations, whether they converged).

    The vehicle enters as the attachment point's effective mass ``end_mass`` (3, 3) [kg, NED]
    (the inverse of its mobility there, rotation included) pushed by ``end_push`` (3,) [N, NED],
    the force that gives it the acceleration it would have without the tether; the cable pulls it
    with its last segment's axial force at the step's end (so the stiff coupling is implicit too),
    and the drag on the half segment next to it acts on no one (as :func:`step`). Other arguments
    as :func:`step`; ``p[n]``, ``v[n]`` the attachment point now.
    """
    return newton(p, v, h, base_p, base_v, p.copy(), v.copy(), c, iterations, tolerance_m_s, True, end_mass, end_push)


def newton(p, v, h, base_p, base_v, p_new, v_new, c, iterations, tolerance_m_s, end_free, end_mass, end_push):
    """The backward Euler step of :func:`step` (``end_free`` False: node n is given in ``p_new``,
    ``v_new``) and of :func:`step_with_vehicle` (True: node n is solved for, with ``end_mass`` and
    ``end_push``); ``p_new``, ``v_new`` (n + 1, 3) are worked in and returned with the iterations and
    whether they converged."""
    k_axial, l0, damping, seg_mass, seg_added = c[0], c[1], c[2], c[3], c[4]
    n = p.shape[0] - 1
    mass = np.zeros((n + 1, 3, 3))
    e = np.empty(3)
    for j in range(n):
        _, e[0], e[1], e[2], _ = segment_axial(p, v, j, k_axial, l0, damping)
        for a in range(3):
            for b in range(3):
                m_ab = 0.5 * (seg_mass + seg_added) * (1.0 if a == b else 0.0) - 0.5 * seg_added * e[a] * e[b]
                mass[j, a, b] += m_ab
                if j + 1 < n:
                    mass[j + 1, a, b] += m_ab
    if end_free:
        for a in range(3):
            for b in range(3):
                mass[n, a, b] = end_mass[a, b]
    for a in range(3):
        p_new[0, a], v_new[0, a] = base_p[a], base_v[a]
    last = n if end_free else n - 1            # the last node solved for
    for j in range(1, last + 1):
        for a in range(3):
            p_new[j, a] = p[j, a] + h * v[j, a]
    m = last                                   # unknown nodes 1..last (row r = node r + 1)
    if m < 1:
        return p_new, v_new, 0, True
    forces = np.zeros((n + 1, 3))
    stiff = np.zeros((n, 3, 3))
    damp = np.zeros((n, 3, 3))
    slope = np.zeros((n + 1, 3, 3))
    # Block tridiagonal Newton system on the unknown nodes:
    # (M - h C - h^2 K) dv = -(M (v' - v) - h f), K_jj = -(G_j-1 + G_j), K_j,j+1 = G_j (C likewise with D);
    # the vehicle's node has its last segment only, and its push instead of the drag.
    diag = np.zeros((m, 3, 3))
    upper = np.zeros((m, 3, 3))
    rhs = np.zeros((m, 3))
    # the block elimination's work arrays, reused by every iteration
    work_d, work_b, dv = np.empty((m, 3, 3)), np.empty((m, 3)), np.empty((m, 3))
    inv, factor = np.empty((m, 3, 3)), np.empty((3, 3))
    done = 0
    for it in range(iterations):
        done = it + 1
        node_loads(p_new, v_new, c, forces, stiff, damp, slope)
        for r in range(m):
            j = r + 1
            on_vehicle = j == n
            axial = 0.0
            if on_vehicle:          # the last segment's pull on the vehicle (its drag share acts on no one)
                axial, e[0], e[1], e[2], _ = segment_axial(p_new, v_new, n - 1, k_axial, l0, damping)
            for a in range(3):
                inertia = 0.0
                for b in range(3):
                    seg_stiff = stiff[j - 1, a, b] + (0.0 if on_vehicle else stiff[j, a, b])
                    seg_damp = damp[j - 1, a, b] + (0.0 if on_vehicle else damp[j, a, b])
                    diag[r, a, b] = (mass[j, a, b] + h * (seg_damp + (0.0 if on_vehicle else slope[j, a, b]))
                                     + h * h * seg_stiff)
                    upper[r, a, b] = -(h * damp[j, a, b] + h * h * stiff[j, a, b]) if r + 1 < m else 0.0
                    inertia += mass[j, a, b] * (v_new[j, b] - v[j, b])
                force = end_push[a] - axial * e[a] if on_vehicle else forces[j, a]
                rhs[r, a] = h * force - inertia
        solve_block_tridiagonal_into(diag, upper, rhs, work_d, work_b, dv, inv, factor)
        largest = 0.0
        for r in range(m):
            for a in range(3):
                v_new[r + 1, a] += dv[r, a]
                p_new[r + 1, a] = p[r + 1, a] + h * v_new[r + 1, a]
                size = abs(dv[r, a])
                if not size <= largest:          # NaN included: never converged
                    largest = size
        if largest < tolerance_m_s:
            return p_new, v_new, done, True
    return p_new, v_new, done, False


def inverse3_into(a, out):
    """Inverse of a 3 x 3 matrix ``a`` by its cofactors into ``out`` (3, 3) (the blocks here are symmetric
    positive definite)."""
    c00 = a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]
    c01 = a[1, 2] * a[2, 0] - a[1, 0] * a[2, 2]
    c02 = a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]
    det = a[0, 0] * c00 + a[0, 1] * c01 + a[0, 2] * c02
    out[0, 0], out[1, 0], out[2, 0] = c00 / det, c01 / det, c02 / det
    out[0, 1] = (a[0, 2] * a[2, 1] - a[0, 1] * a[2, 2]) / det
    out[0, 2] = (a[0, 1] * a[1, 2] - a[0, 2] * a[1, 1]) / det
    out[1, 1] = (a[0, 0] * a[2, 2] - a[0, 2] * a[2, 0]) / det
    out[1, 2] = (a[0, 2] * a[1, 0] - a[0, 0] * a[1, 2]) / det
    out[2, 1] = (a[0, 1] * a[2, 0] - a[0, 0] * a[2, 1]) / det
    out[2, 2] = (a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]) / det


def solve_block_tridiagonal_into(diag, upper, rhs, d, b, x, inv, factor):
    """Solve the symmetric block tridiagonal system (3 x 3 blocks; lower = upper^T) by block elimination
    into ``x`` (m, 3), with the work arrays ``d`` (m, 3, 3), ``b`` (m, 3), ``inv`` (m, 3, 3) (each
    eliminated block's inverse, kept for the back substitution) and ``factor`` (3, 3) (a step's
    Newton iterations reuse them: no array is made here).

    diag (m, 3, 3) the diagonal blocks, upper (m, 3, 3) block (r, r + 1) in row r (the last unused),
    rhs (m, 3).
    """
    m = diag.shape[0]
    d[:] = diag
    b[:] = rhs
    for r in range(1, m):
        inverse3_into(d[r - 1], inv[r - 1])
        # factor = upper[r-1]^T inv; d[r] -= factor upper[r-1]; b[r] -= factor b[r-1]
        factor[:] = 0.0
        for i in range(3):
            for j in range(3):
                for k in range(3):
                    factor[i, j] += upper[r - 1, k, i] * inv[r - 1, k, j]
        for i in range(3):
            for j in range(3):
                for k in range(3):
                    d[r, i, j] -= factor[i, k] * upper[r - 1, k, j]
                b[r, i] -= factor[i, j] * b[r - 1, j]
    inverse3_into(d[m - 1], inv[m - 1])
    x[:] = 0.0
    for r in range(m - 1, -1, -1):
        for i in range(3):
            acc = b[r, i]
            if r + 1 < m:
                for k in range(3):
                    acc -= upper[r, i, k] * x[r + 1, k]
            x[r, i] = acc
        y0, y1, y2 = x[r, 0], x[r, 1], x[r, 2]
        for i in range(3):
            x[r, i] = inv[r, i, 0] * y0 + inv[r, i, 1] * y1 + inv[r, i, 2] * y2


def end_force(p, v, k_axial, l0, damping):
    """Force [N] (3,) NED the tether exerts on the attachment point (node n): its last segment's pull."""
    n = p.shape[0] - 1
    axial, ex, ey, ez, _ = segment_axial(p, v, n - 1, k_axial, l0, damping)
    out = np.empty(3)
    out[0], out[1], out[2] = -axial * ex, -axial * ey, -axial * ez
    return out


def base_force(p, v, k_axial, l0, damping):
    """Force [N] (3,) NED the tether exerts on the base (node 0)."""
    axial, ex, ey, ez, _ = segment_axial(p, v, 0, k_axial, l0, damping)
    out = np.empty(3)
    out[0], out[1], out[2] = axial * ex, axial * ey, axial * ez
    return out


def attachment_point(state, r_a, position, velocity):
    """Position [m] and velocity [m/s] NED of the attachment point ``r_a`` (3,) [m, body FRD from the
    origin] of a vehicle at plant ``state`` [north, east, down, qw, qx, qy, qz, u, v, w, p, q, r],
    into ``position`` and ``velocity`` (3,): p + R r_a and R (nu_1 + omega x r_a)."""
    R11, R12, R13, R21, R22, R23, R31, R32, R33 = rotation_ned_frd(state[3], state[4], state[5], state[6])
    bx = state[7] + (state[11] * r_a[2] - state[12] * r_a[1])
    by = state[8] + (state[12] * r_a[0] - state[10] * r_a[2])
    bz = state[9] + (state[10] * r_a[1] - state[11] * r_a[0])
    position[0] = state[0] + (R11 * r_a[0] + R12 * r_a[1] + R13 * r_a[2])
    position[1] = state[1] + (R21 * r_a[0] + R22 * r_a[1] + R23 * r_a[2])
    position[2] = state[2] + (R31 * r_a[0] + R32 * r_a[1] + R33 * r_a[2])
    velocity[0] = R11 * bx + R12 * by + R13 * bz
    velocity[1] = R21 * bx + R22 * by + R23 * bz
    velocity[2] = R31 * bx + R32 * by + R33 * bz


def pull_wrench(state, force_ned, r_a, out):
    """Body wrench [N, N m] (6,) into ``out`` of the force ``force_ned`` (3,) [N, NED] pulling at the
    attachment point ``r_a`` (3,) [m, body FRD] of a vehicle at plant ``state``: :func:`rotated_pull`."""
    R11, R12, R13, R21, R22, R23, R31, R32, R33 = rotation_ned_frd(state[3], state[4], state[5], state[6])
    out[0], out[1], out[2], out[3], out[4], out[5] = rotated_pull(R11, R12, R13, R21, R22, R23, R31, R32, R33,
                                                                  force_ned, r_a)


def rotated_pull(R11, R12, R13, R21, R22, R23, R31, R32, R33, force_ned, r_a):
    """The body wrench (X, Y, Z, K, M, N) [N, N m] of ``force_ned`` (3,) [N, NED] at ``r_a`` (3,) [m, body
    FRD] for the body -> NED rotation R (row by row): F_b = R^T F and r_a x F_b. Written once: the plant's
    stepper adds it at every step (:func:`brov2_hybrid.sim.stepper.integrate`)."""
    fb0 = R11 * force_ned[0] + R21 * force_ned[1] + R31 * force_ned[2]
    fb1 = R12 * force_ned[0] + R22 * force_ned[1] + R32 * force_ned[2]
    fb2 = R13 * force_ned[0] + R23 * force_ned[1] + R33 * force_ned[2]
    return (fb0, fb1, fb2, r_a[1] * fb2 - r_a[2] * fb1, r_a[2] * fb0 - r_a[0] * fb2, r_a[0] * fb1 - r_a[1] * fb0)


KERNELS = (segment_axial, add_drag, node_loads, step, step_with_vehicle, newton, inverse3_into, solve_block_tridiagonal_into, end_force,
           rotation_ned_frd, attachment_point, pull_wrench, rotated_pull)   # rotation_ned_frd: physics.kinematics' (a callee)


def _probe(kernels):
    """True when the compiled step gives the Python step's numbers on a swinging, stretched cable."""
    rng = np.random.default_rng(3)
    n = 6
    p = np.zeros((n + 1, 3))
    p[:, 0] = np.linspace(0.0, 6.05, n + 1)
    p[1:n] += rng.normal(0.0, 0.01, (n - 1, 3))
    v = rng.normal(0.0, 0.2, (n + 1, 3))
    c = (1.9e6, 1.0, 100.0, 0.043, 0.044, 3.75, 1.2, 0.01, 0.3, 0.3, 0.0)
    end, end_v = np.array([6.1, 0.0, 0.1]), np.array([0.1, 0.0, 0.0])
    out = kernels["step"](p, v, 0.0025, np.zeros(3), np.zeros(3), end, end_v, c, 4, 1e-9)
    ref = step(p, v, 0.0025, np.zeros(3), np.zeros(3), end, end_v, c, 4, 1e-9)
    state = np.array([1.0, -2.0, 30.0, 0.9, 0.1, -0.3, 0.2, 0.4, -0.1, 0.2, 0.3, -0.2, 0.5])
    state[3:7] /= np.linalg.norm(state[3:7])
    r_a = np.array([-0.2, 0.05, -0.1])
    got = [np.empty(3), np.empty(3), np.empty(6)]
    want = [np.empty(3), np.empty(3), np.empty(6)]
    for kernel_set, arrays in ((kernels, got), (globals(), want)):
        kernel_set["attachment_point"](state, r_a, arrays[0], arrays[1])
        kernel_set["pull_wrench"](state, np.array([3.0, -1.0, 7.0]), r_a, arrays[2])
    return all(np.array_equal(a, b) for a, b in zip(out, ref)) and all(np.array_equal(a, b) for a, b in zip(got, want))


def kernels():
    """{name: kernel} of the tether, compiled where numba is (:mod:`brov2_hybrid.jit`), else the Python functions."""
    from brov2_hybrid.jit import compile_family
    compiled = compile_family("tether", KERNELS, _probe)
    return compiled if compiled else {f.__name__: f for f in KERNELS}
