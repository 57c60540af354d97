"""The plant's steppers (kernels): :func:`integrate`, n fixed steps of the rigid body, and
:func:`tethered_steps`, the same with the tether's pull and its implicit step in between.

Semi-implicit (symplectic) Euler at a fixed step, the drag taken as the trapezoid over the step:
nu_{k+1} = nu_k + dt nu_dot(eta_k, nu_k) / (1 + dt/2 * the drag's slope), per DOF;
position_{k+1} = position_k + dt R_k nu_1,{k+1}; attitude as a unit quaternion rotated by the
exact exponential of omega_{k+1} dt. Plain Python on floats and numpy arrays, so that numba
compiles the same functions (:func:`compiled_integrate`, :func:`compiled_tethered_steps`;
:mod:`brov2_hybrid.jit`), which :class:`~brov2_hybrid.sim.plant.Plant` and the compiled
in-process loop (:mod:`brov2_hybrid.loop.kernel`) run. State: [north, east, down, qw, qx, qy,
qz, u, v, w, p, q, r] (NED [m], quaternion body FRD -> NED, body [m/s], [rad/s]).
"""
import math

import numpy as np

from brov2_hybrid.jit import compile_family
from brov2_hybrid.physics.kinematics import rotation_ned_frd
from brov2_hybrid.sim import tether as tether_math
from brov2_hybrid.sim.dynamics import N_CONSTANTS, UPDATED_KIND, accelerations, drag_slopes
from brov2_hybrid.sim.tether import attachment_point, end_force, inverse3_into, rotated_pull, step_with_vehicle

#: Below this |omega| [rad/s] the quaternion update uses its small-angle limit.
SMALL_RATE_RAD_S = 1e-12


def integrate(state, n, dt, tau, c, lag_terms=None, pull=None, r_a=None):
    """n semi-implicit Euler steps of the model in floats (the fast stepper).

    ``state`` = [north, east, down, qw, qx, qy, qz, u, v, w, p, q, r]; ``tau`` the steady
    thruster wrench; ``c`` the stepper constants (the model's
    :func:`~brov2_hybrid.sim.dynamics.model_constants`, the current north, east, down and
    whether it is non-zero); ``lag_terms`` (or None) the modal thruster-lag terms [step
    factor, current factor, (6,) complex weights], advanced in place. ``pull`` (3,) [N, NED] (or None)
    a force held in the world frame at ``r_a`` (3,) [m, body FRD], turned into the body at every step
    (the tether's pull: :func:`tethered_steps`; :func:`~brov2_hybrid.sim.tether.rotated_pull`).

    Where numba is installed, :class:`Plant` runs this same function compiled
    (:func:`compiled_integrate`) whenever no thruster lag is active: the same numbers.
    """
    pn, pe, pd, qw, qx, qy, qz, u, v, w, p, q, r = state
    X, Y, Z, K, M, N = tau
    constants, cn, ce, cd, has_current = c
    sqrt, sin, cos = math.sqrt, math.sin, math.cos
    for _ in range(n):
        if lag_terms is not None:
            # Thruster lag: steady wrench plus the decaying modes (see thruster_lag.ModalLag).
            X, Y, Z, K, M, N = tau
            for term in lag_terms:
                d_k, p_k, (w0, w1, w2, w3, w4, w5) = term
                X += (w0 * p_k).real
                Y += (w1 * p_k).real
                Z += (w2 * p_k).real
                K += (w3 * p_k).real
                M += (w4 * p_k).real
                N += (w5 * p_k).real
                term[1] = p_k * d_k
        # Rotation body -> NED from the quaternion; the third row is NED down in body axes.
        R11, R12, R13, R21, R22, R23, R31, R32, R33 = rotation_ned_frd(qw, qx, qy, qz)
        ur, vr, wr = water_relative(R11, R12, R13, R21, R22, R23, R31, R32, R33, u, v, w, cn, ce, cd, has_current)
        if pull is not None:    # the held pull's body wrench at r_a, turned with the body every step
            w0, w1, w2, w3, w4, w5 = rotated_pull(R11, R12, R13, R21, R22, R23, R31, R32, R33, pull, r_a)
            Xe, Ye, Ze, Ke, Me, Ne = X + w0, Y + w1, Z + w2, K + w3, M + w4, N + w5
        else:
            Xe, Ye, Ze, Ke, Me, Ne = X, Y, Z, K, M, N
        udot, vdot, wdot, pdot, qdot, rdot = accelerations(constants, Xe, Ye, Ze, Ke, Me, Ne, pd, R31, R32, R33, u, v,
                                                           w, ur, vr, wr, p, q, r)
        # The drag as the trapezoid over the step (linearly implicit, theta = 1/2): Euler's
        # increment over 1 + dt/2 * the drag's slope. Euler alone damps with the drag at the
        # start of the step, which a fit reads as an inertia low by about dt/2 * that slope.
        su, sv, sw, sp, sq, sr = drag_slopes(constants, ur, vr, wr, p, q, r)
        half = 0.5 * dt
        u += dt * udot / (1.0 + half * su)
        v += dt * vdot / (1.0 + half * sv)
        w += dt * wdot / (1.0 + half * sw)
        p += dt * pdot / (1.0 + half * sp)
        q += dt * qdot / (1.0 + half * sq)
        r += dt * rdot / (1.0 + half * sr)
        # Position with the new velocity.
        pn += dt * (R11 * u + R12 * v + R13 * w)
        pe += dt * (R21 * u + R22 * v + R23 * w)
        pd += dt * (R31 * u + R32 * v + R33 * w)
        # Attitude: q <- q * exp(omega dt / 2), then renormalise.
        rate2 = p * p + q * q + r * r
        if rate2 > SMALL_RATE_RAD_S * SMALL_RATE_RAD_S:
            rate = sqrt(rate2)
            s = sin(0.5 * rate * dt) / rate
            c0 = cos(0.5 * rate * dt)
        else:
            s, c0 = 0.5 * dt, 1.0
        dx, dy, dz = s * p, s * q, s * r
        qw, qx, qy, qz = (qw * c0 - qx * dx - qy * dy - qz * dz,
                          qw * dx + qx * c0 + qy * dz - qz * dy,
                          qw * dy - qx * dz + qy * c0 + qz * dx,
                          qw * dz + qx * dy - qy * dx + qz * c0)
        k = 1.0 / sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
        qw, qx, qy, qz = qw * k, qx * k, qy * k, qz * k
    return [pn, pe, pd, qw, qx, qy, qz, u, v, w, p, q, r]


