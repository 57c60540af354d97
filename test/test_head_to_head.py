"""The head-to-head room without ArduSub: inputs, figures of a flight, points,
fronts, the verdict and the command's wiring (stored settings: test_head_to_head_stored.py; the real flights:
test_head_to_head_ardusub.py)."""
import argparse
import math

import numpy as np
import pytest

from brov2_hybrid.analysis import synth_dive
from brov2_hybrid.analysis.context import AXES
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.head_to_head import inputs, report, scoring, stored
from brov2_hybrid.head_to_head.flights import ARDUSUB, HYBRID, make_pilot
from brov2_hybrid.link import ardusub
from brov2_hybrid.tick_log.logfile import NUMERIC_COLUMNS


# ---------------------------------------------------------------- inputs

@pytest.fixture(scope="module")
def settings():
    return inputs.load_settings()


def test_the_held_out_dives_are_seeded_and_of_other_kinds_than_the_bundled_one(settings):
    held = inputs.held_out_dives(settings)
    again = inputs.held_out_dives(settings)
    assert len(held) >= 2
    bundled = synth_dive.synthesize(synth_dive.load_recipe())
    for (name, d), (_, e) in zip(held, again):
        np.testing.assert_array_equal(d.eta2d_rad, e.eta2d_rad)
        assert d.duration_s < bundled.duration_s
    stats = {name: synth_dive.dive_statistics(d) for name, d in held}
    base = synth_dive.dive_statistics(bundled)
    assert stats["fast_turns"]["yaw_peak_rate_deg_s"] > 1.5 * base["yaw_peak_rate_deg_s"]
    assert stats["tilted_translation"]["surge_max"] > base["surge_max"] or \
        stats["tilted_translation"]["surge_min"] < base["surge_min"]


def test_a_held_out_entry_with_an_unknown_key_is_named(tmp_path):
    text = open(inputs.paths.params_path("analysis.yaml")).read().replace(" hold_s: [1.0, 4.0]}",
                                                                          " hold_for: [1.0, 4.0]}")
    path = tmp_path / "analysis.yaml"
    path.write_text(text)
    with pytest.raises(ParameterError, match=r"head_to_head.held_out\[0\].hold_for: not a dive_synthesis key"):
        inputs.load_settings(str(path))


def test_the_training_set_is_the_bundled_dive_and_a_step_per_axis_flown_as_one_sequence(settings):
    from brov2_hybrid.analysis.ardusub_experiment import load_compare_settings
    cs = load_compare_settings()
    parts = inputs.training_parts(settings, cs)
    assert [n for n, _ in parts] == ["bundled", "roll step", "pitch step", "yaw step"]
    assert parts[0][1].duration_s == pytest.approx(settings.train_dive_s, abs=0.1)
    (name, seq), = inputs.training_inputs(settings, cs)
    assert name == inputs.TRAINING
    assert seq.t_s.size == sum(d.t_s.size for _, d in parts) and np.all(np.diff(seq.t_s) > 0)
    assert seq.duration_s == pytest.approx(sum(d.duration_s for _, d in parts) + 3 * 0.02, abs=0.05)
    # each part's rows, in order: the dive's, then each step from level (held cs.hold_s) to its step
    k = 0
    for _, d in parts:
        np.testing.assert_array_equal(seq.eta2d_rad[k:k + d.t_s.size], d.eta2d_rad)
        np.testing.assert_array_equal(seq.u_linear[k:k + d.t_s.size], d.u_linear)
        np.testing.assert_allclose(seq.t_s[k:k + d.t_s.size] - seq.t_s[k], d.t_s - d.t_s[0])
        k += d.t_s.size


def test_the_attitude_only_input_keeps_the_attitudes_and_drops_the_translations(settings):
    _, d = inputs.held_out_dives(settings)[1]
    a = inputs.attitude_only(d)
    np.testing.assert_array_equal(a.eta2d_rad, d.eta2d_rad)
    assert np.any(d.u_linear != 0) and not np.any(a.u_linear)


