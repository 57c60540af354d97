#!/usr/bin/env python3
"""rostest: the joystick path (input:=joy) flies the simulator, takeover and hand-back included.

The test plays a pilot with synthetic sensor_msgs/Joy messages (20 Hz, mapped with
params/joystick.yaml) and checks, on /brov2/status and /brov2/pilot_takeover:
1. deadman held + yaw stick below the takeover threshold: the desired yaw moves at the
   rate params/joystick.yaml gives for that stick (shape() * max_rate) and the vehicle follows;
2. roll stick beyond the threshold: status shows roll in pilot hands, the roll command is
   the pilot's open-loop u (not the PD) and the vehicle rolls;
3. stick released: hand-back, the desired roll is the attitude measured at the hand-back
   and the vehicle settles back to it;
4. deadman released with the surge stick deflected: desired attitude held, linear zero;
5. the tick log marks the takeover ticks in its pilot_axes column (1 = roll);
6. buttons: yaw closed-loop toggle off and on (status closed_loop_enabled), Start disarms.
"""
import math
import os
import sys
import threading
import time
import unittest

import numpy as np
import rospy
import rostest
from sensor_msgs.msg import Joy

import rostest_common as rc
from brov2_hybrid.tick_log.logfile import read_log
from brov2_hybrid.msg import PilotTakeover
from brov2_hybrid.pilot.settings import load_joystick_settings
from brov2_hybrid.pilot.stick_shaping import shape
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

S = load_joystick_settings()
YAW_STICK = 0.6
ROLL_STICK = 0.95


