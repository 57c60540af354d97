"""The plant: the simulated vehicle's rigid body (:class:`Plant`): motor PWMs in, state and sensors out.

The equations of motion are :mod:`brov2_hybrid.sim.dynamics` (updated and stock
models, the force terms written once), the thruster lag
:mod:`brov2_hybrid.sim.thruster_lag`, the settings :mod:`brov2_hybrid.sim.config`.

Integration: fixed step dt (default 1/400 s), semi-implicit (symplectic) Euler with the drag
taken as the trapezoid over the step: nu_{k+1} = nu_k + dt nu_dot(eta_k, nu_k) / (1 + dt/2 * the
drag's slope), per DOF; position_{k+1} = position_k + dt R_k nu_1,{k+1};
attitude as a unit quaternion rotated by the exact exponential of omega_{k+1} dt (no
gimbal lock). :func:`~brov2_hybrid.sim.stepper.integrate` is the fast stepper (floats); it calls the same
acceleration function as the reference right-hand side
:func:`brov2_hybrid.sim.dynamics.rhs` and is tested against it integrated by scipy.
Thruster lag acts on the body wrench, in modal form, exactly for held commands.
"""
import math

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.jit import compile_family
from brov2_hybrid.validate import as_vector
from brov2_hybrid.physics.kinematics import J1, euler_angles, quaternion_from_euler
from brov2_hybrid.vehicle.thrust_table import interp_at
from brov2_hybrid.sim.config import load_sim_options, third_order_coefficients
from brov2_hybrid.sim.dynamics import body_acceleration, model_constants, model_params, stock_thrust_n
from brov2_hybrid.sim.thruster_lag import LAG_SETTLED, ModalLag
from brov2_hybrid.sim.stepper import compiled_integrate, compiled_tethered_steps, integrate, tethered_steps
from brov2_hybrid.sim.tether_model import Tether, integrate_tethered

