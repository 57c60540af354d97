"""The topside's watch over the on-board script on real ArduSub 4.5 SITL (docs/onboard.md "Safety on board"):
ArduSub holds a stopped script's last motor outputs until a reboot, and the watch that ``mavlink_bridge``
runs (brov2_hybrid.onboard.watchdog) reboots the autopilot. The vehicle, the script and the stream are
those of test_real_ardusub_onboard.py.

Without a build this test is skipped with one line saying so; with ``BROV2_REQUIRE_ARDUSUB=1``
(``.ci/run``) a missing build is a failure.
"""
import math
import time

from pymavlink import mavutil

from brov2_hybrid.link.bridge_settings import BridgeSettings
from brov2_hybrid.node_logic.node_params import ParamReader, load_node_params
from brov2_hybrid.onboard.desired_link import send_desired
from brov2_hybrid.onboard.watchdog import ScriptWatchdog
from test_real_ardusub_onboard import (ONBOARD, SETTINGS, STREAM_PERIOD_S, STREAM_WALL_FACTOR, armed, current_yaw,
                                       onboard_flight)
def test_a_script_arduSub_stopped_while_driving_gets_the_motors_released_by_the_topsides_reboot(ardusub_binary):
    """ArduSub 4.5 holds a stopped script's last motor outputs until a reboot (docs/onboard.md), so the
    topside's watch (brov2_hybrid.onboard.watchdog, as mavlink_bridge runs it) reboots the autopilot. The
    script is stopped as ArduSub stops one (MAV_CMD_SCRIPTING, SCRIPTING_CMD_STOP) while it drives the
    motors: until the watch acts they stay at the script's last output, what a vehicle without the watch
    keeps; then the thrusters (the physics' PWMs) are at neutral within the stated time: the bridge's
    ``script_silent_s`` after the script's last report, plus the reboot."""
    bridge = BridgeSettings(ParamReader(load_node_params("mavlink_bridge"), "mavlink_bridge"))
    watch = ScriptWatchdog(ONBOARD.script_name, bridge.script_silent_s, bridge.script_reboot_retry_s,
                           bridge.script_clock_gap_s)
    f = onboard_flight(ardusub_binary, SETTINGS, settled=False)
    plant = f.sitl.physics.plant
    send = lambda fn: fn(f.link.mav) or True        # noqa: E731 - the bridge's MavlinkConnection.send
    try:
        armed(f)
        yaw = current_yaw(f)
        desired = ([0.0, 0.0, yaw], [0.0, 0.0, 0.0], [0.3, 0.0, 0.0])      # surging: the motors never settle
        stopped_at = reboot_at = None
        last_report, pwms = None, []
        wall_end = time.monotonic() + STREAM_WALL_FACTOR * 12.0 + 30.0
        next_send = -math.inf
        while reboot_at is None:
            assert time.monotonic() < wall_end, "no reboot asked (stopped at %s, mode %s, last report %s): %s" % (
                stopped_at, watch.mode, last_report, f.statustext[-5:])
            now = plant.t_s
            if now >= next_send:
                send_desired(f.link.mav, ONBOARD, int(now * 1e6), *desired)
                next_send = now + STREAM_PERIOD_S
            if stopped_at is None and now > 4.0 and watch.mode == "ACTIVE":
                f.link.mav.command_long_send(f.link.target_system, f.link.target_component,
                                             mavutil.mavlink.MAV_CMD_SCRIPTING, 0,
                                             mavutil.mavlink.SCRIPTING_CMD_STOP, 0, 0, 0, 0, 0, 0)
                stopped_at = now
                assert list(plant.motor_pwm_us) != [1500.0] * 8, "the script should be driving the motors"
            pwms.append((now, list(plant.motor_pwm_us)))
            msg = f.recv(None, 0.005)
            if msg is not None:
                watch.on_message(msg)
                if msg.get_type() == "NAMED_VALUE_FLOAT" and msg.name == "HYB_HZ":
                    last_report = msg.time_boot_ms / 1000.0
            said = watch.turn(time.monotonic(), send, (f.link.target_system, f.link.target_component), f.armed)
            if said is not None:
                assert stopped_at is not None, "the watch acted on a running script: %s" % said
                assert "rebooted" in said and "forced: armed" in said, said
                reboot_at = plant.t_s
        # ArduSub reboots and its link closes: the physics' PWMs tell the rest (the rebooted ArduSub waits for
        # a ground station before it runs on, so its clock stops soon after)
        wall_end = time.monotonic() + 20.0
        while time.monotonic() < wall_end and not (pwms[-1][1] == [1500.0] * 8 and pwms[-1][0] > reboot_at):
            time.sleep(0.005)
            pwms.append((plant.t_s, list(plant.motor_pwm_us)))
        # until the watch acted, the motors kept the stopped script's last output
        before = [p for t, p in pwms if stopped_at + 0.1 <= t < reboot_at]
        assert before and all(p == before[0] for p in before) and before[0] != [1500.0] * 8
        released = [t for t, p in pwms if t >= reboot_at and p == [1500.0] * 8]
        assert released, "the motors were not released after the reboot"
        assert all(p == [1500.0] * 8 for t, p in pwms if t >= released[0])
        bound_s = bridge.script_silent_s + ONBOARD.report_period_s + 0.5     # + the reboot (0.1 s measured)
        print("onboard SITL: script stopped at %.2f s (last report %.2f s), reboot asked at %.2f s, motors at neutral "
              "%.2f s after the stop (bound %.2f s)" % (stopped_at, last_report, reboot_at, released[0] - stopped_at,
                                                        bound_s))
        assert released[0] - stopped_at <= bound_s
    finally:
        f.close()
