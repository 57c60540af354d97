#!/usr/bin/env python3
"""rostest 6: replaying a bag recorded from a csv-driven run reproduces the run.

Run A: `roslaunch brov2_hybrid hybrid_autopilot.launch` with a dive CSV and
record_bag:=true. Run B: `roslaunch brov2_hybrid replay.launch bag:=<A's bag>`, which
plays A's recorded desired states into the autopilot in place of csv_reader. Both
logs are aligned on their first ACTIVE tick. Tolerances (stated): the replayed desired
attitude is the recorded one up to DESIRED_PHASE_TOL_S of timing (bag playback on the
simulated clock can lag or bunch messages when the machine is busy; seen: 0.35 s at 2x
speed-up on 2 cores, so the suite runs in real time): at every time it
lies within the recorded desired's range over +-DESIRED_PHASE_TOL_S, to DESIRED_TOL_DEG.
The measured attitude agrees within RMS_TOL_DEG RMS and MAX_TOL_DEG at any time, per
axis (the two runs differ only by thread timing in the loop; both fly with the firmware
given, so that no firmware probe turns the vehicle before the dive).
"""
import os
import sys
import unittest

import numpy as np
import rospy
import rostest

import rostest_common as rc
from brov2_hybrid.tick_log.logfile import read_log

AXES = ("roll", "pitch", "yaw")
DESIRED_PHASE_TOL_S = 0.5
DESIRED_TOL_DEG = 0.05
RMS_TOL_DEG = 1.5
MAX_TOL_DEG = 5.0


def outside_window(t, recorded, replayed, half_width_s):
    """How far (>= 0) each replayed sample lies outside the recorded signal's range over
    [t - half_width_s, t + half_width_s] (both sampled on the grid t)."""
    out = np.empty(len(t))
    for k, tk in enumerate(t):
        sel = (t >= tk - half_width_s) & (t <= tk + half_width_s)
        lo, hi = recorded[sel].min(), recorded[sel].max()
        out[k] = max(lo - replayed[k], replayed[k] - hi, 0.0)
    return out


def active_part(log):
    modes = np.array(log["mode"])
    idx = np.flatnonzero(modes == "ACTIVE")
    sel = slice(idx[0], idx[-1] + 1)
    t = log["time_s"][sel] - log["time_s"][idx[0]]
    return t, {k: log[k][sel] for k in log if k != "mode"}


class Replay(unittest.TestCase):
    def test_replay_reproduces_the_run(self):
        port = rc.free_port()   # of this run alone (no fixed port another run could hold)
        speedup = rospy.get_param("~speedup")
        out = rc.scratch_dir("replay")
        # firmware:=quantitative (the simulator's mixer): with auto, the firmware probe turns the
        # vehicle until the mission latches the firmware, for as long as start-up takes on a busy
        # machine, and the runs would start the dive at headings several degrees apart.
        common = ["fcu_url:=tcp:127.0.0.1:%d" % port, "speedup:=%s" % speedup, "output:=log",
                  "firmware:=quantitative"]
        code = rc.roslaunch(["hybrid_autopilot.launch", "dive:=%s" % rc.data_file("short_dive.csv"),
                             "record_bag:=true", "bag_dir:=%s/a" % out, "log_dir:=%s/a" % out] + common,
                            240.0, os.path.join(out, "run_a.log"))
        self.assertEqual(code, 0, "run A failed (log %s/run_a.log)" % out)
        bag = rc.only_file(os.path.join(out, "a", "*.bag"))
        code = rc.roslaunch(["replay.launch", "bag:=%s" % bag, "log_dir:=%s/b" % out] + common,
                            240.0, os.path.join(out, "run_b.log"))
        self.assertEqual(code, 0, "run B failed (log %s/run_b.log)" % out)
        ta, a = active_part(read_log(rc.only_file(os.path.join(out, "a", "*.csv"))))
        tb, b = active_part(read_log(rc.only_file(os.path.join(out, "b", "*.csv"))))
        self.assertGreater(tb[-1], 0.9 * ta[-1], "the replay is shorter than the run")
        t = ta[ta <= min(ta[-1], tb[-1])]
        for axis in AXES:
            d_a = np.interp(t, ta, np.degrees(a["%s_d_rad" % axis]))
            d_b = np.interp(t, tb, np.degrees(b["%s_d_rad" % axis]))
            y_a = np.interp(t, ta, np.degrees(np.unwrap(a["%s_rad" % axis])))
            y_b = np.interp(t, tb, np.degrees(np.unwrap(b["%s_rad" % axis])))
            diff = y_b - y_a
            rms = float(np.sqrt(np.mean(diff ** 2)))
            off = outside_window(t, d_a, d_b, DESIRED_PHASE_TOL_S)
            rospy.loginfo("replay: %s desired max diff %.3f deg (%.3f deg beyond +-%.2f s of timing), "
                          "attitude RMS diff %.3f deg, max %.3f deg",
                          axis, np.max(np.abs(d_b - d_a)), off.max(), DESIRED_PHASE_TOL_S, rms, np.max(np.abs(diff)))
            self.assertLess(off.max(), DESIRED_TOL_DEG, "%s: replayed desired attitude differs by more than "
                            "+-%.2f s of timing (%.3f deg beyond)" % (axis, DESIRED_PHASE_TOL_S, off.max()))
            self.assertLess(rms, RMS_TOL_DEG, "%s: replayed response differs (RMS)" % axis)
            self.assertLess(np.max(np.abs(diff)), MAX_TOL_DEG, "%s: replayed response differs (max)" % axis)


if __name__ == "__main__":
    rospy.init_node("rostest_replay")
    rostest.rosrun("brov2_hybrid", "replay", Replay, sys.argv)
