#!/usr/bin/env python3
"""rostest: an explicit firmware the vehicle does not run stops the run, naming the parameter.

`roslaunch brov2_hybrid hybrid_autopilot.launch mixer:=stock firmware:=quantitative`
(the simulator runs stock ArduSub's Algorithm 1, the autopilot is told the paper's
Algorithm 2): the mission compares the motor outputs with both mixers' predictions,
must stop with a fatal message naming the parameter 'firmware', what it saw and the
value to set, and the launch must end well before the dive would have.
"""
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import rospy
import rostest

import rostest_common as rc

DIVE_S = 10.0        # test/data/yaw_step.csv; the refusal must come before its end (in ROS time)


class FirmwareMismatch(unittest.TestCase):
    def test_stock_vehicle_with_firmware_quantitative_is_refused(self):
        log_dir = tempfile.mkdtemp(prefix="brov2_fw_mismatch_")
        port = random.randint(20000, 32767)
        cmd = ["roslaunch", "brov2_hybrid", "hybrid_autopilot.launch", "mixer:=stock", "firmware:=quantitative",
               "dive:=%s" % rc.data_file("yaw_step.csv"), "fcu_url:=tcp:127.0.0.1:%d" % port,
               "log_dir:=%s" % log_dir, "output:=screen", "record_bag:=false"]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=120.0)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)
            out, _ = proc.communicate(timeout=30.0)
            self.fail("the launch was not refused within 120 s:\n%s" % out.decode(errors="replace")[-3000:])
        text = out.decode(errors="replace")
        elapsed = time.monotonic() - start
        self.assertIn("parameter 'firmware' is 'quantitative'", text, text[-3000:])
        self.assertIn("stock ArduSub's linear mixer (Algorithm 1)", text)
        self.assertIn("firmware:=stock", text)
        # Before the dive's end in ROS (simulated) time, whatever the machine's load: a busy machine
        # may let roslaunch take wall seconds to end the launch after the mission's exit, during which
        # csv_reader can still print that the dive finished.
        refused = re.search(r"\[FATAL\] \[[0-9.]+, ([0-9.]+)\]: mission: parameter 'firmware'", text)
        started = re.search(r"csv_reader: dive starts at t = ([0-9.]+) s", text)
        self.assertTrue(refused and started, text[-3000:])
        self.assertLess(float(refused.group(1)) - float(started.group(1)), DIVE_S,
                        "the dive ran to its end instead of being refused")
        finished = text.find("dive finished")
        self.assertTrue(finished < 0 or refused.start() < finished, "the dive finished before the refusal")
        rospy.loginfo("firmware mismatch refused after %.1f s wall", elapsed)


if __name__ == "__main__":
    rospy.init_node("rostest_firmware_mismatch")
    rostest.rosrun("brov2_hybrid", "firmware_mismatch", FirmwareMismatch, sys.argv)
