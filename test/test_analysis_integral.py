"""Integral action analysis (LTI design numbers) and the robustness sweep (issue 10)."""
import csv
import math
import os
import re
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid import paths
from brov2_hybrid.analysis import cli, lti
from brov2_hybrid.analysis.integral import lti_row, pid_denominator, plateau_dive
from brov2_hybrid.analysis.robustness import (RobustJob, draw_samples, draw_tethered_samples, perturbed_vehicle,
                                              run_robust_job)
from brov2_hybrid.analysis.settings import load_analysis_settings
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


def test_lti_design_numbers_match_the_analytic_pid(vehicle, controller_params):
    c = lti.controller_for(3.0, vehicle, controller_params)
    r = lti_row(c, 0.3, 60.0)
    inertia, b = c.total_inertia[2], c.b_check[2]
    kp, kd = c.gains.kp[2], c.gains.kd_total[2]
    ki = 0.3 * 3.0 * kp
    assert r["ki"] == pytest.approx(ki)
    np.testing.assert_allclose(pid_denominator(c), [inertia, b + kd, kp, ki])
    # Every pole of the characteristic polynomial solves it, all stable.
    for real, imag in r["poles"]:
        s = complex(real, imag)
        assert abs(inertia * s ** 3 + (b + kd) * s ** 2 + kp * s + ki) < 1e-9 * kp
        assert real < 0
    assert r["overshoot_pct"] == pytest.approx(0.0, abs=1e-6)     # Eq. 22 is overdamped at kappa = 20
    # A plain PID on eta2d - eta2 makes the loop type 2: the step error integrates to 0, so it must overshoot.
    assert r["plain_pid_overshoot_pct"] > 5.0


def test_plateau_dive_holds_full_linear_commands_at_the_attitudes():
    dive, segments = plateau_dive(math.radians(30), 5.0, 10.0)
    assert len(segments) == 12
    for start, end, roll, pitch, dof in segments:
        k = (dive.t_s >= start) & (dive.t_s < end - 1e-9)
        assert np.all(dive.u_linear[k, dof] == 1.0)
        assert np.allclose(np.abs(dive.eta2d_rad[k, :2]), math.radians(30))


def test_samples_are_seeded_and_perturb_the_plant_within_bounds():
    s = load_analysis_settings().robustness
    a, b = draw_samples(s, 5), draw_samples(s, 5)
    assert a == b
    vehicle = load_vehicle()
    for smp in a:
        v, p = vehicle.body, perturbed_vehicle(vehicle, smp).body
        assert abs(p.mass_kg / v.mass_kg - 1) <= s.mass_fraction
        assert abs((p.buoyancy_n - p.weight_n) - (v.buoyancy_n - v.weight_n)) <= s.net_buoyancy_n
        h0, h = v.r_cb_m[2] - v.r_cg_m[2], p.r_cb_m[2] - p.r_cg_m[2]
        assert abs(h / h0 - 1) <= s.cb_height_fraction + 1e-12
        assert 0 <= smp.latency_s <= s.latency_max_s
        assert math.hypot(*smp.current_ned_m_s[:2]) <= s.current_max_m_s


def test_tethered_samples_are_seeded_apart_and_fly_on_a_tether():
    """The tethered sweep's plants come from their own generator (the untethered samples do not move
    when tether_samples changes), each with a tether length within tether_length_m; its job flies the
    tether: the same plant off the tether has a far smaller plateau-dive error."""
    settings = load_analysis_settings()
    s = settings.robustness
    tethered = draw_tethered_samples(s, 3)
    assert tethered == draw_tethered_samples(s, 3) and len(tethered) == 3
    assert all(s.tether_length_m[0] <= smp.tether_length_m <= s.tether_length_m[1] for smp in tethered)
    assert all(smp.tether_length_m == 0.0 for smp in draw_samples(s, 3))
    assert draw_samples(s, 3) == draw_samples(replace(s, tether_samples=s.tether_samples + 7), 3)
    on = run_robust_job(RobustJob(settings.loop, s, tethered[0], 3.0, False, settings.step.settle_band))
    off = run_robust_job(RobustJob(settings.loop, s, replace(tethered[0], tether_length_m=0.0), 3.0, False,
                                   settings.step.settle_band))
    assert on["tether_length_m"] == tethered[0].tether_length_m and off["tether_length_m"] == 0.0
    assert on["dive_iae_deg_s"] > 2.0 * off["dive_iae_deg_s"]


