"""brov2_sitl: a BlueROV2 (any vehicle file) that behaves like the paper's modified ArduSub SITL over MAVLink.

Modules: :mod:`~brov2_hybrid.sim.firmware` (arming, modes, RC overrides, failsafe,
mixers), :mod:`~brov2_hybrid.sim.telemetry` (messages and stream rates),
:mod:`~brov2_hybrid.sim.mavlink_vehicle` (sockets and MAVLink protocol),
:mod:`~brov2_hybrid.sim.simulator` (clock, loop, command line),
:mod:`~brov2_hybrid.sim.bench` (physics cost). The vehicle physics is
:mod:`~brov2_hybrid.sim.vehicle_model` (model and integrator),
:mod:`~brov2_hybrid.sim.dynamics` (equations of motion), :mod:`~brov2_hybrid.sim.thruster_lag`,
with every setting read by :mod:`~brov2_hybrid.sim.config`. Run with ``python -m brov2_hybrid.sim --help``.
"""
