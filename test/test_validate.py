"""brov2_hybrid.validate (the one set of value checks) and params.Section, which applies them
to a parameter mapping and names file and key; the controller rules shared by
controller.yaml and the live retune."""
import math

import numpy as np
import pytest
import yaml

from brov2_hybrid import params, validate
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.node_logic.node_params import ParamReader


@pytest.mark.parametrize("value, kwargs, match", [
    (True, {}, r"x: expected a number, got True"),
    ("1.5", {}, r"x: expected a number, got '1.5'"),
    (np.array([1.0, 2.0]), {}, r"x: expected a number, got array"),
    (float("nan"), {}, r"x: expected a finite number, got nan"),
    (0.0, {"minimum": 0.0, "strict_min": True}, r"x: expected a number > 0, got 0.0"),
    (-1, {"minimum": 0.0}, r"x: expected a number >= 0, got -1"),
    (2.0, {"maximum": 1.0}, r"x: expected a number <= 1, got 2.0"),
    (1.5, {"minimum": 0.0, "maximum": 1.0}, r"x: expected a number in \[0, 1\], got 1.5"),
    (0.0, {"minimum": 0.0, "maximum": 1.0, "strict_min": True}, r"x: expected a number in \(0, 1\], got 0.0"),
])
def test_as_number_refuses_with_what_was_expected(value, kwargs, match):
    with pytest.raises(Brov2Error, match=match):
        validate.as_number(value, "x", **kwargs)


def test_as_number_accepts_python_and_numpy_numbers():
    assert validate.as_number(3, "x") == 3.0 and isinstance(validate.as_number(3, "x"), float)
    assert validate.as_number(np.float32(0.5), "x", 0.0, 1.0) == 0.5
    assert validate.as_number(np.array(2.0), "x") == 2.0
    assert validate.as_number(1.0, "x", 1.0, 2.0) == 1.0          # inclusive bounds
    assert validate.as_positive(1e-9, "x") == 1e-9
    with pytest.raises(Brov2Error, match="expected a number > 0"):
        validate.as_positive(0, "x")


def test_as_integer_and_as_bool():
    assert validate.as_integer(np.int64(7), "n", 1, 255) == 7
    for bad, match in ((True, "expected an integer, got True"), (4.0, "expected an integer, got 4.0"),
                       (0, r"expected an integer >= 1, got 0")):
        with pytest.raises(Brov2Error, match="n: " + match):
            validate.as_integer(bad, "n", minimum=1)
    with pytest.raises(Brov2Error, match=r"n: expected an integer in \[1, 255\], got 256"):
        validate.as_integer(256, "n", 1, 255)
    assert validate.as_bool(np.bool_(True), "b") is True
    with pytest.raises(Brov2Error, match="b: expected true or false, got 1"):
        validate.as_bool(1, "b")


def test_as_choice_lists_the_choices():
    assert validate.as_choice("b", ("a", "b"), "c") == "b"
    with pytest.raises(Brov2Error, match=r"c: expected one of \['a', 'b'\], got 'z'"):
        validate.as_choice("z", ("a", "b"), "c")
    with pytest.raises(Brov2Error, match=r"c: expected one of \['p', 'q'\], got \[1\]"):
        validate.as_choice([1], {"q": 1, "p": 2}, "c")                 # unhashable; a mapping's keys sorted
    with pytest.raises(Brov2Error, match=r"c: expected one of \[0, 1, 2\], got True"):
        validate.as_choice(True, (0, 1, 2), "c")                       # True == 1, but it is no FS action


