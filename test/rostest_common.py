"""Shared helpers of the rostest nodes (test/rostest_*.py); not collected by pytest.

Recorders copy topic data under a lock; waits use wall time with a deadline, so a
test that never sees what it waits for fails with a message instead of hanging.
"""
import glob
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import rospy
from mavros_msgs.msg import OverrideRCIn, RCOut, State
from rosgraph_msgs.msg import Log
from std_msgs.msg import Bool

from brov2_hybrid.msg import AutopilotStatus

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DATA = os.path.join(REPO, "test", "data")


def data_file(name):
    return os.path.join(DATA, name)


def wait_for(predicate, timeout_s, what):
    """Wait (wall time) until predicate() is true; AssertionError naming ``what`` if not."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not rospy.is_shutdown():
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out after %.0f s waiting for %s" % (timeout_s, what))


class StatusRecorder(object):
    """Every AutopilotStatus: arrays of time, tick, mode, attitude, desired, gains."""

    def __init__(self, topic="/brov2/status"):
        self._lock = threading.Lock()
        self.rows = []
        rospy.Subscriber(topic, AutopilotStatus, self._on_status, queue_size=2000)

    def _on_status(self, st):
        with self._lock:
            self.rows.append(st)

    def snapshot(self):
        with self._lock:
            return list(self.rows)

    def last(self):
        with self._lock:
            return self.rows[-1] if self.rows else None

    def arrays(self):
        """Ticks with a measured attitude, in time order (duplicate stamps dropped)."""
        rows, last_t = [], -1.0
        for r in self.snapshot():
            t = r.header.stamp.to_sec()
            if r.mode != "SHUTDOWN" and t > last_t and np.all(np.isfinite(r.attitude_rad)):
                rows.append(r)
                last_t = t
        return {
            "t": np.array([r.header.stamp.to_sec() for r in rows]),
            "tick": np.array([r.tick for r in rows]),
            "mode": [r.mode for r in rows],
            "attitude": np.array([r.attitude_rad for r in rows]).reshape(-1, 3),
            "desired": np.array([r.desired_rad for r in rows]).reshape(-1, 3),
            "omega_d": np.array([r.omega_d_rad_s for r in rows]),
            "kp": np.array([r.kp for r in rows]).reshape(-1, 3),
            "tau": np.array([r.tau for r in rows]).reshape(-1, 6),
        }


class Latest(object):
    """The newest message of a topic (and how many arrived)."""

    def __init__(self, topic, msg_type):
        self._lock = threading.Lock()
        self.msg = None
        self.count = 0
        # kept so that a test can wait for its own connection (sub.get_num_connections())
        # before it makes a publisher start: messages sent before it connects are lost
        self.sub = rospy.Subscriber(topic, msg_type, self._on_msg, queue_size=100)

    def _on_msg(self, msg):
        with self._lock:
            self.msg = msg
            self.count += 1

    def get(self):
        with self._lock:
            return self.msg


class RosoutWatcher(object):
    """Messages on /rosout: (level, node name, text)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.entries = []
        rospy.Subscriber("/rosout", Log, self._on_log, queue_size=1000)

    def _on_log(self, msg):
        with self._lock:
            self.entries.append((msg.level, msg.name, msg.msg))

    def find(self, level_at_least, node, text):
        with self._lock:
            return [e for e in self.entries if e[0] >= level_at_least and e[1].endswith(node) and text in e[2]]


def autopilot_topics():
    return {"state": Latest("/mavros/state", State), "override": Latest("/mavros/rc/override", OverrideRCIn),
            "rc_out": Latest("/mavros/rc/out", RCOut), "engaged": Latest("/brov2/engaged", Bool),
            "dive_done": Latest("/brov2/dive_done", Bool)}


def wait_engaged(topics, timeout_s=60.0):
    wait_for(lambda: topics["engaged"].get() is not None and topics["engaged"].get().data, timeout_s,
             "the mission to arm the vehicle (/brov2/engaged)")


def wait_progressing(predicate, timeout_s, what, stall_wall_s=60.0):
    """Wait until predicate() is true for at most ``timeout_s`` of ROS time (vehicle time with /use_sim_time:
    lockstep slows it down on a busy machine, and that is not a failure), failing sooner only when ROS time
    has not moved for ``stall_wall_s`` of wall time; AssertionError naming ``what``."""
    start = rospy.get_time()
    moved_t, moved_wall = start, time.monotonic()
    while not rospy.is_shutdown():
        value = predicate()
        if value:
            return value
        now = rospy.get_time()
        if now != moved_t:
            moved_t, moved_wall = now, time.monotonic()
        if now - start > timeout_s:
            raise AssertionError("timed out after %.0f s of ROS time waiting for %s" % (timeout_s, what))
        if time.monotonic() - moved_wall > stall_wall_s:
            raise AssertionError("ROS time stood still for %.0f s of wall time waiting for %s"
                                 % (stall_wall_s, what))
        time.sleep(0.02)
    raise AssertionError("ROS shut down waiting for %s" % what)


def wait_dive_done(topics, timeout_s):
    """Wait for /brov2/dive_done for at most ``timeout_s`` of ROS time (see :func:`wait_progressing`)."""
    wait_progressing(lambda: topics["dive_done"].get() is not None and topics["dive_done"].get().data, timeout_s,
                     "the end of the dive (/brov2/dive_done)")


def dive_start_time(arrays):
    """ROS time of the first tick that used a desired state from the dive (ACTIVE)."""
    active = [k for k, m in enumerate(arrays["mode"]) if m == "ACTIVE"]
    if not active:
        raise AssertionError("no ACTIVE control tick recorded; modes seen: %s" % sorted(set(arrays["mode"])))
    return arrays["t"][active[0]]


# ------------------------------------------------------------------ processes
def python_exe():
    return sys.executable


def free_port():
    """A TCP port on 127.0.0.1 that no one listens on now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_simulator(port, speedup=1.0, log_path=None):
    """The MAVLink simulator as a child process on tcp 127.0.0.1:port."""
    cmd = [python_exe(), "-m", "brov2_hybrid.sim", "--address", "tcp:127.0.0.1:%d" % port,
           "--speedup", str(speedup)]
    if log_path:
        os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    out = open(log_path, "ab") if log_path else subprocess.DEVNULL
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop_process(proc, timeout_s=10.0):
    """SIGINT the process group, then SIGKILL if it does not exit."""
    if proc.poll() is not None:
        return proc.returncode
    try:
        os.killpg(proc.pid, signal.SIGINT)
        return proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait(5.0)


def roslaunch(args, timeout_s, log_path):
    """Run `roslaunch brov2_hybrid ...` to completion (the mission ends it); return its exit code."""
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(["roslaunch", "brov2_hybrid"] + list(args), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            return proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            stop_process(proc)
            raise AssertionError("roslaunch %s did not finish within %.0f s (log: %s)"
                                 % (" ".join(args), timeout_s, log_path))


def only_file(pattern):
    """The one file matching ``pattern`` in a folder of this run alone (no guessing by name or time)."""
    files = glob.glob(pattern)
    if len(files) != 1:
        raise AssertionError("expected exactly one file matching %s, found %s" % (pattern, sorted(files)))
    return files[0]


def scratch_dir(name):
    """A new folder for one test's outputs that no other run shares (under ROS_HOME / ~/.ros)."""
    base = os.path.join(os.environ.get("ROS_HOME", os.path.expanduser("~/.ros")), "brov2_rostest")
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix="%s_" % name, dir=base)
