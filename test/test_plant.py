"""Vehicle model of the simulator against analytic expectations (paper Sec. 2.2.4, App. B)."""
import dataclasses
import math
import os

import numpy as np
import pytest
from scipy import signal

from brov2_hybrid.sim import config as sim_config, dynamics
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.physics.kinematics import J1
from brov2_hybrid.sim.config import SimOptions, load_sim_options
from brov2_hybrid.sim.dynamics import rhs
from brov2_hybrid.sim.plant import Plant

DEEP_M = 50.0  # far from the surface


def neutral_vehicle(vehicle, **changes):
    """The same vehicle with changed parameters (e.g. buoyancy_n = weight_n)."""
    return dataclasses.replace(vehicle, body=dataclasses.replace(vehicle.body, **changes))


def new_plant(vehicle, **options):
    return Plant(vehicle, SimOptions(**options))


def yaw_pwm(vehicle, u_yaw):
    return vehicle.mixer("quantitative").pwm([0, 0, 0, 0, 0, u_yaw])


def test_paper_parameters_are_loaded(vehicle):
    v = vehicle.body
    np.testing.assert_allclose(v.total_mass[3:], [0.96, 1.12, 1.12])
    assert v.quadratic_drag[5] == 2.42 and v.linear_drag[5] == 0.0


def test_constant_yaw_torque_reaches_sqrt_n_over_2_42(vehicle):
    """N = N_r|r| r at steady state with no linear yaw drag: r = sqrt(N / 2.42) (Eq. 10)."""
    m = new_plant(vehicle)
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    m.set_motor_pwm(yaw_pwm(vehicle, 0.3))
    torque = (vehicle.T @ vehicle.table.force_from_pwm(m.motor_pwm_us))[5]
    assert torque > 5.0
    m.advance(15.0)
    assert m.nu[5] == pytest.approx(math.sqrt(torque / 2.42), rel=0.01)


def test_small_angle_roll_period(vehicle):
    """Period 2 pi sqrt((I_xx + K_pdot) / (B * 0.02)) for a small roll release."""
    m = new_plant(vehicle)
    m.reset(eta=[0, 0, DEEP_M, math.radians(2.0), 0, 0])
    times, roll = [], []
    for _ in range(int(20.0 / 0.01)):
        m.advance(0.01)
        times.append(m.t_s)
        roll.append(m.eta[3])
    roll = np.array(roll)
    up = np.where((roll[:-1] < 0) & (roll[1:] >= 0))[0]
    # Linear interpolation of each upward zero crossing.
    t_cross = [times[i] - roll[i] * (times[i + 1] - times[i]) / (roll[i + 1] - roll[i]) for i in up]
    assert len(t_cross) >= 3
    period = np.mean(np.diff(t_cross))
    expected = 2 * math.pi * math.sqrt((0.86 + 0.10) / (114.8 * 0.02))
    assert period == pytest.approx(expected, rel=0.02)


def test_positively_buoyant_vehicle_rises_at_terminal_speed(vehicle):
    """B - W = 2 N balances heave drag 5.18 w + 36.99 w|w| at the terminal speed."""
    m = new_plant(vehicle)
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    m.advance(20.0)
    a, b, c = 36.99, 5.18, -(114.8 - 112.8)
    w_terminal = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    assert -m.nu[2] == pytest.approx(w_terminal, rel=0.01)
    assert m.velocity_ned_m_s()[2] == pytest.approx(-w_terminal, rel=0.01)  # rising: down decreases


def test_vehicle_floats_where_submerged_buoyancy_equals_weight(vehicle):
    """Surface law: B (0.5 + depth / h) = W at rest."""
    m = new_plant(vehicle, surface_buoyancy=True)
    m.reset(eta=[0, 0, 1.0, 0, 0, 0])
    m.advance(60.0)
    expected = (112.8 / 114.8 - 0.5) * 0.254
    assert m.eta[2] == pytest.approx(expected, abs=1e-3)
    assert abs(m.nu[2]) < 1e-3


