"""brov2-analyze onboard-pair (analysis/onboard_pair.py): only real flights are scored, the ratio is the
medians', and the generated block renders what was flown. The flights themselves are ``make run``'s on
real ArduSub SITL; ``test_real_ardusub_onboard_launch.py`` flies one through :func:`fly` and :func:`refusal`."""
import json
import os
import subprocess

import pytest

from brov2_hybrid.analysis import onboard_pair as op
from brov2_hybrid.analysis.doc_tables import OPTIONAL, TABLES, render
from brov2_hybrid.errors import Brov2Error

SETTINGS = op.PairSettings(topside_args=("sim:=ardusub",), onboard_args=("sim:=ardusub", "placement:=onboard",
                                                                          "omega_d:=8"),
                           trials=2, attempts=2, goal_ratio=0.6, duration_margin_s=2.0, timeout_s=60.0)


def summary(placement="topside", omega=3.0, iae=(10.0, 20.0, 30.0), duration=150.9, not_active=0):
    return {"placement": placement, "omega_d_rad_s": omega, "duration_s": duration, "ticks": 7550,
            "ticks_not_active": not_active, "iae_roll_deg_s": iae[0], "iae_pitch_deg_s": iae[1],
            "iae_yaw_deg_s": iae[2]}


REPORTS = {"rate_hz_median": 95, "rate_hz_min": 93, "rate_hz_max": 97, "reports": 150, "period_ms_min": 5,
           "period_ms_max": 21, "longest_ms_median": 13}


def flight(s, exit_code=0, folder="/runs/dive_1", script=None):
    return {"args": [], "exit_code": exit_code, "output": "", "folder": folder, "summary": s, "script": script}


@pytest.mark.parametrize("f, why", [
    (flight(summary(), exit_code=4), "make run exited 4"),
    (flight(None), "no run summary"),
    (flight(summary(placement="onboard")), "placement 'onboard', not 'topside'"),
    (flight(summary(omega=8.0)), "omega_d 8.0, not 3"),
    (flight(summary(duration=100.0)), "covers 100.0 s of the 150 s dive"),
    (flight(summary(not_active=12)), "12 of 7550 logged ticks were not ACTIVE"),
    (flight(dict(summary(), iae_yaw_deg_s=None)), "no IAE")])
def test_a_run_that_did_not_fly_the_dive_is_refused_with_its_reason(f, why):
    assert why in op.refusal(f, "topside", 3.0, 150.0, 2.0)


def test_a_run_that_flew_it_is_scored():
    assert op.refusal(flight(summary(duration=148.5)), "topside", 3.0, 150.0, 2.0) is None
    assert op.summed_iae(summary()) == 60.0


def test_the_expected_run_follows_the_launch_arguments_and_defaults(tmp_path):
    from brov2_hybrid.dive.dive_csv import write_dive_csv
    placement, omega, duration = op.expected_run(["sim:=ardusub"])
    assert (placement, omega, duration) == ("topside", 3.0, 150.0)        # controller.yaml, the bundled dive
    path = str(tmp_path / "d.csv")
    write_dive_csv(path, [0.0, 4.0, 8.0], [[0.0] * 3] * 3, [[0.0] * 3] * 3)
    assert op.expected_run(["placement:=onboard", "omega_d:=5", "dive:=" + path]) == ("onboard", 5.0, 8.0)
    # the pair names the dive it checks against, rather than trusting the launch file's default to be it
    assert op.launch_arg(op.with_dive(["sim:=ardusub"]), "dive").endswith("ar_pilot_dive.csv")
    assert op.with_dive(["dive:=" + path]) == ["dive:=" + path]


def test_refused_runs_are_flown_again_and_only_scored_runs_make_the_ratio():
    queue = {"topside": [flight(summary(), exit_code=1), flight(summary(iae=(100, 100, 100))),
                         flight(summary(iae=(120, 120, 120)))],
             "onboard": [flight(summary("onboard", 8.0, (20, 20, 20)), script=REPORTS),
                         flight(summary("onboard", 8.0, (30, 30, 30)), script=dict(REPORTS, rate_hz_min=90))]}
    asked = []

    def fly_run(args):
        side = "onboard" if "placement:=onboard" in args else "topside"
        asked.append(side)
        return queue[side].pop(0)
    s = op.onboard_pair_experiment(settings=SETTINGS, progress=lambda text: None, fly_run=fly_run)
    assert asked == ["topside"] * 3 + ["onboard"] * 2
    top, on = s["sides"]["topside"], s["sides"]["onboard"]
    assert [f["sum_deg_s"] for f in top["flights"]] == [300, 360] and top["median_sum_deg_s"] == 330
    assert top["refused"] == [{"attempt": 1, "reason": "make run exited 1", "folder": "dive_1"}]   # no machine path
    assert on["median_sum_deg_s"] == 75 and s["ratio"] == pytest.approx(75 / 330) and s["verdict"] == "met"
    table = "\n".join(op.markdown_table(s))
    assert "| `sim:=ardusub placement:=onboard omega_d:=8` | onboard | 8 | 2 / 0 |" in table
    assert "| 95, 95 median (90...97); 5...21, longest per report 13, 13 median |" in table
    assert table.count("| — |") == 1                          # the topside runs have no script
    assert "**0.23** (goal <= 0.6: **met**)" in table
    assert "refused, topside run 1: make run exited 1" in table
    s["ratio"], s["verdict"] = 0.7, "not met"
    assert "**0.70** (goal <= 0.6: **not met**)" in "\n".join(op.markdown_table(s))


