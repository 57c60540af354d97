"""In-process closed loop (brov2_hybrid.loop.closed_loop): physical sanity, latency, log format."""
import math
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.analysis import metrics
from brov2_hybrid.loop.closed_loop import ClosedLoop, write_log
from brov2_hybrid.analysis.log_replay import compare_with_log
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.loop.settings import LoopSettings
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.tick_log.logfile import LOG_COLUMNS, read_log

STEP = math.pi / 2
T_STEP = 1.0


@pytest.fixture(scope="module")
def loop():
    return ClosedLoop(LoopSettings())


def yaw_step(loop, omega_d, duration=7.0, **kwargs):
    return loop.run(step_dive(STEP, T_STEP, duration, loop.settings.desired_rate_hz), omega_d_rad_s=omega_d, **kwargs)


def settling(res):
    return metrics.settling_time(res.t_s, res.log["yaw_rad"], STEP, T_STEP)


def test_yaw_step_converges_and_other_axes_stay_level(loop):
    res = yaw_step(loop, 3.0)
    yaw = res.log["yaw_rad"]
    assert abs(yaw[-1] - STEP) < 0.05 * STEP
    assert np.all(yaw[res.t_s < T_STEP] == pytest.approx(0.0, abs=1e-9))  # nothing moves before the step
    assert np.max(np.abs(res.log["roll_rad"])) < math.radians(2.0)
    assert np.max(np.abs(res.log["pitch_rad"])) < math.radians(2.0)
    assert res.log["omega_d_rad_s"][0] == 3.0


def test_higher_omega_d_settles_faster_up_to_3(loop):
    times = [settling(yaw_step(loop, w)) for w in (2.0, 2.5, 3.0)]
    assert all(math.isfinite(x) for x in times)
    assert times[0] > times[1] > times[2]


def test_kappa_zero_is_underdamped_at_omega_2(loop):
    """Sec. 5.2: without delta k_d the nonlinear response overshoots; kappa = 20 removes it."""
    plain = yaw_step(loop, 2.0, kappa=0.0)
    tuned = yaw_step(loop, 2.0)
    assert metrics.overshoot(plain.t_s, plain.log["yaw_rad"], STEP, T_STEP) > 10.0
    assert metrics.overshoot(tuned.t_s, tuned.log["yaw_rad"], STEP, T_STEP) < 5.0


def test_log_rows_follow_the_shared_format(loop, tmp_path):
    res = yaw_step(loop, 3.0, duration=2.0)
    n = len(res.t_s)
    assert n == int(round(2.0 * loop.settings.control_rate_hz)) + 1
    np.testing.assert_allclose(np.diff(res.t_s), 1.0 / loop.settings.control_rate_hz)
    assert set(LOG_COLUMNS) <= set(res.log)
    rc = np.column_stack([res.log["rc%d_us" % i] for i in range(1, 7)])
    pwm = np.column_stack([res.log["pwm%d_us" % i] for i in range(1, 9)])
    assert np.all(rc == np.rint(rc)) and np.all(pwm == np.rint(pwm))  # integer PWMs, as on the wire
    # The yaw channel (4) carries u_yaw through the RC quantisation.
    np.testing.assert_allclose(res.log["rc4_us"], np.rint(1500 + 400 * res.log["u_yaw"]))
    # u = tau / tau_max with the paper's tau_max yaw = 37.72 N m (Sec. 2.2.2) where it is
    # unsaturated, exactly +-1 beyond it; the step's first tick saturates, the end does not.
    tau, u = res.log["tau_n_nm"], res.log["u_yaw"]
    linear, saturated = np.abs(tau) < 37.72 * 0.999, np.abs(tau) > 37.72 * 1.001
    assert linear[-1] and saturated[np.searchsorted(res.t_s, T_STEP)]
    np.testing.assert_allclose(u[linear], tau[linear] / 37.72, rtol=2e-4, atol=1e-12)
    assert np.all(u[saturated] == np.sign(tau[saturated]))
    path = write_log(str(tmp_path / "run.csv"), res.log)
    back = read_log(path)
    np.testing.assert_allclose(back["yaw_rad"], res.log["yaw_rad"], rtol=1e-8, atol=1e-12)
    assert back["mode"][0] == loop.settings.mode_label


