"""Every option a user can set, flown: each test fails when its option is switched off or bypassed.

The rule (docs/testing-and-benchmarks.md): a speed-up or refactor may not change what
these tests assert; if one of them moves, the change is a bug, whatever the unit tests say.
Each test flies the in-process loop (the nodes' law, output stage, firmware mixer and
vehicle model) on an input where the option should matter and asserts the outcome moves
the way docs/experiments.md says; where the option reaches the nodes, the node-side
object (AutopilotCore, the output stage thruster_allocation builds) is checked too.
"""
import math
import os
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid import paths
from brov2_hybrid.analysis import allocators as al
from brov2_hybrid.analysis import metrics
from brov2_hybrid.analysis import options as op
from brov2_hybrid.analysis import tether_loop as tl
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.analysis.log_summary import log_metrics
from brov2_hybrid.analysis.settings import LatencyCase, load_analysis_settings
from brov2_hybrid.control import live_settings
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.dive.dive_csv import Dive, load_dive_csv
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.control.autopilot_safety import AutopilotCore
from brov2_hybrid.sim.config import load_sim_options
from brov2_hybrid.vehicle import saturating_allocation
from brov2_hybrid.vehicle.firmware_output import stage_for_firmware
from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

AXES = ("roll", "pitch", "yaw")


@pytest.fixture(scope="module")
def loop_settings():
    return load_analysis_settings().loop


@pytest.fixture(scope="module")
def bundled():
    return load_dive_csv(os.path.join(paths.package_root(), "data", "dives", "ar_pilot_dive.csv"))


def _iae_effort(loop, result):
    m, _ = log_metrics(result.log, loop.rc_map)
    return sum(m["iae_%s_deg_s" % a] for a in AXES), sum(m["energy_%s" % a] for a in AXES)


# --- allocator -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def saturating_vehicle(tmp_path_factory):
    return load_vehicle(al.vehicle_file_with_allocator("bluerov2_heavy", "saturating",
                                                       str(tmp_path_factory.mktemp("vehicles"))))


def _aggressive_iae(loop_settings, vehicle, firmware):
    """Summed IAE [deg s] of the aggressive dive with 5 s plateaus (full surge, sway, heave at each
    (+-35, +-35) deg roll/pitch pair, yaw ramps; 64 s) at omega_d 3."""
    s = replace(al.load_allocator_settings(), plateau_s=5.0, lead_in_s=1.0, yaw_ramp_delay_s=0.5, yaw_ramp_s=1.0)
    dive, _ = al.aggressive_dive(s)
    loop = ClosedLoop(replace(loop_settings, mixer=firmware, output_stage="auto"), vehicle=vehicle)
    result = loop.run(dive, omega_d_rad_s=3.0)
    return _iae_effort(loop, result)[0]


@pytest.mark.parametrize("firmware", ["quantitative", "stock"])
def test_saturating_allocator_lowers_the_aggressive_dive_iae(loop_settings, vehicle, saturating_vehicle, firmware):
    """docs/experiments.md: the saturation-aware allocator lowers the summed IAE by well over 40 %
    on full translation at tilt, on the paper's firmware and on stock ArduSub (compensated)."""
    eq9 = _aggressive_iae(loop_settings, vehicle, firmware)
    saturating = _aggressive_iae(loop_settings, saturating_vehicle, firmware)
    assert saturating < 0.6 * eq9, (firmware, eq9, saturating)


def test_the_outcome_test_fails_when_the_allocator_is_bypassed(monkeypatch, loop_settings, vehicle,
                                                               saturating_vehicle):
    """The bug this file was written for: a mixer that runs Eq. 9's matrix for the saturating
    allocator. Made to happen here on purpose, the outcome above is gone."""
    eq9 = _aggressive_iae(loop_settings, vehicle, "quantitative")
    monkeypatch.setattr(saturating_allocation.SaturatingAllocator, "force_matrix",
                        property(lambda self: self.pinv))
    bypassed = _aggressive_iae(loop_settings, load_vehicle(saturating_vehicle.source), "quantitative")
    assert bypassed == pytest.approx(eq9, rel=1e-9)


