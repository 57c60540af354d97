"""Identification flight (brov2_hybrid.identify): schedule, fits, identified vehicle file, CLI.

The acceptance test flies the schedule on seeded plants that differ from the bundled Heavy
(effective inertia +-30 %, quadratic drag +-40 %, B - W +-3 N, CB height +-50 %, sensor
noise on), with the attitude held by the law tuned for the bundled Heavy (what a user
starts from), and checks the identified file against the plant that flew.
"""
import math
import os
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.analysis import cli, lti, metrics
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.analysis.settings import load_analysis_settings
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.errors import InputDataError, ParameterError
from brov2_hybrid.identify import disturbed, fit, heave_fit, model as idmodel
from brov2_hybrid.identify.schedule import BLOCK_ORDER, build_schedule, load_schedule_settings
from brov2_hybrid.params import load_controller_params
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

#: (seed, B - W shift [N] or None to draw it): the last plant is 1 N heavy in water (B - W moved by -3 N).
PLANTS = ((11, None), (12, None), (13, None), (14, -3.0))


def perturbed_body(body, seed, buoyancy_shift_n=None):
    """The body with effective inertia (rotations and heave) +-30 %, quadratic drag +-40 %, B - W moved by up
    to +-3 N (or by ``buoyancy_shift_n``) and the CB height above the CG scaled by 0.5..1.5, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    inertia = 1.0 + rng.uniform(-0.3, 0.3, 3)
    heave_mass = 1.0 + rng.uniform(-0.3, 0.3)
    quad = body.quadratic_drag * np.concatenate([[1.0, 1.0], 1.0 + rng.uniform(-0.4, 0.4, 4)])
    added = body.added_mass.copy()
    added[3:] *= inertia
    added[2] = heave_mass * (body.mass_kg + added[2]) - body.mass_kg
    r_cb = body.r_cb_m.copy()
    r_cb[2] *= rng.uniform(0.5, 1.5)
    shift = rng.uniform(-3.0, 3.0)
    return replace(body, inertia_kg_m2=body.inertia_kg_m2 * inertia, added_mass=added, quadratic_drag=quad,
                   buoyancy_n=body.buoyancy_n + (shift if buoyancy_shift_n is None else buoyancy_shift_n), r_cb_m=r_cb)


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    """Per seed: (true plant Vehicle, identified Vehicle, run folder) from `brov2-analyze identify --plant`."""
    heavy = load_vehicle()
    out = []
    for seed, shift in PLANTS:
        folder = tmp_path_factory.mktemp("identify_%d" % seed)
        plant_file = idmodel.write_vehicle_file(heavy, perturbed_body(heavy.body, seed, shift),
                                                str(folder / "plant.yaml"), "plant_%d" % seed)
        assert cli.main(["identify", "--plant", plant_file, "--out", str(folder / "out"), "--quiet"]) == 0
        out.append((load_vehicle(plant_file), load_vehicle(str(folder / "out" / "identified.yaml")), folder))
    return out


def test_schedule_doublets_return_and_blocks_are_in_order():
    schedule = build_schedule(load_schedule_settings())
    starts = [schedule.block_span(b)[0] for b in BLOCK_ORDER]
    assert starts == sorted(starts)
    impulses = {}
    for seg in schedule.segments:
        if seg.dof in (3, 4):
            impulses[seg.group] = impulses.get(seg.group, 0.0) + seg.value * (seg.t1_s - seg.t0_s)
    assert impulses and all(abs(v) < 1e-9 for v in impulses.values())   # a 1-2-1 doublet has no net impulse
    assert all(a.t1_s == pytest.approx(b.t0_s) for a, b in zip(schedule.segments, schedule.segments[1:]))
    dive = schedule.dive(50.0, load_vehicle().tau_max)
    assert np.max(np.abs(dive.u_linear)) <= 1.0 and dive.duration_s == pytest.approx(schedule.duration_s, abs=0.02)


def test_schedule_refuses_a_doublet_without_its_width(tmp_path):
    text = open(os.path.join(os.path.dirname(__file__), "..", "params", "identify.yaml")).read()
    bad = tmp_path / "identify.yaml"
    bad.write_text(text.replace("doublet_pulse_s: [0.5, 0.4, 0.3, 0.25]", "doublet_pulse_s: [0.5]", 1))
    with pytest.raises(ParameterError, match="roll.doublet_pulse_s"):
        load_schedule_settings(str(bad))


def test_held_integral_shifts_a_held_signal_by_the_delay():
    t = np.arange(0.0, 1.0001, 0.1)
    values = np.where(t >= 0.5 - 1e-9, 2.0, 0.0)          # a step held from row 5 on
    np.testing.assert_allclose(fit.held_integral(t, values, 0.0)[4:6], [0.0, 0.2])
    np.testing.assert_allclose(fit.held_integral(t, values, 0.05)[4:7], [0.0, 0.1, 0.2])


def _exact_yaw_log(dt, neutral=None):
    """(t, torque, r, (inertia, b_lin, b_quad)): a yaw rate obeying the fit's integral equation exactly
    (held torque, trapezoidal drag), solved row by row by fixed-point iteration. ``neutral`` (n,) bool:
    rows where the vehicle got no torque instead of the one returned (a neutral override)."""
    t = np.arange(0.0, 20.0, dt)
    torque = 6.0 * np.sign(np.sin(1.7 * t)) + 2.0 * np.sin(0.3 * t)
    got = torque if neutral is None else np.where(neutral, 0.0, torque)
    return (t, torque) + _exact_yaw_rates(got, dt)


def _exact_yaw_rates(got, dt, inertia=1.3, b_lin=0.4, b_quad=2.0):
    """(r, (inertia, b_lin, b_quad)): the yaw rate at rows dt apart under the row-held torque ``got``,
    obeying the fit's integral equation exactly (trapezoidal drag), by fixed-point iteration per row."""
    r = np.zeros(len(got))
    for k in range(len(got) - 1):
        nxt = r[k]
        for _ in range(50):
            mean_drag = 0.5 * (b_lin * (r[k] + nxt) + b_quad * (r[k] * abs(r[k]) + nxt * abs(nxt)))
            nxt = r[k] + dt * (got[k] - mean_drag) / inertia
        r[k + 1] = nxt
    return r, (inertia, b_lin, b_quad)


