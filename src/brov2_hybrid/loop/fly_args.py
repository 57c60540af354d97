"""The compiled loop's arguments: :func:`~brov2_hybrid.loop.kernel.fly`'s groups, packed here only.

:func:`fly_arguments` reads a :class:`~brov2_hybrid.loop.closed_loop.ClosedLoop`, its dive
and its controller into :class:`FlyArguments`, one plain tuple per concept, in the order
:func:`~brov2_hybrid.loop.kernel.fly` unpacks them. Arrays are the objects' own where
the run updates them in place (the plant's state, the rate estimator, the integral), so the
objects hold the run's end as their own ticks would have left it.

Why plain tuples: numba types a call's arguments from a fingerprint computed in C for numbers,
numpy arrays and plain tuples of them (as fast as the same values passed one by one); a
namedtuple or a dataclass it types in Python, about a hundred times slower per call.

Units and frames: times [s], angles [rad] (roll, pitch, yaw of the body FRD frame in NED),
forces [N], moments [N m], PWMs [us], u normalized (-1..1) per DOF (surge, sway, heave, roll,
pitch, yaw); counts of physics steps where a name ends ``_steps``.
"""
import collections

import numpy as np

from brov2_hybrid.sim.tether_model import no_tether_arguments

_GROUPS = ("timing", "dive", "rate_estimator", "law", "output", "search", "firmware", "plant", "tether", "noise",
           "log", "status")


class FlyArguments(collections.namedtuple("FlyArguments", _GROUPS)):
    """:func:`~brov2_hybrid.loop.kernel.fly`'s arguments by name; ``fly(*arguments)`` flies.

    Each group is a plain tuple, its fields in this order (n thrusters, m dive rows):

    * ``timing``: n_ticks (control ticks to run), steps_per_tick, steps_per_sample (physics
      steps per control tick and per telemetry sample), telemetry_delay_steps,
      command_delay_steps (the latencies), dt_s (one physics step [s]).
    * ``dive``: t_s (m,) the rows' times from the first [s], eta2d_rad (m, 3) the desired
      roll, pitch, yaw [rad], u_linear (m, 3) the surge, sway, heave commands (normalized).
    * ``rate_estimator``: times (k,) [s], values (k, 3) [rad], diffs (k, 3), meta (1,) int64
      (samples held), window: the desired-rate estimator's arrays; then the reference filter's
      state (3, 3), meta (2,) (the last sample's time [s], how long its state stays [s]),
      omega_rad_s, max_gap_s: both updated in place by each dive row.
    * ``law``: :meth:`~brov2_hybrid.control.law.HybridController.kernel_settings`, in
      :func:`~brov2_hybrid.control.law_kernels.control_torque`'s order and units (tau_max (6,)
      [N, N m] first); its integral state is updated in place.
    * ``output``: compensate (the stock-compensated stage), stock_firmware (ArduSub's stock
      mixer, else Algorithm 2), rc_signs (6,) +-1, rc_neutral_us, rc_half_range_us (the RC
      channel map) [us], pwm_min_us, pwm_max_us (the motors' limits) [us].
    * ``search``: :attr:`~brov2_hybrid.vehicle.firmware_output.StockCompensatedOutput.command_args`,
      :func:`~brov2_hybrid.vehicle.stock_search.compensated_command`'s settings (the stock
      stage's, unused, when the loop does not compensate).
    * ``firmware``: F (n, 6) and tau_max (6,) [N, N m] of Algorithm 2's allocator, the thrust
      table's inverse (inv_force_n [N], inv_star, inv_slopes), T_hat (6, n) the stock mixer's
      factors, mixing (the frame's mixing code), fv_coupling_k, neutral_us, half_range_us
      (the thrust table's PWM centre and half range [us]).
    * ``plant``: state (13,) (position NED [m], quaternion w, x, y, z body FRD -> NED, body
      velocity [m/s, rad/s]), constants (the stepper's), pwm_min_us, pwm_max_us (the motors'
      limits [us]), xp [us], fp [N], slopes [N/us] (the thrust table), matrix (6, n) (the
      thrusters' wrench per newton), out (2 n + 6,) (motor PWMs [us], thrusts [N], wrench
      [N, N m]); state and out are updated in place.
    * ``tether``: the plant's tether as :meth:`~brov2_hybrid.sim.tether_model.Tether.kernel_arguments`
      packs it (on, nodes, clock, base, attachment point, constants, Newton settings, tallies; the
      nodes, tallies and pull figures updated in place), or placeholders with on False
      (:func:`~brov2_hybrid.sim.tether_model.no_tether_arguments`).
    * ``noise``: normals (the run's standard normals), on, attitude_std_rad, rate_std_rad_s,
      depth_std_m (the plant's sensor noise).
    * ``log``: rows (n_ticks, columns) to fill, columns (the indices a tick writes, in the
      order it lists its values), tether_columns (3,) (the tether force's, north, east, down [N]),
      by_channel (6,) (the rc column of each channel).
    * ``status`` (3,): DONE or GIMBAL_LOCK, the pitch [rad] it stopped at, the physics steps run.
    """

    __slots__ = ()


