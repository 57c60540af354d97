"""What docs/experiments.md's "Where the hybrid loses, and why" says, checked against the head-to-head's
saved data (docs/tables/head_to_head.json, written by make reproduce): when a new run changes one of
these facts, this fails until the text follows."""
import pytest

from brov2_hybrid.analysis import doc_tables
from brov2_hybrid.head_to_head.scoring import best_at_effort

DIVES = ("fast_turns", "tilted_translation")


@pytest.fixture(scope="module")
def data():
    return doc_tables.load_data("head_to_head")


def points(data, dive, **match):
    return [p for p in data["points"] if p["dive"] == dive and all(p[k] == v for k, v in match.items())]


def ardusub(data, dive, link_ms):
    (p,) = [p for p in points(data, dive, pilot="ardusub") if abs(p["pilot_link_ms"] - link_ms) < 1e-6]
    return p


def setting(data, dive, placement, label):
    (p,) = points(data, dive, placement=placement, setting=label)
    return p


def tether_link_ms(data):
    return 1000.0 * data["placements"]["tether"]["pilot_link_s"]


@pytest.mark.parametrize("dive", DIVES)
def test_the_pilot_link_shrinks_ardusubs_lead_and_ardusub_still_wins_behind_the_tether(data, dive):
    near, linked = ardusub(data, dive, 0.0), ardusub(data, dive, tether_link_ms(data))
    assert linked["iae_true_sum"] > near["iae_true_sum"]
    best = best_at_effort(points(data, dive), "hybrid", placement="tether")
    assert best["iae_true_sum"] > linked["iae_true_sum"]
    assert min(p["effort_s"] for p in points(data, dive, pilot="hybrid")) > linked["effort_s"]
    assert min(p["energy_kj"] for p in points(data, dive, pilot="hybrid")) > linked["energy_kj"]


@pytest.mark.parametrize("dive", DIVES)
def test_behind_the_tether_the_hybrid_loses_on_roll_and_pitch_and_holds_depth_tighter(data, dive):
    linked = ardusub(data, dive, tether_link_ms(data))
    best = best_at_effort(points(data, dive), "hybrid", placement="tether")
    assert best["iae_true_roll"] > linked["iae_true_roll"] and best["iae_true_pitch"] > linked["iae_true_pitch"]
    assert all(p["depth_rms_m"] < linked["depth_rms_m"] for p in points(data, dive, placement="tether"))


@pytest.mark.parametrize("dive", DIVES)
def test_energy_narrows_the_extra_spend_without_removing_it(data, dive):
    hybrid = points(data, dive, pilot="hybrid")
    theirs = points(data, dive, pilot="ardusub")
    assert min(p["energy_kj"] for p in hybrid) > max(p["energy_kj"] for p in theirs)
    effort_ratio = min(p["effort_s"] for p in hybrid) / max(p["effort_s"] for p in theirs)
    energy_ratio = min(p["energy_kj"] for p in hybrid) / max(p["energy_kj"] for p in theirs)
    assert energy_ratio < effort_ratio


SCRIPT_LAW = "omega_d 10 (the on-board script's PD)"
ON_BOARD_WITH_TERMS = "omega_d 10 + ref FF + I (on-board script)"


def test_the_script_law_on_board_matches_the_tether_on_turns_and_falls_behind_at_tilt(data):
    def ratio(dive):
        onboard = setting(data, dive, "onboard", SCRIPT_LAW)
        return onboard["iae_true_sum"] / best_at_effort(points(data, dive), "hybrid", placement="tether")["iae_true_sum"]
    assert ratio("fast_turns") <= 1.1
    assert ratio("tilted_translation") > 1.3


@pytest.mark.parametrize("dive", DIVES)
def test_on_board_with_its_terms_the_law_beats_ardusub_behind_the_same_link_for_more_energy(data, dive):
    mine = setting(data, dive, "onboard", ON_BOARD_WITH_TERMS)
    theirs = ardusub(data, dive, 1000.0 * data["placements"]["onboard"]["pilot_link_s"])
    assert mine["iae_true_sum"] < theirs["iae_true_sum"]
    assert mine["iae_true_sum"] < setting(data, dive, "onboard", SCRIPT_LAW)["iae_true_sum"]
    assert mine["effort_s"] > theirs["effort_s"] and mine["energy_kj"] > theirs["energy_kj"]


def test_the_training_set_pick_without_integral_falls_behind_at_tilt(data):
    without = setting(data, "tilted_translation", "tether", "omega_d 7 + ref FF")
    with_i = setting(data, "tilted_translation", "tether", "omega_d 7 + ref FF + I")
    assert without["iae_true_sum"] > 1.3 * with_i["iae_true_sum"]


@pytest.mark.parametrize("dive", DIVES)
def test_on_the_realistic_link_the_compensated_law_beats_the_plain_one_and_trails_the_tether(data, dive):
    comp = setting(data, dive, "realistic", "omega_d 12 + delay comp + ref FF + I")
    plain = setting(data, dive, "realistic", "omega_d 5")
    assert comp["iae_true_sum"] < plain["iae_true_sum"]
    assert comp["iae_true_sum"] > 2.0 * best_at_effort(points(data, dive), "hybrid", placement="tether")["iae_true_sum"]
