"""``brov2-analyze head-to-head``'s stored settings (params/head_to_head/): the optimizer's, within their
search space, with the placements' latencies; the files round-trip and bad ones are named."""
import dataclasses

import pytest

from brov2_hybrid.errors import ParameterError
from brov2_hybrid.head_to_head import inputs, stored


def _within_hard_limits(values, knobs):
    """The knobs of ``values`` outside their search space's hard limits (or not a choice it offers)."""
    out = []
    for k in knobs:
        if k.name not in values:
            continue
        v = values[k.name]
        if (k.choices and v not in k.choices) or (not k.choices and not k.hard_low <= float(v) <= k.hard_high):
            out.append((k.name, v))
    return out


def test_the_stored_ardusub_settings_are_the_optimizers_one_per_distinct_optimum_within_the_search_space():
    from brov2_hybrid.head_to_head.tune_run import load_knobs
    settings = stored.load_ardusub_settings()
    weights = [float(w) for a in settings for w in a.label[len("tuned w="):].split(", ")]
    assert sorted(weights) == sorted(inputs.load_settings().effort_weights_deg)     # every weighting, once
    knobs = load_knobs()["ardusub"]
    for a in settings:
        assert a.status.startswith("tuned by the optimizer")
        values = dict(a.params)
        assert set(values) == {k.name for k in knobs} and _within_hard_limits(values, knobs) == []
    assert len({a.params for a in settings}) == len(settings)


def test_the_stored_hybrid_placements_have_the_issues_latencies_and_the_tether_is_the_optimizers():
    from brov2_hybrid.head_to_head.tune_run import load_knobs, placement_knobs
    status, placements = stored.load_hybrid_settings()
    assert status.startswith("tether: tuned by the optimizer")
    got = {n: (p.telemetry_rate_hz, p.telemetry_delay_s, p.command_delay_s) for n, (p, _) in placements.items()}
    assert got["tether"] == (50.0, 0.02, 0.02) and got["realistic"] == (50.0, 0.05, 0.05)
    assert got["onboard"][1] < 0.02 and got["onboard"][2] < 0.02
    place, tuned = placements["tether"]
    knobs = placement_knobs(load_knobs()["hybrid"], place)
    weights = [float(w) for h in tuned for w in h.label[len("tuned w="):].split(", ")]
    every = inputs.load_settings().effort_weights_deg
    # each tuned weighting once; a weighting not tuned (yet) is named in the status, never silently absent
    assert len(weights) == len(set(weights)) and set(weights) <= set(every)
    for w in set(every) - set(weights):
        assert "w=%g not yet tuned" % w in status, (w, status)
    for h in tuned:
        assert set(dict(h.options)) == {k.name for k in knobs} and _within_hard_limits(dict(h.options), knobs) == []
    # the pilot's input crosses the same tether: the override's link topside, the tether's on board
    links = {n: (p.pilot_link_s, p.reference_delay_s) for n, (p, _) in placements.items()}
    assert links == {"tether": (0.02, 0.0), "realistic": (0.05, 0.0), "onboard": (0.02, 0.02)}


def test_the_onboard_placement_is_omega_limits_onboard_condition_at_an_omega_d_it_finds_safe():
    """The stored onboard placement flies the loop omega-limit's "onboard" row is computed for, and the
    script's law (no optional term) at an omega_d that row finds safe (docs/tables/omega_limit.json)."""
    import json
    import os
    from brov2_hybrid import paths
    from brov2_hybrid.analysis.omega_limit import load_omega_limit_settings
    (cond,) = [c for c in load_omega_limit_settings().conditions if c.name == "onboard"]
    _, placements = stored.load_hybrid_settings()
    place, settings = placements["onboard"]
    assert (place.telemetry_rate_hz, place.telemetry_delay_s, place.command_delay_s) == (
        cond.telemetry_rate_hz, cond.telemetry_delay_s, cond.command_delay_s)
    with open(os.path.join(paths.package_root(), "docs", "tables", "omega_limit.json")) as handle:
        safe = json.load(handle)["safe_omega_d"]["onboard"]
    from brov2_hybrid.onboard.lua_script import load_onboard_settings, script_values
    from brov2_hybrid.params import load_controller_params
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    vehicle, onboard, base = load_vehicle("bluerov2_heavy"), load_onboard_settings(), load_controller_params()
    for h in settings:
        # every setting flown on board is one the script runs: its generator accepts the options
        script_values(vehicle, dataclasses.replace(base, **dict(h.options)), onboard)
        assert h.omega_d_rad_s <= safe
    assert any(set(dict(h.options)) == {"omega_d_rad_s"} for h in settings)     # the paper's PD flies too