class JoyPilot(object):
    """Publishes the current stick/button state at 20 Hz (as js_reader / joy_node with autorepeat)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.sticks, self.held = {}, set()
        self.pub = rospy.Publisher("/joy", Joy, queue_size=10)
        threading.Thread(target=self._run, daemon=True).start()

    def set(self, held=(), **sticks):
        with self._lock:
            self.sticks, self.held = dict(sticks), set(held)

    def _run(self):
        while not rospy.is_shutdown():
            msg = Joy()
            msg.header.stamp = rospy.Time.now()
            msg.axes = [0.0] * 8
            msg.buttons = [0] * 11
            with self._lock:
                for name, value in self.sticks.items():
                    m = S.axes[name]
                    msg.axes[m.index] = m.sign * value
                for name in self.held:
                    msg.buttons[S.buttons[name]] = 1
            self.pub.publish(msg)
            time.sleep(0.05)


def last_status(status):
    st = status.last()
    assert st is not None, "no /brov2/status"
    return st


def after_ros_s(status, t_s):
    """Wait until a status stamped at or after t_s [s, ROS time] arrived.

    Response times are on the vehicle's clock (ROS time from the simulator), which falls
    behind the wall clock when the simulator is short of CPU; a wall-clock sleep would
    give the vehicle less time than the test means to.
    """
    rc.wait_for(lambda: last_status(status).header.stamp.to_sec() >= t_s, 30.0, "ROS time %.2f s" % t_s)


class JoyFlight(unittest.TestCase):
    def test_joystick_flight(self):
        status = rc.StatusRecorder()
        takeover = rc.Latest("/brov2/pilot_takeover", PilotTakeover)
        topics = rc.autopilot_topics()
        pilot = JoyPilot()
        pilot.set(held=["deadman"])
        rc.wait_engaged(topics)
        rc.wait_for(lambda: status.last() is not None and status.last().mode == "ACTIVE", 20.0,
                    "control_law ACTIVE on the joystick input")
        time.sleep(2.0)

        # 1. yaw rate command
        st0 = last_status(status)
        yaw_d0, yaw0 = st0.desired_rad[2], st0.attitude_rad[2]
        t0 = st0.header.stamp.to_sec()
        # joy_input integrates the rate on ROS (vehicle) time, which lags the wall clock
        # when the simulator is short of CPU: time the stick on ROS time
        pilot.set(held=["deadman"], yaw=YAW_STICK)
        t_on = rospy.get_time()
        time.sleep(3.0)
        pilot.set(held=["deadman"])
        t_off = rospy.get_time()
        stick_s = t_off - t_on
        time.sleep(0.3)
        st1 = last_status(status)
        rows = [r for r in status.snapshot() if r.header.stamp.to_sec() > t0]
        d_yaw = np.unwrap([yaw_d0] + [r.desired_rad[2] for r in rows])
        moved_deg = math.degrees(d_yaw.max() - d_yaw[0])
        rate_deg_s = math.degrees(shape(YAW_STICK, S.dead_zone, S.expo) * S.max_rate_rad_s[2])
        rospy.loginfo("joy: yaw stick %.2f for %.2f s (ROS time): desired yaw moved %.1f deg (%.1f deg/s expected)",
                      YAW_STICK, stick_s, moved_deg, rate_deg_s)
        self.assertAlmostEqual(moved_deg, stick_s * rate_deg_s, delta=0.6 * rate_deg_s)   # +-0.6 s of stick time
        after_ros_s(status, t_off + 2.3)   # 2 s after the 0.3 s above, on the vehicle's clock
        st2 = last_status(status)
        yaw_err = math.degrees(math.remainder(st2.attitude_rad[2] - st2.desired_rad[2], 2 * math.pi))
        turned = math.degrees(math.remainder(st2.attitude_rad[2] - yaw0, 2 * math.pi))
        rospy.loginfo("joy: vehicle turned %.1f deg, %.1f deg from the desired yaw", turned, yaw_err)
        self.assertGreater(turned, 0.7 * moved_deg)
        self.assertLess(abs(yaw_err), 5.0)
        self.assertFalse(any(st1.pilot_axes), "yaw below the threshold must stay closed loop")

        # 2. roll takeover
        roll_before = last_status(status).attitude_rad[0]
        pilot.set(held=["deadman"], roll=ROLL_STICK)
        rc.wait_for(lambda: list(last_status(status).pilot_axes) == [True, False, False], 10.0,
                    "status to show roll in pilot hands")
        u_expected = shape(ROLL_STICK, S.dead_zone, S.expo)
        st = last_status(status)
        # tau = u_pilot * tau_max (thruster_allocation turns it back into u = u_pilot)
        self.assertAlmostEqual(st.tau[3] / load_vehicle().tau_max[3], u_expected, places=6)
        # /brov2/pilot_takeover reaches this test on its own connection, not ordered with the
        # status (which control_law made from an earlier copy of it): wait for the new one
        rc.wait_for(lambda: takeover.get() is not None and takeover.get().pilot_axes[0], 10.0,
                    "/brov2/pilot_takeover to show roll in pilot hands")
        self.assertAlmostEqual(takeover.get().u_pilot[0], u_expected, places=6)
        rc.wait_for(lambda: last_status(status).attitude_rad[0] - roll_before > math.radians(15), 10.0,
                    "the vehicle to roll 15 deg under the pilot's open-loop command")

        # 3. hand-back: the measured roll is captured and held
        pilot.set(held=["deadman"])
        t_release = last_status(status).header.stamp.to_sec()   # the release is after this tick
        rc.wait_for(lambda: not any(last_status(status).pilot_axes), 10.0, "status to show the hand-back")
        back = last_status(status)
        # status takes pilot_axes from /brov2/pilot_takeover and the desired from
        # /brov2/desired_state (two connections): the first status without the takeover may
        # still carry the last desired roll of the takeover (it tracks the rolling vehicle), so
        # read the captured roll from a status 0.5 s (ROS time) after the hand-back
        t_back = back.header.stamp.to_sec()
        after_ros_s(status, t_back + 0.5)
        captured = last_status(status).desired_rad[0]
        # joy_input captures the roll it measured when it saw the stick released, somewhere
        # between the release and the first status showing the hand-back. The vehicle still
        # rolls fast then (~230 deg/s, 4.5 deg per 20 ms tick), so comparing with that one
        # status's roll measured the hand-back latency (4.5-4.7 deg of a 5 deg bound on a
        # loaded machine, 14 deg under heavier load); instead the captured roll must be one the
        # vehicle had in that interval (from 0.2 s earlier, for the age of the attitude
        # joy_input holds), to 1 deg -- and, below, 10 deg beyond the roll before the takeover.
        rolls = [r.attitude_rad[0] for r in status.snapshot() if t_release - 0.2 <= r.header.stamp.to_sec() <= t_back]
        rospy.loginfo("joy: handed back at roll %.1f deg, desired roll captured %.1f deg (roll %.1f..%.1f deg "
                      "between stick release and hand-back)", math.degrees(back.attitude_rad[0]),
                      math.degrees(captured), math.degrees(min(rolls)), math.degrees(max(rolls)))
        self.assertGreaterEqual(captured, min(rolls) - math.radians(1.0))
        self.assertLessEqual(captured, max(rolls) + math.radians(1.0))
        self.assertGreater(captured - roll_before, math.radians(10))
        after_ros_s(status, t_back + 3.0)
        st = last_status(status)
        rospy.loginfo("joy: 3 s after hand-back: roll %.1f deg (captured %.1f deg)",
                      math.degrees(st.attitude_rad[0]), math.degrees(captured))
        self.assertAlmostEqual(st.desired_rad[0], captured, places=9)
        self.assertLess(abs(st.attitude_rad[0] - captured), math.radians(3.0))

        # 4. deadman released: hold, linear zero
        pilot.set(held=["deadman"], surge=0.8)
        rc.wait_for(lambda: last_status(status).linear_cmd[0] > 0.5, 10.0, "surge from the stick")
        pilot.set(held=[], surge=0.8, yaw=YAW_STICK)
        rc.wait_for(lambda: last_status(status).linear_cmd[0] == 0.0, 10.0, "linear zero with the deadman released")
        held = np.array(last_status(status).desired_rad)
        time.sleep(1.5)
        st = last_status(status)
        self.assertEqual(list(st.linear_cmd), [0.0, 0.0, 0.0])
        self.assertTrue(np.allclose(st.desired_rad, held, atol=1e-12), "desired attitude moved without the deadman")
        self.assertEqual(st.mode, "ACTIVE")

        # 5. the log
        log = read_log(rc.only_file(os.path.join(rospy.get_param("~log_dir"), "*.csv")))
        n_pilot = int(np.sum(log["pilot_axes"] == 1))
        rospy.loginfo("joy: %d of %d log rows with roll in pilot hands", n_pilot, len(log["time_s"]))
        self.assertGreater(n_pilot, 0)
        self.assertEqual(set(np.unique(log["pilot_axes"]).tolist()), {0.0, 1.0})

        # 6. buttons (rising edges; the enable toggles need the deadman, arm/disarm does not)
        def press(button, held=("deadman",)):
            pilot.set(held=list(held) + [button])
            time.sleep(0.3)
            pilot.set(held=list(held))
            time.sleep(0.3)
        press("yaw_enable_toggle")
        rc.wait_for(lambda: list(last_status(status).closed_loop_enabled) == [True, True, False], 10.0,
                    "the yaw closed loop switched off by its button")
        press("yaw_enable_toggle")
        rc.wait_for(lambda: list(last_status(status).closed_loop_enabled) == [True, True, True], 10.0,
                    "the yaw closed loop switched back on")
        press("arm_toggle", held=())
        rc.wait_for(lambda: topics["state"].get() is not None and not topics["state"].get().armed, 10.0,
                    "the vehicle disarmed by the Start button")


if __name__ == "__main__":
    rospy.init_node("rostest_joy")
    rostest.rosrun("brov2_hybrid", "joy", JoyFlight, sys.argv)
