"""The in-process loop's whole run as one kernel: :meth:`ClosedLoop._ticks` compiled by numba.

:func:`fly` runs the events of :meth:`~brov2_hybrid.loop.closed_loop.ClosedLoop._ticks`
(telemetry samples, control ticks, delayed motor commands, physics steps between them) in
whole physics steps, calling the same kernels the Python tick calls through the objects:
the desired-rate estimate, the reference filter and the control law (:mod:`brov2_hybrid.control.law_kernels`),
the output stage (:func:`~brov2_hybrid.vehicle.stock_search.compensated_command`), the
channel maps (:mod:`brov2_hybrid.vehicle.rc`), the firmware's mixing
(:func:`~brov2_hybrid.vehicle.mixers.quantitative_motor_pwm`,
:func:`~brov2_hybrid.vehicle.mixers.stock_motor_pwm`) and the plant's input, attitude and
stepper (:mod:`brov2_hybrid.sim.plant`). Only the orchestration is written here; every
equation is the one the nodes run. The rows are the Python loop's, bit for bit (tested).

It covers the loop's usual configurations: the updated model without thruster lag, with or
without its tether, a linear allocator (the paper's T-dagger) and any output stage. Others (the stock SITL
model, a thruster lag, the saturation-aware allocator) run the Python tick loop, and so does
everything where numba is missing. The plant's sensor noise is drawn before the run from
the plant's own generator, as many standard normals as the run takes, in the order the
Python loop draws them: the generator ends where it would have.
"""
import math

import numpy as np

from brov2_hybrid.control.law_kernels import (control_torque, drag_torque, filter_step, model_drag, integral_step,
                                              normalized_command, pd_torque, rate_estimate, rate_trim, rate_update,
                                              reference_output, reference_torque, reference_update, sign)
from brov2_hybrid.control.law import check_gimbal_lock
from brov2_hybrid.loop.fly_args import fly_arguments
from brov2_hybrid.jit import compile_family, grouped_call
from brov2_hybrid.physics.hydrostatics import lever_moment
from brov2_hybrid.physics.kinematics import GIMBAL_LOCK_COS, down_axis, euler_angles, j2_inv_matrix, j2_matrix, wrapped
from brov2_hybrid.sim.plant import integrate, steady_wrench, tethered_steps
from brov2_hybrid.sim.stepper import TETHERED_KERNELS   # tethered_steps with its callees (integrate's among them)
from brov2_hybrid.vehicle.mixers import (algorithm2_stars, quantitative_motor_pwm, stock_motor_pwm, stock_rows,
                                         truncated_pwm_rows)
from brov2_hybrid.vehicle.rc import rc_from_u, u_from_rc
from brov2_hybrid.vehicle.stock_search import compensated_command, group_newton, group_search
from brov2_hybrid.vehicle.thrust_table import interp_at, pwm_from_star, star_from_force

#: fly's status[0]: the run completed, or stopped at gimbal lock (status[1]: the pitch [rad]).
DONE, GIMBAL_LOCK = 0.0, 1.0