def test_as_flags_strings_and_vectors():
    assert validate.as_flags([True, False, True], 3, "f").tolist() == [True, False, True]
    for bad in ([True, False], [1, 0, 1], "abc"):
        with pytest.raises(Brov2Error, match="f: expected 3 booleans"):
            validate.as_flags(bad, 3, "f")
    assert validate.as_string("", "s", allow_empty=True) == ""
    with pytest.raises(Brov2Error, match="s: expected a non-empty string, got ''"):
        validate.as_string("", "s")
    assert validate.as_string_list(("a", "b"), "l") == ["a", "b"]
    np.testing.assert_array_equal(validate.as_vector([0, 1, 2], 3, "v", minimum=0.0), [0.0, 1.0, 2.0])
    with pytest.raises(Brov2Error, match=r"v: expected every entry > 0, got \[0.0, 1.0, 2.0\]"):
        validate.as_vector([0, 1, 2], 3, "v", minimum=0.0, strict_min=True)
    with pytest.raises(Brov2Error, match=r"v: expected shape \(3,\)"):
        validate.as_vector([0, 1], 3, "v")


def test_rule_binds_the_bounds():
    check = validate.rule(validate.as_vector, 2, minimum=1.0)
    np.testing.assert_array_equal(check([1, 2], "r"), [1.0, 2.0])
    with pytest.raises(Brov2Error, match="r: expected every entry >= 1"):
        check([0, 2], "r")


def test_section_names_file_and_key_and_nested_sections():
    data = {"axes": {"roll": {"index": -1, "invert": "yes"}}, "rate_hz": "fast", "mode": "x"}
    top = params.Section(data, "f.yaml", None)
    with pytest.raises(ParameterError, match=r"^f.yaml:rate_hz: expected a number, got 'fast'$"):
        top.positive("rate_hz")
    with pytest.raises(ParameterError, match=r"^f.yaml:mode: expected one of \['a', 'b'\], got 'x'$"):
        top.choice("mode", ("a", "b"))
    roll = top.sub("axes").sub("roll")
    assert params.Section(data, "f.yaml", "axes.roll").data is roll.data
    with pytest.raises(ParameterError, match=r"^f.yaml:axes.roll.index: expected an integer >= 0, got -1$"):
        roll.integer("index", 0)
    with pytest.raises(ParameterError, match=r"^f.yaml:axes.roll.invert: expected true or false"):
        roll.boolean("invert")
    with pytest.raises(ParameterError, match=r"f.yaml: missing section 'axes.pitch'"):
        top.sub("axes").sub("pitch")
    with pytest.raises(ParameterError, match=r"^f.yaml:axes.roll.gain: missing key$"):
        roll.finite("gain")


def test_param_reader_is_a_section_naming_the_node_parameter():
    p = ParamReader({"rate_hz": 0, "mode": "x"}, "joy_input")
    with pytest.raises(ParameterError, match=r"^joy_input ~rate_hz: expected a number > 0, got 0$"):
        p.positive("rate_hz")
    with pytest.raises(ParameterError, match=r"^joy_input ~mode: expected one of \['a'\], got 'x'$"):
        p.choice("mode", ("a",))


def test_controller_rules_guard_the_file_and_the_live_retune(tmp_path):
    """One rule per setting: controller.yaml and HybridController.configure refuse the same values."""
    from brov2_hybrid.control.law import HybridController
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    settings = params.load_controller_params()
    assert set(params.CONTROLLER_RULES) == set(settings.__dataclass_fields__) - {"source"}
    vehicle = load_vehicle()
    c = HybridController(vehicle.body, settings, vehicle.tau_max)
    bad = {"kappa": -1.0, "integral_ratio": -0.1, "linear_scale": 1.5, "rate_window": 0,
           "closed_loop_enabled": [1, 0, 1], "integral_band_rad": 0.0, "feedforward_enabled": "yes"}
    for key, value in bad.items():
        with pytest.raises(Brov2Error, match="^%s: expected" % key):
            c.configure(**{key: value})
        data = params.load_yaml(params.paths.params_path("controller.yaml"))
        file_key = "integral_band_deg" if key == "integral_band_rad" else key
        data["controller"][file_key] = value
        path = tmp_path / "controller.yaml"
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(ParameterError, match=r"controller.yaml:controller.%s: expected" % file_key):
            params.load_controller_params(str(path))
    assert c.integral_ratio == settings.integral_ratio and c.linear_scale == settings.linear_scale
    assert c.configure(kappa=0.0, integral_band_rad=math.radians(5.0)) != []
