"""Timing for ``make bench`` (prints figures, asserts nothing) and the baselines it times against.

The core's costs (:mod:`~brov2_hybrid.bench.core`: control tick, output stages, the stock
search, allocators; ``python -m brov2_hybrid.bench.core``), the simulator's physics and loop
(:mod:`~brov2_hybrid.bench.simulator`), the in-process loop and the reproduction
(:mod:`~brov2_hybrid.bench.loop`), and the code as first written that the fast paths are
held to in tests and timed against: the loop (:mod:`~brov2_hybrid.bench.reference_loop`)
and the stock search (:mod:`~brov2_hybrid.bench.stock_search_reference`). Nothing outside
the benchmarks and the tests imports this room.

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.bench.core``).
"""
