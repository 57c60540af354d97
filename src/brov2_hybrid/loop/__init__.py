"""The in-process closed loop: the autopilot and the simulated vehicle in one process, on
simulated time, thousands of times faster than real time.

:class:`~brov2_hybrid.loop.closed_loop.ClosedLoop` flies a dive with a controller on the
vehicle model (its settings: :mod:`~brov2_hybrid.loop.settings`); its whole run is one compiled
call (:func:`brov2_hybrid.loop.kernel.fly`, whose grouped arguments
:mod:`~brov2_hybrid.loop.fly_args` builds), checked against the Python tick loop. The loop as
first written, which tests and ``make bench`` hold it to, is the benchmark's
(:mod:`brov2_hybrid.bench.reference_loop`, passed as ``ClosedLoop.run(dive, ticks=...)``).
The experiments that use it are in :mod:`brov2_hybrid.analysis`.

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.loop.closed_loop``).
"""
