"""brov2_hybrid.onboard.uplink: what the topside sends the on-board script (no ROS, no vehicle).

A stand-in pymavlink MAVLink object records each send; the settings are the project's own
(params/onboard.yaml, params/autopilot.yaml section mavlink_bridge, controller.yaml's rate_window).
"""
import math

import numpy as np
import pytest

from brov2_hybrid.link.bridge_settings import BridgeSettings
from brov2_hybrid.node_logic.node_params import ParamReader, load_node_params
from brov2_hybrid.onboard.desired_link import ARRAY_NAME, DATA_LENGTH
from brov2_hybrid.onboard.lua_script import load_onboard_settings
from brov2_hybrid.onboard.uplink import (MAV_PARAM_TYPE_REAL32, SCRIPT_MODES, ScriptReports, Uplink, omega_param_name,
                                         parse_reports_summary, script_mode)
from brov2_hybrid.params import load_controller_params

ONBOARD = load_onboard_settings()
BRIDGE = BridgeSettings(ParamReader(load_node_params("mavlink_bridge"), "mavlink_bridge"))
RATE_WINDOW = load_controller_params().rate_window
TICK_S = 0.02                     # control_law's 50 Hz


class FakeMav(object):
    """Records debug_float_array_send and param_set_send calls."""

    def __init__(self):
        self.arrays, self.param_sets = [], []

    def debug_float_array_send(self, time_usec, name, array_id, data):
        self.arrays.append((time_usec, name, array_id, list(data)))

    def param_set_send(self, target_system, target_component, param_id, value, param_type):
        self.param_sets.append((target_system, target_component, param_id, value, param_type))


class FakeLink(object):
    """MavlinkConnection.send's contract: fn(mav), True when it went out (False: no connection)."""

    def __init__(self):
        self.mav, self.up = FakeMav(), True

    def send(self, fn):
        if not self.up:
            return False
        fn(self.mav)
        return True


def make(max_rate_hz=None):
    link = FakeLink()
    uplink = Uplink(link.send, ONBOARD, RATE_WINDOW, max_rate_hz or BRIDGE.uplink_max_rate_hz,
                    BRIDGE.uplink_param_retry_s, BRIDGE.uplink_param_tolerance, (1, 1))
    return uplink, link.mav, link


def test_the_bridge_settings_default_to_topside_and_read_the_uplink_settings():
    assert BRIDGE.placement == "topside"
    assert BRIDGE.uplink_max_rate_hz >= 50.0      # at least control_law's rate: no tick is dropped


def test_one_tick_is_one_debug_float_array_with_the_desired_state():
    uplink, mav, _ = make()
    data = uplink.on_status(12.5, [0.1, -0.2, 1.5], [0.3, -0.4, 0.5], 3.0, 0.0)
    assert len(mav.arrays) == 1
    time_usec, name, array_id, sent = mav.arrays[0]
    assert (time_usec, name, array_id) == (12500000, ARRAY_NAME, ONBOARD.desired_array_id)
    assert sent == data and len(sent) == DATA_LENGTH
    np.testing.assert_allclose(sent[0:3], [0.1, -0.2, 1.5])
    np.testing.assert_allclose(sent[3:6], [0.0, 0.0, 0.0])          # one sample: no rate yet
    np.testing.assert_allclose(sent[6:9], [0.3, -0.4, 0.5])
    assert sent[9:] == [0.0] * (DATA_LENGTH - 9)


def test_the_rates_are_the_control_laws_estimate_of_a_ramp():
    uplink, mav, _ = make()
    yaw_rate, pitch_rate = 0.5, -0.2                               # [rad/s]
    for k in range(20):
        t = 100.0 + k * TICK_S
        uplink.on_status(t, [0.0, pitch_rate * k * TICK_S, 3.0 + yaw_rate * k * TICK_S], [0, 0, 0], 3.0, t)
    # the yaw ramp crosses +pi: the estimate uses wrapped differences, as control_law's
    np.testing.assert_allclose(mav.arrays[-1][3][3:6], [0.0, pitch_rate, yaw_rate], atol=1e-5)


def test_at_most_max_rate_hz_are_sent():
    uplink, mav, _ = make(max_rate_hz=25.0)
    for k in range(101):                       # 2 s of 50 Hz ticks
        uplink.on_status(k * TICK_S, [0.0, 0.0, 0.0], [0, 0, 0], 3.0, 0.0)
    assert len(mav.arrays) == 51               # every other tick
    stamps = np.diff([a[0] for a in mav.arrays]) * 1e-6
    assert stamps.min() >= 1.0 / 25.0 - 1e-9


def test_every_tick_goes_at_the_default_rate():
    uplink, mav, _ = make()
    for k in range(50):
        uplink.on_status(k * TICK_S, [0.0, 0.0, 0.0], [0, 0, 0], 3.0, 0.0)
    assert len(mav.arrays) == 50


def test_a_tick_without_a_finite_desired_state_sends_nothing():
    uplink, mav, _ = make()
    assert uplink.on_status(1.0, [math.nan] * 3, [0, 0, 0], 3.0, 0.0) is None
    assert uplink.on_status(1.1, [0.0, 0.0, 0.0], [math.nan, 0, 0], 3.0, 0.0) is None
    assert uplink.on_status(math.nan, [0.0, 0.0, 0.0], [0, 0, 0], 3.0, 0.0) is None
    assert mav.arrays == []


def test_linear_commands_are_clipped_to_the_unit_range():
    uplink, mav, _ = make()
    uplink.on_status(1.0, [0.0, 0.0, 0.0], [1.5, -2.0, 0.2], 3.0, 0.0)
    np.testing.assert_allclose(mav.arrays[0][3][6:9], [1.0, -1.0, 0.2])


