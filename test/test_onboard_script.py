"""brov2_hybrid.onboard.lua_script: the script is written from the vehicle file, controller.yaml and
onboard.yaml (never hand-copied numbers), and options it cannot run are refused by name."""
import dataclasses
import os
import re

import numpy as np
import pytest
import yaml

from brov2_hybrid import params
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.onboard import __main__ as onboard_cli
from brov2_hybrid.onboard.lua_script import load_onboard_settings, render_script, script_values
from brov2_hybrid.vehicle.allocation import make_allocator
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

SETTINGS = params.load_controller_params()
ONBOARD = load_onboard_settings()


def lua_table(text, name):
    """The numbers of ``name = {...}`` in the script (nested braces flattened)."""
    match = re.search(r"^  %s = (\{.*\}),$" % name, text, re.M)
    assert match, name
    return [float(x) for x in re.findall(r"[-+0-9.e]+", match.group(1))]


def test_the_scripts_numbers_are_the_vehicle_files(tmp_path):
    vehicle = load_vehicle("bluerov2_heavy")
    text = render_script(vehicle, SETTINGS, ONBOARD)
    assert lua_table(text, "tau_max") == vehicle.tau_max.tolist()
    assert lua_table(text, "force_matrix") == vehicle.allocator.force_matrix.ravel().tolist()
    assert lua_table(text, "inv_force") == vehicle.table.inv_force_n.tolist()
    # a change of the vehicle file reaches the script: a lower force limit, a smaller tau_max
    data = yaml.safe_load(open(vehicle.source))
    data["thrusters"]["force_limit_n"] = 30.0
    data["thrust_table"]["csv_file"] = os.path.join(os.path.dirname(vehicle.source), data["thrust_table"]["csv_file"])
    path = tmp_path / "weaker.yaml"
    path.write_text(yaml.safe_dump(data))
    weaker = render_script(load_vehicle(str(path)), SETTINGS, ONBOARD)
    assert lua_table(weaker, "tau_max") == pytest.approx((vehicle.tau_max * 30.0 / 49.95).tolist())


def test_the_gains_inputs_and_the_knob_come_from_controller_yaml():
    vehicle = load_vehicle("bluerov2_heavy")
    values = script_values(vehicle, dataclasses.replace(SETTINGS, omega_d_rad_s=7.5, kappa=11.0,
                                                        closed_loop_enabled=(True, False, True)), ONBOARD)
    assert (values["omega_d"], values["kappa"], values["enabled"]) == ("7.5", "11.0", "{1.0, 0.0, 1.0}")
    assert script_values(vehicle, dataclasses.replace(SETTINGS, feedforward_enabled=False), ONBOARD)["ff_lever"] == "false"


@pytest.mark.parametrize("key", ["depth_hold_enabled", "delay_compensation_enabled"])
def test_an_option_the_script_does_not_run_is_refused_by_name(key):
    with pytest.raises(ParameterError, match=r"controller\.%s: the on-board script does not run this option" % key):
        script_values(load_vehicle("bluerov2_heavy"), dataclasses.replace(SETTINGS, **{key: True}), ONBOARD)


def test_the_optional_terms_settings_come_from_controller_yaml():
    vehicle = load_vehicle("bluerov2_heavy")
    off = script_values(vehicle, SETTINGS, ONBOARD)
    assert (off["integral"], off["reference_feedforward"], off["drag_feedforward"]) == ("false",) * 3
    on = script_values(vehicle, dataclasses.replace(
        SETTINGS, integral_enabled=True, integral_ratio=0.3, integral_band_rad=0.05, reference_feedforward_enabled=True,
        reference_filter_omega_rad_s=17.0, drag_feedforward_enabled=True), ONBOARD)
    assert (on["integral"], on["reference_feedforward"], on["drag_feedforward"]) == ("true",) * 3
    assert (on["integral_ratio"], on["integral_band_rad"], on["reference_omega"]) == ("0.3", "0.05", "17.0")
    assert on["reference_max_gap_s"] == repr(SETTINGS.reference_filter_max_gap_s)
    drag = np.vstack([vehicle.body.linear_drag[3:], vehicle.body.quadratic_drag[3:]])
    assert on["drag"] == "{" + ", ".join("{" + ", ".join(repr(float(x)) for x in row) + "}" for row in drag) + "}"


def test_a_nonlinear_allocator_is_refused():
    vehicle = load_vehicle("bluerov2_heavy")
    vehicle.allocator = make_allocator("saturating", vehicle)
    with pytest.raises(ParameterError, match="allocator 'saturating' is not linear"):
        script_values(vehicle, SETTINGS, ONBOARD)


@pytest.mark.parametrize("key, value, message", [
    ("override_timeout_ms", 5, "must exceed the loop period"),
    ("desired_lost_s", 0.5, "must exceed desired_timeout_s"),
    ("active_modes", [], "expected a non-empty list"),
    ("param_prefix", "hyb", "upper-case prefix"),
    ("rate_hz", "fast", "rate_hz"),
])
def test_a_bad_onboard_yaml_names_its_key(tmp_path, key, value, message):
    data = yaml.safe_load(open(ONBOARD.source))
    data["onboard"][key] = value
    path = tmp_path / "onboard.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ParameterError, match="onboard.yaml:onboard.%s.*%s|%s" % (key, message, message)):
        load_onboard_settings(str(path))


def test_the_command_line_writes_the_script(tmp_path, capsys):
    out = tmp_path / "hybrid.lua"
    assert onboard_cli.main(["--vehicle", "bluerov2", "--out", str(out)]) == 0
    assert 'vehicle = "bluerov2"' in out.read_text()
    bad = tmp_path / "controller.yaml"
    data = yaml.safe_load(open(SETTINGS.source))
    data["controller"]["integral_enabled"] = True
    bad.write_text(yaml.safe_dump(data))
    assert onboard_cli.main(["--controller", str(bad), "--out", str(out)]) == 0
    assert "integral = true," in out.read_text()
    data["controller"]["depth_hold_enabled"] = True
    bad.write_text(yaml.safe_dump(data))
    assert onboard_cli.main(["--controller", str(bad), "--out", str(out)]) == 2
    assert "depth_hold_enabled" in capsys.readouterr().err


def test_the_desired_state_message_refuses_bad_values():
    from brov2_hybrid.errors import Brov2Error
    from brov2_hybrid.onboard.desired_link import DATA_LENGTH, desired_data
    data = desired_data([0.1, 0.2, 0.3], [0.0, 0.0, 0.1], [1.0, -1.0, 0.5])
    assert len(data) == DATA_LENGTH and data[:9] == [0.1, 0.2, 0.3, 0.0, 0.0, 0.1, 1.0, -1.0, 0.5]
    with pytest.raises(Brov2Error, match=r"u_linear: expected values in \[-1, 1\]"):
        desired_data([0.0] * 3, [0.0] * 3, [1.5, 0.0, 0.0])
    with pytest.raises(Brov2Error, match="eta2d"):
        desired_data([0.0, float("nan"), 0.0], [0.0] * 3, [0.0] * 3)
