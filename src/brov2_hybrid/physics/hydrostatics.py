"""Hydrostatic (restoring) wrench of weight and buoyancy (Fossen 2011, Sec. 4.1).

The wrench acting ON the vehicle, body FRD: f_G = R^T [0, 0, W], f_B = R^T [0, 0, -B]
(NED, z down) and moments r_G x f_G + r_B x f_B, with R = J1(eta2). In Fossen's
notation this is -g(eta). With the centre of buoyancy above the centre of gravity the
moment rights the vehicle; the control law's feed-forward (paper Eq. 18, 20) is the
negative of this moment at the desired attitude.
"""
import math

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_finite, as_vector
from brov2_hybrid.physics.kinematics import down_axis_in_body


def restoring_wrench(eta2, weight_n, buoyancy_n, r_cg_m, r_cb_m):
    """Body-frame wrench (6,) [N, N m] of gravity and buoyancy at attitude eta2 [rad].

    With d = R^T [0, 0, 1] (NED down in body axes): force (W - B) d and moment
    r_G x W d + r_B x (-B d) = (W r_G - B r_B) x d.
    """
    phi, theta, _ = as_vector(eta2, 3, "eta2")
    weight_n, buoyancy_n = as_finite(weight_n, "weight_n"), as_finite(buoyancy_n, "buoyancy_n")
    lever = (weight_n * as_vector(r_cg_m, 3, "r_cg_m") - buoyancy_n * as_vector(r_cb_m, 3, "r_cb_m")).tolist()
    return restoring_wrench_from_lever(phi, theta, weight_n - buoyancy_n, lever)


def restoring_wrench_from_lever(phi, theta, net_weight_n, lever):
    """:func:`restoring_wrench` from precomputed terms (the control tick's fast path).

    ``phi``, ``theta`` [rad] (floats), ``net_weight_n`` = W - B [N] and ``lever`` =
    W r_G - B r_B [N m] (3 floats). Raises Brov2Error on NaN or a lever that is not 3 numbers.
    """
    try:
        cx, cy, cz = lever
        finite = all(math.isfinite(x) for x in (phi, theta, net_weight_n, cx, cy, cz))
    except (TypeError, ValueError):
        finite = False
    if not finite:
        raise Brov2Error("restoring_wrench_from_lever: expected finite phi, theta, net_weight_n and a lever of "
                         "3 numbers, got %r, %r, %r, %r" % (phi, theta, net_weight_n, lever))
    dx, dy, dz = down_axis_in_body(phi, theta)
    return np.array((net_weight_n * dx, net_weight_n * dy, net_weight_n * dz) + lever_moment(cx, cy, cz, dx, dy, dz))


def lever_moment(cx, cy, cz, dx, dy, dz):
    """The restoring moment (3-tuple) [N m]: lever (cx, cy, cz) = W r_G - B r_B [N m] crossed
    with the down axis d in body axes, unchecked floats (a kernel, also the control law's
    feed-forward, :mod:`brov2_hybrid.control.law_kernels`)."""
    return cy * dz - cz * dy, cz * dx - cx * dz, cx * dy - cy * dx


def restoring_moment(eta2, params):
    """Moment (3,) [N m] of weight and buoyancy on the vehicle described by ``params``."""
    return restoring_wrench(eta2, params.weight_n, params.buoyancy_n, params.r_cg_m, params.r_cb_m)[3:]
