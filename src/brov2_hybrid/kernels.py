"""Compile (or load from the disk cache) every numba kernel family, before anything flies.

``python -m brov2_hybrid.kernels`` (run by ``make setup``) builds the objects whose kernels
:mod:`brov2_hybrid.jit` compiles: the control law, the channel maps, the thrust table, the
mixers, the plant's input, attitude and stepper, the stock-compensated output stage's
search and the in-process loop's whole run. A cold cache costs some 20 s once per source version and machine; afterwards each process loads the kernels in well under a second, so
no node (thruster_allocation switching to stock firmware) and no test waits for numba.
Prints which families run compiled; without numba, that the Python kernels run.
"""
import time

import numpy as np

from brov2_hybrid import jit


def warm(name_or_path="bluerov2_heavy"):
    """Build the kernels' users for the vehicle file ``name_or_path`` (default the Heavy); return {family: compiled?}."""
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.sim.plant import Plant
    from brov2_hybrid.vehicle.firmware_output import output_stage
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    from brov2_hybrid.control import law_kernels
    vehicle = load_vehicle(name_or_path)
    law_kernels.kernels()
    stage = output_stage("stock", vehicle, vehicle.rc_map)
    stage.channels(np.full(6, 0.2))
    vehicle.mixer("stock").motor_pwm(np.full(6, 0.2))
    plant = Plant(vehicle, load_sim_options())
    plant.step(2)
    from brov2_hybrid.analysis import loop_kernel
    loop_kernel.compiled_fly()          # compiles the in-process loop's run on its probe runs
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
