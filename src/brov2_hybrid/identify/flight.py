"""The identification flight in the in-process closed loop (:class:`~brov2_hybrid.loop.closed_loop.ClosedLoop`).

The loop is the ROS pipeline's pieces without ROS: the control law holds the attitudes,
the output stage and the firmware's mixer turn the command into motor PWMs, the plant
(:mod:`brov2_hybrid.sim.plant`) flies. :class:`ExcitingController` wraps the
:class:`~brov2_hybrid.control.law.HybridController`: while the schedule
(:mod:`brov2_hybrid.identify.schedule`) drives an attitude axis open loop, that axis's
torque is the schedule's instead of the PD law's (the others stay closed loop); heave is
open loop anyway and comes from the dive's heave command.

The log is written as the sensors report it: with the simulator's sensor noise on, the
logged attitude, rates and depth carry that noise (the loop's own log holds the true
state), and the depth arrives as the vehicle streams it through ROS (10 Hz, whole
millimetres, late: :class:`DepthStream`), so the fit sees what it would see on a vehicle.
"""
import math
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid.identify.schedule import HEAVE
from brov2_hybrid.tick_log.logfile import ATTITUDE_COLUMNS, RATE_COLUMNS


class DepthKeeper(object):
    """Keeps the depth between the blocks (heave is open loop in the hybrid autopilot, and a vehicle
    a few newtons off neutral buoyancy would otherwise leave the water or sink during the flight).

    PD on the depth reading: force (+ down) [N] = kp (depth_ref - depth) - kd d(depth)/dt, the
    rate a first-order filtered difference (time constant ``rate_filter_s``), clipped to
    +-``max_force_n``. ``depth_m``: a callable giving the depth sensor's reading [m, + down];
    ``depth_ref`` is the first reading.
    """

    def __init__(self, depth_m, kp_n_per_m, kd_n_s_per_m, rate_filter_s, max_force_n):
        self.depth_m = depth_m
        self.kp, self.kd = float(kp_n_per_m), float(kd_n_s_per_m)
        self.rate_filter_s, self.max_force_n = float(rate_filter_s), float(max_force_n)
        self.depth_ref = None
        self._last = None
        self._rate = 0.0

    def force(self, t_s):
        """Heave force [N, + down] at time ``t_s`` [s] from the current depth reading."""
        z = float(self.depth_m())
        if self.depth_ref is None:
            self.depth_ref = z
        if self._last is not None and t_s > self._last[0]:
            dt = t_s - self._last[0]
            a = dt / (self.rate_filter_s + dt)
            self._rate += a * ((z - self._last[1]) / dt - self._rate)
        self._last = (t_s, z)
        f = self.kp * (self.depth_ref - z) - self.kd * self._rate
        return min(max(f, -self.max_force_n), self.max_force_n)


class Exciter(object):
    """The schedule's open-loop inputs on top of the law's torque: one instance per flight.

    ``schedule``: a :class:`~brov2_hybrid.identify.schedule.Schedule`; ``depth_keeper``: a
    :class:`DepthKeeper` or None. An open-loop pulse group is abandoned (the PD law keeps the
    axis until the group ends) once roll or pitch strays past the schedule's guard angle from
    its desired attitude. Times [s] from the start of the schedule.
    """

    def __init__(self, schedule, depth_keeper=None):
        self.schedule = schedule
        self.depth_keeper = depth_keeper
        self.abandoned_groups = set()

    def torque(self, t_s, tau, eta2, eta2d):
        """``tau`` (6,) [N, N m] (the law's; changed in place and returned) with the scheduled attitude
        axis replaced by the schedule's torque and, outside the heave steps, heave by the depth keeper's
        force; ``eta2``, ``eta2d`` (3,) the measured and desired attitude [rad]."""
        seg = self.schedule.at(t_s)
        if self.depth_keeper is not None and seg.dof != HEAVE:
            tau[HEAVE] = self.depth_keeper.force(t_s)
        if 3 <= seg.dof <= 5 and seg.group not in self.abandoned_groups:
            axis = seg.dof - 3
            error = math.atan2(math.sin(eta2[axis] - eta2d[axis]), math.cos(eta2[axis] - eta2d[axis]))
            if axis < 2 and abs(error) > self.schedule.guard_rad:
                self.abandoned_groups.add(seg.group)
            else:
                tau[seg.dof] = seg.value
        return tau