def water_relative(R11, R12, R13, R21, R22, R23, R31, R32, R33, u, v, w, cn, ce, cd, has_current):
    """Body velocity (u, v, w) [m/s] relative to the water, for a current (cn, ce, cd) [m/s, NED] and the
    body -> NED rotation R (row by row)."""
    if has_current:
        return (u - (R11 * cn + R21 * ce + R31 * cd), v - (R12 * cn + R22 * ce + R32 * cd),
                w - (R13 * cn + R23 * ce + R33 * cd))
    return u, v, w


def compiled_integrate():
    """:func:`integrate` compiled by numba (nopython), or None without numba.

    The same source: :func:`integrate` with the force terms
    (:func:`~brov2_hybrid.sim.dynamics.accelerations`) compiled too (:mod:`brov2_hybrid.jit`),
    specialised for ``lag_terms=None`` (numba drops the lag branch). IEEE arithmetic
    without fast-math, so it gives the numbers of the Python function (checked on a probe
    and tested); about 15x faster per step. ``BROV2_NO_JIT=1`` or a missing / unusable
    numba keeps the Python function.
    """
    kernels = compile_family("plant", (integrate, water_relative, rotated_pull, accelerations, drag_slopes,
                                       rotation_ned_frd),
                             _probe_integrate)
    return kernels["integrate"] if kernels else None


