#!/usr/bin/env python3
"""rostest: mavros_depth publishes /brov2/depth_m from what the real MAVROS publishes.

Plays MAVROS's part: /mavros/global_position/rel_alt (std_msgs/Float64,
GLOBAL_POSITION_INT.relative_alt: height above home, which ArduSub keeps at the surface)
and /mavros/vfr_hud (mavros_msgs/VFR_HUD, altitude above sea level: 579 m at 5 m depth in
a lake at 584 m). Depth must be -rel_alt and never follow VFR_HUD.
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
        # both directions: the node hears rel_alt, and we hear its depth (else the first
        # depths it publishes are lost and a phase may count fewer than it needs)
        rc.wait_for(lambda: self.rel.get_num_connections() and self.sub.get_num_connections(), 20.0,
                    "mavros_depth and this test to connect")

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
        """The depths received since the last call, once none has arrived for ``quiet_s``."""
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

    def test_depth_is_minus_rel_alt_and_ignores_vfr_hud(self):
        self._play(1.5, vfr_altitude=579.0, rel_alt=-5.0)
        depths = self._take()
        self.assertGreaterEqual(len(depths), 10, "too few depths: %r" % depths)
        self.assertTrue(all(abs(d - 5.0) < 1e-6 for d in depths), "not -rel_alt: %r" % depths)
        self._play(1.0, vfr_altitude=579.0)       # rel_alt stops: VFR_HUD alone gives no depth
        self.assertEqual(self._take(), [], "VFR_HUD.altitude taken for depth")


if __name__ == "__main__":
    rospy.init_node("rostest_mavros_depth")
    rostest.rosrun("brov2_hybrid", "mavros_depth", MavrosDepth)