class Plant(object):
    """The plant (the simulated vehicle's rigid body): motor PWMs in, state and sensor readings out.

    Parameters
    ----------
    vehicle : brov2_hybrid.vehicle.vehicle_file.Vehicle
        From :func:`brov2_hybrid.vehicle.vehicle_file.load_vehicle` (T, thrust table, T-hat, vehicle).
    options : SimOptions, optional
        Defaults to :func:`brov2_hybrid.sim.config.load_sim_options` (``params/simulator.yaml``).

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

    def __init__(self, vehicle, options=None):
        self.vehicle = vehicle
        self.options = (options if options is not None else load_sim_options()).validated()
        self.params = model_params(vehicle, self.options)
        self.dt_s = self.options.dt_s
        self.kind = self.params.kind
        thrusters = vehicle.thrusters
        self._pwm_limits = (float(thrusters.pwm_min_us), float(thrusters.pwm_max_us))
        self._neutral_us = float(thrusters.pwm_neutral_us)
        self.n_thrusters = vehicle.n_thrusters
        self._lag = None
        if self.options.thruster_lag == "first_order":
            tc = self.options.thruster_time_constant_s
            self._lag = ModalLag([1.0 / tc], [1.0, 1.0 / tc], self.dt_s, self.n_thrusters)
        elif self.options.thruster_lag == "third_order":
            num, den = third_order_coefficients(self.options)
            self._lag = ModalLag(num, den, self.dt_s, self.n_thrusters)
        self._rng = np.random.default_rng(self.options.seed)
        self._matrix = self.params.thruster_matrix
        self._io = io_kernels()
        self._constants = self._stepper_constants()
        #: Step with :func:`integrate` compiled by numba where available (same numbers); False:
        #: the Python function (the baseline the benchmarks compare with).
        self.compiled = True
        tether = self.options.tether     # self.tether: a Tether when SimOptions.tether is enabled, else None
        self.tether = Tether(tether, self.options.current_ned_m_s, vehicle.body.tether_attachment_m) \
            if tether is not None and tether.enabled else None
        compiled_integrate()      # compile (once per process) before the first step, not during it
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
        self._eta = None           # eta of the current state, computed on first access
        self._t0_s = float(t_s)
        self._steps = 0
        self._accel_body = None
        self.motor_pwm_us = np.full(self.n_thrusters, self._neutral_us)
        self._f_cmd = np.zeros(self.n_thrusters)
        if self._lag is not None:
            self._lag.reset(self._f_cmd)
        self._tau_ss = [0.0] * 6
        self._lag_terms = []
        self._lag_active = False
        if self.tether is not None:   # laid straight from the base to the vehicle
            self.tether.reset(self._x, self._t0_s)

    @property
    def t_s(self):
        """Simulated time [s] of the current state."""
        return self._t0_s + self._steps * self.dt_s

    @property
    def eta(self):
        """Pose (6,): NED position [m] and roll, pitch, yaw [rad] (ZYX Euler of body FRD in NED)."""
        if self._eta is None:      # once per state: the loop reads it for telemetry and its log
            x = self._x
            self._eta = np.array(x[0:3] + list(self._io["euler_angles"](np.array([x[4], x[5], x[6], x[3]]))))
        return self._eta.copy()

    @property
    def nu(self):
        """Body velocities (6,): u, v, w [m/s] and p, q, r [rad/s], body FRD."""
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
        """Actual thrust of each motor [N], shape (n,) (after the lag, if any)."""
        if self._lag is None:
            return self._f_cmd.copy()
        return self._lag.output()

    def specific_force_body(self):
        """What an accelerometer reads [m/s^2], body FRD: inertial acceleration minus gravity."""
        eta, nu = self.eta, self.nu
        nu_dot = body_acceleration(eta, nu, self.thruster_wrench(), self.params)
        inertial = nu_dot[:3] + np.cross(nu[3:6], nu[:3])
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
        """Hold one PWM [us] per motor (clamped to the table range) until the next call."""
        lo, hi = self._pwm_limits
        pwm_in = as_vector(pwm_us, self.n_thrusters, "pwm_us")
        if self.kind == "updated":
            table = self.vehicle.table
            pwm, f_cmd, tau = np.empty(self.n_thrusters), np.empty(self.n_thrusters), np.empty(6)
            self._io["steady_wrench"](pwm_in, lo, hi, table.pwm_us, table.force_n, table.slope_n_per_us, self._matrix,
                                      pwm, f_cmd, tau)
        else:
            pwm = np.minimum(np.maximum(pwm_in, lo), hi)   # np.clip's result, cheaper
            f_cmd = stock_thrust_n(pwm, self.params.stock)
            tau = self._matrix @ f_cmd
        self.motor_pwm_us = pwm
        self._f_cmd = f_cmd
        if self._lag is None:
            self._tau_ss = tau.tolist()
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

    # ---------------------------------------------------------------- a compiled loop's access
    def stepper_inputs(self):
        """What a compiled loop (:mod:`brov2_hybrid.loop.kernel`) needs to run this plant
        itself, or None where it cannot (the stock SITL model, a thruster lag, the Python stepper
        asked for): (state (13,) array, stepper constants, PWM limits (2,), thrust table
        (pwm, force, slopes), thruster matrix, noise settings (on, attitude, rate, depth std))."""
        if self.kind != "updated" or self._lag is not None or not self.compiled or compiled_integrate() is None:
            return None
        table, o = self.vehicle.table, self.options
        return (np.array(self._x), self._constants, self._pwm_limits, (table.pwm_us, table.force_n, table.slope_n_per_us),
                self._matrix, (bool(o.noise_enabled), float(o.attitude_noise_std_rad or 0.0),
                               float(o.rate_noise_std_rad_s or 0.0), float(o.depth_noise_std_m or 0.0)))

    def standard_normals(self, count):
        """``count`` standard normals from the plant's noise generator, as its sensor readings would
        draw them one reading at a time (a compiled loop draws a run's noise up front)."""
        return self._rng.standard_normal(int(count))

    def load_stepped(self, state, n_steps, motor_pwm_us, forces_n, tau):
        """Take the state a compiled loop left after ``n_steps`` more steps with the motors at
        ``motor_pwm_us`` (thrusts ``forces_n``, wrench ``tau``) [us, N, N m]."""
        self._x = [float(v) for v in state]
        self._eta = None
        self._steps += int(n_steps)
        self.motor_pwm_us = np.array(motor_pwm_us, dtype=float)
        self._f_cmd = np.array(forces_n, dtype=float)
        self._tau_ss = [float(v) for v in tau]

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
        if self.tether is not None:   # step by step with its pull (tethered_steps, compiled without a lag)
            run = compiled_tethered_steps() if terms is None and self.compiled else None
            self._x = integrate_tethered(self.tether, run or tethered_steps, self._x, n, self.dt_s, self._tau_ss,
                                         self._constants, terms)
        elif terms is None and self.compiled and compiled_integrate() is not None:
            self._x = compiled_integrate()(tuple(self._x), n, self.dt_s, tuple(self._tau_ss), self._constants, None)
        else:
            self._x = integrate(self._x, n, self.dt_s, self._tau_ss, self._constants, terms)
        self._eta = None
        self._steps += n
        if terms is not None:
            lag = self._lag
            lag.decay = [dec * d_k ** n for dec, d_k in zip(lag.decay, lag.step_factor)]
            if max(abs(term[1]) for term in terms) < LAG_SETTLED:
                self._lag_active = False  # settled: run on the steady wrench from now on

    def _stepper_constants(self):
        p = self.params
        cn, ce, cd = [float(a) for a in p.current_ned_m_s]
        return (model_constants(p), cn, ce, cd, bool(np.any(p.current_ned_m_s != 0.0)))


def physics_signature(vehicle, options):
    """A short hash of what the plant does: the state after 2 s of fixed motor PWMs from a fixed state,
    on ``vehicle`` with ``options`` (:class:`~brov2_hybrid.sim.config.SimOptions`). It changes when the
    stepper, the model or the vehicle file change what a flight gives, and not for a comment: a journal
    of flights keyed by it (``head-to-head --tune``) refuses to resume over other physics."""
    import hashlib
    plant = Plant(vehicle, options)
    plant.reset(eta=[0.0, 0.0, 10.0, 0.1, -0.1, 0.3], nu=[0.2, -0.1, 0.1, 0.2, -0.3, 0.4])
    n = len(plant.motor_pwm_us)
    plant.set_motor_pwm([1500.0 + 300.0 * math.sin(1.0 + 2.0 * i) for i in range(n)])
    plant.advance(2.0)
    state = list(plant.eta) + list(plant.nu)
    return hashlib.sha256(repr([float("%.12g" % x) for x in state]).encode()).hexdigest()[:16]


def steady_wrench(pwm_us, pwm_min_us, pwm_max_us, xp, fp, slopes, matrix, pwm_out, force_out, tau_out):
    """The updated model's motor input (a kernel): each PWM clipped to [pwm_min_us, pwm_max_us]
    into ``pwm_out``, its thrust from the T200 table (``xp`` [us], ``fp`` [N], ``slopes``;
    :func:`~brov2_hybrid.vehicle.thrust_table.interp_at`, np.interp's numbers) into ``force_out``
    [N], and the body wrench ``matrix`` @ thrusts (6,) into ``tau_out`` [N, N m]."""
    for i in range(len(pwm_us)):
        p = min(max(pwm_us[i], pwm_min_us), pwm_max_us)
        pwm_out[i] = p
        force_out[i] = interp_at(xp, fp, slopes, p)
    tau = matrix @ force_out
    for k in range(6):
        tau_out[k] = tau[k]


IO_KERNELS = (steady_wrench, interp_at, euler_angles)


def _probe_io(kernels):
    """True when the compiled plant input and attitude give the Python numbers (PWMs across the table, random attitudes)."""
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    table = load_vehicle().table
    rng = np.random.default_rng(5)
    matrix = np.asfortranarray(rng.normal(size=(6, 8)))     # the plant's thruster matrix is F-ordered
    for pwm in np.vstack([np.arange(1090.0, 1914.0).reshape(-1, 8), rng.uniform(1100.0, 1900.0, (20, 8))]):
        outs = []
        for run in (kernels["steady_wrench"], steady_wrench):
            out = (np.empty(8), np.empty(8), np.empty(6))
            run(pwm, 1100.0, 1900.0, table.pwm_us, table.force_n, table.slope_n_per_us, matrix, *out)
            outs.append(np.concatenate(out))
        if not np.array_equal(outs[0], outs[1]):
            return False
    return all(kernels["euler_angles"](q) == euler_angles(q) for q in rng.normal(size=(50, 4)))


def io_kernels():
    """{name: kernel} of the plant's input and attitude, compiled where numba is (else the Python functions)."""
    compiled = compile_family("plant_io", IO_KERNELS, _probe_io)
    return compiled if compiled else {f.__name__: f for f in IO_KERNELS}