class ExcitingController(object):
    """A HybridController whose torque goes through an :class:`Exciter` (``base``: the
    :class:`~brov2_hybrid.control.law.HybridController`; ``exciter``: the Exciter)."""

    def __init__(self, base, exciter):
        self.base = base
        self.exciter = exciter
        self.gains = base.gains

    @property
    def depth_hold(self):
        """The wrapped law's depth hold (the loop asks whether it is on; the flight keeps depth by its
        :class:`DepthKeeper` instead)."""
        return self.base.depth_hold

    @property
    def predictor(self):
        """The wrapped law's delay compensation (the loop asks whether it is on)."""
        return self.base.predictor

    @property
    def abandoned_groups(self):
        """Pulse groups the guard abandoned."""
        return self.exciter.abandoned_groups

    def update_desired(self, t_s, eta2d):
        """Feed the desired attitude to the wrapped law's rate estimator."""
        self.base.update_desired(t_s, eta2d)

    def torque(self, eta2d, u_linear, eta2, nu2, eta2d_dot, t_s, attitude_age_s=0.0):
        """The wrapped law's tau (6,) [N, N m] through the exciter."""
        return self.exciter.torque(t_s, self.base.torque(eta2d, u_linear, eta2, nu2, eta2d_dot, t_s, attitude_age_s),
                                   eta2, eta2d)


class ExcitationLoop(ClosedLoop):
    """:class:`~brov2_hybrid.loop.closed_loop.ClosedLoop` flying a schedule: its controller is an
    :class:`ExcitingController` and it runs the Python tick loop (the compiled run knows the
    plain law only). Keywords as ClosedLoop's."""

    def __init__(self, schedule, **kwargs):
        super(ExcitationLoop, self).__init__(**kwargs)
        self.schedule = schedule
        self.fly_kernel = False
        self.last_controller = None
        #: (kp, kd, rate filter, max force) of the :class:`DepthKeeper`, or None for none
        self.depth_keeper_gains = None

    def new_controller(self, omega_d_rad_s=None, kappa=None, options=None):
        """An :class:`ExcitingController` around the law ClosedLoop would build."""
        base = super(ExcitationLoop, self).new_controller(omega_d_rad_s, kappa, options)
        keeper = None
        if self.depth_keeper_gains is not None:
            keeper = DepthKeeper(self.plant.depth_m, *self.depth_keeper_gains)
        self.last_controller = ExcitingController(base, Exciter(self.schedule, keeper))
        return self.last_controller


@dataclass(frozen=True)
class DepthStream:
    """How the vehicle's depth reaches the log (``depth_stream`` of ``params/identify.yaml``): sampled at
    ``rate_hz``, rounded to ``resolution_m``, logged ``latency_s`` after it was sampled."""

    rate_hz: float
    resolution_m: float
    latency_s: float


def load_depth_stream(path=None):
    """:class:`DepthStream` from ``path`` (default ``params/identify.yaml``)."""
    path = path or paths.params_path("identify.yaml")
    s = Section(load_yaml(path), path, "depth_stream")
    return DepthStream(s.positive("rate_hz"), s.positive("resolution_m"), s.number("latency_s", 0.0))


