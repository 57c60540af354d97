"""hybrid_autopilot.launch's placement argument: which nodes run, with which arguments and parameters.

The launch file is resolved with roslaunch's own Python API (``roslaunch.config.load_config_default``,
what ``roslaunch --nodes`` / ``--args`` print): nothing is started. placement:=onboard
(docs/onboard.md "Flying it from ROS") drops thruster_allocation (no topside command path to the
motors), installs the script in the SITL (``ardusub_sitl --onboard``) without lockstep, and tells the
bridge, the mission and the logger; the combinations that cannot fly on board are refused while
the file is read, naming the reason.
"""
import os
import shutil
import subprocess

import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.sim import ardusub_sitl

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCH = os.path.join(REPO, "launch", "hybrid_autopilot.launch")
roslaunch = pytest.importorskip("roslaunch", reason="ROS not on the path: source scripts/env.sh")
needs_package = pytest.mark.skipif(shutil.which("rospack") is None or subprocess.run(
    ["rospack", "find", "brov2_hybrid"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0,
    reason="brov2_hybrid not on ROS_PACKAGE_PATH: source scripts/env.sh")


def resolve(*args):
    """{node name: Node} and the parameters of the launch file with ``args`` (name:=value)."""
    config = roslaunch.config.load_config_default([(LAUNCH, list(args))], None, verbose=False, assign_machines=False)
    return {n.name: n for n in config.nodes}, {k: p.value for k, p in config.params.items()}


@needs_package
def test_topside_default_flies_through_thruster_allocation():
    nodes, params = resolve()
    assert {"brov2_sitl", "mavlink_bridge", "control_law", "thruster_allocation", "mission", "logger"} <= set(nodes)
    for node in ("mavlink_bridge", "mission", "logger"):
        assert params["/%s/placement" % node] == "topside"


@needs_package
def test_topside_on_ardusub_runs_in_lockstep_without_the_script():
    nodes, _ = resolve("sim:=ardusub")
    assert "thruster_allocation" in nodes
    args = nodes["ardusub_sitl"].args.split()
    assert "--lockstep" in args and "--onboard" not in args


@needs_package
@pytest.mark.parametrize("sim", ["ardusub", "false"])
def test_onboard_has_no_topside_command_path_and_tells_every_node(sim):
    nodes, params = resolve("sim:=%s" % sim, "placement:=onboard")
    assert "thruster_allocation" not in nodes
    assert {"mavlink_bridge", "control_law", "mission", "logger", "csv_reader"} <= set(nodes)
    assert "brov2_sitl" not in nodes
    for node in ("mavlink_bridge", "mission", "logger", "control_law"):
        assert params["/%s/placement" % node] == "onboard"
    if sim == "ardusub":
        args = nodes["ardusub_sitl"].args.split()
        assert "--onboard" in args and "--lockstep" not in args
    else:
        assert "ardusub_sitl" not in nodes


@needs_package
def test_omega_d_of_the_launch_reaches_control_law_whose_status_the_bridge_sends_down():
    _, params = resolve("sim:=ardusub", "placement:=onboard", "omega_d:=8")
    assert params["/control_law/omega_d_rad_s"] == 8.0


@needs_package
@pytest.mark.parametrize("args, reason", [
    (("placement:=onboard",), "brov2_sitl cannot run Lua"),
    (("placement:=onboard", "sim:=true"), "brov2_sitl cannot run Lua"),
    (("placement:=onboard", "sim:=ardusub", "use_mavros:=true"), "MAVROS has none"),
    (("placement:=elsewhere",), "placement is topside or onboard"),
    (("placement:=onboard", "sim:=ardusub", "depth_hold:=true"), "does not run the depth hold"),
])
def test_what_cannot_fly_on_board_is_refused_when_the_file_is_read(args, reason):
    with pytest.raises(roslaunch.core.RLException, match=reason):
        resolve(*args)


def test_the_sitl_refuses_the_script_with_lockstep():
    """lockstep:=true placement:=onboard: the physics would wait for thruster commands nobody sends."""
    args = ardusub_sitl.build_arg_parser().parse_args(["--onboard", "--lockstep"])
    with pytest.raises(Brov2Error, match="--onboard with --lockstep"):
        ardusub_sitl.sitl_from_args(args, controller=object())


def test_make_run_refuses_onboard_on_our_simulator_before_starting_anything(tmp_path):
    done = subprocess.run(["bash", os.path.join(REPO, "scripts", "run_dive.sh"), "placement:=onboard"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60,
                          env=dict(os.environ, BROV2_RUNS_DIR=str(tmp_path)))
    assert done.returncode == 2
    assert "needs sim:=ardusub" in done.stderr and "brov2_sitl" in done.stderr
    assert os.listdir(str(tmp_path)) == []                       # no run folder: nothing flew
