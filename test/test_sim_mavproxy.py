"""Smoke test: MAVProxy (a standard ground station) flies brov2_sitl by RC override.

Skipped when MAVProxy is not installed (``pip install --no-deps MAVProxy`` plus pyserial).
"""
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from brov2_hybrid.vehicle.rc import load_rc_map
from brov2_hybrid.sim.config import load_link_config
from brov2_hybrid.sim.firmware import MANUAL
from brov2_hybrid.sim.simulator import Simulator



def _find_mavproxy():
    """mavproxy.py next to this interpreter (a venv's bin/) or on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "mavproxy.py")
    return beside if os.path.isfile(beside) else shutil.which("mavproxy.py")


MAVPROXY = _find_mavproxy()

pytestmark = pytest.mark.skipif(
    MAVPROXY is None, reason="MAVProxy is not installed (pip install --no-deps MAVProxy==1.8.75 pyserial)")


def test_mavproxy_mode_arm_and_rc_override_fly_the_vehicle(vehicle, tmp_path):
    link = load_link_config()
    link.address = "tcp:127.0.0.1:0"
    link.udp_out = None
    sim = Simulator(vehicle=vehicle, link_config=link, speedup=1.0, initial_eta=[0, 0, 5.0, 0, 0, 0])
    thread = threading.Thread(target=sim.run, daemon=True)
    thread.start()
    command = [MAVPROXY, "--master=tcp:127.0.0.1:%d" % sim.port, "--source-system=255",
               "--non-interactive", "--default-modules=mode,arm,rc,param", "--state-basedir=%s" % tmp_path,
               "--cmd=mode MANUAL; arm throttle; rc 4 1600"]
    proc = subprocess.Popen(command, cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    expected = vehicle.mixer().pwm(load_rc_map().u_from_pwm([1500, 1500, 1500, 1600, 1500, 1500]))
    try:
        deadline = time.time() + 30
        flying = False
        while time.time() < deadline and not flying:
            time.sleep(0.2)
            fw = sim.firmware
            flying = (fw.armed and fw.mode == MANUAL
                      and np.all(np.abs(np.array(fw.motor_pwm_us) - expected) <= 1.0)
                      and sim.plant.nu[5] > 0.3)
    finally:
        proc.terminate()
        try:
            output = proc.communicate(timeout=10)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            output = proc.communicate()[0]
        sim.stop()
        thread.join(5)
        sim.close()
    assert flying, "MAVProxy did not arm and yaw the vehicle; its output:\n%s" % output
