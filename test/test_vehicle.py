"""Vehicle files (brov2_hybrid.vehicle.vehicle_file): the Heavy and the 6-thruster BlueROV2, passive DOFs.

Expectations come from the thruster geometry itself (T of a known layout, ArduSub's
factor signs) and from invariants (T T-dagger = I over the actuated DOFs; a passive DOF
moves no thruster and is never closed loop), not from the code under test.
"""
import math

import numpy as np
import pytest
import yaml

from brov2_hybrid.vehicle import allocation
from brov2_hybrid import paths
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.loop.settings import LoopSettings
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.vehicle.mixers import KINDS
from brov2_hybrid.params import available_vehicles, load_controller_params
from brov2_hybrid.vehicle.vehicle_file import DOF_NAMES, load_vehicle

PITCH = DOF_NAMES.index("pitch")


@pytest.fixture(scope="module")
def bluerov2():
    return load_vehicle("bluerov2")


def _modified(tmp_path, name, change):
    data = yaml.safe_load(open(paths.params_path("vehicles", name + ".yaml")))
    data["thrust_table"]["csv_file"] = paths.params_path("t200_16V.csv")
    change(data)
    path = tmp_path / (name + ".yaml")
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_both_vehicles_are_listed_and_the_heavy_is_the_default():
    assert {"bluerov2", "bluerov2_heavy"} <= set(available_vehicles())
    heavy = load_vehicle()
    assert heavy.name == "bluerov2_heavy" and heavy.n_thrusters == 8 and heavy.passive_dofs == ()
    assert heavy.actuated_dofs == tuple(range(6)) and heavy.frame.frame_config == 2
    # Full rank: the plain Moore-Penrose pseudo-inverse, as before vehicles had passive DOFs.
    np.testing.assert_array_equal(heavy.T_pinv, np.linalg.pinv(heavy.T))


def test_bluerov2_geometry_and_passive_pitch(bluerov2):
    v = bluerov2
    assert v.n_thrusters == 6 and v.T.shape == (6, 6) and v.T_pinv.shape == (6, 6)
    assert v.frame.frame_config == 1 and v.frame.name == "vectored"
    assert v.passive_dofs == (PITCH,) and v.passive_dof_names == ("pitch",)
    # ArduSub's vectored frame has no pitch factor on any motor.
    assert np.all(v.T_hat[PITCH] == 0.0)
    # Vertical thrusters 0.109 m either side of the centre line: roll moment +-0.109 N m/N.
    np.testing.assert_allclose(v.T[3, 4:], [0.109, -0.109])
    # Pitch: only the horizontals' 0.011 m offset below the CG couples into it.
    assert np.max(np.abs(v.T[PITCH])) == pytest.approx(0.011 / math.sqrt(2))
    a = list(v.actuated_dofs)
    np.testing.assert_allclose(v.T[a] @ v.T_pinv[:, a], np.eye(5), atol=1e-12)
    assert np.all(v.T_pinv[:, PITCH] == 0.0)
    # tau_max by the group rule: heave from 2 verticals, roll from their 0.109 m arms.
    assert v.tau_max[2] == pytest.approx(2 * 49.95)
    assert v.tau_max[3] == pytest.approx(2 * 0.109 * 49.95)
    assert v.tau_max[PITCH] == allocation.PASSIVE_TAU_MAX


def test_a_pitch_command_moves_no_thruster_on_either_mixer(bluerov2):
    for kind in KINDS:
        mixer = bluerov2.mixer(kind)
        assert mixer.pwm([0, 0, 0, 0, 0.8, 0]).tolist() == [1500.0] * 6
        roll = mixer.pwm([0, 0, 0, 0.5, 0, 0])
        assert roll[:4].tolist() == [1500.0] * 4              # horizontals stay
        assert roll[4] > 1500.0 > roll[5]                      # verticals push opposite ways


