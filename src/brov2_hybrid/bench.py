"""Timing of the core for ``make bench`` (prints figures, asserts nothing), and the
statistics the benchmarks print.

``python -m brov2_hybrid.bench [--ticks N]``: the control tick's cost. The layers above
time themselves (``brov2_hybrid.sim.bench``, ``brov2_hybrid.analysis.bench``);
``scripts/bench.sh`` runs each in turn. Timing goals are printed, not asserted.
"""
import argparse
import math
import time

import numpy as np

from brov2_hybrid.control import HybridController, normalize
from brov2_hybrid.mixers import QUANTITATIVE
from brov2_hybrid.vehicle import add_vehicle_argument, load_vehicle
from brov2_hybrid.params import load_controller_params


def percentile_summary(samples, percentiles=(50, 99)):
    """{'n': count, 'p50': ..., 'p99': ..., 'max': ...} of a sequence (NaN when empty)."""
    arr = np.asarray(list(samples), dtype=float)
    out = {"n": int(arr.size)}
    for p in percentiles:
        out["p%d" % p] = float(np.percentile(arr, p)) if arr.size else math.nan
    out["max"] = float(arr.max()) if arr.size else math.nan
    return out


def control_tick_times(n_ticks=10000, seed=0, vehicle=None):
    """Time n_ticks control ticks (control law + normalisation + Algorithm 2) [s each]."""
    setup = load_vehicle(vehicle)
    controller = HybridController(setup.body, load_controller_params(), setup.tau_max, setup.passive_dofs)
    mixer = setup.mixer(QUANTITATIVE)
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
        tau = controller.compute(eta2d[k], u_lin[k], eta2[k], nu2[k]).tau_body_frd
        mixer.pwm(normalize(tau, setup.tau_max)[0])
        times[k] = clock() - start
    return times


def run_core(n_ticks=10000, vehicle=None):
    times = control_tick_times(n_ticks, vehicle=vehicle) * 1e6
    print("core: control tick (control law + normalisation + Algorithm 2), %d ticks: "
          "median %.1f us, p99 %.1f us (goal: median <= 50 us)"
          % (n_ticks, np.median(times), np.percentile(times, 99)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=10000, help="control ticks to time")
    add_vehicle_argument(parser)
    args = parser.parse_args(argv)
    run_core(args.ticks, args.vehicle)


if __name__ == "__main__":
    main()
