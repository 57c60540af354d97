"""What the topside sends the on-board script: the desired state as one DEBUG_FLOAT_ARRAY per tick.

``data[0:9]`` = desired roll, pitch, yaw [rad] (NED), their rates d(eta_2d)/dt [rad/s] and the
open-loop surge, sway, heave commands u_1:3 in [-1, 1]; the rest zero. ``array_id`` is
``onboard.yaml``'s ``desired_array_id`` (the script ignores other arrays), ``name`` "HYB_DES" for a
ground station's display. docs/onboard.md says why this message; the script's
``M.decode_desired`` reads it back.
"""
import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_vector

#: DEBUG_FLOAT_ARRAY.data holds 58 floats.
DATA_LENGTH = 58
#: DEBUG_FLOAT_ARRAY.name (char[10]).
ARRAY_NAME = b"HYB_DES"


def desired_data(eta2d, eta2d_dot, u_linear):
    """The message's ``data`` (58 floats) for one desired state; Brov2Error outside [-1, 1]."""
    u = as_vector(u_linear, 3, "u_linear")
    if np.any(np.abs(u) > 1.0):
        raise Brov2Error("u_linear: expected values in [-1, 1], got %s" % u.tolist())
    head = np.concatenate([as_vector(eta2d, 3, "eta2d"), as_vector(eta2d_dot, 3, "eta2d_dot"), u])
    return head.tolist() + [0.0] * (DATA_LENGTH - head.size)


def send_desired(mav, onboard, time_usec, eta2d, eta2d_dot, u_linear):
    """Send one desired state on a pymavlink ``MAVLink`` object ``mav`` (``connection.mav``)."""
    mav.debug_float_array_send(int(time_usec), ARRAY_NAME, onboard.desired_array_id,
                               desired_data(eta2d, eta2d_dot, u_linear))
