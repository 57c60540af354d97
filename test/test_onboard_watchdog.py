"""The topside's watch over the on-board script (brov2_hybrid.onboard.watchdog): a script ArduSub stopped
while it drove the motors gets the autopilot rebooted, since ArduSub 4.5 holds a script's last motor
outputs until then (docs/onboard.md). Real ArduSub: test_real_ardusub_onboard.py."""
from types import SimpleNamespace

import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link.bridge_settings import BridgeSettings
from brov2_hybrid.node_logic.node_params import ParamReader, load_node_params
from brov2_hybrid.onboard.lua_script import load_onboard_settings
from brov2_hybrid.onboard.watchdog import (FORCE_REBOOT_MAGIC, MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, ScriptWatchdog,
                                           send_reboot)

BRIDGE = BridgeSettings(ParamReader(load_node_params("mavlink_bridge"), "mavlink_bridge"))
ONBOARD = load_onboard_settings()
SILENT = BRIDGE.script_silent_s
RETRY = BRIDGE.script_reboot_retry_s


def make():
    return ScriptWatchdog(ONBOARD.script_name, SILENT, RETRY, BRIDGE.script_clock_gap_s)


def msg(kind, **fields):
    return SimpleNamespace(get_type=lambda: kind, **fields)


def flown(watch, until_s, reports_until_s, mode="ACTIVE", from_s=0.0):
    """The vehicle's attitude every 20 ms from ``from_s`` up to ``until_s``, the script's report every report
    period up to ``reports_until_s``, its mode text first (a sign of life too; None: none)."""
    period_s = ONBOARD.report_period_s
    if mode is not None:
        watch.on_message(msg("STATUSTEXT", severity=6, text="brov2_hybrid: %s" % mode))
    t, next_report = from_s, from_s
    while t <= until_s + 1e-9:
        watch.on_message(msg("ATTITUDE_QUATERNION", time_boot_ms=int(round(t * 1000))))
        if t >= next_report - 1e-9 and t <= reports_until_s + 1e-9:
            watch.on_message(msg("NAMED_VALUE_FLOAT", time_boot_ms=int(round(t * 1000)), name=b"HYB_HZ\x00\x00\x00\x00",
                                 value=100.0))
            next_report += period_s
        t += 0.02


def test_the_bridge_settings_give_a_silence_of_several_reports():
    # a report or two lost on the tether must not reboot a vehicle: the bound is more than two periods
    assert SILENT > 2 * ONBOARD.report_period_s
    with pytest.raises(Brov2Error):
        ScriptWatchdog(ONBOARD.script_name, 0.0, RETRY, 1.0)


def test_a_script_that_reports_is_left_alone():
    watch = make()
    flown(watch, 30.0, 30.0)
    assert watch.check(0.0) is None and watch.stopped is None


def test_a_silent_script_that_drove_the_motors_gets_a_reboot_asked_again_until_the_vehicle_reboots():
    watch = make()
    flown(watch, 10.0 + SILENT - 0.1, 10.0)          # silent, but not yet for the bound
    assert watch.check(0.0) is None
    flown(watch, 10.0 + SILENT + 0.1, 10.0, mode=None, from_s=10.0 + SILENT - 0.1)
    reason, reboot = watch.check(100.0)
    assert reboot and "no report" in reason
    assert watch.check(100.0 + 0.5 * RETRY) is None   # not again at once
    assert watch.check(100.0 + 1.01 * RETRY)[1]       # again: the request or its answer may be lost
    assert watch.reboots_asked == 2
    # the vehicle comes back: its clock starts again, and the watch forgets the old boot
    assert watch.on_message(msg("ATTITUDE", time_boot_ms=500))
    assert watch.reboots_seen == 1 and watch.stopped is None and watch.mode is None
    assert watch.check(200.0) is None