def test_every_flight_descends_and_settles_before_its_dive(settings):
    _, d = inputs.held_out_dives(settings)[0]
    plan, t_dive = inputs.with_descent(d, 30.0, 10.0)
    assert t_dive == 40.0 and plan.duration_s == pytest.approx(40.0 + d.duration_s)
    before = plan.t_s < t_dive
    assert np.all(plan.u_linear[plan.t_s < 30.0, 2] == 1.0) and not np.any(plan.u_linear[before & (plan.t_s >= 30.0)])
    assert not np.any(plan.eta2d_rad[before])
    np.testing.assert_array_equal(plan.eta2d_rad[~before], d.eta2d_rad)
    assert inputs.with_descent(d, 0.0, 0.0) == (d, 0.0)


def test_the_depth_reference_integrates_the_heave_stick():
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    stick = np.array([0.0, 1.0, 1.0, -0.5, 0.0])     # + down, held until the next row
    np.testing.assert_allclose(inputs.depth_reference_m(t, stick, 10.0, 0.5), [10.0, 10.0, 10.5, 11.0, 10.75])


# ---------------------------------------------------------------- figures of one flight, points, fronts

def fake_log(n=501, duration=10.0, pwm=1600.0, error_deg=1.0):
    t = np.linspace(0.0, duration, n)
    log = {c: np.zeros(n) for c in NUMERIC_COLUMNS}
    log["time_s"] = t
    for k, axis in enumerate(AXES):
        log["%s_d_rad" % axis] = np.full(n, 0.1 * (k + 1))
        log["%s_rad" % axis] = log["%s_d_rad" % axis] - math.radians(error_deg)   # the estimate lags 1 deg
    for i in range(1, ardusub.SERVO_OUTPUTS + 1):
        log["pwm%d_us" % i] = np.full(n, pwm)
    log["depth_m"] = np.full(n, 15.0)
    log["heave_cmd"] = np.where(t < 2.0, 0.4, 0.0)
    truth = np.column_stack([log["%s_d_rad" % a] - math.radians(2 * error_deg) for a in AXES])  # the truth 2 deg
    return log, truth


def test_a_flights_figures_against_hand_computed_values():
    log, truth = fake_log()
    table = (np.array([1100.0, 1472.0, 1500.0, 1528.0, 1900.0]), np.array([400.0, 0.0, 0.0, 0.0, 400.0]))
    row = scoring.flight_row(log, truth, 15.0, 0.5, table)
    for axis in AXES:
        assert row["iae_est_%s" % axis] == pytest.approx(10.0)     # 1 deg for 10 s
        assert row["iae_true_%s" % axis] == pytest.approx(20.0)    # 2 deg for 10 s
    assert row["iae_true_sum"] == pytest.approx(60.0)
    assert row["effort_s"] == pytest.approx(8 * 100.0 / 400.0 * 10.0)
    # 1600 us: (1600 - 1528) / (1900 - 1528) of 400 W per motor, 8 motors, 10 s
    assert row["energy_kj"] == pytest.approx(8 * 400.0 * 72.0 / 372.0 * 10.0 / 1000.0)
    # asked 0.4 x 0.5 m/s for 2 s deeper = 0.4 m, stayed at 15 m: 0.4 m shallow at the end
    assert row["depth_end_m"] == pytest.approx(-0.4, abs=1e-3)
    assert row["depth_max_m"] == pytest.approx(0.4, abs=1e-3)
    assert set(row) == set(scoring.FIGURE_COLUMNS)


def _row(pilot, placement, setting, iae, effort, trial=1, dive="d", link_ms=20.0, energy=None):
    r = {"pilot": pilot, "placement": placement, "setting": setting, "pilot_link_ms": link_ms, "dive": dive,
         "trial": trial, "attempts": 1}
    r.update({c: 0.0 for c in scoring.FIGURE_COLUMNS})
    r.update(iae_true_sum=iae, effort_s=effort, iae_est_sum=iae, energy_kj=effort / 10.0 if energy is None else energy)
    return r


def test_points_hold_the_median_and_the_spread_of_their_flights():
    rows = [_row("hybrid", "tether", "w6", iae, 300.0 + k, trial=k) for k, iae in enumerate((100.0, 140.0, 110.0))]
    (p,) = scoring.points(rows)
    assert p["flights"] == 3
    assert (p["iae_true_sum"], p["iae_true_sum_min"], p["iae_true_sum_max"]) == (110.0, 100.0, 140.0)
    assert p["effort_s"] == 301.0


