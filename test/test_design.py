"""brov2-analyze design: what a vehicle file can do, per omega_d (gains, delay margin, headroom)."""

import numpy as np
import pytest

from brov2_hybrid.analysis import cli
from brov2_hybrid.analysis import design
from brov2_hybrid.analysis.omega_limit import load_omega_limit_settings
from brov2_hybrid.control.gains import loop_margins
from brov2_hybrid.control.gains import pd_gains
from brov2_hybrid.sim.config import load_sim_options


def test_headroom_without_attitude_torque_is_the_first_thruster_limit(vehicle):
    """Full surge alone: s = min over thrusters of (its limit / its Eq. 9 force per full command),
    forward or reverse limit by the force's sign (the Heavy: 39.9 / 49.95 N, the reverse side binds)."""
    per_unit = vehicle.T_pinv @ (vehicle.tau_max * np.eye(6)[0])
    limits = np.where(per_unit > 0, vehicle.table.max_forward_n, vehicle.table.max_reverse_n)
    expected = min(1.0, float(np.min(limits[per_unit != 0] / np.abs(per_unit[per_unit != 0]))))
    assert design.translation_headroom(vehicle, np.zeros(3), 0) == pytest.approx(expected, abs=1e-9)
    assert expected < 1.0


def test_design_rows_are_the_one_knob_design(vehicle, controller_params):
    settings = load_omega_limit_settings()
    steps = design.load_design_steps_rad()
    rows = design.design_rows(vehicle, controller_params, (2.0, 3.0, 4.0, 6.0), steps, settings, 50.0,
                              load_sim_options())
    for r in rows:
        from brov2_hybrid.analysis.lti import controller_for
        c = controller_for(r["omega_d"], vehicle, controller_params)
        g = pd_gains(r["omega_d"], c.total_inertia, c.b_check, controller_params.kappa)
        assert [r["kp_%s" % a] for a in ("roll", "pitch", "yaw")] == pytest.approx(list(g.kp))
        margins = [loop_margins(g.kp[k], g.kd_total[k], c.total_inertia[k], c.b_check[k])["delay_margin_s"]
                   for k in range(3)]
        assert r["delay_margin_s"] == pytest.approx(min(margins))
        assert r["step_torque_ratio_yaw"] == pytest.approx(g.kp[2] * steps[2] / vehicle.tau_max[5])
    # Higher omega_d: smaller delay margin, never more headroom for translation.
    assert all(a["delay_margin_s"] > b["delay_margin_s"] for a, b in zip(rows, rows[1:]))
    for d in ("surge", "sway", "heave"):
        assert all(a["headroom_%s" % d] >= b["headroom_%s" % d] for a, b in zip(rows, rows[1:]))


def test_design_command_reads_any_vehicle_file(tmp_path, capsys):
    """The tool's subject is the user's own file (e.g. identified.yaml): a path works."""
    from brov2_hybrid import paths
    path = paths.params_path("vehicles", "bluerov2.yaml")
    assert cli.main(["design", "--vehicle", path, "--omega-d", "2,3", "--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "vehicle bluerov2" in out and (tmp_path / "design.csv").exists()
    assert "highest omega_d with the delay margin required" in out