def test_attitude_fit_recovers_an_exact_discrete_model():
    """A log whose rate obeys the integral equation exactly is fitted exactly."""
    t, torque, r, (inertia, b_lin, b_quad) = _exact_yaw_log(dt=0.02)
    zeros = np.zeros(len(t))
    log = {"time_s": t, "roll_rad": zeros, "pitch_rad": zeros, "yaw_rad": zeros, "p_rad_s": zeros,
           "q_rad_s": zeros, "r_rad_s": r}
    wrench = np.zeros((len(t), 6))
    wrench[:, 5] = torque
    f = fit.fit_attitude_axis(log, wrench, fit.YAW, 0.0)
    assert f.estimates["inertia_kg_m2"].value == pytest.approx(inertia, rel=1e-6)
    assert f.estimates["linear_drag"].value == pytest.approx(b_lin, rel=1e-5)
    assert f.estimates["quadratic_drag"].value == pytest.approx(b_quad, rel=1e-6)


def test_identified_plants_are_within_the_targets(identified):
    for plant, found, _ in identified:
        true, got = plant.body, found.body
        np.testing.assert_allclose(got.total_mass[2:], true.total_mass[2:], rtol=0.10)
        np.testing.assert_allclose(got.quadratic_drag[2:], true.quadratic_drag[2:], rtol=0.15)
        assert got.buoyancy_n - got.weight_n == pytest.approx(true.buoyancy_n - true.weight_n, abs=0.5)
        assert idmodel.cb_height_m(got) == pytest.approx(idmodel.cb_height_m(true), rel=0.25)


