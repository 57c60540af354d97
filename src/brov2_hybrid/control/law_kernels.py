"""The control law's per-tick arithmetic as kernels: the one implementation, compiled where possible.

:class:`~brov2_hybrid.control.law.HybridController` (every node, the in-process loop, the
analysis) checks its inputs and keeps its state in small arrays; these plain functions on
floats and arrays do the arithmetic of a tick, compiled by numba where it is installed
(:mod:`brov2_hybrid.jit`) and run as Python otherwise, with the same numbers:

* :func:`rate_update` / :func:`rate_estimate` -- the desired-rate estimate of
  :class:`~brov2_hybrid.control.rate_estimate.DesiredRateEstimator` (Eq. 18's eta2d_dot);
* :func:`reference_update` / :func:`reference_output` -- the desired trajectory's state-variable
  filter (:class:`~brov2_hybrid.control.rate_estimate.ReferenceFilter`: attitude, rate and
  acceleration) and :func:`reference_torque`, the vehicle model's inverse dynamics along it
  (the optional reference feed-forward);
* :func:`integral_step` -- the optional integral action
  (:class:`~brov2_hybrid.control.integral_action.IntegralAction`, its equations there);
* :func:`pd_torque` / :func:`control_torque` -- Eq. 18/24 (the PD on the attitude and rate errors, the
  buoyancy feed-forward), the drag or reference feed-forward and the open-loop linear DOFs;
* :func:`normalized_command` -- u = clip(tau / tau_max, -1, 1) and the saturation flags.

Products of a matrix and a vector are numpy's ``@`` in both forms (numba calls the same
BLAS), element-wise arithmetic is IEEE in the order of the formulas (no fast-math), so a
compiled tick gives the Python tick's bits; a probe checks that before the compiled
kernels are used, and the tests hold every kernel to its reference. Angles rad, NED/FRD.
"""
import math

import numpy as np

from brov2_hybrid.jit import compile_family
from brov2_hybrid.physics.hydrostatics import lever_moment
from brov2_hybrid.physics.kinematics import down_axis, j2_inv_matrix, j2_matrix, wrapped

#: Index of the sample count in a rate estimator's ``meta`` array.
COUNT = 0


def rate_update(times, values, diffs, meta, window, t_s, eta2d):
    """Add the desired attitude ``eta2d`` (3,) sampled at ``t_s`` [s] to a rate estimator's arrays.

    ``times`` (capacity,), ``values`` (capacity, 3) and ``diffs`` (capacity, 3) hold
    ``meta[COUNT]`` samples, oldest first; ``diffs[k]`` is the wrapped difference
    values[k] - values[k - 1] (k >= 1). A time not after the last one replaces the last
    sample (a re-sent setpoint); at most ``window`` + 1 samples are kept (capacity: ``window`` + 2).
    """
    n = meta[COUNT]
    if n > 0 and t_s <= times[n - 1]:
        n -= 1
    if n > 0:
        for a in range(3):
            diffs[n, a] = wrapped(eta2d[a] - values[n - 1, a])
    times[n] = t_s
    for a in range(3):
        values[n, a] = eta2d[a]
    n += 1
    meta[COUNT] = rate_trim(times, values, diffs, n, window)


def rate_trim(times, values, diffs, n, window):
    """Drop the oldest of ``n`` samples until at most ``window`` + 1 remain; return the count."""
    drop = n - (window + 1)
    if drop <= 0:
        return n
    for k in range(n - drop):
        times[k] = times[k + drop]
        for a in range(3):
            values[k, a] = values[k + drop, a]
            diffs[k, a] = diffs[k + drop, a]
    return n - drop


def rate_estimate(times, diffs, n, now_s, out):
    """The dt-weighted mean rate (3,) [rad/s] of ``n`` samples into ``out``: sum of the wrapped
    differences over (t_last - t_first); zeros with fewer than two samples or once ``now_s``
    (NaN: no tick time) lies further past the last sample than the samples span."""
    for a in range(3):
        out[a] = 0.0
    if n < 2:
        return
    span = times[n - 1] - times[0]
    if now_s - times[n - 1] > span:
        return
    for a in range(3):
        total = 0.0
        for k in range(1, n):
            total += diffs[k, a]
        out[a] = total / span


def sign(x):
    """np.sign of a float: -1.0, 0.0 (also for -0.0) or 1.0."""
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