def _lyapunov(vehicle, m):
    """Unweighted linear kinetic energy + rotational energy + buoyancy potential.

    With W = B it never increases: the linear equations conserve |nu_1|^2 under the
    transport term, drag only removes energy, and the restoring moment is conservative.
    """
    v = vehicle.body
    eta, nu = m.eta, m.nu
    rot = 0.5 * np.sum(v.total_mass[3:] * nu[3:] ** 2)
    # Potential of the buoyancy couple: B * 0.02 m * (1 - cos(roll) cos(pitch)).
    pot = v.buoyancy_n * (v.r_cg_m[2] - v.r_cb_m[2]) * (1 - math.cos(eta[3]) * math.cos(eta[4]))
    return 0.5 * float(nu[:3] @ nu[:3]) + rot + pot


def test_with_no_input_all_velocities_decay(vehicle):
    neutral = neutral_vehicle(vehicle, buoyancy_n=vehicle.body.weight_n)
    m = new_plant(neutral)
    nu0 = np.array([0.5, -0.4, 0.3, 0.6, -0.5, 1.0])
    m.reset(eta=[0, 0, DEEP_M, 0.3, -0.2, 0], nu=nu0)
    energy = [_lyapunov(neutral, m)]
    for _ in range(600):
        m.advance(0.1)
        energy.append(_lyapunov(neutral, m))
    energy = np.array(energy)
    assert np.all(np.diff(energy) <= 1e-9 * energy[0])
    assert energy[-1] < 0.01 * energy[0]
    assert np.all(np.abs(m.nu[:3]) < 0.01 * np.abs(nu0[:3]).max())
    assert np.all(np.abs(m.nu[3:]) < 0.1 * np.abs(nu0[3:]).max())


def test_first_order_lag_reaches_63_percent_at_time_constant(vehicle):
    tau = 0.2
    m = new_plant(vehicle, thruster_lag="first_order", thruster_time_constant_s=tau)
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    pwm = yaw_pwm(vehicle, 0.5)
    target = vehicle.table.force_from_pwm(pwm)
    m.set_motor_pwm(pwm)
    np.testing.assert_allclose(m.thruster_forces_n(), 0.0, atol=1e-12)
    m.advance(tau)
    np.testing.assert_allclose(m.thruster_forces_n(), (1 - math.exp(-1)) * target, rtol=1e-9, atol=1e-9)
    m.advance(10 * tau)
    np.testing.assert_allclose(m.thruster_forces_n(), target, rtol=1e-4, atol=1e-9)


def test_third_order_lag_matches_k_of_s_and_has_unit_dc_gain(vehicle):
    """Seed 003 Eq. 17, checked against scipy's step response of K(s)."""
    options = load_sim_options()
    num, den = options.third_order_numerator, options.third_order_denominator
    assert num[-1] == den[-1]  # K(0) = 1
    m = new_plant(vehicle, thruster_lag="third_order", third_order_numerator=num, third_order_denominator=den)
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    pwm = yaw_pwm(vehicle, 0.5)
    target = vehicle.table.force_from_pwm(pwm)
    m.set_motor_pwm(pwm)
    grid = np.arange(81) * 0.0025  # uniform grid, 0..0.2 s
    _, response = signal.step(signal.TransferFunction(num, den), T=grid)
    for i in (4, 8, 20, 40, 80):
        t, k = grid[i], response[i]
        m.advance(t - m.t_s)
        np.testing.assert_allclose(m.thruster_forces_n(), k * target, rtol=1e-6, atol=1e-9)
    m.advance(5.0)
    np.testing.assert_allclose(m.thruster_forces_n(), target, rtol=1e-6, atol=1e-9)