def test_confidence_intervals_cover_the_truth_at_their_level():
    """On the exact discrete model with white rate noise, the 95 % intervals hold the true inertia and
    quadratic drag in about 95 % of seeded repetitions (they describe noise, not model error)."""
    t, torque, r, params = _exact_yaw_log(dt=0.02)
    wrench = np.zeros((len(t), 6))
    wrench[:, 5] = torque
    zeros = np.zeros(len(t))
    covered = []
    for seed in range(40):
        noisy = r + np.random.default_rng(seed).normal(0.0, 0.02, len(t))
        log = {"time_s": t, "roll_rad": zeros, "pitch_rad": zeros, "yaw_rad": zeros, "p_rad_s": zeros,
               "q_rad_s": zeros, "r_rad_s": noisy}
        f = fit.fit_attitude_axis(log, wrench, fit.YAW, 0.0)
        for name, true in (("inertia_kg_m2", params[0]), ("quadratic_drag", params[2])):
            low, high = f.estimates[name].interval
            covered.append(low <= true <= high)
    assert 0.85 <= np.mean(covered) <= 1.0


def _yaw_log_with_model_error(seed, error_sd, noise_rad_s=0.002, dt=0.02):
    """(log, logged wrench, (inertia, b_lin, b_quad)): the yaw axis of :func:`_exact_yaw_log`, except
    that the torque the vehicle got is the logged one times (1 + e), e ~ N(0, ``error_sd``) drawn once per
    half period of the square wave (a command the vehicle got scaled a little differently each
    step: what the fit's model cannot see), and white rate noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 20.0, dt)
    square = np.sign(np.sin(1.7 * t))
    torque = 6.0 * square + 2.0 * np.sin(0.3 * t)
    step = np.cumsum(np.concatenate([[0], np.diff(square) != 0]))
    r, params = _exact_yaw_rates(torque * (1.0 + rng.normal(0.0, error_sd, step[-1] + 1))[step], dt)
    zeros = np.zeros(len(t))
    log = {"time_s": t, "roll_rad": zeros, "pitch_rad": zeros, "yaw_rad": zeros, "p_rad_s": zeros,
           "q_rad_s": zeros, "r_rad_s": r + rng.normal(0.0, noise_rad_s, len(t))}
    wrench = np.zeros((len(t), 6))
    wrench[:, 5] = torque
    return log, wrench, params


def _yaw_coverage(error_sd, jackknife_blocks, seeds=40):
    """(share of the inertia and quadratic-drag intervals holding the truth, median half-width of the inertia)."""
    covered, widths = [], []
    for seed in range(seeds):
        log, wrench, params = _yaw_log_with_model_error(seed, error_sd)
        f = fit.fit_attitude_axis(log, wrench, fit.YAW, 0.0, jackknife_blocks=jackknife_blocks)
        for name, true in (("inertia_kg_m2", params[0]), ("quadratic_drag", params[2])):
            low, high = f.estimates[name].interval
            covered.append(low <= true <= high)
        widths.append(f.estimates["inertia_kg_m2"].half_width)
    return float(np.mean(covered)), float(np.median(widths))


def test_the_jackknife_keeps_the_intervals_honest_under_model_error():
    """With a model error that differs from step to step (5 %), the noise intervals hold the truth far
    less often than their 95 %; with the jackknife (params/identify.yaml fit.jackknife_blocks) they do.
    On an exact model the jackknife does not widen them."""
    blocks = idmodel.load_fit_settings().jackknife_blocks
    noise_only, _ = _yaw_coverage(0.05, None)
    with_jackknife, _ = _yaw_coverage(0.05, blocks)
    assert noise_only < 0.75, noise_only
    assert with_jackknife >= 0.88, with_jackknife
    _, exact_noise_width = _yaw_coverage(0.0, None, seeds=5)
    _, exact_jackknife_width = _yaw_coverage(0.0, blocks, seeds=5)
    assert exact_jackknife_width < 1.3 * exact_noise_width


def test_the_linearised_jackknife_is_the_refit_without_each_block():
    """jackknife_covariance against the delete-a-block refits done by hand (a linear fit: exact)."""
    rng = np.random.default_rng(3)
    X = np.column_stack([np.ones(60), np.linspace(0.0, 1.0, 60), rng.normal(size=60)])
    y = X @ [1.0, -2.0, 0.5] + rng.normal(0.0, 0.1, 60) * (1.0 + np.linspace(0.0, 3.0, 60))
    theta = np.linalg.lstsq(X, y, rcond=None)[0]
    blocks = fit.excitation_blocks(np.ones(60), 6)
    refits = np.array([np.linalg.lstsq(X[blocks != b], y[blocks != b], rcond=None)[0] for b in range(6)])
    expected = 5.0 / 6.0 * (refits - refits.mean(axis=0)).T @ (refits - refits.mean(axis=0))
    np.testing.assert_allclose(fit.jackknife_covariance(X, y - X @ theta, blocks), expected, rtol=1e-9, atol=1e-15)


def test_excitation_blocks_hold_equal_shares_of_the_excitation():
    weight = np.concatenate([np.zeros(10), np.ones(20), np.zeros(10), 2.0 * np.ones(30)])
    blocks = fit.excitation_blocks(weight, 4)
    assert list(blocks) == sorted(blocks) and set(blocks) == {0, 1, 2, 3}
    shares = [weight[blocks == b].sum() for b in range(4)]
    np.testing.assert_allclose(shares, 20.0)
    with pytest.raises(InputDataError, match="jackknife_blocks"):
        fit.excitation_blocks(weight, 1)


def _yaw_step_settling(settings, design, plant):
    """(flown settling [s] of a 90 deg yaw step, law tuned from ``design`` flying ``plant``; Eq. 22's settling
    [s] for ``design``), at the controller's omega_d."""
    step = settings.step
    loop = ClosedLoop(settings=settings.loop, vehicle=design, plant_vehicle=plant)
    run = loop.run(step_dive(step.step_rad, step.step_time_s, step.duration_s, settings.loop.desired_rate_hz))
    flown = metrics.settling_time(run.t_s, run.log["yaw_rad"], step.step_rad, step.step_time_s, band=step.settle_band)
    controller = lti.controller_for(run.omega_d_rad_s, design, load_controller_params())
    predicted = lti.step_metrics(controller, step.step_rad, step.step_time_s, step.lti_duration_s,
                                 step.settle_band)["settling_time_s"]
    return flown, predicted


