"""Hybrid autopilot control law (paper Sec. 4-5, Eq. 16-19 and 24).

Angular DOFs are closed-loop:

    tau_4:6 = k_p J2_inv(eta2) wrap(eta2d - eta2)
            + (k_d + delta_k_d) J2_inv(eta2) (eta2d_dot - J2(eta2) nu2)
            - m_hydro(eta2d)

Since J2_inv J2 = I, the rate term is computed as J2_inv(eta2) eta2d_dot - nu2: the
same value wherever J2 exists, without building J2. Near pitch +-90 deg (gimbal lock)
roll and yaw, and so the errors of Eq. 18, are undefined: the law raises there.

where m_hydro is the restoring moment of weight and buoyancy
(:mod:`brov2_hybrid.physics.hydrostatics`): the feed-forward cancels it at the desired attitude
(the paper's r_B x J1^-1(eta2d) F_B, Eq. 18 and 20, with F_B the force that opposes
buoyancy). The proportional term acts on the angle error and the derivative term on
the rate error (Eq. A5). Every angle error is wrapped to (-pi, pi], so a yaw error
from 350 deg to 10 deg is +20 deg.

Optional additions, all off by default (off = the paper's law, bit for bit):

* Integral action (:class:`~brov2_hybrid.control.integral_action.IntegralAction`): tau_4:6 += z with
  dz/dt = k_i J2_inv(eta2) wrap(eta2m - eta2), k_i = ratio * omega_d * k_p, where eta2m is the
  Eq. 22 reference model (the nominal closed loop driven by eta2d), integrating only while
  |eta2d - eta2m| <= integral band. On the nominal plant
  eta2 follows eta2m and z stays 0, so the step response is the PD's; a steady disturbance
  (drag moments of the open-loop DOFs, buoyancy mismatch) is integrated away. |z| <= tau_max,
  no integration while the command is saturated in the direction it would push.
* Drag feed-forward: tau_4:6 += D(J2_inv(eta2) eta2d_dot), the model's drag at the desired rate.
* Reference feed-forward: tau_4:6 += (I + M_A) w' + w x (I + M_A) w + D(w), the vehicle model's
  inverse dynamics along the trajectory of :class:`~brov2_hybrid.control.rate_estimate.ReferenceFilter`
  (w its body rates; :func:`~brov2_hybrid.control.law_kernels.reference_torque`), with the buoyancy
  feed-forward's restoring moment (on even if ``feedforward_enabled`` is off); it takes the drag
  feed-forward's place.
* Depth hold (:class:`~brov2_hybrid.control.depth_hold.DepthHold`): tau_3 closed on the depth
  reading (:meth:`HybridController.measure_depth`), the heave stick a depth-rate command;
  open loop again, said in ``depth_hold.status``, while no fresh depth arrives.

The desired rates eta2d_dot come from :class:`~brov2_hybrid.control.rate_estimate.DesiredRateEstimator`
unless the caller gives them.

Linear DOFs are open loop: tau_1:3 = linear_scale * u_1:3 * tau_max_1:3.
The command sent to the vehicle is u = clip(tau / tau_max, -1, 1).
Frames: body FRD, inertial NED; eta2 = (roll, pitch, yaw) [rad]; nu2 = (p, q, r) [rad/s].
"""
import math
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.errors import Brov2Error, GimbalLock
from brov2_hybrid.validate import as_finite, as_vector
from brov2_hybrid.control.gains import pd_gains, trim_linear_drag
from brov2_hybrid.control import law_kernels
from brov2_hybrid.control.integral_action import IntegralAction
from brov2_hybrid.control.delay_compensation import AttitudePredictor
from brov2_hybrid.control.depth_hold import DepthHold
from brov2_hybrid.physics.kinematics import GIMBAL_LOCK_COS, j2_inv_matrix
from brov2_hybrid.control.rate_estimate import DesiredRateEstimator, ReferenceFilter
from brov2_hybrid.params import CONTROLLER_RULES


