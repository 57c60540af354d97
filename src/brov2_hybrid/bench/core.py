"""Timing of the core for ``make bench`` (prints figures, asserts nothing), and the
statistics the benchmarks print.

``python -m brov2_hybrid.bench.core [--ticks N]``: the control tick's cost and each output
stage's cost per command, the stock search against the plain-numpy reference search
(:func:`~brov2_hybrid.bench.stock_search_reference.reference_stock_compensation`) in the same run
(goal: <= 150 us per stock-compensated command), and each registered allocator's
``forces(u)`` within and beyond the thrust table. The layers above
time themselves (``brov2_hybrid.bench.simulator``, ``brov2_hybrid.bench.loop``);
``scripts/bench.sh`` runs each in turn. Timing goals are printed, not asserted.
"""
import argparse
import math
import time

import numpy as np

from brov2_hybrid.control.law import HybridController, normalize
from brov2_hybrid.vehicle.mixers import QUANTITATIVE
from brov2_hybrid.vehicle.vehicle_file import add_vehicle_argument, load_vehicle
from brov2_hybrid.params import load_controller_params


def percentile_summary(samples, percentiles=(50, 99)):
    """{'n': count, 'p50': ..., 'p99': ..., 'max': ...} of a sequence (NaN when empty)."""
    arr = np.asarray(list(samples), dtype=float)
    out = {"n": int(arr.size)}
    for p in percentiles:
        out["p%d" % p] = float(np.percentile(arr, p)) if arr.size else math.nan
    out["max"] = float(arr.max()) if arr.size else math.nan
    return out


def control_tick_times(n_ticks=10000, seed=0, name_or_path=None):
    """Time n_ticks control ticks (control law + normalisation + Algorithm 2) [s each]."""
    vehicle = load_vehicle(name_or_path)
    controller = HybridController(vehicle.body, load_controller_params(), vehicle.tau_max, vehicle.passive_dofs)
    mixer = vehicle.mixer(QUANTITATIVE)
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
        mixer.pwm(normalize(tau, vehicle.tau_max)[0])
        times[k] = clock() - start
    return times


def output_stage_times(n_commands=1000, seed=0, name_or_path=None):
    """Per-command times [s] of the output stages, interleaved command by command.

    Commands uniform in [-1, 1]^6 (most saturate a thruster group). Returns a dict of
    arrays: 'quantitative' and 'stock' (``command(u)``, what thruster_allocation runs per
    tick), 'stock_search' and 'stock_reference' (the stock search alone:
    ``StockCompensatedOutput.u_to_send`` and :func:`reference_stock_compensation`, the
    search as first written, timed in turn on each command), and 'same' (how many
    commands got the same channels from both).
    """
    from brov2_hybrid.vehicle.firmware_output import output_stage
    from brov2_hybrid.bench.stock_search_reference import reference_stock_compensation
    vehicle = load_vehicle(name_or_path)
    quantitative = output_stage(QUANTITATIVE, vehicle, vehicle.rc_map)
    stock = output_stage("stock", vehicle, vehicle.rc_map)
    U = np.random.default_rng(seed).uniform(-1.0, 1.0, (n_commands, 6))
    out = {k: np.empty(n_commands) for k in ("quantitative", "stock", "stock_search", "stock_reference")}
    clock = time.perf_counter
    same = 0
    for k, u in enumerate(U):
        start = clock()
        quantitative.command(u)
        mid = clock()
        stock.command(u)
        end = clock()
        fast = stock.u_to_send(u)
        after = clock()
        reference = reference_stock_compensation(stock, u)
        last = clock()
        out["quantitative"][k], out["stock"][k] = mid - start, end - mid
        out["stock_search"][k], out["stock_reference"][k] = after - end, last - after
        same += int(np.array_equal(fast, reference))
    out["same"] = same
    return out


def run_output_stages(n_commands=1000, name_or_path=None):
    """Time the quantitative and stock-compensated output stages and the stock search against the
    reference search over ``n_commands`` commands; prints the medians [us]."""
    t = output_stage_times(n_commands, name_or_path=name_or_path)
    med = {k: float(np.median(v)) * 1e6 for k, v in t.items() if k != "same"}
    print("core: output stage per command (command(u): channels, motor PWMs, wrench), %d commands in [-1, 1]^6, "
          "median: quantitative %.0f us, stock-compensated %.0f us (goal <= 150 us)"
          % (n_commands, med["quantitative"], med["stock"]))
    print("core: stock search alone %.0f us vs the search as first written (reference_stock_compensation, same "
          "run, interleaved) %.0f us: %.1fx faster; same channels on %d of %d commands"
          % (med["stock_search"], med["stock_reference"], med["stock_reference"] / med["stock_search"],
             t["same"], n_commands))


def allocator_times(n_commands=1000, seed=0, name_or_path=None):
    """Per-command times [s] of ``forces(u)`` of every registered allocator, built for the vehicle.

    Commands: half of them small (uniform in [-0.3, 0.3]^6: Eq. 9 within the thrust table)
    and half uniform in [-1, 1]^6 (most exceed a thruster limit), interleaved. Returns
    {allocator name: {'small': times, 'full': times}}.
    """
    from brov2_hybrid.vehicle.allocation import ALLOCATORS, make_allocator
    vehicle = load_vehicle(name_or_path)
    allocators = {name: make_allocator(name, vehicle) for name in sorted(ALLOCATORS)}
    rng = np.random.default_rng(seed)
    commands = {"small": rng.uniform(-0.3, 0.3, (n_commands, 6)), "full": rng.uniform(-1.0, 1.0, (n_commands, 6))}
    out = {name: {kind: np.empty(n_commands) for kind in commands} for name in allocators}
    clock = time.perf_counter
    for k in range(n_commands):
        for kind, U in commands.items():
            for name, allocator in allocators.items():
                start = clock()
                allocator.forces(U[k])
                out[name][kind][k] = clock() - start
    return out


def run_allocators(n_commands=1000, name_or_path=None):
    """Time ``forces(u)`` of every registered allocator; prints the medians [us] within and beyond
    the thrust table."""
    for name, t in allocator_times(n_commands, name_or_path=name_or_path).items():
        print("core: allocator %-14s forces(u) per command: median %.1f us within the table ([-0.3, 0.3]^6), "
              "%.1f us (p99 %.0f us) on commands in [-1, 1]^6" % (
                  name, np.median(t["small"]) * 1e6, np.median(t["full"]) * 1e6, np.percentile(t["full"], 99) * 1e6))


def run_core(n_ticks=10000, name_or_path=None):
    """Time ``n_ticks`` control ticks; prints the median and p99 [us]."""
    times = control_tick_times(n_ticks, name_or_path=name_or_path) * 1e6
    print("core: control tick (control law + normalisation + Algorithm 2), %d ticks: "
          "median %.1f us, p99 %.1f us (goal: median <= 50 us)"
          % (n_ticks, np.median(times), np.percentile(times, 99)))


def main(argv=None):
    """Command line (``--ticks``, ``--vehicle``): print the control tick, output stage and allocator
    timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=10000, help="control ticks to time")
    add_vehicle_argument(parser)
    args = parser.parse_args(argv)
    run_core(args.ticks, args.vehicle)
    run_output_stages(name_or_path=args.vehicle)
    run_allocators(name_or_path=args.vehicle)


if __name__ == "__main__":
    main()
