"""Gains from omega_d (App. B, Eq. 23) and the trim rule (Sec. 5.1)."""
import numpy as np
import pytest
from scipy import signal

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.control.gains import lti_closed_loop, pd_gains, trim_linear_drag

YAW_INERTIA = 1.0 + 0.12  # I_zz + N_rdot


def test_trim_reproduces_paper_yaw_value(controller_params):
    b = trim_linear_drag(0.0, 2.42, controller_params.trim_rate_max_rad_s[2], controller_params.trim_samples)
    assert b == pytest.approx(5.97, abs=0.005)


def test_trim_matches_continuous_least_squares():
    """With many samples the slope tends to the integral fit 0.75 * B_NL * v_max."""
    assert trim_linear_drag(0.0, 2.0, 4.0, 200001) == pytest.approx(0.75 * 2.0 * 4.0, rel=1e-4)
    assert trim_linear_drag(3.0, 0.0, 1.0) == pytest.approx(3.0)


def test_gain_formulas_yaw():
    g = pd_gains(3.0, [1.0, 1.0, YAW_INERTIA], [5.97] * 3, 20.0)
    assert g.kp[2] == pytest.approx(9 * YAW_INERTIA)
    assert g.kd[2] == pytest.approx(6 * YAW_INERTIA - 5.97)
    assert g.delta_kd[2] == pytest.approx(20.0 / 9)


def test_kd_negative_at_omega_2_and_corrected_by_delta():
    """Sec. 5.2: at omega_d = 2 the plain k_d < 0; k_d + delta_k_d > 0."""
    g = pd_gains(2.0, [YAW_INERTIA] * 3, [5.97] * 3, 20.0)
    assert g.kd[2] < 0 < g.kd_total[2]


def test_lti_is_critically_damped_without_delta():
    """Eq. 22 with plain k_d has a double pole at -omega_d (critical damping)."""
    g = pd_gains(3.0, [YAW_INERTIA] * 3, [5.97] * 3, 20.0)
    _, den = lti_closed_loop(g, [YAW_INERTIA] * 3, [5.97] * 3, with_delta_kd=False)
    np.testing.assert_allclose(np.roots(den), [-3.0, -3.0], atol=1e-6)


def test_lti_undershoots_at_omega_2_only_without_delta():
    """Non-minimum phase zero at omega_d = 2 (k_d < 0): the step starts the wrong way."""
    g = pd_gains(2.0, [YAW_INERTIA] * 3, [5.97] * 3, 20.0)
    t = np.linspace(0, 5, 2001)
    _, y_plain = signal.step(lti_closed_loop(g, [YAW_INERTIA] * 3, [5.97] * 3, with_delta_kd=False), T=t)
    _, y_delta = signal.step(lti_closed_loop(g, [YAW_INERTIA] * 3, [5.97] * 3), T=t)
    assert y_plain.min() < -0.01
    assert y_delta.min() >= -1e-9


@pytest.mark.parametrize("omega", [0.0, -1.0, float("nan")])
def test_rejects_bad_omega(omega):
    with pytest.raises(Brov2Error, match="omega_d_rad_s"):
        pd_gains(omega, [1, 1, 1], [1, 1, 1], 20.0)


def test_rejects_bad_inputs():
    with pytest.raises(Brov2Error, match="kappa"):
        pd_gains(2.0, [1, 1, 1], [1, 1, 1], -1.0)
    with pytest.raises(Brov2Error, match="total_inertia"):
        pd_gains(2.0, [1, 0, 1], [1, 1, 1], 1.0)
    with pytest.raises(Brov2Error, match="v_max"):
        trim_linear_drag(0.0, 2.42, 0.0)
