"""The six degrees of freedom by name, in the order of every 6-vector of the project.

tau, u, nu and the vehicle file's rows run (surge, sway, heave, roll, pitch, yaw): the
linear DOFs along the body FRD axes, then the rotations about them. The log columns,
the dive CSV, the vehicle file's ``passive_dofs``, the pilot's axes and the reports take
the names from here.
"""

#: (surge, sway, heave, roll, pitch, yaw): the index of a name is its DOF index (0..5).
DOF_NAMES = ("surge", "sway", "heave", "roll", "pitch", "yaw")
#: surge, sway, heave: the open-loop DOFs of the hybrid autopilot (DOFs 0..2).
LINEAR_DOF_NAMES = DOF_NAMES[:3]
#: roll, pitch, yaw: the closed-loop attitude DOFs (DOFs 3..5; eta2 order).
ANGULAR_DOF_NAMES = DOF_NAMES[3:]
