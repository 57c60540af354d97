"""``make run`` (scripts/run_dive.sh) exits with the mission's exit code.

roslaunch exits 0 whatever its required nodes return; the mission leaves its code in
the run folder (launch arg exit_code_file) and run_dive.sh exits with it. Flown for
real (about 15 s): the simulator runs stock ArduSub's mixer while firmware:=quantitative
is configured, so the mission refuses the run with exit code 5.
"""
import os
import shutil
import subprocess

import pytest

from brov2_hybrid.link.fcu_address import free_tcp_port
from brov2_hybrid.mission import exit_codes as ec

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(shutil.which("roslaunch") is None,
                                reason="ROS (roslaunch) not on PATH: source scripts/env.sh")



def test_refused_firmware_makes_run_dive_exit_5(tmp_path):
    env = dict(os.environ, BROV2_RUNS_DIR=str(tmp_path), ROS_HOME=str(tmp_path / "ros_home"),
               ROS_LOG_DIR=str(tmp_path / "ros_log"))
    done = subprocess.run(["bash", os.path.join(REPO, "scripts", "run_dive.sh"), "mixer:=stock",
                           "firmware:=quantitative", "fcu_url:=tcp:127.0.0.1:%d" % free_tcp_port()],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=150)
    assert done.returncode == ec.EXIT_FIRMWARE, done.stdout[-3000:]
    run, = [p for p in tmp_path.iterdir() if p.name.startswith("dive_")]
    assert ec.read_exit_code(str(run / "mission_exit_code")) == ec.EXIT_FIRMWARE
    assert "make run: exit 5: the mission ended with code 5 (%s)" % ec.EXIT_MEANINGS[5] in done.stdout
    log = (run / "roslaunch.log").read_text()
    assert "parameter 'firmware' is 'quantitative'" in log
    assert "dive finished" not in log                     # stopped mid-dive is not "finished"
