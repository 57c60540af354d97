"""One head-to-head flight as a worker job: a fresh ArduSub SITL on our physics, one pilot with one
stored setting, one dive (:class:`FlightJob`, :func:`run_flight_job`).

Jobs are frozen dataclasses and the worker a module-level function, so that
:class:`~brov2_hybrid.analysis.runner.Runner` spreads them over local processes (``--jobs``) or a
Dask cluster (``--dask``); each flight takes a free SITL instance
(:func:`~brov2_hybrid.sim.ardusub_sitl.free_instance`), so flights run side by side.

Like for like: ArduSub's attitude controller flies in ALT_HOLD (it takes an absolute attitude there
only: :mod:`brov2_hybrid.analysis.ardusub_flight`), which holds depth; so the hybrid always flies with
its depth hold on, and both take the heave stick as a depth rate: ArduSub's PILOT_SPEED_UP / _DN are
set to the depth hold's ``max_depth_rate_m_s`` (as ``brov2-analyze depth-hold-compare`` does).

Only real flights count: :func:`~brov2_hybrid.analysis.ardusub_fly.run_on` refuses a run that was not
armed in the pilot's mode throughout, whose motors did not follow, that rose above
``ardusub.min_depth_m`` or whose reader fell behind; a refused flight is flown again on a fresh SITL
up to ``max_attempts`` times, and every refusal is kept with its reason.
"""
import math
import types
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid.analysis.ardusub_experiment import new_flight, power_table
from brov2_hybrid.analysis.ardusub_fly import run_on
from brov2_hybrid.analysis.ardusub_pilots import ArduSubAttitudePilot, HybridPilot
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.head_to_head.inputs import with_descent
from brov2_hybrid.head_to_head.scoring import flight_row
from brov2_hybrid.tick_log.logfile import NUMERIC_COLUMNS
from brov2_hybrid.head_to_head.stored import ARDUSUB_PLACEMENT
from brov2_hybrid.vehicle.mixers import STOCK

HYBRID, ARDUSUB = "hybrid", "ardusub"
#: ArduSub's climb-rate parameters [cm/s], set to the hybrid depth hold's full-stick rate.
CLIMB_RATE_PARAMS = ("PILOT_SPEED_UP", "PILOT_SPEED_DN")


def fresh_sitl_settings(cs, s):
    """The ``ardusub`` section ``cs`` for flights each on a fresh SITL booted at ``s.start_depth_m``: never
    carried down before the run (no ``redive``): carried down, ArduSub's depth estimate lags the jump by
    seconds, and a depth hold engaged on it (the hybrid's) would chase the lag. Each flight descends itself
    (:func:`~.inputs.with_descent`)."""
    return replace(cs, start_depth_m=s.start_depth_m, redive_m=math.inf)


@dataclass(frozen=True)
class FlightJob:
    """One flight: ``pilot`` (:data:`HYBRID` | :data:`ARDUSUB`) with the setting ``setting`` (its
    label) in ``placement`` (a :class:`~.stored.Placement`, None for ArduSub), on ``dive`` (a Dive
    named ``dive_name``), trial number ``trial``.

    ``values``: ArduSub's parameters ((name, value), ...) or the hybrid's configure keywords;
    ``loop``: the analysis loop settings (vehicle, model); ``cs``: the ``ardusub`` section
    (speedup, boot wait, refusal bounds) with ``start_depth_m`` the flights' start depth;
    ``depth_rate_m_s``: full heave stick's depth rate [m/s]; ``pilot_link_s``: for ArduSub, how late the
    pilot's input reaches it from the surface [s] (the hybrid's comes with its placement);
    ``translations_as_stock``: the hybrid's surge and sway command is the force stock ArduSub's mixer
    gives the same sticks (:class:`~brov2_hybrid.analysis.ardusub_pilots.HybridPilot`)."""

    pilot: str
    placement: object
    setting: str
    values: tuple
    dive_name: str
    dive: object
    trial: int
    loop: object
    cs: object
    depth_rate_m_s: float
    max_attempts: int = 1
    descent_s: float = 0.0
    settle_s: float = 0.0
    pilot_link_s: float = 0.0
    translations_as_stock: bool = False

    @property
    def placement_name(self):
        """The placement column: the hybrid's placement, or ``ardusub`` (on board)."""
        return ARDUSUB_PLACEMENT if self.placement is None else self.placement.name

    @property
    def pilot_link_ms(self):
        """The pilot_link_ms column: how late the pilot's input reaches the vehicle [ms] (the hybrid's
        placement's link; ArduSub's ``pilot_link_s``)."""
        return 1000.0 * (self.pilot_link_s if self.placement is None else self.placement.pilot_link_s)