def attitude_torque(eta2d, eta2d_dot, eta2, nu2, kp, kd_total, feedforward_moment):
    """Eq. 18/24: body torque (K, M, N) [N m] from the attitude and rate errors.

    Parameters
    ----------
    eta2d, eta2 : array_like (3,)
        Desired and actual attitude (roll, pitch, yaw) [rad], NED/FRD.
    eta2d_dot : array_like (3,)
        Estimated desired Euler-angle rates [rad/s].
    nu2 : array_like (3,)
        Body angular rates (p, q, r) [rad/s], FRD.
    kp, kd_total : array_like (3,)
        Proportional and total derivative gains per axis.
    feedforward_moment : array_like (3,)
        Torque added to cancel the hydrostatic moment at eta2d [N m].
    """
    eta2 = as_vector(eta2, 3, "eta2")
    check_gimbal_lock(eta2[1])
    ff = as_vector(feedforward_moment, 3, "feedforward_moment")
    out = np.empty(3)
    law_kernels.kernels()["pd_torque"](
        j2_inv_matrix(eta2[0], eta2[1]), as_vector(eta2d, 3, "eta2d"), as_vector(eta2d_dot, 3, "eta2d_dot"), eta2,
        as_vector(nu2, 3, "nu2"), as_vector(kp, 3, "kp"), as_vector(kd_total, 3, "kd_total"), ff[0], ff[1], ff[2], out)
    return out


def check_gimbal_lock(theta):
    """GimbalLock (a Brov2Error) at pitch ``theta`` [rad] near +-pi/2, where roll and yaw errors are undefined."""
    if abs(math.cos(as_finite(theta, "theta"))) < GIMBAL_LOCK_COS:
        raise GimbalLock("eta2: pitch %.4f rad is at gimbal lock (+-pi/2); roll and yaw errors are undefined" % theta)


def normalize(tau, tau_max):
    """u = clip(tau / tau_max, -1, 1) and the per-DOF saturation flags.

    Returns
    -------
    u : ndarray (6,)
    saturated : ndarray of bool (6,)
        True where |tau| exceeded tau_max and was clipped.
    """
    return _normalize(as_vector(tau, 6, "tau"), as_vector(tau_max, 6, "tau_max"))


def _normalize(tau, tau_max):
    # The kernel run as Python: a few microseconds, and thruster_allocation loads no numba for
    # it (a respawned node overrides at once); the in-process loop's run calls it compiled.
    u, saturated = np.empty(6), np.empty(6)
    law_kernels.normalized_command(tau, tau_max, u, saturated)
    return u, saturated != 0.0


@dataclass
class ControlOutput:
    """One control tick's result: tau_body_frd (6,) [N, N m] as the law asks for it, and
    saturated (6,): |tau| > tau_max, so that the output stage's u = clip(tau / tau_max)
    (:func:`normalize`, computed once, by thruster_allocation) will be clipped there."""

    tau_body_frd: np.ndarray
    saturated: np.ndarray


