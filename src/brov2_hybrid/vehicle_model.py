"""6-DOF BlueROV2 Heavy model of the simulator: the paper's updated SITL model and the stock one.

References: Ng & Krieg 2024, Sec. 2.2.4-2.2.5 and App. B (updated model); ArduPilot
``libraries/SITL/SIM_Submarine.cpp`` before the paper (stock model); seed 003 (ocean
current, third-order thruster response, sensor noise). REFERENCE.md section 6.

Conventions: body FRD, inertial NED, SI units, radians. eta = (north, east, down [m],
roll, pitch, yaw [rad]); nu = (u, v, w [m/s], p, q, r [rad/s]) in the body frame.

Updated model (diagonal, per DOF; App. B Eq. A6-A11):

    (M + M_A) (nu_dot + [omega x nu_1; 0]) = T f - (B_L + B_NL |nu_r|) nu_r + g_hydro(eta)

with f the eight thrusts from the T200 table, nu_r = nu - [R^T v_c; 0] the velocity
relative to a constant NED current v_c, and g_hydro the weight/buoyancy wrench of
:func:`brov2_hybrid.hydrostatics.restoring_wrench`. The term omega x nu_1 is not a
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

Integration (:class:`VehicleModel`): fixed step dt (default 1/400 s), semi-implicit
(symplectic) Euler: nu_{k+1} = nu_k + dt nu_dot(eta_k, nu_k); position_{k+1} =
position_k + dt R_k nu_1,{k+1}; attitude as a unit quaternion rotated by the exact
exponential of omega_{k+1} dt (no gimbal lock). The readable reference right-hand side
is :func:`rhs` (Euler angles, numpy, core kinematics); the fast stepper is the same
model written with floats and is tested against :func:`rhs` integrated by scipy.

Thruster lag: every thruster passes its commanded thrust through the same linear
filter K(s) (first order 1/(tau s + 1) or seed 003's third-order K(s)). Because the
commands are held between calls to :meth:`VehicleModel.set_motor_pwm`, the filter is
solved exactly in modal form (one complex exponential per pole), on the body wrench.
"""
import math
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np
from scipy import signal

from brov2_hybrid import paths
from brov2_hybrid.errors import Brov2Error, ParameterError, as_vector
from brov2_hybrid.hydrostatics import restoring_wrench
from brov2_hybrid.kinematics import J1, J2, down_axis_in_body, euler_from_quaternion, quaternion_from_euler
from brov2_hybrid.params import _Section, load_yaml

DEFAULT_SIMULATOR_FILE = "simulator.yaml"
MODELS = ("updated", "stock")
THRUSTER_LAGS = ("none", "first_order", "third_order")
N_THRUSTERS = 8

#: Below this |omega| [rad/s] the quaternion update uses its small-angle limit.
_SMALL_RATE_RAD_S = 1e-12
#: Modal thruster-lag terms smaller than this (relative) are treated as settled.
_LAG_SETTLED = 1e-12


@dataclass(frozen=True)
class StockModelParams:
    """Parameters of the stock ArduSub SITL submarine (see ``params/simulator.yaml``)."""

    mass_kg: float
    inertia_kg_m2: float
    thrust_gain_n: float
    pwm_neutral_us: float
    pwm_half_range_us: float
    pwm_valid_us: tuple
    dead_zone_us: tuple
    thruster_arm_m: float
    water_density_kg_m3: float
    sphere_area_m2: float
    drag_coefficient: np.ndarray
    angular_drag_n_m_s2: float
    righting_force_n: float
    righting_offset_m: float
    net_buoyancy_n: float
    buoyancy_mass_kg: float
    vehicle_height_m: float
    gravity_m_s2: float


