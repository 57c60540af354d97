"""The optimizer of head-to-head --tune on cheap objectives with a known optimum (no ArduSub)."""
import math
import os
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.head_to_head import inputs, tune


@pytest.fixture(scope="module")
def s():
    return replace(inputs.load_settings(), seed=3, tune_repeats=1, tie_margin=0.05, tie_repeats=2, bound_margin=0.05,
                   widen_factor=4.0, max_widenings=3)


def bowl(centre, noise=0.0, seed=0, calls=None):
    """(iae, effort) of a log-scale bowl around ``centre`` ({name: value}); effort = the 'gain' knob."""
    rng = np.random.default_rng(seed)

    def evaluate(params_list):
        if calls is not None:
            calls.append(len(params_list))
        out = []
        for p in params_list:
            iae = 10.0 + sum(20.0 * math.log(p[n] / c) ** 2 for n, c in centre.items())
            iae += 5.0 * (not p.get("option", True))
            out.append((iae * (1.0 + noise * rng.standard_normal()), p["gain"]))
        return out
    return evaluate


def test_tpe_finds_a_bowls_bottom_inside_its_bounds(s):
    knobs = [tune.Knob("gain", 0.1, 10.0), tune.Knob("tc", 0.01, 1.0), tune.Knob("option", choices=(False, True))]
    r = tune.optimize(bowl({"gain": 1.0, "tc": 0.1}), knobs, 40, 0.0, s, batch=4)
    assert r.params["option"] is True
    assert abs(math.log(r.params["gain"])) < math.log(1.6) and abs(math.log(r.params["tc"] / 0.1)) < math.log(1.6)
    assert r.cost < 13.0 and r.at_bounds == [] and r.widenings == []


def test_an_optimum_beyond_a_bound_widens_it_until_inside(s):
    knobs = [tune.Knob("gain", 0.1, 10.0), tune.Knob("tc", 0.5, 2.0, hard_low=0.001)]   # tc's bottom at 0.05
    r = tune.optimize(bowl({"gain": 1.0, "tc": 0.05}), knobs, 96, 0.0, s, batch=4)
    assert [(w[0], w[1]) for w in r.widenings] == [("tc", "low"), ("tc", "low")]
    low, high = r.bounds["tc"]
    assert low < 0.05 < high
    assert "tc" not in r.at_bounds and abs(math.log(r.params["tc"] / 0.05)) < math.log(2.0)


def test_a_hard_limit_is_never_crossed_and_the_bound_is_reported(s):
    knobs = [tune.Knob("gain", 0.1, 10.0), tune.Knob("tc", 0.5, 2.0, hard_low=0.4)]
    r = tune.optimize(bowl({"gain": 1.0, "tc": 0.05}), knobs, 24, 0.0, s, batch=4)
    assert r.bounds["tc"][0] == 0.4 and r.params["tc"] >= 0.4
    assert r.at_bounds == ["tc"]


def test_the_effort_weight_moves_the_optimum_to_less_effort(s):
    knobs = [tune.Knob("gain", 0.1, 10.0), tune.Knob("tc", 0.01, 1.0)]
    free = tune.optimize(bowl({"gain": 3.0, "tc": 0.1}), knobs, 40, 0.0, s, batch=4)
    costly = tune.optimize(bowl({"gain": 3.0, "tc": 0.1}), knobs, 40, 20.0, s, batch=4, known=free.candidates)
    assert costly.params["gain"] < free.params["gain"] and costly.effort < free.effort


def test_near_ties_are_flown_again_and_judged_on_the_median(s):
    calls = []
    knobs = [tune.Knob("gain", 0.5, 2.0, log=False)]
    evaluate = bowl({"gain": 1.0}, noise=0.2, seed=1, calls=calls)
    r = tune.optimize(evaluate, knobs, 12, 0.0, replace(s, tie_margin=1.0), batch=4)
    assert sum(calls) > 12                 # the ties' repeats came after the budget
    (best,) = [c for c in r.candidates if c.params == r.params]
    assert r.flights == len(best.iae) == 1 + 2
    assert r.cost == pytest.approx(np.median(best.iae))     # weight 0: the median IAE of its three flights


