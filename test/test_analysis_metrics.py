"""Performance measures (brov2_hybrid.analysis.metrics) against analytic signals."""
import math

import numpy as np
import pytest

from brov2_hybrid.analysis import metrics
from brov2_hybrid.errors import Brov2Error


def first_order(t, tau, t0=0.0):
    return np.where(t >= t0, 1.0 - np.exp(-(t - t0) / tau), 0.0)


def second_order(t, zeta, wn):
    wd = wn * math.sqrt(1 - zeta ** 2)
    return 1.0 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta ** 2) * np.sin(wd * t))


def test_settling_time_first_order_is_tau_ln20():
    """|1 - y| = e^(-t/tau) <= 0.05  <=>  t >= tau ln 20."""
    t = np.arange(0.0, 10.0, 0.02)
    settle = metrics.settling_time(t, 90.0 * first_order(t, 0.5, 1.0), 90.0, 1.0)
    assert settle == pytest.approx(0.5 * math.log(20.0), abs=1e-3)


def test_settling_time_underdamped_matches_dense_search():
    """Coarse (50 Hz) samples give the last band exit found on a 1e-5 s grid, within a sample."""
    zeta, wn = 0.3, 4.0
    dense = np.arange(0.0, 8.0, 1e-5)
    outside = np.nonzero(np.abs(second_order(dense, zeta, wn) - 1.0) > 0.05)[0]
    truth = dense[outside[-1]]
    t = np.arange(0.0, 8.0, 0.02)
    assert metrics.settling_time(t, second_order(t, zeta, wn), 1.0, 0.0) == pytest.approx(truth, abs=0.02)


def test_overshoot_of_second_order_is_exp_formula():
    zeta, wn = 0.4, 3.0
    t = np.arange(0.0, 10.0, 1e-3)
    expected = 100.0 * math.exp(-zeta * math.pi / math.sqrt(1 - zeta ** 2))
    assert metrics.overshoot(t, second_order(t, zeta, wn), 1.0, 0.0) == pytest.approx(expected, rel=1e-3)
    assert metrics.undershoot(t, second_order(t, zeta, wn), 1.0, 0.0) == 0.0


def test_negative_step_overshoot_and_settling():
    t = np.arange(0.0, 6.0, 0.01)
    y = -90.0 * first_order(t, 0.4)
    assert metrics.overshoot(t, y, -90.0, 0.0) == 0.0
    assert metrics.settling_time(t, y, -90.0, 0.0) == pytest.approx(0.4 * math.log(20.0), abs=1e-3)


def test_not_settled_is_nan_and_rise_time_first_order():
    t = np.arange(0.0, 2.0, 0.01)
    assert math.isnan(metrics.settling_time(t, 0.5 * t, 1.5, 0.0))
    t = np.arange(0.0, 5.0, 0.001)
    assert metrics.rise_time(t, first_order(t, 0.3, 1.0), 1.0, 1.0) == pytest.approx(0.3 * math.log(10.0), abs=1e-3)


def test_iae_of_sine_over_one_period_is_2_over_pi():
    t = np.linspace(0.0, 1.0, 20001)
    assert metrics.iae(t, np.sin(2 * math.pi * t)) == pytest.approx(2.0 / math.pi, rel=1e-6)
    curve = metrics.cumulative_iae(t, np.ones_like(t))
    assert curve[0] == 0.0 and curve[-1] == pytest.approx(1.0)


def test_energy_eq26_of_known_pwms():
    pwm = [1500, 1900, 1100, 1700, 1400]
    assert metrics.energy(pwm) == pytest.approx(0 + 1 + 1 + 0.5 + 0.25)
    np.testing.assert_allclose(metrics.cumulative_energy(pwm), [0, 1, 2, 2.5, 2.75])


def test_normalized_error_eq25():
    t = np.linspace(0.0, 10.0, 1001)
    ref = np.full_like(t, 2.0)
    assert metrics.normalized_error(t, 1.1 * ref, ref, 1.0, 5.0, 0.1) == pytest.approx(0.1)
    # Where the reference is below the floor, the floor divides: 0.1 / 0.5.
    assert metrics.normalized_error(t, np.full_like(t, 0.1), np.zeros_like(t), 1.0, 5.0, 0.5) == pytest.approx(0.2)


@pytest.mark.parametrize("phase", [-math.pi / 4, -2.0, 0.1])
def test_gain_phase_of_sampled_sines(phase):
    f = 0.7
    t = np.arange(0.0, 10.0, 0.02)
    u = 30.0 * np.sin(2 * math.pi * f * t)
    y = 15.0 * np.sin(2 * math.pi * f * t + phase)
    gain, ph = metrics.gain_phase(t, u, y, f, t_from_s=2.0)
    assert gain == pytest.approx(0.5, rel=2e-3)
    assert ph == pytest.approx(phase, abs=0.01)


def test_bandwidth_and_unity_crossing_of_first_order_low_pass():
    w = np.logspace(-1, 2, 400)
    gain = 1.0 / np.sqrt(1.0 + (w / 3.0) ** 2)
    assert metrics.bandwidth(w, gain) == pytest.approx(3.0, rel=1e-3)
    assert math.isnan(metrics.unity_crossing(w, gain))
    peaked = np.abs(1.0 / (1.0 - (w / 2.0) ** 2 + 1j * 0.5 * w / 2.0))  # resonance above 1
    crossing = metrics.unity_crossing(w, peaked)
    assert crossing == pytest.approx(2.0 * math.sqrt(2.0 - 0.25), rel=1e-3)  # |H| = 1 where (w/2)^2 = 2 - (2 zeta)^2


def test_bad_inputs_raise():
    with pytest.raises(Brov2Error, match="length"):
        metrics.settling_time([0, 1, 2], [0, 1], 1.0, 0.0)
    with pytest.raises(Brov2Error, match="increasing"):
        metrics.iae([0, 2, 1], [0, 1, 2])
    with pytest.raises(Brov2Error, match="target != initial"):
        metrics.settling_time([0, 1, 2], [0, 1, 2], 0.0, 0.0)
    with pytest.raises(Brov2Error, match="freq_hz"):
        metrics.gain_phase([0, 1, 2], [0, 1, 0], [0, 1, 0], 0.0)


def test_median_ci_ranks_match_the_sign_test_table():
    """n = 10 at 95 %: (x_(2), x_(9)), coverage 97.9 % (the classic table); n = 5 is too few, n = 6 gives the range."""
    x = np.arange(1.0, 11.0)
    assert metrics.median_ci(x) == (2.0, 9.0)
    assert all(math.isnan(v) for v in metrics.median_ci(np.arange(1.0, 6.0)))
    assert metrics.median_ci(np.arange(1.0, 7.0)) == (1.0, 6.0)
    assert metrics.median_ci(np.r_[x, np.nan, np.inf]) == (2.0, 9.0)      # non-finite dropped
    with pytest.raises(Brov2Error):
        metrics.median_ci(x, level=1.0)


def test_median_ci_covers_the_true_median_at_its_level():
    """Monte Carlo coverage of the interval on skewed samples (exponential, median ln 2)."""
    rng = np.random.default_rng(11)
    trials, hits = 600, 0
    for _ in range(trials):
        lo, hi = metrics.median_ci(rng.exponential(1.0, 200))
        hits += lo <= math.log(2.0) <= hi
    assert 0.93 <= hits / trials <= 0.985
