"""The mission: what the ``mission`` node does around a dive, without ROS.

The sequence (:mod:`~brov2_hybrid.mission.sequence`: connect, mode, arm, override check,
firmware latch, end of the dive), what it exchanges with the outside
(:mod:`~brov2_hybrid.mission.interfaces`: settings, the vehicle's state, log levels), its
exit codes (:mod:`~brov2_hybrid.mission.exit_codes`) and the watch on respawning nodes
(:mod:`~brov2_hybrid.mission.peer_watch`).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.mission.sequence``).
"""