def test_the_stored_start_is_flown_first_and_bad_budgets_are_refused(s):
    seen = []

    def evaluate(params_list):
        seen.extend(params_list)
        return [(1.0, 1.0)] * len(params_list)
    tune.optimize(evaluate, [tune.Knob("gain", 0.1, 10.0)], 3, 0.0, s, start={"gain": 2.5})
    assert seen[0] == {"gain": 2.5}
    with pytest.raises(Brov2Error, match="budget"):
        tune.optimize(evaluate, [tune.Knob("gain", 0.1, 10.0)], 0, 0.0, s)
    with pytest.raises(Brov2Error, match="knob gain"):
        tune.optimize(evaluate, [tune.Knob("gain", 0.0, 10.0)], 2, 0.0, s)


def test_bound_hit_and_widen_by_hand():
    assert tune.bound_hit(0.11, 0.1, 10.0, True, 0.05) == "low"        # log: 0.11 is 2 % of the way up
    assert tune.bound_hit(1.0, 0.1, 10.0, True, 0.05) is None
    assert tune.bound_hit(9.6, 0.0, 10.0, False, 0.05) == "high"
    k = tune.Knob("x", 1.0, 2.0, log=False, hard_high=2.5)
    assert tune.widen(k, 1.0, 2.0, "low", 4.0) == (-2.0, 2.0) and tune.widen(k, 1.0, 2.0, "high", 4.0) == (1.0, 2.5)
    assert tune.widen(tune.Knob("y", 0.1, 1.0), 0.1, 1.0, "low", 4.0) == (0.025, 1.0)


def test_refused_trials_are_never_scored_nor_chosen(s):
    def evaluate(params_list):     # the best region never flies (e.g. ArduSub disarms there)
        return [None if p["gain"] < 1.0 else (abs(p["gain"] - 1.0), 0.0) for p in params_list]
    r = tune.optimize(evaluate, [tune.Knob("gain", 0.1, 10.0)], 20, 0.0, s, batch=4)
    assert r.params["gain"] >= 1.0 and all(c.params["gain"] >= 1.0 for c in r.candidates)
    with pytest.raises(Brov2Error, match="every flight refused"):
        tune.optimize(lambda ps: [None] * len(ps), [tune.Knob("gain", 0.1, 10.0)], 4, 0.0, s, batch=2)


# ---------------------------------------------------------------- the search spaces and what is stored

def test_the_search_space_covers_every_attitude_parameter_the_issue_names():
    from brov2_hybrid.head_to_head import tune_run
    knobs = tune_run.load_knobs()
    names = {k.name for k in knobs["ardusub"]}
    for axis, short in (("RLL", "R"), ("PIT", "P"), ("YAW", "Y")):
        assert {"ATC_ANG_%s_P" % axis, "ATC_ACCEL_%s_MAX" % short, "ATC_RATE_%s_MAX" % short} <= names
        assert {"ATC_RAT_%s_%s" % (axis, g) for g in ("P", "I", "D", "FF", "FLTD", "FLTT", "FLTE")} <= names
    assert {"ATC_INPUT_TC", "ATC_SLEW_YAW"} <= names
    hybrid = {k.name: k for k in knobs["hybrid"]}
    # the integral action is in the hybrid's loop as the rate I is in ArduSub's (the ratio is tuned); the
    # depth hold's frequency is tuned no softer than hard_low
    assert "omega_d_rad_s" in hybrid and hybrid["integral_enabled"].choices == (True,)
    assert "integral_ratio" in hybrid and hybrid["heave_omega_rad_s"].hard_low > 0
    assert tune_run._start({"integral_enabled": False, "rate_window": 2}, knobs["hybrid"]) == {
        "integral_enabled": True, "rate_window": 2}              # a choice no longer offered: the first offered
    assert tune_run._start({"ATC_INPUT_TC": 0.01, "ATC_RAT_YAW_D": 0.0, "ATC_SLEW_YAW": 1e6, "OTHER": 1.0},
                           knobs["ardusub"]) == {"ATC_INPUT_TC": 0.01, "ATC_RAT_YAW_D": 0.0, "ATC_SLEW_YAW": 36000.0}
    from brov2_hybrid.head_to_head import stored
    start = dict(stored.load_ardusub_settings()[0].params)
    assert set(start) == names                    # the stored setting is complete: a tuning starts from it
    for setting in stored.load_ardusub_settings():               # every stored optimum inside the ranges
        params = dict(setting.params)
        assert tune_run._start(params, knobs["ardusub"]) == params, setting.label
    _, placements = stored.load_hybrid_settings()
    place, tuned = placements["tether"]
    side = tune_run.placement_knobs(knobs["hybrid"], place)
    for h in tuned:
        values = dict(h.options, omega_d_rad_s=h.omega_d_rad_s)
        values = {k.name: values[k.name] for k in side if k.name in values}
        assert tune_run._start(values, side) == values, h.label


