"""Run summary of a ROS tick log (brov2_hybrid.analysis.run_summary): the dive part, IAE, energy."""
import json
import math
import os

import numpy as np
import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.tick_log.logfile import LOG_COLUMNS, TETHER_COLUMNS, LogWriter, read_log
from brov2_hybrid.analysis.log_summary import dive_part
from brov2_hybrid.analysis.run_summary import TETHER_KEYS, format_summary, summarize, tether_figures


def _row(t, mode, yaw_d, yaw, rc4=1500):
    row = {c: 0.0 for c in LOG_COLUMNS}
    row.update((c, math.nan) for c in TETHER_COLUMNS)         # no tether
    row.update({"time_s": "%.6f" % t, "mode": mode, "yaw_d_rad": yaw_d, "yaw_rad": yaw,
                "omega_d_rad_s": 3.0, "depth_m": math.nan})
    row.update(("rc%d_us" % i, 1500) for i in range(1, 7))
    row.update(("pwm%d_us" % i, 1500) for i in range(1, 9))
    row["rc4_us"] = rc4
    return row


@pytest.fixture
def log_path(tmp_path):
    path = str(tmp_path / "dive.csv")
    with LogWriter(path) as w:
        for k in range(5):                                    # before the dive: no desired state
            w.write(_row(0.02 * k, "NO_ATTITUDE_NEUTRAL", math.nan, math.nan))
        for k in range(101):                                  # 2 s ACTIVE, 1 deg yaw error, rc4 = 1600
            w.write(_row(0.1 + 0.02 * k, "ACTIVE", math.radians(11.0), math.radians(10.0), 1600))
            if k == 50:
                w.write(_row(0.1 + 0.02 * k, "ACTIVE", math.radians(11.0), math.radians(10.0), 1600))  # repeated instant
        w.write(_row(2.2, "NO_INPUT_HOLD", math.radians(11.0), math.radians(11.0)))
        w.write(_row(2.22, "SHUTDOWN", math.nan, math.nan))
    return path


def test_dive_part_keeps_active_span_one_row_per_instant(log_path):
    part = dive_part(read_log(log_path))
    assert len(part["time_s"]) == 101
    assert set(part["mode"]) == {"ACTIVE"}
    assert np.all(np.diff(part["time_s"]) > 0)


def test_summary_iae_and_energy(log_path, tmp_path):
    figures = summarize(log_path, str(tmp_path / "out"))
    assert figures["iae_yaw_deg_s"] == pytest.approx(2.0, rel=1e-6)      # 1 deg for 2 s
    assert figures["iae_roll_deg_s"] == pytest.approx(0.0, abs=1e-12)
    assert figures["energy_yaw"] == pytest.approx(101 * 100 / 400.0)     # Eq. 26 on channel 4
    assert figures["energy_surge"] == 0.0
    for path in figures["files"]:
        assert os.path.isfile(path)
    with open(figures["files"][0]) as handle:
        assert json.load(handle)["iae_yaw_deg_s"] == pytest.approx(2.0, rel=1e-6)
    assert "yaw 2.0" in format_summary(figures)


def test_summary_names_the_placement_that_flew(log_path, tmp_path):
    topside = summarize(log_path, str(tmp_path / "top"))
    assert topside["placement"] == "topside" and "placement topside" in format_summary(topside)
    onboard = summarize(log_path, str(tmp_path / "onboard"), placement="onboard")
    text = format_summary(onboard)
    assert onboard["placement"] == "onboard" and "placement onboard" in text and "Lua script" in text
    # no RC override on board: the Eq. 26 energy (counted on it) is not claimed
    assert onboard["energy_yaw"] is None and "energy (Eq. 26): not measured" in text
    assert onboard["iae_yaw_deg_s"] == pytest.approx(2.0, rel=1e-6)
    with open(onboard["files"][0]) as handle:
        assert json.load(handle)["placement"] == "onboard"


def test_log_without_a_dive_is_refused(tmp_path):
    path = str(tmp_path / "idle.csv")
    with LogWriter(path) as w:
        w.write(_row(0.0, "NO_ATTITUDE_NEUTRAL", math.nan, math.nan))
    with pytest.raises(Brov2Error, match="expected ACTIVE control ticks"):
        dive_part(read_log(path))


def test_summarize_takes_a_log_without_active_ticks_whole(tmp_path):
    """``brov2-analyze summarize`` (require_active=False): an in-process log has no ACTIVE
    ticks, so every row counts (one per instant); the same cut as the run summary's."""
    from brov2_hybrid.analysis.log_summary import summarize_log
    path = str(tmp_path / "inprocess.csv")
    with LogWriter(path) as w:
        for k in range(51):                                   # 1 s, 2 deg yaw error
            w.write(_row(0.02 * k, "inprocess", math.radians(12.0), math.radians(10.0)))
        w.write(_row(1.0, "inprocess", math.radians(12.0), math.radians(10.0)))   # repeated instant
    part = dive_part(read_log(path), require_active=False)
    assert len(part["time_s"]) == 51
    m = summarize_log(path, str(tmp_path / "out"))
    assert m["iae_yaw_deg_s"] == pytest.approx(2.0, rel=1e-6)
    assert m["ticks"] == 51
    with pytest.raises(Brov2Error, match="expected ACTIVE control ticks"):
        summarize(path, str(tmp_path / "out2"))


