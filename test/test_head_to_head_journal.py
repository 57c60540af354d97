"""head-to-head --tune resumes an interrupted tuning from its flight journal (tune_run.FlightJournal), on a cheap
objective (no ArduSub): a resumed tuning flies only what the journal lacks and ends where an uninterrupted one
ends; a journal of other settings, or a corrupt one, is refused."""
import math
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.head_to_head import inputs, tune
from brov2_hybrid.head_to_head.tune_run import FlightJournal, fingerprint, training_objective

TRAIN = [("first", None), ("second", None)]
KNOBS = [tune.Knob("gain", 0.1, 10.0), tune.Knob("tc", 0.01, 1.0), tune.Knob("option", choices=(False, True))]


@pytest.fixture(scope="module")
def s():
    return replace(inputs.load_settings(), seed=3, tune_repeats=2, tie_margin=0.05, tie_repeats=2, bound_margin=0.05,
                   widen_factor=4.0, max_widenings=3)


class Interrupted(Exception):
    pass


class FakeRunner(object):
    """Flies (params, training input) jobs: a bowl plus noise drawn per flight, so that flying a flight again
    gives another figure; raises Interrupted on map call number ``stop_at`` (the run killed)."""

    jobs = 2

    def __init__(self, stop_at=None, seed=0):
        self.rng = np.random.default_rng(seed)
        self.calls, self.flown, self.stop_at = 0, 0, stop_at

    def map(self, fn, jobs, label):
        self.calls += 1
        if self.calls == self.stop_at:
            raise Interrupted()
        out = []
        for params, name in jobs:
            iae = 10.0 + 20.0 * math.log(params["gain"]) ** 2 + 20.0 * math.log(params["tc"] / 0.1) ** 2
            iae += 5.0 * (not params["option"]) + (1.0 if name == "second" else 0.0)
            out.append({"row": {"iae_true_sum": iae * (1.0 + 0.05 * self.rng.standard_normal()),
                                "effort_s": params["gain"]}})
        self.flown += len(jobs)
        return out


class Ctx(object):
    def __init__(self, runner):
        self.runner = runner


def tuned(s, runner, journal):
    evaluate = training_objective(Ctx(runner), lambda p, name, dive: (dict(p), name), TRAIN, "tune", journal, "ardusub")
    return tune.optimize(evaluate, KNOBS, 16, 0.0, s, batch=2)


def test_an_interrupted_tuning_resumes_from_its_journal_and_ends_where_an_uninterrupted_one_ends(s, tmp_path):
    whole_runner = FakeRunner()
    whole = tuned(s, whole_runner, FlightJournal(str(tmp_path / "whole.jsonl"), "f"))
    path = str(tmp_path / "cut.jsonl")
    with pytest.raises(Interrupted):
        tuned(s, FakeRunner(stop_at=4), FlightJournal(path, "f"))            # killed in its 4th batch
    journal = FlightJournal(path, "f")
    assert len(journal.rows) == 3 * 2 * 2 * len(TRAIN)                         # 3 batches of 2 trials x 2 repeats
    # the resumed run's noise continues where the killed run's stopped, as a rerun's would
    rest = FakeRunner(seed=0)
    rest.rng.standard_normal(len(journal.rows))
    resumed = tuned(s, rest, journal)
    assert journal.replayed == len(journal.rows) - rest.flown == 24 and rest.flown == whole_runner.flown - 24
    assert resumed.params == whole.params and resumed.cost == whole.cost
    assert [c.params for c in resumed.candidates] == [c.params for c in whole.candidates]


def test_without_its_journal_a_rerun_flies_everything_again_with_other_figures(s, tmp_path):
    """What the journal saves: rerun after the same interruption without it, the tuning flies every flight
    again, and the flights the killed run had made come out with other figures (a real flight's noise)."""
    whole_runner = FakeRunner()
    whole = tuned(s, whole_runner, FlightJournal(str(tmp_path / "whole.jsonl"), "f"))
    with pytest.raises(Interrupted):
        tuned(s, FakeRunner(stop_at=4), FlightJournal(str(tmp_path / "cut.jsonl"), "f"))
    rest = FakeRunner(seed=0)
    rest.rng.standard_normal(24)
    again = tuned(s, rest, FlightJournal(str(tmp_path / "fresh.jsonl"), "f"))
    assert rest.flown == whole_runner.flown
    assert again.candidates[0].params == whole.candidates[0].params          # the seeded first trial
    assert again.candidates[0].iae != whole.candidates[0].iae


def test_a_journal_of_other_settings_is_refused_and_a_cut_last_line_dropped(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = FlightJournal(str(path), fingerprint(1, "settings"))
    keys = [journal.key("ardusub", {"gain": 1.0}, "first") for _ in range(2)]
    assert keys[0] != keys[1]                                                 # a repeat is another flight
    journal.map(FakeRunner(), [({"gain": 1.0, "tc": 0.1, "option": True}, "first")] * 2, keys, "tune")
    with pytest.raises(Brov2Error, match=r"j\.jsonl: a tuning journal of other settings"):
        FlightJournal(str(path), fingerprint(2, "settings"))
    with open(path, "a") as handle:
        handle.write('{"key": "cut sh')                                       # the run killed mid-write
    again = FlightJournal(str(path), fingerprint(1, "settings"))
    assert len(again.rows) == 2 and path.read_text().endswith("\n")
    with open(path, "a") as handle:
        handle.write("not json\n")
        handle.write('{"key": "k", "figures": null}\n')
    with pytest.raises(Brov2Error, match=r"j\.jsonl:4: expected a journal line"):
        FlightJournal(str(path), fingerprint(1, "settings"))


def test_the_fingerprint_sees_every_value_of_an_array():
    a = np.zeros(5000)
    b = a.copy()
    b[2500] = 1e-9                                                           # where numpy's repr would print "..."
    assert fingerprint(a) != fingerprint(b) and fingerprint(a) == fingerprint(a.copy())


def test_the_physics_signature_changes_with_what_a_flight_would_give(vehicle):
    """The journal's fingerprint holds sim.plant.physics_signature: the same for the same physics, another
    for another vehicle file's numbers, another model, or another integration step."""
    import dataclasses
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.sim.plant import physics_signature
    options = load_sim_options()
    base = physics_signature(vehicle, options)
    assert physics_signature(vehicle, load_sim_options()) == base
    heavier = dataclasses.replace(vehicle, body=dataclasses.replace(vehicle.body,
                                                                    weight_n=vehicle.body.weight_n * 1.001))
    assert physics_signature(heavier, options) != base
    assert physics_signature(vehicle, dataclasses.replace(options, model="stock")) != base
    assert physics_signature(vehicle, dataclasses.replace(options, dt_s=options.dt_s / 2.0)) != base