def model_drag(linear, quadratic, rate):
    """The vehicle model's damping of one DOF at ``rate``: B_L rate + B_NL rate |rate| (the
    vehicle file's linear and quadratic drag; N or N m for a rate in m/s or rad/s)."""
    return linear * rate + quadratic * rate * abs(rate)


def drag_torque(drag, rate, a):
    """:func:`model_drag` [N m] of axis ``a`` at ``rate`` [rad/s], ``drag`` (2, 3) = (linear,
    quadratic) drag of roll, pitch, yaw."""
    return model_drag(drag[0, a], drag[1, a], rate)


#: Indices in a reference filter's ``meta`` array: the last sample's time [s] (NaN: no sample yet), and
#: how long after it the trajectory stays at its state [s] (the stream's last interval; 0 after a step).
LAST_T, STAY = 0, 1


def filter_step(e, v, slope, dt, omega):
    """Advance one axis of the critically damped filter x'' = omega^2 (u - x) - 2 omega x' by ``dt`` [s],
    exactly, for an input u that ramps at ``slope`` [rad/s] over the interval.

    ``e`` = x - u at the interval's start [rad] and ``v`` = x' [rad/s]; returns (x - u, x') at its
    end, u at the end being the start's u + slope dt. With c = 2 slope / omega, e + c and x' - slope
    obey the unforced filter, whose solution is (a + b t) exp(-omega t), b = (x' - slope) + omega (e + c).
    """
    c = 2.0 * slope / omega
    e_hat = e + c
    w = v - slope
    b = w + omega * e_hat
    decay = math.exp(-omega * dt)
    return (e_hat + b * dt) * decay - c, (w - omega * b * dt) * decay + slope


def reference_update(state, meta, omega, max_gap, t_s, eta2d):
    """Feed the desired attitude ``eta2d`` (3,) [rad] sampled at ``t_s`` [s] to a reference filter.

    ``state`` (3, 3): rows x_f [rad], x_f' [rad/s] and the last sample u [rad] per axis; ``meta``
    (2,): (LAST_T, STAY) (NaN, 0 before the first sample, which starts the filter at rest on it).
    Samples at most ``max_gap`` [s] apart are a stream, joined by straight lines (first-order hold:
    a 50 Hz staircase gives a ripple-free rate and acceleration), and the trajectory stays at a
    sample's state for the interval that led to it (the next sample of the stream is due then); a
    longer gap is a setpoint held: the filter settled on it from STAY after it (as
    :func:`reference_output` showed) and the new sample is a step, followed at once. A time not
    after the last one replaces the held sample (a re-sent setpoint; the filter's state is kept).
    """
    last = meta[LAST_T]
    if math.isnan(last):
        for a in range(3):
            state[0, a], state[1, a], state[2, a] = eta2d[a], 0.0, eta2d[a]
        meta[LAST_T], meta[STAY] = t_s, 0.0
        return
    dt = t_s - last
    for a in range(3):
        u = state[2, a]
        if dt > 0.0:
            e = wrapped(state[0, a] - u)
            if dt <= max_gap:
                e, v = filter_step(e, state[1, a], wrapped(eta2d[a] - u) / dt, dt, omega)
                state[0, a] = wrapped(eta2d[a] + e)
            else:
                e, v = filter_step(e, state[1, a], 0.0, max(dt - meta[STAY], 0.0), omega)
                state[0, a] = wrapped(u + e)
            state[1, a] = v
        state[2, a] = eta2d[a]
    if dt > 0.0:
        meta[LAST_T], meta[STAY] = t_s, (dt if dt <= max_gap else 0.0)


def reference_output(state, meta, omega, now_s, out):
    """The filtered trajectory at ``now_s`` [s] (NaN: at the last sample) into ``out`` (3, 3): rows
    attitude [rad], Euler rates [rad/s] and accelerations [rad/s^2] (zeros before any sample).

    The state at the last sample for ``meta[STAY]`` after it (:func:`reference_update`); later the
    filter settles on the held sample (acceleration omega^2 (u - x_f) - 2 omega x_f').
    """
    for a in range(3):
        out[0, a], out[1, a], out[2, a] = 0.0, 0.0, 0.0
    if math.isnan(meta[LAST_T]):
        return
    held = 0.0 if math.isnan(now_s) else max(now_s - meta[LAST_T] - meta[STAY], 0.0)
    for a in range(3):
        u = state[2, a]
        e, v = wrapped(state[0, a] - u), state[1, a]
        if held > 0.0:
            e, v = filter_step(e, v, 0.0, held, omega)
        out[0, a] = wrapped(u + e)
        out[1, a] = v
        out[2, a] = -omega * omega * e - 2.0 * omega * v