def test_command_delay_holds_the_vehicle_still(loop):
    """Motors change only command_delay_s after the tick that commanded the step."""
    delayed = ClosedLoop(replace(loop.settings, command_delay_s=0.1), vehicle=loop.vehicle)
    res = yaw_step(delayed, 3.0, duration=2.0)
    r = np.abs(res.log["r_rad_s"])
    before = res.t_s <= T_STEP + 0.1 + 1e-9
    assert np.all(r[before] < 1e-12)
    assert r[np.searchsorted(res.t_s, T_STEP + 0.14)] > 0.0


def test_no_telemetry_yet_gives_neutral(loop):
    late = ClosedLoop(replace(loop.settings, telemetry_delay_s=0.1), vehicle=loop.vehicle)
    res = yaw_step(late, 3.0, duration=0.5)
    early = res.t_s < 0.1 - 1e-9
    assert np.all(res.log["u_yaw"][early] == 0.0) and np.all(res.log["rc4_us"][early] == 1500)


def test_latency_increases_overshoot_at_high_omega_d(loop):
    """docs/DESIGN.md section 8: the overshoot at high omega_d grows with loop latency."""
    slow = ClosedLoop(replace(loop.settings, telemetry_delay_s=0.05, command_delay_s=0.05), vehicle=loop.vehicle)
    fast_res, slow_res = yaw_step(loop, 3.5, duration=5.0), yaw_step(slow, 3.5, duration=5.0)
    assert (metrics.overshoot(slow_res.t_s, slow_res.log["yaw_rad"], STEP, T_STEP)
            > metrics.overshoot(fast_res.t_s, fast_res.log["yaw_rad"], STEP, T_STEP) + 0.5)


def test_stock_mixer_option_changes_the_motor_pwms(loop):
    """Stock firmware sent u as is: same RC input, other motor PWMs (Algorithm 1). With the
    default output stage for the mixer (compensated) the RC input changes instead."""
    naive = ClosedLoop(replace(loop.settings, mixer="stock", output_stage="stock_naive"), vehicle=loop.vehicle)
    comp = ClosedLoop(replace(loop.settings, mixer="stock"), vehicle=loop.vehicle)
    a, b, c = (yaw_step(x, 3.0, duration=1.2) for x in (loop, naive, comp))
    k = np.searchsorted(a.t_s, T_STEP)
    assert a.log["rc4_us"][k] == b.log["rc4_us"][k]
    assert not np.array_equal(a.log["pwm1_us"][k:], b.log["pwm1_us"][k:])
    assert a.log["rc4_us"][k] != c.log["rc4_us"][k]


def test_compare_with_log_agrees_with_itself(loop, tmp_path):
    """A log written by the loop (absolute times as the ROS logger writes them) replays to the same settling."""
    res = yaw_step(loop, 3.0, duration=6.0)
    log = dict(res.log)
    log["time_s"] = ["%.6f" % (t + 1.7e9) for t in res.log["time_s"]]
    path = write_log(str(tmp_path / "step.csv"), log)
    out = compare_with_log(path, loop=loop)
    assert out["ok"] and out["relative_difference"] < 0.01
    assert out["omega_d_rad_s"] == 3.0 and out["step_time_s"] == pytest.approx(T_STEP)


def test_bad_rates_and_inputs_raise(loop):
    with pytest.raises(Brov2Error, match="control period"):
        ClosedLoop(replace(loop.settings, control_rate_hz=47.0), vehicle=loop.vehicle)
    with pytest.raises(Brov2Error, match="Dive"):
        loop.run([1, 2, 3])


def test_compare_with_log_replays_the_dive_csv_aligned_on_the_step(loop, tmp_path):
    """With the dive CSV given, the replay uses the CSV's samples, shifted onto the log's step."""
    from brov2_hybrid.dive.dive_csv import write_dive_csv
    dive = step_dive(STEP, 2.0, 8.0, 20.0)                     # a 20 Hz input, step at 2 s
    csv_path = str(tmp_path / "step20.csv")
    write_dive_csv(csv_path, dive.t_s, dive.eta2d_rad, dive.u_linear)
    shifted = step_dive(STEP, 3.0, 9.0, 20.0)                  # the "logged" run: step at 3 s
    res = loop.run(shifted, omega_d_rad_s=3.0)
    path = write_log(str(tmp_path / "log.csv"), res.log)
    out = compare_with_log(path, loop=loop, dive_csv_path=csv_path)
    assert out["step_time_s"] == pytest.approx(3.0)
    assert out["relative_difference"] < 0.01 and "input 20 Hz" in out["latency"]