def fly(timing, dive, rate_estimator, law, output, search, firmware, plant, tether, noise, log, status):
    """Fly a dive's run: fill the log's rows, one per control tick, in whole physics steps.

    Every argument but ``status`` is a plain tuple of one concept, packed by
    :func:`~brov2_hybrid.loop.fly_args.fly_arguments` (the fields and their units:
    :class:`~brov2_hybrid.loop.fly_args.FlyArguments`; unpacked by name below):
    ``timing`` the ticks and steps, ``dive`` the dive's rows, ``rate_estimator`` and ``law``
    the control law (:func:`~brov2_hybrid.control.law_kernels.control_torque`'s settings),
    ``output`` the output stage and RC map, ``search`` the stock search's settings
    (:func:`~brov2_hybrid.vehicle.stock_search.compensated_command`'s, used with ``compensate``),
    ``firmware`` ArduSub's mixers, ``plant`` the vehicle model, ``tether`` its tether (on or not:
    :func:`~brov2_hybrid.sim.stepper.tethered_steps` steps the two together), ``noise`` its sensors' noise,
    ``log`` the rows to fill; ``status`` (3,): DONE or GIMBAL_LOCK, the pitch [rad] it stopped
    at, the physics steps run.

    Updated in place, as the objects' own ticks would: the plant's state (13,) and its last
    motor PWMs, thrusts and wrench (``plant``'s last array, (2 n + 6,)), the rate estimator's
    arrays and the law's integral state; on a tether, its nodes, clock, tallies and pull figures.
    """
    n_ticks, steps_per_tick, steps_per_sample, telemetry_delay, command_delay, dt = timing
    dive_t, dive_eta2d, dive_u_linear = dive
    rate_times, rate_values, rate_diffs, rate_meta, rate_window, ref_state, ref_meta, ref_omega, ref_gap = \
        rate_estimator
    tau_max = law[0]
    compensate, stock_firmware, rc_signs, rc_neutral_us, rc_half_range_us, pwm_min_us, pwm_max_us = output
    F, alloc_tau_max, inv_force, inv_star, inv_slopes, T_hat, mixing, fv_coupling_k, neutral_us, \
        table_half_range_us = firmware
    state, constants, plant_pwm_min_us, plant_pwm_max_us, xp, fp, slopes, matrix, plant_out = plant
    tether_on, nodes_p, nodes_v, clock, base_p0, base_v, r_a, tc, iterations, tolerance, tally, pull_sum, pull_max, \
        hold, tether_step_s = tether
    normals, noise_on, attitude_std, rate_std, depth_std = noise
    rows, cols, tether_cols, by_channel = log
    n = matrix.shape[1]
    half = 0.5 * dt
    n_rows = len(dive_t)
    next_row = 0
    eta2d = dive_eta2d[0]
    u_lin = dive_u_linear[0]
    samples = np.empty(((n_ticks - 1) * steps_per_tick // steps_per_sample + 1, 6))
    n_samples = 0
    drawn = 0
    commands = np.empty((n_ticks, n))
    tau, u, saturated = np.zeros(6), np.zeros(6), np.empty(6)
    sent, rc, u_read, m_target = np.empty(6), np.empty(6), np.empty(6), np.empty(n)
    rate_d = np.empty(3)
    pwm_now, f_now, tau_now = plant_out[:n], plant_out[n:2 * n], plant_out[2 * n:]
    q = np.empty(4)
    step, tick, next_sample, next_tick, applied = 0, 0, 0, 0, 0
    while tick < n_ticks:
        t = step * dt
        if step == next_sample:         # the IMU's attitude and rates (noisy if enabled)
            q[0], q[1], q[2], q[3] = state[4], state[5], state[6], state[3]
            roll, pitch, yaw = euler_angles(q)
            sample = samples[n_samples]
            sample[0], sample[1], sample[2] = roll, pitch, yaw
            sample[3], sample[4], sample[5] = state[10], state[11], state[12]
            if noise_on:
                if attitude_std != 0.0:
                    for a in range(3):
                        sample[a] = sample[a] + (0.0 + attitude_std * normals[drawn + a])
                    drawn += 3
                if rate_std != 0.0:
                    for a in range(3):
                        sample[3 + a] = sample[3 + a] + (0.0 + rate_std * normals[drawn + a])
                    drawn += 3
                sample[2] = math.atan2(math.sin(sample[2]), math.cos(sample[2]))
            n_samples += 1
            next_sample += steps_per_sample
        if step == next_tick:
            while next_row < n_rows and dive_t[next_row] <= t + half:
                rate_update(rate_times, rate_values, rate_diffs, rate_meta, rate_window, dive_t[next_row],
                            dive_eta2d[next_row])
                reference_update(ref_state, ref_meta, ref_omega, ref_gap, dive_t[next_row], dive_eta2d[next_row])
                eta2d, u_lin = dive_eta2d[next_row], dive_u_linear[next_row]
                next_row += 1
            due = step - telemetry_delay
            if due < 0:                 # no attitude yet: neutral, as the nodes do
                for k in range(6):
                    tau[k] = 0.0
                    u[k] = 0.0
            else:
                seen = samples[min(due // steps_per_sample, n_samples - 1)]
                if abs(math.cos(seen[1])) < GIMBAL_LOCK_COS:
                    status[0], status[1], status[2] = GIMBAL_LOCK, seen[1], step
                    return
                rate_estimate(rate_times, rate_diffs, rate_meta[0], t, rate_d)
                control_torque(eta2d, u_lin, seen[:3], seen[3:], rate_d, t, *law, tau)
                normalized_command(tau, tau_max, u, saturated)
            if compensate:
                algorithm2_stars(u, F, alloc_tau_max, inv_force, inv_star, inv_slopes, m_target)
                compensated_command(u, m_target, *search, sent)
            else:
                for k in range(6):
                    sent[k] = u[k]
            rc_from_u(sent, rc_signs, rc_neutral_us, rc_half_range_us, rc)
            u_from_rc(rc, rc_signs, rc_neutral_us, rc_half_range_us, u_read)
            command = commands[tick]
            if stock_firmware:
                stock_motor_pwm(u_read, T_hat, mixing, fv_coupling_k, table_half_range_us, pwm_min_us, pwm_max_us,
                                command)
            else:
                quantitative_motor_pwm(u_read, F, alloc_tau_max, inv_force, inv_star, inv_slopes, neutral_us,
                                       table_half_range_us, pwm_min_us, pwm_max_us, command)
            row = rows[tick]
            q[0], q[1], q[2], q[3] = state[4], state[5], state[6], state[3]
            roll, pitch, yaw = euler_angles(q)
            values = (t, eta2d[0], eta2d[1], eta2d[2], roll, pitch, yaw, state[10], state[11], state[12],
                      u_lin[0], u_lin[1], u_lin[2])
            j = 0
            for v in values:
                row[cols[j]] = v
                j += 1
            for k in range(6):
                row[cols[j + k]] = tau[k]
                row[cols[j + 6 + k]] = u[k]
                row[cols[j + 12 + k]] = rc[by_channel[k]]
            j += 18
            for i in range(n):
                row[cols[j + i]] = command[i]
            depth = state[2]
            if noise_on and depth_std != 0.0:
                depth += 0.0 + depth_std * normals[drawn]
                drawn += 1
            row[cols[j + n]] = depth
            if tether_on:
                for k in range(3):
                    row[tether_cols[k]] = hold[1 + k]      # the pull the vehicle feels now
            tick += 1
            next_tick += steps_per_tick
        if applied < tick and applied * steps_per_tick + command_delay <= step:
            while applied < tick and applied * steps_per_tick + command_delay <= step:
                applied += 1
            steady_wrench(commands[applied - 1], plant_pwm_min_us, plant_pwm_max_us, xp, fp, slopes, matrix, pwm_now,
                          f_now, tau_now)
        if tick >= n_ticks:
            break
        nxt = min(next_sample, next_tick)
        if applied < tick:
            nxt = min(nxt, applied * steps_per_tick + command_delay)
        if tether_on:
            xt = tethered_steps(state, nxt - step, dt, tau_now, constants, None, nodes_p, nodes_v, clock, base_p0,
                                base_v, r_a, tc, iterations, tolerance, tally, pull_sum, pull_max, hold, tether_step_s)
            for i in range(13):
                state[i] = xt[i]
        else:
            x = integrate(state, nxt - step, dt, tau_now, constants, None)
            for i in range(13):
                state[i] = x[i]
        step = nxt
    status[0], status[2] = DONE, step


KERNELS = (fly, rate_update, rate_trim, rate_estimate, sign, model_drag, drag_torque, filter_step, reference_update,
           reference_output, reference_torque, integral_step, pd_torque, control_torque,
           normalized_command, wrapped, down_axis, lever_moment, j2_matrix, j2_inv_matrix, euler_angles,
           steady_wrench, interp_at, rc_from_u, u_from_rc, algorithm2_stars, quantitative_motor_pwm,
           stock_motor_pwm, stock_rows, truncated_pwm_rows, star_from_force, pwm_from_star, compensated_command,
           group_search, group_newton) + TETHERED_KERNELS


def fly_loop(loop, fly, dive, controller, rows):
    """Fly ``dive`` with ``controller`` on the :class:`~brov2_hybrid.loop.closed_loop.ClosedLoop`
    ``loop`` through ``fly`` (:func:`fly` compiled), filling ``rows``; False (nothing run) where
    it does not cover the loop (the stock model, a thruster lag, a nonlinear allocator).

    Raises Brov2Error at gimbal lock, as the law does (the plant left where the run stopped).
    """
    args = fly_arguments(loop, dive, controller, rows)
    if args is None:
        return False
    fly(*args)
    state, plant_out, status = args.plant[0], args.plant[-1], args.status
    n = loop.vehicle.n_thrusters
    loop.plant.load_stepped(state, int(status[2]), plant_out[:n], plant_out[n:2 * n], plant_out[2 * n:])
    if loop.plant.tether is not None:
        loop.plant.tether.took_steps(args.tether)
    if status[0] == GIMBAL_LOCK:
        check_gimbal_lock(status[1])
    return True


def compiled_fly(probe):
    """:func:`fly` compiled by numba, or None (no numba, BROV2_NO_JIT, or it would not compile or
    would not give the Python tick loop's rows here). ``probe(compiled)``: the check, run on the
    first compile (:func:`brov2_hybrid.loop.closed_loop.probe_fly`)."""
    kernels = compile_family("loop", KERNELS, probe)
    return grouped_call(kernels["fly"]) if kernels else None
