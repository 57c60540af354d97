"""Fast in-process closed loop: the ROS pipeline's pieces without ROS or sockets.

One control tick (default 50 Hz) does what the nodes do, with the same core objects:

    dive rows -> HybridController.update_desired (each new row, its own time stamp)
    latest attitude telemetry -> HybridController.compute -> u
    u -> output stage (brov2_hybrid.vehicle.firmware_output, as thruster_allocation) -> RC channel
      PWMs (integers) -> u as ArduSub reads it
      -> Vehicle.mixer(kind).pwm (Algorithm 2 default, stock Algorithm 1 option)
      -> motor PWMs (integers, as ArduSub outputs them) -> Plant.set_motor_pwm

and the plant integrates its own fixed steps (1/400 s) between events.

Where numba is, a run is one compiled call (:func:`brov2_hybrid.loop.kernel.fly`):
the same events and the same kernels the objects above call, the same rows bit for bit
(tested; probed before use). The stock SITL model, a thruster lag or a nonlinear allocator
run the tick loop in Python on the objects (``ClosedLoop.fly_kernel = False`` forces it).

Loop latency (docs/DESIGN.md section 8) is modelled with two :class:`~brov2_hybrid.sim.delay.DelayLine`:
attitude telemetry is sampled at ``telemetry_rate_hz`` and reaches the control law
``telemetry_delay_s`` later; a motor command reaches the motors ``command_delay_s``
after its tick. Delays are rounded to whole physics steps.

Each tick writes one row of :data:`brov2_hybrid.tick_log.logfile.LOG_COLUMNS` (returned as
arrays, optionally written as a CSV with :class:`~brov2_hybrid.tick_log.logfile.LogWriter`).
The attitude and rates in a row are the vehicle's true state at the tick (what the
response really was); the control law saw the delayed telemetry. Angles rad, NED/FRD.
"""
import collections
import math
import time
from dataclasses import replace

import numpy as np

from brov2_hybrid.control import law_kernels
from brov2_hybrid.control.depth_hold import HOLDING
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.dive.dive_csv import Dive
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.vehicle.firmware_output import output_stage
from brov2_hybrid.tick_log.logfile import LOG_COLUMNS, NUMERIC_COLUMNS, LogWriter
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from brov2_hybrid.params import load_controller_params
from brov2_hybrid.loop.settings import load_loop_settings

from brov2_hybrid.tick_log.columns import COL as _COL, DESIRED as _DESIRED, ACTUAL as _ACTUAL, RATES as _RATES, \
    LINEAR as _LINEAR, TAU as _TAU, U as _U, RC as _RC, PWM as _PWM, TETHER as _TETHER

def _plant_module():
    # Imported on first use so that the settings, metrics and LTI tools work on their own.
    from brov2_hybrid.sim import config, plant
    return config, plant


def _delay_module():
    from brov2_hybrid.sim import delay
    return delay


class LoopResult(object):
    """Per-tick log of one run: ``log`` is a dict of arrays keyed like :data:`LOG_COLUMNS`.

    Same layout as :func:`brov2_hybrid.tick_log.logfile.read_log`, so every metric works on a
    ROS log and an in-process run alike. ``settings`` is the :class:`LoopSettings` used,
    ``wall_s`` the computing time of the run.
    """

    def __init__(self, log, settings, omega_d_rad_s, wall_s=0.0, log_path=None):
        self.log = log
        self.settings = settings
        self.omega_d_rad_s = omega_d_rad_s
        self.wall_s = wall_s
        self.log_path = log_path

    @property
    def t_s(self):
        """Tick times [s] (the ``time_s`` column), from 0."""
        return self.log["time_s"]

    @property
    def duration_s(self):
        """Simulated span of the run [s]: last tick time minus the first (0 for an empty log)."""
        return float(self.t_s[-1] - self.t_s[0]) if len(self.t_s) else 0.0