def _csv_values(path):
    import csv
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0] if k != "mode"}


@pytest.mark.parametrize("mixer, noisy, latency", [("quantitative", False, False), ("stock", False, False),
                                                   ("quantitative", True, True), ("stock", True, True)])
def test_fast_loop_writes_the_csv_of_the_loop_as_first_written(tmp_path, mixer, noisy, latency):
    """The loop every analysis flies (ClosedLoop.run) against its baseline (bench.reference_loop:
    the tick loop and, on stock firmware, the stock search as first written): the same
    seed gives the same CSV to 1e-9, with measurement noise and loop latency too."""
    import os
    from brov2_hybrid import paths
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.dive.dive_csv import load_dive_csv
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.bench.reference_loop import reference_ticks
    settings = load_analysis_settings()
    loop_settings = replace(settings.loop, mixer=mixer)
    if latency:
        loop_settings = replace(loop_settings, telemetry_delay_s=0.02, command_delay_s=0.01, telemetry_rate_hz=100.0)
    options = load_sim_options()
    if noisy:
        options = replace(options, noise_enabled=True, attitude_noise_std_rad=0.002, rate_noise_std_rad_s=0.01,
                          depth_noise_std_m=0.01, seed=11)
    dive = load_dive_csv(os.path.join(paths.package_root(), settings.dive.csv_file))
    paths_written = []
    for reference in (False, True):
        loop = ClosedLoop(loop_settings, sim_options=options)      # a fresh noise generator each
        res = loop.run(dive, duration_s=6.0, log_path=str(tmp_path / ("ref.csv" if reference else "fast.csv")),
                       ticks=reference_ticks if reference else None)
        paths_written.append(res.log_path)
    fast, ref = (_csv_values(p) for p in paths_written)
    assert set(fast) == set(ref) and len(fast["time_s"]) == 301
    for column in ref:
        np.testing.assert_allclose(fast[column], ref[column], rtol=0.0, atol=1e-9, err_msg=column)
    assert np.ptp(ref["rc4_us"]) > 0 and np.ptp(ref["pwm1_us"]) > 0       # the run did move


@pytest.mark.parametrize("stage, noisy, latency, integral, reference", [
    ("quantitative", False, False, False, False), ("quantitative", True, True, True, True),
    ("stock", False, False, True, False), ("stock", True, True, False, True), ("stock_wrench", True, False, True, False),
    ("stock_naive", False, True, False, False)])
def test_compiled_run_is_the_python_tick_loop(stage, noisy, latency, integral, reference):
    """ClosedLoop.run compiled as one kernel (loop.kernel.fly) against its Python tick loop on
    the objects: the same rows bit for bit, the plant left in the same state and its noise generator
    at the same place, on a mismatched plant (robustness) with noise, latency, integral action, the
    drag feed-forward and the reference feed-forward (with its filter), for every output stage."""
    import os
    from brov2_hybrid import paths
    from brov2_hybrid.loop import closed_loop
    from brov2_hybrid.loop import kernel as loop_kernel
    from brov2_hybrid.analysis.robustness import draw_samples, perturbed_vehicle
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.dive.dive_csv import load_dive_csv
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    if loop_kernel.compiled_fly(closed_loop.probe_fly) is None:
        pytest.skip("numba is not installed here (or BROV2_NO_JIT is set): only the Python tick loop runs")
    settings = load_analysis_settings()
    mixer = "quantitative" if stage == "quantitative" else "stock"
    loop_settings = replace(settings.loop, mixer=mixer, output_stage=stage)
    if latency:
        loop_settings = replace(loop_settings, telemetry_delay_s=0.03, command_delay_s=0.0125, telemetry_rate_hz=100.0)
    options = load_sim_options()
    if noisy:
        options = replace(options, noise_enabled=True, attitude_noise_std_rad=0.003, rate_noise_std_rad_s=0.01,
                          depth_noise_std_m=0.02, seed=5, current_ned_m_s=np.array([0.2, -0.1, 0.0]))
    vehicle = load_vehicle()
    plant_vehicle = perturbed_vehicle(vehicle, draw_samples(settings.robustness, 2)[1])
    dive = load_dive_csv(os.path.join(paths.package_root(), settings.dive.csv_file))
    runs = []
    for compiled in (True, False):
        loop = ClosedLoop(loop_settings, vehicle=vehicle, sim_options=options, plant_vehicle=plant_vehicle)
        loop.fly_kernel = None if compiled else False
        ctl = {"integral_enabled": integral, "drag_feedforward_enabled": integral, "integral_ratio": 0.3,
               "reference_feedforward_enabled": reference}
        first = loop.run(dive, duration_s=8.0, omega_d_rad_s=3.5, controller_options=ctl)
        second = loop.run(dive, duration_s=3.0, controller_options=ctl)     # continues the noise stream
        runs.append((first.log, second.log, loop.plant.eta.tolist(), loop.plant.nu.tolist(), loop.plant.t_s,
                     loop.plant.thruster_wrench().tolist(), loop.plant.standard_normals(3).tolist()))
    (a1, a2, *a_rest), (b1, b2, *b_rest) = runs
    for ours, theirs in ((a1, b1), (a2, b2)):
        for column, values in theirs.items():      # bit for bit; NaN (no depth setpoint) equals NaN
            np.testing.assert_array_equal(ours[column], values, err_msg=column)
    assert a_rest == b_rest
    assert np.ptp(b1["rc4_us"]) > 0 and np.ptp(b1["pwm1_us"]) > 0


