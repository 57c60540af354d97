"""The reference feed-forward's parts against independent expectations: the reference filter
(control.rate_estimate.ReferenceFilter) against the analytic responses of omega_f^2 / (s + omega_f)^2
to a ramp, a sine and a step, and the inverse dynamics (law_kernels.reference_torque) against a
rigid body with the gyroscopic term, integrated by scipy, that it must drive along the trajectory."""
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from brov2_hybrid.control import law_kernels
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.control.rate_estimate import ReferenceFilter
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.hydrostatics import restoring_moment
from brov2_hybrid.physics.kinematics import j2_inv_matrix, j2_matrix

OMEGA, GAP, PERIOD = 10.0, 0.1, 0.02        # omega_f [rad/s], a stream's longest gap [s], a 50 Hz stream [s]


def _stream(signal, duration_s, omega=OMEGA):
    """Feed ``signal(t)`` (3,) sampled at 50 Hz for ``duration_s``; return times and the trajectory at each sample."""
    f = ReferenceFilter(omega, GAP)
    times = np.arange(0.0, duration_s + 1e-9, PERIOD)
    out = []
    for t in times:
        f.update(t, signal(t))
        out.append(f.trajectory(t))
    return times, np.array(out)


def test_a_sampled_ramp_gives_the_analytic_ramp_response_exactly():
    """A ramp R t from rest: x = R (t - 2/w + (t + 2/w) e^(-w t)), x' = R (1 - (1 + w t) e^(-w t)),
    x'' = R w^2 t e^(-w t). The 50 Hz staircase joined by straight lines is the ramp itself, so the
    filter gives these to rounding: no saw-tooth in the acceleration, and the stated delay 2 / w
    (x = R (t - 2 / w) once settled)."""
    rate = np.array([0.3, -0.5, 1.0])
    t, out = _stream(lambda t: rate * t, 3.0)
    decay = np.exp(-OMEGA * t)[:, None]
    tt = t[:, None]
    np.testing.assert_allclose(out[:, 0], rate * (tt - 2 / OMEGA + (tt + 2 / OMEGA) * decay), atol=1e-12)
    np.testing.assert_allclose(out[:, 1], rate * (1 - (1 + OMEGA * tt) * decay), atol=1e-12)
    np.testing.assert_allclose(out[:, 2], rate * OMEGA ** 2 * tt * decay, atol=1e-11)
    np.testing.assert_allclose(out[-1, 0], rate * (t[-1] - 2 / OMEGA), atol=1e-11)


def test_a_yaw_ramp_through_180_deg_is_wrapped_but_keeps_its_rate():
    t, out = _stream(lambda t: np.array([0.0, 0.0, math.atan2(math.sin(2.9 + t), math.cos(2.9 + t))]), 3.0)
    np.testing.assert_allclose(out[-50:, 1, 2], 1.0, atol=1e-9)
    assert np.all(np.abs(out[:, 0, 2]) <= math.pi)


@pytest.mark.parametrize("w", [0.6, 2.0])
def test_a_sine_comes_out_with_the_filters_gain_and_the_stated_delay(w):
    """A sin(w t): once the start has died away, x = |H| A sin(w (t - delay)), with |H| = w_f^2 / (w_f^2 + w^2)
    and delay = 2 atan(w / w_f) / w (the docstring's; 2 / w_f at low frequency); x' and x'' its derivatives."""
    amp = np.array([0.3, 0.2, 1.5])
    t, out = _stream(lambda t: amp * math.sin(w * t), 12.0)
    gain, delay = OMEGA ** 2 / (OMEGA ** 2 + w ** 2), 2.0 * math.atan(w / OMEGA) / w
    late = t > 5.0
    phase = (w * (t[late] - delay))[:, None]
    # the straight lines between 50 Hz samples differ from the sine by at most A (w T)^2 / 8, and their
    # slope changes by up to A w^2 T at each sample: the acceleration ripples by less than that
    tol = (w * PERIOD) ** 2 / 8.0 * amp.max()
    np.testing.assert_allclose(out[late, 0], gain * amp * np.sin(phase), atol=tol)
    np.testing.assert_allclose(out[late, 1], gain * amp * w * np.cos(phase), atol=tol * w)
    np.testing.assert_allclose(out[late, 2], -gain * amp * w ** 2 * np.sin(phase), atol=amp.max() * w ** 2 * PERIOD)