def test_lagged_thrust_follows_a_command_change_continuously(vehicle):
    m = new_plant(vehicle, thruster_lag="first_order", thruster_time_constant_s=0.1)
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    m.set_motor_pwm(yaw_pwm(vehicle, 0.5))
    m.advance(0.05)
    before = m.thruster_forces_n()
    m.set_motor_pwm(yaw_pwm(vehicle, -0.5))
    np.testing.assert_allclose(m.thruster_forces_n(), before, atol=1e-9)
    np.testing.assert_allclose(m.thruster_wrench(), vehicle.T @ before, atol=1e-9)


def test_ocean_current_drifts_the_vehicle_at_the_current_speed(vehicle):
    neutral = neutral_vehicle(vehicle, buoyancy_n=vehicle.body.weight_n)
    current = np.array([0.3, -0.2, 0.0])
    m = new_plant(neutral, current_ned_m_s=current)
    m.reset(eta=[0, 0, DEEP_M, 0, 0, math.radians(30)])
    m.advance(60.0)
    np.testing.assert_allclose(m.velocity_ned_m_s(), current, atol=0.003)


def test_stock_model_turns_more_slowly_than_the_updated_new_plant(vehicle):
    pwm = yaw_pwm(vehicle, 0.3)
    yaw = {}
    for kind in ("updated", "stock"):
        m = new_plant(vehicle, model=kind)
        m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
        m.set_motor_pwm(pwm)
        m.advance(1.0)
        yaw[kind] = m.eta[5]
    assert 0 < yaw["stock"] < 0.8 * yaw["updated"]


def test_stock_model_parameters_and_terminal_rate(vehicle):
    """Stock: 4 horizontal motors x 0.25 m arm, N = 7.08 r|r| at steady state."""
    m = new_plant(vehicle, model="stock")
    s = m.params.stock
    pwm = np.array([1700, 1300, 1300, 1700, 1500, 1500, 1500, 1500], dtype=float)  # yaw factors + - - +
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    m.set_motor_pwm(pwm)
    thrust = 51.48 * 0.5 * 0.5
    np.testing.assert_allclose(m.thruster_forces_n()[:4], [thrust, -thrust, -thrust, thrust])
    m.advance(10.0)
    assert m.nu[5] == pytest.approx(math.sqrt(4 * thrust * 0.25 / 7.08), rel=0.01)
    assert s.mass_kg == 10.5 and s.inertia_kg_m2 == 0.268


def test_stock_thrust_dead_zone(vehicle):
    s = sim_config.load_stock_model_params()
    thrust = dynamics.stock_thrust_n([1475, 1500, 1525, 1526, 1474, 1900, 1100, 1700], s)
    assert np.all(thrust[:3] == 0.0)
    out = np.array([26, -26, 400, -400, 200]) / 400.0
    np.testing.assert_allclose(thrust[3:], 51.48 * out * np.abs(out))


def test_stock_model_rises_at_its_terminal_speed(vehicle):
    """1 N / 16.755 kg upward acceleration on 10.5 kg balances 0.5 rho A C_d w^2."""
    m = new_plant(vehicle, model="stock")
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    m.advance(30.0)
    force = 10.5 * 1.0 / 16.755
    expected = math.sqrt(force / (0.5 * 1023.6 * 0.0674 * 2.0))
    assert -m.nu[2] == pytest.approx(expected, rel=0.01)


def test_rhs_rejects_gimbal_lock_but_the_stepper_passes_through_it(vehicle):
    m = new_plant(vehicle)
    x = np.concatenate([[0, 0, DEEP_M, 0, math.pi / 2, 0], np.zeros(6)])
    with pytest.raises(Brov2Error, match="gimbal lock"):
        rhs(0.0, x, np.zeros(6), m.params)
    m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    m.set_motor_pwm(vehicle.mixer().pwm([0, 0, 0, 0, 1.0, 0]))  # full pitch: loops the vehicle
    pitch = []
    for _ in range(200):
        m.advance(0.01)
        pitch.append(m.eta[4])
    assert max(pitch) > math.radians(85)
    assert np.linalg.norm(m.quaternion_ned_frd()) == pytest.approx(1.0, abs=1e-12)