class ClosedLoop(object):
    """The hybrid autopilot and the plant in one process.

    Parameters
    ----------
    settings : LoopSettings, optional
        Rates, latency, mixer and model (default: ``params/analysis.yaml`` values).
    vehicle : brov2_hybrid.vehicle.vehicle_file.Vehicle, optional
    controller_params : brov2_hybrid.params.ControllerParams, optional
    sim_options : brov2_hybrid.sim.config.SimOptions, optional
        Simulator options (default: ``load_sim_options()``); ``settings.model`` wins
        over ``sim_options.model``.
    plant_vehicle : brov2_hybrid.vehicle.vehicle_file.Vehicle, optional
        The vehicle the simulator flies when it differs from the one the controller
        is tuned for (model mismatch; default: ``vehicle``).
    """

    def __init__(self, settings=None, vehicle=None, controller_params=None, sim_options=None, rc_map=None,
                 plant_vehicle=None):
        self.settings = settings or load_loop_settings()
        self.vehicle = vehicle or load_vehicle(self.settings.vehicle)
        self.controller_params = controller_params or load_controller_params()
        self.rc_map = rc_map or self.vehicle.rc_map
        self.mixer = self.vehicle.mixer(self.settings.mixer)
        stage = self.settings.mixer if self.settings.output_stage == "auto" else self.settings.output_stage
        self.output = output_stage(stage, self.vehicle, self.rc_map)
        if self.output.firmware != self.settings.mixer:
            raise Brov2Error("output_stage %r drives %s firmware, but the loop's mixer is %r"
                             % (stage, self.output.firmware, self.settings.mixer))
        sim_config, plant_module = _plant_module()
        options = sim_options if sim_options is not None else sim_config.load_sim_options()
        self.sim_options = replace(options, model=self.settings.model)
        self.plant = plant_module.Plant(plant_vehicle or self.vehicle, self.sim_options)
        self.dt_s = float(self.sim_options.dt_s)
        self.steps_per_tick = self._steps(1.0 / self.settings.control_rate_hz, "control period", exact=True)
        self.steps_per_sample = self._steps(1.0 / self.settings.telemetry_rate_hz, "telemetry period", exact=True)
        self.telemetry_delay_steps = self._steps(self.settings.telemetry_delay_s, "telemetry delay")
        self.command_delay_steps = self._steps(self.settings.command_delay_s, "command delay")
        #: The compiled run (:func:`~brov2_hybrid.loop.kernel.fly`) to fly with; None: the
        #: compiled one where numba is; False: always the Python tick loop.
        self.fly_kernel = None

    def _steps(self, duration_s, name, exact=False):
        n = duration_s / self.dt_s
        k = int(round(n))
        if exact and (k < 1 or abs(n - k) > 1e-6):
            raise Brov2Error("%s: expected a whole number (>= 1) of physics steps of %g s, got %g s"
                             % (name, self.dt_s, duration_s))
        return k

    def new_controller(self, omega_d_rad_s=None, kappa=None, options=None):
        """A fresh HybridController (params/controller.yaml), optionally retuned;
        ``options``: more :meth:`HybridController.configure` keywords (e.g. integral_enabled)."""
        c = HybridController(self.vehicle.body, self.controller_params, self.vehicle.tau_max, self.vehicle.passive_dofs)
        c.configure(omega_d_rad_s=omega_d_rad_s, kappa=kappa, **(options or {}))
        return c

    def run(self, dive, duration_s=None, omega_d_rad_s=None, log_path=None, initial_eta=None, kappa=None,
            controller_options=None, ticks=None, retunes=()):
        """Fly ``dive`` (a :class:`~brov2_hybrid.dive.dive_csv.Dive`) and return a :class:`LoopResult`.

        Parameters
        ----------
        duration_s : float, optional
            Run length [s] from the dive's first time (default: the dive's duration).
        omega_d_rad_s, kappa : float, optional
            Controller settings (default: ``params/controller.yaml``).
        log_path : str, optional
            Also write the rows to this CSV (never overwritten: a suffix is added).
        initial_eta : array_like (6,), optional
            Start pose (default: at ``initial_depth_m``, attitude of the dive's first row).
        controller_options : dict, optional
            More :meth:`HybridController.configure` keywords (e.g. ``integral_enabled``).
        ticks : callable, optional
            ``ticks(loop, dive, controller, rows)`` runs the tick loop instead of the loop's own,
            filling ``rows``: the benchmark's baseline, the loop as first written
            (:func:`brov2_hybrid.bench.reference_loop.reference_ticks`), which tests and
            ``make bench`` hold the loop to (same rows).
        retunes : sequence of (t_s, dict), optional
            Live retunes: at the first tick at or after ``t_s`` [s] the controller is
            reconfigured with the dict's :meth:`HybridController.configure` keywords, as the
            control_law node does on a dynamic_reconfigure request (flown by the Python tick loop).
        """
        wall0 = time.perf_counter()
        if not isinstance(dive, Dive):
            raise Brov2Error("dive: expected a brov2_hybrid.dive.dive_csv.Dive, got %r" % type(dive).__name__)
        duration = dive.duration_s if duration_s is None else float(duration_s)
        if duration <= 0.0:
            raise Brov2Error("duration_s: expected > 0, got %r" % duration)
        controller = self.new_controller(omega_d_rad_s, kappa, controller_options)
        if initial_eta is None:
            initial_eta = np.concatenate([[0.0, 0.0, self.settings.initial_depth_m], dive.eta2d_rad[0]])
        self.plant.reset(eta=np.asarray(initial_eta, dtype=float), nu=np.zeros(6), t_s=0.0)
        self.plant.set_motor_pwm(np.full(self.vehicle.n_thrusters, self.mixer.table.neutral_us))
        n_ticks = int(math.floor(duration / (self.steps_per_tick * self.dt_s) + 1e-9)) + 1
        rows = np.zeros((n_ticks, len(NUMERIC_COLUMNS)))
        rows[:, _COL["omega_d_rad_s"]] = controller.gains.omega_d_rad_s
        rows[:, _COL["depth_setpoint_m"]] = math.nan     # written by ticks that hold depth
        rows[:, _TETHER] = math.nan                       # written by ticks on a tether
        if ticks is not None:
            ticks(self, dive, controller, rows)
        elif retunes:
            self._python_ticks(dive, controller, rows, sorted(retunes, key=lambda r: r[0]))
        else:
            self._ticks(dive, controller, rows)
        log = {name: rows[:, k] for k, name in enumerate(NUMERIC_COLUMNS)}
        log["mode"] = [self.settings.mode_label] * n_ticks
        written = None
        if log_path:
            written = write_log(log_path, log)
        return LoopResult(log, self.settings, controller.gains.omega_d_rad_s,
                          time.perf_counter() - wall0, written)

    def _ticks(self, dive, controller, rows):
        """Fill ``rows`` (one per control tick), stepping the vehicle between events: compiled
        (:mod:`~brov2_hybrid.loop.kernel`) where it covers the loop, else in Python."""
        from brov2_hybrid.loop import kernel as loop_kernel
        fly = loop_kernel.compiled_fly(probe_fly) if self.fly_kernel is None else self.fly_kernel
        if controller.depth_hold.enabled or controller.predictor.enabled or not (
                fly and loop_kernel.fly_loop(self, fly, dive, controller, rows)):
            self._python_ticks(dive, controller, rows)

    def tick_columns(self):
        """Indices of the log columns a tick writes, in the order the tick lists its values."""
        return np.array([0] + _DESIRED + _ACTUAL + _RATES + _LINEAR + _TAU + _U + _RC
                        + _PWM[:self.vehicle.n_thrusters] + [_COL["depth_m"]])

    @staticmethod
    def tether_columns():
        """Indices of the log's tether force columns (north, east, down [N]), written by ticks on a tether."""
        return np.array(_TETHER)

    def _python_ticks(self, dive, controller, rows, retunes=()):
        """:meth:`_ticks` in Python: the tick loop on the objects (with :meth:`run`'s ``retunes``).

        With the depth hold on, each telemetry sample also carries the plant's depth reading
        (:meth:`~brov2_hybrid.sim.plant.Plant.depth_m`, noisy as the plant's sensor) with its time,
        delayed like the attitude and handed to :meth:`HybridController.measure_depth`."""
        retunes = collections.deque(retunes)
        delay = _delay_module()
        dt = self.dt_s
        telemetry = delay.DelayLine(self.telemetry_delay_steps * dt)
        commands = delay.DelayLine(self.command_delay_steps * dt)
        plant, output = self.plant, self.output
        n_ticks = len(rows)
        half = 0.5 * dt  # times are whole steps: half a step of slack absorbs rounding
        dive_t = (dive.t_s - float(dive.t_s[0])).tolist()
        n_rows = len(dive_t)
        next_row = 0
        eta2d = dive.eta2d_rad[0]
        u_lin = dive.u_linear[0]
        pending = collections.deque()  # physics steps at which a delayed command becomes due
        step, tick, next_sample = 0, 0, 0
        steps_per_tick, steps_per_sample, command_delay = self.steps_per_tick, self.steps_per_sample, \
            self.command_delay_steps
        # the log's rc1..rc6 columns from the channel PWMs per DOF of u
        by_channel = [self.rc_map.channels.index(ch) for ch in range(1, 7)]
        tau_max = self.vehicle.tau_max
        torque = controller.torque
        normalized = law_kernels.kernels()["normalized_command"]
        saturated = np.empty(6)
        zeros = np.zeros(6)
        # One fancy-indexed write per row: the columns in the order the values are listed.
        written = self.tick_columns()
        next_tick = 0
        while tick < n_ticks:
            t = step * dt
            if step == next_tick:      # a retune first: one switching the depth hold on sees this sample's depth
                while retunes and retunes[0][0] <= t + half:
                    controller.configure(**retunes.popleft()[1])
                    rows[tick:, _COL["omega_d_rad_s"]] = controller.gains.omega_d_rad_s
            if step == next_sample:
                sample = plant.measured_attitude()
                if controller.depth_hold.enabled:
                    sample += (t, plant.depth_m())
                telemetry.push(t, sample)
                next_sample += steps_per_sample
            if step == next_tick:
                while next_row < n_rows and dive_t[next_row] <= t + half:
                    controller.update_desired(dive_t[next_row], dive.eta2d_rad[next_row])
                    eta2d, u_lin = dive.eta2d_rad[next_row], dive.u_linear[next_row]
                    next_row += 1
                seen = telemetry.get(t + half)
                if seen is None:  # no attitude yet: neutral, as the nodes do
                    tau = u = zeros
                else:
                    if len(seen) > 2:
                        controller.measure_depth(seen[2], seen[3])
                    # compute()'s tau on the checked arrays of the dive and the plant; the attitude's age:
                    # the telemetry delay and the time since the newest sample it lets through was taken
                    taken = ((step - self.telemetry_delay_steps) // steps_per_sample) * steps_per_sample
                    tau = torque(eta2d, u_lin, seen[0], seen[1], None, t, (step - taken) * dt)
                    if controller.depth_hold.status == HOLDING:
                        rows[tick, _COL["depth_setpoint_m"]] = controller.depth_hold.setpoint_m
                    u = np.empty(6)
                    normalized(tau, tau_max, u, saturated)      # normalize(), as thruster_allocation forms u
                rc, pwm = output.rc_and_motor_pwm_of(u)
                commands.push(t, pwm)
                pending.append(step + command_delay)
                eta, nu = plant.eta, plant.nu
                rows[tick, written] = ([t] + eta2d.tolist() + eta[3:6].tolist() + nu[3:6].tolist() + u_lin.tolist()
                                       + tau.tolist() + u.tolist() + rc[by_channel].tolist() + pwm.tolist()
                                       + [plant.depth_m()])
                if plant.tether is not None:
                    rows[tick, _TETHER] = plant.tether.force_ned()
                tick += 1
                next_tick += steps_per_tick
            if pending and pending[0] <= step:
                while pending and pending[0] <= step:
                    pending.popleft()
                plant.set_motor_pwm(commands.get(t + half))
            if tick >= n_ticks:
                break
            nxt = next_sample if next_sample < next_tick else next_tick
            if pending and pending[0] < nxt:
                nxt = pending[0]
            plant.step(nxt - step)
            step = nxt


def _same(a, b):
    """Equal arrays, NaN equal to NaN (no setpoint in the depth column); numpy < 1.19 has no equal_nan."""
    a, b = np.asarray(a), np.asarray(b)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    return np.array_equal(nan_a, nan_b) and np.array_equal(a[~nan_a], b[~nan_b])


def probe_fly(compiled):
    """True when the compiled run writes the Python tick loop's rows: 2 s of the yaw step with
    sensor noise, latency, integral action and the reference feed-forward, on each firmware (the
    compensated stage on stock), and on the paper's firmware on the simulator's tether in a current."""
    from brov2_hybrid.dive.shapes import step_dive
    sim_config, _ = _plant_module()
    options = replace(sim_config.load_sim_options(), noise_enabled=True, attitude_noise_std_rad=0.003,
                      rate_noise_std_rad_s=0.01, depth_noise_std_m=0.01, seed=3)
    settings = load_loop_settings()
    dive = step_dive(0.8, 0.5, 2.0, settings.desired_rate_hz)
    tethered = replace(options, current_ned_m_s=np.array([0.2, 0.1, 0.0]), tether=options.tether.with_changes(enabled=True))
    for mixer, sim_options in (("quantitative", options), ("stock", options), ("quantitative", tethered)):
        logs = []
        for fly in (compiled["fly"], False):
            loop = ClosedLoop(replace(settings, mixer=mixer, telemetry_delay_s=0.02, command_delay_s=0.01),
                              sim_options=sim_options)
            loop.fly_kernel = fly
            logs.append(loop.run(dive, omega_d_rad_s=3.0, controller_options={"integral_enabled": True,
                                                                              "reference_feedforward_enabled": True}).log)
        if not all(_same(logs[0][k], logs[1][k]) for k in logs[1] if k != "mode"):
            return False
    return True


def write_log(path, log):
    """Write a log dict (as returned in :class:`LoopResult`) with LogWriter; return the path used."""
    n = len(log["time_s"])
    with LogWriter(path) as writer:
        for k in range(n):
            writer.write({c: (log[c][k]) for c in LOG_COLUMNS})
        return writer.path
