#!/usr/bin/env python3
"""rostest: identify.launch flies the identification schedule through the ROS pipeline on our
simulator, fits the logger's CSV and writes identified.yaml; the simulator flies the bundled
Heavy, so the identified file must give back its model: effective inertia within 10 %,
quadratic damping within 15 %, B - W within 0.5 N (the targets of test/test_identify.py).
"""
import os
import sys
import unittest

import numpy as np
import rospy
import rostest

import rostest_common as rc
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


class Identify(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        topics = rc.autopilot_topics()
        rc.wait_engaged(topics)
        rc.wait_dive_done(topics, 240.0)
        cls.out_dir = rospy.get_param("~out_dir")

    def test_identified_file_gives_back_the_simulated_vehicle(self):
        path = os.path.join(self.out_dir, "identified.yaml")
        self.assertTrue(os.path.isfile(path), "identify_flight wrote no %s" % path)
        true, got = load_vehicle(None).body, load_vehicle(path).body
        np.testing.assert_allclose(got.total_mass[2:], true.total_mass[2:], rtol=0.10)
        np.testing.assert_allclose(got.quadratic_drag[2:], true.quadratic_drag[2:], rtol=0.15)
        self.assertAlmostEqual(got.buoyancy_n - got.weight_n, true.buoyancy_n - true.weight_n, delta=0.5)
        self.assertTrue(os.path.isfile(os.path.join(self.out_dir, "identify_report.md")))


if __name__ == "__main__":
    rospy.init_node("rostest_identify")
    rostest.rosrun("brov2_hybrid", "identify", Identify, sys.argv)