def reference_torque(trajectory, inertia, drag, out):
    """The vehicle model's inverse dynamics along a desired trajectory into ``out`` (3,) [N m], body FRD:
    (I + M_A) w' + w x ((I + M_A) w) + D(w) with w the desired body rates.

    ``trajectory`` (3, 3): attitude [rad], Euler rates [rad/s], Euler accelerations [rad/s^2]
    (:func:`reference_output`); ``inertia`` (3,) I + M_A [kg m^2]; ``drag`` (2, 3) as :func:`drag_torque`.
    w = J2_inv(phi, theta) eta' and w' = J2_inv eta'' + (d/dt J2_inv) eta' (Eq. 19 differentiated).
    The restoring moment is the buoyancy feed-forward's (:func:`control_torque`).
    """
    phi, theta = trajectory[0, 0], trajectory[0, 1]
    d_phi, d_theta, d_psi = trajectory[1, 0], trajectory[1, 1], trajectory[1, 2]
    J2i = j2_inv_matrix(phi, theta)
    w = J2i @ trajectory[1]
    w_dot = J2i @ trajectory[2]
    cphi, sphi, cth, sth = math.cos(phi), math.sin(phi), math.cos(theta), math.sin(theta)
    w_dot[0] += -cth * d_theta * d_psi
    w_dot[1] += -sphi * d_phi * d_theta + (cphi * cth * d_phi - sphi * sth * d_theta) * d_psi
    w_dot[2] += -cphi * d_phi * d_theta - (sphi * cth * d_phi + cphi * sth * d_theta) * d_psi
    h0, h1, h2 = inertia[0] * w[0], inertia[1] * w[1], inertia[2] * w[2]
    gyro = (w[1] * h2 - w[2] * h1, w[2] * h0 - w[0] * h2, w[0] * h1 - w[1] * h0)
    for a in range(3):
        out[a] = inertia[a] * w_dot[a] + gyro[a] + drag_torque(drag, w[a], a)


def integral_step(state, last_t, t_s, eta2d, eta2d_dot, eta2, nu2, J2i, tau_att, kp, kd_total, inertia, drag,
                  drag_ff, ki, enabled, band_rad, tau_max):
    """Advance the integral action to ``t_s`` (NaN: hold) and return nothing; z is ``state[0]``.

    ``state`` (4, 3): z [N m], the reference model's eta2m [rad] and eta2m' [rad/s], and
    1.0 on axes whose model restarts at the measured attitude and rate; ``last_t`` (1,):
    the previous tick's time (NaN: none). ``tau_att`` (3,): the attitude torque without z;
    ``drag`` (2, 3): the model's linear and quadratic drag (:func:`drag_torque`);
    ``drag_ff``: the drag feed-forward is on; ``enabled`` (3,): 1.0 on closed-loop axes.
    The equations are :class:`~brov2_hybrid.control.integral_action.IntegralAction`'s.
    """
    z, m_state, md_state, stale = state[0], state[1], state[2], state[3]
    if stale[0] != 0.0 or stale[1] != 0.0 or stale[2] != 0.0:
        rates = j2_matrix(eta2[0], eta2[1]) @ nu2
        for a in range(3):
            if stale[a] != 0.0:
                m_state[a] = eta2[a]
                md_state[a] = rates[a]
                stale[a] = 0.0
    dt = 0.0
    if not (math.isnan(t_s) or math.isnan(last_t[0])):
        dt = max(t_s - last_t[0], 0.0)
    if not math.isnan(t_s):
        last_t[0] = t_s
    if dt > 0.0:
        # The model's fastest pole is bounded by its local damping (B_L + 2 B_NL |rate| + k_d,tot) / I
        # and its stiffness sqrt(k_p / I); sub-steps of 0.2 / that keep semi-implicit Euler accurate.
        fastest = 0.0
        for a in range(3):
            rate = max(abs(md_state[a]), abs(eta2d_dot[a]))
            fastest = max(fastest, (drag[0, a] + 2.0 * drag[1, a] * rate + abs(kd_total[a])) / inertia[a],
                          math.sqrt(abs(kp[a]) / inertia[a]))
        steps = max(1, int(math.ceil(dt * fastest / 0.2)))
        h = dt / steps
        for a in range(3):
            # acc = (clip(kp wrap(eta2d - m) + kd (eta2d_dot - md) + [D(eta2d_dot)], +-tau_max) - D(md)) / inertia
            m, md, d, d_dot = m_state[a], md_state[a], eta2d[a], eta2d_dot[a]
            ff = drag_torque(drag, d_dot, a) if drag_ff else 0.0
            lim = tau_max[a]
            for _ in range(steps):
                pd = min(max(kp[a] * wrapped(d - m) + kd_total[a] * (d_dot - md) + ff, -lim), lim)
                acc = (pd - drag_torque(drag, md, a)) / inertia[a]
                md = md + h * acc
                m = wrapped(m + h * md)
            m_state[a] = m
            md_state[a] = md
        gap = np.empty(3)
        for a in range(3):
            gap[a] = wrapped(m_state[a] - eta2[a])
        e = J2i @ gap
        for a in range(3):
            # An axis grows z by ki e dt unless its command is saturated in the direction the
            # error pushes, or its reference has not reached eta2d yet; |z| <= tau_max.
            total = tau_att[a] + z[a]
            lim = tau_max[a]
            pushing_out = abs(total) >= lim and sign(e[a]) == sign(total)
            settled = abs(wrapped(eta2d[a] - m_state[a])) <= band_rad
            grow = ki[a] * e[a] * dt if (enabled[a] != 0.0 and settled and not pushing_out) else 0.0
            z[a] = min(max(z[a] + grow, -lim), lim)
    for a in range(3):
        if enabled[a] == 0.0:
            z[a] = 0.0