@dataclass
class SimOptions:
    """Physics options of the simulator; every optional effect is off by default.

    Attributes
    ----------
    model : {'updated', 'stock'}
    dt_s : float
        Fixed integration step [s].
    current_ned_m_s : ndarray (3,)
        Constant ocean current, NED [m/s].
    thruster_lag : {'none', 'first_order', 'third_order'}
    thruster_time_constant_s : float
        Time constant of the first-order lag [s].
    third_order_numerator, third_order_denominator : tuple or None
        K(s) coefficients (highest power first); None reads ``params/simulator.yaml``.
    vehicle_height_m : float or None
        Height for the surface buoyancy law of the updated model; None = always submerged.
    noise_enabled : bool
    attitude_noise_std_rad, rate_noise_std_rad_s, depth_noise_std_m : float
        Standard deviations of the zero-mean Gaussian measurement noise.
    seed : int
        Seed of the noise generator.
    stock : StockModelParams or None
        Stock-model parameters; None reads ``params/simulator.yaml`` when needed.
    """

    model: str = "updated"
    dt_s: float = 1.0 / 400.0
    current_ned_m_s: np.ndarray = field(default_factory=lambda: np.zeros(3))
    thruster_lag: str = "none"
    thruster_time_constant_s: float = 0.1
    third_order_numerator: Optional[tuple] = None
    third_order_denominator: Optional[tuple] = None
    vehicle_height_m: Optional[float] = None
    noise_enabled: bool = False
    attitude_noise_std_rad: float = 0.0
    rate_noise_std_rad_s: float = 0.0
    depth_noise_std_m: float = 0.0
    seed: int = 0
    stock: Optional[StockModelParams] = None

    def validated(self):
        """Return a checked copy (arrays converted); raise ParameterError on bad values."""
        if self.model not in MODELS:
            raise ParameterError("SimOptions.model: expected one of %s, got %r" % (MODELS, self.model))
        if self.thruster_lag not in THRUSTER_LAGS:
            raise ParameterError("SimOptions.thruster_lag: expected one of %s, got %r"
                                 % (THRUSTER_LAGS, self.thruster_lag))
        for name in ("dt_s", "thruster_time_constant_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ParameterError("SimOptions.%s: expected a value > 0, got %r" % (name, value))
        for name in ("attitude_noise_std_rad", "rate_noise_std_rad_s", "depth_noise_std_m"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ParameterError("SimOptions.%s: expected a value >= 0, got %r" % (name, value))
        height = self.vehicle_height_m
        if height is not None and not (math.isfinite(height) and height > 0):
            raise ParameterError("SimOptions.vehicle_height_m: expected a value > 0 or None, got %r" % height)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ParameterError("SimOptions.seed: expected an integer, got %r" % (self.seed,))
        try:
            current = as_vector(self.current_ned_m_s, 3, "SimOptions.current_ned_m_s")
        except Brov2Error as exc:
            raise ParameterError(str(exc))
        return replace(self, current_ned_m_s=current, dt_s=float(self.dt_s),
                       thruster_time_constant_s=float(self.thruster_time_constant_s))


def simulator_file(path=None):
    """Path of the simulator parameter file (default ``params/simulator.yaml``)."""
    return path or paths.params_path(DEFAULT_SIMULATOR_FILE)


def _optional(section, key, reader, *args):
    return reader(key, *args) if key in section.data else None


def load_sim_options(path=None):
    """Read :class:`SimOptions` from the ``physics`` and ``noise`` sections.

    Every key is optional (a missing one keeps the dataclass default, i.e. off);
    an unknown key or a bad value raises :class:`ParameterError` naming file and key.
    """
    path = simulator_file(path)
    data = load_yaml(path)
    kwargs = {}
    physics = _Section(data, path, "physics") if "physics" in data else None
    if physics is not None:
        known = {"model", "rate_hz", "current_ned_m_s", "thruster_lag", "thruster_time_constant_s",
                 "third_order_numerator", "third_order_denominator", "vehicle_height_m"}
        _reject_unknown(physics, known)
        if "model" in physics.data:
            kwargs["model"] = _choice(physics, "model", MODELS)
        if "rate_hz" in physics.data:
            kwargs["dt_s"] = 1.0 / physics.positive("rate_hz")
        if "current_ned_m_s" in physics.data:
            kwargs["current_ned_m_s"] = physics.vector("current_ned_m_s", 3)
        if "thruster_lag" in physics.data:
            kwargs["thruster_lag"] = _choice(physics, "thruster_lag", THRUSTER_LAGS)
        if "thruster_time_constant_s" in physics.data:
            kwargs["thruster_time_constant_s"] = physics.positive("thruster_time_constant_s")
        for key in ("third_order_numerator", "third_order_denominator"):
            if key in physics.data:
                kwargs[key] = tuple(_coefficients(physics, key))
        if "vehicle_height_m" in physics.data and physics.raw("vehicle_height_m") is not None:
            kwargs["vehicle_height_m"] = physics.positive("vehicle_height_m")
    if "noise" in data:
        noise = _Section(data, path, "noise")
        _reject_unknown(noise, {"enabled", "seed", "attitude_std_rad", "rate_std_rad_s", "depth_std_m"})
        if "enabled" in noise.data:
            kwargs["noise_enabled"] = noise.boolean("enabled")
        if "seed" in noise.data:
            kwargs["seed"] = noise.integer("seed", 0)
        for key, name in (("attitude_std_rad", "attitude_noise_std_rad"),
                          ("rate_std_rad_s", "rate_noise_std_rad_s"),
                          ("depth_std_m", "depth_noise_std_m")):
            if key in noise.data:
                value = noise.finite(key)
                if value < 0:
                    raise ParameterError("%s:noise.%s: expected a value >= 0, got %r" % (path, key, value))
                kwargs[name] = value
    if "stock_model" in data:
        kwargs["stock"] = load_stock_model_params(path)
    return SimOptions(**kwargs).validated()


def _reject_unknown(section, known):
    unknown = sorted(set(section.data) - set(known))
    if unknown:
        raise ParameterError("%s:%s: unknown key(s) %s (expected some of %s)"
                             % (section.path, section.section, unknown, sorted(known)))


def _choice(section, key, choices):
    value = section.raw(key)
    if value not in choices:
        raise ParameterError("%s: expected one of %s, got %r" % (section._key(key), choices, value))
    return value


def _coefficients(section, key):
    value = section.raw(key)
    if not (isinstance(value, list) and value):
        raise ParameterError("%s: expected a list of polynomial coefficients" % section._key(key))
    return section.vector(key, len(value))


def load_stock_model_params(path=None):
    """Read :class:`StockModelParams` from the ``stock_model`` section."""
    path = simulator_file(path)
    s = _Section(load_yaml(path), path, "stock_model")
    dead_zone = s.vector("dead_zone_us", 2)
    if not dead_zone[0] <= dead_zone[1]:
        raise ParameterError("%s: expected dead_zone_us[0] <= dead_zone_us[1]" % s._key("dead_zone_us"))
    return StockModelParams(
        mass_kg=s.positive("mass_kg"),
        inertia_kg_m2=s.positive("inertia_kg_m2"),
        thrust_gain_n=s.positive("thrust_gain_n"),
        pwm_neutral_us=s.positive("pwm_neutral_us"),
        pwm_half_range_us=s.positive("pwm_half_range_us"),
        pwm_valid_us=tuple(float(x) for x in s.vector("pwm_valid_us", 2)),
        dead_zone_us=(float(dead_zone[0]), float(dead_zone[1])),
        thruster_arm_m=s.positive("thruster_arm_m"),
        water_density_kg_m3=s.positive("water_density_kg_m3"),
        sphere_area_m2=s.positive("sphere_area_m2"),
        drag_coefficient=s.nonnegative_vector("drag_coefficient", 3),
        angular_drag_n_m_s2=s.finite("angular_drag_n_m_s2"),
        righting_force_n=s.finite("righting_force_n"),
        righting_offset_m=s.finite("righting_offset_m"),
        net_buoyancy_n=s.finite("net_buoyancy_n"),
        buoyancy_mass_kg=s.positive("buoyancy_mass_kg"),
        vehicle_height_m=s.positive("vehicle_height_m"),
        gravity_m_s2=s.positive("gravity_m_s2"),
    )


def _third_order_coefficients(options):
    if options.third_order_numerator is not None and options.third_order_denominator is not None:
        return options.third_order_numerator, options.third_order_denominator
    defaults = load_sim_options()
    if defaults.third_order_numerator is None or defaults.third_order_denominator is None:
        raise ParameterError("%s:physics: third_order_numerator/denominator needed for thruster_lag "
                             "'third_order'" % simulator_file())
    return defaults.third_order_numerator, defaults.third_order_denominator


# --------------------------------------------------------------------------------------
# Model parameters and the reference right-hand side
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelParams:
    """Everything :func:`rhs` needs, for either model (built by :func:`model_params`).

    ``mass`` is the diagonal inertia used for each DOF: M + M_A (updated) or
    (m, m, m, I, I, I) (stock). ``thruster_matrix`` (6x8) maps thrusts [N] to the body
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


def model_params(setup, options):
    """Build :class:`ModelParams` for ``setup`` (a VehicleSetup) and ``options`` (SimOptions)."""
    options = options.validated()
    v = setup.vehicle
    if options.model == "updated":
        return ModelParams(
            kind="updated", mass=v.total_mass, linear_drag=v.linear_drag.copy(),
            quadratic_drag=v.quadratic_drag.copy(), weight_n=v.weight_n, buoyancy_n=v.buoyancy_n,
            r_cg_m=v.r_cg_m.copy(), r_cb_m=v.r_cb_m.copy(), gravity_m_s2=v.gravity_m_s2,
            current_ned_m_s=options.current_ned_m_s, vehicle_height_m=options.vehicle_height_m,
            thruster_matrix=np.array(setup.T, dtype=float))
    s = options.stock if options.stock is not None else load_stock_model_params()
    half_rho_a = 0.5 * s.water_density_kg_m3 * s.sphere_area_m2
    matrix = np.vstack([setup.T_hat[:3], s.thruster_arm_m * setup.T_hat[3:]])
    return ModelParams(
        kind="stock",
        mass=np.array([s.mass_kg] * 3 + [s.inertia_kg_m2] * 3),
        linear_drag=np.zeros(6),
        quadratic_drag=np.concatenate([half_rho_a * s.drag_coefficient, [s.angular_drag_n_m_s2] * 3]),
        weight_n=0.0, buoyancy_n=0.0, r_cg_m=np.zeros(3), r_cb_m=np.zeros(3),
        gravity_m_s2=s.gravity_m_s2, current_ned_m_s=options.current_ned_m_s,
        vehicle_height_m=s.vehicle_height_m, thruster_matrix=matrix, stock=s)


def submerged_fraction(depth_m, vehicle_height_m):
    """Updated model: fraction of the buoyancy acting at ``depth_m`` (of the body origin).

    Linear from 0 (origin half a height above the surface) to 1 (half a height below);
    1 everywhere when ``vehicle_height_m`` is None.
    """
    if vehicle_height_m is None:
        return 1.0
    return min(1.0, max(0.0, 0.5 + depth_m / vehicle_height_m))


def stock_buoyancy_acceleration(depth_m, s):
    """Stock SIM_Submarine: upward acceleration [m/s^2] of gravity compensation plus buoyancy.

    ``calculate_buoyancy_acceleration``: 0 above ``depth = h/2``, full (g + B_net /
    m_sphere) below ``depth = h``, (depth - h/2) / h of it in between.
    """
    below = depth_m - 0.5 * s.vehicle_height_m
    full = s.gravity_m_s2 + s.net_buoyancy_n / s.buoyancy_mass_kg
    if below < 0.0:
        return 0.0
    if below > 0.5 * s.vehicle_height_m:
        return full
    return full * below / s.vehicle_height_m


def _cross(a, b):
    """a x b for two 3-vectors (numpy's cross is slow on single small vectors)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _generalized_forces(eta, nu, tau_thrusters, params):
    """Body wrench of drag and hydrostatics plus thrusters, and the relative velocity."""
    R = J1(eta[3:6])
    nu_r = np.array(nu, dtype=float)
    nu_r[:3] -= R.T @ params.current_ned_m_s
    damping = (params.linear_drag + params.quadratic_drag * np.abs(nu_r)) * nu_r
    if params.kind == "updated":
        buoyancy = params.buoyancy_n * submerged_fraction(eta[2], params.vehicle_height_m)
        hydro = restoring_wrench(eta[3:6], params.weight_n, buoyancy, params.r_cg_m, params.r_cb_m)
    else:
        s = params.stock
        # Gravity minus the buoyancy acceleration, along NED down, expressed in the body.
        down_body = np.array(down_axis_in_body(eta[3], eta[4]))  # R^T [0, 0, 1]
        net_down = s.gravity_m_s2 - stock_buoyancy_acceleration(eta[2], s)
        # SIM_Submarine::calculate_buoyancy_torque: (R^T [0, 0, h]) x [0, 0, -F].
        torque = _cross(s.righting_offset_m * down_body, np.array([0.0, 0.0, -s.righting_force_n]))
        hydro = np.concatenate([params.mass[:3] * net_down * down_body, torque])
    return tau_thrusters - damping + hydro, R


def body_acceleration(eta, nu, tau_thrusters, params):
    """nu_dot (6,) for state (eta, nu) and the thruster wrench ``tau_thrusters`` (6,)."""
    wrench, _ = _generalized_forces(eta, nu, tau_thrusters, params)
    nu_dot = wrench / params.mass
    nu_dot[:3] -= _cross(nu[3:6], nu[:3])  # transport term of the NED-frame integration
    return nu_dot


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


# --------------------------------------------------------------------------------------
# Thruster lag in modal form
# --------------------------------------------------------------------------------------

class _ModalLag(object):
    """Identical SISO filter K(s) on every thruster, solved exactly for held inputs.

    K(s) = sum_k r_k / (s - lambda_k) (strictly proper, stable). Mode states obey
    z_k' = lambda_k z_k + f_cmd, output f = sum_k Re(r_k z_k). For a held command the
    deviation from the mode's steady state decays as exp(lambda_k t). A conjugate pole
    pair is carried by one mode with weight 2.
    """

    def __init__(self, numerator, denominator, dt_s):
        res, poles, direct = signal.residue(numerator, denominator)
        if np.size(direct) and np.any(np.abs(direct) > 0):
            raise ParameterError("thruster lag K(s): expected a strictly proper transfer function")
        if np.any(np.real(poles) >= 0):
            raise ParameterError("thruster lag K(s): expected stable poles, got %s" % poles)
        modes = []
        for r_k, p_k in zip(res, poles):
            if p_k.imag < -1e-9:
                continue  # represented by its conjugate with weight 2
            weight = 2.0 if p_k.imag > 1e-9 else 1.0
            modes.append((complex(p_k), weight * complex(r_k)))
        self.poles = [p for p, _ in modes]
        self.residues = [r for _, r in modes]          # weighted
        self.step_factor = [complex(np.exp(p * dt_s)) for p in self.poles]
        self.dc_gain = float(sum((-r / p).real for p, r in zip(self.poles, self.residues)))
        self.z = [np.zeros(N_THRUSTERS, dtype=complex) for _ in self.poles]  # at last change
        self.f_cmd = np.zeros(N_THRUSTERS)
        self.decay = [1.0 + 0j for _ in self.poles]   # exp(lambda_k (t - t_change))

    def deviations(self):
        """Current mode deviations from steady state, list of (8,) complex arrays."""
        return [(z + self.f_cmd / p) * d for z, p, d in zip(self.z, self.poles, self.decay)]

    def output(self):
        """Actual thrusts (8,) [N]."""
        f = self.dc_gain * self.f_cmd
        for r, e in zip(self.residues, self.deviations()):
            f = f + (r * e).real
        return f

    def command(self, f_cmd):
        """Hold a new command from now on; returns the deviations for the new command."""
        z_now = [e - self.f_cmd / p for e, p in zip(self.deviations(), self.poles)]
        self.f_cmd = np.array(f_cmd, dtype=float)
        self.z = z_now
        self.decay = [1.0 + 0j for _ in self.poles]
        return self.deviations()

    def reset(self, f_now):
        """Start settled at thrusts ``f_now`` (8,)."""
        self.f_cmd = np.array(f_now, dtype=float) / self.dc_gain
        self.z = [-self.f_cmd / p for p in self.poles]
        self.decay = [1.0 + 0j for _ in self.poles]


# --------------------------------------------------------------------------------------
# The fast fixed-step model
# --------------------------------------------------------------------------------------

class VehicleModel(object):
    """The simulated vehicle: motor PWMs in, state and sensor readings out.

    Parameters
    ----------
    setup : brov2_hybrid.model.VehicleSetup
        From :func:`brov2_hybrid.model.load_setup` (T, thrust table, T-hat, vehicle).
    options : SimOptions, optional
        Defaults to :func:`load_sim_options` (``params/simulator.yaml``).

    Attributes
    ----------
    t_s : float
        Simulated time [s].
    eta : ndarray (6,)
        (north, east, down [m], roll, pitch, yaw [rad]), a fresh array on each access.
    nu : ndarray (6,)
        Body FRD velocity (u, v, w [m/s], p, q, r [rad/s]), a fresh array on each access.
    params : ModelParams
    """

    def __init__(self, setup, options=None):
        self.setup = setup
        self.options = (options if options is not None else load_sim_options()).validated()
        self.params = model_params(setup, self.options)
        self.dt_s = self.options.dt_s
        self.kind = self.params.kind
        thrusters = setup.thrusters
        self._pwm_limits = (float(thrusters.pwm_min_us), float(thrusters.pwm_max_us))
        self._neutral_us = float(thrusters.pwm_neutral_us)
        self._lag = None
        if self.options.thruster_lag == "first_order":
            tc = self.options.thruster_time_constant_s
            self._lag = _ModalLag([1.0 / tc], [1.0, 1.0 / tc], self.dt_s)
        elif self.options.thruster_lag == "third_order":
            num, den = _third_order_coefficients(self.options)
            self._lag = _ModalLag(num, den, self.dt_s)
        self._rng = np.random.default_rng(self.options.seed)
        self._matrix = self.params.thruster_matrix
        self._constants = self._stepper_constants()
        self.reset()

    # ---------------------------------------------------------------- state access
    def reset(self, eta=None, nu=None, t_s=0.0):
        """Put the vehicle at ``eta`` (default zeros) with velocity ``nu`` (default zeros).

        Motors go to neutral and any thruster lag starts settled at zero thrust.
        """
        eta = np.zeros(6) if eta is None else as_vector(eta, 6, "eta")
        nu = np.zeros(6) if nu is None else as_vector(nu, 6, "nu")
        qx, qy, qz, qw = quaternion_from_euler(eta[3:6])
        self._x = [float(eta[0]), float(eta[1]), float(eta[2]), qw, qx, qy, qz] + [float(a) for a in nu]
        self._t0_s = float(t_s)
        self._steps = 0
        self._accel_body = None
        self.motor_pwm_us = np.full(N_THRUSTERS, self._neutral_us)
        self._f_cmd = np.zeros(N_THRUSTERS)
        if self._lag is not None:
            self._lag.reset(self._f_cmd)
        self._tau_ss = [0.0] * 6
        self._lag_terms = []
        self._lag_active = False

    @property
    def t_s(self):
        return self._t0_s + self._steps * self.dt_s

    @property
    def eta(self):
        x = self._x
        return np.concatenate([x[0:3], euler_from_quaternion([x[4], x[5], x[6], x[3]])])

    @property
    def nu(self):
        return np.array(self._x[7:13])

    def quaternion_ned_frd(self):
        """Attitude as a unit quaternion (x, y, z, w), body FRD -> NED."""
        x = self._x
        return np.array([x[4], x[5], x[6], x[3]])

    def velocity_ned_m_s(self):
        """Velocity of the body origin in NED [m/s], shape (3,)."""
        return J1(self.eta[3:6]) @ np.array(self._x[7:10])

    def thruster_wrench(self):
        """Body wrench [N, N m] (6,) the thrusters produce now (after any lag)."""
        return self._matrix @ self.thruster_forces_n()

    def thruster_forces_n(self):
        """Actual thrust of each motor [N], shape (8,) (after the lag, if any)."""
        if self._lag is None:
            return self._f_cmd.copy()
        return self._lag.output()

    def specific_force_body(self):
        """What an accelerometer reads [m/s^2], body FRD: inertial acceleration minus gravity."""
        eta, nu = self.eta, self.nu
        nu_dot = body_acceleration(eta, nu, self.thruster_wrench(), self.params)
        inertial = nu_dot[:3] + _cross(nu[3:6], nu[:3])
        return inertial - J1(eta[3:6]).T @ np.array([0.0, 0.0, self.params.gravity_m_s2])

    # ---------------------------------------------------------------- sensors
    def measured_attitude(self):
        """(eta2 (3,) [rad], nu2 (3,) [rad/s]) as the IMU reports them (noisy if enabled)."""
        eta2, nu2 = self.eta[3:6], self.nu[3:6]
        o = self.options
        if o.noise_enabled:
            eta2 = eta2 + self._rng.normal(0.0, o.attitude_noise_std_rad, 3) if o.attitude_noise_std_rad else eta2
            nu2 = nu2 + self._rng.normal(0.0, o.rate_noise_std_rad_s, 3) if o.rate_noise_std_rad_s else nu2
            eta2[2] = math.atan2(math.sin(eta2[2]), math.cos(eta2[2]))
        return eta2, nu2

    def depth_m(self):
        """Depth of the body origin [m], positive down (noisy if enabled)."""
        depth = self._x[2]
        o = self.options
        if o.noise_enabled and o.depth_noise_std_m:
            depth += float(self._rng.normal(0.0, o.depth_noise_std_m))
        return depth

    # ---------------------------------------------------------------- inputs
    def set_motor_pwm(self, pwm_us):
        """Hold eight motor PWMs [us] (clamped to the table range) until the next call."""
        pwm = np.clip(as_vector(pwm_us, N_THRUSTERS, "pwm_us"), *self._pwm_limits)
        self.motor_pwm_us = pwm
        if self.kind == "updated":
            f_cmd = np.asarray(self.setup.table.force_from_pwm(pwm), dtype=float)
        else:
            f_cmd = stock_thrust_n(pwm, self.params.stock)
        self._f_cmd = f_cmd
        if self._lag is None:
            self._tau_ss = [float(a) for a in self._matrix @ f_cmd]
            return
        deviations = self._lag.command(f_cmd)
        self._tau_ss = [float(a) for a in self._matrix @ (self._lag.dc_gain * f_cmd)]
        terms = []
        for r, d_k, e in zip(self._lag.residues, self._lag.step_factor, deviations):
            weights = [complex(a) for a in self._matrix @ (r * e)]
            if max(abs(a) for a in weights) > 0.0:
                terms.append([d_k, 1.0 + 0j, weights])
        self._lag_terms = terms
        self._lag_active = bool(terms)

    # ---------------------------------------------------------------- stepping
    def advance(self, duration_s):
        """Step for ``duration_s`` [s] rounded down to whole steps; returns the step count."""
        n = int(math.floor(float(duration_s) / self.dt_s + 1e-6))
        if n > 0:
            self.step(n)
        return n

    def step(self, n_steps=1):
        """Advance ``n_steps`` fixed steps of ``dt_s`` with the motor PWMs held."""
        n = int(n_steps)
        if n < 0:
            raise Brov2Error("n_steps: expected >= 0, got %r" % (n_steps,))
        if n == 0:
            return
        terms = self._lag_terms if self._lag_active else None
        self._x = _integrate(self._x, n, self.dt_s, self._tau_ss, self._constants, terms)
        self._steps += n
        if terms is not None:
            lag = self._lag
            lag.decay = [dec * d_k ** n for dec, d_k in zip(lag.decay, lag.step_factor)]
            if max(abs(term[1]) for term in terms) < _LAG_SETTLED:
                self._lag_active = False  # settled: run on the steady wrench from now on

    def _stepper_constants(self):
        p = self.params
        inv_mass = [1.0 / float(m) for m in p.mass]
        c = {"inv_mass": inv_mass, "bl": [float(a) for a in p.linear_drag],
             "bq": [float(a) for a in p.quadratic_drag],
             "current": [float(a) for a in p.current_ned_m_s],
             "has_current": bool(np.any(p.current_ned_m_s != 0.0)),
             "height": p.vehicle_height_m, "stock": p.kind == "stock"}
        if p.kind == "updated":
            c.update(W=float(p.weight_n), B=float(p.buoyancy_n),
                     rg=[float(a) for a in p.r_cg_m], rb=[float(a) for a in p.r_cb_m])
        else:
            s = p.stock
            c.update(g=float(s.gravity_m_s2), buoy_full=s.gravity_m_s2 + s.net_buoyancy_n / s.buoyancy_mass_kg,
                     righting=float(s.righting_force_n * s.righting_offset_m))
        return c


def _integrate(state, n, dt, tau, c, lag_terms=None):
    """n semi-implicit Euler steps of the updated or the stock model in floats.

    One loop for both models (see module docstring): only the hydrostatic and drag
    terms differ, chosen by ``c["stock"]``. ``tau`` is the steady thruster wrench;
    ``lag_terms`` (or None) the modal thruster-lag terms [step factor, current factor,
    (6,) complex weights], advanced in place.
    """
    pn, pe, pd, qw, qx, qy, qz, u, v, w, p, q, r = state
    X, Y, Z, K, M, N = tau
    im0, im1, im2, im3, im4, im5 = c["inv_mass"]
    bl0, bl1, bl2, bl3, bl4, bl5 = c["bl"]
    bq0, bq1, bq2, bq3, bq4, bq5 = c["bq"]
    cn, ce, cd = c["current"]
    has_current = c["has_current"]
    height = c["height"]
    stock = c["stock"]
    if stock:
        g, buoy_full, righting = c["g"], c["buoy_full"], c["righting"]
    else:
        W, B = c["W"], c["B"]
        gx, gy, gz = c["rg"]
        bx, by, bz = c["rb"]
        half_height = 0.5 * height if height is not None else 0.0
    sqrt, sin, cos = math.sqrt, math.sin, math.cos
    for _ in range(n):
        if lag_terms is not None:
            # Thruster lag: steady wrench plus the decaying modes (see _ModalLag).
            X, Y, Z, K, M, N = tau
            for term in lag_terms:
                d_k, p_k, (w0, w1, w2, w3, w4, w5) = term
                X += (w0 * p_k).real
                Y += (w1 * p_k).real
                Z += (w2 * p_k).real
                K += (w3 * p_k).real
                M += (w4 * p_k).real
                N += (w5 * p_k).real
                term[1] = p_k * d_k
        # Rotation body -> NED from the quaternion; the third row is NED down in body axes.
        xx, yy, zz = qx * qx, qy * qy, qz * qz
        xy, xz, yz = qx * qy, qx * qz, qy * qz
        wx, wy, wz = qw * qx, qw * qy, qw * qz
        R11, R12, R13 = 1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy)
        R21, R22, R23 = 2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx)
        R31, R32, R33 = 2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy)
        # Velocity relative to the water.
        if has_current:
            ur = u - (R11 * cn + R21 * ce + R31 * cd)
            vr = v - (R12 * cn + R22 * ce + R32 * cd)
            wr = w - (R13 * cn + R23 * ce + R33 * cd)
        else:
            ur, vr, wr = u, v, w
        if stock:
            # SIM_Submarine: buoyancy acceleration by its surface law, sphere drag and a
            # flat righting torque, each over the stock mass / inertia.
            below = pd - 0.5 * height
            if below < 0.0:
                buoy = 0.0
            elif below > 0.5 * height:
                buoy = buoy_full
            else:
                buoy = buoy_full * below / height
            net_down = g - buoy
            udot = (X - bq0 * abs(ur) * ur) * im0 + net_down * R31 - (q * w - r * v)
            vdot = (Y - bq1 * abs(vr) * vr) * im1 + net_down * R32 - (r * u - p * w)
            wdot = (Z - bq2 * abs(wr) * wr) * im2 + net_down * R33 - (p * v - q * u)
            pdot = (K - bq3 * abs(p) * p - righting * R32) * im3
            qdot = (M - bq4 * abs(q) * q + righting * R31) * im4
            rdot = (N - bq5 * abs(r) * r) * im5
        else:
            # Hydrostatics: weight W and (partly submerged) buoyancy Bf along NED down.
            if height is None or pd >= half_height:
                Bf = B
            elif pd <= -half_height:
                Bf = 0.0
            else:
                Bf = B * (0.5 + pd / height)
            net = W - Bf
            cx, cy, cz = W * gx - Bf * bx, W * gy - Bf * by, W * gz - Bf * bz
            # Accelerations: thrust - drag + hydrostatics, over M + M_A; transport term.
            udot = (X - (bl0 + bq0 * abs(ur)) * ur + net * R31) * im0 - (q * w - r * v)
            vdot = (Y - (bl1 + bq1 * abs(vr)) * vr + net * R32) * im1 - (r * u - p * w)
            wdot = (Z - (bl2 + bq2 * abs(wr)) * wr + net * R33) * im2 - (p * v - q * u)
            pdot = (K - (bl3 + bq3 * abs(p)) * p + cy * R33 - cz * R32) * im3
            qdot = (M - (bl4 + bq4 * abs(q)) * q + cz * R31 - cx * R33) * im4
            rdot = (N - (bl5 + bq5 * abs(r)) * r + cx * R32 - cy * R31) * im5
        u += dt * udot
        v += dt * vdot
        w += dt * wdot
        p += dt * pdot
        q += dt * qdot
        r += dt * rdot
        # Position with the new velocity.
        pn += dt * (R11 * u + R12 * v + R13 * w)
        pe += dt * (R21 * u + R22 * v + R23 * w)
        pd += dt * (R31 * u + R32 * v + R33 * w)
        # Attitude: q <- q * exp(omega dt / 2), then renormalise.
        rate2 = p * p + q * q + r * r
        if rate2 > _SMALL_RATE_RAD_S * _SMALL_RATE_RAD_S:
            rate = sqrt(rate2)
            s = sin(0.5 * rate * dt) / rate
            c0 = cos(0.5 * rate * dt)
        else:
            s, c0 = 0.5 * dt, 1.0
        dx, dy, dz = s * p, s * q, s * r
        qw, qx, qy, qz = (qw * c0 - qx * dx - qy * dy - qz * dz,
                          qw * dx + qx * c0 + qy * dz - qz * dy,
                          qw * dy - qx * dz + qy * c0 + qz * dx,
                          qw * dz + qx * dy - qy * dx + qz * c0)
        k = 1.0 / sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
        qw, qx, qy, qz = qw * k, qx * k, qy * k, qz * k
    return [pn, pe, pd, qw, qx, qy, qz, u, v, w, p, q, r]