def test_the_front_keeps_what_nothing_beats_on_both():
    items = [(100, 10), (90, 20), (95, 25), (80, 30), (100, 12)]
    front = scoring.pareto(items, cost=lambda i: i[0], effort=lambda i: i[1])
    assert front == [(100, 10), (90, 20), (80, 30)]


def summary_of(rows):
    return {"points": scoring.points(rows), "dives": [{"name": "d", "source": "s", "duration_s": 60.0}],
            "trials": 1, "flights": len(rows), "refusals": 0, "unscored": [], "ardusub_status": ["x"],
            "hybrid_status": "y", "placements": {"tether": {"telemetry_rate_hz": 50.0, "telemetry_delay_s": 0.02,
                                                            "command_delay_s": 0.02, "pilot_link_s": 0.02,
                                                            "reference_delay_s": 0.0}}}


def test_the_verdict_follows_the_medians():
    wins = summary_of([_row("ardusub", "ardusub", "tuned", 200.0, 400.0), _row("hybrid", "tether", "w6", 150.0, 390.0),
                       _row("hybrid", "tether", "w9", 100.0, 500.0)])
    (v,) = report.verdicts(wins)
    assert "hybrid w6 reaches IAE 150" in v and "the hybrid wins" in v and "0.75" in v   # w9 spends more: not it
    loses = summary_of([_row("ardusub", "ardusub", "tuned", 100.0, 400.0), _row("hybrid", "tether", "w6", 150.0, 390.0)])
    assert "ArduSub wins" in report.verdicts(loses)[0]
    costly = summary_of([_row("ardusub", "ardusub", "tuned", 100.0, 400.0), _row("hybrid", "tether", "w6", 50.0, 450.0)])
    (v,) = report.verdicts(costly)
    assert "at no more motor effort than ArduSub's 400 s no hybrid setting" in v and "IAE 50 deg s at 450 s" in v
    assert "better, for more motor effort" in v
    text = "\n".join(report.markdown_table(wins))
    assert "| hybrid | tether (50 Hz + 20 / 20 ms) | w6 |" in text and "#### d" in text
    assert "| ardusub | ardusub (on board, 400 Hz; pilot input +20 ms) | tuned |" in text


def test_the_verdict_judges_the_electric_energy_apart_from_the_motor_effort():
    """A hybrid that spends more motor effort (PWM away from neutral, dead band included) but draws less
    electric energy than ArduSub: it loses on the one budget and wins on the other."""
    rows = [_row("ardusub", "ardusub", "tuned", 100.0, 160.0, energy=90.0),
            _row("hybrid", "tether", "w6", 95.0, 200.0, energy=70.0)]
    (v,) = report.verdicts(summary_of(rows))
    effort, energy = v.split(". Per axis")[0].split("; ")
    assert "no hybrid setting" in effort and "better, for more motor effort" in effort
    assert "at no more electric energy than ArduSub's 90 kJ, hybrid w6 reaches IAE 95 deg s at 70 kJ, the hybrid wins" \
        in energy


def test_the_verdict_says_on_which_axes_the_hybrid_is_ahead():
    ardusub_row, hybrid_row = _row("ardusub", "ardusub", "tuned", 100.0, 160.0), _row("hybrid", "tether", "w6", 95.0, 200.0)
    for row, (r, p, y) in ((ardusub_row, (20.0, 20.0, 60.0)), (hybrid_row, (30.0, 25.0, 40.0))):
        row.update(iae_true_roll=r, iae_true_pitch=p, iae_true_yaw=y)
    (v,) = report.verdicts(summary_of([ardusub_row, hybrid_row]))
    assert "Per axis, true IAE hybrid (w6) / ArduSub [deg s]: roll 30 / 20, pitch 25 / 20, yaw 40 / 60; the hybrid " \
        "ahead on yaw." in v


