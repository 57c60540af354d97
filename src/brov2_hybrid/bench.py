"""``make bench``: timing figures of the core, the simulator and the analysis loop.

Prints figures and goals; asserts nothing (timing goals are not unit tests).
Sections from other modules (``brov2_hybrid.sim.bench``, ``brov2_hybrid.analysis.bench``)
are run when present; each provides ``run()``.
"""
import argparse
import importlib
import time

import numpy as np

from brov2_hybrid.control import HybridController
from brov2_hybrid.model import load_setup
from brov2_hybrid.params import load_controller_params

SECTIONS = (
    ("simulator physics", "brov2_hybrid.sim.bench"),
    ("in-process closed loop", "brov2_hybrid.analysis.bench"),
)


def control_tick_times(n_ticks=10000, seed=0):
    """Time n_ticks control ticks (control law + normalisation + Algorithm 2) [s each]."""
    setup = load_setup()
    controller = HybridController(setup.vehicle, load_controller_params(), setup.tau_max)
    mixer = setup.mixer("quantitative")
    rng = np.random.default_rng(seed)
    eta2d = rng.uniform(-0.5, 0.5, (n_ticks, 3))
    eta2 = rng.uniform(-0.5, 0.5, (n_ticks, 3))
    nu2 = rng.uniform(-0.5, 0.5, (n_ticks, 3))
    u_lin = rng.uniform(-0.5, 0.5, (n_ticks, 3))
    times = np.empty(n_ticks)
    clock = time.perf_counter
    for k in range(n_ticks):
        start = clock()
        controller.update_desired(0.02 * k, eta2d[k])
        out = controller.compute(eta2d[k], u_lin[k], eta2[k], nu2[k])
        mixer.pwm(out.u)
        times[k] = clock() - start
    return times


def run_core(n_ticks=10000):
    times = control_tick_times(n_ticks) * 1e6
    print("core: control tick (control law + normalisation + Algorithm 2), %d ticks: "
          "median %.1f us, p99 %.1f us (goal: median <= 50 us)"
          % (n_ticks, np.median(times), np.percentile(times, 99)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=10000, help="control ticks to time")
    args = parser.parse_args(argv)
    run_core(args.ticks)
    for title, module in SECTIONS:
        try:
            section = importlib.import_module(module)
        except ImportError as exc:
            print("%s: not available (%s)" % (title, exc))
            continue
        section.run()


if __name__ == "__main__":
    main()