def test_design_from_the_identified_file_behaves_as_the_true_design(identified):
    """The law tuned from the identified file: its Eq. 22 prediction is within 10 % of the prediction from the
    true plant's file, and on the true plant it settles within 10 % of the law tuned from the true file.
    (Eq. 22's settling time itself is not the nonlinear loop's, even on the bundled vehicle with its own
    file: docs/identification.md.) The law tuned for the bundled Heavy misses by more on some plant."""
    settings = load_analysis_settings()
    heavy = load_vehicle()
    prior_misses = []
    for plant, found, _ in identified:
        flown, predicted = _yaw_step_settling(settings, found, plant)
        true_flown, true_predicted = _yaw_step_settling(settings, plant, plant)
        assert predicted == pytest.approx(true_predicted, rel=0.10)
        assert math.isfinite(flown) and flown == pytest.approx(true_flown, rel=0.10)
        prior_flown = _yaw_step_settling(settings, heavy, plant)[0]
        prior_misses.append(abs(prior_flown - true_flown) > 0.10 * true_flown)
    assert any(prior_misses)


def test_report_and_log_fit_agree_with_the_flight(identified, tmp_path):
    _, found, folder = identified[0]
    report = (folder / "out" / "identify_report.md").read_text()
    assert "| yaw | inertia_kg_m2 |" in report and "Flight:" in report
    assert (folder / "out" / "identify_fit.png").stat().st_size > 0
    assert "95 % CI" in (folder / "out" / "identified.yaml").read_text()
    assert cli.main(["identify", "--log", str(folder / "out" / "identify_flight.csv"), "--out", str(tmp_path)]) == 0
    again = load_vehicle(str(tmp_path / "identified.yaml"))
    np.testing.assert_allclose(again.body.total_mass, found.body.total_mass, rtol=1e-3)


