"""launch/mavros.launch and the use_mavros path of hybrid_autopilot.launch, and catkin_lint
with and without MAVROS installed.

The real MAVROS cannot be installed here. These tests build a FAKE ``mavros`` package in
a temporary folder (test scaffolding only, never installed or committed): a package.xml,
the two YAML files mavros.launch loads, and a ``mavros_node`` stub that records when it
started and whether the vehicle's TCP port accepted a connection at that moment, then
exits (which ends the launch: the node is required). The real roslaunch, rosrun and
scripts/wait_for_vehicle run unchanged; a private ROS master is started on a free port.

The fake is laid out as an installed catkin prefix (``.catkin``, ``share/mavros``,
``lib/mavros/mavros_node``) put FIRST on both CMAKE_PREFIX_PATH and ROS_PACKAGE_PATH:
roslaunch finds a node through catkin_find (the first prefix on CMAKE_PREFIX_PATH that
holds the package) before ROS_PACKAGE_PATH, so where the real MAVROS is installed
(/opt/ros/noetic/lib/mavros/mavros_node) a fake only on ROS_PACKAGE_PATH would be
shadowed. ``installed_mavros`` simulates such an install behind the fake to prove it.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from brov2_hybrid.link.fcu_address import free_tcp_port

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(shutil.which("roslaunch") is None or shutil.which("rosrun") is None,
                                reason="ROS (roslaunch, rosrun) not on PATH: source scripts/env.sh")

STUB = r'''#!{python}
"""FAKE mavros_node (test scaffolding): record the start, probe the vehicle port, exit."""
import json, os, socket, sys, time
started = time.time()
port = int(os.environ["FAKE_MAVROS_PORT"])
try:
    socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
    probe = "accepted"
except OSError as exc:
    probe = str(exc)
with open(os.environ["FAKE_MAVROS_RECORD"], "w") as out:
    json.dump({{"started": started, "probe": probe, "argv": sys.argv[1:]}}, out)
'''

PACKAGE_XML = """<?xml version="1.0"?>
<package format="2">
  <name>mavros</name><version>1.0.0</version>
  <description>FAKE mavros for brov2_hybrid's tests (scaffolding only)</description>
  <maintainer email="brov2-hybrid@example.com">test</maintainer><license>BSD</license>
  <buildtool_depend>catkin</buildtool_depend>
</package>
"""



def _mavros_prefix(prefix, node_text):
    """An installed catkin prefix holding a package ``mavros`` whose mavros_node is node_text."""
    pkg = prefix / "share" / "mavros"
    (pkg / "launch").mkdir(parents=True)
    (prefix / ".catkin").write_text("")
    (pkg / "package.xml").write_text(PACKAGE_XML)
    (pkg / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.0.2)\nproject(mavros)\nfind_package(catkin REQUIRED)\ncatkin_package()\n")
    (pkg / "launch" / "apm_pluginlists.yaml").write_text("plugin_blacklist: [actuator_control, ftp]\n")
    (pkg / "launch" / "apm_config.yaml").write_text("conn:\n  timeout: 10.0\n")
    node = prefix / "lib" / "mavros" / "mavros_node"
    node.parent.mkdir(parents=True)
    node.write_text(node_text)
    node.chmod(0o755)
    return prefix


@pytest.fixture
def fake_mavros(tmp_path):
    """The FAKE mavros as an installed catkin prefix; returns (prefix, record file)."""
    return _mavros_prefix(tmp_path / "fake", STUB.format(python=sys.executable)), tmp_path / "record.json"


@pytest.fixture
def installed_mavros(tmp_path, monkeypatch):
    """Simulates the real MAVROS installed in the ROS underlay (as /opt/ros/noetic after
    sourcing its setup.bash): a prefix on CMAKE_PREFIX_PATH and ROS_PACKAGE_PATH whose
    mavros_node must never run. Returns its node's path."""
    real = _mavros_prefix(tmp_path / "underlay",
                          "#!/bin/sh\necho REAL mavros_node ran >&2\nexit 7\n")
    for var, entry in (("CMAKE_PREFIX_PATH", real), ("ROS_PACKAGE_PATH", real / "share")):
        monkeypatch.setenv(var, os.environ.get(var, "") + os.pathsep + str(entry))
    return real / "lib" / "mavros" / "mavros_node"


