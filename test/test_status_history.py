"""The ticks' recent history (status_history) and the log rows a restarted logger
rebuilds from it (logfile.status_row, logfile.last_row_time_s)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from brov2_hybrid.tick_log.logfile import (LOG_COLUMNS, PWM_COLUMNS, RC_COLUMNS, U_COLUMNS, LogWriter, TickJoin,
                                  last_row_time_s, read_log, status_row)
from brov2_hybrid.tick_log.status_history import StatusHistory, history_capacity


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
                           linear_cmd=[0.0, 0.1, -0.1], tau=[1, 2, 3, 4, 5, 6])


def test_status_row_fills_every_column_and_maps_fields_by_name():
    row = status_row(_status(12.5), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], list(range(1101, 1107)), [1500] * 6, 2.25)
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
        writer.write(status_row(_status(1.0), [0.0] * 6, [1500] * len(RC_COLUMNS), [1500] * 8, 0.5))
        writer.write(status_row(_status(1.02), None, nan, nan, math.nan))
    log = read_log(path)
    np.testing.assert_array_equal(log["time_s"], [1.0, 1.02])
    assert log["rc1_us"][0] == 1500 and np.isnan(log["rc1_us"][1]) and np.isnan(log["depth_m"][1])
    assert log["u_yaw"][0] == 0.0 and np.isnan(log["u_yaw"][1])


def test_last_row_time_is_exact_and_survives_odd_files(tmp_path):
    path = str(tmp_path / "dive.csv")
    assert last_row_time_s(path) is None                     # no file
    with LogWriter(path) as writer:
        assert last_row_time_s(path) is None                 # header only
        t = 1763901234.123456789                             # an epoch stamp: repr round-trips
        for k in range(3):
            writer.write(status_row(_status(t + 0.02 * k), [0.0] * 6, [1500] * 6, [1500] * 8, 1.0))
    assert last_row_time_s(path) == t + 0.04
    with open(path, "a") as handle:                          # a row cut short at the end
        handle.write("1763901300.0,0.1,0.2")
    assert last_row_time_s(path) == t + 0.04
    assert last_row_time_s(path, tail_bytes=200) == t + 0.04     # tail starts mid-row


def _rows(*stamps):
    return [{"time_s": t} for t in stamps]


def _u(k):
    return [0.1 * k] * 6


def test_join_pairs_rows_with_their_ticks_u_whichever_comes_first():
    join = TickJoin(max_pending=3)
    assert join.row({"time_s": 1.0}) == []                     # status first: waits
    out = join.command(1.0, _u(1))
    assert [r["time_s"] for r in out] == [1.0] and out[0]["u_yaw"] == 0.1
    assert join.command(2.0, _u(2)) == []                      # command first: kept
    out = join.row({"time_s": 2.0})
    assert out[0]["u_surge"] == 0.2 and set(U_COLUMNS) <= set(out[0])
    assert join.flush() == []


def test_join_keeps_tick_order_and_gives_nan_where_no_command_came():
    join = TickJoin(max_pending=2)
    assert join.row({"time_s": 1.0}) == [] and join.row({"time_s": 2.0}) == []
    out = join.command(2.0, _u(2))          # commands come in order: tick 1 will get none
    assert [r["time_s"] for r in out] == [1.0, 2.0]
    assert math.isnan(out[0]["u_yaw"]) and out[1]["u_yaw"] == 0.2
    # allocation down: a row goes out with NaN once max_pending newer rows wait behind it
    assert join.row({"time_s": 3.0}) == [] and join.row({"time_s": 4.0}) == []
    out = join.row({"time_s": 5.0})
    assert [r["time_s"] for r in out] == [3.0] and math.isnan(out[0]["u_pitch"])
    assert join.pending_times() == {4.0, 5.0}
    assert [r["time_s"] for r in join.flush()] == [4.0, 5.0]
    assert join.pending_times() == set()


def test_join_takes_the_first_command_per_stamp():
    join = TickJoin(max_pending=5)
    join.command(7.0, _u(3))
    join.command(7.0, [0.0] * 6)            # a timer re-send of a stale tau: same stamp, neutral
    assert join.row({"time_s": 7.0})[0]["u_yaw"] == pytest.approx(0.3)
    with pytest.raises(ValueError):
        TickJoin(-1)
