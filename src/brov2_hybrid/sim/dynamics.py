"""Equations of motion of the simulated vehicle: parameters, force terms, right-hand side.

References: Ng & Krieg 2024, Sec. 2.2.4-2.2.5 and App. B (updated model); ArduPilot
``libraries/SITL/SIM_Submarine.cpp`` before the paper (stock model); seed 003 (ocean
current). docs/DESIGN.md section 6.

Conventions: body FRD, inertial NED, SI units, radians. eta = (north, east, down [m],
roll, pitch, yaw [rad]); nu = (u, v, w [m/s], p, q, r [rad/s]) in the body frame.

Updated model (diagonal, per DOF; App. B Eq. A6-A11):

    (M + M_A) (nu_dot + [omega x nu_1; 0]) = T f - (B_L + B_NL |nu_r|) nu_r + g_hydro(eta)

with f the thrusts from the T200 table, nu_r = nu - [R^T v_c; 0] the velocity relative
to a constant NED current v_c, and g_hydro the weight/buoyancy wrench (the same as
:func:`brov2_hybrid.physics.hydrostatics.restoring_wrench`, with the buoyancy falling off at the
surface when ``SimOptions.surface_buoyancy``). The term omega x nu_1 is not a
hydrodynamic force: ArduPilot's SITL (``SIM_Aircraft::update_dynamics``) integrates the
linear acceleration in the NED frame, and written in body axes that is this transport
term. The angular equations have no gyroscopic term (the SITL integrates the body rates
directly).

Stock model (SIM_Submarine): thrust 51.48 out|out| per motor with a dead zone, forces
and torques from ArduSub's heuristic factors (T-hat, the same ones the stock mixer
uses) with a flat 0.25 m torque arm, sphere drag 0.5 rho A C_d v|v| divided by 10.5 kg,
angular drag 7.08 w|w| and a 40 N x 0.15 m righting torque divided by 0.268 kg m^2, and
a net buoyancy of 1 N divided by the 16.755 kg sphere mass. Parameters in
``params/simulator.yaml`` (``stock_model``).

The force terms of both models are written once, in :func:`accelerations`: a float
function of the model's constants (:func:`model_constants`) and the state that the
reference right-hand side :func:`rhs` (Euler angles, numpy) and the fast stepper
(:func:`brov2_hybrid.sim.stepper.integrate`, quaternions, floats; compiled by
numba where it is installed) both call.
"""
from dataclasses import dataclass
from typing import Optional

import numpy as np

from brov2_hybrid.validate import as_vector
from brov2_hybrid.physics.kinematics import J1, J2
from brov2_hybrid.sim.config import StockModelParams, load_stock_model_params


@dataclass(frozen=True)
class ModelParams:
    """Everything :func:`rhs` needs, for either model (built by :func:`model_params`).

    ``mass`` is the diagonal inertia used for each DOF: M + M_A (updated) or
    (m, m, m, I, I, I) (stock). ``thruster_matrix`` (6 x n) maps thrusts [N] to the body
    wrench: T (updated) or [T-hat_1:3; arm T-hat_4:6] (stock).
    """

    kind: str
    mass: np.ndarray
    linear_drag: np.ndarray
    quadratic_drag: np.ndarray
    weight_n: float
    buoyancy_n: float
    r_cg_m: np.ndarray
    r_cb_m: np.ndarray
    gravity_m_s2: float
    current_ned_m_s: np.ndarray
    vehicle_height_m: Optional[float]
    thruster_matrix: np.ndarray
    stock: Optional[StockModelParams] = None


