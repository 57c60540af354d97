"""Parameter files: defaults load, bad values are rejected naming the key."""
import numpy as np
import pytest
import yaml

from brov2_hybrid import params, paths
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.rc import load_rc_map


def test_defaults_load():
    v = params.load_vehicle_params()
    assert v.mass_kg == 11.5 and v.buoyancy_n > v.weight_n
    np.testing.assert_allclose(np.linalg.norm(v.thruster_directions, axis=1), 1.0)
    np.testing.assert_allclose(v.total_mass[3:], [0.96, 1.12, 1.12])
    params.load_controller_params()
    params.load_thruster_params()


def _write_modified(tmp_path, name, section, key, value):
    data = yaml.safe_load(open(paths.params_path(name)))
    if value is _DELETE:
        del data[section][key]
    else:
        data[section][key] = value
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return str(path)


_DELETE = object()


@pytest.mark.parametrize("key, value, match", [
    ("mass_kg", -1.0, r"vehicle.mass_kg: expected a value > 0"),
    ("mass_kg", _DELETE, r"vehicle.mass_kg: missing key"),
    ("quadratic_drag", [1, 2, 3], r"vehicle.quadratic_drag: expected shape \(6,\)"),
    ("linear_drag", [1, 2, 3, -4, 5, 6], r"vehicle.linear_drag: expected every entry >= 0"),
    ("inertia_kg_m2", [0.86, 0.0, 1.0], r"vehicle.inertia_kg_m2: expected every entry > 0"),
    ("buoyancy_n", "lots", r"vehicle.buoyancy_n: expected a number"),
])
def test_vehicle_rejects_bad_values(tmp_path, key, value, match):
    path = _write_modified(tmp_path, "brov2_heavy.yaml", "vehicle", key, value)
    with pytest.raises(ParameterError, match=match):
        params.load_vehicle_params(path)


def test_zero_thrust_direction_named(tmp_path):
    data = yaml.safe_load(open(paths.params_path("brov2_heavy.yaml")))
    data["thrusters"]["directions"][2] = [0, 0, 0]
    path = tmp_path / "v.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ParameterError, match="thruster 3 has a zero direction"):
        params.load_vehicle_params(str(path))


@pytest.mark.parametrize("key, value, match", [
    ("omega_d_rad_s", 0.0, "omega_d_rad_s: expected a value > 0"),
    ("kappa", -2.0, "kappa: expected a value >= 0"),
    ("closed_loop_enabled", [True, False], "closed_loop_enabled: expected 3 booleans"),
    ("rate_window", 0, "rate_window: expected an integer >= 1"),
])
def test_controller_rejects_bad_values(tmp_path, key, value, match):
    path = _write_modified(tmp_path, "controller.yaml", "controller", key, value)
    with pytest.raises(ParameterError, match=match):
        params.load_controller_params(path)


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ParameterError, match="not found"):
        params.load_vehicle_params(str(tmp_path / "nope.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("vehicle: [1, 2\n")
    with pytest.raises(ParameterError, match="not valid YAML"):
        params.load_vehicle_params(str(bad))


def test_rc_map_round_trip_and_directions():
    rc = load_rc_map()
    u = np.array([0.5, -0.25, 0.3, 0.1, -0.2, 1.0])
    channels = rc.channel_array_from_u(u)
    # ArduSub: ch3 throttle is + up, so heave + (down) lowers it; ch4 yaw + clockwise.
    assert channels[2] == 1500 - 120 and channels[3] == 1900 and channels[4] == 1700
    np.testing.assert_allclose(rc.u_from_pwm(channels), u, atol=1 / 800)
    assert np.all(rc.u_from_pwm([0, 65535, 0, 0, 0, 0]) == 0)
