"""Optional depth hold: heave closed on the depth sensor, designed like the attitude law (App. B).

Vertical motion (NED, depth z positive down), with total heave mass m + Z_wdot and the
vehicle model's heave drag D(w) = B_L w + B_NL w|w|:

    (m + Z_wdot) z'' = F_down - D(z') + (W - B)

The gains follow from one natural frequency omega_h = heave_omega_ratio * omega_d (or
heave_omega_rad_s when > 0), by :func:`~brov2_hybrid.control.gains.pd_gains` on the one heave DOF:

    k_p = (m + Z_wdot) omega_h^2,   k_d = 2 omega_h (m + Z_wdot) - B_check + heave_kappa / omega_h^2

with B_check the heave drag trimmed over 0..heave_trim_speed_max (:func:`~brov2_hybrid.control.gains.trim_linear_drag`).
omega_h is capped at the highest frequency whose loop keeps a delay margin of
``depth_hold_min_delay_margin_s`` (:func:`heave_omega_limit`): the depth rate comes through a filter
and, on a vehicle, a 10 Hz depth stream behind the tether, so a hold that followed a high omega_d
(0.75 * 14 rad/s) would oscillate in depth and spend the thrusters on it.
The depth setpoint z_d integrates the pilot's heave stick: dz_d/dt = stick * max_depth_rate
(stick in [-1, 1], positive down, as the FRD heave command), held within
[min_depth, max_depth] (surface and bottom limits; at a limit the commanded rate is 0).

    F_down = k_p (z_d - z) + k_d (dz_d/dt - z'_est) + (B - W) + D(dz_d/dt)

(the buoyancy feed-forward B - W cancels the net weight at rest; the drag feed-forward
lets the setpoint's ramps be followed without lag). z'_est is the first-order filtered
difference of the depth readings (time constant ``depth_rate_filter_s``). The body heave
force makes the vertical force F_down with the open-loop surge and sway forces X, Y as they
are: with d = R^T [0, 0, 1] the down axis in body FRD, Z = (F_down - d_x X - d_y Y) / d_z
(|d_z| at least :data:`MIN_DOWN_COMPONENT`), and |Z| <= depth_hold_max_force_fraction * tau_max,3.

Without a fresh depth reading (none yet, NaN, or older than ``depth_timeout_s``) heave is
open loop (the pilot's stick times tau_max, as without depth hold) and :attr:`DepthHold.status`
says so; the hold re-engages at the depth of the next fresh reading.
Units: m, s, N; frames NED (depth) and body FRD (heave force).
"""
import math

import numpy as np

from brov2_hybrid.control.gains import loop_margins, pd_gains, trim_linear_drag
from brov2_hybrid.control.law_kernels import model_drag
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.kinematics import down_axis
from brov2_hybrid.validate import as_finite, as_number, as_positive, as_vector

#: :attr:`DepthHold.status` values: switched off; holding the depth; on, but open loop (no depth).
OFF, HOLDING, NO_DEPTH = "OFF", "HOLDING", "NO_DEPTH_OPEN_LOOP"

#: Smallest |d_z| (cosine of the tilt) the body heave force is divided by, with d_z's sign (upside
#: down the body heave axis points up): the tilt compensation at most doubles the force (60 deg
#: of tilt), so a large tilt cannot turn a depth error into a saturated heave command.
MIN_DOWN_COMPONENT = 0.5


def heave_delay_margin_s(omega_rad_s, total_mass_kg, linear_drag, b_check, kappa, rate_filter_s):
    """Delay margin [s] of the hold's loop at heave frequency ``omega_rad_s`` [rad/s]
    (:func:`~brov2_hybrid.control.gains.loop_margins` of L(s) = (k_p + k_d s / (T s + 1)) / ((m + Z_wdot) s^2
    + B_L s)): the hold's gains
    (:func:`~brov2_hybrid.control.gains.pd_gains`), T = ``rate_filter_s`` (the depth rate's filter), the
    heave drag linearized at rest (B_L; the quadratic drag only adds damping). 0 when the loop has no
    phase margin left."""
    omega_rad_s = as_positive(omega_rad_s, "omega_rad_s")
    total_mass_kg = as_positive(total_mass_kg, "total_mass_kg")
    linear_drag = as_number(linear_drag, "linear_drag", minimum=0.0)
    b_check = as_finite(b_check, "b_check")
    kappa = as_number(kappa, "kappa", minimum=0.0)
    rate_filter_s = as_number(rate_filter_s, "rate_filter_s", minimum=0.0)
    g = pd_gains(omega_rad_s, [total_mass_kg], [b_check], kappa, n_dofs=1)
    margins = loop_margins(float(g.kp[0]), float(g.kd_total[0]), total_mass_kg, linear_drag, rate_filter_s)
    return max(margins["delay_margin_s"], 0.0)