class HybridController(object):
    """The hybrid autopilot: closed-loop roll/pitch/yaw, open-loop surge/sway/heave.

    Parameters
    ----------
    body : brov2_hybrid.vehicle.vehicle_file.BodyParams
    settings : brov2_hybrid.params.ControllerParams
        As :func:`~brov2_hybrid.params.load_controller_params` checked them (not checked again).
    tau_max : array_like (6,)
        Normalisation of the command (Sec. 2.2.2) [N, N m].
    passive_dofs : sequence of int
        DOFs (0..5) the vehicle cannot actuate (``Vehicle.passive_dofs``): a passive
        attitude DOF is never closed loop (nor integrated), whatever the settings say.
    """

    def __init__(self, body, settings, tau_max, passive_dofs=()):
        self.body = body
        self._actuated_attitude = np.array([3 + k not in passive_dofs for k in range(3)])
        self.tau_max = as_vector(tau_max, 6, "tau_max")
        self.total_inertia = body.total_mass[3:]
        self.b_check = trim_linear_drag(body.linear_drag[3:], body.quadratic_drag[3:],
                                        settings.trim_rate_max_rad_s, settings.trim_samples)
        self.gains = pd_gains(settings.omega_d_rad_s, self.total_inertia, self.b_check, settings.kappa)
        #: The model's angular drag (2, 3): linear [N m s/rad] and quadratic [N m s^2/rad^2] per
        #: roll, pitch, yaw: what the drag feed-forward and the integral's reference model use.
        self.drag_model = np.ascontiguousarray(np.vstack([body.linear_drag[3:], body.quadratic_drag[3:]]),
                                               dtype=float)
        self.closed_loop_enabled = np.array(settings.closed_loop_enabled, dtype=bool)
        self.feedforward_enabled = bool(settings.feedforward_enabled)
        self.linear_scale = float(settings.linear_scale)
        self.rate_estimator = DesiredRateEstimator(settings.rate_window)
        self.integral_enabled = bool(settings.integral_enabled)
        self.integral_ratio = float(settings.integral_ratio)
        self.drag_feedforward_enabled = bool(settings.drag_feedforward_enabled)
        self.reference_feedforward_enabled = bool(settings.reference_feedforward_enabled)
        self.reference_filter = ReferenceFilter(settings.reference_filter_omega_rad_s,
                                                settings.reference_filter_max_gap_s)
        self.integral = IntegralAction(self.tau_max[3:])
        self.integral.band_rad = float(settings.integral_band_rad)
        # W r_G - B r_B, the lever of the hydrostatic moment (see hydrostatics); NaN: no feed-forward.
        self._feedforward_lever = body.weight_n * body.r_cg_m - body.buoyancy_n * body.r_cb_m
        self._no_lever = np.full(3, math.nan)
        self._kernels = law_kernels.kernels()
        #: The optional loop-delay compensation (off unless ``delay_compensation_enabled``).
        self.predictor = AttitudePredictor(self.total_inertia, self.drag_model, self._feedforward_lever,
                                           self.tau_max[3:], settings)
        #: The optional depth hold (off unless ``depth_hold_enabled``): tau_3 from the depth reading.
        self.depth_hold = DepthHold(body, settings, self.gains.omega_d_rad_s, self.tau_max[2])

    def configure(self, omega_d_rad_s=None, kappa=None, closed_loop_enabled=None,
                  feedforward_enabled=None, linear_scale=None, rate_window=None,
                  integral_enabled=None, integral_ratio=None, drag_feedforward_enabled=None,
                  integral_band_rad=None, depth_hold_enabled=None, reference_feedforward_enabled=None,
                  reference_filter_omega_rad_s=None, delay_compensation_enabled=None,
                  delay_compensation_command_delay_s=None, heave_omega_rad_s=None):
        """Change settings (None keeps a value); validated before anything changes.

        Each value is checked with its rule in :data:`brov2_hybrid.params.CONTROLLER_RULES`
        (the rules controller.yaml is read with); Brov2Error naming the keyword otherwise.

        Returns
        -------
        changes : list of str
            One human-readable line per setting that changed, for the log.
        """
        given = {"omega_d_rad_s": omega_d_rad_s, "kappa": kappa, "closed_loop_enabled": closed_loop_enabled,
                 "feedforward_enabled": feedforward_enabled, "linear_scale": linear_scale,
                 "rate_window": rate_window, "integral_enabled": integral_enabled,
                 "integral_ratio": integral_ratio, "drag_feedforward_enabled": drag_feedforward_enabled,
                 "integral_band_rad": integral_band_rad, "depth_hold_enabled": depth_hold_enabled,
                 "reference_feedforward_enabled": reference_feedforward_enabled,
                 "reference_filter_omega_rad_s": reference_filter_omega_rad_s,
                 "delay_compensation_enabled": delay_compensation_enabled,
                 "delay_compensation_command_delay_s": delay_compensation_command_delay_s,
                 "heave_omega_rad_s": heave_omega_rad_s}
        new = {key: CONTROLLER_RULES[key](value, key) for key, value in given.items() if value is not None}
        omega = new.get("omega_d_rad_s", self.gains.omega_d_rad_s)
        kap = new.get("kappa", self.gains.kappa)
        new_gains = pd_gains(omega, self.total_inertia, self.b_check, kap)
        # a passive DOF stays open loop
        enabled = new.get("closed_loop_enabled", self.closed_loop_enabled) & self._actuated_attitude
        scale = new.get("linear_scale", self.linear_scale)
        window = new.get("rate_window", self.rate_estimator.window)
        ff = new.get("feedforward_enabled", self.feedforward_enabled)
        integ = new.get("integral_enabled", self.integral_enabled)
        ratio = new.get("integral_ratio", self.integral_ratio)
        drag_ff = new.get("drag_feedforward_enabled", self.drag_feedforward_enabled)
        band = new.get("integral_band_rad", self.integral.band_rad)
        depth_hold = new.get("depth_hold_enabled", self.depth_hold.enabled)
        heave_omega = new.get("heave_omega_rad_s", self.depth_hold.own_omega_rad_s)
        ref_ff = new.get("reference_feedforward_enabled", self.reference_feedforward_enabled)
        ref_omega = new.get("reference_filter_omega_rad_s", self.reference_filter.omega_rad_s)

        changes = self.predictor.configure(new)
        old = self.gains
        if new_gains.omega_d_rad_s != old.omega_d_rad_s or new_gains.kappa != old.kappa:
            changes.append("omega_d %.3f -> %.3f rad/s, kappa %.2f -> %.2f: kp %s, kd+dkd %s"
                           % (old.omega_d_rad_s, omega, old.kappa, kap,
                              np.round(new_gains.kp, 3).tolist(), np.round(new_gains.kd_total, 3).tolist()))
        if not np.array_equal(enabled, self.closed_loop_enabled):
            changes.append("closed loop (roll, pitch, yaw) %s -> %s" % (self.closed_loop_enabled.tolist(), enabled.tolist()))
        if ff != self.feedforward_enabled:
            changes.append("buoyancy feed-forward %s -> %s" % (self.feedforward_enabled, ff))
        if scale != self.linear_scale:
            changes.append("linear scale %.3f -> %.3f" % (self.linear_scale, scale))
        if window != self.rate_estimator.window:
            changes.append("rate window %d -> %d samples" % (self.rate_estimator.window, window))
        if integ != self.integral_enabled:
            changes.append("integral action %s -> %s" % (self.integral_enabled, integ))
            self.integral.reset()
        if ratio != self.integral_ratio:
            changes.append("integral ratio %.3f -> %.3f" % (self.integral_ratio, ratio))
        if band != self.integral.band_rad:
            changes.append("integral band %.4f -> %.4f rad" % (self.integral.band_rad, band))
            self.integral.band_rad = band
        if drag_ff != self.drag_feedforward_enabled:
            changes.append("drag feed-forward %s -> %s" % (self.drag_feedforward_enabled, drag_ff))
            self.integral.reset()     # the reference model changes
        if depth_hold != self.depth_hold.enabled:
            changes.append("depth hold %s -> %s" % (self.depth_hold.enabled, depth_hold))
        changes += self.depth_hold.set_own_omega(heave_omega)     # flown from the retune below
        if ref_ff != self.reference_feedforward_enabled:
            changes.append("reference feed-forward %s -> %s" % (self.reference_feedforward_enabled, ref_ff))
            self.integral.reset()     # the reference model changes
        if ref_omega != self.reference_filter.omega_rad_s:
            changes.append("reference filter %.3f -> %.3f rad/s" % (self.reference_filter.omega_rad_s, ref_omega))
        switched_off = np.nonzero(self.closed_loop_enabled & ~enabled)[0]
        if switched_off.size:
            self.integral.reset(switched_off)
        self.gains = new_gains
        capped_before = self.depth_hold.capped() if self.depth_hold.enabled else None
        self.depth_hold.retune(new_gains.omega_d_rad_s)
        self.depth_hold.set_enabled(depth_hold)
        capped = self.depth_hold.capped() if self.depth_hold.enabled else None
        if capped is not None and capped != capped_before:     # said when it starts to bind on a hold that is on
            changes.append(capped)
        self.closed_loop_enabled = enabled
        self.integral_enabled = integ
        self.integral_ratio = ratio
        self.drag_feedforward_enabled = drag_ff
        self.reference_feedforward_enabled = ref_ff
        self.reference_filter.set_omega(ref_omega)
        self.feedforward_enabled = ff
        self.linear_scale = scale
        self.rate_estimator.set_window(window)
        return changes

    def update_desired(self, t_s, eta2d):
        """Feed a new desired attitude sample to the rate estimator and the reference filter."""
        self.rate_estimator.update(t_s, eta2d)
        self.reference_filter.update(t_s, eta2d)

    def reset_desired(self):
        """Forget the desired samples (the input came back after a gap): rate estimate and reference filter."""
        self.rate_estimator.reset()
        self.reference_filter.reset()

    def measure_depth(self, t_s, depth_m):
        """A depth reading [m, positive down] taken at ``t_s`` [s] for the depth hold (NaN: sensor failed).

        :meth:`~brov2_hybrid.control.depth_hold.DepthHold.measure`: Brov2Error on a non-finite ``t_s``."""
        self.depth_hold.measure(t_s, depth_m)

    def reset_integral(self, axes=None):
        """Zero the integral torque on ``axes`` (0 roll, 1 pitch, 2 yaw; default all).

        For mode changes and pilot takeover; a no-op in effect while the integral is off.
        """
        self.integral.reset(axes)

    @property
    def ki(self):
        """Integral gains (3,) [N m / (rad s)]: integral_ratio * omega_d * k_p."""
        return self.integral_ratio * self.gains.omega_d_rad_s * self.gains.kp

    @property
    def integral_ratio(self):
        """k_i / (omega_d k_p), the integral action's ratio (integral_ratio)."""
        return self._integral_ratio

    @integral_ratio.setter
    def integral_ratio(self, value):
        """Set the ratio (a float >= 0; checked by configure) and the gains k_i it gives."""
        self._integral_ratio = float(value)
        self._ki = self.ki

    def compute(self, eta2d, u_linear, eta2, nu2, eta2d_dot=None, t_s=None, attitude_age_s=0.0):
        """One control tick.

        Parameters
        ----------
        eta2d : array_like (3,)
            Desired attitude [rad].
        u_linear : array_like (3,)
            Open-loop surge, sway, heave commands in [-1, 1].
        eta2, nu2 : array_like (3,)
            Measured attitude [rad] and body rates [rad/s].
        eta2d_dot : array_like (3,), optional
            Desired rates; default: the moving-average estimate.
        t_s : float, optional
            Time of this tick [s]; the integral action advances by the time since the
            previous tick (without it, the integral is held).
        attitude_age_s : float
            How old ``eta2``, ``nu2`` are at ``t_s`` [s] (the delay compensation predicts over it).

        Returns
        -------
        ControlOutput
        """
        eta2d = as_vector(eta2d, 3, "eta2d")
        u_lin = as_vector(u_linear, 3, "u_linear")
        if max(map(abs, u_lin.tolist())) > 1.0:
            raise Brov2Error("u_linear: expected values in [-1, 1], got %s" % u_lin.tolist())
        eta2 = as_vector(eta2, 3, "eta2")
        nu2 = as_vector(nu2, 3, "nu2")
        t = math.nan if t_s is None else as_finite(t_s, "t_s")
        tau = self.torque(eta2d, u_lin, eta2, nu2, None if eta2d_dot is None else as_vector(eta2d_dot, 3, "eta2d_dot"),
                          t, float(attitude_age_s))
        return ControlOutput(tau_body_frd=tau, saturated=np.abs(tau) > self.tau_max)

    def torque(self, eta2d, u_linear, eta2, nu2, eta2d_dot, t_s, attitude_age_s=0.0):
        """:meth:`compute`'s tau (6,) [N, N m] on checked float arrays (the in-process loop's
        tick): ``eta2d_dot`` None for the estimate, ``t_s`` NaN for no tick time; with the delay
        compensation on, the law acts on the attitude predicted over ``attitude_age_s`` and the loop's
        other delays (:mod:`~brov2_hybrid.control.delay_compensation`).

        Raises Brov2Error at gimbal lock; runs :func:`~brov2_hybrid.control.law_kernels.control_torque`.
        """
        check_gimbal_lock(eta2[1])
        if eta2d_dot is None:
            eta2d_dot = self.rate_estimator.rate(None if math.isnan(t_s) else t_s)
        if self.predictor.enabled:
            eta2d, eta2, nu2 = self.predictor.compensate(eta2d, eta2d_dot, eta2, nu2, t_s, attitude_age_s)
            check_gimbal_lock(eta2[1])
        tau = np.empty(6)
        self._kernels["control_torque"](eta2d, u_linear, eta2, nu2, eta2d_dot, t_s, *(self.kernel_settings() + (tau,)))
        if self.depth_hold.enabled:
            tau[2] = self.depth_hold.heave_force(t_s, u_linear[2], eta2, tau[0], tau[1], tau[2])
        if self.predictor.enabled:
            self.predictor.record(t_s, tau[3:])
        return tau

    def kernel_settings(self):
        """The settings and state arrays :func:`~brov2_hybrid.control.law_kernels.control_torque` takes after
        ``t_s`` (tau_max .. the reference filter's omega): the law as configured now, its integral state updated in place."""
        g, integral, ref = self.gains, self.integral, self.reference_filter
        restoring = self.feedforward_enabled or self.reference_feedforward_enabled
        return (self.tau_max, self.linear_scale, g.kp, self._kd_total,
                self._feedforward_lever if restoring else self._no_lever,
                self.drag_feedforward_enabled, self.integral_enabled, self.drag_model, self._ki, self.total_inertia,
                self._enabled_mask, integral.state, integral.last_t, float(integral.band_rad),
                self.reference_feedforward_enabled, ref.state, ref.meta, ref.omega_rad_s)

    @property
    def gains(self):
        """The :class:`~brov2_hybrid.control.gains.PDGains` in force."""
        return self._gains

    @gains.setter
    def gains(self, value):
        """Put PD gains (:class:`~brov2_hybrid.control.gains.PDGains`) in force."""
        self._gains = value
        self._kd_total = value.kd_total
        if hasattr(self, "_integral_ratio"):
            self._ki = self.ki

    @property
    def closed_loop_enabled(self):
        """Per-axis closed-loop enable (roll, pitch, yaw), bool array (3,)."""
        return self._enabled

    @closed_loop_enabled.setter
    def closed_loop_enabled(self, value):
        """Set the per-axis enable (3 booleans); a passive attitude DOF stays open loop."""
        self._enabled = np.array(value, dtype=bool) & self._actuated_attitude
        self._enabled_mask = self._enabled.astype(float)