def tethered_steps(state, n, dt, tau, c, lag_terms, p, v, clock, base_p0, base_v, r_a, tc, iterations, tolerance,
                   tally, pull_sum, pull_max, hold, step_s):
    """``n`` plant steps of ``dt`` [s] on a tether (a kernel; the plant's state (13,) array returned).

    The cable takes one implicit step of ``step_s`` [s] (a whole number of plant steps, at least
    one) for that many plant steps: at its start, :func:`~brov2_hybrid.sim.tether.step_with_vehicle`
    solves every node but the base over the whole step with the vehicle in the last node (its
    effective mass at the attachment point ``r_a`` [m, body FRD] and the push of its own forces
    now, :func:`point_response`), and the last segment's pull at the step's end is held; each
    plant step then is :func:`integrate` with the steady wrench ``tau`` plus that pull at the
    attachment point (:func:`~brov2_hybrid.sim.tether.pull_wrench`). At the cable step's end its
    last node is put where the vehicle's attachment point is. The pull is implicit in the cable
    and in the vehicle's translation, so the stiff cable is stable at any step; what is explicit
    is the vehicle's own forces held over the cable's step.

    ``p``, ``v`` (n + 1, 3) [m, m/s] the cable's nodes, updated in place; ``c`` and ``lag_terms``
    as :func:`integrate`'s; ``clock`` (1,) the plant's time [s] (the base at
    ``base_p0 + base_v * clock``, NED [m, m/s]); ``tc``, ``iterations``, ``tolerance`` the tether's
    constants and Newton settings; ``tally`` (3,) plant steps, Newton iterations and cable steps,
    ``pull_sum``, ``pull_max`` (3,) per NED axis the sum and largest |pull| [N] over the plant steps,
    added to; ``hold`` (4,) the plant steps taken in the current cable step and the pull held [N, NED].
    """
    x = np.empty(13)
    for i in range(13):
        x[i] = state[i]
    position, velocity, base = np.empty(3), np.empty(3), np.empty(3)
    free, push = np.empty(3), np.empty(3)
    mobility, end_mass, pull = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    per_step = max(1, int(round(step_s / dt)))
    last = p.shape[0] - 1
    done = 0
    while done < n:
        if hold[0] == 0.0:          # a cable step begins: solve it with the vehicle in its last node
            point_response(x, tau, c, r_a, free, mobility)
            inverse3_into(mobility, end_mass)
            for a in range(3):
                push[a] = end_mass[a, 0] * free[0] + end_mass[a, 1] * free[1] + end_mass[a, 2] * free[2]
                pull[a] = 0.0
            # Newton's method may not converge over the whole step (a slack cable snapping taut):
            # then the step is taken in halves, down to one plant step; the vehicle is held at the
            # pull's mean over the parts (the impulse the cable gave it).
            taken, chunk = 0, per_step
            while taken < per_step:
                size = min(chunk, per_step - taken)
                for a in range(3):
                    base[a] = base_p0[a] + base_v[a] * (clock[0] + (taken + size) * dt)
                p_new, v_new, used, converged = step_with_vehicle(p, v, size * dt, base, base_v, end_mass, push, tc,
                                                                  iterations, tolerance)
                tally[1] += used
                if not converged and size > 1:
                    chunk = size // 2
                    continue
                p[:, :] = p_new
                v[:, :] = v_new
                part = end_force(p, v, tc[0], tc[1], tc[2])
                for a in range(3):
                    pull[a] += part[a] * size / per_step
                taken += size
                tally[2] += 1.0
            for a in range(3):
                hold[1 + a] = pull[a]
        for a in range(3):
            pull[a] = hold[1 + a]
        # the plant steps up to the cable step's end (or the call's) in one run, the pull held
        k = min(n - done, per_step - int(hold[0]))
        stepped = integrate(x, k, dt, tau, c, lag_terms, pull, r_a)
        for i in range(13):
            x[i] = stepped[i]
        for _ in range(k):
            clock[0] += dt
            for a in range(3):
                pull_sum[a] += abs(pull[a])
        for a in range(3):
            if abs(pull[a]) > pull_max[a]:
                pull_max[a] = abs(pull[a])
        hold[0] += k
        tally[0] += k
        done += k
        if hold[0] >= per_step:     # the cable step ends: its last node is the vehicle's attachment point
            hold[0] = 0.0
            attachment_point(x, r_a, position, velocity)
            for a in range(3):
                p[last, a], v[last, a] = position[a], velocity[a]
    return x


def point_response(state, tau, c, r_a, free, mobility):
    """How the attachment point ``r_a`` [m, body FRD] of a vehicle at plant ``state`` accelerates, NED:
    into ``free`` (3,) [m/s^2] under the wrench ``tau`` alone, and into ``mobility`` (3, 3) [1/kg] the
    added acceleration per newton of a force there (R J M^-1 J^T R^T: translation and rotation).
    From :func:`~brov2_hybrid.sim.dynamics.accelerations` (linear in the wrench): the point's
    acceleration is R (nu_1_dot + omega_dot x r_a + omega x (nu_1 + omega x r_a))."""
    pn, pe, pd, qw, qx, qy, qz, u, v, w, p, q, r = state
    constants, cn, ce, cd, has_current = c
    R11, R12, R13, R21, R22, R23, R31, R32, R33 = rotation_ned_frd(qw, qx, qy, qz)
    ur, vr, wr = water_relative(R11, R12, R13, R21, R22, R23, R31, R32, R33, u, v, w, cn, ce, cd, has_current)
    rx, ry, rz = r_a[0], r_a[1], r_a[2]
    base = accelerations(constants, tau[0], tau[1], tau[2], tau[3], tau[4], tau[5], pd, R31, R32, R33, u, v, w, ur,
                         vr, wr, p, q, r)
    # omega x (nu_1 + omega x r_a): the point's velocity turning with the body
    bx, by, bz = u + (q * rz - r * ry), v + (r * rx - p * rz), w + (p * ry - q * rx)
    body = np.empty(3)
    body[0] = base[0] + (base[4] * rz - base[5] * ry) + (q * bz - r * by)
    body[1] = base[1] + (base[5] * rx - base[3] * rz) + (r * bx - p * bz)
    body[2] = base[2] + (base[3] * ry - base[4] * rx) + (p * by - q * bx)
    free[0] = R11 * body[0] + R12 * body[1] + R13 * body[2]
    free[1] = R21 * body[0] + R22 * body[1] + R23 * body[2]
    free[2] = R31 * body[0] + R32 * body[1] + R33 * body[2]
    column = np.empty((3, 3))       # body mobility, column k: a unit body force along axis k at r_a
    for k in range(3):
        f0, f1, f2 = (1.0 if k == 0 else 0.0), (1.0 if k == 1 else 0.0), (1.0 if k == 2 else 0.0)
        acc = accelerations(constants, tau[0] + f0, tau[1] + f1, tau[2] + f2, tau[3] + (ry * f2 - rz * f1),
                            tau[4] + (rz * f0 - rx * f2), tau[5] + (rx * f1 - ry * f0), pd, R31, R32, R33, u, v, w,
                            ur, vr, wr, p, q, r)
        dw0, dw1, dw2 = acc[3] - base[3], acc[4] - base[4], acc[5] - base[5]
        column[0, k] = acc[0] - base[0] + (dw1 * rz - dw2 * ry)
        column[1, k] = acc[1] - base[1] + (dw2 * rx - dw0 * rz)
        column[2, k] = acc[2] - base[2] + (dw0 * ry - dw1 * rx)
    rot = np.empty((3, 3))
    rot[0, 0], rot[0, 1], rot[0, 2], rot[1, 0], rot[1, 1], rot[1, 2] = R11, R12, R13, R21, R22, R23
    rot[2, 0], rot[2, 1], rot[2, 2] = R31, R32, R33
    for i in range(3):
        for j in range(3):
            acc_ij = 0.0
            for a in range(3):
                for b in range(3):
                    acc_ij += rot[i, a] * column[a, b] * rot[j, b]
            mobility[i, j] = acc_ij
    return free