def test_nodes_and_simulated_firmware_run_the_vehicles_allocator(saturating_vehicle, vehicle):
    """thruster_allocation's stage and the simulated firmware's chain (motor_pwm_from_rc) give the
    saturating allocator's forces for a command Eq. 9 cannot meet, not Eq. 9's."""
    u = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.6])           # full surge + yaw: Eq. 9 asks too much reverse thrust
    table = saturating_vehicle.table
    stage = stage_for_firmware("quantitative", saturating_vehicle, saturating_vehicle.rc_map)
    cmd = stage.command(u)
    expected = np.clip(np.rint(table.pwm_from_normalized(table.normalized_from_force(
        saturating_vehicle.allocator.forces(cmd.u_sent)))), stage.pwm_min_us, stage.pwm_max_us)
    np.testing.assert_array_equal(cmd.motor_pwm, expected)
    firmware_pwm = motor_pwm_from_rc(cmd.channel_pwm, saturating_vehicle.rc_map, saturating_vehicle.mixer("quantitative"),
                                     stage.pwm_min_us, stage.pwm_max_us)
    np.testing.assert_array_equal(firmware_pwm, expected)
    eq9 = stage_for_firmware("quantitative", vehicle, vehicle.rc_map).command(u)
    assert not np.array_equal(eq9.motor_pwm, cmd.motor_pwm)
    # The delivered yaw torque: the saturating allocator keeps what Eq. 9's clipping loses.
    assert abs(cmd.tau_achieved[5] - cmd.tau_requested[5]) < 0.5 * abs(eq9.tau_achieved[5] - eq9.tau_requested[5])
    stock = stage_for_firmware("stock", saturating_vehicle, saturating_vehicle.rc_map).command(u)
    stock_eq9 = stage_for_firmware("stock", vehicle, vehicle.rc_map).command(u)
    assert not np.array_equal(stock.channel_pwm, stock_eq9.channel_pwm)


# --- integral action and drag feed-forward (the options table's runs) ---------------------

@pytest.fixture(scope="module")
def option_runs(loop_settings):
    """Every option on every input of the options table at omega_d 3 (compiled loop: ~1 s; the tethered
    dive steps its plant in Python: a few seconds per option)."""
    jobs = op.option_jobs(loop_settings, op.load_option_settings(), (3.0,))
    return {(r["input"], r["option"]): r for r in op.option_rows([op.run_option_job(j) for j in jobs])}


def test_integral_action_removes_the_error_of_full_translation_at_tilt(option_runs):
    assert option_runs[("disturbed", "PD+I")]["iae_change_pct"] < -40.0


def test_integral_action_helps_against_the_tethers_pull(option_runs):
    """docs/experiments.md: on the tethered dive (the bundled dive on the simulator's 35 m tether in a
    current) integral action is the option that helps; the drag feed-forward does nothing there."""
    assert option_runs[("tethered", "PD+I")]["iae_change_pct"] < -15.0
    assert abs(option_runs[("tethered", "drag FF")]["iae_change_pct"]) < 2.0
    # the tether is on: the dive on it is far worse than without
    assert option_runs[("tethered", "PD")]["iae_sum_deg_s"] > 2.0 * option_runs[("bundled", "PD")]["iae_sum_deg_s"]


def test_drag_feedforward_removes_the_lag_of_fast_turns(option_runs):
    assert option_runs[("smooth", "drag FF")]["yaw_iae_change_pct"] < -40.0


def test_reference_feedforward_removes_most_of_the_lag_of_fast_turns(option_runs):
    """docs/experiments.md: the inverse dynamics along the filtered eta2d leaves a fifth of the PD's
    error on smooth fast turns and half of the drag feed-forward's, at no more than +10 % effort."""
    ref, drag = option_runs[("smooth", "ref FF")], option_runs[("smooth", "drag FF")]
    assert ref["iae_change_pct"] < -70.0 and ref["iae_sum_deg_s"] < 0.6 * drag["iae_sum_deg_s"]
    assert ref["effort_change_pct"] < 10.0


def _tether_loop(loop_settings):
    """The omega-limit table's 'tether' condition: 50 Hz telemetry + 20 ms, 20 ms to the motors, the
    T200's spin-up and IMU noise."""
    from brov2_hybrid.analysis.omega_limit import condition_loop, load_omega_limit_settings
    c = [c for c in load_omega_limit_settings().conditions if c.name == "tether"][0]
    return ClosedLoop(condition_loop(loop_settings, c),
                      sim_options=replace(load_sim_options(), thruster_lag=c.thruster_lag, noise_enabled=c.noise))


@pytest.mark.parametrize("omega_d, input_name, most", [(3.0, "smooth", 0.3), (6.0, "smooth", 0.75),
                                                       (3.0, "bundled", 0.8)])
def test_reference_feedforward_tracks_better_behind_a_tether(loop_settings, omega_d, input_name, most):
    """Behind the tether (20 + 20 ms, spin-up, noise), where omega_d cannot go past 6: the reference
    feed-forward adds no loop delay and cuts the summed IAE to under ``most`` of the PD's (smooth
    fast turns at omega_d 3 and at the tether's highest safe omega_d 6, the bundled dive at omega_d 3),
    at no more than +10 % effort. Switched off, the run is the PD's and the assertion fails."""
    loop = _tether_loop(loop_settings)
    dive = op.input_dive(input_name, op.load_option_settings())
    off = _iae_effort(loop, loop.run(dive, omega_d_rad_s=omega_d))
    on = _iae_effort(loop, loop.run(dive, omega_d_rad_s=omega_d,
                                    controller_options={"reference_feedforward_enabled": True}))
    assert on[0] < most * off[0], (off, on)
    assert on[1] < 1.1 * off[1], (off, on)


