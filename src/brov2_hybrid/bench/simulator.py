"""Benchmark of the simulator: physics cost per step and real-time factors.

``python -m brov2_hybrid.bench.simulator`` (also called by ``make bench``) prints, for each
model/option, the physics-only cost per fixed step (best of several repeats) and the
real-time factor it allows, then the cost of the whole simulator loop (physics +
firmware + telemetry encoding at the default stream rates) per simulated second.
Goal: <= 25 us per 400 Hz step, i.e. >= 100x real time, physics only. Without a
thruster lag the stepper runs compiled by numba where it is installed; the last case is
the same stepper in Python, the baseline, timed in the same run.
"""
import platform
import time

import numpy as np

from brov2_hybrid.link.ardusub import CHAN_NOCHANGE, PWM_NEUTRAL_US
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from brov2_hybrid.sim.config import SimOptions
from brov2_hybrid.sim.plant import Plant

GOAL_US_PER_STEP = 25.0
REPEATS = 3


def _best_seconds(fn, repeats=REPEATS):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def physics_cost_us(vehicle, options, sim_seconds=20.0, command_period_s=None, batch=True, compiled=True):
    """Mean cost [us] of one physics step.

    ``command_period_s``: change the motor PWMs this often (keeps a thruster lag busy);
    ``batch=False`` calls ``step(1)`` per step instead of one ``step(n)``; ``compiled=False``
    steps with the Python stepper instead of its numba-compiled twin.
    """
    plant = Plant(vehicle, options)
    plant.compiled = compiled
    pwm_a = vehicle.mixer().pwm([0.3, 0.1, 0.2, 0.1, -0.1, 0.4])
    pwm_b = vehicle.mixer().pwm([-0.2, 0.2, -0.1, -0.1, 0.1, -0.3])
    n_total = int(round(sim_seconds / plant.dt_s))
    chunk = n_total if command_period_s is None else max(1, int(round(command_period_s / plant.dt_s)))

    def run():
        plant.reset(eta=[0, 0, 50.0, 0, 0, 0])
        done, k = 0, 0
        while done < n_total:
            plant.set_motor_pwm(pwm_a if k % 2 == 0 else pwm_b)
            n = min(chunk, n_total - done)
            if batch:
                plant.step(n)
            else:
                for _ in range(n):
                    plant.step(1)
            done += n
            k += 1

    return _best_seconds(run) / n_total * 1e6


def simulator_loop_cost(vehicle, sim_seconds=10.0):
    """Wall seconds per simulated second of the whole loop with one telemetry link.

    The link is UDP to the discard port, so every default stream is built and sent.
    """
    from brov2_hybrid.sim.config import load_link_config
    from brov2_hybrid.sim.simulator import Simulator

    link = load_link_config()
    link.address = "tcp:127.0.0.1:0"
    link.udp_out = "127.0.0.1:9"
    sim = Simulator(vehicle=vehicle, link_config=link, initial_eta=[0, 0, 5.0, 0, 0, 0])
    try:
        sim.firmware.set_armed(0.0, True)
        sim.firmware.params.set("FS_PILOT_INPUT", 0)
        neutral = int(PWM_NEUTRAL_US)
        sim.firmware.handle_rc_override(0.0, sim.firmware.sysid_mygcs,
                                        [neutral, neutral, neutral, neutral + 100] + [CHAN_NOCHANGE] * 4)
        start = time.perf_counter()
        sim.advance_to(sim.t_s + sim_seconds)
        return (time.perf_counter() - start) / sim_seconds
    finally:
        sim.close()


def run():
    """Run the benchmark and print its figures."""
    vehicle = load_vehicle()
    dt_us = SimOptions().dt_s * 1e6
    print("brov2_sitl benchmark: physics at %.0f Hz (semi-implicit Euler), Python %s, %s"
          % (1e6 / dt_us, platform.python_version(), platform.machine()))
    cases = [
        ("updated model", SimOptions(), {}),
        ("stock model", SimOptions(model="stock"), {}),
        ("updated + ocean current", SimOptions(current_ned_m_s=np.array([0.2, 0.1, 0.0])), {}),
        ("updated + first-order lag (busy)", SimOptions(thruster_lag="first_order"), {"command_period_s": 0.1}),
        ("updated + third-order lag (busy)", SimOptions(thruster_lag="third_order"), {"command_period_s": 0.1}),
        ("updated, step(1) per call", SimOptions(), {"batch": False}),
        ("updated, Python stepper (no numba)", SimOptions(), {"compiled": False}),
    ]
    worst = 0.0
    for name, options, kwargs in cases:
        cost = physics_cost_us(vehicle, options, **kwargs)
        worst = max(worst, cost)
        print("  %-34s %6.2f us/step   %6.0fx real time" % (name, cost, dt_us / cost))
    verdict = "met" if worst <= GOAL_US_PER_STEP else "NOT met"
    print("  goal <= %.0f us/step (>= %.0fx real time): %s (worst case %.2f us/step)"
          % (GOAL_US_PER_STEP, dt_us / GOAL_US_PER_STEP, verdict, worst))
    per_sim_second = simulator_loop_cost(vehicle)
    print("  whole simulator loop (physics + firmware + default telemetry, one link): "
          "%.1f ms per simulated s -> up to %.0fx real time" % (per_sim_second * 1e3, 1.0 / per_sim_second))


if __name__ == "__main__":
    run()
