"""The robustness Monte Carlo counts a run whose vehicle pitched through 90 deg as lost, never crashes on it.

A sampled plant on a tether in a current can be pulled over: the Euler-angle law then raises GimbalLock
(roll and yaw errors are undefined there). The sweep once died on the first such sample, with the
figures of every other run lost with it.
"""
import math

import pytest

from brov2_hybrid.analysis import robustness as rb
from brov2_hybrid.analysis.settings import load_analysis_settings
from brov2_hybrid.control.law import check_gimbal_lock
from brov2_hybrid.errors import Brov2Error, GimbalLock


class _PulledOver(object):
    """A loop whose every run ends with the vehicle at pitch -90 deg."""

    def run(self, dive, duration_s=None, **options):
        check_gimbal_lock(-math.pi / 2)


def test_the_law_raises_gimbal_lock_as_its_own_error():
    with pytest.raises(GimbalLock, match="gimbal lock"):
        check_gimbal_lock(math.radians(-89.99))
    assert issubclass(GimbalLock, Brov2Error)
    check_gimbal_lock(math.radians(-80.0))        # far from it: nothing


def test_a_run_pulled_over_is_none_and_other_errors_still_raise():
    assert rb._flown(_PulledOver(), None, 10.0) is None

    class Broken(object):
        def run(self, dive, duration_s=None, **options):
            raise Brov2Error("a bad dive")
    with pytest.raises(Brov2Error, match="a bad dive"):
        rb._flown(Broken(), None)


def test_lost_runs_are_counted_and_kept_out_of_the_figures(monkeypatch):
    """Every run of a sweep pulled over: each is flagged lost (infinite settling and IAE, no overshoot),
    the table counts them per omega_d and law, and its statistics have no sample."""
    s = load_analysis_settings()
    monkeypatch.setattr(rb, "ClosedLoop", lambda *a, **k: _PulledOver())
    smp = rb.draw_tethered_samples(s.robustness)[0]
    run = rb.run_robust_job(rb.RobustJob(s.loop, s.robustness, smp, 3.0, True, s.step.settle_band))
    assert run["lost"] and math.isinf(run["settling_s"]) and math.isinf(run["dive_iae_deg_s"])
    assert math.isnan(run["overshoot_pct"]) and run["sim_s"] == 0.0
    kept = dict(run, lost=False, settling_s=2.0, overshoot_pct=5.0, dive_iae_deg_s=100.0)
    row, = [r for r in rb._table((3.0,), [run, run, kept]) if r["law"] == run["law"]]
    assert row["lost"] == 2 and row["unsettled"] == 2
    assert row["dive_iae_deg_s"]["n"] == 1 and row["dive_iae_deg_s"]["median"] == 100.0
