"""Hydrostatic (restoring) wrench of weight and buoyancy (Fossen 2011, Sec. 4.1).

The wrench acting ON the vehicle, body FRD: f_G = R^T [0, 0, W], f_B = R^T [0, 0, -B]
(NED, z down) and moments r_G x f_G + r_B x f_B, with R = J1(eta2). In Fossen's
notation this is -g(eta). With the centre of buoyancy above the centre of gravity the
moment rights the vehicle; the control law's feed-forward (paper Eq. 18, 20) is the
negative of this moment at the desired attitude.
"""
import numpy as np

from brov2_hybrid.errors import as_vector
from brov2_hybrid.kinematics import J1


def restoring_wrench(eta2, weight_n, buoyancy_n, r_cg_m, r_cb_m):
    """Body-frame wrench (6,) [N, N m] of gravity and buoyancy at attitude eta2 [rad]."""
    down_body = J1(eta2)[2, :]  # R^T [0, 0, 1]: the NED down axis in body coordinates
    f_g = weight_n * down_body
    f_b = -buoyancy_n * down_body
    moment = np.cross(as_vector(r_cg_m, 3, "r_cg_m"), f_g) + np.cross(as_vector(r_cb_m, 3, "r_cb_m"), f_b)
    return np.concatenate([f_g + f_b, moment])


def restoring_moment(eta2, params):
    """Moment (3,) [N m] of weight and buoyancy on the vehicle described by ``params``."""
    return restoring_wrench(eta2, params.weight_n, params.buoyancy_n, params.r_cg_m, params.r_cb_m)[3:]