def test_pwm_is_clamped_and_neutral_gives_no_thrust(vehicle):
    m = new_plant(vehicle)
    m.set_motor_pwm([2500, 500, 1500, 1500, 1500, 1500, 1500, 1500])
    np.testing.assert_array_equal(m.motor_pwm_us[:2], [1900, 1100])
    f = m.thruster_forces_n()
    assert f[0] == pytest.approx(vehicle.table.force_from_pwm(1900)) and f[1] == pytest.approx(vehicle.table.force_from_pwm(1100))
    np.testing.assert_array_equal(f[2:], 0.0)
    with pytest.raises(Brov2Error, match=r"expected shape \(8,\)"):
        m.set_motor_pwm([1500] * 6)


def test_advance_takes_whole_steps_and_reset_restores_time(vehicle):
    m = new_plant(vehicle, dt_s=0.0025)
    assert m.advance(0.0101) == 4
    assert m.t_s == pytest.approx(0.01)
    m.reset(t_s=5.0)
    assert m.t_s == 5.0 and np.all(m.nu == 0) and np.all(m.eta == 0)
    with pytest.raises(Brov2Error, match="n_steps"):
        m.step(-1)


def test_noise_is_seeded_and_has_the_configured_spread(vehicle):
    options = dict(noise_enabled=True, attitude_noise_std_rad=0.01, rate_noise_std_rad_s=0.002,
                   depth_noise_std_m=0.05, seed=7)
    a, b = new_plant(vehicle, **options), new_plant(vehicle, **options)
    for m in (a, b):
        m.reset(eta=[0, 0, DEEP_M, 0, 0, 0])
    samples = np.array([np.concatenate(a.measured_attitude() + ([a.depth_m()],)) for _ in range(4000)])
    again = np.array([np.concatenate(b.measured_attitude() + ([b.depth_m()],)) for _ in range(4000)])
    np.testing.assert_array_equal(samples, again)
    np.testing.assert_allclose(samples.std(axis=0), [0.01] * 3 + [0.002] * 3 + [0.05], rtol=0.05)
    np.testing.assert_allclose(samples.mean(axis=0)[:6], 0.0, atol=0.001)
    quiet = new_plant(vehicle)
    quiet.reset(eta=[0, 0, DEEP_M, 0.1, 0.2, 0.3])
    np.testing.assert_array_equal(quiet.measured_attitude()[0], quiet.eta[3:])
    assert quiet.depth_m() == DEEP_M


def test_specific_force_at_rest_is_minus_gravity_in_the_body(vehicle):
    neutral = neutral_vehicle(vehicle, buoyancy_n=vehicle.body.weight_n)
    m = new_plant(neutral)
    m.reset(eta=[0, 0, DEEP_M, 0.3, 0, 0])
    g = vehicle.body.gravity_m_s2
    # Neutral and at rest: buoyancy cancels weight, so the accelerometer reads -g up.
    expected = -(J1([0.3, 0, 0]).T @ [0, 0, g])
    np.testing.assert_allclose(m.specific_force_body(), expected, atol=1e-9)


def test_options_are_validated(tmp_path, vehicle):
    with pytest.raises(ParameterError, match="model"):
        new_plant(vehicle, model="fancy")
    with pytest.raises(ParameterError, match="thruster_lag"):
        new_plant(vehicle, thruster_lag="second_order")
    with pytest.raises(ParameterError, match="dt_s"):
        new_plant(vehicle, dt_s=0.0)
    bad = tmp_path / "sim.yaml"
    bad.write_text("physics:\n  modle: stock\n")
    with pytest.raises(ParameterError, match="unknown key"):
        load_sim_options(str(bad))
    bad.write_text("physics:\n  thruster_lag: 3\n")
    with pytest.raises(ParameterError, match="physics.thruster_lag"):
        load_sim_options(str(bad))


