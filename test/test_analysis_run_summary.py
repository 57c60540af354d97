"""Run summary of a ROS tick log (brov2_hybrid.analysis.run_summary): the dive part, IAE, energy."""
import json
import math
import os

import numpy as np
import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.tick_log.logfile import LOG_COLUMNS, LogWriter, read_log
from brov2_hybrid.analysis.log_summary import dive_part
from brov2_hybrid.analysis.run_summary import format_summary, summarize


def _row(t, mode, yaw_d, yaw, rc4=1500):
    row = {c: 0.0 for c in LOG_COLUMNS}
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
