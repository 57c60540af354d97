"""brov2-analyze end to end on tiny sweeps, the report's verdicts, and the settings file."""
import csv
import math
import os
import re

import numpy as np
import pytest

from brov2_hybrid import paths
from brov2_hybrid.analysis import cli, report_checks as report
from brov2_hybrid.analysis.settings import load_analysis_settings
from brov2_hybrid.errors import ParameterError


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("reproduce"))
    assert cli.main(["reproduce", "--quick", "--out", out, "--jobs", "2", "--quiet"]) == 0
    return out


def report_verdicts(text):
    """{paper statement: verdict} from the report's "paper | here | verdict" table."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\| (.+?) \| .* \| \*\*(agrees|partly|disagrees)\*\* \|$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def verdict_of(verdicts, start):
    (found,) = [v for k, v in verdicts.items() if k.startswith(start)]
    return found


def expected_trend_verdict(rows, columns, rising):
    """What the report must say of a per-omega_d trend, judged here from the CSV alone."""
    rows = sorted(rows, key=lambda r: float(r["omega_d_rad_s"]))
    ok = []
    for c in columns:
        v = [float(r[c]) for r in rows]
        ok.append(all((b > a) if rising else (b < a) for a, b in zip(v, v[1:])))
    return report.AGREES if all(ok) else (report.PARTLY if any(ok) else report.DISAGREES)


def test_reproduce_quick_verdicts_follow_the_data(quick):
    """Each checked verdict is the one the written CSVs imply, judged independently here."""
    text = open(os.path.join(quick, "REPORT.md")).read()
    verdicts = report_verdicts(text)
    assert len(verdicts) >= 8
    # Sec. 5.2 by hand: k_d = 2 omega_d (I_zz + N_rdot) - B-check, delta k_d = kappa / omega_d^2,
    # paper numbers I_zz = 1.0, N_rdot = 0.12, B-check = 5.97, kappa = 20, at omega_d = 2 (yaw).
    (yaw2,) = [r for r in rows(os.path.join(quick, "gains.csv")) if r["axis"] == "yaw" and float(r["omega_d_rad_s"]) == 2]
    assert float(yaw2["kd_nm_s_rad"]) == pytest.approx(2 * 2 * 1.12 - 5.97, abs=0.01)       # -1.49
    assert float(yaw2["kd_total_nm_s_rad"]) == pytest.approx(2 * 2 * 1.12 - 5.97 + 20 / 4, abs=0.01)
    assert verdict_of(verdicts, "At omega_d = 2 the plain k_d is negative") == report.AGREES
    dive = rows(os.path.join(quick, "dive_metrics.csv"))
    assert len(dive) >= 2
    assert verdict_of(verdicts, "Integral of absolute error falls") == expected_trend_verdict(
        dive, ["iae_roll_deg_s", "iae_pitch_deg_s", "iae_yaw_deg_s"], rising=False)
    assert verdict_of(verdicts, "Energy (Eq. 26) rises") == expected_trend_verdict(
        dive, ["energy_roll", "energy_pitch", "energy_yaw"], rising=True)
    fit = {r["quantity"]: float(r["fitted"]) for r in rows(os.path.join(quick, "sysid_fit.csv"))}
    within = abs(fit["N_r|r|"] / 2.42 - 1) <= 0.05 and abs(fit["I_zz"] / 1.0 - 1) <= 0.05  # paper Sec. 3, 5 %
    assert verdict_of(verdicts, "Sec. 3: N_r") == (report.AGREES if within else report.DISAGREES)
    assert "Loop latency: telemetry 50 Hz" in text
    for name in ("step_sweep.csv", "bode.csv", "dive_metrics.csv", "latency.csv", "compare_models.csv",
                 "sysid_fit.csv", "gains.csv", "trim.csv", "step_response.png", "settling_time.png", "bode.png",
                 "dive_trajectories.png", "dive_iae.png", "dive_energy.png", "compare_models.png",
                 "sysid_drag.png", "sysid_inertia.png", "trim.png", "latency.png"):
        assert os.path.getsize(os.path.join(quick, name)) > 0, name
    sweep = rows(os.path.join(quick, "step_sweep.csv"))
    assert [float(r["omega_d_rad_s"]) for r in sweep] == [2.0, 3.0, 4.0]
    assert all(math.isfinite(float(r["settling_time_s"])) for r in sweep)
    dive = rows(os.path.join(quick, "dive_metrics.csv"))
    assert os.path.isfile(os.path.join(quick, dive[0]["log"]))


def test_summarize_a_dive_log(quick, tmp_path, capsys):
    """summarize's IAE and Eq. 26 energy equal sums computed here from the raw log rows."""
    log = os.path.join(quick, rows(os.path.join(quick, "dive_metrics.csv"))[0]["log"])
    assert cli.main(["summarize", log, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "IAE" in out and "energy" in out
    summary = {r["quantity"]: float(r["value"]) for r in rows(str(tmp_path / "dive_w2.00_summary.csv"))}
    raw = rows(log)
    t = [float(r["time_s"]) for r in raw]
    err = [abs(math.degrees(math.remainder(float(r["yaw_d_rad"]) - float(r["yaw_rad"]), 2 * math.pi))) for r in raw]
    iae = sum(0.5 * (err[k] + err[k + 1]) * (t[k + 1] - t[k]) for k in range(len(raw) - 1))   # trapezoids
    energy = sum(abs(float(r["rc4_us"]) - 1500.0) / 400.0 for r in raw)                      # yaw = RC 4
    assert iae > 1.0 and energy > 1.0
    assert summary["iae_yaw_deg_s"] == pytest.approx(iae, rel=1e-5)
    assert summary["energy_yaw"] == pytest.approx(energy, rel=1e-5)
    assert summary["ticks"] == len(raw)


def test_bode_single_point_near_lti_at_low_frequency(tmp_path):
    assert cli.main(["bode", "--omega-d", "3", "--freqs", "0.05", "--out", str(tmp_path), "--jobs", "1",
                     "--quiet"]) == 0
    (row,) = rows(str(tmp_path / "bode.csv"))
    assert float(row["gain"]) == pytest.approx(1.0, abs=0.05)    # far below the bandwidth: follows the input
    assert abs(float(row["phase_deg"])) < 10.0


def test_dask_without_dask_is_a_clear_error(tmp_path, capsys):
    try:
        import dask.distributed  # noqa: F401
        pytest.skip("dask is installed")
    except ImportError:
        pass
    code = cli.main(["step", "--omega-d", "3", "--dask", "tcp://127.0.0.1:1", "--out", str(tmp_path), "--quiet"])
    assert code == 2
    assert "dask" in capsys.readouterr().err


def _step_summary(overshoots, omegas=(3.0, 3.25, 3.5, 4.0)):
    return {"omega_d": list(omegas), "overshoot_pct": list(overshoots), "band": 0.05, "latency": "x",
            "first_band_exit_omega_d": next((w for w, o in zip(omegas, overshoots) if o > 5.0), None)}


def test_jump_verdicts():
    assert report.check_jump(_step_summary([3.0, 4.0, 7.0, 8.0]), None)[2] == report.AGREES
    assert report.check_jump(_step_summary([3.0, 4.0, 4.5, 4.0]), None)[2] == report.DISAGREES
    assert report.check_jump(_step_summary([3.0, 6.0, 7.0, 8.0]), None)[2] == report.PARTLY


def test_dive_verdicts():
    per = [{"omega_d": w, "iae_roll_deg_s": e, "iae_pitch_deg_s": e, "iae_yaw_deg_s": e,
            "energy_roll": n, "energy_pitch": n, "energy_yaw": n} for w, e, n in ((2, 30, 5), (3, 20, 6), (4, 10, 7))]
    err, energy = report.check_dive({"per_omega_d": per})
    assert err[2] == report.AGREES and energy[2] == report.AGREES
    per[2]["iae_pitch_deg_s"] = 40
    per[0]["energy_yaw"] = 9
    err, energy = report.check_dive({"per_omega_d": per})
    assert err[2] == report.PARTLY and energy[2] == report.PARTLY


def test_sysid_verdict_flips_with_the_fit():
    paper = load_analysis_settings().paper
    truth = {"linear": 0.0, "quadratic": 2.42, "inertia": 1.0}
    good = {"fit": {"linear": 0.0, "quadratic": 2.45, "inertia": 0.97}, "truth": truth, "steady_rates": [1.0, 2.0]}
    assert report.check_sysid(good, paper)[2] == report.AGREES
    bad = dict(good, fit={"linear": 0.0, "quadratic": 2.45, "inertia": 1.2})      # I_zz 20 % off
    assert report.check_sysid(bad, paper)[2] == report.DISAGREES


def test_settings_errors_name_the_key(tmp_path):
    src = open(paths.params_path("analysis.yaml")).read()
    bad = tmp_path / "analysis.yaml"
    bad.write_text(src.replace("mixer: quantitative", "mixer: clever"))
    with pytest.raises(ParameterError, match="loop.mixer"):
        load_analysis_settings(str(bad))
    bad.write_text(src.replace("  settle_band: 0.05", "  settle_band: 1.5"))
    with pytest.raises(ParameterError, match="step.settle_band"):
        load_analysis_settings(str(bad))
    s = load_analysis_settings()
    assert s.step.omega_d_rad_s[0] == 1.5 and s.step.omega_d_rad_s[-1] == 5.0 and len(s.step.omega_d_rad_s) == 15
    assert len(s.bode.freqs_hz) == 49 and s.bode.freqs_hz[-1] == pytest.approx(1.97)
    np.testing.assert_allclose(np.degrees(s.bode.amplitude_rad), 30.0)


def test_log_metrics_known_values():
    """IAE of a constant 0.1 rad yaw error over 1 s; Eq. 26 of a held 1700 us; released channels are neutral."""
    from brov2_hybrid.analysis.log_summary import log_metrics
    from brov2_hybrid.tick_log.logfile import LOG_COLUMNS
    from brov2_hybrid.vehicle.rc import load_rc_map
    n = 51
    log = {c: np.zeros(n) for c in LOG_COLUMNS if c != "mode"}
    log["mode"] = ["ACTIVE"] * n
    log["time_s"] = 100.0 + np.linspace(0.0, 1.0, n)
    log["yaw_d_rad"][:] = 0.1
    log["roll_d_rad"][:] = math.radians(179.0)      # wraps: error to -179 deg is 2 deg
    log["roll_rad"][:] = math.radians(-179.0)
    for ch in range(1, 7):
        log["rc%d_us" % ch][:] = 1500
    log["rc4_us"][:] = 1700                          # yaw channel
    log["rc1_us"][:] = 0                             # pitch channel released
    m, _ = log_metrics(log, load_rc_map())
    assert m["iae_yaw_deg_s"] == pytest.approx(math.degrees(0.1))
    assert m["iae_roll_deg_s"] == pytest.approx(2.0)
    assert m["energy_yaw"] == pytest.approx(0.5 * n)
    assert m["energy_pitch"] == 0.0 and m["energy_surge"] == 0.0
