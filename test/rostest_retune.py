#!/usr/bin/env python3
"""rostest 2: changing omega_d with dynamic_reconfigure mid-run changes the gains in the
status and the response.

Two yaw steps (0 -> 90 deg at 1 s, back to 0 at 16 s). Between them the test sets
omega_d_rad_s = 2.0 on /control_law with dynamic_reconfigure's Python client, in
process: the same set_parameters service call that rqt_reconfigure and the README's
`rosrun dynamic_reconfigure dynparam set /control_law omega_d_rad_s 2.0` make (dynparam
is that client behind a command line, whose start-up alone takes seconds).
The status must then report omega_d = 2 and k_p = omega_d^2 (I_zz + N_r) from the
vehicle parameters, and the second step must rise markedly slower (LTI: 2.5x).
"""
import math
import sys
import unittest

import numpy as np
import rospy
import rostest
from dynamic_reconfigure.client import Client

import rostest_common as rc
from brov2_hybrid.analysis import metrics
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

OMEGA_1, OMEGA_2 = 3.0, 2.0
MIN_RISE_RATIO = 1.5


def rise(a, t_from, t_to, start_deg, target_deg):
    sel = (a["t"] >= t_from - 0.5) & (a["t"] < t_to)
    t = a["t"][sel] - t_from
    yaw = np.degrees(np.unwrap(a["attitude"][sel, 2]))
    return metrics.rise_time(t, yaw, target_deg, 0.0, initial=start_deg)


class Retune(unittest.TestCase):
    def test_dynparam_changes_gains_and_response(self):
        status = rc.StatusRecorder()
        topics = rc.autopilot_topics()
        rc.wait_engaged(topics)
        rc.wait_for(lambda: status.last() is not None and status.last().desired_rad[2] > math.radians(45), 60.0,
                    "the first yaw step")
        t_seen = status.last().header.stamp.to_sec()   # a little after the step: when this test saw it
        rc.wait_for(lambda: status.last().header.stamp.to_sec() > t_seen + 3.0, 60.0, "3 s after the first step")
        # == `rosrun dynamic_reconfigure dynparam set /control_law omega_d_rad_s 2.0` (README)
        client = Client("/control_law", timeout=10.0)
        try:
            config = client.update_configuration({"omega_d_rad_s": OMEGA_2})
        finally:
            client.close()
        self.assertEqual(config["omega_d_rad_s"], OMEGA_2, "the control law did not accept omega_d = 2")
        rc.wait_for(lambda: abs(status.last().omega_d_rad_s - OMEGA_2) < 1e-9, 10.0, "omega_d = 2 in the status")
        rc.wait_dive_done(topics, 120.0)
        a = status.arrays()

        v = load_vehicle().body
        inertia_yaw = v.inertia_kg_m2[2] + v.added_mass[5]
        # the step's own tick (the time this test noticed it lags by its polling and scheduling,
        # which would shorten rise1 and flatter the ratio below)
        t_step1 = a["t"][int(np.argmax(a["desired"][:, 2] > math.radians(45)))]
        before = a["omega_d"] == OMEGA_1
        after = a["omega_d"] == OMEGA_2
        self.assertTrue(before.any() and after.any())
        np.testing.assert_allclose(a["kp"][before, 2], OMEGA_1 ** 2 * inertia_yaw, rtol=1e-9)
        np.testing.assert_allclose(a["kp"][after, 2], OMEGA_2 ** 2 * inertia_yaw, rtol=1e-9)

        down = np.flatnonzero((a["desired"][:, 2] < math.radians(45)) & (a["t"] > t_step1))
        self.assertGreater(len(down), 0, "the second step was not seen")
        t_step2 = a["t"][down[0]]
        self.assertTrue(a["omega_d"][down[0]] == OMEGA_2, "omega_d changed too late")
        rise1 = rise(a, t_step1, t_step2, 0.0, 90.0)
        rise2 = rise(a, t_step2, a["t"][-1] + 1.0, 90.0, 0.0)
        rospy.loginfo("retune: rise time %.2f s at omega_d %.1f, %.2f s at omega_d %.1f", rise1, OMEGA_1, rise2, OMEGA_2)
        self.assertTrue(np.isfinite(rise1) and np.isfinite(rise2), "a step did not reach 90 %%: %s %s" % (rise1, rise2))
        self.assertGreater(rise2, MIN_RISE_RATIO * rise1)


if __name__ == "__main__":
    rospy.init_node("rostest_retune")
    rostest.rosrun("brov2_hybrid", "retune", Retune, sys.argv)
