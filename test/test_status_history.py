"""The ticks' recent history (status_history) and the log rows a restarted logger
rebuilds from it (logfile.status_row, logfile.last_row_time_s)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from brov2_hybrid.logfile import (LOG_COLUMNS, PWM_COLUMNS, RC_COLUMNS, LogWriter, last_row_time_s, read_log,
                                  status_row)
from brov2_hybrid.status_history import StatusHistory, history_capacity


def test_since_returns_the_items_after_a_stamp_oldest_first():
    h = StatusHistory(10)
    for k in range(5):
        h.append(0.02 * k, "tick%d" % k)
    items, complete = h.since(0.02 * 2)
    assert items == ["tick3", "tick4"]
    assert complete
    assert h.since(-math.inf) == (["tick%d" % k for k in range(5)], True)
    assert h.since(1.0) == ([], True)


def test_a_hole_at_the_start_is_reported_once_items_were_dropped():
    h = StatusHistory(3)
    for k in range(5):                 # ticks 0, 1 dropped
        h.append(float(k), k)
    assert h.dropped_until_s == 1.0
    assert h.since(0.5) == ([2, 3, 4], False)    # tick 1 (after 0.5) is gone
    assert h.since(1.0) == ([2, 3, 4], True)     # nothing after 1.0 was dropped


def test_clock_going_back_starts_a_new_timeline():
    h = StatusHistory(3)
    for k in range(4):
        h.append(10.0 + k, k)
    h.append(0.5, "replay restarted")
    assert h.since(-math.inf) == (["replay restarted"], True)
    assert h.dropped_until_s == -math.inf


def test_nan_and_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="capacity"):
        StatusHistory(0)
    h = StatusHistory(2)
    with pytest.raises(ValueError, match="NaN"):
        h.append(float("nan"), 1)
    with pytest.raises(ValueError, match="NaN"):
        h.since(float("nan"))
    with pytest.raises(ValueError):
        history_capacity(0.0, 30.0)


def test_capacity_covers_the_attitude_trigger_at_twice_the_rate():
    assert history_capacity(50.0, 30.0) == 3000     # 30 s at up to 100 ticks/s
    h = StatusHistory(history_capacity(50.0, 1.0))
    for k in range(100):                            # 1 s of ticks at 100 Hz
        h.append(0.01 * k, k)
    assert h.since(-1.0) == (list(range(100)), True)


def _status(t_s, mode="ACTIVE"):
    stamp = SimpleNamespace(to_sec=lambda: t_s)
    return SimpleNamespace(header=SimpleNamespace(stamp=stamp), omega_d_rad_s=3.0, mode=mode,
                           pilot_axes=[False, True, True], desired_rad=[0.1, 0.2, 0.3],
                           attitude_rad=[0.4, 0.5, 0.6], rates_rad_s=[0.7, 0.8, 0.9],
                           linear_cmd=[0.0, 0.1, -0.1], tau=[1, 2, 3, 4, 5, 6], u=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6])


def test_status_row_fills_every_column_and_maps_fields_by_name():
    row = status_row(_status(12.5), list(range(1101, 1107)), [1500] * 6, 2.25)
    assert set(row) == set(LOG_COLUMNS)
    assert row["time_s"] == 12.5 and row["depth_m"] == 2.25 and row["mode"] == "ACTIVE"
    assert row["pilot_axes"] == 2 + 4                    # pitch and yaw bits
    assert (row["pitch_d_rad"], row["yaw_rad"], row["q_rad_s"]) == (0.2, 0.6, 0.8)
    assert (row["heave_cmd"], row["tau_m_nm"], row["u_yaw"]) == (-0.1, 5, 0.6)
    assert (row["rc1_us"], row["rc6_us"]) == (1101, 1106)
    assert row["pwm6_us"] == 1500 and math.isnan(row["pwm7_us"])   # 6 outputs reported, 8 columns


def test_rows_rebuilt_after_a_restart_read_back_with_nan_pwms(tmp_path):
    path = str(tmp_path / "dive.csv")
    nan = [math.nan] * len(PWM_COLUMNS)
    with LogWriter(path) as writer:
        writer.write(status_row(_status(1.0), [1500] * len(RC_COLUMNS), [1500] * 8, 0.5))
        writer.write(status_row(_status(1.02), nan, nan, math.nan))
    log = read_log(path)
    np.testing.assert_array_equal(log["time_s"], [1.0, 1.02])
    assert log["rc1_us"][0] == 1500 and np.isnan(log["rc1_us"][1]) and np.isnan(log["depth_m"][1])


def test_last_row_time_is_exact_and_survives_odd_files(tmp_path):
    path = str(tmp_path / "dive.csv")
    assert last_row_time_s(path) is None                     # no file
    with LogWriter(path) as writer:
        assert last_row_time_s(path) is None                 # header only
        t = 1763901234.123456789                             # an epoch stamp: repr round-trips
        for k in range(3):
            writer.write(status_row(_status(t + 0.02 * k), [1500] * 6, [1500] * 8, 1.0))
    assert last_row_time_s(path) == t + 0.04
    with open(path, "a") as handle:                          # a row cut short at the end
        handle.write("1763901300.0,0.1,0.2")
    assert last_row_time_s(path) == t + 0.04
    assert last_row_time_s(path, tail_bytes=200) == t + 0.04     # tail starts mid-row
