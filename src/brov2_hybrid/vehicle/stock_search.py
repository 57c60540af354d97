"""The stock-compensated output stage's per-group search, as kernels numba compiles.

:class:`~brov2_hybrid.vehicle.firmware_output.StockCompensatedOutput` forms Algorithm 2's
target (its allocator may be any object) and then, for each thruster group (horizontal
first, then vertical), calls :func:`group_search`: Newton steps for the group's three
channels (:func:`group_newton`), then the best of the neighbouring 1 us channel
quantizations, scored through stock ArduSub's own mixing and truncation
(:func:`~brov2_hybrid.vehicle.mixers.stock_rows`,
:func:`~brov2_hybrid.vehicle.mixers.truncated_pwm_rows`) and the thrust table
(:func:`~brov2_hybrid.vehicle.thrust_table.interp_at`).

These are plain functions on floats and arrays: the one implementation, run compiled by
numba where it is installed (:mod:`brov2_hybrid.jit`; about 20x faster per command) and
as Python otherwise, with the same numbers. Products and least-squares solves are numpy's
``@`` and ``np.linalg.lstsq`` in both (BLAS gemv/gemm and LAPACK gelsd, with the rcond
numpy uses by default), so the compiled search gives the RC values of the search as first
written (:mod:`~brov2_hybrid.bench.stock_search_reference`), tested over a large random
set that includes saturation.
"""
import numpy as np

from brov2_hybrid.vehicle.mixers import stock_rows, truncated_pwm_rows
from brov2_hybrid.vehicle.thrust_table import interp_at, pwm_from_star

#: rcond of the Newton solves: numpy's default for a 3 x 3 system, eps * max(m, n).
RCOND = float(np.finfo(float).eps) * 3.0


def group_newton(A, A_pinv, T_dofs, m_target_g, tau_req_g, tau_rest_g, xp, fp, slopes, neutral_us, half_range_us,
                 slope_step_us, newton_steps):
    """The group's channels v (3,), in [-1, 1], scaled so Algorithm 1 never rescales them.

    Start: Algorithm 2's motor outputs ``m_target_g`` (the group's motors) through the
    group's frame factors ``A`` (motors x 3) by least squares (``A_pinv``); then up to
    ``newton_steps`` Newton steps on the group's own wrench rows (``T_dofs``, 3 x motors;
    ``tau_req_g``, ``tau_rest_g``: those rows of the target and of the other thrusters'
    wrench) through the thrust table's local slope (piecewise linear, one-sided away from
    neutral, ``slope_step_us`` wide; a motor in the dead band has none). Stops early when
    no motor moves or a step is not finite. The table is ``xp`` [us], ``fp`` [N] and
    ``slopes`` (:func:`~brov2_hybrid.vehicle.thrust_table.interp_at`).
    """
    v = A_pinv @ m_target_g
    n = A.shape[0]
    f0 = np.empty(n)
    slope = np.empty(n)
    for _ in range(newton_steps):
        m_all = A @ v
        moving = False
        for i in range(n):
            m = min(max(m_all[i], -1.0), 1.0)
            pwm = neutral_us + half_range_us * m
            step_us = slope_step_us if m >= 0.0 else -slope_step_us
            f = interp_at(xp, fp, slopes, pwm)
            k = (interp_at(xp, fp, slopes, pwm + step_us) - f) / step_us * half_range_us
            moving = moving or (m != 0.0 and k > 0.0)
            f0[i] = f
            slope[i] = k
        if not moving:
            break
        J = (T_dofs * slope) @ A                      # d tau_g / d v
        r = tau_req_g - T_dofs @ f0 - tau_rest_g
        v_new = v + np.linalg.lstsq(J, r, RCOND)[0]
        if not np.all(np.isfinite(v_new)):
            break
        v = v_new
    v = np.minimum(np.maximum(v, -1.0), 1.0)
    peak = np.max(np.abs(A @ v))
    if peak > 1.0:                      # Algorithm 1 would rescale the group by this
        v = v / peak
    return v


