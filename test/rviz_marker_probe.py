#!/usr/bin/env python3
"""Helper of test/test_rviz_view.py (not collected by pytest): wait for the RViz view's markers.

Subscribes to /brov2/rviz_markers and waits (wall time, polling) until one MarkerArray holds
the whole view of a flying vehicle: one cylinder per thruster, thrust arrows, the desired
attitude axes and a status text naming the mode and the firmware; and until the rviz node
subscribes to the topic. Prints one JSON line with what it saw; exit 0 when all arrived,
1 on timeout (the JSON then says what was missing).
"""
import argparse
import json
import sys
import threading
import time

import rosgraph
import rospy
from visualization_msgs.msg import Marker, MarkerArray

TOPIC = "/brov2/rviz_markers"


class Seen(object):
    """What the latest MarkerArray showed."""

    def __init__(self):
        self.lock = threading.Lock()
        self.summary = {"arrays": 0}

    def on_markers(self, msg):
        """Summarise one MarkerArray."""
        added = [m for m in msg.markers if m.action == Marker.ADD]
        text = [m.text for m in added if m.ns == "status"]
        with self.lock:
            self.summary = {
                "arrays": self.summary["arrays"] + 1,
                "thrusters": sum(1 for m in added if m.ns == "thrusters" and m.type == Marker.CYLINDER),
                "thrust_arrows": sum(1 for m in added if m.ns == "thrust" and len(m.points) == 2),
                "desired_axes": sum(1 for m in added if m.ns == "desired_attitude"),
                "frames": sorted({m.header.frame_id for m in added}),
                "status": text[0] if text else "",
            }

    def complete(self, n_thrusters):
        """True once the latest array shows a vehicle in flight with its mode and firmware."""
        with self.lock:
            s = dict(self.summary)
        status = s.get("status", "")
        return (s.get("thrusters") == n_thrusters and s.get("thrust_arrows", 0) >= 1 and s.get("desired_axes") == 3
                and ", armed" in status and "firmware " in status and "no data" not in status), s


def rviz_subscribed():
    """True when a node named rviz subscribes to TOPIC."""
    _, subscribers, _ = rosgraph.Master("/rviz_marker_probe").getSystemState()
    return any(topic == TOPIC and any(node.endswith("rviz") for node in nodes) for topic, nodes in subscribers)


def main():
    """Parse arguments, wait, print the JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timeout-s", type=float, default=300.0)
    parser.add_argument("--thrusters", type=int, default=8)
    args = parser.parse_args()
    rospy.init_node("rviz_marker_probe", anonymous=True, disable_signals=True)
    seen = Seen()
    rospy.Subscriber(TOPIC, MarkerArray, seen.on_markers, queue_size=2)
    deadline = time.monotonic() + args.timeout_s
    done, summary, subscribed = False, {}, False
    while time.monotonic() < deadline:
        done, summary = seen.complete(args.thrusters)
        subscribed = subscribed or rviz_subscribed()
        if done and subscribed:
            break
        time.sleep(0.5)
    summary["rviz_subscribed"] = subscribed
    print(json.dumps(summary))
    sys.exit(0 if done and subscribed else 1)


if __name__ == "__main__":
    main()