def heave_omega_limit(total_mass_kg, linear_drag, b_check, kappa, rate_filter_s, min_delay_margin_s,
                      omega_max_rad_s=100.0, grid_points=80):
    """The highest heave frequency [rad/s] (up to ``omega_max_rad_s``) whose loop keeps a delay margin
    (:func:`heave_delay_margin_s`) of at least ``min_delay_margin_s`` [s]. The margin is not monotone
    (below B_check / 2 (m + Z_wdot) the damping gain is negative), so a log grid from 0.01 rad/s finds
    the highest grid point that keeps it, and bisection the edge above it. Brov2Error when none does."""
    min_delay_margin_s = as_number(min_delay_margin_s, "min_delay_margin_s", minimum=0.0)
    omega_max_rad_s = as_number(omega_max_rad_s, "omega_max_rad_s", minimum=0.01, strict_min=True)

    def keeps(w):
        return heave_delay_margin_s(w, total_mass_kg, linear_drag, b_check, kappa, rate_filter_s) >= min_delay_margin_s
    grid = np.geomspace(0.01, omega_max_rad_s, int(grid_points))
    kept = [k for k, w in enumerate(grid) if keeps(w)]
    if not kept:
        raise Brov2Error("depth_hold_min_delay_margin_s %g s: no heave omega up to %g rad/s keeps it"
                         % (min_delay_margin_s, omega_max_rad_s))
    if kept[-1] == grid.size - 1:
        return float(grid[-1])
    lo, hi = float(grid[kept[-1]]), float(grid[kept[-1] + 1])
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if keeps(mid):
            lo = mid
        else:
            hi = mid
    return lo


