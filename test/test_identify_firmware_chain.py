"""The identification fit rebuilds the wrench through the vehicle's firmware (identify.output_chain).

Through ROS the log's motor PWMs are the vehicle's 10 Hz SERVO_OUTPUT_RAW, held between samples:
too sparse for the schedule's pulses, so the fit takes the thrust from the command sent. Taken as
u * tau_max it misses the whole-microsecond steps of the RC channel and of the motor PWMs: the yaw
drag came out 1.4 % low, its interval excluding the truth. The outcome test flies the in-process
schedule, thins its PWMs to such a stream, and fits it with the chain and without it.
"""
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.errors import InputDataError
from brov2_hybrid.identify import fit, model as idmodel, output_chain, run
from brov2_hybrid.identify.flight import fly_schedule
from brov2_hybrid.identify.schedule import build_schedule, load_schedule_settings
from brov2_hybrid.tick_log.logfile import PWM_COLUMNS, RC_COLUMNS
from brov2_hybrid.vehicle.mixers import QUANTITATIVE, STOCK, motor_pwm_from_rc
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

#: SERVO_OUTPUT_RAW's rate through ROS (params/autopilot.yaml streams) [s between samples]
SERVO_PERIOD_S = 0.1


def servo_stream(log, period_s=SERVO_PERIOD_S):
    """``log`` with its motor PWM columns held between samples ``period_s`` apart, as the ROS logger
    writes the vehicle's SERVO_OUTPUT_RAW stream."""
    t = np.asarray(log["time_s"], dtype=float)
    slot = np.floor(t / period_s)
    first = np.r_[True, slot[1:] != slot[:-1]]
    held = np.maximum.accumulate(np.where(first, np.arange(len(t)), 0))
    out = dict(log)
    for c in PWM_COLUMNS:
        if c in log:
            out[c] = np.asarray(log[c], dtype=float)[held]
    return out


@pytest.fixture(scope="module")
def heavy():
    return load_vehicle()


@pytest.fixture(scope="module")
def ros_like_log(heavy):
    """The bundled Heavy's identification flight (in-process), its PWMs thinned to the 10 Hz stream."""
    log, _, _ = fly_schedule(build_schedule(load_schedule_settings()), heavy, heavy)
    return servo_stream(log)


def _misses(fitted, body):
    """[(axis, parameter, fitted, half-width, true)] of the intervals that exclude the truth."""
    truth = run.true_values(body)
    out = []
    for axis, f in fitted.axes.items():
        for name, e in f.estimates.items():
            true = truth.get((axis, name))
            if true is not None and abs(e.value - true) > e.half_width:
                out.append((axis, name, e.value, e.half_width, true))
    return out


def test_through_the_firmware_chain_every_interval_holds_the_truth_and_without_it_yaw_drag_does_not(
        heavy, ros_like_log):
    settings = idmodel.load_fit_settings()
    chain = idmodel.identify_log(ros_like_log, heavy, replace(settings, firmware=output_chain.AUTO))
    assert chain.firmware == QUANTITATIVE                     # told from the log's own PWM samples
    assert _misses(chain, heavy.body) == []
    plain = idmodel.identify_log(ros_like_log, heavy, replace(settings, firmware=output_chain.COMMAND,
                                                             thrust_model_spread=False))
    assert plain.firmware is None
    assert ("yaw", "quadratic_drag") in [m[:2] for m in _misses(plain, heavy.body)]
    true = heavy.body.quadratic_drag[5]
    err = {k: abs(f.axes["yaw"].estimates["quadratic_drag"].value - true) for k, f in (("chain", chain), ("plain", plain))}
    assert err["chain"] < err["plain"] / 3.0, err


def test_a_set_firmware_the_log_contradicts_is_refused_naming_both(heavy, ros_like_log):
    settings = replace(idmodel.load_fit_settings(), firmware=STOCK)
    with pytest.raises(InputDataError, match="fit.firmware is 'stock'.*'quantitative'"):
        idmodel.identify_log(ros_like_log, heavy, settings)