def test_a_bad_search_space_names_the_knob(tmp_path):
    from brov2_hybrid.errors import ParameterError
    from brov2_hybrid.head_to_head import tune_run
    path = tmp_path / "space.yaml"
    path.write_text("ardusub:\n  ATC_INPUT_TC: {low: 0.0, high: 0.3, hard_low: 0.0, hard_high: 1.0}\nhybrid:\n"
                    "  omega_d_rad_s: {low: 2.0, high: 12.0, hard_low: 0.5, hard_high: 40.0}\n")
    with pytest.raises(ParameterError, match="ardusub.ATC_INPUT_TC.*low > 0 on a log scale"):
        tune_run.load_knobs(str(path))
    path.write_text("ardusub: {}\nhybrid:\n  omega: {low: 2.0, high: 12.0, hard_low: 0.5, hard_high: 40.0}\n")
    with pytest.raises(ParameterError, match="hybrid.omega.*configure"):
        tune_run.load_knobs(str(path))


class FakeRunner(object):
    """Runner.map without flights: a refused flight for yaw steps of setting 'bad', else fixed figures."""
    jobs = 2

    def map(self, fn, jobs, label):
        return [{"row": None, "refusals": ["refused"]} if (j.values[0][1] == "bad" and j.dive_name == "yaw step")
                else {"row": {"iae_true_sum": 10.0, "effort_s": 2.0}, "refusals": []} for j in jobs]


def test_the_training_objective_sums_the_inputs_and_drops_a_refused_trial():
    from brov2_hybrid.head_to_head import tune_run
    from brov2_hybrid.head_to_head.flights import FlightJob
    ctx = type("Ctx", (), {"runner": FakeRunner()})()
    train = [("bundled", None), ("roll step", None), ("yaw step", None)]
    evaluate = tune_run.training_objective(
        ctx, lambda p, n, d: FlightJob("ardusub", None, "t", tuple(p.items()), n, d, 1, None, None, 0.5), train, "t")
    assert evaluate([{"X": "good"}, {"X": "bad"}]) == [(30.0, 6.0), None]


def test_the_optima_are_stored_where_the_scoring_reads_them(tmp_path):
    import shutil
    from brov2_hybrid.head_to_head import stored, tune_run
    store = str(tmp_path)
    shutil.copy(stored.folder() + "/hybrid_tuned.yaml", store)
    _, placements = stored.load_hybrid_settings(store + "/hybrid_tuned.yaml")

    def result(weight, params):
        return tune.TuneResult(weight, params, 1.0, 1.0, 1.0, 3, {}, [], [], [])
    results = {"ardusub": [result(0.0, {"ATC_INPUT_TC": 0.02}), result(1.0, {"ATC_INPUT_TC": 0.05})]}
    results.update({"hybrid %s" % n: [result(0.0, {"omega_d_rad_s": 7.0, "integral_enabled": True}),
                                      result(1.0, {"omega_d_rad_s": 4.0, "integral_enabled": False})]
                    for n in placements})
    tune_run._store(store, results, placements, "tuned by the optimizer (test)")
    a = stored.load_ardusub_settings(store)
    assert [(x.label, dict(x.params)["ATC_INPUT_TC"]) for x in a] == [("tuned w=0", 0.02), ("tuned w=1", 0.05)]
    status, back = stored.load_hybrid_settings(store + "/hybrid_tuned.yaml")
    assert status == "tuned by the optimizer (test)"
    assert [h.omega_d_rad_s for h in back["tether"][1]] == [7.0, 4.0]
    assert back["realistic"][0] == placements["realistic"][0]