def _context(loop):
    """What :func:`~brov2_hybrid.analysis.ardusub_experiment.new_flight` reads of a Context."""
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    return types.SimpleNamespace(loop=loop, vehicle=load_vehicle(loop.vehicle))


def make_pilot(job, vehicle):
    """The pilot of ``job`` for ``vehicle``: the hybrid (stock-compensated output stage, the
    placement's delays, depth hold on, the setting's options) or ArduSub's attitude controller."""
    if job.pilot == ARDUSUB:
        return ArduSubAttitudePilot(vehicle.rc_map, job.pilot_link_s)
    if job.pilot != HYBRID:
        raise Brov2Error("FlightJob.pilot: expected %r or %r, got %r" % (HYBRID, ARDUSUB, job.pilot))
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    loop = ClosedLoop(replace(job.loop, mixer=STOCK, output_stage="stock"), vehicle)
    options = dict(job.values)
    # the delay compensation predicts over the placement's command delay unless the setting says otherwise
    options.setdefault("delay_compensation_command_delay_s", job.placement.command_delay_s)
    controller = loop.new_controller(float(options.pop("omega_d_rad_s")))
    controller.configure(depth_hold_enabled=True, **options)
    return HybridPilot(controller, loop.output, vehicle.tau_max, job.placement.telemetry_delay_s,
                       job.placement.command_delay_s, job.placement.reference_delay_s,
                       translations_as_stock=job.translations_as_stock)


def fly_once(job, ctx):
    """One attempt of ``job`` on a fresh SITL: its figures (:func:`~.scoring.flight_row`) over the dive
    (after the descent and settling of :func:`~.inputs.with_descent`, which are flown, not scored).
    Raises Brov2Error (FlightRefused among them) when the flight does not count: not armed in the pilot's
    mode throughout, motors that did not follow, the reader more than ``max_reader_lag_s`` behind, or
    the vehicle above ``min_depth_m`` during the dive."""
    plan, t_dive = with_descent(job.dive, job.descent_s, job.settle_s)
    flight = new_flight(ctx, job.cs, job.cs.start_depth_m)
    try:
        pilot = make_pilot(job, ctx.vehicle)
        if job.pilot == ARDUSUB:
            for name, value in tuple(job.values) + tuple((n, 100.0 * job.depth_rate_m_s) for n in CLIMB_RATE_PARAMS):
                flight.set_param(name, value)
        else:
            flight.message_interval("ATTITUDE", job.placement.telemetry_rate_hz)
        log, truth = run_on(flight, pilot, plan, relative_yaw=False)
    finally:
        flight.close()
    lag = float(np.max(log["reader_lag_s"]))
    if lag > job.cs.max_reader_lag_s:
        raise Brov2Error("the attitude reader fell %.3f s behind ArduSub (bound %.3f s, ardusub.max_reader_lag_s): "
                         "the machine is too busy" % (lag, job.cs.max_reader_lag_s))
    keep = np.asarray(log["time_s"]) >= t_dive - 1e-9
    dive_log = {k: np.asarray(v)[keep] for k, v in log.items() if k in NUMERIC_COLUMNS}
    dive_log["time_s"] = dive_log["time_s"] - t_dive
    shallowest = float(np.min(dive_log["depth_m"]))
    if shallowest < job.cs.min_depth_m:
        raise Brov2Error("the vehicle rose to %.2f m during the dive (bound %.2f m, ardusub.min_depth_m): not "
                         "submerged throughout" % (shallowest, job.cs.min_depth_m))
    return flight_row(dive_log, truth[keep], float(dive_log["depth_m"][0]), job.depth_rate_m_s,
                      power_table(ctx.vehicle))


def run_flight_job(job):
    """Fly ``job`` until a flight counts or ``max_attempts`` are spent.

    Returns {"row": the fronts.csv row (dict) or None, "refusals": [reason, ...]}."""
    ctx = _context(job.loop)
    refusals = []
    for attempt in range(1, job.max_attempts + 1):
        try:
            figures = fly_once(job, ctx)
        except (Brov2Error, OSError) as exc:     # refused, or ArduSub / its link failed: not a flight
            refusals.append("%s: %s" % (type(exc).__name__, exc))
            continue
        row = {"pilot": job.pilot, "placement": job.placement_name, "setting": job.setting,
               "pilot_link_ms": job.pilot_link_ms, "dive": job.dive_name, "trial": job.trial, "attempts": attempt}
        row.update(figures)
        return {"row": row, "refusals": refusals}
    return {"row": None, "refusals": refusals}