@pytest.mark.parametrize("option", ["PD+I", "drag FF", "PD+I+drag FF", "ref FF"])
def test_no_option_makes_the_bundled_dive_worse(option_runs, option):
    """The defect that was: both terms used the linearised drag and made the bundled dive worse."""
    assert option_runs[("bundled", option)]["iae_change_pct"] < 0.0


def test_options_reach_the_node_through_a_reconfigure_request(vehicle, controller_params):
    """control_law applies a dynamic_reconfigure request with live_settings.configure_kwargs; through
    AutopilotCore the integral then grows under a held error and the drag feed-forward adds the
    model's drag at the desired rate."""
    def core(**knobs):
        c = HybridController(vehicle.body, controller_params, vehicle.tau_max)
        config = live_settings.from_settings(controller_params)
        config.update(knobs)
        c.configure(**live_settings.configure_kwargs(config))
        return AutopilotCore(c, 1.0, 1.0)

    def yaw_torque(core, rate_rad_s, seconds):
        tau = None
        for k in range(int(seconds * 50) + 1):
            t = 0.02 * k
            core.set_attitude(t, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
            core.set_desired(t, [0.0, 0.0, 0.05 + rate_rad_s * t], [0.0, 0.0, 0.0])
            tau = core.tick(t).tau_body_frd[5]
        return tau
    off, on = yaw_torque(core(), 0.0, 4.0), yaw_torque(core(integral_enabled=True), 0.0, 4.0)
    assert on > off + 0.1                       # z grows with the held 0.05 rad error
    off, on = yaw_torque(core(), 0.5, 1.0), yaw_torque(core(drag_feedforward_enabled=True), 0.5, 1.0)
    assert on - off == pytest.approx(vehicle.body.quadratic_drag[5] * 0.25, rel=0.05)
    # A desired yaw 0.05 + 0.2 t^2 (acceleration 0.4 rad/s^2) through the reference filter: at t = 2 s
    # its rate lags by the filter's delay 2 / omega_f, 0.4 (2 - 2 / omega_f), its acceleration is 0.4
    # (0.3 % less at the samples: the 50 Hz straight lines, (omega_f T)^2 / 12).
    def yaw_parabola(core):
        for k in range(101):
            t = 0.02 * k
            core.set_attitude(t, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
            core.set_desired(t, [0.0, 0.0, 0.05 + 0.2 * t * t], [0.0, 0.0, 0.0])
            tau = core.tick(t).tau_body_frd[5]
        return tau
    rate = 0.4 * (2.0 - 2.0 / controller_params.reference_filter_omega_rad_s)
    expected = vehicle.body.total_mass[5] * 0.4 + vehicle.body.quadratic_drag[5] * rate * rate
    off, on = yaw_parabola(core()), yaw_parabola(core(reference_feedforward_enabled=True))
    assert on - off == pytest.approx(expected, rel=2e-3)


# --- output stage ----------------------------------------------------------------------

def test_stock_compensated_stage_flies_stock_firmware_as_the_papers(loop_settings, bundled):
    """Stock ArduSub: the compensated stage flies the bundled dive within 2 % of the paper's
    firmware; sending u as is (stock_naive) leaves small torques in the T200 dead band."""
    iae = {}
    for firmware, stage in (("quantitative", "quantitative"), ("stock", "stock"), ("stock", "stock_naive")):
        loop = ClosedLoop(replace(loop_settings, mixer=firmware, output_stage=stage))
        iae[stage] = _iae_effort(loop, loop.run(bundled, omega_d_rad_s=3.0))[0]
    assert iae["stock"] == pytest.approx(iae["quantitative"], rel=0.02)
    assert iae["stock_naive"] > 5.0 * iae["stock"]


# --- thruster lag, sensor noise, latency -----------------------------------------------

def _dive_at(loop_settings, bundled, omega_d, sim_options):
    loop = ClosedLoop(loop_settings, sim_options=sim_options)
    return _iae_effort(loop, loop.run(bundled, omega_d_rad_s=omega_d))


def test_latency_degrades_high_omega_d(loop_settings, bundled):
    """50 + 50 ms of loop delay at omega_d 6: the dive's IAE and effort rise (docs: delay margin)."""
    base = load_sim_options()
    iae0, effort0 = _dive_at(loop_settings, bundled, 6.0, base)
    late = loop_settings.with_latency(LatencyCase("50+50 ms", 50.0, 0.05, 0.05))
    iae1, effort1 = _dive_at(late, bundled, 6.0, base)
    assert iae1 > 1.4 * iae0 and effort1 > 1.4 * effort0


def test_thruster_lag_eats_the_delay_margin(loop_settings, bundled):
    """With 50 + 50 ms of delay at omega_d 6, the T200's spin-up (third-order lag) takes the loop
    past its margin: the dive's IAE more than doubles; at omega_d 3 it barely moves."""
    base = load_sim_options()
    late = loop_settings.with_latency(LatencyCase("50+50 ms", 50.0, 0.05, 0.05))
    lagged = replace(base, thruster_lag="third_order")
    assert _dive_at(late, bundled, 6.0, lagged)[0] > 2.0 * _dive_at(late, bundled, 6.0, base)[0]
    assert _dive_at(late, bundled, 3.0, lagged)[0] < 1.25 * _dive_at(late, bundled, 3.0, base)[0]


def test_imu_noise_costs_effort_not_accuracy(loop_settings, bundled):
    """The IMU noise of params/simulator.yaml at omega_d 6: attitude effort up at least 5 %, IAE
    within 5 % (the D term amplifies rate noise into the channels)."""
    base = load_sim_options()
    assert base.attitude_noise_std_rad > 0.0 and not base.noise_enabled
    iae0, effort0 = _dive_at(loop_settings, bundled, 6.0, base)
    iae1, effort1 = _dive_at(loop_settings, bundled, 6.0, replace(base, noise_enabled=True))
    assert effort1 > 1.05 * effort0
    assert iae1 == pytest.approx(iae0, rel=0.05)


# --- live retune ---------------------------------------------------------------------

def test_a_live_retune_changes_how_the_next_step_settles(loop_settings):
    """Retuned from omega_d 2 to 5 between two 90 deg yaw steps: the second step settles as
    omega_d 5 does (within 15 % of its own run), not as omega_d 2; the log records the retune."""
    step = step_dive(math.radians(90.0), 1.0, 20.0, 50.0)
    eta = step.eta2d_rad.copy()
    eta[step.t_s >= 11.0, 2] = 0.0
    two = Dive(t_s=step.t_s, eta2d_rad=eta, u_linear=step.u_linear, source="two steps")
    loop = ClosedLoop(loop_settings)

    def second_settling(result):
        k = result.t_s >= 11.0
        return metrics.settling_time(result.t_s[k], result.log["yaw_rad"][k], 0.0, 11.0,
                                     initial=math.radians(90.0), band=0.05)
    retuned = loop.run(two, omega_d_rad_s=2.0, retunes=((10.5, {"omega_d_rad_s": 5.0}),))
    at_5 = loop.run(two, omega_d_rad_s=5.0)
    at_2 = loop.run(two, omega_d_rad_s=2.0)
    assert second_settling(retuned) == pytest.approx(second_settling(at_5), rel=0.15)
    assert second_settling(at_2) > 2.0 * second_settling(retuned)
    omega = retuned.log["omega_d_rad_s"]
    assert set(omega[retuned.t_s < 10.4]) == {2.0} and set(omega[retuned.t_s > 10.6]) == {5.0}


# --- the tether (simulator.yaml section tether; launch tether:=true) -------------------------

def test_the_tether_pulls_a_steady_yaw_error_that_integral_action_removes(loop_settings):
    """Hold level for 60 s in a 0.5 m/s current from the side, on a 15 m tether from a base up-current
    (params/analysis.yaml section tether_loop): the cable's pull at the Heavy's rear attachment point is
    a steady yaw moment. Without the tether the vehicle holds 0 (the current alone turns nothing); on
    it PD holds several degrees off (k_p's steady error); PD+I brings it back. Fails when the tether is
    switched off (no error for PD). The same runs (tether_loop.fly_pull_case) make the generated table
    tether_pull of docs/simulator.md."""
    settings = tl.load_tether_loop_settings()
    late_yaw_deg = {}
    for _, enabled, integral in tl.PULL_CASES:
        run = tl.fly_pull_case(loop_settings, settings, enabled, integral)
        late_yaw_deg[enabled, integral] = run["mean_yaw_deg"]
        if enabled:
            assert np.linalg.norm(run["tether_force_final_ned_n"]) > 5.0    # the cable holds the vehicle
        else:
            assert run["tether_force_final_ned_n"] is None
    assert abs(late_yaw_deg[False, False]) < 0.1
    assert late_yaw_deg[True, False] > 5.0
    assert abs(late_yaw_deg[True, True]) < 0.5