def test_on_board_the_tuning_searches_only_what_the_script_runs():
    from brov2_hybrid.head_to_head import stored, tune_run
    from brov2_hybrid.onboard.lua_script import NOT_ON_BOARD
    knobs = tune_run.load_knobs()["hybrid"]
    _, placements = stored.load_hybrid_settings()
    names = {p: [k.name for k in tune_run.placement_knobs(knobs, placements[p][0])] for p in placements}
    assert "delay_compensation_enabled" in names["tether"] and "delay_compensation_enabled" in names["realistic"]
    assert "delay_compensation_enabled" in NOT_ON_BOARD and "delay_compensation_enabled" not in names["onboard"]
    assert set(names["tether"]) - set(names["onboard"]) == set(NOT_ON_BOARD) & set(names["tether"])
    assert [k.name for k in tune_run.placement_knobs(knobs, None)] == [k.name for k in knobs]


def test_weightings_that_found_the_same_optimum_store_it_once_under_a_joint_label(tmp_path):
    import shutil
    from brov2_hybrid.head_to_head import stored, tune_run
    store = str(tmp_path)
    shutil.copy(stored.folder() + "/hybrid_tuned.yaml", store)
    _, placements = stored.load_hybrid_settings(store + "/hybrid_tuned.yaml")

    def result(weight, params, at_bounds=()):
        return tune.TuneResult(weight, params, 1.0, 1.0, 1.0, 3, {}, [], list(at_bounds), [])
    same, other = {"ATC_INPUT_TC": 0.02}, {"ATC_INPUT_TC": 0.05}
    results = {"ardusub": [result(0.0, other), result(0.2, same, ["ATC_RAT_PIT_D"]), result(1.0, same)]}
    results.update({"hybrid %s" % n: [result(0.0, {"omega_d_rad_s": 7.0}), result(0.2, {"omega_d_rad_s": 7.0}),
                                      result(1.0, {"omega_d_rad_s": 4.0})] for n in placements})
    tune_run._store(store, results, placements, "tether: tuned (test); realistic: not")     # a status with ': '
    a = stored.load_ardusub_settings(store)
    assert [(x.label, dict(x.params)["ATC_INPUT_TC"]) for x in a] == [("tuned w=0", 0.05), ("tuned w=0.2, 1", 0.02)]
    status, back = stored.load_hybrid_settings(store + "/hybrid_tuned.yaml")
    assert status == "tether: tuned (test); realistic: not"
    assert [(h.label, h.omega_d_rad_s) for h in back["tether"][1]] == [("tuned w=0, 0.2", 7.0), ("tuned w=1", 4.0)]


def test_tune_only_tunes_the_sides_named_and_the_store_keeps_the_others_saying_so(tmp_path):
    import shutil
    from brov2_hybrid.head_to_head import stored, tune_run
    names = ["ardusub", "tether", "realistic", "onboard"]
    assert tune_run.chosen_sides(names) == names and tune_run.chosen_sides(names, []) == names
    assert tune_run.chosen_sides(names, ["onboard", "tether"]) == ["tether", "onboard"]     # in the file's order
    with pytest.raises(Brov2Error, match="--tune-only teether: expected one of ardusub, tether"):
        tune_run.chosen_sides(names, ["teether"])
    store = str(tmp_path)
    for name in os.listdir(stored.folder()):
        shutil.copy(os.path.join(stored.folder(), name), store)
    old_status, placements = stored.load_hybrid_settings(store + "/hybrid_tuned.yaml")
    parms = {name: open(os.path.join(store, name)).read() for name in os.listdir(store) if name.endswith(".parm")}
    results = {"hybrid tether": [tune.TuneResult(0.0, {"omega_d_rad_s": 6.5}, 1.0, 1.0, 1.0, 3, {}, [], [], [])]}
    tune_run._store(store, results, placements, "tuned (test)", old_status)
    status, back = stored.load_hybrid_settings(store + "/hybrid_tuned.yaml")
    assert [(h.label, h.omega_d_rad_s) for h in back["tether"][1]] == [("tuned w=0", 6.5)]
    assert back["realistic"] == placements["realistic"] and back["onboard"] == placements["onboard"]
    # what the old status said of the kept placements, not the whole old status nested in the new
    kept = [part for part in old_status.split("; ") if not part.startswith("tether")]
    assert status == "tether: tuned (test); " + "; ".join(kept)
    assert tune_run._status_of("hand-picked", ["realistic"]) == ""
    assert tune_run._status_of("tether: a; realistic and onboard: b", ["onboard", "realistic"]) == \
        "realistic and onboard: b"
    tune_run._store(store, results, placements, "tuned (test)", "hand-picked")
    status, _ = stored.load_hybrid_settings(store + "/hybrid_tuned.yaml")
    assert status == "tether: tuned (test); realistic, onboard: kept as stored before (hand-picked)"
    # ArduSub not tuned: its files untouched
    assert {name: open(os.path.join(store, name)).read() for name in os.listdir(store) if name.endswith(".parm")} == parms