def depth_as_streamed(t_s, depth_m, stream):
    """(n,) the depth [m] a log with rows at ``t_s`` (n,) [s] holds when the true depth ``depth_m`` (n,) is
    streamed as ``stream`` (:class:`DepthStream`): each sample (every 1 / rate_hz from the first row, the
    depth interpolated there, rounded to resolution_m) is held from the first row at least latency_s
    after it was taken; rows before the first arrival are NaN."""
    t = np.asarray(t_s, dtype=float)
    z = np.asarray(depth_m, dtype=float)
    sample_t = np.arange(t[0], t[-1] + 1e-9, 1.0 / stream.rate_hz)
    sample_z = np.round(np.interp(sample_t, t, z) / stream.resolution_m) * stream.resolution_m
    arrived = np.searchsorted(sample_t + stream.latency_s, t + 1e-9, side="right") - 1
    return np.where(arrived >= 0, sample_z[np.maximum(arrived, 0)], np.nan)


def with_sensor_noise(log, sim_options, seed_offset=1, depth_stream=None):
    """A copy of ``log`` with the simulator's sensor noise on attitude [rad], rates [rad/s] and depth [m]
    (``sim_options``: :class:`~brov2_hybrid.sim.config.SimOptions`; nothing added when its noise is off),
    the depth then delivered as ``depth_stream`` (:class:`DepthStream`; None: every row, as it is)."""
    out = dict(log)
    if not sim_options.noise_enabled:
        return _streamed(out, depth_stream)
    rng = np.random.default_rng(int(sim_options.seed) + seed_offset)
    n = len(log["time_s"])
    for columns, std in ((ATTITUDE_COLUMNS, sim_options.attitude_noise_std_rad),
                         (RATE_COLUMNS, sim_options.rate_noise_std_rad_s),
                         (("depth_m",), sim_options.depth_noise_std_m)):
        for c in columns:
            out[c] = np.asarray(log[c], dtype=float) + rng.normal(0.0, float(std or 0.0), n)
    yaw = out[ATTITUDE_COLUMNS[2]]
    out[ATTITUDE_COLUMNS[2]] = np.arctan2(np.sin(yaw), np.cos(yaw))
    return _streamed(out, depth_stream)


def _streamed(log, depth_stream):
    if depth_stream is not None:
        log["depth_m"] = depth_as_streamed(log["time_s"], log["depth_m"], depth_stream)
    return log


def fly_schedule(schedule, plant_vehicle, vehicle=None, loop_settings=None, sim_options=None, log_path=None,
                 depth_keeper=None):
    """Fly ``schedule`` on ``plant_vehicle`` (the vehicle as it is) with the attitude held by the law tuned
    for ``vehicle`` (what is known before; default: ``plant_vehicle``).

    ``loop_settings``: :class:`~brov2_hybrid.analysis.settings.LoopSettings` (default
    ``params/analysis.yaml``); ``sim_options``: the simulator's (default ``params/simulator.yaml``
    with its sensor noise switched on); ``depth_keeper``: (kp, kd, rate filter, max force) of
    the :class:`DepthKeeper` (default: the schedule's). Returns (log dict as the sensors report it,
    :class:`~brov2_hybrid.loop.closed_loop.LoopResult` of the true states, the loop).
    """
    from brov2_hybrid.sim.config import load_sim_options
    if sim_options is None:
        sim_options = replace(load_sim_options(), noise_enabled=True)
    loop = ExcitationLoop(schedule, settings=loop_settings, vehicle=vehicle or plant_vehicle,
                          sim_options=sim_options, plant_vehicle=plant_vehicle)
    loop.depth_keeper_gains = depth_keeper if depth_keeper is not None else schedule.depth_keeper
    dive = schedule.dive(loop.settings.desired_rate_hz, loop.vehicle.tau_max)
    result = loop.run(dive, duration_s=schedule.duration_s)
    log = with_sensor_noise(result.log, loop.sim_options, depth_stream=load_depth_stream())
    if log_path:
        from brov2_hybrid.loop.closed_loop import write_log
        log["mode"] = result.log["mode"]
        result.log_path = write_log(log_path, log)
    return log, result, loop