@pytest.mark.parametrize("integral", [False, True])
def test_compiled_run_on_a_tether_is_the_python_tick_loop(integral):
    """On the simulator's tether in a current, the compiled run (the tether stepped inside
    loop.kernel.fly) against the Python tick loop (Plant.step): the same rows bit for bit, the
    tether's pull in every row, and the tether left in the same state (nodes, time, tallies)."""
    import os
    from brov2_hybrid import paths
    from brov2_hybrid.loop import closed_loop
    from brov2_hybrid.loop import kernel as loop_kernel
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from brov2_hybrid.dive.dive_csv import load_dive_csv
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.tick_log.logfile import TETHER_COLUMNS
    if loop_kernel.compiled_fly(closed_loop.probe_fly) is None:
        pytest.skip("numba is not installed here (or BROV2_NO_JIT is set): only the Python tick loop runs")
    settings = load_analysis_settings()
    options = load_sim_options()
    # a cable as long as the vehicle is deep, laid straight, in a current strong enough to keep it taut: at
    # 0.3 / 0.2 m/s whether it went taut in these 6 s hung on the vehicle's first second (a slack cable,
    # 0.2 N, with the integral action on; a 365 N snap without)
    length = settings.loop.initial_depth_m
    options = replace(options, current_ned_m_s=np.array([0.6, 0.4, 0.0]),
                      tether=options.tether.with_changes(enabled=True, length_m=length, segments=8))
    dive = load_dive_csv(os.path.join(paths.package_root(), settings.dive.csv_file))
    runs = []
    for compiled in (True, False):
        loop = ClosedLoop(replace(settings.loop, telemetry_delay_s=0.02, command_delay_s=0.01), sim_options=options)
        loop.fly_kernel = None if compiled else False
        log = loop.run(dive, duration_s=6.0, omega_d_rad_s=4.0, controller_options={"integral_enabled": integral}).log
        tether = loop.plant.tether
        runs.append((log, loop.plant.eta.tolist(), tether.p.tolist(), tether.v.tolist(), tether.t_s, tether.steps,
                     tether.iterations, tether.pull_sum_n.tolist(), tether.pull_max_n.tolist()))
    (ours, *our_rest), (theirs, *their_rest) = runs
    for column, values in theirs.items():
        np.testing.assert_array_equal(ours[column], values, err_msg=column)
    assert our_rest == their_rest
    pull = np.column_stack([theirs[c] for c in TETHER_COLUMNS])
    assert np.all(np.isfinite(pull)) and np.median(np.linalg.norm(pull, axis=1)) > 1.0  # the tether pulls throughout
    assert their_rest[4] == round(6.0 / loop.dt_s)                                     # stepped with the plant


def test_compiled_run_stops_at_gimbal_lock_as_the_python_loop():
    """A dive that asks for pitch 90 deg: both tick loops refuse it with the law's gimbal-lock error."""
    from brov2_hybrid.dive.shapes import step_dive
    from brov2_hybrid.errors import Brov2Error
    dive = step_dive(math.radians(90.0), 0.5, 6.0, 50.0, axis=1)
    for compiled in (True, False):
        loop = ClosedLoop()
        loop.fly_kernel = None if compiled else False
        with pytest.raises(Brov2Error, match="gimbal lock"):
            loop.run(dive, omega_d_rad_s=4.0, kappa=0.0)