def test_a_pilots_tremor_reaches_the_acceleration_at_most_omega_f_squared_times():
    """An 8 Hz tremor of 0.5 deg on a slow head turn: the filtered acceleration's tremor stays within
    w_f^2 A (the filter's gain bound), about a 25th of the tremor's own acceleration A (2 pi 8 Hz)^2."""
    tremor, w_tremor = math.radians(0.5), 2 * math.pi * 8.0
    _, smooth = _stream(lambda t: np.array([0.0, 0.0, 0.8 * math.sin(0.6 * t)]), 12.0)
    _, shaky = _stream(lambda t: np.array([0.0, 0.0, 0.8 * math.sin(0.6 * t) + tremor * math.sin(w_tremor * t)]), 12.0)
    passed = np.abs(shaky[100:, 2, 2] - smooth[100:, 2, 2]).max()
    assert passed <= OMEGA ** 2 * tremor
    assert passed < tremor * w_tremor ** 2 / 25.0


def _step_response(step, since):
    """Attitude, rate and acceleration of the filter from rest, ``since`` [s] after a step ``step`` [rad]."""
    decay = math.exp(-OMEGA * since)
    return [step * (1 - (1 + OMEGA * since) * decay), step * OMEGA ** 2 * since * decay,
            step * OMEGA ** 2 * (1 - OMEGA * since) * decay]


def test_a_sample_after_a_gap_is_a_step_followed_at_once():
    """Samples 1 s apart are not a stream: the new value is a step, and the trajectory is the step
    response x = D (1 - (1 + w s) e^(-w s)) from the sample on, s the time since."""
    f = ReferenceFilter(OMEGA, GAP)
    f.update(0.0, [0.0, 0.0, 0.0])
    f.update(1.0, [0.0, 0.0, 0.5])
    for since in (0.0, 0.05, 0.2, 0.6):
        np.testing.assert_allclose(f.trajectory(1.0 + since)[:, 2], _step_response(0.5, since), atol=1e-12)
    f.update(1.6, [0.0, 0.0, 0.5])                  # the held value again, late: the state carries on
    np.testing.assert_allclose(f.trajectory(1.6)[:, 2], _step_response(0.5, 0.6), atol=1e-12)
    f.reset()
    f.update(2.0, [0.1, 0.2, 0.3])                  # after a reset: at rest on the new sample
    np.testing.assert_allclose(f.trajectory(2.0), [[0.1, 0.2, 0.3], [0.0] * 3, [0.0] * 3], atol=0)


def test_a_stream_that_stops_is_a_setpoint_held_from_when_its_next_sample_was_due():
    """A 50 Hz ramp that stops: the trajectory stays at the last sample's state for one period (the
    next sample was due then), then settles on the held value as the unforced filter does."""
    f = ReferenceFilter(OMEGA, GAP)
    for k in range(151):
        f.update(PERIOD * k, [0.0, 0.0, 0.5 * PERIOD * k])
    last = f.trajectory(3.0)
    np.testing.assert_allclose(f.trajectory(3.0 + PERIOD), last, atol=0)
    e0, v0 = last[0, 2] - 1.5, last[1, 2]          # x - u and x' when the hold starts
    for since in (0.05, 0.3):
        decay, b = math.exp(-OMEGA * since), v0 + OMEGA * e0
        x, v = 1.5 + (e0 + b * since) * decay, (v0 - OMEGA * b * since) * decay
        np.testing.assert_allclose(f.trajectory(3.0 + PERIOD + since)[:2, 2], [x, v], atol=1e-12)
    assert abs(f.trajectory(5.0)[0, 2] - 1.5) < 1e-6


def test_bad_settings_name_the_field():
    with pytest.raises(Brov2Error, match="omega_rad_s"):
        ReferenceFilter(0.0, GAP)
    with pytest.raises(Brov2Error, match="max_gap_s"):
        ReferenceFilter(OMEGA, float("nan"))


# --- the inverse dynamics ------------------------------------------------------------------

INERTIA = np.array([0.96, 1.12, 1.40])            # I + M_A [kg m^2]; unequal, so the gyroscopic term matters
DRAG = np.array([[0.5, 0.0, 0.3], [2.08, 2.42, 2.42]])


