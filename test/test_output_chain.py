"""The output chain's kernels (channel maps, thrust-table look-ups, mixers, the plant's input):
the numbers of the numpy formulas they replaced, and compiled (numba) = Python."""
import numpy as np
import pytest

from brov2_hybrid import jit
from brov2_hybrid.sim.config import load_sim_options
from brov2_hybrid.sim.plant import Plant
from brov2_hybrid.vehicle.firmware_output import output_stage
from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


def _commands(n=3000, seed=9):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.uniform(-1.0, 1.0, (n, 6)), rng.uniform(-1.5, 1.5, (n // 3, 6)),
                      rng.choice([-1.0, 0.0, 1.0], (60, 6)), rng.uniform(-0.01, 0.01, (200, 6))])


@pytest.mark.parametrize("stage_name", ["quantitative", "stock_naive", "stock"])
def test_the_loops_chain_is_channels_then_the_firmware(stage_name):
    """OutputStage.rc_and_motor_pwm (the in-process loop's tick) = channels() then motor_pwm_from_rc
    (what thruster_allocation sends and the simulated firmware outputs), saturation included."""
    vehicle = load_vehicle()
    stage = output_stage(stage_name, vehicle, vehicle.rc_map)
    mixer = vehicle.mixer(stage.firmware)
    lo, hi = vehicle.thrusters.pwm_min_us, vehicle.thrusters.pwm_max_us
    for u in _commands(600 if stage_name == "stock" else 3000):
        rc, motor = stage.rc_and_motor_pwm(u)
        channels = stage.channels(u)
        assert rc.tolist() == [channels[ch] for ch in vehicle.rc_map.channels]
        assert motor.tolist() == motor_pwm_from_rc(channels, vehicle.rc_map, mixer, lo, hi)


def test_algorithm2_chain_is_the_numpy_formulas_as_first_written():
    """Channel PWMs rint(1500 + 400 sign u), u read back, forces T-dagger (tau_max u), m* by np.interp on
    the table's inverse (0 within 1e-9 N), rint(1500 + 400 m*), clipped: the same integers."""
    vehicle = load_vehicle()
    rc_map, table = vehicle.rc_map, vehicle.table
    stage = output_stage("quantitative", vehicle, rc_map)
    for u in _commands():
        uc = np.clip(u, -1.0, 1.0)
        pwm = np.rint(rc_map.neutral_us + rc_map.half_range_us * rc_map.signs * uc)
        u_read = np.clip(rc_map.signs * (pwm - rc_map.neutral_us) / rc_map.half_range_us, -1.0, 1.0)
        f = vehicle.T_pinv @ (vehicle.tau_max * u_read)
        star = np.interp(f, table.inv_force_n, table.inv_star, left=-1.0, right=1.0)
        star[np.abs(f) <= 1e-9] = 0.0
        motor = np.clip(np.rint(table.neutral_us + table.half_range_us * np.clip(star, -1.0, 1.0)),
                        vehicle.thrusters.pwm_min_us, vehicle.thrusters.pwm_max_us)
        rc, got = stage.rc_and_motor_pwm(u)
        assert rc.tolist() == pwm.tolist() and got.tolist() == motor.tolist()


def test_plant_input_and_attitude_are_the_numpy_formulas():
    """Plant.set_motor_pwm's wrench = T @ np.interp(clip(PWM)) bit for bit; Plant.eta's attitude =
    euler_from_quaternion of its quaternion."""
    from brov2_hybrid.physics.kinematics import euler_from_quaternion
    vehicle = load_vehicle()
    plant = Plant(vehicle, load_sim_options())
    rng = np.random.default_rng(12)
    for pwm in np.vstack([rng.uniform(1050.0, 1950.0, (300, 8)), np.rint(rng.uniform(1100.0, 1900.0, (300, 8)))]):
        plant.set_motor_pwm(pwm)
        clipped = np.clip(pwm, vehicle.thrusters.pwm_min_us, vehicle.thrusters.pwm_max_us)
        assert plant.motor_pwm_us.tolist() == clipped.tolist()
        force = np.interp(clipped, vehicle.table.pwm_us, vehicle.table.force_n)
        assert plant.thruster_forces_n().tolist() == force.tolist()
        assert plant.thruster_wrench().tolist() == (plant.params.thruster_matrix @ force).tolist()
        plant.step(3)
        assert plant.eta[3:].tolist() == euler_from_quaternion(plant.quaternion_ned_frd()).tolist()


@pytest.mark.skipif(jit.jit_disabled(), reason="BROV2_NO_JIT is set: only the Python kernels run")
def test_every_kernel_family_compiles_where_numba_is():
    """With numba installed, `python -m brov2_hybrid.kernels` compiles every family (a family whose probe
    failed would silently run as Python, at Python's speed)."""
    pytest.importorskip("numba")
    from brov2_hybrid.kernels import warm
    families = warm()
    assert families and all(families.values()), families
