"""The plant's stepper (sim.stepper.integrate) against analytic and reference solutions: its accuracy and order."""
import math

import numpy as np
import pytest
from scipy import integrate

from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.sim.dynamics import rhs
from test_plant import DEEP_M, new_plant, yaw_pwm


def _yaw_spin_up_error(vehicle, dt_s):
    """Largest |r / r_inf - tanh(t / T)| over 3 s of a yaw torque step from rest at physics step dt_s.

    With no linear yaw drag, I r_dot = N - b r|r| from rest is r = r_inf tanh(t sqrt(N b) / I),
    r_inf = sqrt(N / b): the analytic answer the stepper is held to.
    """
    m = new_plant(vehicle, dt_s=dt_s)
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    m.set_motor_pwm(yaw_pwm(vehicle, 0.3))
    torque = (vehicle.T @ vehicle.table.force_from_pwm(m.motor_pwm_us))[5]
    inertia, drag = vehicle.body.total_mass[5], vehicle.body.quadratic_drag[5]
    assert vehicle.body.linear_drag[5] == 0.0
    rate_inf, rate_k = math.sqrt(torque / drag), math.sqrt(torque * drag) / inertia
    worst = 0.0
    for _ in range(300):
        m.advance(0.01)
        worst = max(worst, abs(m.nu[5] / rate_inf - math.tanh(rate_k * m.t_s)))
    return worst


def test_drag_is_integrated_to_second_order(vehicle):
    """The stepper takes the drag as the trapezoid over each step (sim.stepper.integrate): a yaw spin-up
    follows its analytic tanh within 2e-4 of its final rate at 400 Hz, and the error falls with the
    square of the step. Plain semi-implicit Euler, which damps with the drag at the start of each step
    (an identification reads that as an inertia 0.4 % low), is 2e-3 off and falls only 5x for a 5x
    finer step."""
    error_400 = _yaw_spin_up_error(vehicle, 1 / 400)
    error_2000 = _yaw_spin_up_error(vehicle, 1 / 2000)
    assert error_400 < 2e-4
    assert error_2000 / error_400 < 0.1


def _stepper_error(vehicle, kind, dt_s, duration_s=4.0):
    """Max errors (position, angles, velocities) of the stepper against a tight RK45 solution of rhs.

    RK45 (DOP853 needs SciPy >= 1.4; Noetic's Ubuntu 20.04 has 1.3.3) at rtol 1e-10,
    atol 1e-12: it agrees with DOP853 at rtol 1e-13 within 4e-10, five orders of magnitude below
    the 1600 Hz stepper's errors (>6e-5), so the convergence ratio is not blurred by the reference.
    """
    m = new_plant(vehicle, model=kind, dt_s=dt_s, current_ned_m_s=np.array([0.1, 0.05, 0.0]))
    x0 = np.array([1.0, -2.0, DEEP_M, 0.2, -0.15, 0.5, 0.2, -0.1, 0.05, 0.3, -0.2, 0.4])
    m.reset(eta=x0[:6], nu=x0[6:])
    m.set_motor_pwm(vehicle.mixer("quantitative").pwm([0.3, -0.2, 0.2, 0.15, -0.1, 0.25]))
    m.advance(duration_s)
    tau = m.params.thruster_matrix @ m.thruster_forces_n()
    # a lambda, not args=: solve_ivp's args= is also SciPy >= 1.4
    sol = integrate.solve_ivp(lambda t, x: rhs(t, x, tau, m.params), (0.0, duration_s), x0,
                              rtol=1e-10, atol=1e-12, method="RK45")
    ref = sol.y[:, -1]
    return np.array([np.abs(m.eta[:3] - ref[:3]).max(),
                     np.abs(wrap_angle(m.eta[3:] - ref[3:6])).max(),
                     np.abs(m.nu - ref[6:]).max()])


@pytest.mark.parametrize("kind", ["updated", "stock"])
def test_fast_stepper_agrees_with_the_reference_rhs(vehicle, kind):
    """Semi-implicit Euler at 400 Hz against scipy's RK45 (tight tolerances) on rhs, and first-order convergence."""
    error_400 = _stepper_error(vehicle, kind, 1 / 400)
    assert np.all(error_400 < [0.01, 0.006, 0.002])  # m, rad, m/s or rad/s after 4 s
    error_1600 = _stepper_error(vehicle, kind, 1 / 1600)
    np.testing.assert_allclose(error_1600 / error_400, 0.25, atol=0.05)