def _env(fake_prefix, tmp_path, master_port=None):
    env = dict(os.environ)
    env["ROS_PACKAGE_PATH"] = str(fake_prefix / "share") + os.pathsep + env.get("ROS_PACKAGE_PATH", "")
    env["CMAKE_PREFIX_PATH"] = str(fake_prefix) + os.pathsep + env.get("CMAKE_PREFIX_PATH", "")
    env["ROS_HOME"] = str(tmp_path / "ros_home")
    env["ROS_LOG_DIR"] = str(tmp_path / "ros_log")
    if master_port:
        env["ROS_MASTER_URI"] = "http://127.0.0.1:%d" % master_port
    return env


@pytest.mark.parametrize("underlay", ["no MAVROS", "MAVROS installed"])
def test_hybrid_launch_with_mavros_wraps_mavros_node(fake_mavros, tmp_path, request, underlay):
    if underlay == "MAVROS installed":
        request.getfixturevalue("installed_mavros")
    fake_pkgs, _ = fake_mavros
    env = _env(fake_pkgs, tmp_path)
    base = ["roslaunch", "brov2_hybrid", "hybrid_autopilot.launch", "use_mavros:=true", "vehicle_wait_s:=12"]
    nodes = subprocess.run(["roslaunch", "--nodes"] + base[1:], env=env, check=True,
                           stdout=subprocess.PIPE, universal_newlines=True, timeout=60).stdout.split()
    assert "/mavros" in nodes and "/mavros_depth" in nodes and "/brov2_sitl" in nodes
    assert "/mavlink_bridge" not in nodes
    args = subprocess.run(["roslaunch", "--args", "/mavros"] + base[1:], env=env, check=True,
                          stdout=subprocess.PIPE, universal_newlines=True, timeout=60).stdout.split()
    cut = args.index("--")
    assert args[:cut] == ["rosrun", "brov2_hybrid", "wait_for_vehicle", "--url", "tcp://127.0.0.1:5760",
                          "--timeout-s", "12"]
    assert args[cut + 1] == str(fake_pkgs / "lib" / "mavros" / "mavros_node")
    # without MAVROS: the bridge, no mavros_depth
    nodes = subprocess.run(["roslaunch", "--nodes", "brov2_hybrid", "hybrid_autopilot.launch"], env=env,
                           check=True, stdout=subprocess.PIPE, universal_newlines=True, timeout=60).stdout.split()
    assert "/mavlink_bridge" in nodes and "/mavros" not in nodes and "/mavros_depth" not in nodes


def _descendants(pid):
    """Process ids below pid (roslaunch starts the master and nodes in their own sessions)."""
    found, todo = [], [pid]
    while todo:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(todo.pop())], stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
        children = [int(p) for p in out.split()]
        found.extend(children)
        todo.extend(children)
    return found


def _finish(proc, log_path, timeout_s):
    """Output of roslaunch once it ends; after timeout_s end it (SIGINT, then SIGKILL to it
    and everything it started) and fail."""
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        children = _descendants(proc.pid)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        pytest.fail("roslaunch did not end within %.0f s:\n%s" % (timeout_s, log_path.read_text()))
    return log_path.read_text()


def _start(cmd, env, tmp_path):
    log_path = tmp_path / "roslaunch.out"
    with open(str(log_path), "w") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    return proc, log_path


def _roslaunch(fake_pkgs, tmp_path, vehicle_port, extra):
    master_port = free_tcp_port()
    env = _env(fake_pkgs, tmp_path, master_port)
    env["FAKE_MAVROS_PORT"] = str(vehicle_port)
    env["FAKE_MAVROS_RECORD"] = str(tmp_path / "record.json")
    cmd = ["roslaunch", "-p", str(master_port), "brov2_hybrid", "mavros.launch",
           "fcu_url:=tcp://127.0.0.1:%d" % vehicle_port] + extra
    return _start(cmd, env, tmp_path)


