"""Optional integral action of the control law (off by default: the paper's law, bit for bit).

tau_4:6 += z with dz/dt = k_i J2_inv(eta2) wrap(eta2m - eta2), k_i = ratio * omega_d * k_p,
where eta2m is the Eq. 22 reference model driven by eta2d (see :class:`IntegralAction`).
Called by :class:`brov2_hybrid.control.law.HybridController` on its ticks. Angles rad,
torques N m, times s.
"""
import math

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_vector
from brov2_hybrid.physics.kinematics import J2_from_roll_pitch, wrap_angle, wrap_angle_float


def _sign(x):
    """np.sign of a float: -1.0, 0.0 (also for -0.0) or 1.0."""
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


class IntegralAction(object):
    """Integral torque z (3,) [N m] on the deviation from the Eq. 22 reference model.

    Per axis the reference model is the nominal closed loop of Eq. 22 (with the drag
    feed-forward when it is on), integrated on the controller's ticks:

        (I + M_A) eta2m'' = k_p wrap(eta2d - eta2m) + k_d,tot (eta2d_dot - eta2m') + B_ff eta2d_dot - B-check eta2m'

    (B_ff = B-check with the drag feed-forward, else 0), and

        dz/dt = k_i J2_inv(eta2) wrap(eta2m - eta2),   k_i = ratio * omega_d * k_p,

    the error taken in the frame of the P term. An axis integrates only while its reference
    is within ``band_rad`` of eta2d (a commanded move is the PD's job: the real plant lags
    the model there, through quadratic drag, saturation and latency, and integrating that
    lag would overshoot). Anti-windup: |z| <= tau_max per axis, and
    an axis does not integrate while its command is saturated in the direction the error
    would push. A reset axis restarts its model at the measured attitude and rate, z = 0.
    The model uses semi-implicit Euler sub-steps no longer than 0.2 / (fastest model pole
    bound (B-check + k_d,tot) / (I + M_A)), so it stays accurate at any tick rate.
    """

    def __init__(self, tau_max_nm):
        self.tau_max_nm = as_vector(tau_max_nm, 3, "tau_max_nm")
        self.band_rad = math.inf
        self.z_nm = np.zeros(3)
        self._eta2m = np.zeros(3)
        self._eta2m_dot = np.zeros(3)
        self._stale = np.ones(3, dtype=bool)     # axes whose model restarts at the next tick
        self._last_t_s = None

    def reset(self, axes=None):
        """Zero z and restart the reference model on ``axes`` (indices 0..2; default all).

        Call on a mode change, a pilot takeover or when an axis leaves closed loop.
        """
        idx = [0, 1, 2] if axes is None else [int(a) for a in np.atleast_1d(axes)]
        for a in idx:
            if a not in (0, 1, 2):
                raise Brov2Error("axes: expected indices 0 (roll), 1 (pitch), 2 (yaw), got %r" % (axes,))
        self.z_nm[idx] = 0.0
        self._stale[idx] = True
        if axes is None:
            self._last_t_s = None

    def reference(self):
        """The reference model's attitude eta2m (3,) [rad] (meaningful after a tick)."""
        return self._eta2m.copy()

    def step(self, t_s, eta2d, eta2d_dot, eta2, nu2, J2i, tau_att, gains, inertia, b_check, b_ff, ki, enabled):
        """Advance to ``t_s`` and return z (3,) [N m]; ``tau_att`` is the torque without z."""
        if np.any(self._stale):
            st = self._stale
            self._eta2m[st] = eta2[st]
            self._eta2m_dot[st] = (J2_from_roll_pitch(float(eta2[0]), float(eta2[1])) @ nu2)[st]
            self._stale[:] = False
        dt = 0.0 if (t_s is None or self._last_t_s is None) else max(float(t_s) - self._last_t_s, 0.0)
        if t_s is not None:
            self._last_t_s = float(t_s)
        if dt > 0.0:
            kp, kd = gains.kp, gains.kd_total
            fastest = float(np.max((b_check + kd) / inertia))
            n = max(1, int(math.ceil(dt * fastest / 0.2)))
            h = dt / n
            # The reference model, axis by axis on Python floats: per axis the same IEEE
            # operations in the same order as on the 3-vectors, without numpy's per-call
            # cost (n sub-steps on every tick):
            #   acc = (kp wrap(eta2d - m) + kd (eta2d_dot - md) + b_ff eta2d_dot - b_check md) / inertia
            #   md += h acc;  m = wrap(m + h md)
            m_out, md_out = [], []
            for m, md, d, d_dot, kp_a, kd_a, bff_a, bc_a, in_a in zip(
                    self._eta2m.tolist(), self._eta2m_dot.tolist(), eta2d.tolist(), eta2d_dot.tolist(),
                    kp.tolist(), kd.tolist(), np.broadcast_to(b_ff, 3).tolist(), b_check.tolist(), inertia.tolist()):
                for _ in range(n):
                    acc = (kp_a * wrap_angle_float(d - m) + kd_a * (d_dot - md) + bff_a * d_dot - bc_a * md) / in_a
                    md = md + h * acc
                    m = wrap_angle_float(m + h * md)
                m_out.append(m)
                md_out.append(md)
            self._eta2m, self._eta2m_dot = np.array(m_out), np.array(md_out)
            e = J2i @ wrap_angle(self._eta2m - eta2)
            # Per axis, on Python floats (elementwise, so the same numbers as on the 3-vectors):
            # an axis grows z by ki e dt unless its command is saturated in the direction
            # the error pushes, or (a commanded move is the PD's job, Eq. 22) its reference
            # has not reached eta2d yet; |z| <= tau_max.
            z = []
            for e_a, z_a, t_a, lim, d, m, k_a, on in zip(
                    e.tolist(), self.z_nm.tolist(), tau_att.tolist(), self.tau_max_nm.tolist(), eta2d.tolist(),
                    m_out, ki.tolist(), np.broadcast_to(enabled, 3).tolist()):
                total = t_a + z_a
                pushing_out = abs(total) >= lim and _sign(e_a) == _sign(total)
                settled = abs(wrap_angle_float(d - m)) <= self.band_rad
                grow = k_a * e_a * dt if (on and settled and not pushing_out) else 0.0
                z.append(min(max(z_a + grow, -lim), lim))
            self.z_nm = np.array(z)
        self.z_nm[~enabled] = 0.0
        return self.z_nm