def _desired(t):
    """An attitude trajectory on every axis and its exact first and second derivatives (3, 3)."""
    a, w, p = np.array([0.5, 0.4, 1.5]), np.array([1.3, 0.9, 1.1]), np.array([0.0, 0.5, 0.2])
    return np.array([a * np.sin(w * t + p), a * w * np.cos(w * t + p), -a * w ** 2 * np.sin(w * t + p)])


def _body(t, x, torque):
    """A rigid body: I w' = tau - w x (I w) - D(w), eta' = J2(eta) w (no hydrostatics)."""
    eta, w = x[:3], x[3:]
    drag = DRAG[0] * w + DRAG[1] * w * np.abs(w)
    w_dot = (torque(t) - np.cross(w, INERTIA * w) - drag) / INERTIA
    return np.concatenate([j2_matrix(eta[0], eta[1]) @ w, w_dot])


def _fly(torque):
    start = _desired(0.0)
    x0 = np.concatenate([start[0], j2_inv_matrix(start[0, 0], start[0, 1]) @ start[1]])
    sol = solve_ivp(_body, (0.0, 8.0), x0, args=(torque,), rtol=1e-10, atol=1e-12, dense_output=True)
    t = np.linspace(0.0, 8.0, 161)
    return np.abs(sol.sol(t)[:3].T - np.array([_desired(s)[0] for s in t])).max()


def test_the_inverse_dynamics_torque_flies_a_rigid_body_along_the_trajectory():
    """Open loop, from the trajectory's start: the body follows three simultaneous swings (up to
    29 deg of pitch) to 1e-6 rad over 8 s. Leaving out the gyroscopic and the kinematic (d/dt J2_inv)
    terms, as a per-axis I eta'' + D would, misses by more than 0.05 rad."""
    def torque(t):
        out = np.empty(3)
        law_kernels.reference_torque(_desired(t), INERTIA, DRAG, out)
        return out

    def per_axis(t):
        d = _desired(t)
        w = j2_inv_matrix(d[0, 0], d[0, 1]) @ d[1]
        return INERTIA * (j2_inv_matrix(d[0, 0], d[0, 1]) @ d[2]) + DRAG[0] * w + DRAG[1] * w * np.abs(w)
    assert _fly(torque) < 1e-6
    assert _fly(per_axis) > 0.05


def test_the_restoring_moment_is_part_of_it_and_the_drag_feedforward_gives_way(vehicle, controller_params):
    """Held at a tilted eta2d = eta2 at rest: the reference feed-forward's torque is the restoring
    moment's negative even with the buoyancy feed-forward off; with the drag feed-forward also on,
    the torque is the reference feed-forward's alone (no drag counted twice)."""
    eta = np.array([0.3, -0.2, 0.1])

    def tau(**options):
        c = HybridController(vehicle.body, replace(controller_params, feedforward_enabled=False), vehicle.tau_max)
        c.configure(**options)
        for k in range(50):
            c.update_desired(0.02 * k, eta + np.array([0.0, 0.0, 0.01 * k]))     # a slow yaw ramp
        return c.compute(eta + np.array([0.0, 0.0, 0.49]), np.zeros(3), eta + np.array([0.0, 0.0, 0.49]),
                         np.zeros(3), eta2d_dot=np.zeros(3), t_s=0.98).tau_body_frd[3:]
    off, on = tau(), tau(reference_feedforward_enabled=True)
    np.testing.assert_array_equal(off, 0.0)
    trajectory = np.empty((3, 3))
    f = ReferenceFilter(controller_params.reference_filter_omega_rad_s, controller_params.reference_filter_max_gap_s)
    for k in range(50):
        f.update(0.02 * k, eta + np.array([0.0, 0.0, 0.01 * k]))
    trajectory[:] = f.trajectory(0.98)
    inverse = np.empty(3)
    law_kernels.reference_torque(trajectory, vehicle.body.total_mass[3:], np.vstack([vehicle.body.linear_drag[3:],
                                                                                      vehicle.body.quadratic_drag[3:]]),
                                 inverse)
    np.testing.assert_allclose(on, inverse - restoring_moment(eta + np.array([0.0, 0.0, 0.49]), vehicle.body),
                               rtol=1e-12, atol=1e-12)
    assert abs(inverse[2]) > 0.01                    # the ramp's drag and the filter's start are in it
    both = tau(reference_feedforward_enabled=True, drag_feedforward_enabled=True)
    np.testing.assert_array_equal(both, on)
