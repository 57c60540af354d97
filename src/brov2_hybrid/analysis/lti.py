"""LTI predictions of the closed loop, Eq. 22 (Sec. 5.2, App. C Eq. A19-A21).

H_L(s) = (k_p + s k_d) / (s^2 (I + M_A) + s (B-check + k_d) + k_p), built by
:func:`brov2_hybrid.control.gains.lti_closed_loop` from the gains the controller uses; this
module only evaluates it with scipy.signal. Axis 2 is yaw; angles in rad, time in s,
frequency in rad/s.
"""
import numpy as np
from scipy import signal as sps

from brov2_hybrid.analysis import metrics
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.control.gains import lti_closed_loop
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from brov2_hybrid.params import load_controller_params

YAW = 2


def controller_for(omega_d_rad_s, vehicle=None, controller_params=None):
    """A :class:`HybridController` at ``omega_d_rad_s`` built from the parameter files."""
    vehicle = vehicle or load_vehicle()
    c = HybridController(vehicle.body, controller_params or load_controller_params(), vehicle.tau_max)
    c.configure(omega_d_rad_s=omega_d_rad_s)
    return c


def transfer_function(controller, axis=YAW, with_delta_kd=True):
    """Eq. 22 for ``controller``'s gains as a scipy.signal.TransferFunction."""
    num, den = lti_closed_loop(controller.gains, controller.total_inertia, controller.b_check,
                               axis=axis, with_delta_kd=with_delta_kd)
    return sps.TransferFunction(num, den)


def step_response(controller, t_s, step_rad, t_step_s, axis=YAW, with_delta_kd=True):
    """psi(t) [rad] at times ``t_s`` for psi_d = step_rad * H(t - t_step_s), from rest at 0."""
    t = np.asarray(t_s, dtype=float)
    y = np.zeros_like(t)
    after = t >= t_step_s
    if np.any(after):
        tau = t[after] - t_step_s
        _, resp = sps.step(transfer_function(controller, axis, with_delta_kd), T=tau)
        y[after] = step_rad * resp
    return y


def step_metrics(controller, step_rad, t_step_s, duration_s, band, axis=YAW, with_delta_kd=True, dt_s=1e-3):
    """Settling time [s], overshoot and undershoot [%] of the LTI step response."""
    t = np.arange(0.0, duration_s + 0.5 * dt_s, dt_s)
    y = step_response(controller, t, step_rad, t_step_s, axis, with_delta_kd)
    return {
        "settling_time_s": metrics.settling_time(t, y, step_rad, t_step_s, band=band),
        "overshoot_pct": metrics.overshoot(t, y, step_rad, t_step_s),
        "undershoot_pct": metrics.undershoot(t, y, step_rad, t_step_s),
    }


def frequency_response(controller, omega_rad_s, axis=YAW, with_delta_kd=True):
    """|H_L(j w)| and unwrapped angle H_L(j w) [rad] at the frequencies ``omega_rad_s``."""
    w = np.asarray(omega_rad_s, dtype=float)
    _, h = sps.freqresp(transfer_function(controller, axis, with_delta_kd), w=w)
    return np.abs(h), np.unwrap(np.angle(h))


def poles(controller, axis=YAW, with_delta_kd=True):
    """Closed-loop poles of Eq. 22 (complex array)."""
    _, den = lti_closed_loop(controller.gains, controller.total_inertia, controller.b_check,
                             axis=axis, with_delta_kd=with_delta_kd)
    return np.roots(den)


def damping_ratio(controller, axis=YAW, with_delta_kd=True):
    """zeta = (B-check + k_d) / (2 sqrt(k_p (I + M_A))) of Eq. 22's denominator."""
    _, den = lti_closed_loop(controller.gains, controller.total_inertia, controller.b_check,
                             axis=axis, with_delta_kd=with_delta_kd)
    return float(den[1] / (2.0 * np.sqrt(den[0] * den[2])))