def test_passive_pitch_is_never_closed_loop(bluerov2):
    c = HybridController(bluerov2.body, load_controller_params(), bluerov2.tau_max, bluerov2.passive_dofs)
    assert c.closed_loop_enabled.tolist() == [True, False, True]
    c.configure(closed_loop_enabled=[True, True, True])       # a live retune cannot switch it on
    assert c.closed_loop_enabled.tolist() == [True, False, True]
    out = c.compute([0.0, 0.5, 0.0], [0, 0, 0], [0.0, -0.2, 0.0], [0.0, 0.0, 0.0])
    assert out.tau_body_frd[PITCH] == 0.0


def test_undeclared_unactuated_dof_is_an_error_naming_file_and_field(tmp_path):
    path = _modified(tmp_path, "bluerov2", lambda d: d.__setitem__("passive_dofs", []))
    with pytest.raises(ParameterError, match=r"bluerov2.yaml:passive_dofs: .*rank 6.*got rank 5"):
        load_vehicle(path)


@pytest.mark.parametrize("change, match", [
    (lambda d: d.__setitem__("passive_dofs", ["tilt"]), r"passive_dofs: expected a list of distinct DOF names"),
    (lambda d: d["ardusub"]["motor_factors"].pop(), r"ardusub.motor_factors: expected shape \(6, 6\)"),
    (lambda d: d["thrusters"]["directions"].pop(), r"thrusters.directions: expected shape \(6, 3\)"),
    (lambda d: d["ardusub"].__setitem__("frame_config", 9), r"ardusub.frame_config: expected one of"),
    (lambda d: d.pop("name"), r"bluerov2.yaml:name: expected the vehicle's name"),
])
def test_bad_vehicle_files_name_the_field(tmp_path, change, match):
    with pytest.raises(ParameterError, match=match):
        load_vehicle(_modified(tmp_path, "bluerov2", change))


def test_bluerov2_flies_a_yaw_step_in_the_simulator(bluerov2):
    """The 6-thruster vehicle through the same loop as the Heavy: yaw settles, pitch rides level."""
    loop = ClosedLoop(LoopSettings(), vehicle=bluerov2)
    step = math.pi / 2
    res = loop.run(step_dive(step, 1.0, 8.0, loop.settings.desired_rate_hz), omega_d_rad_s=3.0)
    yaw = res.log["yaw_rad"]
    assert abs(yaw[-1] - step) < 0.05 * step
    assert np.max(np.abs(res.log["pitch_rad"])) < math.radians(3.0)
    assert np.all(res.log["u_pitch"] == 0.0)
    assert np.all(res.log["pwm7_us"] == 0.0) and np.all(res.log["pwm8_us"] == 0.0)   # no motors 7, 8


def _ten_thrusters(data):
    """The Heavy with two more vertical thrusters: beyond the package's 8 motor outputs."""
    t = data["thrusters"]
    t["positions_m"] += [[0.0, 0.2, 0.0], [0.0, -0.2, 0.0]]
    t["directions"] += [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    data["ardusub"]["motor_factors"] += [[0, 0, 0, -1, 0, 0], [0, 0, 0, -1, 0, 0]]


def test_a_vehicle_beyond_the_packages_limits_is_refused_at_load_time(tmp_path):
    """Limits the code has (8 motor outputs: SERVO_OUTPUT_RAW, ThrusterCommand.msg, log pwm1..8;
    pilot DOFs on RC channels 1-6: the log's rc1..rc6) are checked where the vehicle is read."""
    with pytest.raises(ParameterError, match=r"bluerov2_heavy.yaml:thrusters.positions_m: 10 thrusters; "
                                             r"this package flies at most 8"):
        load_vehicle(_modified(tmp_path, "bluerov2_heavy", _ten_thrusters))
    with pytest.raises(ParameterError, match=r"rc_input.channels: expected the 6 channels 1..6"):
        load_vehicle(_modified(tmp_path, "bluerov2_heavy",
                               lambda d: d["rc_input"].__setitem__("channels", [1, 2, 3, 4, 5, 9])))