#: compensated_command's arguments of a vehicle's stock stage, by vehicle name: the values
#: fly is given (and does not use) when the loop does not compensate.
_PLACEHOLDERS = {}


def fly_arguments(loop, dive, controller, rows):
    """:class:`FlyArguments` to fly ``dive`` with ``controller`` on ``loop`` into ``rows``, or None
    where the compiled loop does not cover ``loop`` (the stock model, a thruster lag, the
    Python stepper asked for, a nonlinear allocator).

    Parameters
    ----------
    loop : brov2_hybrid.loop.closed_loop.ClosedLoop
        Its plant at the run's start (reset, motors set).
    dive : brov2_hybrid.dive.dive_csv.Dive
    controller : brov2_hybrid.control.law.HybridController
        Configured; its rate estimator and integral are advanced in place by the run.
    rows : ndarray (n_ticks, columns)
        The log rows to fill, one per control tick.
    """
    from brov2_hybrid.vehicle.firmware_output import StockCompensatedOutput, output_stage
    from brov2_hybrid.vehicle.mixers import MIXING_CODES, QUANTITATIVE
    plant_in = loop.plant.stepper_inputs()
    if plant_in is None:
        return None
    output, mixer, vehicle = loop.output, loop.output.vehicle_mixer, loop.vehicle
    compensate = isinstance(output, StockCompensatedOutput)
    algorithm2 = output.target_mixer if compensate else (mixer if mixer.kind == QUANTITATIVE else None)
    if algorithm2 is not None and algorithm2.force_matrix is None:
        return None
    if compensate:
        search = output.command_args
    else:          # not used; the kernel's arguments still need values of their types
        if vehicle.name not in _PLACEHOLDERS:
            _PLACEHOLDERS[vehicle.name] = output_stage("stock", vehicle, loop.rc_map).command_args
        search = _PLACEHOLDERS[vehicle.name]
    F, alloc_tau_max = ((algorithm2.force_matrix, algorithm2.allocator.tau_max) if algorithm2 is not None
                        else (search[0].T.copy(), vehicle.tau_max))
    state, constants, (lo, hi), (xp, fp, slopes), matrix, (noise_on, att_std, rate_std, depth_std) = plant_in
    n_ticks, spt, sps = len(rows), loop.steps_per_tick, loop.steps_per_sample
    per_sample = (3 if att_std else 0) + (3 if rate_std else 0)
    n_noise = ((n_ticks - 1) * spt // sps + 1) * per_sample + n_ticks * (1 if depth_std else 0) if noise_on else 0
    plant = loop.plant
    plant_out = np.concatenate([plant.motor_pwm_us, plant.thruster_forces_n(), plant.thruster_wrench()])
    est, ref, m, table = controller.rate_estimator, controller.reference_filter, loop.rc_map, mixer.table
    return FlyArguments(
        timing=(n_ticks, spt, sps, loop.telemetry_delay_steps, loop.command_delay_steps, loop.dt_s),
        dive=(dive.t_s - float(dive.t_s[0]), np.ascontiguousarray(dive.eta2d_rad), np.ascontiguousarray(dive.u_linear)),
        rate_estimator=(est.times, est.values, est.diffs, est.meta, est.window, ref.state, ref.meta, ref.omega_rad_s,
                        ref.max_gap_s),
        law=controller.kernel_settings(),
        output=(compensate, mixer.kind != QUANTITATIVE, m.signs, m.neutral_us, m.half_range_us,
                float(output.pwm_min_us), float(output.pwm_max_us)),
        search=search,
        firmware=(F, alloc_tau_max, table.inv_force_n, table.inv_star, table.inv_slopes, mixer.T_hat,
                  MIXING_CODES[mixer.frame_mixing], float(mixer.fv_coupling_k or 0.0), float(table.neutral_us),
                  float(table.half_range_us)),
        plant=(state, constants, lo, hi, xp, fp, slopes, matrix, plant_out),
        tether=plant.tether.kernel_arguments() if plant.tether is not None else no_tether_arguments(),
        noise=(plant.standard_normals(n_noise), noise_on, att_std, rate_std, depth_std),
        log=(rows, loop.tick_columns(), loop.tether_columns(), np.array([m.channels.index(ch) for ch in range(1, 7)])),
        status=np.zeros(3))
