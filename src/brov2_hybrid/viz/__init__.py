"""What the RViz view draws, as plain data: no rospy, no message types.

:mod:`~brov2_hybrid.viz.markers` turns the vehicle file's thruster layout, the motor outputs,
the attitudes, the depth and the mode into marker descriptions that ``nodes/rviz_view``
copies into a ``visualization_msgs/MarkerArray`` (docs/rviz.md).

No re-exports: import each module by its full path.
"""