def test_defaults_turn_every_optional_effect_off():
    options = load_sim_options()
    assert options.model == "updated" and options.thruster_lag == "none"
    assert not options.noise_enabled and not np.any(options.current_ned_m_s)
    assert options.dt_s == pytest.approx(1 / 400)
    bare = SimOptions()
    assert bare.thruster_lag == "none" and not bare.noise_enabled and bare.surface_buoyancy is False


def _numba_expected():
    """numba must import where requirements-nodeps.txt installs it and numpy is new enough."""
    import sys
    major, minor = (int(x) for x in np.__version__.split(".")[:2])
    return sys.version_info >= (3, 9) and (major, minor) >= (1, 22)


@pytest.mark.parametrize("options", [SimOptions(), SimOptions(model="stock"),
                                     SimOptions(current_ned_m_s=np.array([0.3, -0.2, 0.05]))],
                         ids=["updated", "stock", "current"])
def test_compiled_stepper_gives_the_python_steppers_numbers(vehicle, options):
    """The numba-compiled integrate is the same function: bit for bit the same states."""
    from brov2_hybrid.sim import plant as plant_module, stepper
    compiled = stepper.compiled_integrate()
    if compiled is None:
        if _numba_expected() and not os.environ.get("BROV2_NO_JIT"):
            pytest.fail("numba is in requirements-nodeps.txt but the compiled stepper is unavailable")
        pytest.skip("no numba here: the Python stepper runs")
    plant = plant_module.Plant(vehicle, options)
    rng = np.random.default_rng(4)
    for _ in range(10):
        state = rng.normal(0.0, 0.4, 13).tolist()
        state[2] = float(rng.uniform(-0.3, 3.0))           # through the surface law
        norm = math.sqrt(sum(x * x for x in state[3:7]))
        state[3:7] = [x / norm for x in state[3:7]]
        tau = rng.normal(0.0, 30.0, 6).tolist()
        expected = stepper.integrate(list(state), 400, plant.dt_s, tau, plant._constants)
        assert compiled(tuple(state), 400, plant.dt_s, tuple(tau), plant._constants, None) == expected


def test_plant_steps_the_same_compiled_or_not(vehicle):
    from brov2_hybrid.sim.plant import Plant
    runs = []
    for compiled in (True, False):
        plant = Plant(vehicle, SimOptions())
        plant.compiled = compiled
        plant.reset(eta=[0, 0, 2.0, 0.1, -0.05, 0.3], nu=[0.1, 0, 0, 0.2, 0, -0.1])
        plant.set_motor_pwm([1600, 1400, 1550, 1450, 1700, 1300, 1500, 1520])
        plant.step(800)
        runs.append((plant.eta.tolist(), plant.nu.tolist()))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("attitude_deg", [(0, 0, 0), (30, 0, 0), (0, -25, 40), (20, 35, -120), (-60, 10, 90)])
def test_simulator_hydrostatics_equal_the_control_laws(attitude_deg):
    """One restoring wrench: the simulator's equations of motion at rest, submerged, with no thrust
    give (M + M_A) nu_dot = hydrostatics.restoring_wrench (the one the feed-forward cancels)."""
    from brov2_hybrid.physics.hydrostatics import restoring_wrench
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.sim.dynamics import body_acceleration, model_params
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    vehicle = load_vehicle()
    p = model_params(vehicle, load_sim_options())
    eta = np.concatenate([[0.0, 0.0, 10.0], np.radians(attitude_deg)])   # deep: no surface law
    nu_dot = body_acceleration(eta, np.zeros(6), np.zeros(6), p)
    b = vehicle.body
    expected = restoring_wrench(eta[3:6], b.weight_n, b.buoyancy_n, b.r_cg_m, b.r_cb_m)
    np.testing.assert_allclose(np.asarray(p.mass) * nu_dot, expected, rtol=1e-12, atol=1e-12)
