"""brov2_hybrid: hybrid autopilot, simulator and analysis for the BlueROV2 Heavy.

The core modules of this package import numpy/scipy only, never rospy, so that the
math is shared by the ROS nodes, the MAVLink simulator and the analysis tools.
Conventions (stated once): body frame FRD, inertial frame NED, SI units, radians;
6-DOF vectors are ordered (surge, sway, heave, roll, pitch, yaw).
"""
__version__ = "0.1.0"
