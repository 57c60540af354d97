"""Rigid-body physics shared by the controller and the simulator.

Holds attitude kinematics and the ROS / MAVROS frame conventions
(:mod:`~brov2_hybrid.physics.kinematics`, paper Eq. 15-19) and the hydrostatic restoring wrench
of weight and buoyancy (:mod:`~brov2_hybrid.physics.hydrostatics`).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.physics.kinematics``).
"""
