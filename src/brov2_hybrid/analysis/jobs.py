"""The experiments' worker jobs: one closed-loop (or open-loop) run each.

A job is a frozen dataclass (it pickles to a worker process or a Dask worker); its
``run_*_job`` function is module-level for the same reason and returns plain figures.
Each worker process builds its :class:`ClosedLoop` once per loop setting
(:func:`closed_loop_for`). :func:`step_sweep` runs a yaw step per omega_d through
``ctx.runner``, as the step, latency, compare-models, firmware and integral experiments do.
"""
from dataclasses import dataclass, replace

from brov2_hybrid.dive.dive_csv import load_dive_csv
from brov2_hybrid.params import DEFAULT_VEHICLE
from brov2_hybrid.analysis import metrics, sysid
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.dive.shapes import sine_dive, step_dive

_LOOPS = {}


def closed_loop_for(loop_settings):
    """The :class:`ClosedLoop` of these settings, built once per process and shared."""
    loop = _LOOPS.get(loop_settings)
    if loop is None:
        loop = _LOOPS[loop_settings] = ClosedLoop(loop_settings)
    return loop


@dataclass(frozen=True)
class LoopJob:
    """A run of the in-process loop: ``loop`` (its :class:`~brov2_hybrid.analysis.settings.LoopSettings`)
    at ``omega_d_rad_s`` [rad/s]. The experiments' jobs add what they fly and measure."""

    loop: object
    omega_d_rad_s: float

    def fly(self, dive, duration_s=None, **options):
        """Fly ``dive`` in this process's loop of ``self.loop`` at ``omega_d_rad_s``: the
        :class:`~brov2_hybrid.loop.closed_loop.LoopResult`. ``options``: more
        :meth:`ClosedLoop.run` keywords."""
        return closed_loop_for(self.loop).run(dive, duration_s, omega_d_rad_s=self.omega_d_rad_s, **options)

    def figures(self, result, **figures):
        """The job's result dict: its omega_d, ``figures`` (in order), then the run's
        simulated (``sim_s``) and computing (``wall_s``) time [s]."""
        out = {"omega_d": self.omega_d_rad_s}
        out.update(figures)
        out.update(sim_s=result.duration_s, wall_s=result.wall_s)
        return out


@dataclass(frozen=True)
class StepJob(LoopJob):
    """A yaw step of ``step_rad`` at ``step_time_s`` [s], ``duration_s`` [s] long, settling
    measured in the +-``band`` (fraction of the step)."""

    kappa: object  # None: params/controller.yaml
    step_rad: float
    step_time_s: float
    duration_s: float
    band: float
    controller_options: tuple = ()   # (name, value) pairs for HybridController.configure


def run_step_job(job):
    """Yaw step at one omega_d: settling time, overshoot, undershoot, rise time, the curve."""
    dive = step_dive(job.step_rad, job.step_time_s, job.duration_s, job.loop.desired_rate_hz)
    res = job.fly(dive, job.duration_s, kappa=job.kappa, controller_options=dict(job.controller_options))
    t, yaw = res.t_s, res.log["yaw_rad"]
    return job.figures(
        res, kappa=job.kappa,
        settling_s=metrics.settling_time(t, yaw, job.step_rad, job.step_time_s, band=job.band),
        overshoot_pct=metrics.overshoot(t, yaw, job.step_rad, job.step_time_s),
        undershoot_pct=metrics.undershoot(t, yaw, job.step_rad, job.step_time_s),
        rise_s=metrics.rise_time(t, yaw, job.step_rad, job.step_time_s),
        t_s=t, yaw_rad=yaw)


@dataclass(frozen=True)
class BodeJob(LoopJob):
    """A +-``amplitude_rad`` yaw sine of ``freq_hz``, ``duration_s`` [s] long, analysed from ``t_from_s`` [s]."""

    freq_hz: float
    amplitude_rad: float
    t_from_s: float
    duration_s: float


def run_bode_job(job):
    """One +-amplitude yaw sine: gain (half peak-to-peak ratio) and phase (peak times)."""
    dive = sine_dive(job.amplitude_rad, job.freq_hz, job.duration_s, job.loop.desired_rate_hz)
    res = job.fly(dive, job.duration_s)
    gain, phase = metrics.gain_phase(res.t_s, res.log["yaw_d_rad"], res.log["yaw_rad"],
                                     job.freq_hz, job.t_from_s)
    return job.figures(res, freq_hz=job.freq_hz, gain=gain, phase_rad=phase)


@dataclass(frozen=True)
class DiveJob(LoopJob):
    """The dive CSV ``dive_path`` flown to its end, the log written to ``log_path``."""

    dive_path: str
    log_path: str


def run_dive_job(job):
    """The full dive at one omega_d; the log is written to ``log_path`` and returned."""
    res = job.fly(load_dive_csv(job.dive_path), log_path=job.log_path)
    return job.figures(res, log=res.log, log_path=res.log_path)


@dataclass(frozen=True)
class SysidJob:
    """An open-loop run at constant yaw torque ``torque_nm`` [N m] in the vehicle model (no controller)."""

    torque_nm: float
    duration_s: float
    sample_period_s: float
    model: str
    mixer: str
    vehicle: str = DEFAULT_VEHICLE   # vehicle file name or path (LoopSettings.vehicle)


def run_sysid_job(job):
    """One open-loop constant-yaw-torque run in the vehicle model."""
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    options = replace(load_sim_options(), model=job.model)
    return sysid.simulate_runs([job.torque_nm], job.duration_s, job.sample_period_s, vehicle=load_vehicle(job.vehicle),
                               sim_options=options, mixer_kind=job.mixer)[0]


def step_sweep(ctx, loop, omegas, label, duration_s=None, kappa=None):
    """Yaw steps (``ctx.settings.step``) at each omega_d in ``loop`` on ``ctx.runner``: run_step_job results."""
    s = ctx.settings.step
    jobs = [StepJob(loop, w, kappa, s.step_rad, s.step_time_s, duration_s or s.duration_s, s.settle_band)
            for w in omegas]
    return ctx.runner.map(run_step_job, jobs, label)
