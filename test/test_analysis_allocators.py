"""brov2-analyze allocators: the aggressive dive, the per-run figures, the vehicle copies, end to end."""
import csv
import math
import os

import numpy as np
import pytest

from brov2_hybrid.analysis import allocators as al
from brov2_hybrid.analysis.context import Context
from brov2_hybrid.analysis.runner import Runner
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.vehicle.saturating_allocation import SaturatingAllocator
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


@pytest.fixture(scope="module")
def settings():
    return al.load_allocator_settings()


def test_the_dive_is_aggressive_as_specified(settings):
    dive, plateaus = al.aggressive_dive(settings)
    assert len(plateaus) == 12
    dt = 1.0 / settings.desired_rate_hz
    seen_rates = set()
    for start, end, roll, pitch, dof, sign in plateaus:
        k = (dive.t_s >= start) & (dive.t_s < end - 1e-9)
        assert np.allclose(np.abs(dive.eta2d_rad[k, :2]), math.radians(35.0))
        assert np.all(dive.u_linear[k, dof] == sign) and abs(sign) == 1.0        # a full plateau
        assert np.all(dive.u_linear[k][:, [j for j in range(3) if j != dof]] == 0.0)
        yaw = dive.eta2d_rad[k, 2]
        rate = np.degrees(np.abs(np.diff(yaw))) / dt
        seen_rates.add(round(float(rate.max()), 6))
        assert 60.0 - 1e-6 <= rate.max() <= 90.0 + 1e-6
        measured = dive.t_s[k] >= end - settings.measure_fraction * (end - start)
        assert np.ptp(yaw[measured]) == 0.0                 # the ramp is over before the steady window
    assert seen_rates == {60.0, 75.0, 90.0}
    pairs = {(math.copysign(1, r), math.copysign(1, p)) for _, _, r, p, _, _ in plateaus}
    assert pairs == {(1, 1), (-1, 1), (1, -1), (-1, -1)}
    assert np.all(np.abs(dive.eta2d_rad[:, 2]) < math.pi)   # no wrap in the desired heading


def test_dive_figures_of_a_known_log(settings):
    vehicle = load_vehicle()
    t = np.arange(0.0, 10.0 + 1e-9, 0.01)
    log = {"time_s": t}
    for axis, err_deg in (("roll", 2.0), ("pitch", -3.0), ("yaw", 0.0)):
        log["%s_d_rad" % axis] = np.full(t.size, 0.5)
        log["%s_rad" % axis] = np.full(t.size, 0.5 - math.radians(err_deg))
    u = np.zeros((t.size, 6))
    u[t >= 5.0, 0] = 1.0                              # full surge: Eq. 9 asks 49.95 N of reverse thrust
    for j, name in enumerate(("surge", "sway", "heave", "roll", "pitch", "yaw")):
        log["u_%s" % name] = u[:, j]
    # Thrusters 1, 2 (pointing back) at 1300 us, 3, 4 (pointing forward) at 1700 us, at 45 deg:
    # surge = (F(1700) - F(1300)) * 2 cos 45 deg, the forces read off the table's grid.
    table = vehicle.table
    f1700, f1300 = table.force_n[table.pwm_us == 1700.0][0], table.force_n[table.pwm_us == 1300.0][0]
    for i, pwm in enumerate((1300, 1300, 1700, 1700, 1500, 1500, 1500, 1500, 0, 0)[:8]):
        log["pwm%d_us" % (i + 1)] = np.full(t.size, float(pwm))
    f = al.dive_figures(log, [(0.0, 10.0, 0.0, 0.0, 0, 1.0)], 0.5, vehicle)
    surge = (f1700 - f1300) * 2.0 * math.cos(math.radians(45.0))
    assert f["translation_delivered_pct"] == pytest.approx(100.0 * surge / vehicle.tau_max[0])
    assert f["iae_roll_deg_s"] == pytest.approx(20.0)
    assert f["iae_pitch_deg_s"] == pytest.approx(30.0)
    assert f["iae_yaw_deg_s"] == pytest.approx(0.0, abs=1e-9)
    assert f["worst_steady_roll_deg"] == pytest.approx(2.0)
    assert f["worst_steady_pitch_deg"] == pytest.approx(3.0)
    assert 49.95 > vehicle.table.max_reverse_n
    assert f["eq9_beyond_limits_pct"] == pytest.approx(100.0 * np.mean(t >= 5.0))


def test_vehicle_copies_name_the_allocator(tmp_path):
    path = al.vehicle_file_with_allocator("bluerov2_heavy", "saturating", str(tmp_path))
    v = load_vehicle(path)
    assert isinstance(v.allocator, SaturatingAllocator)
    heavy = load_vehicle("bluerov2_heavy")
    np.testing.assert_array_equal(v.T, heavy.T)
    np.testing.assert_array_equal(v.table.force_n, heavy.table.force_n)


def test_settings_errors_name_the_key(tmp_path):
    import yaml
    from brov2_hybrid import paths
    with open(paths.params_path("analysis.yaml")) as handle:
        data = yaml.safe_load(handle)
    data["allocators"]["allocators"] = ["saturating"]
    bad = tmp_path / "analysis.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ParameterError, match=r"allocators\.allocators: expected 'pseudo_inverse'"):
        al.load_allocator_settings(str(bad))
    data["allocators"]["allocators"] = ["pseudo_inverse"]
    data["allocators"]["yaw_ramp_s"] = 9.0
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ParameterError, match=r"allocators\.yaw_ramp_s: the yaw ramp"):
        al.load_allocator_settings(str(bad))


def test_end_to_end_quick(settings, tmp_path):
    """Both allocators on both stages (quick plateaus, one omega_d): CSV, figures, report lines."""
    ctx = Context(out_dir=str(tmp_path), runner=Runner(jobs=2, progress=False))
    summary = al.allocators_experiment(ctx, (3.0,), settings, quick=True)
    with open(os.path.join(str(tmp_path), "allocators_metrics.csv")) as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["output_stage"], r["allocator"]) for r in rows} == {
        (s, a) for s in ("quantitative", "stock") for a in ("pseudo_inverse", "saturating")}
    for f in summary["files"]:
        assert os.path.exists(os.path.join(str(tmp_path), f))
    text = "\n".join(al.report_section(summary))
    assert "| quantitative | saturating | 3 |" in text
    for line in al.verdict(summary):                   # the verdict's direction follows the CSV
        stage = line.split(" ")[0]
        total = {a: sum(float(r["iae_%s_deg_s" % ax]) for r in rows if r["output_stage"] == stage
                        and r["allocator"] == a for ax in ("roll", "pitch", "yaw"))
                 for a in ("pseudo_inverse", "saturating")}
        assert ("lowers" in line) == (total["saturating"] < total["pseudo_inverse"])
