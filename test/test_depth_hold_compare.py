"""The measures of the depth hold vs ALT_HOLD comparison (brov2_hybrid.analysis.depth_hold_compare) on
synthetic logs with known answers, its table, and its refusal without an ArduSub build (the flights
themselves need ArduSub: `brov2-analyze depth-hold-compare`)."""
import math
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.analysis import cli, doc_tables
from brov2_hybrid.analysis import depth_hold_compare as dc
from brov2_hybrid.analysis import depth_hold_report as dr
from brov2_hybrid.analysis.ardusub_fly import truth_at
from brov2_hybrid.dive.dive_csv import Dive
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.tick_log.logfile import NUMERIC_COLUMNS


@pytest.fixture(scope="module")
def settings():
    return dc.load_depth_hold_compare_settings()


def log_of(t, depth, vertical_pwm=1500.0):
    log = {name: np.zeros_like(t) for name in NUMERIC_COLUMNS}
    log["time_s"], log["depth_m"] = t, depth
    for i in range(1, 9):
        log["pwm%d_us" % i] = np.full_like(t, vertical_pwm if i >= 5 else 1500.0)
    return log


def test_the_flight_plan_descends_holds_the_dive_at_heave_0_and_steps(settings):
    t = np.arange(0.0, 30.0, 0.02)
    u = np.full((t.size, 3), 0.7)
    bundled = Dive(t_s=t, eta2d_rad=np.full((t.size, 3), 0.1), u_linear=u, source="synthetic")
    dive, t_hold, t_step = dc.flight_plan(bundled, settings)
    s = settings
    assert t_hold == pytest.approx(s.descent_s + s.settle_s)
    assert t_step == pytest.approx(t_hold + 30.0, abs=0.05)
    dt = 1.0 / s.plan_rate_hz
    # full stick for descent_s and step_s: their integrals are the stick-seconds asked
    assert np.sum(dive.u_linear[:, 2]) * dt == pytest.approx(s.descent_s + s.step_s, abs=2 * dt)
    hold = (dive.t_s >= t_hold) & (dive.t_s < t_step)
    assert np.all(dive.u_linear[hold, 2] == 0.0) and np.all(dive.u_linear[hold, :2] == 0.7)
    assert np.all(dive.eta2d_rad[hold] == 0.1) and np.all(dive.eta2d_rad[~hold] == 0.0)
    assert np.all(np.diff(dive.t_s) > 0)


def test_hold_measures_of_a_sine_about_the_held_depth(settings):
    s = replace(settings, reference_window_s=2.0)
    t = np.arange(0.0, 60.0, 0.01)
    t_hold, t_step, amp = 10.0, 50.0, 0.08
    depth = np.where(t < t_hold, 5.0, 5.0 + amp * np.sin(2 * np.pi * 0.5 * (t - t_hold)))
    m = dc.hold_measures(log_of(t, depth, vertical_pwm=1700.0), t_hold, t_step, s)
    assert m["held_depth_m"] == pytest.approx(5.0)
    assert m["hold_rms_m"] == pytest.approx(amp / math.sqrt(2), rel=1e-3)
    assert m["hold_max_m"] == pytest.approx(amp, rel=1e-3)
    assert abs(m["hold_drift_m"]) < 1e-3                     # whole periods in the last window
    # four vertical motors at half forward: 4 x 0.5 per second over the 40 s hold
    assert m["hold_effort_vertical_s"] == pytest.approx(4 * 0.5 * 40.0, rel=1e-3)
    assert m["hold_effort_all_s"] == pytest.approx(m["hold_effort_vertical_s"])


def test_step_measures_of_a_first_order_step_that_falls_short(settings):
    s = replace(settings, reference_window_s=2.0, final_window_s=3.0, settle_band=0.05)
    t = np.arange(0.0, 40.0, 0.01)
    t_step, tau, reached = 10.0, 1.5, 0.9
    depth = 5.0 + np.where(t < t_step, 0.0, reached * (1.0 - np.exp(-(t - t_step) / tau)))
    m = dc.step_measures(log_of(t, depth), t_step, 1.0, s)
    assert m["step_start_depth_m"] == pytest.approx(5.0)
    assert m["step_final_m"] == pytest.approx(reached, rel=1e-4)
    assert m["step_error_m"] == pytest.approx(reached - 1.0, rel=1e-3)
    assert m["step_overshoot_m"] == pytest.approx(0.0, abs=1e-4)
    assert m["step_settling_s"] == pytest.approx(-tau * math.log(0.05), abs=0.02)


