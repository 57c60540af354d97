"""brov2_sitl: a BlueROV2 Heavy that behaves like the paper's modified ArduSub SITL over MAVLink.

Modules: :mod:`~brov2_hybrid.sim.firmware` (arming, modes, RC overrides, failsafe,
mixers), :mod:`~brov2_hybrid.sim.telemetry` (messages and stream rates),
:mod:`~brov2_hybrid.sim.mavlink_vehicle` (sockets and MAVLink protocol),
:mod:`~brov2_hybrid.sim.simulator` (clock, loop, command line),
:mod:`~brov2_hybrid.sim.bench` (physics cost). The vehicle physics is
:mod:`brov2_hybrid.vehicle_model`. Run with ``python -m brov2_hybrid.sim --help``.
"""
