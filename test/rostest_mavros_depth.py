#!/usr/bin/env python3
"""rostest: mavros_depth publishes /brov2/depth_m from what the real MAVROS publishes.

Plays MAVROS's part: /mavros/vfr_hud (mavros_msgs/VFR_HUD, ArduSub altitude = -depth)
and /mavros/global_position/rel_alt (std_msgs/Float64). Depth must follow VFR_HUD while
it streams (rel_alt ignored), and fall back to rel_alt once VFR_HUD stops.
"""
import threading
import time
import unittest

import rospy
import rostest
from mavros_msgs.msg import VFR_HUD
from std_msgs.msg import Float64

import rostest_common as rc


class MavrosDepth(unittest.TestCase):
    def setUp(self):
        self._lock = threading.Lock()
        self.depths = []
        self.sub = rospy.Subscriber("/brov2/depth_m", Float64, self._on_depth, queue_size=100)
        self.vfr = rospy.Publisher("/mavros/vfr_hud", VFR_HUD, queue_size=10)
        self.rel = rospy.Publisher("/mavros/global_position/rel_alt", Float64, queue_size=10)
        # both directions: the node hears our topics, and we hear its depth (else the first
        # depths it publishes are lost and a phase may count fewer than it needs)
        rc.wait_for(lambda: self.vfr.get_num_connections() and self.rel.get_num_connections()
                    and self.sub.get_num_connections(), 20.0, "mavros_depth and this test to connect")

    def _on_depth(self, msg):
        with self._lock:
            self.depths.append(msg.data)

    def _play(self, seconds, vfr_altitude=None, rel_alt=None, rate_hz=10.0):
        rate = rospy.Rate(rate_hz)
        end = rospy.get_time() + seconds
        while rospy.get_time() < end and not rospy.is_shutdown():
            if vfr_altitude is not None:
                self.vfr.publish(VFR_HUD(altitude=vfr_altitude))
            if rel_alt is not None:
                self.rel.publish(Float64(data=rel_alt))
            rate.sleep()

    def _take(self, quiet_s=0.5, timeout_s=10.0):
        """The depths received since the last call, once none has arrived for ``quiet_s``
        (those still in flight from the phase just played belong to it)."""
        deadline = time.monotonic() + timeout_s
        count, since = -1, time.monotonic()
        while time.monotonic() - since < quiet_s:
            self.assertLess(time.monotonic(), deadline, "/brov2/depth_m never fell quiet")
            with self._lock:
                if len(self.depths) != count:
                    count, since = len(self.depths), time.monotonic()
            time.sleep(0.02)
        with self._lock:
            depths, self.depths = self.depths, []
        return depths

    def _assert_switch(self, depths, before, target, what):
        """depths = [before]* + [target]+ with at least 10 target values.

        Messages on two topics are not ordered against each other: before the first
        VFR_HUD reaches the node, rel_alt is the best source heard (and after VFR_HUD
        stops, one already in flight may still arrive), so a head of `before` is right.
        """
        head = 0
        while head < len(depths) and abs(depths[head] - before) < 1e-6:
            head += 1
        tail = depths[head:]
        self.assertGreaterEqual(len(tail), 10, "%s: too few depths: %r" % (what, depths))
        self.assertTrue(all(abs(d - target) < 1e-6 for d in tail), "%s: %r" % (what, depths))

    def test_vfr_hud_first_then_rel_alt(self):
        self._play(1.5, vfr_altitude=-3.5, rel_alt=-2.0)
        self._assert_switch(self._take(), 2.0, 3.5, "not -VFR_HUD.altitude while it streamed")
        self._play(3.0, rel_alt=-2.0)   # VFR_HUD stops: after source_stale_s (1 s) rel_alt counts
        self._assert_switch(self._take(), 3.5, 2.0, "no fallback to -rel_alt")

if __name__ == "__main__":
    rospy.init_node("rostest_mavros_depth")
    rostest.rosrun("brov2_hybrid", "mavros_depth", MavrosDepth)