def test_reading_measures_recover_a_known_scale_and_offset():
    true = np.linspace(0.1, 6.0, 200)
    noise = 0.01 * np.sin(np.arange(true.size) * 1.7)
    readings = np.column_stack([np.arange(true.size) * 0.1, 1.02 * true + 0.3 + noise, true])
    readings[5, 1] = np.nan                                   # a report without a truth is left out
    m = dc.reading_measures(readings)
    assert m["readings"] == 199
    assert m["reading_scale"] == pytest.approx(1.02, abs=2e-3)
    assert m["reading_intercept_m"] == pytest.approx(0.3, abs=5e-3)
    assert m["reading_offset_m"] == pytest.approx(np.mean(0.02 * true + 0.3), abs=2e-3)
    assert m["first_reading_true_m"] == pytest.approx(0.1)
    assert math.isnan(dc.reading_measures(np.zeros((0, 3)))["reading_offset_m"])


def test_the_truth_is_taken_at_the_messages_time_not_the_newest():
    q_level = (0.0, 0.0, 0.0, 1.0)
    history = [(k * 0.01, q_level, 1.0 + k) for k in range(10)]
    eta2, depth = truth_at(history, 0.045)
    assert depth == 5.0 and np.allclose(eta2, 0.0)
    assert math.isnan(truth_at(history, -1.0)[1])


def synthetic_summary():
    row = {"mode": "MANUAL", "reads": "r", "hold_rms_m": 0.05, "hold_max_m": 0.15, "hold_drift_m": 0.0,
           "hold_effort_vertical_s": 150.0, "hold_effort_all_s": 300.0, "step_commanded_m": 1.0,
           "step_final_m": 1.0, "step_overshoot_m": 0.1, "step_settling_s": float("nan"),
           "reading_offset_m": 0.4, "reading_rms_m": 0.05, "reading_scale": 1.02, "reading_intercept_m": 0.36,
           "first_reading_m": 0.4, "first_reading_true_m": 0.12, "max_reader_lag_s": 0.05}
    other = dict(row, case=dc.ALT_HOLD, mode="ALT_HOLD", hold_rms_m=0.1, hold_effort_vertical_s=100.0)
    return {"rows": [dict(row, case=dc.HYBRID), other], "omega_d": 3.0, "max_depth_rate_m_s": 0.5,
            "plan": {"descent_s": 10.0, "settle_s": 15.0, "hold_s": 150.0, "step_s": 2.0, "after_step_s": 18.0,
                     "start_depth_m": 0.0}, "dive": "d.csv", "telemetry_delay_s": 0.0, "command_delay_s": 0.0,
            "speedup": 50.0, "settle_band": 0.05, "alt_hold_params": {"PILOT_SPEED_DN": {"default": 0.0, "flown": 50.0}}}


def test_a_pilots_row_is_the_mean_and_range_of_its_flights():
    row = dc.combine_flights([{"hold_rms_m": 0.05, "step_final_m": 0.9}, {"hold_rms_m": 0.08, "step_final_m": 1.1},
                              {"hold_rms_m": 0.05, "step_final_m": 1.0}])
    assert row["flights"] == 3
    assert row["hold_rms_m"] == pytest.approx(0.06) and row["hold_rms_m_range"] == [0.05, 0.08]
    assert row["step_final_m"] == pytest.approx(1.0) and row["step_final_m_range"] == [0.9, 1.1]


def test_the_table_and_verdict_follow_the_figures():
    text = "\n".join(dr.markdown_table(synthetic_summary()))
    assert "0.50 x ALT_HOLD's (0.050 m vs 0.100 m)" in text and "1.50 x the vertical motors' effort" in text
    assert "PILOT_SPEED_DN 0 -> 50" in text
    assert doc_tables.render("depth_hold_compare", synthetic_summary()).endswith("\n")
    assert dr.report_section({"skipped": "no build"})[-2] == "Not run: no build."


def test_the_command_refuses_cleanly_without_an_ardusub_build(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BROV2_ARDUSUB_CACHE", str(tmp_path / "no_cache"))
    monkeypatch.delenv("BROV2_ARDUSUB", raising=False)
    out = tmp_path / "out"
    assert cli.main(["depth-hold-compare", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "depth-hold-compare: error: no ArduSub SITL build" in err and "make ardusub" in err
    assert not out.exists() or not any(out.iterdir())
    with pytest.raises(Brov2Error, match="no ArduSub SITL build"):
        dc.depth_hold_compare_experiment(None)
