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
from brov2_hybrid.sim.tether import attachment_point, end_force, pull_wrench, step  # step: the tether's (a kernel callee)

#: Below this |omega| [rad/s] the quaternion update uses its small-angle limit.
SMALL_RATE_RAD_S = 1e-12


def integrate(state, n, dt, tau, c, lag_terms=None):
    """n semi-implicit Euler steps of the model in floats (the fast stepper).

    ``state`` = [north, east, down, qw, qx, qy, qz, u, v, w, p, q, r]; ``tau`` the steady
    thruster wrench; ``c`` the stepper constants (the model's
    :func:`~brov2_hybrid.sim.dynamics.model_constants`, the current north, east, down and
    whether it is non-zero); ``lag_terms`` (or None) the modal thruster-lag terms [step
    factor, current factor, (6,) complex weights], advanced in place.

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
        # Velocity relative to the water.
        if has_current:
            ur = u - (R11 * cn + R21 * ce + R31 * cd)
            vr = v - (R12 * cn + R22 * ce + R32 * cd)
            wr = w - (R13 * cn + R23 * ce + R33 * cd)
        else:
            ur, vr, wr = u, v, w
        udot, vdot, wdot, pdot, qdot, rdot = accelerations(constants, X, Y, Z, K, M, N, pd, R31, R32, R33, u, v, w,
                                                           ur, vr, wr, p, q, r)
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


def compiled_integrate():
    """:func:`integrate` compiled by numba (nopython), or None without numba.

    The same source: :func:`integrate` with the force terms
    (:func:`~brov2_hybrid.sim.dynamics.accelerations`) compiled too (:mod:`brov2_hybrid.jit`),
    specialised for ``lag_terms=None`` (numba drops the lag branch). IEEE arithmetic
    without fast-math, so it gives the numbers of the Python function (checked on a probe
    and tested); about 15x faster per step. ``BROV2_NO_JIT=1`` or a missing / unusable
    numba keeps the Python function.
    """
    kernels = compile_family("plant", (integrate, accelerations, drag_slopes, rotation_ned_frd), _probe_integrate)
    return kernels["integrate"] if kernels else None


def tethered_steps(state, n, dt, tau, c, lag_terms, p, v, clock, base_p0, base_v, r_a, tc, iterations, tolerance,
                   tally, pull_sum, pull_max):
    """``n`` plant steps of ``dt`` [s] on a tether (a kernel; the plant's state (13,) array returned).

    Each step: :func:`integrate` with the steady wrench ``tau`` plus the tether's pull (its last
    segment's force now, at the attachment point ``r_a`` [m, body FRD]:
    :func:`~brov2_hybrid.sim.tether.pull_wrench`), then one implicit step of the tether's nodes
    ``p``, ``v`` (n + 1, 3) [m, m/s], updated in place, to the base and the vehicle's new
    attachment point (:func:`~brov2_hybrid.sim.tether.step`): the vehicle is stepped first, with
    the pull of the step before. ``c`` and ``lag_terms`` as :func:`integrate`'s; ``clock`` (1,) the
    tether's time [s] (the base at ``base_p0 + base_v * clock``, NED [m, m/s]); ``tc``, ``iterations``,
    ``tolerance`` the tether's constants and Newton settings; ``tally`` (2,) steps and Newton iterations,
    ``pull_sum``, ``pull_max`` (3,) per NED axis the sum and largest |pull| [N] after each step, added to.
    """
    x = np.empty(13)
    for i in range(13):
        x[i] = state[i]
    wrench, total = np.empty(6), np.empty(6)
    position, velocity, base = np.empty(3), np.empty(3), np.empty(3)
    for _ in range(n):
        pull_wrench(x, end_force(p, v, tc[0], tc[1], tc[2]), r_a, wrench)
        for k in range(6):
            total[k] = tau[k] + wrench[k]
        stepped = integrate(x, 1, dt, total, c, lag_terms)
        for i in range(13):
            x[i] = stepped[i]
        clock[0] += dt
        for k in range(3):
            base[k] = base_p0[k] + base_v[k] * clock[0]
        attachment_point(x, r_a, position, velocity)
        p_new, v_new, used = step(p, v, dt, base, base_v, position, velocity, tc, iterations, tolerance)
        p[:, :] = p_new
        v[:, :] = v_new
        tally[0] += 1.0
        tally[1] += used
        pull = end_force(p, v, tc[0], tc[1], tc[2])
        for k in range(3):
            size = abs(pull[k])
            pull_sum[k] += size
            if size > pull_max[k]:
                pull_max[k] = size
    return x


def compiled_tethered_steps():
    """:func:`tethered_steps` compiled by numba with its callees (the plant's stepper, the tether's
    step), or None without numba; probed against the Python function on a swinging cable."""
    kernels = compile_family("tethered_plant", (tethered_steps, integrate, accelerations, drag_slopes) + tether_math.KERNELS,
                             _probe_tethered)
    return kernels["tethered_steps"] if kernels else None


def _probe_tethered(kernels):
    """True when the compiled :func:`tethered_steps` gives the Python function's state, nodes and tallies."""
    constants = (UPDATED_KIND,) + (1.0,) * 18 + (0.0,) * (N_CONSTANTS - 19)
    n = 6
    outs = []
    for run in (kernels["tethered_steps"], tethered_steps):
        p = np.zeros((n + 1, 3))
        p[:, 2] = np.linspace(0.0, 6.05, n + 1)
        p[1:n, 0] += np.linspace(0.0, 0.3, n - 1)
        v = np.zeros((n + 1, 3))
        arrays = (np.zeros(1), np.zeros(2), np.zeros(3), np.zeros(3))
        state = np.array([0.1, 0.0, 6.0, 0.98, 0.1, -0.1, 0.1, 0.3, -0.1, 0.2, 0.3, -0.2, 0.5])
        state[3:7] /= np.linalg.norm(state[3:7])
        tc = (1.9e6, 1.0, 100.0, 0.043, 0.044, 3.75, 1.2, 0.01, 0.3, 0.3, 0.0)
        x = run(state, 5, 0.0025, np.array([5.0, 1.0, -3.0, 0.2, 0.1, -0.3]), (constants, 0.0, 0.0, 0.0, False), None, p, v, arrays[0],
                np.zeros(3), np.array([0.1, 0.0, 0.0]), np.array([-0.2, 0.0, -0.1]), tc, 4, 1e-9, *arrays[1:])
        outs.append((x, p, v) + arrays)
    return all(np.array_equal(a, b) for a, b in zip(*outs))


def _probe_integrate(kernels):
    """True when the compiled stepper gives the Python stepper's state on a probe."""
    probe = (0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0) + (0.1,) * 6
    constants = (UPDATED_KIND,) + (1.0,) * 18 + (0.0,) * (N_CONSTANTS - 19)
    return kernels["integrate"](probe, 2, 0.01, (1.0,) * 6, (constants, 0.0, 0.0, 0.0, False), None) \
        == integrate(list(probe), 2, 0.01, [1.0] * 6, (constants, 0.0, 0.0, 0.0, False))