def model_params(vehicle, options):
    """Build :class:`ModelParams` for ``vehicle`` (a Vehicle) and ``options`` (SimOptions)."""
    options = options.validated()
    v = vehicle.body
    if options.model == "updated":
        return ModelParams(
            kind="updated", mass=v.total_mass, linear_drag=v.linear_drag.copy(),
            quadratic_drag=v.quadratic_drag.copy(), weight_n=v.weight_n, buoyancy_n=v.buoyancy_n,
            r_cg_m=v.r_cg_m.copy(), r_cb_m=v.r_cb_m.copy(), gravity_m_s2=v.gravity_m_s2,
            current_ned_m_s=options.current_ned_m_s, vehicle_height_m=v.height_m if options.surface_buoyancy else None,
            thruster_matrix=np.array(vehicle.T, dtype=float))
    s = options.stock if options.stock is not None else load_stock_model_params()
    half_rho_a = 0.5 * s.water_density_kg_m3 * s.sphere_area_m2
    matrix = np.vstack([vehicle.T_hat[:3], s.thruster_arm_m * vehicle.T_hat[3:]])
    return ModelParams(
        kind="stock",
        mass=np.array([s.mass_kg] * 3 + [s.inertia_kg_m2] * 3),
        linear_drag=np.zeros(6),
        quadratic_drag=np.concatenate([half_rho_a * s.drag_coefficient, [s.angular_drag_n_m_s2] * 3]),
        weight_n=0.0, buoyancy_n=0.0, r_cg_m=np.zeros(3), r_cb_m=np.zeros(3),
        gravity_m_s2=s.gravity_m_s2, current_ned_m_s=options.current_ned_m_s,
        vehicle_height_m=s.vehicle_height_m, thruster_matrix=matrix, stock=s)


#: First entry of :func:`model_constants`: which model's force terms :func:`accelerations` applies.
UPDATED_KIND, STOCK_KIND = 0.0, 1.0
#: Length of the constants tuple (the same for both models: one compiled stepper serves both).
N_CONSTANTS = 30


def model_constants(params):
    """The constants of :func:`accelerations` for ``params`` (:class:`ModelParams`): a tuple of floats.

    (kind, 1/mass (6), linear drag (6), quadratic drag (6), then per model:
    updated: W, B, r_CG (3), r_CB (3), has_height (1/0), height, height / 2;
    stock: g, full buoyancy acceleration, righting moment, height; zero-padded to
    :data:`N_CONSTANTS`).
    """
    k = [STOCK_KIND if params.kind == "stock" else UPDATED_KIND]
    k += [1.0 / float(m) for m in params.mass]
    k += [float(a) for a in params.linear_drag] + [float(a) for a in params.quadratic_drag]
    height = params.vehicle_height_m
    if params.kind == "stock":
        s = params.stock
        k += [float(s.gravity_m_s2), float(s.gravity_m_s2 + s.net_buoyancy_n / s.buoyancy_mass_kg),
              float(s.righting_force_n * s.righting_offset_m), float(height)]
    else:
        k += [float(params.weight_n), float(params.buoyancy_n)] + [float(a) for a in params.r_cg_m] \
            + [float(a) for a in params.r_cb_m]
        k += [0.0, 0.0, 0.0] if height is None else [1.0, float(height), 0.5 * height]
    return tuple(k + [0.0] * (N_CONSTANTS - len(k)))