def test_no_link_sends_nothing_and_the_next_tick_goes():
    uplink, mav, link = make()
    link.up = False
    assert uplink.on_status(1.0, [0.0, 0.0, 0.0], [0, 0, 0], 3.0, 0.0) is None
    link.up = True
    assert uplink.on_status(1.0 + TICK_S, [0.0, 0.0, 0.0], [0, 0, 0], 3.0, 0.0) is not None
    assert len(mav.arrays) == 1


def test_omega_d_goes_down_as_param_set_once_per_change_until_confirmed():
    uplink, mav, _ = make()
    name = omega_param_name(ONBOARD).encode("ascii")
    assert name == b"HYB_OMEGA_D"
    uplink.on_status(1.0, [0.0, 0.0, 0.0], [0, 0, 0], 3.0, 10.0)
    assert mav.param_sets == [(1, 1, name, 3.0, MAV_PARAM_TYPE_REAL32)]
    uplink.on_status(1.02, [0.0, 0.0, 0.0], [0, 0, 0], 3.0, 10.01)           # same omega_d: nothing new
    assert not uplink.turn(10.0 + 0.5 * BRIDGE.uplink_param_retry_s)           # not yet due
    assert len(mav.param_sets) == 1
    assert uplink.turn(10.0 + 1.01 * BRIDGE.uplink_param_retry_s)              # unconfirmed: re-sent
    assert len(mav.param_sets) == 2
    uplink.on_param_value("HYB_OMEGA_D", np.float32(3.0))                       # the vehicle's echo
    assert uplink.confirmed()
    assert not uplink.turn(100.0)
    uplink.on_status(1.04, [0.0, 0.0, 0.0], [0, 0, 0], 8.0, 100.0)             # the knob moved
    assert mav.param_sets[-1] == (1, 1, name, 8.0, MAV_PARAM_TYPE_REAL32) and len(mav.param_sets) == 3
    assert not uplink.confirmed()
    uplink.on_param_value("HYB_ENABLE", 8.0)                                    # another parameter: no echo
    assert not uplink.confirmed()
    uplink.on_param_value("HYB_OMEGA_D", 3.0)                                   # the old value: not confirmed
    assert uplink.turn(100.0 + 1.01 * BRIDGE.uplink_param_retry_s)
    uplink.on_param_value("HYB_OMEGA_D", np.float32(8.0))
    assert uplink.confirmed() and not uplink.turn(1000.0)


def test_a_bad_omega_d_is_never_set():
    uplink, mav, _ = make()
    for omega in (math.nan, 0.0, -1.0, math.inf):
        uplink.on_status(1.0, [0.0, 0.0, 0.0], [0, 0, 0], omega, 0.0)
    assert mav.param_sets == [] and uplink.confirmed()
    assert not uplink.turn(100.0)


@pytest.mark.parametrize("bad", [0.0, math.nan])
def test_a_bad_rate_setting_is_refused(bad):
    with pytest.raises(ValueError, match="max_rate_hz"):
        Uplink(FakeLink().send, ONBOARD, RATE_WINDOW, bad, 1.0, 1e-4)


def test_the_scripts_reports_are_summarized():
    reports = ScriptReports()
    assert reports.summary() is None
    for hz, dt_max, dt_min in ((90.0, 20.0, 7.0), (80.0, 70.0, 9.0), (88.0, 15.0, 8.0)):
        reports.add(b"HYB_HZ\x00\x00\x00\x00", hz)
        reports.add("HYB_DTMAX", dt_max)
        reports.add("HYB_DTMIN", dt_min)
        reports.add("HYB_MODE", 1.0)
    assert reports.count() == 3
    assert reports.summary() == ("rate 88 Hz median (80 .. 90) over 3 reports, loop period 7 .. 70 ms "
                                 "(median of the longest per report 20 ms)")
    assert reports.summary(since=2).startswith("rate 88 Hz median (88 .. 88) over 1 reports")
    # read back from the bridge's log line (brov2-analyze onboard-pair does)
    line = "[INFO] [1.2, 3.4]: mavlink_bridge: the on-board script reports %s since the start" % reports.summary()
    assert parse_reports_summary(line) == {"rate_hz_median": 88, "rate_hz_min": 80, "rate_hz_max": 90, "reports": 3,
                                           "period_ms_min": 7, "period_ms_max": 70, "longest_ms_median": 20}
    only_rate = ScriptReports()
    only_rate.add("HYB_HZ", 99.0)
    assert parse_reports_summary(only_rate.summary())["period_ms_max"] is None
    assert parse_reports_summary("mavlink_bridge: no reports") is None


def test_the_scripts_mode_texts_are_read_as_the_template_writes_them():
    import re
    from brov2_hybrid.onboard import lua_script
    with open(lua_script.TEMPLATE) as handle:
        modes = re.search(r"M\.MODES = \{([^}]*)\}", handle.read()).group(1)
    assert tuple(m.split("=")[0].strip() for m in modes.split(",")) == SCRIPT_MODES
    assert script_mode("brov2_hybrid: ACTIVE") == "ACTIVE"
    assert script_mode("brov2_hybrid: HOLD: desired attitude stale; holdin") == "HOLD"   # STATUSTEXT's 50 chars
    assert script_mode("g, linear commands zero") is None                               # its second chunk
    assert script_mode("brov2_hybrid: loaded for bluerov2_heavy, 100 Hz, omega_d 3 rad/s") is None
