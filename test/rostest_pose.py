#!/usr/bin/env python3
"""rostest: the headset path (input:=pose) flies the simulator.

The test publishes a headset orientation as geometry_msgs/PoseStamped in ROS ENU/FLU
(REP-103), built independently of the project's conversion: FLU roll +8 deg, pitch
-12 deg (FLU y points left: nose up is negative), ENU yaw 60 deg (from east,
counter-clockwise) -- which is, in NED/FRD, roll 8 deg, pitch 12 deg (nose up), yaw
30 deg (from north, clockwise). With the deadman held, the desired state must carry
exactly those NED/FRD angles and the vehicle must settle on them; the joystick still
gives the linear commands.
"""
import math
import sys
import threading
import time
import unittest

import numpy as np
import rospy
import rostest
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import Joy

import rostest_common as rc
from brov2_hybrid.msg import DesiredState
from brov2_hybrid.pilot.settings import load_joystick_settings

S = load_joystick_settings()
EXPECTED_NED_FRD_DEG = np.array([8.0, 12.0, 30.0])


def quaternion_zyx(roll, pitch, yaw):
    """(x, y, z, w) of R = Rz(yaw) Ry(pitch) Rx(roll), written out (not the project's code)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


class PoseFlight(unittest.TestCase):
    def test_headset_flight(self):
        status = rc.StatusRecorder()
        desired = rc.Latest("/brov2/desired_state", DesiredState)
        topics = rc.autopilot_topics()
        joy_pub = rospy.Publisher("/joy", Joy, queue_size=10)
        pose_pub = rospy.Publisher("/brov2/headset_pose", PoseStamped, queue_size=10)
        q = quaternion_zyx(math.radians(8.0), math.radians(-12.0), math.radians(60.0))
        surge = {"value": 0.0}

        def publish():
            while not rospy.is_shutdown():
                joy = Joy()
                joy.header.stamp = rospy.Time.now()
                joy.axes = [0.0] * 8
                joy.buttons = [0] * 11
                joy.buttons[S.buttons["deadman"]] = 1
                joy.axes[S.axes["surge"].index] = S.axes["surge"].sign * surge["value"]
                joy_pub.publish(joy)
                pose = PoseStamped()
                pose.header.stamp = joy.header.stamp
                pose.header.frame_id = "map"
                pose.pose.orientation.x, pose.pose.orientation.y, pose.pose.orientation.z, pose.pose.orientation.w = q
                pose_pub.publish(pose)
                time.sleep(0.05)
        threading.Thread(target=publish, daemon=True).start()

        def desired_deg():
            d = desired.get()
            return None if d is None else np.degrees([d.roll_rad, d.pitch_rad, d.yaw_rad])

        def headset_desired():
            got = desired_deg()
            return got is not None and np.allclose(got, EXPECTED_NED_FRD_DEG, atol=1e-6)

        rc.wait_engaged(topics)
        # Until the first headset pose reaches joy_input (its own connection, not ordered with
        # /joy's) the desired state holds the measured attitude; then it must be the headset's.
        try:
            rc.wait_for(headset_desired, 20.0, "the headset's desired state")
        except AssertionError as exc:
            self.fail("%s; last desired roll/pitch/yaw %s deg, expected %s"
                      % (exc, desired_deg(), EXPECTED_NED_FRD_DEG))
        rospy.loginfo("pose: desired roll/pitch/yaw %s deg (expected %s)", np.round(desired_deg(), 3),
                      EXPECTED_NED_FRD_DEG)
        # 5 s on the vehicle's clock (ROS time from the simulator, which falls behind the wall
        # clock when the simulator is short of CPU: a wall-clock sleep gave the vehicle less)
        t_seen = rospy.get_time()
        rc.wait_for(lambda: status.last().header.stamp.to_sec() >= t_seen + 5.0, 30.0, "5 s of ROS time")
        att = np.degrees(status.last().attitude_rad)
        rospy.loginfo("pose: vehicle attitude after 5 s %s deg", np.round(att, 2))
        self.assertTrue(np.allclose(att, EXPECTED_NED_FRD_DEG, atol=2.0), att)
        surge["value"] = 1.0
        rc.wait_for(lambda: status.last().linear_cmd[0] == 1.0, 10.0, "full surge from the joystick in pose mode")


if __name__ == "__main__":
    rospy.init_node("rostest_pose")
    rostest.rosrun("brov2_hybrid", "pose", PoseFlight, sys.argv)
