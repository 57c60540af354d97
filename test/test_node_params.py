"""Node parameters (brov2_hybrid.node_logic.node_params): the autopilot.yaml section of a node,
server overrides, and typed access whose errors name the parameter."""
import pytest

from brov2_hybrid.errors import ParameterError
from brov2_hybrid.node_logic.node_params import ParamReader, load_node_params
from brov2_hybrid.params import load_yaml
from brov2_hybrid.paths import params_path


def test_every_section_of_autopilot_yaml_loads():
    data = load_yaml(params_path("autopilot.yaml"))
    for node in ("csv_reader", "control_law", "thruster_allocation", "mavlink_bridge", "logger", "mission", "frames"):
        assert load_node_params(node) == data[node]


def test_overrides_win_and_unknown_keys_are_refused():
    p = load_node_params("control_law", {"rate_hz": 25.0, "omega_d_rad_s": 4.0}, other_keys=("omega_d_rad_s",))
    assert p["rate_hz"] == 25.0 and "omega_d_rad_s" not in p
    with pytest.raises(ParameterError, match="~rate_hx: unknown parameter for control_law"):
        load_node_params("control_law", {"rate_hx": 25.0})
    with pytest.raises(ParameterError, match="missing section 'nope'"):
        load_node_params("nope")


def test_param_reader_names_the_parameter():
    p = ParamReader({"a": -1.0, "b": "x", "c": 1, "d": True}, "node")
    with pytest.raises(ParameterError, match=r"node ~a: expected a number > 0, got -1.0"):
        p.positive("a")
    with pytest.raises(ParameterError, match=r"node ~b: expected one of \['timer', 'attitude'\]"):
        p.string("b", choices=("timer", "attitude"))
    with pytest.raises(ParameterError, match="node ~d: expected a number, got True"):
        p.number("d")                       # a bool is not a number
    with pytest.raises(ParameterError, match="node ~zz: missing parameter"):
        p.integer("zz")
    assert p.integer("c", 1, 5) == 1 and p.boolean("d") is True


def test_string_list_takes_names_only():
    p = ParamReader({"ok": ["control_law", "logger"], "empty": [], "bad": ["logger", ""], "one": "logger"}, "node")
    assert p.string_list("ok") == ["control_law", "logger"] and p.string_list("empty") == []
    with pytest.raises(ParameterError, match=r"node ~bad: expected a list of names, got \['logger', ''\]"):
        p.string_list("bad")
    with pytest.raises(ParameterError, match="node ~one: expected a list of names"):
        p.string_list("one")
