"""Replay of a logged yaw step (brov2_hybrid.analysis.log_replay): the loop dead time measured
from the log, and the comparison on the Eq. 25 error rather than the settling time."""
import math
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.analysis.log_replay import compare_with_log, dead_time_s
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.loop.closed_loop import ClosedLoop, write_log
from brov2_hybrid.loop.settings import LoopSettings
from brov2_hybrid.tick_log.logfile import ATTITUDE_COLUMNS, RATE_COLUMNS

STEP = math.pi / 2
T_STEP = 1.0
TICK_S = 0.02


@pytest.fixture(scope="module")
def loop():
    return ClosedLoop(LoopSettings())


def _step_log(loop, duration=7.0):
    """The log rows of a 90 deg yaw step at T_STEP, omega_d 3, flown by ``loop``."""
    res = loop.run(step_dive(STEP, T_STEP, duration, loop.settings.desired_rate_hz), omega_d_rad_s=3.0)
    return dict(res.log)


def test_dead_time_is_the_first_tick_a_signal_leaves_its_pre_step_value():
    """A signal flat at 0.1 that starts to ramp 0.06 s after the step: the first tick past 10 % of
    the largest departure is the one after the ramp starts (hand-computed)."""
    t = np.arange(0.0, 2.0, TICK_S)
    r = np.where(t > T_STEP + 0.06 + 1e-9, 0.1 + 4.0 * (t - T_STEP - 0.06), 0.1)
    r = np.minimum(r, 0.1 + 2.0)                                  # largest departure 2.0
    # first departure > 0.2: 4 (t - 1.06) > 0.2 -> t > 1.11, the tick at 1.12 s
    assert dead_time_s(t, r, T_STEP, fraction=0.1) == pytest.approx(0.12, abs=1e-9)
    assert math.isnan(dead_time_s(t, np.full(t.shape, 0.1), T_STEP))


def test_a_pure_delay_in_the_log_is_measured_and_replayed(loop, tmp_path):
    """A log flown with 40 ms telemetry and 20 ms command delay, its attitude written as the control
    law saw it (40 ms late, as the ROS logger writes it), replays on the nominal loop to the same
    response: the measured dead time carries the whole 60 ms (delays commute in one loop)."""
    delayed = ClosedLoop(replace(loop.settings, telemetry_delay_s=0.04, command_delay_s=0.02), vehicle=loop.vehicle)
    log = _step_log(delayed)
    lag = int(round(0.04 / TICK_S))
    for column in ATTITUDE_COLUMNS + RATE_COLUMNS:            # what the control law saw: 2 ticks old
        seen = np.asarray(log[column], dtype=float)
        log[column] = np.concatenate([np.full(lag, seen[0]), seen[:-lag]])
    log["time_s"] = np.asarray(log["time_s"]) + 1.7e9              # absolute times, as the ROS logger writes
    path = write_log(str(tmp_path / "delayed.csv"), log)
    out = compare_with_log(path, loop=loop)
    assert out["added_delay_s"] == pytest.approx(0.06, abs=0.5 * TICK_S)
    assert out["ok"] and out["relative_difference"] < 0.01
    assert out["settling_difference"] < 0.02
    assert "command 60 ms" in out["latency"]


def test_a_different_response_is_told(loop, tmp_path):
    """A step flown on the old ArduSub SITL model (much slower, Fig. 16) does not agree with the
    replay on the updated model: the comparison can fail."""
    slow = ClosedLoop(replace(loop.settings, model="stock"), vehicle=loop.vehicle)
    path = write_log(str(tmp_path / "slow.csv"), _step_log(slow))
    out = compare_with_log(path, loop=loop)
    assert not out["ok"] and out["relative_difference"] > 0.10
    assert out["ros_error"] > out["inprocess_error"]


def test_compare_log_prints_the_verdict_and_what_it_replayed():
    from brov2_hybrid.analysis.log_replay import console_lines
    r = {"omega_d_rad_s": 3.0, "step_rad": 0.5, "step_time_s": 1.0, "window_s": 5.0, "ros_error": 0.11,
         "inprocess_error": 0.10, "latency": "telemetry 50 Hz", "dead_time_s": 0.04, "relative_difference": 0.09,
         "ok": True, "ros_settling_s": 1.2, "inprocess_settling_s": 1.1, "settling_difference": 0.08,
         "input": "log rows"}
    lines = console_lines("x.csv", r)
    assert lines[0].startswith("x.csv: omega_d 3.00, step 28.6 deg") and lines[0].endswith("difference 9.0 % -> agree")
    assert console_lines("x.csv", dict(r, ok=False))[0].endswith("-> DIFFER") and lines[-1] == "  input replayed: log rows"