def test_the_verdict_meets_ardusub_behind_the_placements_own_pilot_link():
    """ArduSub with the pilot's input on board at once (0 ms) beats the hybrid; behind the tether's 20 ms,
    which the hybrid's override crosses too, it does not: the verdict judges against that one."""
    rows = [_row("ardusub", "ardusub", "tuned", 100.0, 400.0, link_ms=0.0),
            _row("ardusub", "ardusub", "tuned", 160.0, 400.0, link_ms=20.0),
            _row("ardusub", "ardusub", "tuned", 250.0, 400.0, link_ms=50.0),
            _row("hybrid", "tether", "w6", 150.0, 390.0)]
    (v,) = report.verdicts(summary_of(rows))
    assert "the hybrid wins" in v and "+20 ms (IAE 160" in v
    alone = summary_of([r for r in rows if r["pilot"] == "hybrid" or r["pilot_link_ms"] != 20.0])
    assert "no scored ArduSub flight behind the same pilot link" in report.verdicts(alone)[0]


# ---------------------------------------------------------------- pilots and jobs

def test_the_hybrid_flies_with_its_depth_hold_and_its_placements_delays(vehicle):
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.head_to_head.flights import FlightJob
    _, placements = stored.load_hybrid_settings()
    place, (h, *_) = placements["realistic"]           # the first stored setting: the plain law at omega_d 5
    job = FlightJob(HYBRID, place, h.label, h.options + (("integral_enabled", True),), "d", None, 1,
                    load_analysis_settings().loop, None, 0.5)
    pilot = make_pilot(job, vehicle)
    assert pilot.mode == "MANUAL" and pilot.controller.depth_hold.enabled and pilot.controller.integral_enabled
    assert pilot.omega_d_rad_s == 5.0 and pilot._delays_s == (0.05, 0.05)
    assert make_pilot(FlightJob(ARDUSUB, None, "a", (), "d", None, 1, job.loop, None, 0.5), vehicle).mode == "ALT_HOLD"


def test_every_setting_flies_every_dive_every_trial(settings):
    from brov2_hybrid.analysis.ardusub_experiment import load_compare_settings
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.head_to_head.command import flight_jobs
    ctx = argparse.Namespace(loop=load_analysis_settings().loop)
    _, placements = stored.load_hybrid_settings()
    a = stored.load_ardusub_settings()
    dives = inputs.held_out_dives(settings)
    jobs = flight_jobs(ctx, dives, 3, settings, load_compare_settings(), 0.5, a, placements)
    n_hybrid = sum(len(s) for _, s in placements.values())
    links = sorted({0.0} | {p.pilot_link_s for p, _ in placements.values()})
    assert links == [0.0, 0.02, 0.05]
    assert len(jobs) == 3 * len(dives) * (len(a) * len(links) + n_hybrid)
    assert sorted({j.pilot_link_ms for j in jobs if j.pilot == ARDUSUB}) == [0.0, 20.0, 50.0]
    assert {j.cs.start_depth_m for j in jobs} == {settings.start_depth_m}
    assert {j.placement_name for j in jobs} == {"ardusub", "tether", "realistic", "onboard"}


def test_the_command_refuses_latency_options_and_docs_with_dives(tmp_path, capsys):
    from brov2_hybrid.analysis import cli
    assert cli.main(["head-to-head", "--out", str(tmp_path), "--command-delay", "0.1"]) == 2
    assert "the stored ones" in capsys.readouterr().err
    assert cli.main(["head-to-head", "--out", str(tmp_path), "--docs", "--dive", "x.csv"]) == 2
    assert "--docs" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["head-to-head", "--trials", "many"])
    args = cli.build_parser().parse_args(["head-to-head", "--dive", "a.csv", "--dive", "b.csv", "--trials", "2"])
    assert args.dive == ["a.csv", "b.csv"] and args.trials == 2
    with pytest.raises(Brov2Error):
        inputs.dive_files(["/nonexistent/dive.csv"])


def test_the_report_section_says_when_it_was_not_run_and_repeats_the_verdict_otherwise():
    assert report.report_section({"skipped": "no ArduSub build"})[2] == "Not run: no ArduSub build."
    text = "\n".join(report.report_section(summary_of([_row("ardusub", "ardusub", "tuned", 100.0, 400.0),
                                                       _row("hybrid", "tether", "w6", 150.0, 390.0)])))
    assert text.startswith("## Head-to-head with tuned ArduSub") and "ArduSub wins" in text