def pd_torque(J2i, eta2d, eta2d_dot, eta2, nu2, kp, kd_total, ff_k, ff_m, ff_n, out):
    """Eq. 18/24 into ``out`` (3,) [N m]: kp J2_inv wrap(eta2d - eta2) + kd_total (J2_inv eta2d_dot - nu2)
    + (ff_k, ff_m, ff_n), with ``J2i`` = J2_inv(eta2) (3, 3)."""
    err = np.empty(3)
    for a in range(3):
        err[a] = wrapped(eta2d[a] - eta2[a])
    p_term = J2i @ err
    rate_d = J2i @ eta2d_dot
    ff = (ff_k, ff_m, ff_n)
    for a in range(3):
        out[a] = kp[a] * p_term[a] + kd_total[a] * (rate_d[a] - nu2[a]) + ff[a]


def control_torque(eta2d, u_linear, eta2, nu2, eta2d_dot, t_s, tau_max, linear_scale, kp, kd_total,
                   feedforward_lever, drag_feedforward, integral_on, drag, ki, inertia, enabled,
                   integral_state, last_t, band_rad, reference_on, reference_state, reference_meta,
                   reference_omega, tau_out):
    """One tick of the law: tau (6,) [N, N m] body FRD into ``tau_out``.

    tau_1:3 = linear_scale u_1:3 tau_max_1:3 (open loop); tau_4:6 (Eq. 18/24) =
    kp J2_inv wrap(eta2d - eta2) + kd_total (J2_inv eta2d_dot - nu2) + feed-forward, where
    the feed-forward cancels the restoring moment at eta2d (``feedforward_lever`` = W r_G - B r_B
    [N m], NaN: off); plus, with ``drag_feedforward``, the model's drag torque at the desired
    body rate J2_inv eta2d_dot (:func:`drag_torque`, ``drag`` (2, 3): linear and quadratic
    drag), plus the integral z (:func:`integral_step`) with ``integral_on``; times
    ``enabled`` (3,) per axis. With ``reference_on`` the drag feed-forward's place is taken by the
    reference feed-forward: :func:`reference_torque` (inertia, gyroscopic and drag terms, ``inertia``
    (3,) = I + M_A) along the reference filter's trajectory at ``t_s`` (:func:`reference_output` of
    ``reference_state``, ``reference_meta`` and ``reference_omega`` [rad/s]).
    ``t_s`` NaN: no tick time. Pitch must lie outside gimbal lock (the caller checks).
    """
    J2i = j2_inv_matrix(eta2[0], eta2[1])
    for k in range(3):
        tau_out[k] = linear_scale * u_linear[k] * tau_max[k]
    ff = (0.0, 0.0, 0.0)
    if not math.isnan(feedforward_lever[0]):
        dx, dy, dz = down_axis(eta2d[0], eta2d[1])
        moment = lever_moment(feedforward_lever[0], feedforward_lever[1], feedforward_lever[2], dx, dy, dz)
        ff = (-moment[0], -moment[1], -moment[2])
    att = np.empty(3)
    pd_torque(J2i, eta2d, eta2d_dot, eta2, nu2, kp, kd_total, ff[0], ff[1], ff[2], att)
    if reference_on:
        trajectory, ref = np.empty((3, 3)), np.empty(3)
        reference_output(reference_state, reference_meta, reference_omega, t_s, trajectory)
        reference_torque(trajectory, inertia, drag, ref)
        for a in range(3):
            att[a] += ref[a]
    elif drag_feedforward:
        rate_d = J2i @ eta2d_dot
        for a in range(3):
            att[a] += drag_torque(drag, rate_d[a], a)
    if integral_on:
        tau_att = np.empty(3)
        for a in range(3):
            tau_att[a] = att[a] * enabled[a]
        integral_step(integral_state, last_t, t_s, eta2d, eta2d_dot, eta2, nu2, J2i, tau_att, kp, kd_total,
                      inertia, drag, drag_feedforward or reference_on, ki, enabled, band_rad, tau_max[3:])
        for a in range(3):
            att[a] += integral_state[0, a]
    for a in range(3):
        tau_out[3 + a] = att[a] * enabled[a]


