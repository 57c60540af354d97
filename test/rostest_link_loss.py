#!/usr/bin/env python3
"""rostest 4: link loss. Stopping the simulator gives a neutral command and a warning;
restarting it recovers.

The test runs the simulator itself (on the port the launch file's bridge uses) so
that it can stop and restart it. Checks: after the stop, control_law reports
NO_ATTITUDE_NEUTRAL, the override on channels 1-6 is 1500, and control_law and the
bridge warn on /rosout; after the restart the bridge reconnects, the control law is
ACTIVE again, and once re-armed the vehicle's motor outputs follow the override.
"""
import sys
import time
import unittest

import rospy
import rostest
from mavros_msgs.srv import CommandBool, SetMode
from rosgraph_msgs.msg import Log

import rostest_common as rc


class LinkLoss(unittest.TestCase):
    def test_link_loss_and_recovery(self):
        port = rospy.get_param("~port")
        sim_log = rospy.get_param("~sim_log", "/dev/null")
        status = rc.StatusRecorder()
        topics = rc.autopilot_topics()
        rosout = rc.RosoutWatcher()
        sim = rc.start_simulator(port, log_path=sim_log)
        try:
            rc.wait_engaged(topics)
            rc.wait_for(lambda: status.last() is not None and status.last().mode == "ACTIVE", 20.0, "ACTIVE control")
            time.sleep(1.0)
            rc.stop_process(sim)
            t_stop = time.monotonic()
            rc.wait_for(lambda: status.last().mode == "NO_ATTITUDE_NEUTRAL", 5.0, "NO_ATTITUDE_NEUTRAL after the stop")
            rospy.loginfo("link loss: neutral %.2f s after the simulator stopped", time.monotonic() - t_stop)
            self.assertEqual(list(status.last().tau), [0.0] * 6)
            # the override comes from thruster_allocation, a hop behind the status on another
            # topic: wait for it rather than for a fixed time
            try:
                rc.wait_for(lambda: list(topics["override"].get().channels[:6]) == [1500] * 6, 5.0,
                            "a neutral override after the stop")
            except AssertionError as exc:
                self.fail("%s: last override %s" % (exc, list(topics["override"].get().channels[:6])))
            rc.wait_for(lambda: rosout.find(Log.WARN, "control_law", "NO_ATTITUDE_NEUTRAL"), 5.0,
                        "a control_law warning on /rosout")
            rc.wait_for(lambda: rosout.find(Log.WARN, "mavlink_bridge", "lost")
                        or rosout.find(Log.WARN, "mavlink_bridge", "closing link"), 10.0,
                        "a mavlink_bridge warning on /rosout")

            # /mavros/state is latched and still said connected: see the loss first, so that
            # "connected" below is the new link's
            rc.wait_for(lambda: not topics["state"].get().connected, 10.0, "/mavros/state to report the link lost")

            sim = rc.start_simulator(port, log_path=sim_log)
            rc.wait_for(lambda: topics["state"].get() is not None and topics["state"].get().connected, 30.0,
                        "the bridge to reconnect")
            rc.wait_for(lambda: status.last().mode == "ACTIVE", 20.0, "ACTIVE control after the restart")
            rospy.wait_for_service("/mavros/set_mode", 5.0)
            rospy.ServiceProxy("/mavros/set_mode", SetMode)(0, "MANUAL")
            rc_out_before = topics["rc_out"].count
            reply = rospy.ServiceProxy("/mavros/cmd/arming", CommandBool)(True)
            self.assertTrue(reply.success, "re-arming after the restart failed: result %d" % reply.result)
            # a motor output sent after the re-arming (the newest one before the stop was not neutral)
            rc.wait_for(lambda: topics["rc_out"].count > rc_out_before
                        and any(c != 1500 for c in topics["rc_out"].get().channels[:8]), 10.0,
                        "the motors to follow the override after the restart")
        finally:
            rc.stop_process(sim)


if __name__ == "__main__":
    rospy.init_node("rostest_link_loss")
    rostest.rosrun("brov2_hybrid", "link_loss", LinkLoss, sys.argv)
