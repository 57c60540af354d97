"""Eq. 22 step and frequency response (brov2_hybrid.analysis.lti) against hand-derived forms."""
import math

import numpy as np
import pytest

from brov2_hybrid.analysis import lti

YAW = 2


@pytest.fixture(scope="module")
def controllers(vehicle, controller_params):
    return {w: lti.controller_for(w, vehicle, controller_params) for w in (2.0, 3.0, 4.0)}


def critical_step(t, w, inertia, kd):
    """Inverse Laplace of (k_p + s k_d) / (s I (s + w)^2) with k_p = I w^2 (plain k_d: double pole)."""
    return 1.0 - np.exp(-w * t) * (1.0 + w * t) + (kd / inertia) * t * np.exp(-w * t)


@pytest.mark.parametrize("w", [2.0, 3.0, 4.0])
def test_plain_step_matches_partial_fractions(controllers, w):
    c = controllers[w]
    t = np.linspace(0.0, 6.0, 601)
    y = lti.step_response(c, t, 1.0, 0.0, with_delta_kd=False)
    expected = critical_step(t, w, c.total_inertia[YAW], c.gains.kd[YAW])
    np.testing.assert_allclose(y, expected, atol=1e-6)


def test_omega_2_plain_kd_undershoots_and_delta_kd_removes_it(controllers):
    """Sec. 5.2: k_d < 0 puts a zero at s = -k_p/k_d > 0 (non-minimum phase)."""
    c = controllers[2.0]
    assert c.gains.kd[YAW] < 0.0 < c.gains.kd_total[YAW]
    plain = lti.step_metrics(c, math.pi / 2, 1.0, 30.0, 0.05, with_delta_kd=False)
    tuned = lti.step_metrics(c, math.pi / 2, 1.0, 30.0, 0.05)
    # Undershoot of the critical form: minimum of critical_step, found on a dense grid.
    t = np.linspace(0.0, 3.0, 300001)
    expected = -100.0 * np.min(critical_step(t, 2.0, c.total_inertia[YAW], c.gains.kd[YAW]))
    assert plain["undershoot_pct"] == pytest.approx(expected, rel=1e-3)
    assert expected > 5.0
    assert tuned["undershoot_pct"] == 0.0


def test_gain_at_omega_d_hand_computed(controllers):
    """|H(j w_d)| = sqrt(w^4 I^2 + w^2 k_d^2) / (2 w^2 I) for the plain critically damped design."""
    for w, c in controllers.items():
        inertia, kd = c.total_inertia[YAW], c.gains.kd[YAW]
        expected = math.sqrt(w ** 4 * inertia ** 2 + w ** 2 * kd ** 2) / (2 * w ** 2 * inertia)
        gain, phase = lti.frequency_response(c, [w], with_delta_kd=False)
        assert gain[0] == pytest.approx(expected, rel=1e-9)
        assert phase[0] == pytest.approx(math.atan2(w * kd, w ** 2 * inertia) - math.pi / 2, abs=1e-9)


def test_dc_gain_one_and_damping(controllers):
    c = controllers[3.0]
    gain, phase = lti.frequency_response(c, [1e-4])
    assert gain[0] == pytest.approx(1.0, abs=1e-6) and abs(phase[0]) < 1e-3
    assert lti.damping_ratio(c, with_delta_kd=False) == pytest.approx(1.0, abs=1e-12)
    assert lti.damping_ratio(c) > 1.0
    np.testing.assert_allclose(lti.poles(c, with_delta_kd=False), [-3.0, -3.0], atol=1e-5)