class DepthHold(object):
    """Closed-loop heave on the depth reading (see the module docstring for the law).

    Parameters
    ----------
    body : brov2_hybrid.vehicle.vehicle_file.BodyParams
        Total heave mass, heave drag, weight and buoyancy are read from it.
    settings : brov2_hybrid.params.ControllerParams
        The depth-hold keys of ``params/controller.yaml`` (checked when loaded).
    omega_d_rad_s : float
        The attitude law's omega_d [rad/s] (heave's frequency is a ratio of it by default).
    tau_max_heave_n : float
        tau_max,3 [N]; the hold's force stays within ``depth_hold_max_force_fraction`` of it.
    """

    def __init__(self, body, settings, omega_d_rad_s, tau_max_heave_n):
        self.total_mass_kg = float(body.total_mass[2])
        self.linear_drag = float(body.linear_drag[2])
        self.quadratic_drag = float(body.quadratic_drag[2])
        self.b_check = trim_linear_drag(self.linear_drag, self.quadratic_drag, settings.heave_trim_speed_max_m_s,
                                        settings.trim_samples)
        #: B - W [N]: the force (positive down) that cancels the net weight.
        self.buoyancy_feedforward_n = float(body.buoyancy_n - body.weight_n)
        self.enabled = bool(settings.depth_hold_enabled)
        self.omega_ratio = float(settings.heave_omega_ratio)
        self.own_omega_rad_s = float(settings.heave_omega_rad_s)
        self.kappa = float(settings.heave_kappa)
        self.max_depth_rate_m_s = float(settings.max_depth_rate_m_s)
        self.min_depth_m = float(settings.min_depth_m)
        self.max_depth_m = float(settings.max_depth_m)
        self.timeout_s = float(settings.depth_timeout_s)
        self.rate_filter_s = float(settings.depth_rate_filter_s)
        #: The highest heave frequency the hold flies [rad/s] (:func:`heave_omega_limit`).
        self.omega_limit_rad_s = heave_omega_limit(self.total_mass_kg, self.linear_drag, self.b_check, self.kappa,
                                                   self.rate_filter_s, float(settings.depth_hold_min_delay_margin_s))
        #: The largest heave force the hold asks for [N]: a share of tau_max,3, so that the vertical
        #: thrusters keep room for roll and pitch (stock ArduSub scales them down together).
        self.max_force_n = float(settings.depth_hold_max_force_fraction) * as_positive(tau_max_heave_n,
                                                                                     "tau_max_heave_n")
        self.retune(omega_d_rad_s)
        self.status = OFF
        self.message = ""
        self.setpoint_m = math.nan
        self.reset()

    def retune(self, omega_d_rad_s):
        """Recompute the heave gains for the attitude law's ``omega_d_rad_s`` [rad/s]."""
        omega_d = as_positive(omega_d_rad_s, "omega_d_rad_s")
        #: The heave frequency asked for [rad/s]: heave_omega_rad_s, else heave_omega_ratio * omega_d.
        self.omega_requested_rad_s = self.own_omega_rad_s if self.own_omega_rad_s > 0.0 else self.omega_ratio * omega_d
        #: The heave frequency flown [rad/s]: the one asked for, at most :attr:`omega_limit_rad_s`.
        self.omega_rad_s = min(self.omega_requested_rad_s, self.omega_limit_rad_s)
        g = pd_gains(self.omega_rad_s, [self.total_mass_kg], [self.b_check], self.kappa, n_dofs=1)
        #: The heave :class:`~brov2_hybrid.control.gains.PDGains` (arrays of one) [N/m, N s/m].
        self.gains = g
        self.kp = float(g.kp[0])
        self.kd_total = float(g.kd_total[0])

    def set_own_omega(self, heave_omega_rad_s):
        """Set heave's own frequency ``heave_omega_rad_s`` [rad/s] (0: heave_omega_ratio * omega_d), flown
        from the next :meth:`retune`; returns [the line saying the change] or [] when it is unchanged."""
        omega = as_number(heave_omega_rad_s, "heave_omega_rad_s", minimum=0.0)
        if omega == self.own_omega_rad_s:
            return []
        line = ("depth hold: own heave omega %.3f -> %.3f rad/s (0: heave_omega_ratio * omega_d)"
                % (self.own_omega_rad_s, omega))
        self.own_omega_rad_s = omega
        return [line]

    def capped(self):
        """None, or one line saying the heave frequency asked for is above the limit and what is flown."""
        if self.omega_requested_rad_s <= self.omega_rad_s:
            return None
        return ("depth hold: heave omega %.2f rad/s capped at %.2f rad/s (its loop keeps the delay margin "
                "depth_hold_min_delay_margin_s)" % (self.omega_requested_rad_s, self.omega_rad_s))

    def reset(self):
        """Forget the readings and the setpoint (the hold re-engages at the next fresh reading)."""
        self._reading = None          # (t_s, depth_m) of the newest reading
        self._rate_m_s = 0.0
        self._last_tick_s = math.nan
        self.setpoint_m = math.nan

    def set_enabled(self, enabled):
        """Switch the hold on or off; switching on engages at the next fresh depth reading."""
        enabled = bool(enabled)
        if enabled != self.enabled:
            self.setpoint_m = math.nan
            self._last_tick_s = math.nan
        self.enabled = enabled
        if not enabled:
            self.status, self.message = OFF, ""

    def measure(self, t_s, depth_m):
        """A depth reading ``depth_m`` [m, positive down] taken at ``t_s`` [s]; NaN: the sensor failed.

        A reading not after the previous one only replaces it (no rate from a zero interval).
        """
        t_s = as_finite(t_s, "t_s")
        if np.ndim(depth_m) != 0:
            raise Brov2Error("depth_m: expected one number [m] (NaN: no reading), got shape %s" % (np.shape(depth_m),))
        depth_m = float(depth_m)
        if not math.isfinite(depth_m):
            self._reading = (t_s, math.nan)
            return
        last = self._reading
        if last is not None and math.isfinite(last[1]) and t_s > last[0]:
            dt = t_s - last[0]
            a = dt / (self.rate_filter_s + dt)
            self._rate_m_s += a * ((depth_m - last[1]) / dt - self._rate_m_s)
        elif last is None or not math.isfinite(last[1]):
            self._rate_m_s = 0.0
        self._reading = (t_s, depth_m)

    @property
    def depth_rate_m_s(self):
        """The filtered depth rate estimate [m/s, positive down]."""
        return self._rate_m_s

    def fresh_depth(self, t_s):
        """The newest reading [m] if it is usable at ``t_s`` [s] (finite, at most ``depth_timeout_s`` old), else None."""
        r = self._reading
        if r is None or not math.isfinite(r[1]) or not (as_finite(t_s, "t_s") - r[0] <= self.timeout_s):
            return None
        return r[1]

    def heave_force(self, t_s, stick, eta2, force_x_n, force_y_n, open_loop_z_n):
        """The body heave force Z [N, FRD, positive down] for this tick at ``t_s`` [s].

        ``stick``: the pilot's heave command in [-1, 1] (positive down); ``eta2``: measured
        (roll, pitch, yaw) [rad]; ``force_x_n``, ``force_y_n``: the tick's open-loop surge and
        sway forces [N]; ``open_loop_z_n``: the open-loop heave force, returned while the hold
        is off or has no fresh depth (:attr:`status` says which). ``t_s`` NaN (no tick time):
        no depth counts as fresh, so heave is open loop.
        """
        stick = as_number(stick, "stick", -1.0, 1.0)
        eta2 = as_vector(eta2, 3, "eta2")
        force_x_n, force_y_n = as_finite(force_x_n, "force_x_n"), as_finite(force_y_n, "force_y_n")
        open_loop_z_n = as_finite(open_loop_z_n, "open_loop_z_n")
        if np.ndim(t_s) != 0:
            raise Brov2Error("t_s: expected one number [s] (NaN: no tick time), got shape %s" % (np.shape(t_s),))
        if not self.enabled:
            self.status, self.message = OFF, ""
            return open_loop_z_n
        depth = None if math.isnan(t_s) else self.fresh_depth(t_s)
        if depth is None:
            if self.status != NO_DEPTH:
                self.message = ("depth hold: no fresh depth reading (none, NaN or older than %.2f s): "
                                "heave is OPEN LOOP until the depth returns" % self.timeout_s)
            self.status = NO_DEPTH
            self.setpoint_m = math.nan
            self._last_tick_s = math.nan
            return open_loop_z_n
        if self.status != HOLDING:
            self.message = "depth hold: holding %.2f m" % min(max(depth, self.min_depth_m), self.max_depth_m)
        self.status = HOLDING
        rate_cmd = self.max_depth_rate_m_s * stick
        if math.isnan(self.setpoint_m):
            self.setpoint_m = depth
        else:
            dt = float(t_s) - self._last_tick_s if math.isfinite(self._last_tick_s) else 0.0
            self.setpoint_m += rate_cmd * max(dt, 0.0)
        self._last_tick_s = float(t_s)
        clipped = min(max(self.setpoint_m, self.min_depth_m), self.max_depth_m)
        if clipped != self.setpoint_m or (clipped == self.min_depth_m and rate_cmd < 0.0) \
                or (clipped == self.max_depth_m and rate_cmd > 0.0):
            rate_cmd = 0.0
        self.setpoint_m = clipped
        drag_ff = model_drag(self.linear_drag, self.quadratic_drag, rate_cmd)
        f_down = (self.kp * (self.setpoint_m - depth) + self.kd_total * (rate_cmd - self._rate_m_s)
                  + self.buoyancy_feedforward_n + drag_ff)
        dx, dy, dz = down_axis(float(eta2[0]), float(eta2[1]))
        dz = max(dz, MIN_DOWN_COMPONENT) if dz >= 0.0 else min(dz, -MIN_DOWN_COMPONENT)
        z = (f_down - dx * force_x_n - dy * force_y_n) / dz
        return min(max(z, -self.max_force_n), self.max_force_n)