def test_a_passive_attitude_dof_is_not_flown_and_keeps_the_prior(tmp_path):
    """The standard BlueROV2 cannot actuate pitch: no pitch block, pitch keeps the file's values."""
    from brov2_hybrid.identify import run
    six = load_vehicle("bluerov2")
    schedule = build_schedule(load_schedule_settings(), skip=six.passive_dof_names)
    assert not [seg for seg in schedule.segments if seg.block == "pitch"]
    out = run.identify_plant("bluerov2", str(tmp_path), prior="bluerov2")
    got = load_vehicle(out["vehicle_file"]).body
    assert got.total_mass[4] == pytest.approx(six.body.total_mass[4], rel=1e-6)
    assert got.quadratic_drag[4] == six.body.quadratic_drag[4]
    np.testing.assert_allclose(got.total_mass[[3, 5]], six.body.total_mass[[3, 5]], rtol=0.10)
    assert "not flown (passive DOF)" in open(out["report"]).read()


def test_a_log_without_the_heave_block_is_refused():
    log = {"time_s": np.arange(0.0, 1.0, 0.02), "heave_cmd": np.zeros(50)}
    with pytest.raises(InputDataError, match="heave_cmd is zero throughout"):
        heave_fit.heave_window(log, 2.0)


def test_applied_wrench_uses_the_motor_pwms_and_falls_back_on_the_command():
    heavy = load_vehicle()
    n = 4
    log = {c: np.zeros(n) for c in ("tau_x_n", "tau_y_n", "tau_z_n", "tau_k_nm", "tau_m_nm", "tau_n_nm")}
    for c in ("u_surge", "u_sway", "u_heave", "u_roll", "u_pitch", "u_yaw"):
        log[c] = np.zeros(n)
    log["u_yaw"] = np.array([0.0, 0.1, np.nan, 0.2])        # NaN: the command of that tick was not logged
    for i in range(1, 9):
        log["pwm%d_us" % i] = np.array([1500.0, 1500.0, 1600.0, 0.0])
    for i in range(5, 9):                                   # the vertical thrusters push up
        log["pwm%d_us" % i][2] = 1700.0
    wrench = fit.applied_wrench(log, heavy)
    expected = heavy.table.force_from_pwm(np.array([1600.0] * 4 + [1700.0] * 4)) @ heavy.T.T
    np.testing.assert_allclose(wrench[2], expected, atol=1e-9)                  # from the motor PWMs
    np.testing.assert_allclose(wrench[3, 5], 0.2 * heavy.tau_max[5])            # no PWMs: the command
    log["pwm1_us"] = np.array([1500.0, 1500.0, 1500.0, 1500.0])                 # PWMs held (a slow stream)
    for i in range(2, 9):
        log["pwm%d_us" % i] = log["pwm1_us"]
    slow = fit.applied_wrench(log, heavy)
    np.testing.assert_allclose(slow[:, 5], np.array([0.0, 0.1, 0.1, 0.2]) * heavy.tau_max[5])


def test_a_prior_with_other_thrusters_than_the_plant_is_refused(tmp_path, capsys):
    assert cli.main(["identify", "--plant", "bluerov2", "--vehicle", "bluerov2_heavy", "--out", str(tmp_path)]) == 2
    assert "different thrusters or ArduSub frames" in capsys.readouterr().err


def _logged_yaw_flight(neutral):
    """(log with the ROS logger's columns, vehicle, truth) of a yaw flight where thruster_allocation sent the
    neutral override on the rows ``neutral``: the log keeps the tick's u, the RC channels read neutral.
    The log starts at the second row (the first two rates, both at rest, would read as a stale attitude)."""
    heavy = load_vehicle()
    t, torque, r, truth = _exact_yaw_log(0.02, np.concatenate([[False], neutral]))
    t, torque, r = t[1:], torque[1:], r[1:]
    n = len(t)
    zeros = np.zeros(n)
    log = {"time_s": t, "roll_rad": zeros, "pitch_rad": zeros, "yaw_rad": zeros, "p_rad_s": zeros,
           "q_rad_s": zeros, "r_rad_s": r, "mode": ["ACTIVE"] * n}
    u = np.zeros((n, 6))
    u[:, 5] = torque / heavy.tau_max[5]
    for k, name in enumerate(("u_surge", "u_sway", "u_heave", "u_roll", "u_pitch", "u_yaw")):
        log[name] = u[:, k]
    rc = np.array([heavy.rc_map.channel_array_from_u(row, 6) for row in u], dtype=float)
    rc[neutral] = 1500.0
    for i in range(6):
        log["rc%d_us" % (i + 1)] = rc[:, i]
    return log, heavy, truth