def accelerations(k, X, Y, Z, K, M, N, pd, R31, R32, R33, u, v, w, ur, vr, wr, p, q, r):
    """The model's body accelerations (u_dot, v_dot, w_dot, p_dot, q_dot, r_dot): the force terms, written once.

    ``k``: :func:`model_constants`; thruster wrench (X..N) [N, N m], depth of the body
    origin pd [m], the third row of the body -> NED rotation (NED down in body axes),
    body velocity (u, v, w) [m/s], velocity relative to the water (ur, vr, wr) [m/s] and
    body rates (p, q, r) [rad/s]. Plain float arithmetic, so that the fast stepper
    (:func:`brov2_hybrid.sim.stepper.integrate`) runs it as Python or compiled by
    numba with the same numbers.
    """
    (kind, im0, im1, im2, im3, im4, im5, bl0, bl1, bl2, bl3, bl4, bl5, bq0, bq1, bq2, bq3, bq4, bq5,
     c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10) = k
    if kind == STOCK_KIND:
        # SIM_Submarine: buoyancy acceleration by its surface law
        # (calculate_buoyancy_acceleration: 0 above depth h/2, full g + B_net / m_sphere
        # below depth h, linear in between), sphere drag and a flat righting torque
        # (calculate_buoyancy_torque: (R^T [0, 0, h]) x [0, 0, -F]), each over the stock
        # mass / inertia.
        g, buoy_full, righting, height = c0, c1, c2, c3
        below = pd - 0.5 * height
        if below < 0.0:
            buoy = 0.0
        elif below > 0.5 * height:
            buoy = buoy_full
        else:
            buoy = buoy_full * below / height
        net_down = g - buoy
        return ((X - bq0 * abs(ur) * ur) * im0 + net_down * R31 - (q * w - r * v),
                (Y - bq1 * abs(vr) * vr) * im1 + net_down * R32 - (r * u - p * w),
                (Z - bq2 * abs(wr) * wr) * im2 + net_down * R33 - (p * v - q * u),
                (K - bq3 * abs(p) * p - righting * R32) * im3,
                (M - bq4 * abs(q) * q + righting * R31) * im4,
                (N - bq5 * abs(r) * r) * im5)
    W, B, gx, gy, gz, bx, by, bz, has_height, height, half_height = c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10
    # Hydrostatics: weight W and buoyancy Bf along NED down; moment (W r_G - Bf r_B) x
    # down. Surface law: Bf = B * (0.5 + depth / height) clipped to 0..B (B when the
    # model has no height: always submerged).
    if has_height == 0.0 or pd >= half_height:
        Bf = B
    elif pd <= -half_height:
        Bf = 0.0
    else:
        Bf = B * (0.5 + pd / height)
    net = W - Bf
    cx, cy, cz = W * gx - Bf * bx, W * gy - Bf * by, W * gz - Bf * bz
    # Thrust - drag + hydrostatics over M + M_A; transport term on the linear DOFs.
    return ((X - (bl0 + bq0 * abs(ur)) * ur + net * R31) * im0 - (q * w - r * v),
            (Y - (bl1 + bq1 * abs(vr)) * vr + net * R32) * im1 - (r * u - p * w),
            (Z - (bl2 + bq2 * abs(wr)) * wr + net * R33) * im2 - (p * v - q * u),
            (K - (bl3 + bq3 * abs(p)) * p + cy * R33 - cz * R32) * im3,
            (M - (bl4 + bq4 * abs(q)) * q + cz * R31 - cx * R33) * im4,
            (N - (bl5 + bq5 * abs(r)) * r + cx * R32 - cy * R31) * im5)


def drag_slopes(k, ur, vr, wr, p, q, r):
    """The drag's slopes per DOF [1/s]: d(drag acceleration)/d(velocity), the diagonal of its Jacobian.

    ``k``: :func:`model_constants`; velocity relative to the water (ur, vr, wr) [m/s] and body
    rates (p, q, r) [rad/s]. The drag of :func:`accelerations` is (b_lin + b_quad |x|) x over the
    DOF's mass, so its slope is (b_lin + 2 b_quad |x|) / mass (the stock model has no linear
    term). The fast stepper divides each velocity increment by 1 + dt/2 * slope, which takes the
    drag as the trapezoid over the step instead of its value at the start
    (:func:`brov2_hybrid.sim.stepper.integrate`).
    """
    (kind, im0, im1, im2, im3, im4, im5, bl0, bl1, bl2, bl3, bl4, bl5, bq0, bq1, bq2, bq3, bq4, bq5,
     c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10) = k
    if kind == STOCK_KIND:
        bl0, bl1, bl2, bl3, bl4, bl5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    return ((bl0 + 2.0 * bq0 * abs(ur)) * im0, (bl1 + 2.0 * bq1 * abs(vr)) * im1,
            (bl2 + 2.0 * bq2 * abs(wr)) * im2, (bl3 + 2.0 * bq3 * abs(p)) * im3,
            (bl4 + 2.0 * bq4 * abs(q)) * im4, (bl5 + 2.0 * bq5 * abs(r)) * im5)


