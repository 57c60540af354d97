"""placement:=onboard through the whole ROS pipeline on real ArduSub 4.5 SITL (docs/onboard.md "Flying it from ROS").

``scripts/run_dive.sh`` (what ``make run`` runs) flies a short dive with ``sim:=ardusub
placement:=onboard omega_d:=5``: ardusub_sitl installs the generated script, the mission arms and
needs the script's ACTIVE, mavlink_bridge sends each control_law tick's desired state down and sets
HYB_OMEGA_D, the logger writes dive_onboard_*.csv and the summary names the placement. The vehicle
must follow the desired attitude with the law in ArduSub: the summed IAE well below what a vehicle
that stayed where it started would score.

Without a build this test is skipped with one line saying so; with ``BROV2_REQUIRE_ARDUSUB=1``
(``.ci/run``) a missing build is a failure.
"""
import glob
import os
import sys

import numpy as np
import pytest

from brov2_hybrid.dive.dive_csv import write_dive_csv
from brov2_hybrid.physics.kinematics import wrap_angle
from brov2_hybrid.tick_log.logfile import PWM_COLUMNS, read_log

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OMEGA_D = 5.0                    # not controller.yaml's: the PARAM_SET must reach the script
#: The summed IAE must stay below this fraction of a vehicle that never moved (measured: 0.09, 22.8 of
#: 258 deg s, on a busy 2-core machine).
IAE_FRACTION = 0.35


def short_dive(path):
    """An 8 s dive at 50 Hz: yaw 0 -> 30 deg at 1 s, roll 10 deg from 4 to 6 s, surge 0.2 from 1 to 4 s."""
    t = np.arange(0.0, 8.0 + 1e-9, 0.02)
    eta = np.zeros((len(t), 3))
    eta[t >= 1.0, 2] = np.radians(30.0)
    eta[(t >= 4.0) & (t < 6.0), 0] = np.radians(10.0)
    u = np.zeros((len(t), 3))
    u[(t >= 1.0) & (t < 4.0), 0] = 0.2
    write_dive_csv(path, t, eta, u)
    return path


def test_a_dive_flown_by_the_onboard_script_through_the_ros_pipeline(tmp_path, ardusub_binary):
    from brov2_hybrid.sim.ardusub_sitl import free_instance
    from brov2_hybrid.analysis.onboard_pair import expected_run, fly, refusal
    runs = tmp_path / "runs"
    env = dict(os.environ, ROS_HOME=str(tmp_path), ROS_LOG_DIR=str(tmp_path / "log"), BROV2_RUNS_DIR=str(runs))
    args = ["sim:=ardusub", "placement:=onboard", "omega_d:=%g" % OMEGA_D, "instance:=%d" % free_instance(),
            "dive:=%s" % short_dive(str(tmp_path / "short.csv"))]
    done = fly(args, 400, env=env)        # as brov2-analyze onboard-pair flies make run
    sys.stdout.write("\n".join(line for line in done["output"].splitlines() if not line.startswith("setup:")) + "\n")
    assert done["exit_code"] == 0, done["output"][-4000:]
    assert "speed-up 1x" in done["output"]
    logs = glob.glob(str(runs / "dive_*" / "dive_onboard_*.csv"))
    assert len(logs) == 1, logs
    folder = os.path.dirname(logs[0])
    assert done["folder"] == folder
    summary = done["summary"]
    assert summary["placement"] == "onboard"
    # onboard-pair would score it: it flew the whole short dive, on board, at the omega_d asked, ACTIVE throughout
    placement, omega_d, duration_s = expected_run(args)
    assert (placement, omega_d, duration_s) == ("onboard", OMEGA_D, 8.0)
    assert refusal(done, placement, omega_d, duration_s, 1.0) is None, summary
    # the script's own rate reports, as the bridge logged them over the run (onboard-pair's rate column)
    assert done["script"] is not None and done["script"]["reports"] >= 5, done["script"]
    print("onboard launch: the script reports %s" % done["script"])
    assert "placement onboard: the law ran on board" in done["output"]
    with open(os.path.join(folder, "roslaunch.log")) as handle:
        launch_log = handle.read()
    assert "thruster_allocation" not in launch_log                       # no topside command path
    assert "the vehicle confirms HYB_OMEGA_D = %g rad/s" % OMEGA_D in launch_log
    assert "the on-board script flies the vehicle" in launch_log

    log = read_log(logs[0])
    active = np.asarray(log["mode"]) == "ACTIVE"
    pwm = np.column_stack([log[c] for c in PWM_COLUMNS])[active]
    moved = np.abs(pwm[:, :8] - 1500.0).max(axis=1)
    assert np.count_nonzero(moved > 20) > 0.3 * len(moved), "the script's motor outputs should move"
    assert np.all(np.isnan(log["u_surge"][active]))                      # no ThrusterCommand came

    axes = ("roll", "pitch", "yaw")
    desired = np.column_stack([log["%s_d_rad" % a] for a in axes])[active]
    attitude = np.column_stack([log["%s_rad" % a] for a in axes])[active]
    t = np.asarray(log["time_s"])[active]
    dt = np.diff(t, prepend=t[0])
    iae = np.degrees(np.abs(wrap_angle(desired - attitude)) * dt[:, None]).sum()
    still = np.degrees(np.abs(wrap_angle(desired - attitude[0])) * dt[:, None]).sum()
    iae_summary = sum(summary["iae_%s_deg_s" % a] for a in axes)
    print("onboard launch: summed IAE %.1f deg s (summary %.1f), %.1f deg s if the vehicle had not moved"
          % (iae, iae_summary, still))
    assert still > 50.0                                                  # the dive asks for real turns
    assert iae_summary < IAE_FRACTION * still