def test_summary_prints_the_depth_error_rms_of_a_run_holding_depth(tmp_path):
    """Ticks with a depth setpoint (depth hold on): RMS of setpoint - depth, 3 cm here; without
    a setpoint (hold off) no depth line."""
    path = str(tmp_path / "held.csv")
    with LogWriter(path) as w:
        for k in range(100):
            row = _row(0.02 * k, "ACTIVE", 0.0, 0.0)
            row.update({"depth_m": 5.0 + 0.03 * (-1) ** k, "depth_setpoint_m": 5.0 if k >= 20 else math.nan})
            w.write(row)
    figures = summarize(path, str(tmp_path / "out"))
    assert figures["depth_hold_ticks"] == 80
    assert figures["depth_error_rms_m"] == pytest.approx(0.03, rel=1e-9)
    assert "depth error RMS 0.030 m" in format_summary(figures)
    plain = str(tmp_path / "plain.csv")
    with LogWriter(plain) as w:
        for k in range(10):
            w.write(dict(_row(0.02 * k, "ACTIVE", 0.0, 0.0), depth_m=5.0, depth_setpoint_m=math.nan))
    figures = summarize(plain, str(tmp_path / "out2"))
    assert figures["depth_error_rms_m"] is None and "depth" not in format_summary(figures)


def test_a_run_without_a_tether_reports_no_tether_force(log_path, tmp_path):
    figures = summarize(log_path, str(tmp_path / "out"))
    assert figures["tether_rows"] == 0
    assert all(figures[key] is None for key in TETHER_KEYS)
    assert "tether" not in format_summary(figures)


def test_the_summary_reports_the_tether_force_of_the_dive(tmp_path):
    """Mean, mean and largest |F| per NED axis and the magnitude's mean and peak, over the dive's rows."""
    path = str(tmp_path / "tethered.csv")
    forces = [(3.0, -4.0, 0.0), (-6.0, 8.0, 0.0)]
    with LogWriter(path) as w:
        w.write(_row(0.0, "NO_ATTITUDE_NEUTRAL", math.nan, math.nan))           # outside the dive: not counted
        for k in range(10):
            row = _row(0.1 + 0.02 * k, "ACTIVE", 0.0, 0.0)
            row.update(zip(TETHER_COLUMNS, forces[k % 2]))
            w.write(row)
        w.write(_row(0.4, "SHUTDOWN", math.nan, math.nan))
    figures = summarize(path, str(tmp_path / "out"))
    assert figures["tether_rows"] == 10
    np.testing.assert_allclose(figures["tether_force_mean_ned_n"], [-1.5, 2.0, 0.0])
    np.testing.assert_allclose(figures["tether_force_mean_abs_ned_n"], [4.5, 6.0, 0.0])
    np.testing.assert_allclose(figures["tether_force_max_abs_ned_n"], [6.0, 8.0, 0.0])
    assert figures["tether_force_mean_n"] == pytest.approx(7.5)
    assert figures["tether_force_max_n"] == pytest.approx(10.0)
    saved = json.load(open(figures["files"][0]))
    assert saved["tether_force_max_n"] == pytest.approx(10.0)
    assert "tether pull [N, NED]" in format_summary(figures)


def test_the_in_process_log_carries_the_simulated_tether_force(tmp_path):
    """The in-process loop on a tether logs the plant's pull every tick: the last row is the tether's
    force when the run ends, the summary's figures are those of the logged rows, and the mean |F| agrees
    with the tether's own count over every physics step; without the tether the columns are NaN."""
    from brov2_hybrid.analysis import tether_loop as tl
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.dive.shapes import step_dive
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    s = tl.load_tether_loop_settings()
    dive = step_dive(0.0, 1.0, 20.0, s.desired_rate_hz)
    for enabled in (True, False):
        options = tl._sim_options(s.pull_current_ned_m_s, enabled, length_m=s.pull_length_m,
                                  base_ned_m=np.array(s.pull_base_ned_m))
        loop = ClosedLoop(load_analysis_settings().loop, sim_options=options)
        result = loop.run(dive, omega_d_rad_s=3.0, log_path=str(tmp_path / ("on.csv" if enabled else "off.csv")))
        log = read_log(result.log_path)
        figures = tether_figures(log)
        if not enabled:
            assert figures["tether_rows"] == 0 and figures["tether_force_max_n"] is None
            continue
        assert figures["tether_rows"] == len(log["time_s"])
        last = [log[c][-1] for c in TETHER_COLUMNS]
        np.testing.assert_allclose(last, loop.plant.tether.force_ned(), rtol=1e-6, atol=1e-6)
        tether = loop.plant.tether
        np.testing.assert_allclose(figures["tether_force_mean_abs_ned_n"], tether.pull_sum_n / tether.steps,
                                   rtol=0.05, atol=0.05)
        assert figures["tether_force_max_n"] <= np.linalg.norm(tether.pull_max_n) + 1e-6
        assert figures["tether_force_mean_n"] > 5.0        # the cable holds the vehicle