@pytest.mark.parametrize("mode", ["RELEASED", "LOST_NEUTRAL", "NAN_NEUTRAL", "FAULT_NEUTRAL"])
def test_a_script_stopped_with_the_motors_at_neutral_is_reported_once_without_a_reboot(mode):
    watch = make()
    flown(watch, 20.0, 10.0, mode=mode)
    reason, reboot = watch.check(0.0)
    assert not reboot and "no report" in reason
    assert watch.check(100.0) is None and watch.reboots_asked == 0


@pytest.mark.parametrize("mode", ["ACTIVE", "HOLD", "PILOT"])
def test_every_mode_that_drives_the_motors_gets_the_reboot(mode):
    watch = make()
    flown(watch, 20.0, 10.0, mode=mode)
    assert watch.check(0.0)[1]


def test_arduSubs_word_that_it_stopped_this_script_acts_at_once_and_another_scripts_error_does_not():
    watch = make()
    flown(watch, 5.0, 5.0)
    watch.on_text(2, "Lua: ./scripts/other.lua:12: attempt to index a nil value")
    assert watch.check(0.0) is None
    watch.on_text(6, "Lua: %s exceeded time limit" % ONBOARD.script_name)      # INFO: not ArduSub's stop
    assert watch.check(0.0) is None
    watch.on_text(2, "Lua: %s exceeded time limit" % ONBOARD.script_name)
    reason, reboot = watch.check(0.0)
    assert reboot and "exceeded time limit" in reason


def test_no_report_ever_is_not_a_stop():
    # a vehicle without the script (or before it loads) is the mission's check, not a reboot
    watch = make()
    watch.on_text(6, "brov2_hybrid: ACTIVE")
    for k in range(1000):
        watch.on_vehicle_time(0.02 * k)
    assert watch.check(0.0) is None


class FakeMav(object):
    def __init__(self):
        self.sent = []

    def command_long_send(self, *args):
        self.sent.append(args)


def test_the_reboot_is_forced_only_on_an_armed_vehicle():
    mav = FakeMav()
    send_reboot(mav, (1, 1), armed=False)
    send_reboot(mav, (1, 1), armed=True)
    (plain, forced) = mav.sent
    assert plain[:5] == (1, 1, MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, 0, 1)
    assert plain[9] == 0 and forced[9] == FORCE_REBOOT_MAGIC
    # float32 on the wire (COMMAND_LONG param6) must carry the magic exactly
    import numpy as np
    assert int(np.float32(FORCE_REBOOT_MAGIC)) == FORCE_REBOOT_MAGIC


def test_a_link_drop_out_is_not_a_silent_script_but_silence_after_it_is():
    # the tether drops 10 s while the script drives: its reports of that while were lost with the attitude
    watch = make()
    flown(watch, 10.0, 10.0)
    flown(watch, 20.0 + 0.5 * SILENT, 20.0, mode=None, from_s=20.0)     # back, and the script reports again
    assert watch.check(0.0) is None
    # back again after a second drop-out, but no report comes: silent for the bound after the link returned
    flown(watch, 40.0 + SILENT - 0.1, 0.0, mode=None, from_s=40.0)
    assert watch.check(0.0) is None
    flown(watch, 40.0 + SILENT + 0.2, 0.0, mode=None, from_s=40.0 + SILENT - 0.08)
    assert watch.check(0.0)[1]


def test_an_error_the_script_catches_is_neutral_and_alive_not_a_stop():
    # the script's error path writes neutral and says the error at each retry, without its rate reports
    watch = make()
    flown(watch, 10.0, 10.0)
    t = 10.0
    while t < 10.0 + 4 * SILENT:
        watch.on_vehicle_time(t)
        if abs(t - round(t)) < 0.01:
            watch.on_text(3, "brov2_hybrid: [string 'brov2_hybrid.lua']:509: HYB_OMEGA_D -1: expected a number > 0")
        t += 0.02
    assert watch.check(0.0) is None and watch.mode == "FAULT_NEUTRAL"
    # then the script stops for good, at neutral: said, never rebooted
    flown(watch, 60.0, 0.0, mode=None, from_s=t)
    reason, reboot = watch.check(0.0)
    assert not reboot