def group_search(dofs, motors, others, A, A_pinv, T_others, T_g_t, T_dofs, corner_steps, u_grid, m_target, tau_req,
                 weights, f_now, u_out, T_hat, mixing, fv_coupling_k, xp, fp, slopes, neutral_us, table_half_range_us,
                 slope_step_us, newton_steps, rc_half_range_us, clip_motor_pwm, pwm_min_us, pwm_max_us, tie_break):
    """One thruster group of the stock compensation; writes its channels into ``u_out`` (6,)
    and its motors' thrust into ``f_now`` (n,) (a kernel).

    ``dofs`` (3,), ``motors`` and ``others`` (the thrusters outside the group) are index
    arrays; ``A``/``A_pinv`` the group's frame factors and their pseudo-inverse;
    ``T_others`` (6 x others), ``T_g_t`` (motors x 6, the group's columns of T transposed)
    and ``T_dofs`` (the group's rows of its columns). Candidates: the floor/ceil of each
    channel on the 1/``rc_half_range_us`` grid (``corner_steps``, 8 x 3) and u itself
    (``u_grid``, already on the grid: the uncompensated command, better when the group
    saturates), kept in [-1, 1]; each is scored by the squared normalized (``weights``)
    wrench error of the motor PWMs stock ArduSub outputs for it (its mixing, ``mixing`` /
    ``fv_coupling_k``, truncation, optionally clipped to the PWM limits) plus ``tie_break``
    |u'|^2, which only decides between candidates that deliver the same wrench (e.g.
    several inside the dead band; they go to the smallest command).
    """
    tau_rest = T_others @ f_now[others]
    v = group_newton(A, A_pinv, T_dofs, m_target[motors], tau_req[dofs], tau_rest[dofs], xp, fp, slopes,
                     neutral_us, table_half_range_us, slope_step_us, newton_steps)
    n_corners = corner_steps.shape[0]
    cand = np.zeros((n_corners + 1, 6))            # whole commands, the other group at 0
    base = np.floor(v * rc_half_range_us) / rc_half_range_us
    for j in range(3):
        d = dofs[j]
        for c in range(n_corners):
            cand[c, d] = min(max(base[j] + corner_steps[c, j], -1.0), 1.0)
        cand[n_corners, d] = min(max(u_grid[d], -1.0), 1.0)
    pwm_all = truncated_pwm_rows(stock_rows(T_hat, cand, mixing, fv_coupling_k), table_half_range_us)
    n_g = motors.shape[0]
    forces = np.empty((n_corners + 1, n_g))
    for c in range(n_corners + 1):
        for i in range(n_g):
            pwm = pwm_all[c, motors[i]]
            if clip_motor_pwm:
                pwm = min(max(pwm, pwm_min_us), pwm_max_us)
            forces[c, i] = interp_at(xp, fp, slopes, pwm)
    err = (forces @ T_g_t + tau_rest - tau_req) * weights
    best, best_score = 0, np.inf
    for c in range(n_corners + 1):
        e2 = 0.0
        for k in range(6):
            e2 += err[c, k] * err[c, k]
        c2 = 0.0
        for j in range(3):
            c2 += cand[c, dofs[j]] * cand[c, dofs[j]]
        score = e2 + tie_break * c2
        if score < best_score:
            best, best_score = c, score
    for j in range(3):
        u_out[dofs[j]] = cand[best, dofs[j]]
    for i in range(n_g):
        f_now[motors[i]] = forces[best, i]


def compensated_command(u, m_target, T, tau_max, requested_target, xp, fp, slopes, neutral_us, table_half_range_us,
                        rc_half_range_us, weights, T_hat, mixing, fv_coupling_k, slope_step_us, newton_steps,
                        clip_motor_pwm, pwm_min_us, pwm_max_us, tie_break, corner_steps,
                        dofs_h, motors_h, others_h, A_h, A_pinv_h, T_others_h, T_g_t_h, T_dofs_h,
                        dofs_v, motors_v, others_v, A_v, A_pinv_v, T_others_v, T_g_t_v, T_dofs_v, u_out):
    """The stock-compensated stage's u' (6,) for u (6,) into ``u_out`` (a kernel).

    ``m_target`` (n,): Algorithm 2's m* for u. Its whole-microsecond PWMs give the target
    thrusts (the thrust table ``xp`` [us], ``fp`` [N], ``slopes``) and the target wrench
    T f (or, with ``requested_target``, tau_max u itself); then :func:`group_search` for the
    horizontal group (``*_h``) and the vertical group (``*_v``: each group's index arrays and
    matrices, see :func:`group_search`), the horizontal first. u = 0 gives u itself (neutral
    stays exactly neutral). Arrays, not tuples of them: numba's call of a compiled function
    types a tuple of arrays far more slowly than the arrays one by one.
    """
    nonzero = False
    for k in range(6):
        nonzero = nonzero or u[k] != 0.0
    if not nonzero:
        for k in range(6):
            u_out[k] = u[k]
        return
    n = len(m_target)
    f_now = np.empty(n)
    for i in range(n):
        f_now[i] = interp_at(xp, fp, slopes, np.rint(pwm_from_star(m_target[i], neutral_us, table_half_range_us)))
    tau_req = tau_max * u if requested_target else T @ f_now
    u_grid = np.rint(u * rc_half_range_us) / rc_half_range_us      # u itself on the channels' grid
    for k in range(6):
        u_out[k] = 0.0
    group_search(dofs_h, motors_h, others_h, A_h, A_pinv_h, T_others_h, T_g_t_h, T_dofs_h, corner_steps, u_grid,
                 m_target, tau_req, weights, f_now, u_out, T_hat, mixing, fv_coupling_k, xp, fp, slopes, neutral_us,
                 table_half_range_us, slope_step_us, newton_steps, rc_half_range_us, clip_motor_pwm, pwm_min_us,
                 pwm_max_us, tie_break)
    group_search(dofs_v, motors_v, others_v, A_v, A_pinv_v, T_others_v, T_g_t_v, T_dofs_v, corner_steps, u_grid,
                 m_target, tau_req, weights, f_now, u_out, T_hat, mixing, fv_coupling_k, xp, fp, slopes, neutral_us,
                 table_half_range_us, slope_step_us, newton_steps, rc_half_range_us, clip_motor_pwm, pwm_min_us,
                 pwm_max_us, tie_break)


KERNELS = (stock_rows, truncated_pwm_rows, interp_at, pwm_from_star, group_newton, group_search, compensated_command)
