#!/usr/bin/env python3
"""rostest: identify.launch flies the identification schedule through the ROS pipeline on our
simulator, fits the logger's CSV and writes identified.yaml; the simulator flies the bundled
Heavy, so the identified file must give back its model: effective inertia within 10 %,
quadratic damping within 15 %, B - W within 0.5 N (the targets of test/test_identify.py).

Rows where the vehicle did not get the logged command (a busy machine) are left out of the
fit (brov2_hybrid.identify.disturbed); only when too much of an axis's excitation is
disturbed does identify_flight refuse the fit, and the test accepts a refusal only when the
logger's CSV, refitted here over the same schedule window, shows that same disturbance.
"""
import os
import re
import sys
import unittest

import numpy as np
import rospy
import rostest

import rostest_common as rc
from brov2_hybrid.identify import model as idmodel
from brov2_hybrid.identify.disturbed import FlightDisturbed
from brov2_hybrid.tick_log.logfile import read_log
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


class Identify(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        topics = rc.autopilot_topics()
        rc.wait_engaged(topics)
        rc.wait_dive_done(topics, 240.0)
        cls.out_dir = rospy.get_param("~out_dir")
        cls.log_path = rospy.get_param(rospy.get_param("/identify_flight/logger_file_param", "/logger/last_file"))

    def test_identified_file_gives_back_the_simulated_vehicle(self):
        report = os.path.join(self.out_dir, "identify_report.md")
        self.assertTrue(os.path.isfile(report), "identify_flight wrote no %s" % report)
        with open(report) as handle:
            text = handle.read()
        refused = re.search(r"No fit: (.*)", text)
        if refused:
            self._check_refusal(text, refused.group(1))
            return
        path = os.path.join(self.out_dir, "identified.yaml")
        self.assertTrue(os.path.isfile(path), "identify_flight wrote no %s" % path)
        true, got = load_vehicle(None).body, load_vehicle(path).body
        np.testing.assert_allclose(got.total_mass[2:], true.total_mass[2:], rtol=0.10)
        np.testing.assert_allclose(got.quadratic_drag[2:], true.quadratic_drag[2:], rtol=0.15)
        self.assertAlmostEqual(got.buoyancy_n - got.weight_n, true.buoyancy_n - true.weight_n, delta=0.5)

    def _check_refusal(self, report, reason):
        """A refusal stands only if the log shows the disturbance it names: refit the CSV independently."""
        self.assertIn("the flight was disturbed", reason, "the fit failed for another reason: %s" % reason)
        self.assertFalse(os.path.isfile(os.path.join(self.out_dir, "identified.yaml")),
                         "a refused fit must write no identified.yaml")
        window = re.search(r"Schedule window: (\S+) \.\. (\S+) s", report)
        self.assertIsNotNone(window, "the refusal names no schedule window")
        log = read_log(self.log_path)
        with self.assertRaises(FlightDisturbed) as raised:
            idmodel.identify_log(log, load_vehicle(None), window_s=(float(window.group(1)), float(window.group(2))))
        self.assertEqual(str(raised.exception), reason)
        axis, share = re.search(r"(\d+) % of the (\w+) excitation", reason).group(2, 1)
        sys.stderr.write("identify: refused on a busy machine (%s %s %%): %s\n" % (axis, share, reason))


if __name__ == "__main__":
    rospy.init_node("rostest_identify")
    rostest.rosrun("brov2_hybrid", "identify", Identify, sys.argv)
