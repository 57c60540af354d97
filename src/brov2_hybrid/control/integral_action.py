"""Optional integral action of the control law (off by default: the paper's law, bit for bit).

tau_4:6 += z with dz/dt = k_i J2_inv(eta2) wrap(eta2m - eta2), k_i = ratio * omega_d * k_p,
where eta2m is the nominal closed loop's reference model driven by eta2d (see :class:`IntegralAction`).
Called by :class:`brov2_hybrid.control.law.HybridController` on its ticks. Angles rad,
torques N m, times s.
"""
import math

import numpy as np

from brov2_hybrid.control import law_kernels
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_finite, as_matrix, as_vector

#: Rows of :attr:`IntegralAction.state`.
Z, ETA2M, ETA2M_DOT, STALE = range(4)


class IntegralAction(object):
    """Integral torque z (3,) [N m] on the deviation from the nominal closed loop's reference model.

    Per axis the reference model is the nominal closed loop -- the PD law (with the drag
    feed-forward when it is on) on the vehicle model's own inertia and drag -- integrated
    on the controller's ticks:

        (I + M_A) eta2m'' = k_p wrap(eta2d - eta2m) + k_d,tot (eta2d_dot - eta2m') + D_ff - D(eta2m')

    with D(r) = B_L r + B_NL r |r| the model's drag (``HybridController.drag_model``) and
    D_ff = D(eta2d_dot) with the drag or the reference feed-forward (whose drag it is), else 0.
    Linearised with D(r) ~ B-check r this is Eq. 22; the model keeps the quadratic drag because the vehicle's drag at the
    slow rates of a piloted dive is far below B-check r (the Heavy's angular B_L is 0), and a
    model that lags the vehicle there would make the integrator pull the vehicle back. And

        dz/dt = k_i J2_inv(eta2) wrap(eta2m - eta2),   k_i = ratio * omega_d * k_p,

    the error taken in the frame of the P term. An axis integrates only while its reference
    is within ``band_rad`` of eta2d (a commanded move is the PD's job: the real plant lags
    the model there, through quadratic drag, saturation and latency, and integrating that
    lag would overshoot). Anti-windup: |z| <= tau_max per axis, and
    an axis does not integrate while its command is saturated in the direction the error
    would push. A reset axis restarts its model at the measured attitude and rate, z = 0.
    The model uses semi-implicit Euler sub-steps no longer than 0.2 / (fastest model pole
    bound: the local damping (B_L + 2 B_NL |rate| + |k_d,tot|) / (I + M_A) or the stiffness
    sqrt(k_p / (I + M_A))), so it stays accurate at any tick rate.
    """

    def __init__(self, tau_max_nm):
        self.tau_max_nm = as_vector(tau_max_nm, 3, "tau_max_nm")
        self.band_rad = math.inf
        #: rows: z [N m], eta2m [rad], eta2m' [rad/s], 1.0 where the model restarts at the next tick
        self.state = np.zeros((4, 3))
        self.state[STALE] = 1.0
        self.last_t = np.full(1, math.nan)        # the previous tick's time [s] (NaN: none)
        self._kernels = law_kernels.kernels()

    @property
    def z_nm(self):
        """The integral torque z (3,) [N m] (a view of the state)."""
        return self.state[Z]

    def reset(self, axes=None):
        """Zero z and restart the reference model on ``axes`` (indices 0..2; default all).

        Call on a mode change, a pilot takeover or when an axis leaves closed loop.
        """
        idx = [0, 1, 2] if axes is None else [int(a) for a in np.atleast_1d(axes)]
        for a in idx:
            if a not in (0, 1, 2):
                raise Brov2Error("axes: expected indices 0 (roll), 1 (pitch), 2 (yaw), got %r" % (axes,))
        self.state[Z, idx] = 0.0
        self.state[STALE, idx] = 1.0
        if axes is None:
            self.last_t[0] = math.nan

    def reference(self):
        """The reference model's attitude eta2m (3,) [rad] (meaningful after a tick)."""
        return self.state[ETA2M].copy()

    def step(self, t_s, eta2d, eta2d_dot, eta2, nu2, J2i, tau_att, gains, inertia, drag, drag_ff, ki, enabled):
        """Advance to ``t_s`` (None: hold) and return z (3,) [N m]; ``tau_att`` is the torque without z,
        ``drag`` (2, 3) the model's linear and quadratic drag, ``drag_ff`` whether the drag
        feed-forward is on.

        The arithmetic is :func:`brov2_hybrid.control.law_kernels.integral_step`; the
        controller's tick calls it inside :func:`~brov2_hybrid.control.law_kernels.control_torque`.
        """
        vec = [as_vector(x, 3, name) for x, name in ((eta2d, "eta2d"), (eta2d_dot, "eta2d_dot"), (eta2, "eta2"),
                                                      (nu2, "nu2"), (tau_att, "tau_att"), (inertia, "inertia"),
                                                      (ki, "ki"))]
        self._kernels["integral_step"](
            self.state, self.last_t, math.nan if t_s is None else as_finite(t_s, "t_s"), vec[0], vec[1], vec[2],
            vec[3], as_matrix(J2i, (3, 3), "J2i"), vec[4], gains.kp, gains.kd_total, vec[5],
            as_matrix(drag, (2, 3), "drag"), bool(drag_ff), vec[6], np.broadcast_to(enabled, 3).astype(float),
            float(self.band_rad), self.tau_max_nm)
        return self.z_nm