@pytest.mark.parametrize("old, new, key", [
    ("  samples: 1000 ", "  samples: 0 ", "robustness.samples"),
    ("  tether_length_m: [10.0, 50.0]", "  tether_length_m: [50.0, 10.0]", "robustness.tether_length_m"),
    ("  mass_fraction: 0.2 ", "  mass_fraction: -0.2 ", "robustness.mass_fraction"),
    ("  measure_fraction: 0.3", "  measure_fraction: 1.3", "integral.measure_fraction"),
    ("  plateau_s: 15.0", "  plateau_s: .nan", "integral.plateau_s")])
def test_integral_and_robustness_sections_are_checked_like_the_others(tmp_path, old, new, key):
    """The integral and robustness sections load with the rest of analysis.yaml (``--params``
    reaches them too); a bad value is a ParameterError naming file:section.key."""
    src = open(paths.params_path("analysis.yaml")).read()
    assert src.count(old) == 1
    bad = tmp_path / "analysis.yaml"
    bad.write_text(src.replace(old, new))
    with pytest.raises(ParameterError, match="%s:%s" % (re.escape(str(bad)), re.escape(key))):
        load_analysis_settings(str(bad))


def _rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_robustness_cli_is_reproducible(tmp_path):
    outs = []
    for k in range(2):
        out = str(tmp_path / ("r%d" % k))
        assert cli.main(["robustness", "--samples", "1", "--omega-d", "3", "--out", out,
                         "--jobs", "1" if k == 0 else "2", "--quiet"]) == 0
        outs.append(_rows(os.path.join(out, "robustness_runs.csv")))
    assert outs[0] == outs[1]
    assert {r["law"] for r in outs[0]} == {"PD", "PD+I"}
    assert os.path.getsize(os.path.join(str(tmp_path / "r0"), "robustness.png")) > 0
    summary = _rows(os.path.join(str(tmp_path / "r0"), "robustness_summary.csv"))
    assert {"settling_median_lo_s", "settling_median_hi_s", "iae_median_deg_s", "iae_median_lo_deg_s"} <= set(summary[0])


def test_robustness_statistics_give_the_medians_interval():
    """Each summary cell: median, its 95 % sign-test interval (n = 10: x_(2)..x_(9)), p90, max."""
    from brov2_hybrid.analysis import robustness
    st = robustness._stats([float(v) for v in range(1, 11)] + [float("nan"), None])
    assert st == {"median": 5.5, "median_lo": 2.0, "median_hi": 9.0, "p90": pytest.approx(9.1), "max": 10.0, "n": 10}
    assert robustness._cell(st, "%.1f") == "5.5 [2.0, 9.0] / 9.1 / 10.0"
    assert robustness._cell(robustness._stats([1.0, 2.0, 4.0]), "%.1f") == "2.0 [n/a] / 3.6 / 4.0"


def test_integral_cli_pd_plus_i_holds_attitude(tmp_path):
    out = str(tmp_path)
    assert cli.main(["integral", "--omega-d", "3", "--out", out, "--jobs", "2", "--quiet"]) == 0
    rows = _rows(os.path.join(out, "integral_plateaus.csv"))
    surge = [r for r in rows if r["plateau"] == "surge"]
    pd = max(max(float(r["roll_err_deg"]), float(r["pitch_err_deg"])) for r in surge if r["law"] == "PD")
    pdi = max(max(float(r["roll_err_deg"]), float(r["pitch_err_deg"])) for r in surge if r["law"] == "PD+I")
    assert pd > 2.0 and pdi < 1.0
    steps = _rows(os.path.join(out, "integral_steps.csv"))
    assert all(float(r["overshoot_pct"]) <= 5.0 for r in steps if r["law"] == "PD+I")
