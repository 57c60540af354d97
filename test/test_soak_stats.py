"""Soak statistics (brov2_hybrid.node_logic.soak_stats) against hand-made series."""
import numpy as np
import pytest

from brov2_hybrid.node_logic import soak_stats
from brov2_hybrid.errors import Brov2Error


def test_slope_per_hour_of_a_known_leak_under_noise():
    rng = np.random.default_rng(1)
    t = np.arange(0.0, 600.0, 5.0)                      # 10 min, every 5 s
    rss = 50e6 + 2.0 * soak_stats.MIB / 3600.0 * t       # 2 MiB/h leak
    rss += rng.normal(0.0, 0.05 * soak_stats.MIB, t.size)
    assert soak_stats.memory_growth_mib_per_h(t, rss) == pytest.approx(2.0, abs=0.3)


def test_flat_memory_after_startup_ignores_the_warmup():
    t = np.arange(0.0, 300.0, 1.0)
    rss = np.where(t < 30.0, 40e6 + t * 1e5, 43e6)       # grows during start-up, then flat
    assert soak_stats.memory_growth_mib_per_h(t, rss, warmup_s=30.0) == pytest.approx(0.0, abs=1e-9)
    assert soak_stats.memory_growth_mib_per_h(t, rss) > 1.0


def test_slope_needs_three_points_and_skips_nan():
    assert np.isnan(soak_stats.slope_per_hour([0.0, 1.0], [1.0, 2.0]))
    assert soak_stats.slope_per_hour([0.0, 1.0, np.nan, 2.0], [0.0, 1.0, 5.0, 2.0]) == pytest.approx(3600.0)
    with pytest.raises(Brov2Error, match=r"expected two 1-D arrays of one length"):
        soak_stats.slope_per_hour([0.0, 1.0, 2.0], [0.0, 1.0])


def test_cpu_per_tick_in_windows():
    # 50 ticks/s and 1 ms of CPU per tick, then 2 ms per tick after t = 10 s.
    t = np.arange(0.0, 20.0 + 1e-9, 0.5)
    cpu = np.where(t <= 10.0, 0.05 * t, 0.5 + 0.1 * (t - 10.0))
    ticks = np.arange(0.01, 20.0, 0.02)
    centres, ms = soak_stats.cpu_ms_per_tick(t, cpu, ticks, 5.0)
    np.testing.assert_allclose(centres, [2.5, 7.5, 12.5, 17.5])
    np.testing.assert_allclose(ms, [1.0, 1.0, 2.0, 2.0], rtol=1e-9)


def test_cpu_per_tick_window_without_ticks_is_nan():
    centres, ms = soak_stats.cpu_ms_per_tick([0.0, 10.0], [0.0, 1.0], [1.0, 2.0], 5.0)
    assert ms[0] == pytest.approx(1e3 * 0.5 / 2) and np.isnan(ms[1])
    with pytest.raises(Brov2Error, match="window_s"):
        soak_stats.cpu_ms_per_tick([0.0, 10.0], [0.0, 1.0], [1.0], 0.0)


def test_tick_gaps_counts_lost_messages_and_skipped_periods():
    period = 0.02
    k = np.arange(1, 101)
    t = k * period
    # lost on the way: ticks 10 and 11 computed but never received
    keep = (k != 10) & (k != 11)
    # skipped by the loop: no tick for 3 periods after tick 50 (stamps jump by 4 periods)
    t2 = np.where(k > 50, t + 3 * period, t)
    g = soak_stats.tick_gaps(k[keep], t2[keep], period)
    assert g["received"] == 98
    assert g["missing"] == 2
    # the lost ticks 10-11 are explained by the counter; only the jump is a loop skip
    assert g["late_intervals"] == 1
    assert g["skipped_periods"] == 3


def test_tick_gaps_of_a_clean_run_and_errors():
    k = np.arange(1, 51)
    g = soak_stats.tick_gaps(k, k * 0.02 + np.random.default_rng(0).normal(0, 1e-4, 50), 0.02)
    assert g == {"received": 50, "missing": 0, "late_intervals": 0, "skipped_periods": 0}
    assert soak_stats.tick_gaps([], [], 0.02)["received"] == 0
    with pytest.raises(Brov2Error, match="one length"):
        soak_stats.tick_gaps([1, 2], [0.0], 0.02)
    with pytest.raises(Brov2Error, match="period_s"):
        soak_stats.tick_gaps([1], [0.0], 0.0)
