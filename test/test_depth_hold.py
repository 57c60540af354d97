"""The depth hold (control/depth_hold.py): gains from omega, feed-forwards, the stick as a depth
rate, surface and bottom limits, signal loss, and its place in HybridController."""
import math
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.analysis.metrics import depth_error
from brov2_hybrid.control.depth_hold import HOLDING, NO_DEPTH, OFF, DepthHold
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import load_controller_params
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

DT = 0.02
TAU_MAX_Z = 199.81          # tau_max heave [N] of the Heavy (docs/DESIGN.md section 4)


@pytest.fixture(scope="module")
def body():
    return load_vehicle().body


def settings(**changes):
    return replace(load_controller_params(), depth_hold_enabled=True, **changes)


def hold_at(body, depth_m, t_s=0.0, **changes):
    """A DepthHold engaged at ``depth_m`` by one tick at ``t_s`` (no stick, level)."""
    hold = DepthHold(body, settings(**changes), 3.0, TAU_MAX_Z)
    hold.measure(t_s, depth_m)
    hold.heave_force(t_s, 0.0, np.zeros(3), 0.0, 0.0, 0.0)
    return hold


def test_gains_follow_the_heave_frequency_by_the_attitude_rule(body):
    """k_p = (m + Z_wdot) w^2, k_d = 2 w (m + Z_wdot) - B_check + kappa / w^2, with B_check the
    least-squares slope through the origin of the model's heave drag over 0..v_max."""
    hold = DepthHold(body, settings(heave_omega_ratio=0.5, heave_kappa=8.0, heave_trim_speed_max_m_s=0.6), 3.0, TAU_MAX_Z)
    mass = 11.5 + 14.57                                   # m + Z_wdot (docs/DESIGN.md section 6)
    v = np.linspace(0.0, 0.6, 200)
    drag = 5.18 * v + 36.99 * v * np.abs(v)
    b_check = np.sum(v * drag) / np.sum(v * v)
    w = 1.5
    assert hold.b_check == pytest.approx(b_check, rel=1e-12)
    assert hold.kp == pytest.approx(mass * w * w, rel=1e-12)
    assert hold.kd_total == pytest.approx(2.0 * w * mass - b_check + 8.0 / (w * w), rel=1e-12)
    hold.retune(4.0)                                      # the ratio follows omega_d
    assert hold.kp == pytest.approx(mass * 2.0 ** 2, rel=1e-12)
    own = DepthHold(body, settings(heave_omega_rad_s=1.2), 3.0, TAU_MAX_Z)   # its own value wins over the ratio
    assert own.kp == pytest.approx(mass * 1.2 ** 2, rel=1e-12)


def test_at_rest_on_the_setpoint_the_force_cancels_the_net_weight(body):
    """Level, on the setpoint, not moving: Z = B - W, so Z + (W - B) = 0 (no drift)."""
    hold = hold_at(body, 5.0)
    z = hold.heave_force(DT, 0.0, np.zeros(3), 0.0, 0.0, 0.0)
    assert z == pytest.approx(body.buoyancy_n - body.weight_n, abs=1e-12)
    assert z + (body.weight_n - body.buoyancy_n) == pytest.approx(0.0, abs=1e-12)
    assert z == pytest.approx(2.0, abs=1e-9)              # B 114.8 N, W 112.8 N (docs/DESIGN.md section 6)


def test_the_body_force_makes_the_vertical_force_under_tilt_and_open_loop_surge_sway(body):
    """Tilted, with surge and sway forces, the body force's vertical component R[2] F is still
    the vertical force the law asks for (here B - W on the setpoint)."""
    from brov2_hybrid.physics.kinematics import J1
    hold = hold_at(body, 5.0)
    eta2 = np.radians([20.0, -15.0, 40.0])
    x, y = 30.0, -12.0
    z = hold.heave_force(DT, 0.0, eta2, x, y, 0.0)
    vertical = J1(eta2)[2] @ np.array([x, y, z])
    assert vertical == pytest.approx(body.buoyancy_n - body.weight_n, abs=1e-9)


def test_upside_down_the_body_force_still_pushes_the_right_way_and_is_bounded(body):
    """Rolled past 90 deg the body heave axis points up: the force changes sign; the tilt
    compensation at most doubles it, and the hold never asks for more than its share of tau_max."""
    from brov2_hybrid.physics.kinematics import J1
    hold = hold_at(body, 5.0)
    hold.measure(DT, 4.95)                                   # 5 cm too shallow: push down
    eta2 = np.radians([150.0, 0.0, 0.0])
    z = hold.heave_force(DT, 0.0, eta2, 0.0, 0.0, 0.0)
    assert J1(eta2)[2] @ np.array([0.0, 0.0, z]) > 0.0       # the vertical component points down
    level = hold_at(body, 5.0)
    level.measure(DT, 4.95)
    f_level = level.heave_force(DT, 0.0, np.zeros(3), 0.0, 0.0, 0.0)
    tilted = hold_at(body, 5.0)
    tilted.measure(DT, 4.95)
    f_tilted = tilted.heave_force(DT, 0.0, np.radians([85.0, 0.0, 0.0]), 0.0, 0.0, 0.0)
    assert f_tilted == pytest.approx(2.0 * f_level)          # |d_z| >= 0.5
    far = hold_at(body, 5.0, depth_hold_max_force_fraction=0.4)
    far.measure(DT, 1.0)                                     # 4 m too shallow
    assert far.heave_force(DT, 0.0, np.zeros(3), 0.0, 0.0, 0.0) == pytest.approx(0.4 * TAU_MAX_Z)


