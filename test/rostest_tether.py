#!/usr/bin/env python3
"""rostest: on the simulator's tether (tether:=true), the tick log and the run summary report the
tether's pull, as the simulator published it (brov2_hybrid/TetherState on /brov2/tether_state).

Every logged force is one the simulator published (the logger writes the latest it heard), the
summary's mean |F| per NED axis agrees with the mean of what the simulator published over the same
span, and its peak is no larger than the largest published. The RViz view (rviz_view's MarkerArray)
draws the cable through as many points as the simulator has nodes, in the world frame. (rostest_dive.py
checks that a run without the tether logs none.)
"""
import os
import shutil
import sys
import threading
import unittest

import numpy as np
import rospy
import rostest

import rostest_common as rc
from brov2_hybrid.analysis.log_summary import dive_part
from brov2_hybrid.analysis.run_summary import summarize
from brov2_hybrid.msg import TetherState
from brov2_hybrid.node_logic.node_params import load_node_params
from visualization_msgs.msg import Marker, MarkerArray
from brov2_hybrid.tick_log.logfile import TETHER_COLUMNS, read_log
from brov2_hybrid.sim.tether_state import load_tether_state_config

#: The summary's mean |F| and the published messages' may differ by this fraction (+ MEAN_ABS_N):
#: the logger samples the latest message at each control tick, the simulator publishes each period.
MEAN_TOLERANCE = 0.10
MEAN_ABS_N = 0.5


class TetherRecorder(object):
    def __init__(self, topic):
        self._lock = threading.Lock()
        self.messages = []
        rospy.Subscriber(topic, TetherState, self._on, queue_size=1000)

    def _on(self, msg):
        with self._lock:
            self.messages.append((msg.header.stamp.to_sec(), tuple(msg.force_ned_n), len(msg.nodes_ned_m),
                                  msg.header.frame_id))

    def snapshot(self):
        with self._lock:
            return list(self.messages)


class TetherMarkers(object):
    """The newest tether line and pull arrow rviz_view drew (visible ones)."""

    def __init__(self, topic="/brov2/rviz_markers"):
        self._lock = threading.Lock()
        self.line, self.pull = None, None
        rospy.Subscriber(topic, MarkerArray, self._on, queue_size=2)

    def _on(self, msg):
        with self._lock:
            for m in msg.markers:
                if m.ns == "tether" and m.action == Marker.ADD:
                    self.line = m
                if m.ns == "tether_pull" and m.action == Marker.ADD:
                    self.pull = m


class TetherDive(unittest.TestCase):
    def test_the_log_and_the_summary_report_the_simulators_tether_force(self):
        log_dir = rospy.get_param("~log_dir")
        config = load_tether_state_config()
        heard = TetherRecorder(config.topic)
        drawn = TetherMarkers()
        topics = rc.autopilot_topics()
        rc.wait_engaged(topics)
        rc.wait_dive_done(topics, 150.0)
        rospy.sleep(0.5)
        scratch = rc.scratch_dir("rostest_tether")
        path = os.path.join(scratch, "log.csv")       # a copy: the logger goes on writing after the dive
        shutil.copyfile(rc.only_file(os.path.join(log_dir, "*.csv")), path)
        messages = heard.snapshot()
        self.assertGreater(len(messages), 100, "too few tether states heard on %s" % config.topic)
        self.assertEqual({m[3] for m in messages}, {config.frame_id})
        self.assertEqual({m[2] % 3 for m in messages}, {0})
        self.assertGreater(min(m[2] for m in messages), 6)

        log = dive_part(read_log(path), True)
        logged = np.column_stack([log[c] for c in TETHER_COLUMNS])
        t = log["time_s"]
        have = np.all(np.isfinite(logged), axis=1)
        self.assertGreater(have.sum(), 0.9 * len(t), "dive rows without a tether force")
        published = {m[1] for m in messages}
        stray = [tuple(f) for f in logged[have] if tuple(f) not in published]
        # rows logged before this test subscribed may carry a force it did not hear
        early = messages[0][0]
        stray_late = [tuple(f) for f, tt in zip(logged[have], t[have]) if tt > early + 1.0 and tuple(f) not in published]
        rospy.loginfo("tether: %d messages, %d dive rows with a force, %d not heard by the test (%d after its first)",
                      len(messages), have.sum(), len(stray), len(stray_late))
        self.assertEqual(stray_late, [], "logged forces the simulator did not publish")

        figures = summarize(path, scratch)
        window = np.array([m[1] for m in messages if t[0] <= m[0] <= t[-1]])
        self.assertGreater(len(window), 100)
        expected = np.abs(window).mean(axis=0)
        rospy.loginfo("tether: summary mean |F| %s N, published %s N; peak %.1f N, published %.1f N",
                      np.round(figures["tether_force_mean_abs_ned_n"], 2), np.round(expected, 2),
                      figures["tether_force_max_n"], np.linalg.norm(window, axis=1).max())
        self.assertEqual(figures["tether_rows"], int(have.sum()))
        np.testing.assert_allclose(figures["tether_force_mean_abs_ned_n"], expected,
                                   rtol=MEAN_TOLERANCE, atol=MEAN_ABS_N)
        self.assertLessEqual(figures["tether_force_max_n"], np.linalg.norm(window, axis=1).max() + 1e-9)

        line, pull = drawn.line, drawn.pull
        self.assertIsNotNone(line, "rviz_view drew no tether")
        self.assertEqual(line.type, Marker.LINE_STRIP)
        self.assertEqual(len(line.points), messages[-1][2] // 3)
        self.assertEqual(line.header.frame_id, load_node_params("rviz_view")["world_frame_id"])
        self.assertIsNotNone(pull, "rviz_view drew no pull arrow")
        self.assertEqual((pull.type, len(pull.points)), (Marker.ARROW, 2))


if __name__ == "__main__":
    rospy.init_node("rostest_tether")
    rostest.rosrun("brov2_hybrid", "tether", TetherDive, sys.argv)