def compiled_tethered_steps():
    """:func:`tethered_steps` compiled by numba with its callees (the plant's stepper, the tether's
    step), or None without numba; probed against the Python function on a swinging cable."""
    kernels = compile_family("tethered_plant", TETHERED_KERNELS, _probe_tethered)
    return kernels["tethered_steps"] if kernels else None


def _probe_tethered(kernels):
    """True when the compiled :func:`tethered_steps` gives the Python function's state, nodes and tallies."""
    constants = (UPDATED_KIND,) + (1.0,) * 18 + (0.0,) * (N_CONSTANTS - 19)
    n = 6
    outs = []
    for run in (kernels["tethered_steps"], tethered_steps):
        state = np.array([0.1, 0.0, 6.0, 0.98, 0.1, -0.1, 0.1, 0.3, -0.1, 0.2, 0.3, -0.2, 0.5])
        state[3:7] /= np.linalg.norm(state[3:7])
        r_a, end, end_v = np.array([-0.2, 0.0, -0.1]), np.empty(3), np.empty(3)
        attachment_point(state, r_a, end, end_v)
        base = end - np.array([0.0, 0.0, 5.9])          # the cable (6 x 1 m) swung sideways, nearly taut
        p = base + np.linspace(0.0, 1.0, n + 1)[:, None] * (end - base)
        p[1:n, 0] += np.linspace(0.0, 0.3, n - 1)
        v = np.zeros((n + 1, 3))
        v[n] = end_v
        arrays = (np.zeros(1), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(4))
        tc = (1.9e6, 1.0, 100.0, 0.043, 0.044, 3.75, 1.2, 0.01, 0.3, 0.3, 0.0)
        x = run(state, 5, 0.0025, np.array([5.0, 1.0, -3.0, 0.2, 0.1, -0.3]), (constants, 0.0, 0.0, 0.0, False), None,
                p, v, arrays[0], base, np.array([0.1, 0.0, 0.0]), r_a, tc, 4, 1e-9, *arrays[1:], 0.005)
        outs.append((x, p, v) + arrays)
    return all(np.array_equal(a, b) and np.all(np.isfinite(a)) for a, b in zip(*outs))


def _probe_integrate(kernels):
    """True when the compiled stepper gives the Python stepper's state on a probe."""
    probe = (0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0) + (0.1,) * 6
    constants = (UPDATED_KIND,) + (1.0,) * 18 + (0.0,) * (N_CONSTANTS - 19)
    return kernels["integrate"](probe, 2, 0.01, (1.0,) * 6, (constants, 0.0, 0.0, 0.0, False), None) \
        == integrate(list(probe), 2, 0.01, [1.0] * 6, (constants, 0.0, 0.0, 0.0, False))


#: :func:`tethered_steps` and its callees: the family compiled together (here and by the in-process loop's kernel).
TETHERED_KERNELS = (tethered_steps, point_response, water_relative, integrate, accelerations, drag_slopes) \
    + tether_math.KERNELS
