#!/usr/bin/env python3
"""rostest 3: a short 6-DOF dive in the simulator stays under an IAE bound per axis, and
the logger writes exactly one row per control tick.

IAE bound per angular axis: at most IAE_FRACTION of the IAE the vehicle would have had
by not moving at all (integral of |eta_d(t) - eta(t_0)| over the dive); every axis is
commanded in test/data/short_dive.csv, so the reference is far from zero.
Row count: the log's rows map one-to-one onto consecutive control ticks (the tick
counter in AutopilotStatus), with none missing or doubled. Without the tether the tether columns
are NaN (rostest_tether.py flies with it).
"""
import os
import sys
import unittest

import numpy as np
import rospy
import rostest

import rostest_common as rc
from brov2_hybrid.analysis import metrics
from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.tick_log.logfile import TETHER_COLUMNS, read_log

IAE_FRACTION = 0.35
AXES = ("roll", "pitch", "yaw")


class Dive(unittest.TestCase):
    def test_dive_iae_and_log_rows(self):
        log_dir = rospy.get_param("~log_dir")   # this run's own folder (dive.test)
        status = rc.StatusRecorder()
        topics = rc.autopilot_topics()
        rc.wait_engaged(topics)
        rc.wait_dive_done(topics, 150.0)
        rospy.sleep(0.5)
        log = read_log(rc.only_file(os.path.join(log_dir, "*.csv")))
        modes = np.array(log["mode"])
        for column in TETHER_COLUMNS:          # no tether (tether:=false): no tether force in the log
            self.assertTrue(np.all(np.isnan(log[column])), "%s logged without a tether" % column)

        # --- IAE per axis over the ACTIVE part of the dive
        active = np.flatnonzero(modes == "ACTIVE")
        self.assertGreater(len(active), 100, "too few ACTIVE ticks in the log")
        sel = slice(active[0], active[-1] + 1)
        t = log["time_s"][sel]
        for axis in AXES:
            desired = log["%s_d_rad" % axis][sel]
            actual = log["%s_rad" % axis][sel]
            iae = metrics.iae(t, np.degrees(wrap_angle(desired - actual)))
            still = metrics.iae(t, np.degrees(wrap_angle(desired - actual[0])))
            rospy.loginfo("dive: %s IAE %.2f deg s (bound %.2f = %.2f x %.2f for not moving)",
                          axis, iae, IAE_FRACTION * still, IAE_FRACTION, still)
            self.assertGreater(still, 5.0, "%s is hardly commanded in the test dive" % axis)
            self.assertLess(iae, IAE_FRACTION * still, "%s IAE too large" % axis)

        # --- one row per control tick, over the ticks this test saw (it may subscribe
        # a little after the logger, so rows before its first status cannot be mapped; and
        # control runs on after the dive: the newest rows in the file may be of ticks whose
        # status has not reached this test yet, so rows after its last status are not mapped)
        seen = {}
        for st in status.snapshot():
            if st.mode != "SHUTDOWN":
                seen[round(st.header.stamp.to_sec(), 5)] = st.tick
        first_seen, last_seen = min(seen), max(seen)
        row_times = [round(float(log["time_s"][k]), 5) for k, m in enumerate(modes) if m != "SHUTDOWN"]
        window = [tm for tm in row_times if first_seen <= tm <= last_seen]
        unmapped = [tm for tm in window if tm not in seen]
        self.assertEqual(unmapped, [], "log rows with no matching control tick: %s" % unmapped[:5])
        ticks = np.array([seen[tm] for tm in window])
        expected = [k for tm, k in seen.items() if ticks[0] <= k <= ticks[-1]]
        rospy.loginfo("dive: %d log rows for ticks %d..%d (%d rows before the test subscribed, %d after "
                      "its last status)", len(window), ticks[0], ticks[-1], sum(tm < first_seen for tm in row_times),
                      sum(tm > last_seen for tm in row_times))
        np.testing.assert_array_equal(np.diff(ticks), 1, err_msg="log rows skip or repeat control ticks")
        self.assertEqual(len(window), len(expected))
        self.assertEqual(len(window), ticks[-1] - ticks[0] + 1)


if __name__ == "__main__":
    rospy.init_node("rostest_dive")
    rostest.rosrun("brov2_hybrid", "dive", Dive, sys.argv)