def normalized_command(tau, tau_max, u_out, saturated_out):
    """u = clip(tau / tau_max, -1, 1) (6,) into ``u_out``; 1.0 in ``saturated_out`` where |tau| > tau_max."""
    for k in range(6):
        ratio = tau[k] / tau_max[k]
        u_out[k] = min(max(ratio, -1.0), 1.0)
        saturated_out[k] = 1.0 if abs(ratio) > 1.0 else 0.0


KERNELS = (rate_update, rate_trim, rate_estimate, sign, model_drag, drag_torque, filter_step, reference_update,
           reference_output, reference_torque, integral_step, pd_torque, control_torque, normalized_command,
           wrapped, down_axis, lever_moment, j2_matrix, j2_inv_matrix)


def _probe(compiled):
    """True when the compiled law gives the Python law's numbers on probe ticks."""
    rng = np.random.default_rng(18)
    for k in range(20):
        args = _probe_args(rng, k % 2 == 0)
        twin = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        compiled["control_torque"](*args)
        control_torque(*twin)
        # the reference filter's update: a stream sample, then one after a held gap
        for t_s in (args[-3][0] + 0.02, args[-3][0] + 0.5):
            compiled["reference_update"](args[-4], args[-3], args[-2], 0.1, t_s, args[0])
            reference_update(twin[-4], twin[-3], twin[-2], 0.1, t_s, twin[0])
        if not all(np.array_equal(a, b) for a, b in zip(args, twin) if isinstance(a, np.ndarray)):
            return False
    return True


def _probe_args(rng, reference_on):
    """control_torque's arguments for a random tick with every option on (the reference
    feed-forward with ``reference_on``, else the drag feed-forward)."""
    def v(scale=1.0):
        return rng.uniform(-scale, scale, 3)
    state = np.vstack([v(), v(), v(), np.ones(3)])
    return [v(), v(), v(0.5), v(), v(), 1.0, np.full(6, 30.0), 1.0, np.abs(v(10.0)) + 1, np.abs(v(5.0)) + 1,
            v(0.5), True, True, np.abs(np.vstack([v(3.0), v(3.0)])), np.abs(v()), np.abs(v()) + 0.1, np.ones(3), state,
            np.array([0.98]), math.inf, reference_on, np.vstack([v(), v(2.0), v()]), np.array([0.97, 0.02]), 8.0,
            np.zeros(6)]


def kernels():
    """{name: kernel} compiled by numba (probe-checked), or the Python functions without numba."""
    compiled = compile_family("control_law", KERNELS, _probe)
    return compiled if compiled else {f.__name__: f for f in KERNELS}
