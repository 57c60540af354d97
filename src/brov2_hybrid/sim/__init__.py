"""brov2_sitl: a BlueROV2 (any vehicle file) that behaves like the paper's modified ArduSub SITL over MAVLink.

Modules: :mod:`~brov2_hybrid.sim.firmware` (arming, modes, RC overrides, failsafe,
mixers) with :mod:`~brov2_hybrid.sim.param_table` (its parameters) and
:mod:`~brov2_hybrid.sim.joystick` (MANUAL_CONTROL -> RC override),
:mod:`~brov2_hybrid.sim.telemetry` (messages and stream rates),
:mod:`~brov2_hybrid.sim.mavlink_server` (sockets), :mod:`~brov2_hybrid.sim.mavlink_protocol`
(MAVLink protocol) with :mod:`~brov2_hybrid.sim.mavlink_commands` (COMMAND_LONG/INT,
SET_MODE) and :mod:`~brov2_hybrid.sim.link_signing` (MAVLink 2 signing),
:mod:`~brov2_hybrid.sim.simulator` (clock, loop, command line) with
:mod:`~brov2_hybrid.sim.lockstep` (waiting for each control step's command). The vehicle physics is
:mod:`~brov2_hybrid.sim.plant` (the plant: state and integrator),
:mod:`~brov2_hybrid.sim.dynamics` (equations of motion), :mod:`~brov2_hybrid.sim.thruster_lag`,
with every setting read by :mod:`~brov2_hybrid.sim.config`. Run with ``python -m brov2_hybrid.sim --help``.
"""
