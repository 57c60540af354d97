"""Parameter files: defaults load, bad values are rejected naming the key.

The vehicle file's own checks (thrusters, frame, passive DOFs) are in test_vehicle.py.
"""
import numpy as np
import pytest
import yaml

from brov2_hybrid import params, paths
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.vehicle.rc import load_rc_map
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

HEAVY = ("vehicles", "bluerov2_heavy.yaml")


def test_defaults_load():
    v = load_vehicle()
    assert v.name == "bluerov2_heavy" and v.source == paths.params_path(*HEAVY)
    assert v.body.mass_kg == 11.5 and v.body.buoyancy_n > v.body.weight_n
    np.testing.assert_allclose(np.linalg.norm(v.thrusters.directions, axis=1), 1.0)
    np.testing.assert_allclose(v.body.total_mass[3:], [0.96, 1.12, 1.12])
    params.load_controller_params()


def _write_modified(tmp_path, name, section, key, value):
    name = name if isinstance(name, tuple) else (name,)
    data = yaml.safe_load(open(paths.params_path(*name)))
    if value is _DELETE:
        del data[section][key]
    else:
        data[section][key] = value
    path = tmp_path / name[-1]
    path.write_text(yaml.safe_dump(data))
    return str(path)


_DELETE = object()


@pytest.mark.parametrize("key, value, match", [
    ("mass_kg", -1.0, r"body.mass_kg: expected a number > 0"),
    ("mass_kg", _DELETE, r"body.mass_kg: missing key"),
    ("quadratic_drag", [1, 2, 3], r"body.quadratic_drag: expected shape \(6,\)"),
    ("linear_drag", [1, 2, 3, -4, 5, 6], r"body.linear_drag: expected every entry >= 0"),
    ("inertia_kg_m2", [0.86, 0.0, 1.0], r"body.inertia_kg_m2: expected every entry > 0"),
    ("buoyancy_n", "lots", r"body.buoyancy_n: expected a number"),
    ("height_m", 0.0, r"body.height_m: expected a number > 0"),
])
def test_vehicle_rejects_bad_values(tmp_path, key, value, match):
    path = _write_modified(tmp_path, HEAVY, "body", key, value)
    with pytest.raises(ParameterError, match=match):
        load_vehicle(path)


def test_zero_thrust_direction_named(tmp_path):
    data = yaml.safe_load(open(paths.params_path(*HEAVY)))
    data["thrusters"]["directions"][2] = [0, 0, 0]
    data["thrust_table"]["csv_file"] = paths.params_path("t200_16V.csv")
    path = tmp_path / "v.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ParameterError, match="thrusters.directions: thruster 3 has a zero direction"):
        load_vehicle(str(path))


@pytest.mark.parametrize("key, value, match", [
    ("omega_d_rad_s", 0.0, "omega_d_rad_s: expected a number > 0"),
    ("kappa", -2.0, "kappa: expected a number >= 0"),
    ("closed_loop_enabled", [True, False], "closed_loop_enabled: expected 3 booleans"),
    ("rate_window", 0, "rate_window: expected an integer >= 1"),
])
def test_controller_rejects_bad_values(tmp_path, key, value, match):
    path = _write_modified(tmp_path, "controller.yaml", "controller", key, value)
    with pytest.raises(ParameterError, match=match):
        params.load_controller_params(path)


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ParameterError, match="not found"):
        load_vehicle(str(tmp_path / "nope.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("body: [1, 2\n")
    with pytest.raises(ParameterError, match="not valid YAML"):
        load_vehicle(str(bad))
    with pytest.raises(ParameterError, match="vehicle 'nautilus': no file .*vehicles: aau_bluerov2_heavy, bluerov2, bluerov2_heavy"):
        load_vehicle("nautilus")


def test_rc_map_round_trip_and_directions():
    rc = load_rc_map()
    u = np.array([0.5, -0.25, 0.3, 0.1, -0.2, 1.0])
    channels = rc.channel_array_from_u(u)
    # ArduSub: ch3 throttle is + up, so heave + (down) lowers it; ch4 yaw + clockwise.
    assert channels[2] == 1500 - 120 and channels[3] == 1900 and channels[4] == 1700
    np.testing.assert_allclose(rc.u_from_pwm(channels), u, atol=1 / 800)
    assert np.all(rc.u_from_pwm([0, 65535, 0, 0, 0, 0]) == 0)
