"""PD gains from the desired closed-loop natural frequency (paper App. B, Eq. 23-24).

Per angular DOF, with total inertia I + M_A and characteristic linear drag B-check:

    k_p = omega_d^2 (I + M_A)             (Eq. A17)
    k_d = 2 omega_d (I + M_A) - B-check   (Eq. A18, critical damping of Eq. A13)
    delta_k_d = kappa / omega_d^2         (Eq. 23; kappa = 20 in the paper)

B-check comes from :func:`trim_linear_drag`: the slope of the least-squares line
through the origin fitted to the drag B_L v + B_NL v|v| over 0..v_max (Sec. 5.1).
"""
import math
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_finite, as_number, as_positive, as_vector


@dataclass(frozen=True)
class PDGains:
    """Gains in force for (roll, pitch, yaw), or for heave alone (depth hold: arrays of one).

    Attributes
    ----------
    omega_d_rad_s, kappa : float
    kp : ndarray (n,)        [N m / rad] (heave: [N / m])
    kd : ndarray (n,)        [N m s / rad] (heave: [N s / m]), Eq. A18 alone (may be negative)
    delta_kd : ndarray (n,)  [N m s / rad] (heave: [N s / m]), kappa / omega_d^2
    """

    omega_d_rad_s: float
    kappa: float
    kp: np.ndarray
    kd: np.ndarray
    delta_kd: np.ndarray

    @property
    def kd_total(self):
        """k_d + delta_k_d, the derivative gain the control law applies (Eq. 24)."""
        return self.kd + self.delta_kd


def pd_gains(omega_d_rad_s, total_inertia, b_check, kappa, n_dofs=3):
    """Return :class:`PDGains` for the angular DOFs (or ``n_dofs`` others by the same rule).

    Parameters
    ----------
    omega_d_rad_s : float
        Desired closed-loop natural frequency, > 0 [rad/s].
    total_inertia : array_like (n_dofs,)
        I + M_A for roll, pitch, yaw [kg m^2] (heave: m + Z_wdot [kg]).
    b_check : array_like (n_dofs,)
        Characteristic linear drag [N m s / rad] (heave: [N s / m]).
    kappa : float
        Extra-damping constant, >= 0 [N m s rad] (heave: [N s / m rad^2 / s^2]).
    n_dofs : int
        Number of DOFs designed at once: 3 (roll, pitch, yaw) or 1 (heave, depth hold).
    """
    w = as_positive(omega_d_rad_s, "omega_d_rad_s")
    inertia = as_vector(total_inertia, n_dofs, "total_inertia")
    if np.any(inertia <= 0):
        raise Brov2Error("total_inertia: expected every entry > 0, got %s" % inertia.tolist())
    b = as_vector(b_check, n_dofs, "b_check")
    k = as_number(kappa, "kappa", minimum=0.0)
    return PDGains(
        omega_d_rad_s=w,
        kappa=k,
        kp=w * w * inertia,
        kd=2.0 * w * inertia - b,
        delta_kd=np.full(n_dofs, k / (w * w)),
    )


def trim_linear_drag(linear_drag, quadratic_drag, v_max, n_samples=200):
    """Slope of the least-squares line through the origin of D(v) = B_L v + B_NL v|v|.

    Fitted on ``n_samples`` evenly spaced velocities over [0, v_max]:
    B-check = sum(v D(v)) / sum(v^2). Works element-wise on arrays of DOFs.
    For yaw (B_L = 0, B_NL = 2.42) over 0..3.28 rad/s (200 samples) this is 5.968 ~ 5.97 N m s/rad, the
    paper's value (Sec. 5.1; the paper does not state its velocity range).
    """
    b_l = np.atleast_1d(np.asarray(linear_drag, dtype=float))
    b_nl = np.atleast_1d(np.asarray(quadratic_drag, dtype=float))
    v_top = np.atleast_1d(np.asarray(v_max, dtype=float))
    for name, arr in (("linear_drag", b_l), ("quadratic_drag", b_nl), ("v_max", v_top)):
        if not np.all(np.isfinite(arr)):
            raise Brov2Error("%s: expected finite numbers, got %s" % (name, arr.tolist()))
    if len({b_l.size, b_nl.size, v_top.size} - {1}) > 1:
        raise Brov2Error("linear_drag, quadratic_drag, v_max: expected one value each or arrays of one length "
                         "(one per DOF), got sizes %d, %d, %d" % (b_l.size, b_nl.size, v_top.size))
    if np.any(v_top <= 0):
        raise Brov2Error("v_max: expected values > 0, got %s" % v_top.tolist())
    if int(n_samples) < 2:
        raise Brov2Error("n_samples: expected >= 2, got %r" % n_samples)
    s = np.linspace(0.0, 1.0, int(n_samples))
    # With v = v_max s: sum(v D)/sum(v^2) = B_L + B_NL v_max sum(s^3)/sum(s^2).
    ratio = np.sum(s ** 3) / np.sum(s ** 2)
    slope = b_l + b_nl * v_top * ratio
    return float(slope[0]) if slope.size == 1 else slope


def lti_closed_loop(gains, total_inertia, b_check, axis=2, with_delta_kd=True):
    """Numerator and denominator of Eq. 22 for one axis (default yaw), highest power first.

    Psi/Psi_d = (k_p + s k_d) / (s^2 (I + M_A) + s (B-check + k_d) + k_p). With
    ``with_delta_kd`` the derivative gain is k_d + delta_k_d as the control law applies
    it (Eq. 24); without, the plain k_d of the paper's LTI curves (Fig. 13 dashed).
    """
    if axis not in (0, 1, 2):
        raise Brov2Error("axis: expected 0 (roll), 1 (pitch) or 2 (yaw), got %r" % (axis,))
    kp = float(gains.kp[axis])
    kd = float(gains.kd_total[axis] if with_delta_kd else gains.kd[axis])
    inertia = float(as_vector(total_inertia, 3, "total_inertia")[axis])
    b = float(as_vector(b_check, 3, "b_check")[axis])
    return np.array([kd, kp]), np.array([inertia, b + kd, kp])


def loop_margins(kp, kd_total, inertia, damping, rate_filter_s=0.0):
    """Crossover omega_c [rad/s], phase margin [deg] and delay margin [s] (phase margin over omega_c; negative
    when the loop has none) of one PD-controlled axis,
    L(s) = (kp + kd_total s / (rate_filter_s s + 1)) / (inertia s^2 + damping s), no delay: the attitude
    law's axis (omega-limit's table) and the depth hold's heave loop (its rate through a filter)."""
    from scipy.optimize import brentq
    kp, kd_total, damping = (as_finite(v, n) for v, n in ((kp, "kp"), (kd_total, "kd_total"), (damping, "damping")))
    inertia = as_positive(inertia, "inertia")
    rate_filter_s = as_number(rate_filter_s, "rate_filter_s", minimum=0.0)

    def loop(w):
        s = 1j * w
        return (kp + kd_total * s / (rate_filter_s * s + 1.0)) / (inertia * s * s + damping * s)
    w_c = brentq(lambda w: math.log(abs(loop(w))), 1e-4, 1e4, xtol=1e-12)
    L = loop(w_c)
    pm_rad = math.pi + math.atan2(L.imag, L.real)
    pm_rad = (pm_rad + math.pi) % (2.0 * math.pi) - math.pi
    return {"crossover_rad_s": w_c, "phase_margin_deg": math.degrees(pm_rad), "delay_margin_s": pm_rad / w_c}