def test_mavros_node_starts_only_after_the_vehicle_listens(fake_mavros, installed_mavros, tmp_path):
    fake_pkgs, record = fake_mavros
    port = free_tcp_port()
    delay_s = 4.0
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening = {}

    def listen_later():
        time.sleep(delay_s)
        listener.bind(("127.0.0.1", port))
        listener.listen(8)
        listening["t"] = time.time()

    proc, log_path = _roslaunch(fake_pkgs, tmp_path, port, ["vehicle_wait_s:=60"])
    thread = threading.Thread(target=listen_later)
    thread.start()
    try:
        output = _finish(proc, log_path, 120)
    finally:
        thread.join()
        listener.close()
    assert record.exists(), "fake mavros_node never started:\n" + output
    assert "REAL mavros_node ran" not in output           # the installed one stays shadowed
    started = json.loads(record.read_text())
    assert started["started"] >= listening["t"], output
    assert started["probe"] == "accepted"
    assert "waiting up to 60 s for a TCP server accepting connections on 127.0.0.1:%d" % port in output
    assert "reachable after" in output


def test_vehicle_that_never_listens_ends_the_launch_naming_it(fake_mavros, tmp_path):
    fake_pkgs, record = fake_mavros
    port = free_tcp_port()
    proc, log_path = _roslaunch(fake_pkgs, tmp_path, port, ["vehicle_wait_s:=1"])
    output = _finish(proc, log_path, 120)
    assert not record.exists(), "mavros_node started although nobody listened"
    assert "vehicle tcp://127.0.0.1:%d not reachable: waited" % port in output
    assert "not starting mavros_node" in output
    assert "REQUIRED process [mavros" in output  # roslaunch ends the whole launch


def test_full_launch_with_simulator_starts_mavros_after_brov2_sitl_listens(fake_mavros, tmp_path):
    """The issue's case: hybrid_autopilot.launch sim:=true use_mavros:=true (tcp://)."""
    fake_pkgs, record = fake_mavros
    port, master_port = free_tcp_port(), free_tcp_port()
    env = _env(fake_pkgs, tmp_path, master_port)
    env["FAKE_MAVROS_PORT"] = str(port)
    env["FAKE_MAVROS_RECORD"] = str(record)
    cmd = ["roslaunch", "-p", str(master_port), "brov2_hybrid", "hybrid_autopilot.launch",
           "sim:=true", "use_mavros:=true", "fcu_url:=tcp:127.0.0.1:%d" % port,
           "mavros_fcu_url:=tcp://127.0.0.1:%d" % port, "vehicle_wait_s:=60",
           "log_dir:=%s" % (tmp_path / "logs")]
    proc, log_path = _start(cmd, env, tmp_path)
    output = _finish(proc, log_path, 120)
    assert record.exists(), "fake mavros_node never started:\n" + output
    assert json.loads(record.read_text())["probe"] == "accepted", output
    assert "vehicle tcp://127.0.0.1:%d reachable after" % port in output


def _catkin_lint(paths, env):
    return subprocess.run(["catkin_lint", "-W2", "--strict", "--offline"] + paths, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)


@pytest.mark.skipif(shutil.which("catkin_lint") is None, reason="catkin_lint not installed")
@pytest.mark.parametrize("distro", ["Debian", "noetic"])
def test_catkin_lint_clean_with_and_without_mavros(fake_mavros, tmp_path, distro):
    """The run_tests.py catkin_lint stage passes on Debian without MAVROS and on a
    machine where mavros is installed (it then checks launch files' exec_depends)."""
    fake_pkgs, _ = fake_mavros
    link = tmp_path / "lint" / "brov2_hybrid"
    link.parent.mkdir()
    link.symlink_to(REPO)
    paths = [str(link), os.path.join(REPO, "third_party", "mavros_msgs")]
    without = dict(os.environ, ROS_DISTRO=distro)
    with_mavros = _env(fake_pkgs, tmp_path)
    with_mavros["ROS_DISTRO"] = distro
    result = _catkin_lint(paths, without)
    assert result.returncode == 0, result.stdout
    result = _catkin_lint(paths, with_mavros)
    assert result.returncode == 0, result.stdout
    # and the check is live: a launch file running an undeclared package is reported
    bad = tmp_path / "lint2" / "brov2_hybrid"
    shutil.copytree(REPO, str(bad), ignore=shutil.ignore_patterns(".ws", ".venv", "out", ".git", "data"))
    xml = (bad / "package.xml").read_text().replace("<exec_depend>mavros</exec_depend>", "")
    (bad / "package.xml").write_text(xml)
    result = _catkin_lint([str(bad), paths[1]], with_mavros)
    assert result.returncode != 0 and "exec_depend on 'mavros'" in result.stdout