class FakeFlight(object):
    def __init__(self):
        self.params, self.closed = {}, False

    def set_param(self, name, value):
        self.params[name] = value

    def message_interval(self, name, rate):
        self.params["interval " + name] = rate

    def close(self):
        self.closed = True


def test_a_flight_is_scored_on_its_dive_alone_and_refused_when_it_surfaces(monkeypatch, settings):
    from dataclasses import replace
    from brov2_hybrid.analysis.ardusub_experiment import load_compare_settings
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.head_to_head import flights
    made, depth = [], [15.0]

    def fake_new_flight(ctx, cs, start_depth_m):
        made.append(FakeFlight())
        return made[-1]

    def fake_run_on(flight, pilot, plan, relative_yaw, cs=None):
        log, truth = fake_log(n=int(plan.duration_s * 50) + 1, duration=plan.duration_s)
        descent = log["time_s"] < 40.0 - 1e-9
        truth[descent] -= math.radians(10.0)          # 12 deg off while descending: not scored
        log["depth_m"] = np.where(descent, 5.0, depth[0])
        log["reader_lag_s"] = np.zeros(len(log["time_s"]))
        return log, truth
    monkeypatch.setattr(flights, "new_flight", fake_new_flight)
    monkeypatch.setattr(flights, "run_on", fake_run_on)
    monkeypatch.setattr(flights, "_context", lambda loop: argparse.Namespace(vehicle=None))
    monkeypatch.setattr(flights, "make_pilot", lambda job, vehicle: None)
    monkeypatch.setattr(flights, "power_table", lambda vehicle: None)
    dive = inputs.first_seconds(inputs.held_out_dives(settings)[0][1], 10.0)
    cs = flights.fresh_sitl_settings(load_compare_settings(), settings)
    job = flights.FlightJob(ARDUSUB, None, "a", (("ATC_INPUT_TC", 0.01),), "d", dive, 2,
                            load_analysis_settings().loop, cs, 0.5, 2, 30.0, 10.0)
    out = flights.run_flight_job(job)
    row = out["row"]
    assert out["refusals"] == [] and row["attempts"] == 1 and row["trial"] == 2 and row["placement"] == "ardusub"
    assert row["iae_true_roll"] == pytest.approx(20.0, rel=0.01)       # 2 deg over the 10 s dive only
    assert made[0].params == {"ATC_INPUT_TC": 0.01, "PILOT_SPEED_UP": 50.0, "PILOT_SPEED_DN": 50.0}
    assert made[0].closed
    depth[0] = 0.5                                                       # surfaced during the dive
    out = flights.run_flight_job(replace(job, max_attempts=2))
    assert out["row"] is None and len(out["refusals"]) == 2 and "rose to 0.50 m" in out["refusals"][0]


@pytest.mark.parametrize("place_name", ["tether", "realistic"])
def test_a_hybrid_setting_with_the_delay_compensation_predicts_over_its_placements_command_delay(place_name):
    """The tuning switches the compensation on without a delay: the pilot then takes the placement's
    command delay (the tether's downlink), and a setting's own delay wins."""
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.head_to_head import stored
    from brov2_hybrid.head_to_head.flights import HYBRID, FlightJob, make_pilot
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    _, placements = stored.load_hybrid_settings()
    place = placements[place_name][0]
    loop = load_analysis_settings().loop
    vehicle = load_vehicle(loop.vehicle)

    def predictor(values):
        job = FlightJob(HYBRID, place, "t", values, "d", None, 1, loop, None, 0.5)
        return make_pilot(job, vehicle).controller.predictor
    p = predictor((("omega_d_rad_s", 8.0), ("delay_compensation_enabled", True)))
    assert p.enabled and p.command_delay_s == place.command_delay_s
    own = predictor((("omega_d_rad_s", 8.0), ("delay_compensation_enabled", True),
                     ("delay_compensation_command_delay_s", 0.123)))
    assert own.command_delay_s == 0.123
