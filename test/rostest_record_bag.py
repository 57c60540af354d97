#!/usr/bin/env python3
"""rostest 7: the bag written with record_bag opens with rosbag and holds every
autopilot topic.

Runs `roslaunch brov2_hybrid hybrid_autopilot.launch record_bag:=true` on a short dive
to its end, opens the bag with rosbag and checks every autopilot topic is there with
its message type, and that the desired states equal the dive's rows.
"""
import glob
import os
import sys
import unittest

import rosbag
import rospy
import rostest

import rostest_common as rc

TOPICS = {
    "/brov2/desired_state": "brov2_hybrid/DesiredState",
    "/brov2/status": "brov2_hybrid/AutopilotStatus",
    "/brov2/tau": "geometry_msgs/WrenchStamped",
    "/brov2/thruster_command": "brov2_hybrid/ThrusterCommand",
    "/brov2/depth_m": "std_msgs/Float64",
    "/brov2/dive_done": "std_msgs/Bool",
    "/brov2/engaged": "std_msgs/Bool",
    "/brov2/release_override": "std_msgs/Bool",
    "/mavros/imu/data": "sensor_msgs/Imu",
    "/mavros/state": "mavros_msgs/State",
    "/mavros/rc/override": "mavros_msgs/OverrideRCIn",
    "/mavros/rc/out": "mavros_msgs/RCOut",
    "/tf": "tf2_msgs/TFMessage",
    "/tf_static": "tf2_msgs/TFMessage",
}


class RecordBag(unittest.TestCase):
    def test_bag_holds_every_autopilot_topic(self):
        port = rc.free_port()   # of this run alone (no fixed port another run could hold)
        speedup = rospy.get_param("~speedup")
        out = rc.scratch_dir("record_bag")
        dive = rc.data_file("yaw_step.csv")
        code = rc.roslaunch(["hybrid_autopilot.launch", "dive:=%s" % dive, "record_bag:=true",
                             "bag_dir:=%s" % out, "log_dir:=%s" % out, "fcu_url:=tcp:127.0.0.1:%d" % port,
                             "speedup:=%s" % speedup, "output:=log"], 240.0, os.path.join(out, "roslaunch.log"))
        self.assertEqual(code, 0, "the run failed (log %s/roslaunch.log)" % out)
        self.assertEqual(glob.glob(os.path.join(out, "*.bag.active")), [], "the bag was not closed")
        path = rc.only_file(os.path.join(out, "*.bag"))
        with rosbag.Bag(path) as bag:
            info = bag.get_type_and_topic_info().topics
            for topic, msg_type in sorted(TOPICS.items()):
                self.assertIn(topic, info, "%s missing from %s" % (topic, path))
                self.assertEqual(info[topic].msg_type, msg_type)
                self.assertGreater(info[topic].message_count, 0, "%s has no messages" % topic)
            with open(dive) as f:
                rows = sum(1 for _ in f) - 1
            self.assertEqual(info["/brov2/desired_state"].message_count, rows)
            self.assertGreater(info["/brov2/status"].message_count, 40 * 10)   # >= 10 s at 50 Hz (~40 Hz slack)
            done = [m.data for _, m, _ in bag.read_messages(topics=["/brov2/dive_done"])]
            self.assertIn(True, done)
        rospy.loginfo("record_bag: %s holds %d topics", path, len(info))


if __name__ == "__main__":
    rospy.init_node("rostest_record_bag")
    rostest.rosrun("brov2_hybrid", "record_bag", RecordBag, sys.argv)
