"""The in-process loop's tick loop as first written: the benchmark's baseline,
``ClosedLoop.run(dive, ticks=reference_ticks)``.

Same events and rows as :meth:`~brov2_hybrid.loop.closed_loop.ClosedLoop._ticks`, written
the plain way (per-column writes; on stock firmware the stock search as first written), so
that tests and ``make bench`` can hold the fast loop to it.
"""
import collections

import numpy as np

from brov2_hybrid.control.law import normalize
from brov2_hybrid.sim import delay as _delay
from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc

from brov2_hybrid.tick_log.columns import COL as _COL, DESIRED as _DESIRED, ACTUAL as _ACTUAL, RATES as _RATES, \
    LINEAR as _LINEAR, TAU as _TAU, U as _U, RC as _RC, PWM as _PWM


def reference_ticks(loop, dive, controller, rows):
    """The tick loop of :meth:`ClosedLoop.run` as first written (pass it as ``run(..., ticks=reference_ticks)``).

    Same events and rows as :meth:`ClosedLoop._ticks`, with per-column writes, the plant's
    Python stepper (not its compiled twin) and, on stock firmware, the stock search as first
    written.
    """
    loop.plant.compiled = False      # the Python stepper, as first run
    try:
        _reference_ticks(loop, dive, controller, rows)
    finally:
        loop.plant.compiled = True


def _reference_ticks(loop, dive, controller, rows):
    from brov2_hybrid.vehicle.firmware_output import StockCompensatedOutput
    from brov2_hybrid.bench.stock_search_reference import reference_stock_compensation
    delay = _delay
    telemetry = delay.DelayLine(loop.telemetry_delay_steps * loop.dt_s)
    commands = delay.DelayLine(loop.command_delay_steps * loop.dt_s)
    plant = loop.plant
    n_ticks = len(rows)
    dt = loop.dt_s
    half = 0.5 * dt
    n_rows = len(dive.t_s)
    next_row = 0
    dive_t = dive.t_s - float(dive.t_s[0])
    eta2d = dive.eta2d_rad[0]
    u_lin = dive.u_linear[0]
    pending = collections.deque()
    step, tick, next_sample = 0, 0, 0
    rc_map, mixer, output = loop.rc_map, loop.mixer, loop.output
    pwm_min_us, pwm_max_us = loop.vehicle.thrusters.pwm_min_us, loop.vehicle.thrusters.pwm_max_us
    tau_max = loop.vehicle.tau_max
    pwm_cols = _PWM[:loop.vehicle.n_thrusters]
    if isinstance(output, StockCompensatedOutput):
        def channels(u):
            return rc_map.pwm_from_u(reference_stock_compensation(output, np.clip(u, -1.0, 1.0)))
    else:
        channels = output.channels
    while tick < n_ticks:
        t = step * dt
        if step == next_sample:
            telemetry.push(t, plant.measured_attitude())
            next_sample += loop.steps_per_sample
        if step == tick * loop.steps_per_tick:
            while next_row < n_rows and dive_t[next_row] <= t + half:
                controller.update_desired(dive_t[next_row], dive.eta2d_rad[next_row])
                eta2d, u_lin = dive.eta2d_rad[next_row], dive.u_linear[next_row]
                next_row += 1
            seen = telemetry.get(t + half)
            if seen is None:
                tau, u = np.zeros(6), np.zeros(6)
            else:
                tau = controller.compute(eta2d, u_lin, seen[0], seen[1], t_s=t).tau_body_frd
                u = normalize(tau, tau_max)[0]
            rc = channels(u)
            pwm = np.array(motor_pwm_from_rc(rc, rc_map, mixer, pwm_min_us, pwm_max_us), dtype=float)
            commands.push(t, pwm)
            pending.append(step + loop.command_delay_steps)
            row = rows[tick]
            row[0] = t
            row[_DESIRED] = eta2d
            row[_ACTUAL] = plant.eta[3:6]
            row[_RATES] = plant.nu[3:6]
            row[_LINEAR] = u_lin
            row[_TAU] = tau
            row[_U] = u
            row[_RC] = [rc.get(ch, 0) for ch in range(1, 7)]
            row[pwm_cols] = pwm
            row[_COL["depth_m"]] = plant.depth_m()
            tick += 1
        if pending and pending[0] <= step:
            while pending and pending[0] <= step:
                pending.popleft()
            plant.set_motor_pwm(commands.get(t + half))
        if tick >= n_ticks:
            break
        events = [next_sample, tick * loop.steps_per_tick]
        if pending:
            events.append(pending[0])
        nxt = min(events)
        plant.step(nxt - step)
        step = nxt
