"""Control law (Eq. 18/24), feed-forward, rate estimate and normalisation."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from brov2_hybrid.control.law import HybridController, attitude_torque, normalize
from brov2_hybrid.control.rate_estimate import DesiredRateEstimator
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.hydrostatics import restoring_moment


@pytest.fixture
def controller(vehicle, controller_params):
    return HybridController(vehicle.body, controller_params, vehicle.tau_max)


small = st.floats(-0.6, 0.6, allow_nan=False)


@settings(max_examples=50, deadline=None)
@given(small, small, st.floats(-math.pi, math.pi))
def test_feedforward_cancels_hydrostatic_moment_at_rest(vehicle, controller_params, phi, theta, psi):
    """eta2 = eta2d at rest: tau_4:6 + restoring moment = 0 exactly (Eq. 20)."""
    c = HybridController(vehicle.body, controller_params, vehicle.tau_max)
    eta2 = [phi, theta, psi]
    out = c.compute(eta2, [0, 0, 0], eta2, [0, 0, 0], eta2d_dot=np.zeros(3))
    np.testing.assert_allclose(out.tau_body_frd[3:] + restoring_moment(eta2, vehicle.body), 0, atol=1e-12)


def test_feedforward_magnitude_for_roll(vehicle, controller):
    """At 30 deg roll the righting moment is B * 0.02 * sin(30) = 1.148 N m."""
    eta2 = [math.radians(30), 0, 0]
    out = controller.compute(eta2, [0, 0, 0], eta2, [0, 0, 0], eta2d_dot=np.zeros(3))
    assert out.tau_body_frd[3] == pytest.approx(114.8 * 0.02 * 0.5)


# Paper numbers (docs/DESIGN.md section 6): W = 112.8 N, B = 114.8 N, r_G = 0, centre of
# buoyancy 0.02 m above the centre of gravity: r_B = (0, 0, -0.02) m in FRD (z down).
PAPER_W_N, PAPER_B_N, PAPER_ZB_M = 112.8, 114.8, 0.02


def test_paper_hydrostatic_numbers_are_the_ones_in_use(vehicle):
    v = vehicle.body
    assert (v.weight_n, v.buoyancy_n) == (PAPER_W_N, PAPER_B_N)
    np.testing.assert_array_equal(v.r_cg_m, [0, 0, 0])
    np.testing.assert_array_equal(v.r_cb_m, [0, 0, -PAPER_ZB_M])


@pytest.mark.parametrize("theta_deg", [25.0, -40.0])
def test_feedforward_for_pitch_by_hand(controller, theta_deg):
    """Pitch theta, roll 0, by hand: nose up (theta > 0), buoyancy B acts upward, i.e. along
    (sin th, 0, -cos th) in body FRD, at r_B = (0, 0, -0.02): M = r_B x F = -B 0.02 sin th,
    nose down (CB above CG rights the vehicle). The feed-forward cancels it: +B 0.02 sin th."""
    theta = math.radians(theta_deg)
    eta2 = [0.0, theta, 0.3]
    out = controller.compute(eta2, [0, 0, 0], eta2, [0, 0, 0], eta2d_dot=np.zeros(3))
    np.testing.assert_allclose(out.tau_body_frd[3:], [0.0, PAPER_B_N * PAPER_ZB_M * math.sin(theta), 0.0],
                               atol=1e-12)
    assert np.sign(out.tau_body_frd[4]) == np.sign(theta)   # holds the nose where it is asked to be


def test_feedforward_for_roll_and_pitch_by_hand(controller):
    """Roll and pitch together against the hand formula: moment on the vehicle
    (W r_G - B r_B) x d, d = (-sin th, cos th sin ph, cos th cos ph) the down axis in body
    axes; written out, (-B 0.02 cos th sin ph, -B 0.02 sin th, 0). Feed-forward = its negative."""
    phi, theta = math.radians(20.0), math.radians(-35.0)
    eta2 = [phi, theta, -1.0]
    out = controller.compute(eta2, [0, 0, 0], eta2, [0, 0, 0], eta2d_dot=np.zeros(3))
    d = np.array([-math.sin(theta), math.cos(theta) * math.sin(phi), math.cos(theta) * math.cos(phi)])
    lever = PAPER_W_N * np.zeros(3) - PAPER_B_N * np.array([0.0, 0.0, -PAPER_ZB_M])
    moment = np.cross(lever, d)
    written_out = [-PAPER_B_N * PAPER_ZB_M * math.cos(theta) * math.sin(phi),
                   -PAPER_B_N * PAPER_ZB_M * math.sin(theta), 0.0]
    np.testing.assert_allclose(moment, written_out, atol=1e-12)
    np.testing.assert_allclose(out.tau_body_frd[3:], -moment, atol=1e-12)


def test_positive_yaw_error_gives_positive_N(controller):
    out = controller.compute([0, 0, 0.2], [0, 0, 0], [0, 0, 0], [0, 0, 0], eta2d_dot=np.zeros(3))
    assert out.tau_body_frd[5] == pytest.approx(controller.gains.kp[2] * 0.2)
    assert out.tau_body_frd[5] > 0


def test_yaw_error_wraps(controller):
    """From 350 deg to 10 deg is +20 deg, not -340 deg."""
    out = controller.compute([0, 0, math.radians(10)], [0, 0, 0], [0, 0, math.radians(350)], [0, 0, 0],
                             eta2d_dot=np.zeros(3))
    assert out.tau_body_frd[5] == pytest.approx(controller.gains.kp[2] * math.radians(20))


def test_derivative_acts_on_rate_error(controller):
    """Turning at r = 0.5 rad/s toward a still target: N = -(kd + dkd) * 0.5."""
    out = controller.compute([0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0.5], eta2d_dot=np.zeros(3))
    assert out.tau_body_frd[5] == pytest.approx(-controller.gains.kd_total[2] * 0.5)


def test_linear_pass_through_and_normalization(vehicle, controller):
    out = controller.compute([0, 0, 0], [0.5, -0.25, 1.0], [0, 0, 0], [0, 0, 0], eta2d_dot=np.zeros(3))
    np.testing.assert_allclose(out.tau_body_frd[:3], np.array([0.5, -0.25, 1.0]) * vehicle.tau_max[:3])
    np.testing.assert_allclose(normalize(out.tau_body_frd, vehicle.tau_max)[0][:3], [0.5, -0.25, 1.0])


def test_saturation_is_flagged(controller):
    """kp_yaw * 3 rad = 10.08 * 3 = 30.2 N m < 37.7; turning away at 1 rad/s adds 2.97."""
    out = controller.compute([0, 0, 3.0], [0, 0, 0], [0, 0, 0], [0, 0, 0], eta2d_dot=np.zeros(3))
    assert out.tau_body_frd[5] == pytest.approx(30.24, rel=1e-3) and not out.saturated.any()
    out = controller.compute([0, 0, 3.0], [0, 0, 0], [0, 0, 0], [0, 0, -3.0], eta2d_dot=np.zeros(3))
    assert out.tau_body_frd[5] > controller.tau_max[5]          # the law asks for more than the vehicle has
    assert normalize(out.tau_body_frd, controller.tau_max)[0][5] == 1.0
    assert out.saturated[5] and not out.saturated[:5].any()


def test_disabled_axis_gives_zero_torque(controller):
    controller.configure(closed_loop_enabled=[True, True, False])
    out = controller.compute([0, 0, 1.0], [0, 0, 0], [0, 0, 0], [0, 0, 0])
    assert out.tau_body_frd[5] == 0.0


def test_configure_changes_gains_and_reports(controller):
    changes = controller.configure(omega_d_rad_s=4.0)
    assert controller.gains.kp[2] == pytest.approx(16 * 1.12)
    assert len(changes) == 1 and "omega_d 3.000 -> 4.000" in changes[0]
    with pytest.raises(Brov2Error, match="omega_d_rad_s"):
        controller.configure(omega_d_rad_s=0.0)
    assert controller.gains.omega_d_rad_s == 4.0  # unchanged by the rejected call


def test_rate_estimator_moving_average():
    est = DesiredRateEstimator(window=4)
    for k in range(10):
        est.update(0.1 * k, [0.0, 0.0, 0.2 * 0.1 * k])
    np.testing.assert_allclose(est.rate(), [0, 0, 0.2])


def test_rate_estimator_wraps_and_handles_irregular_times():
    est = DesiredRateEstimator(window=3)
    est.update(0.0, [0, 0, math.radians(350)])
    est.update(0.5, [0, 0, math.radians(355)])
    est.update(2.0, [0, 0, math.radians(10)])
    np.testing.assert_allclose(est.rate()[2], math.radians(20) / 2.0)


def test_rate_estimator_no_lookahead_and_repeats():
    est = DesiredRateEstimator(window=5)
    assert np.all(est.rate() == 0)
    est.update(1.0, [0, 0, 1.0])
    est.update(1.0, [0, 0, 2.0])  # same stamp replaces
    assert np.all(est.rate() == 0)


def test_rate_estimator_drops_a_held_setpoint():
    """A sparse step (0 at 0 s, 0.5 rad at 1 s, then nothing): the estimate is the 1 s ramp
    while the hold is shorter than that window, zero once the setpoint has been held longer."""
    est = DesiredRateEstimator(window=5)
    est.update(0.0, [0, 0.0, 0])
    est.update(1.0, [0, 0.5, 0])
    np.testing.assert_allclose(est.rate(), [0, 0.5, 0])          # no tick time: the old estimate
    np.testing.assert_allclose(est.rate(1.9), [0, 0.5, 0])
    np.testing.assert_allclose(est.rate(2.1), [0, 0, 0])
    # dense samples keep their estimate between ticks
    est = DesiredRateEstimator(window=4)
    for k in range(10):
        est.update(0.05 * k, [0, 0, 0.1 * 0.05 * k])
    np.testing.assert_allclose(est.rate(0.45 + 0.02), [0, 0, 0.1])


def test_held_setpoint_settles_on_target(controller):
    """At rest on the desired attitude long after the last sample, only the feed-forward acts."""
    controller.update_desired(0.0, [0.0, 0.0, 0.0])
    controller.update_desired(1.0, [0.0, 0.5, 0.0])
    out = controller.compute([0, 0.5, 0], [0, 0, 0], [0, 0.5, 0], [0, 0, 0], t_s=20.0)
    # the feed-forward alone, by hand: B z_B sin(pitch) about the pitch axis (paper numbers below)
    np.testing.assert_allclose(out.tau_body_frd[3:], [0, PAPER_B_N * PAPER_ZB_M * math.sin(0.5), 0], atol=1e-12)


@pytest.mark.parametrize("arg", ["eta2d", "eta2", "nu2"])
def test_rejects_nan(controller, arg):
    kwargs = dict(eta2d=[0, 0, 0], u_linear=[0, 0, 0], eta2=[0, 0, 0], nu2=[0, 0, 0])
    kwargs[arg] = [0, float("nan"), 0]
    with pytest.raises(Brov2Error, match=arg):
        controller.compute(**kwargs)


def test_rejects_linear_out_of_range(controller):
    with pytest.raises(Brov2Error, match=r"u_linear: expected values in \[-1, 1\]"):
        controller.compute([0, 0, 0], [1.5, 0, 0], [0, 0, 0], [0, 0, 0])


def test_attitude_torque_matches_paper_form():
    """Roll 0.3, pitch 0.2: torque = kp J2inv e + kd J2inv (rate error) + ff, by hand."""
    eta2 = np.array([0.3, 0.2, 0.0])
    e = np.array([0.1, -0.05, 0.2])
    J2inv = np.array([[1, 0, -math.sin(0.2)],
                      [0, math.cos(0.3), math.sin(0.3) * math.cos(0.2)],
                      [0, -math.sin(0.3), math.cos(0.3) * math.cos(0.2)]])
    tau = attitude_torque(eta2 + e, np.zeros(3), eta2, np.zeros(3), np.array([2., 3., 4.]), np.zeros(3), np.zeros(3))
    np.testing.assert_allclose(tau, np.array([2., 3., 4.]) * (J2inv @ e))


def test_rate_term_equals_paper_form_with_J2():
    """kd J2inv (eta2d_dot - J2 nu2) of Eq. 18, built by hand, at a tilted attitude."""
    from brov2_hybrid.physics.kinematics import J2, J2_inv
    eta2 = np.array([0.4, -0.3, 1.0])
    nu2 = np.array([0.2, -0.5, 0.7])
    eta2d_dot = np.array([0.1, 0.3, -0.2])
    kd = np.array([2.0, 3.0, 4.0])
    tau = attitude_torque(eta2, eta2d_dot, eta2, nu2, np.zeros(3), kd, np.zeros(3))
    np.testing.assert_allclose(tau, kd * (J2_inv(eta2) @ (eta2d_dot - J2(eta2) @ nu2)), atol=1e-12)


def test_normalize_rejects_wrong_shape(vehicle):
    with pytest.raises(Brov2Error, match=r"tau: expected shape \(6,\)"):
        normalize(np.zeros(3), vehicle.tau_max)