def test_a_side_with_no_flight_after_its_attempts_stops_the_experiment():
    def fly_run(args):
        return flight(summary(placement="onboard" if "placement:=onboard" in args else "topside",
                              omega=8.0 if "omega_d:=8" in args else 3.0, duration=20.0))
    with pytest.raises(Brov2Error, match=r"no topside run flew \(4 refused: the log covers 20.0 s"):
        op.onboard_pair_experiment(settings=SETTINGS, progress=lambda text: None, fly_run=fly_run)


def test_fly_reads_the_run_folder_the_script_names_and_its_summary(tmp_path):
    from brov2_hybrid.onboard.uplink import ScriptReports
    folder = tmp_path / "dive_x"
    folder.mkdir()
    (folder / "dive_x_summary.json").write_text(json.dumps(summary()))
    reports = ScriptReports()
    for hz in (95.0, 93.0, 97.0):
        reports.add("HYB_HZ", hz)
        reports.add("HYB_DTMAX", 13.0)
        reports.add("HYB_DTMIN", 5.0)
    (folder / "roslaunch.log").write_text(
        "[INFO] [1.0, 2.0]: mavlink_bridge: the on-board script reports rate 10 Hz median (1 .. 99) over 2 reports\n"
        "[INFO] [3.0, 4.0]: mavlink_bridge: the on-board script reports %s since the start\n"
        "[INFO] [5.0, 6.0]: mavlink_bridge: the on-board script reports rate 1 Hz median (1 .. 1) over 1 reports\n"
        % reports.summary())

    def run(cmd, **kw):
        assert cmd[0] == "bash" and cmd[1].endswith(os.path.join("scripts", "run_dive.sh"))
        assert cmd[2:] == ["sim:=ardusub"] and kw["timeout"] == 5.0
        return subprocess.CompletedProcess(cmd, 0, "setup: ok\nmake run: run folder %s\nIAE ...\n" % folder)
    f = op.fly(["sim:=ardusub"], 5.0, run=run)
    assert f["folder"] == str(folder) and f["summary"] == summary() and f["exit_code"] == 0
    assert f["script"] == {"rate_hz_median": 95, "rate_hz_min": 93, "rate_hz_max": 97, "reports": 3,
                           "period_ms_min": 5, "period_ms_max": 13, "longest_ms_median": 13}   # the whole run's line

    def silent(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 2, "make run: placement:=onboard needs sim:=ardusub\n")
    f = op.fly(["placement:=onboard"], 5.0, run=silent)
    assert f["folder"] is None and f["summary"] is None
    assert op.refusal(f, "onboard", 3.0, 150.0, 2.0) == "make run exited 2"


def test_the_block_is_generated_by_make_reproduce_and_optional():
    assert TABLES["onboard_pair"][0] == "onboard_pair" and "onboard_pair" in OPTIONAL
    s = {"sides": {side: {"args": ["sim:=ardusub"], "placement": side, "omega_d_rad_s": 3.0, "dive_duration_s": 150.0,
                          "flights": [{"folder": "d", "sum_deg_s": 9.0, "roll": 3.0, "pitch": 3.0, "yaw": 3.0}],
                          "refused": [], "median_sum_deg_s": 9.0} for side in ("topside", "onboard")},
         "ratio": 1.0, "goal_ratio": 0.6, "verdict": "not met"}
    assert render("onboard_pair", s).startswith("`make run` on real ArduSub 4.5 SITL")


def test_the_settings_must_fly_real_ardusub(tmp_path):
    path = tmp_path / "analysis.yaml"
    path.write_text("onboard_pair:\n  topside_args: [\"sim:=true\"]\n  onboard_args: [\"sim:=ardusub\"]\n  trials: 1\n"
                    "  attempts: 1\n  goal_ratio: 0.6\n  duration_margin_s: 1.0\n  timeout_s: 10.0\n")
    with pytest.raises(Brov2Error, match=r"onboard_pair.topside_args: expected sim:=ardusub"):
        op.load_pair_settings(str(path))
