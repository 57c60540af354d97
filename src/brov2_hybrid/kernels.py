"""Compile (or load from the disk cache) every numba kernel family, before anything flies.

``python -m brov2_hybrid.kernels`` (run by ``make setup``) builds the objects whose kernels
:mod:`brov2_hybrid.jit` compiles: the control law, the thrust table, the mixers, the plant's
input, attitude and stepper, the tether's step, the stock-compensated output stage's search and the in-process
loop's whole run. A cold cache costs about a minute once per source version and machine;
afterwards each process loads the kernels in well under a second, so no node and no test
waits for numba.
Prints which families run compiled; without numba, that the Python kernels run.
"""
import time
from dataclasses import replace

import numpy as np

from brov2_hybrid import jit


def warm(name_or_path="bluerov2_heavy"):
    """Run every kernel the way the nodes, the simulator and the analysis call it, for the
    vehicle file ``name_or_path`` (default the Heavy), so that each compiled variant is in the
    cache and no node compiles in flight; return {family: compiled?}.

    numba compiles one variant per argument types, on first call: the control law's kernels
    through :class:`~brov2_hybrid.control.law.HybridController` (every option), the
    channel maps, thrust-table look-ups and mixers through both firmwares' mixers and every
    output stage, the plant through :class:`~brov2_hybrid.sim.plant.Plant`, and the
    in-process loop's run on its probe.
    """
    from brov2_hybrid.loop import closed_loop
    from brov2_hybrid.loop import kernel as loop_kernel
    from brov2_hybrid.control.law import HybridController, attitude_torque, normalize
    from brov2_hybrid.params import load_controller_params
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.sim.plant import Plant
    from brov2_hybrid.vehicle.firmware_output import OUTPUT_STAGES, output_stage
    from brov2_hybrid.vehicle.mixers import KINDS, motor_pwm_from_rc
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    vehicle = load_vehicle(name_or_path)
    u = np.array([0.2, -0.1, 0.3, 0.05, -0.2, 0.4])
    for options in ({}, {"integral_enabled": True, "drag_feedforward_enabled": True, "rate_window": 8},
                    {"integral_enabled": True, "reference_feedforward_enabled": True}):
        controller = HybridController(vehicle.body, load_controller_params(), vehicle.tau_max, vehicle.passive_dofs)
        controller.configure(**options)
        for k in range(4):
            controller.update_desired(0.02 * k, [0.1, 0.2, 0.3 * k])
            controller.compute([0.1, 0.2, 0.3], [0.1, 0.0, -0.2], [0.0, 0.1, 0.2], [0.01, 0.0, 0.0], t_s=0.02 * k)
        controller.compute([0.1, 0.2, 0.3], [0.0, 0.0, 0.0], [0.0, 0.1, 0.2], [0.0, 0.0, 0.0], eta2d_dot=np.zeros(3))
        controller.rate_estimator.rate()
        controller.reference_filter.trajectory(1.0)
    normalize(np.full(6, 10.0), vehicle.tau_max)
    attitude_torque([0.1, 0.2, 0.3], np.zeros(3), [0.0, 0.1, 0.2], np.zeros(3), np.ones(3), np.ones(3), np.zeros(3))
    for kind in KINDS:
        mixer = vehicle.mixer(kind)
        mixer.motor_pwm(u)
        motor_pwm_from_rc(vehicle.rc_map.pwm_from_u(u), vehicle.rc_map, mixer, 1100, 1900)
        motor_pwm_from_rc([1500, 1600, 1400, 1550, 1500, 1500, 0, 0], vehicle.rc_map, mixer, 1100, 1900)
    vehicle.mixer("stock").motor_pwm(np.vstack([u, -u]))
    table = vehicle.table
    table.pwm_from_force(table.force_from_pwm(np.array([1200.0, 1500.0, 1700.0])))
    table.normalized_from_force(5.0)
    table.pwm_from_normalized(0.5)
    for name in OUTPUT_STAGES:
        stage = output_stage(name, vehicle, vehicle.rc_map)
        for command in (u, np.zeros(6), np.full(6, 1.0)):
            stage.command(command)
            stage.channels(command)
            stage.rc_and_motor_pwm(command)
    options = load_sim_options()
    for tether in ((options.tether,) if options.tether is None else (options.tether, options.tether.with_changes(
            enabled=True))):     # the plant alone, then on its tether (the tether's step and pull)
        plant = Plant(vehicle, replace(options, tether=tether))
        plant.set_motor_pwm(vehicle.mixer().motor_pwm(u))
        plant.step(2)
        plant.measured_attitude()
    loop_kernel.compiled_fly(closed_loop.probe_fly)   # compiles the in-process loop's run on its probe runs
    return jit.compiled_families()


def main():
    """Command line: compile the kernels and say what runs compiled."""
    t0 = time.perf_counter()
    families = warm()
    state = ", ".join("%s %s" % (name, "compiled" if ok else "Python") for name, ok in sorted(families.items()))
    print("kernels: %s (%.1f s)%s" % (state, time.perf_counter() - t0,
                                      "; BROV2_NO_JIT is set" if jit.jit_disabled() else ""))


if __name__ == "__main__":
    main()
