"""brov2-analyze omega-limit's ``onboard`` condition: the law as the on-board Lua script runs it (its own
rate, the attitude read on the vehicle, no tether), flown at its own control rate."""
from dataclasses import replace

import pytest

from brov2_hybrid.analysis import omega_limit as ol
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.onboard.lua_script import load_onboard_settings
from brov2_hybrid.sim.config import load_sim_options


@pytest.fixture(scope="module")
def loop_settings():
    from brov2_hybrid.analysis.settings import load_analysis_settings
    return load_analysis_settings().loop


def _condition(name):
    return next(c for c in ol.load_omega_limit_settings().conditions if c.name == name)


def test_the_onboard_condition_runs_the_law_at_the_scripts_rate():
    onboard = _condition("onboard")
    assert onboard.control_rate_hz == load_onboard_settings().rate_hz
    assert onboard.telemetry_rate_hz == onboard.control_rate_hz       # the script reads the attitude each turn
    assert _condition("tether").control_rate_hz is None                # the others: the loop's rate


def test_effective_delay_counts_half_the_conditions_own_control_period():
    onboard, tether = _condition("onboard"), _condition("tether")
    sim = load_sim_options()
    lag = ol.lag_delay_s(sim, "third_order")
    assert ol.effective_delay_s(onboard, 50.0, sim) == pytest.approx(0.0025 + 0.0025 + 0.5 / 100.0 + lag)
    assert ol.effective_delay_s(tether, 50.0, sim) == pytest.approx(0.02 + 0.02 + 0.5 / 50.0 + lag)


def _flown(loop_settings, condition, omega_d, dive):
    loop = ClosedLoop(ol.condition_loop(loop_settings, condition),
                      sim_options=replace(load_sim_options(), thruster_lag=condition.thruster_lag,
                                          noise_enabled=condition.noise))
    return loop, loop.run(dive, omega_d_rad_s=omega_d)


def test_the_onboard_condition_flies_its_own_rate_and_holds_an_omega_d_the_tether_cannot(loop_settings, vehicle,
                                                                                           controller_params):
    """The onboard loop ticks at 100 Hz (twice the topside loop's ticks in the same run; without the
    condition's control rate it would tick at the loop's 50 Hz); at omega_d 10 its flown yaw step is
    within the table's limits, and the delay margin passes the table's rule on board but not behind the
    tether (its 20 + 20 ms and a 50 Hz law)."""
    from brov2_hybrid.analysis import metrics
    from brov2_hybrid.analysis.lti import controller_for
    from brov2_hybrid.dive.shapes import step_dive
    s = ol.load_omega_limit_settings()
    step = step_dive(s.step_rad, s.step_time_s, s.step_duration_s, loop_settings.desired_rate_hz)
    ticks = {}
    for name in ("onboard", "tether"):
        loop, run = _flown(loop_settings, _condition(name), 10.0, step)
        ticks[name] = len(run.t_s)
        assert loop.settings.control_rate_hz == (100.0 if name == "onboard" else loop_settings.control_rate_hz)
        if name == "onboard":
            yaw = run.log["yaw_rad"]
            assert metrics.overshoot(run.t_s, yaw, s.step_rad, s.step_time_s) <= s.max_overshoot_pct
            assert metrics.settling_time(run.t_s, yaw, s.step_rad, s.step_time_s, band=0.05) <= s.max_settling_s
    assert ticks["onboard"] == pytest.approx(2 * ticks["tether"], abs=2)
    margin = ol.margins_for(controller_for(10.0, vehicle, controller_params))["delay_margin_s"]
    sim = load_sim_options()
    assert margin >= s.min_delay_margin_ratio * ol.effective_delay_s(_condition("onboard"), 50.0, sim)
    assert margin < s.min_delay_margin_ratio * ol.effective_delay_s(_condition("tether"), 50.0, sim)