def _probe_log(heavy, firmware, n=120, dt=0.02, lag_rows=2):
    """50 Hz rows of yaw / roll overrides and the 10 Hz motor PWMs ``firmware`` made of the override
    ``lag_rows`` rows before (a transport lag)."""
    rng = np.random.default_rng(7)
    u = np.zeros((n, 6))
    u[:, 5] = rng.uniform(-0.4, 0.4, n)
    u[:, 3] = rng.uniform(-0.2, 0.2, n)
    rc = np.array([heavy.rc_map.channel_array_from_u(row, 6) for row in u], dtype=float)
    mixer = heavy.mixer(firmware)
    lo, hi = heavy.thrusters.pwm_min_us, heavy.thrusters.pwm_max_us
    pwm = np.array([motor_pwm_from_rc(list(rc[max(k - lag_rows, 0)].astype(int)), heavy.rc_map, mixer, lo, hi)
                    for k in range(n)], dtype=float)
    log = {"time_s": np.arange(n) * dt}
    log.update({c: rc[:, k] for k, c in enumerate(RC_COLUMNS)})
    log.update({c: pwm[:, k] for k, c in enumerate(PWM_COLUMNS[:heavy.n_thrusters])})
    return servo_stream(log), u


@pytest.mark.parametrize("firmware", [QUANTITATIVE, STOCK])
def test_the_firmware_is_told_from_sparse_motor_pwm_samples(heavy, firmware):
    log, _ = _probe_log(heavy, firmware)
    detection = idmodel.load_fit_settings().firmware_detection
    assert output_chain.firmware_from_log(log, heavy, detection) == firmware
    no_pwm = {k: v for k, v in log.items() if k not in PWM_COLUMNS}
    assert output_chain.firmware_from_log(no_pwm, heavy, detection) is None


def test_the_thrust_table_mixer_gives_the_command_to_within_the_pwm_steps_and_stock_does_not(heavy):
    log, u = _probe_log(heavy, QUANTITATIVE)
    rc = output_chain.rc_rows(log)
    tau_max = np.asarray(heavy.tau_max, dtype=float)
    quantitative = output_chain.override_wrench(rc, heavy, QUANTITATIVE)
    # Algorithm 2 delivers u * tau_max but for the 1 us RC step (u in steps of 1 / half range) and the
    # 1 us motor PWM steps: a few per cent of a small command, never more than a few hundredths of tau_max
    bound = 0.03 * tau_max[5]
    assert np.max(np.abs(quantitative[:, 5] - u[:, 5] * tau_max[5])) < bound
    assert np.max(np.abs(quantitative[:, 5] - u[:, 5] * tau_max[5])) > 0.0
    stock = output_chain.override_wrench(rc, heavy, STOCK)
    assert np.max(np.abs(stock[:, 5] - u[:, 5] * tau_max[5])) > 3 * bound
    released = output_chain.override_wrench(np.zeros((1, 6)), heavy, QUANTITATIVE)   # 0: channel released
    np.testing.assert_allclose(released, 0.0, atol=1e-9)


def test_a_noise_free_log_through_the_chain_is_fitted_not_emptied_by_the_outlier_rule(heavy, monkeypatch):
    """Through ROS the rates came without noise and the chain rebuilt the wrench exactly: most rows fit to
    nothing, the residuals' robust sigma collapsed and the outlier rule threw out the excitation until the
    fits were rank-deficient. The rule now measures a row against the command edges' own spread too."""
    from brov2_hybrid.identify import fit
    from brov2_hybrid.sim.config import load_sim_options
    quiet = replace(load_sim_options(), noise_enabled=False)
    log, _, _ = fly_schedule(build_schedule(load_schedule_settings()), heavy, heavy, sim_options=quiet)
    log = servo_stream(log)
    settings = replace(idmodel.load_fit_settings(), firmware=output_chain.AUTO)
    fitted = idmodel.identify_log(log, heavy, settings)
    truth = run.true_values(heavy.body)
    for axis in ("roll", "pitch", "yaw"):
        got = fitted.axes[axis].estimates
        assert got["inertia_kg_m2"].value == pytest.approx(truth[(axis, "inertia_kg_m2")], rel=0.01)
        assert got["quadratic_drag"].value == pytest.approx(truth[(axis, "quadratic_drag")], rel=0.01)
    monkeypatch.setattr(fit, "_outlier_scale", lambda residual, impulse: fit._robust_sigma(residual))
    with pytest.raises(InputDataError, match="does not excite every term"):
        idmodel.identify_log(log, heavy, settings)


