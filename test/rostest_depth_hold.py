#!/usr/bin/env python3
"""rostest: the depth hold through ROS, and what the control law does when the depth is lost.

control_law (depth_hold:=true) reads the depth on /rostest/depth_m, which this test relays from
/brov2/depth_m (the bridge's depth of the simulator). While relayed, the status must say HOLDING
and the depth stay near the setpoint; once the relay stops, within depth_timeout_s plus a little
the status must say NO_DEPTH_OPEN_LOOP with the setpoint NaN and control_law must warn on /rosout
that heave is open loop; when the relay resumes the hold engages again at the depth of that moment.
"""
import math
import sys
import threading
import unittest

import numpy as np
import rospy
import rostest
from rosgraph_msgs.msg import Log
from std_msgs.msg import Float64

import rostest_common as rc
from brov2_hybrid.control import live_settings
from brov2_hybrid.node_logic.node_params import load_node_params
from brov2_hybrid.params import load_controller_params

HOLD_ERROR_M = 0.1


class Relay(object):
    """/brov2/depth_m -> /rostest/depth_m while ``on``; keeps the newest depth."""

    def __init__(self):
        self.on = True
        self.depth_m = math.nan
        self.relayed_at_s = math.nan       # ROS time [s] of the last depth passed on
        self._lock = threading.Lock()
        self.pub = rospy.Publisher("/rostest/depth_m", Float64, queue_size=10)
        rospy.Subscriber("/brov2/depth_m", Float64, self._on_depth, queue_size=10)

    def _on_depth(self, msg):
        with self._lock:
            self.depth_m = msg.data
            if self.on:
                self.pub.publish(msg)
                self.relayed_at_s = rospy.get_rostime().to_sec()


class DepthHold(unittest.TestCase):
    def test_holds_then_goes_open_loop_loudly_then_holds_again(self):
        status = rc.StatusRecorder()
        rosout = rc.RosoutWatcher()
        relay = Relay()
        topics = rc.autopilot_topics()
        rc.wait_engaged(topics)
        rc.wait_for(lambda: status.last() is not None and status.last().depth_hold == "HOLDING", 30.0,
                    "the depth hold to engage")
        t_engaged = status.last().header.stamp.to_sec()
        rc.wait_for(lambda: status.last().header.stamp.to_sec() > t_engaged + 8.0, 60.0, "8 s of holding")
        held = [s for s in status.snapshot() if s.depth_hold == "HOLDING" and s.header.stamp.to_sec() > t_engaged + 3.0]
        setpoint = np.array([s.depth_setpoint_m for s in held])
        self.assertTrue(np.all(np.isfinite(setpoint)))
        self.assertLess(abs(relay.depth_m - setpoint[-1]), HOLD_ERROR_M,
                        "depth %.3f m, setpoint %.3f m" % (relay.depth_m, setpoint[-1]))

        relay.on = False                                           # the depth sensor is lost
        timeout_s = load_controller_params().depth_timeout_s
        control_period_s = 1.0 / float(load_node_params("control_law", rospy.get_param("/control_law", {}),
                                                        other_keys=live_settings.NAMES + ("groups",))["rate_hz"])
        rc.wait_for(lambda: status.last().depth_hold == "NO_DEPTH_OPEN_LOOP", timeout_s + 5.0,
                    "the hold to give up without depth")
        last = status.last()
        self.assertTrue(math.isnan(last.depth_setpoint_m))
        # It held on for the timeout after the last depth it got (the relay's last message, not the
        # moment the relay stopped: the depth comes at 10 Hz), less one control tick's stamping (and the
        # nanoseconds of the stamps' rounding: a give-up exactly one tick early read 0.97999999 < 0.98).
        self.assertGreaterEqual(last.header.stamp.to_sec() - relay.relayed_at_s, timeout_s - control_period_s - 1e-6)
        rc.wait_for(lambda: rosout.find(Log.WARN, "control_law", "OPEN LOOP"), 5.0, "control_law's warning")

        relay.on = True                                            # it comes back
        rc.wait_for(lambda: status.last().depth_hold == "HOLDING", 5.0, "the hold to engage again")
        rc.wait_for(lambda: rosout.find(Log.INFO, "control_law", "depth hold HOLDING") and
                    len(rosout.find(Log.INFO, "control_law", "depth hold HOLDING")) >= 2, 5.0,
                    "control_law's log of the engagement")
        self.assertLess(abs(status.last().depth_setpoint_m - relay.depth_m), HOLD_ERROR_M)


if __name__ == "__main__":
    rospy.init_node("rostest_depth_hold")
    rostest.rosrun("brov2_hybrid", "depth_hold", DepthHold, sys.argv)