def acceleration_function(params):
    """:func:`accelerations` bound to ``params``' constants: ``accel(X, ..., r)`` -> the 6 accelerations."""
    k = model_constants(params)

    def accel(X, Y, Z, K, M, N, pd, R31, R32, R33, u, v, w, ur, vr, wr, p, q, r):
        return accelerations(k, X, Y, Z, K, M, N, pd, R31, R32, R33, u, v, w, ur, vr, wr, p, q, r)
    return accel


def body_acceleration(eta, nu, tau_thrusters, params):
    """nu_dot (6,) for state (eta, nu) and the thruster wrench ``tau_thrusters`` (6,)."""
    eta = np.asarray(eta, dtype=float)
    u, v, w, p, q, r = [float(a) for a in nu]
    R = J1(eta[3:6])
    cn, ce, cd = [float(a) for a in params.current_ned_m_s]
    R31, R32, R33 = float(R[2, 0]), float(R[2, 1]), float(R[2, 2])
    # Velocity relative to the water: nu_1 - R^T v_c.
    ur = u - (float(R[0, 0]) * cn + float(R[1, 0]) * ce + R31 * cd)
    vr = v - (float(R[0, 1]) * cn + float(R[1, 1]) * ce + R32 * cd)
    wr = w - (float(R[0, 2]) * cn + float(R[1, 2]) * ce + R33 * cd)
    X, Y, Z, K, M, N = [float(a) for a in tau_thrusters]
    accel = acceleration_function(params)
    return np.array(accel(X, Y, Z, K, M, N, float(eta[2]), R31, R32, R33, u, v, w, ur, vr, wr, p, q, r))


def rhs(t, x, tau_thrusters, params):
    """Right-hand side x_dot = f(t, x, tau, params) of the vehicle model (reference form).

    Parameters
    ----------
    t : float
        Time [s] (the model is time invariant; kept for ODE-solver signatures).
    x : array_like, shape (12,)
        State (eta, nu): NED position [m], ZYX Euler angles [rad], body velocity [m/s, rad/s].
    tau_thrusters : array_like, shape (6,)
        Body wrench of the thrusters [N, N m] (after any thruster lag).
    params : ModelParams

    Returns
    -------
    x_dot : ndarray, shape (12,)
        (J1 nu_1, J2 nu_2, nu_dot). Raises Brov2Error at gimbal lock (pitch +-90 deg).
    """
    x = as_vector(x, 12, "x")
    tau = as_vector(tau_thrusters, 6, "tau_thrusters")
    eta, nu = x[:6], x[6:]
    nu_dot = body_acceleration(eta, nu, tau, params)
    x_dot = np.empty(12)
    x_dot[:3] = J1(eta[3:6]) @ nu[:3]
    x_dot[3:6] = J2(eta[3:6]) @ nu[3:6]
    x_dot[6:] = nu_dot
    return x_dot


def stock_thrust_n(pwm_us, s):
    """Stock SITL thrust per motor [N]: thrust_gain * out * |out| outside the dead zone."""
    pwm = np.asarray(pwm_us, dtype=float)
    out = (pwm - s.pwm_neutral_us) / s.pwm_half_range_us
    active = ((pwm > s.pwm_valid_us[0]) & (pwm < s.pwm_valid_us[1])
              & ((pwm < s.dead_zone_us[0]) | (pwm > s.dead_zone_us[1])))
    return np.where(active, s.thrust_gain_n * out * np.abs(out), 0.0)