def test_the_chain_rebuilds_the_override_each_ticks_command_made_not_the_one_logged_beside_it(heavy, ros_like_log):
    """Through ROS the logger writes a row before the allocation's override for it comes back, so the
    logged RC channels are mostly the tick before's. The chain takes the override the row's u made: the
    same fit as with the RC logged on time; reading the late RC columns (a log without u) it is not."""
    from brov2_hybrid.tick_log.logfile import RC_COLUMNS, U_COLUMNS
    late = dict(ros_like_log)
    for c in RC_COLUMNS:
        column = np.asarray(ros_like_log[c], dtype=float)
        late[c] = np.r_[column[:1], column[:-1]]
    settings = replace(idmodel.load_fit_settings(), firmware=output_chain.AUTO)

    def values(log):
        fitted = idmodel.identify_log(log, heavy, settings)
        return np.array([e.value for f in fitted.axes.values() for e in f.estimates.values()])
    on_time = values(ros_like_log)
    np.testing.assert_array_equal(values(late), on_time)
    as_logged = values({k: v for k, v in late.items() if k not in U_COLUMNS})
    assert not np.allclose(as_logged, on_time, rtol=1e-6, atol=0.0)


def test_the_thrust_model_spread_widens_the_command_fits_intervals_to_hold_the_truth_and_off_they_miss(
        heavy, ros_like_log):
    """fit.thrust_model_spread: u * tau_max between 10 Hz PWM samples leaves an error the same all along
    the flight (yaw's quadratic drag misses its own interval); spanning the chain's fit, every interval
    holds the truth, and the fitted values are the command's."""
    settings = replace(idmodel.load_fit_settings(), firmware=output_chain.COMMAND)
    assert fit.thrust_from_command(ros_like_log, heavy)
    off = idmodel.identify_log(ros_like_log, heavy, replace(settings, thrust_model_spread=False))
    on = idmodel.identify_log(ros_like_log, heavy, replace(settings, thrust_model_spread=True))
    assert off.thrust_model_spread is None and on.thrust_model_spread == "the quantitative chain's fit"
    assert ("yaw", "quadratic_drag") in [m[:2] for m in _misses(off, heavy.body)]
    assert _misses(on, heavy.body) == []
    for axis, f in on.axes.items():
        for name, e in f.estimates.items():
            e0 = off.axes[axis].estimates[name]
            assert e.value == e0.value and e.half_width >= e0.half_width, (axis, name)
    yaw_on, yaw_off = (m.axes["yaw"].estimates["quadratic_drag"].half_width for m in (on, off))
    assert yaw_on > 1.2 * yaw_off


def test_the_thrust_model_spread_leaves_a_log_with_dense_pwms_or_no_firmware_as_fitted(heavy, ros_like_log):
    """A log whose motor PWMs are as dense as the command (the in-process flight) is fitted on them,
    with no thrust model to span; one whose PWMs tell no firmware keeps its intervals and says why."""
    settings = replace(idmodel.load_fit_settings(), firmware=output_chain.COMMAND, thrust_model_spread=True)
    dense, _, _ = fly_schedule(build_schedule(load_schedule_settings()), heavy, heavy)
    assert not fit.thrust_from_command(dense, heavy)
    assert idmodel.identify_log(dense, heavy, settings).thrust_model_spread is None
    no_pwm = dict(ros_like_log)
    for c in PWM_COLUMNS:
        if c in no_pwm:
            no_pwm[c] = np.zeros_like(np.asarray(no_pwm[c], dtype=float))
    kept = idmodel.identify_log(no_pwm, heavy, settings)
    plain = idmodel.identify_log(no_pwm, heavy, replace(settings, thrust_model_spread=False))
    assert kept.thrust_model_spread.startswith("none: the log's motor PWM samples tell no firmware")
    assert kept.axes["yaw"].estimates["quadratic_drag"] == plain.axes["yaw"].estimates["quadratic_drag"]