def test_a_depth_error_pushes_towards_the_setpoint(body):
    hold = hold_at(body, 5.0)
    hold.measure(DT, 4.9)          # 10 cm shallower than the setpoint: push down (+)
    deeper = hold.heave_force(DT, 0.0, np.zeros(3), 0.0, 0.0, 0.0)
    assert deeper > body.buoyancy_n - body.weight_n + 0.5 * hold.kp * 0.1


def test_the_stick_commands_a_depth_rate(body):
    """The setpoint moves by stick * max_depth_rate * t; full stick down for 2 s at 0.5 m/s: 1 m."""
    hold = hold_at(body, 5.0, max_depth_rate_m_s=0.5)
    for k in range(1, 101):
        hold.measure(k * DT, 5.0)
        hold.heave_force(k * DT, 1.0, np.zeros(3), 0.0, 0.0, 0.0)
    assert hold.setpoint_m == pytest.approx(6.0, abs=1e-9)
    for k in range(101, 151):      # half stick up for 1 s: 0.25 m up
        hold.heave_force(k * DT, -0.5, np.zeros(3), 0.0, 0.0, 0.0)
    assert hold.setpoint_m == pytest.approx(5.75, abs=1e-9)


def test_the_setpoint_stops_at_the_surface_and_bottom_limits(body):
    hold = hold_at(body, 1.0, min_depth_m=0.5, max_depth_m=1.6)
    t = 0.0
    for _ in range(500):           # 10 s full stick up: 5 m asked, 0.5 m allowed
        t += DT
        hold.measure(t, 1.0)
        hold.heave_force(t, -1.0, np.zeros(3), 0.0, 0.0, 0.0)
    assert hold.setpoint_m == 0.5
    hold.measure(t, 0.5)
    # at the limit the commanded rate is zero: no drag feed-forward upward, only B - W
    assert hold.heave_force(t + DT, -1.0, np.zeros(3), 0.0, 0.0, 0.0) == pytest.approx(2.0, abs=1e-6)
    for _ in range(500):
        t += DT
        hold.measure(t, 1.0)
        hold.heave_force(t, 1.0, np.zeros(3), 0.0, 0.0, 0.0)
    assert hold.setpoint_m == 1.6
    above = hold_at(body, 0.1, min_depth_m=0.5)      # engaged above the surface limit: held at the limit
    assert above.setpoint_m == 0.5


@pytest.mark.parametrize("lose", ["nan", "stale", "never"])
def test_without_a_fresh_depth_heave_goes_open_loop_and_says_so(body, lose):
    hold = DepthHold(body, settings(depth_timeout_s=0.5), 3.0, TAU_MAX_Z)
    if lose != "never":
        hold = hold_at(body, 5.0)
        hold.timeout_s = 0.5
        if lose == "nan":
            hold.measure(0.1, math.nan)
    t = 0.6 if lose == "stale" else 0.1
    z = hold.heave_force(t, 0.4, np.zeros(3), 0.0, 0.0, 79.9)
    assert z == 79.9                                  # the open-loop force, as without depth hold
    assert hold.status == NO_DEPTH and "OPEN LOOP" in hold.message
    assert math.isnan(hold.setpoint_m)
    hold.measure(t + 0.05, 7.0)                       # the depth returns: holding where it is now
    hold.heave_force(t + 0.05, 0.0, np.zeros(3), 0.0, 0.0, 79.9)
    assert hold.status == HOLDING and hold.setpoint_m == 7.0


def test_the_depth_rate_estimate_follows_a_steady_descent(body):
    hold = DepthHold(body, settings(depth_rate_filter_s=0.2), 3.0, TAU_MAX_Z)
    for k in range(200):
        hold.measure(0.1 * k, 5.0 + 0.3 * 0.1 * k)
    assert hold.depth_rate_m_s == pytest.approx(0.3, rel=1e-6)


def test_the_controller_holds_depth_only_when_enabled(body):
    vehicle = load_vehicle()
    c = HybridController(vehicle.body, load_controller_params(), vehicle.tau_max)
    zero = np.zeros(3)
    c.measure_depth(0.0, 3.0)
    off = c.compute(zero, [0.0, 0.0, 0.25], zero, zero, t_s=0.0).tau_body_frd
    assert off[2] == pytest.approx(0.25 * vehicle.tau_max[2])       # open loop, the paper's law
    assert c.depth_hold.status == OFF
    assert c.configure(depth_hold_enabled=True) == ["depth hold False -> True"]
    c.measure_depth(0.0, 3.0)
    on = c.compute(zero, [0.0, 0.0, 0.0], zero, zero, t_s=0.0).tau_body_frd
    assert on[2] == pytest.approx(vehicle.body.buoyancy_n - vehicle.body.weight_n)
    assert c.depth_hold.status == HOLDING and c.depth_hold.setpoint_m == 3.0
    c.configure(omega_d_rad_s=3.2)                    # the heave gains follow omega_d (below the cap)
    assert c.depth_hold.kp == pytest.approx(vehicle.body.total_mass[2] * (0.75 * 3.2) ** 2)


def test_controller_yaml_refuses_a_surface_limit_below_the_bottom(tmp_path):
    import yaml
    from brov2_hybrid import paths
    with open(paths.params_path("controller.yaml")) as handle:
        data = yaml.safe_load(handle)
    data["controller"]["min_depth_m"] = 50.0
    data["controller"]["max_depth_m"] = 10.0
    path = tmp_path / "controller.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ParameterError, match="min_depth_m"):
        load_controller_params(str(path))


def test_depth_error_counts_only_the_ticks_that_held_depth():
    rms, worst, n = depth_error([5.0, 5.1, 4.8, 9.0], [5.0, 5.0, 5.0, math.nan])
    assert n == 3
    assert rms == pytest.approx(math.sqrt((0.01 + 0.04) / 3))
    assert worst == pytest.approx(0.2)
    assert math.isnan(depth_error([1.0], [math.nan])[0])