def test_tune_only_needs_tune():
    import argparse
    from brov2_hybrid.head_to_head import command
    args = argparse.Namespace(tune_only=["tether"], tune=False, docs=False)
    with pytest.raises(Brov2Error, match="--tune-only: only with --tune"):
        command.run(None, args)


def test_the_hybrids_omega_d_is_held_to_omega_limits_safe_value_for_its_loop(s):
    """A cost whose bottom lies at omega_d 20: uncapped, the tuner widens past 14 and stores it there;
    held to a safe 14, it never flies past 14 and stores 14 at most."""
    from brov2_hybrid.head_to_head import tune_run
    flown = []

    def evaluate(params_list):
        flown.extend(p["omega_d_rad_s"] for p in params_list)
        return [(10.0 + 20.0 * math.log(p["omega_d_rad_s"] / 20.0) ** 2, 1.0) for p in params_list]
    knobs = [tune.Knob("omega_d_rad_s", 2.0, 12.0, True, 0.5, 40.0)]
    free = tune.optimize(evaluate, knobs, 30, 0.0, s, batch=2)
    assert free.params["omega_d_rad_s"] > 14.0
    del flown[:]
    held = tune.optimize(evaluate, tune_run.capped_knobs(knobs, 14.0), 30, 0.0, s, batch=2)
    assert max(flown) <= 14.0 and 12.0 < held.params["omega_d_rad_s"] <= 14.0   # up to the cap, not past it
    assert tune_run.capped_knobs(knobs, None) == knobs
    with pytest.raises(Brov2Error, match="omega_d_rad_s.*safe 1.*low 2"):
        tune_run.capped_knobs(knobs, 1.0)


def test_the_safe_omega_d_is_the_best_of_omega_limits_rows_for_the_placements_loop(tmp_path):
    import json
    from brov2_hybrid.head_to_head import stored, tune_run
    place = stored.Placement("tether", 50.0, 0.02, 0.02)
    rows = [("tether", 50.0, 0.02, 0.02, 7.0), ("tether+comp", 50.0, 0.02, 0.02, 14.0),
            ("realistic", 50.0, 0.05, 0.05, 5.0), ("ideal", 50.0, 0.0, 0.0, 16.0)]
    table = {"conditions": [{"name": n, "telemetry_rate_hz": r, "telemetry_delay_s": a, "command_delay_s": b}
                            for n, r, a, b, _ in rows], "safe_omega_d": {n: v for n, _, _, _, v in rows}}
    path = tmp_path / "omega_limit.json"
    path.write_text(json.dumps(table))
    assert tune_run.safe_omega_d(place, str(path)) == 14.0
    assert tune_run.safe_omega_d(stored.Placement("realistic", 50.0, 0.05, 0.05), str(path)) == 5.0
    assert tune_run.safe_omega_d(stored.Placement("slow", 20.0, 0.05, 0.05), str(path)) is None
    assert tune_run.safe_omega_d(place, str(tmp_path / "missing.json")) is None
    # the project's own table has a row for every stored placement's loop
    _, placements = stored.load_hybrid_settings()
    assert all(tune_run.safe_omega_d(p) is not None for p, _ in placements.values())
