"""Real ArduSub (4.5 SITL on our physics, scripts/build_ardusub.sh) through the real MAVROS
(mavros_node 1.x, scripts/build_mavros.sh): the stack a BlueROV2 owner flies.

The rostest ``test/ardusub/yaw_step_ardusub_mavros.test`` flies the yaw step of
``yaw_step.test`` with ``use_mavros:=true``: mavros_streams must get ArduSub's streams going
through MAVROS (a fresh ArduSub sends none unasked), the mission must read RC_OVERRIDE_TIME
through MAVROS's parameter services, tell stock firmware from the motor outputs (firmware
auto-detection) and the step must settle as it does through the package's own bridge.

Without either build these tests are skipped with one line saying so; with
``BROV2_REQUIRE_MAVROS=1`` (``.ci/run``) a missing build is a failure.
"""
import os
import subprocess
import sys

import pytest

from brov2_hybrid.errors import Brov2Error

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _missing(why):
    if os.environ.get("BROV2_REQUIRE_MAVROS") == "1":
        pytest.fail("BROV2_REQUIRE_MAVROS=1 but %s" % why)
    pytest.skip("real MAVROS tests: %s" % why)


def _builds():
    """Skip (or fail, BROV2_REQUIRE_MAVROS=1) unless ArduSub SITL and mavros_node are at hand."""
    from brov2_hybrid.sim.ardusub_sitl import find_ardusub
    try:
        find_ardusub()
    except Brov2Error as exc:
        _missing(str(exc))
    import roslib.packages
    import rospkg
    try:
        node = roslib.packages.find_node("mavros", "mavros_node")
    except rospkg.ResourceNotFound:
        node = None
    if not node:
        _missing("no mavros_node on ROS_PACKAGE_PATH (build it: make mavros; then source scripts/env.sh)")


def test_yaw_step_and_firmware_detection_through_real_mavros_on_real_ardusub(tmp_path):
    """rostest yaw_step_ardusub_mavros.test: streams requested through MAVROS, firmware told as stock
    from the motor outputs, the step settles and agrees with the in-process loop."""
    from brov2_hybrid.sim.ardusub_sitl import free_instance
    _builds()
    env = dict(os.environ, ROS_HOME=str(tmp_path), ROS_LOG_DIR=str(tmp_path / "log"))
    test_file = os.path.join(REPO, "test", "ardusub", "yaw_step_ardusub_mavros.test")
    done = subprocess.run(["rostest", "--text", test_file, "instance:=%d" % free_instance()],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=400, env=env)
    summary = [line for line in done.stdout.splitlines()
               if "yaw step:" in line or "SUMMARY" in line or "FAIL" in line or "ERROR" in line]
    sys.stdout.write("\n".join(summary) + "\n")
    assert done.returncode == 0, done.stdout[-4000:]
    assert "* RESULT: SUCCESS" in done.stdout
    # the nodes' own logs: the streams were asked for through MAVROS and arrived
    logs = "".join(open(os.path.join(root, f), errors="replace").read()
                   for root, _, files in os.walk(str(tmp_path / "log")) for f in files if f.endswith(".log"))
    assert "mavros_streams: requesting ATTITUDE_QUATERNION (id 31)" in logs
    assert "mavros_streams: the vehicle sends ATTITUDE_QUATERNION" in logs
    assert "RC_OVERRIDE_TIME is 1 s" in logs