def test_a_neutral_override_stretch_is_left_out_and_the_fit_still_recovers_the_plant():
    n = len(np.arange(0.0, 20.0, 0.02)) - 1
    neutral = np.zeros(n, bool)
    neutral[300:340] = True                                   # 0.8 s of neutral override at t = 6 s
    log, heavy, (inertia, b_lin, b_quad) = _logged_yaw_flight(neutral)
    settings = idmodel.load_fit_settings().disturbance
    found = disturbed.find_disturbed_rows(log, settings, heavy.rc_map)
    assert np.array_equal(found.causes["neutral override"], neutral)
    assert not np.any(found.causes["late tick"] | found.causes["stale attitude"])
    t = log["time_s"]
    near = (t >= t[300] - settings.margin_s - 1e-9) & (t <= t[339] + settings.margin_s + 1e-9)
    assert np.array_equal(found.rows, near)                   # the stretch and its margin, nothing else
    wrench = np.zeros((n, 6))
    wrench[:, 5] = log["u_yaw"] * heavy.tau_max[5]
    naive = fit.fit_attitude_axis(log, wrench, fit.YAW, 0.0)
    assert abs(naive.estimates["inertia_kg_m2"].value / inertia - 1.0) > 0.05    # the stretch biases a plain fit
    f = fit.fit_attitude_axis(log, wrench, fit.YAW, 0.0, keep=~found.rows)
    assert f.estimates["inertia_kg_m2"].value == pytest.approx(inertia, rel=1e-6)
    assert f.estimates["linear_drag"].value == pytest.approx(b_lin, rel=1e-5)
    assert f.estimates["quadratic_drag"].value == pytest.approx(b_quad, rel=1e-6)
    excitation = np.abs(wrench[:, 5]) > 0.0
    assert disturbed.check_share("yaw", excitation, found, 0.5) == pytest.approx(np.mean(found.rows))


def test_a_flight_mostly_under_neutral_override_is_refused_naming_the_axis():
    n = len(np.arange(0.0, 20.0, 0.02)) - 1
    neutral = np.zeros(n, bool)
    neutral[100:700] = True
    log, heavy, _ = _logged_yaw_flight(neutral)
    found = disturbed.find_disturbed_rows(log, idmodel.load_fit_settings().disturbance, heavy.rc_map)
    with pytest.raises(disturbed.FlightDisturbed, match=r"the flight was disturbed: \d+ % of the yaw excitation.*"
                                                        r"neutral override.*rerun on a quieter machine"):
        disturbed.check_share("yaw", np.ones(n, bool), found, 0.4)


def test_late_ticks_missing_commands_and_stale_attitude_are_disturbed_rows():
    n = len(np.arange(0.0, 20.0, 0.02)) - 1
    log, heavy, _ = _logged_yaw_flight(np.zeros(n, bool))
    log["time_s"] = log["time_s"].copy()
    log["time_s"][500:] += 0.3                                # control_law late by 0.3 s after row 499
    log["u_yaw"] = log["u_yaw"].copy()
    log["u_yaw"][200] = np.nan                                # no command formed for tick 200
    log["r_rad_s"] = log["r_rad_s"].copy()
    log["r_rad_s"][800] = log["r_rad_s"][799]                 # the attitude stream stalled one tick
    log["mode"][900] = "NO_INPUT_HOLD"
    settings = replace(idmodel.load_fit_settings().disturbance, margin_s=0.0)
    found = disturbed.find_disturbed_rows(log, settings, heavy.rc_map)
    assert list(np.nonzero(found.rows)[0]) == [200, 499, 500, 800, 900]