def test_a_placement_on_the_vehicle_must_state_its_pilot_link(tmp_path):
    path = tmp_path / "h.yaml"
    path.write_text("status: s\nplacements:\n  onboard:\n    telemetry_rate_hz: 100.0\n    settings:\n"
                    "      - {label: a, omega_d_rad_s: 8.0}\n")
    with pytest.raises(ParameterError, match=r"h.yaml.*placements.onboard.pilot_link_s.*missing"):
        stored.load_hybrid_settings(str(path))
    path.write_text("status: s\nplacements:\n  tether:\n    telemetry_rate_hz: 50.0\n    telemetry_delay_s: 0.0\n"
                    "    command_delay_s: 0.03\n"
                    "    settings:\n      - {label: a, omega_d_rad_s: 8.0}\n")
    _, got = stored.load_hybrid_settings(str(path))
    assert got["tether"][0].pilot_link_s == 0.03 and got["tether"][0].reference_delay_s == 0.0   # the override's


def test_parm_files_round_trip_and_bad_lines_name_file_and_line(tmp_path):
    s = stored.ArduSubSetting("w 0.2", "tuned by the optimizer", (("ATC_INPUT_TC", 0.05), ("ATC_RAT_RLL_P", 0.3)))
    path = stored.write_parm(str(tmp_path / "a.parm"), s, ["a comment"])
    back = stored.read_parm(path)
    assert (back.label, back.status, back.params) == (s.label, s.status, s.params)
    bad = tmp_path / "b.parm"
    bad.write_text("# setting: x\nATC_INPUT_TC 0.01\nATC_RAT_RLL_P fast\n")
    with pytest.raises(ParameterError, match=r"b.parm:3: ATC_RAT_RLL_P: expected a finite number"):
        stored.read_parm(str(bad))
    bad.write_text("ATC_INPUT_TC 0.01\n")
    with pytest.raises(ParameterError, match="setting: LABEL"):
        stored.read_parm(str(bad))
    bad.write_text("# setting: x\nATC_INPUT_TC 0.01\nATC_INPUT_TC 0.02\n")
    with pytest.raises(ParameterError, match="b.parm:3: ATC_INPUT_TC given twice"):
        stored.read_parm(str(bad))


def test_hybrid_yaml_round_trips_and_an_unknown_option_is_named(tmp_path):
    status, placements = stored.load_hybrid_settings()
    h = stored.HybridSetting("w 7, +I: fast", (("omega_d_rad_s", 7.0), ("integral_enabled", True), ("rate_window", 2)))
    placements["tether"] = (placements["tether"][0], [h])
    path = stored.write_hybrid(str(tmp_path / "h.yaml"), "tuned", placements)
    status2, back = stored.load_hybrid_settings(path)
    assert status2 == "tuned" and back["tether"][1] == [h]
    # a count stays an integer, which is what configure accepts (a float 2.0 is refused there)
    assert dict(back["tether"][1][0].options)["rate_window"] == 2 and "rate_window: 2}" in open(path).read()
    assert back["realistic"][0] == placements["realistic"][0]
    text = open(path).read().replace("integral_enabled", "integral_on")
    (tmp_path / "h.yaml").write_text(text)
    with pytest.raises(ParameterError, match=r"placements.tether.settings\[0\].integral_on: unknown"):
        stored.load_hybrid_settings(path)
    (tmp_path / "h.yaml").write_text(text.replace("integral_on", "integral_enabled").replace("rate_window: 2", "rate_window: 2.0"))
    with pytest.raises(ParameterError, match=r"settings\[0\].rate_window: rate_window: expected an integer"):
        stored.load_hybrid_settings(path)


