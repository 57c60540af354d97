"""Loop-delay compensation (control/delay_compensation.py): the prediction against an independent
integration of the vehicle model, the law's wiring, and flown behind a realistic tether's latency."""
import math
import os
from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from brov2_hybrid.analysis.log_summary import log_metrics
from brov2_hybrid.analysis.settings import LatencyCase, load_analysis_settings
from brov2_hybrid.control.autopilot_safety import AutopilotCore
from brov2_hybrid.control.delay_compensation import AttitudePredictor
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.dive.dive_csv import load_dive_csv
from brov2_hybrid.dive.shapes import step_dive
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.params import load_controller_params
from brov2_hybrid import paths
from brov2_hybrid.physics.hydrostatics import restoring_wrench
from brov2_hybrid.physics.kinematics import J2
from brov2_hybrid.sim.config import load_sim_options
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

ON = {"delay_compensation_enabled": True}


@pytest.fixture(scope="module")
def heavy():
    return load_vehicle(None)


def _predictor(vehicle, command_delay_s):
    b = vehicle.body
    settings = replace(load_controller_params(), delay_compensation_enabled=True,
                       delay_compensation_command_delay_s=command_delay_s)
    drag = np.vstack([b.linear_drag[3:], b.quadratic_drag[3:]])
    return AttitudePredictor(b.total_mass[3:], drag, b.weight_n * b.r_cg_m - b.buoyancy_n * b.r_cb_m,
                             vehicle.tau_max[3:], settings)


def test_the_prediction_is_the_model_integrated_under_the_torques_in_flight(heavy):
    """From an attitude 50 ms old, under the torques sent at 50 Hz that act 50 ms after their tick, to
    half a period after this tick's torque starts acting: as scipy integrates the same model (hydrostatics'
    restoring wrench, kinematics' J2, the vehicle file's drag and inertia)."""
    b = heavy.body
    p = _predictor(heavy, 0.05)
    rng = np.random.default_rng(3)
    ticks = np.arange(0.0, 0.52, 0.02)
    sent = {t: rng.uniform(-8.0, 8.0, 3) for t in ticks}
    for t in ticks:
        p.record(t, sent[t])
    t_now, age = ticks[-1], 0.05
    eta0, nu0 = np.array([0.3, -0.2, 1.0]), np.array([0.4, -0.3, 0.8])
    got_eta, got_nu = p.predict(eta0, nu0, t_now, age)

    def torque(t):
        due = [s for s in ticks if s + 0.05 <= t + 1e-12]
        return np.clip(sent[max(due)], -heavy.tau_max[3:], heavy.tau_max[3:]) if due else np.zeros(3)

    def rhs(t, x):
        eta2, nu2 = x[:3], x[3:]
        drag = b.linear_drag[3:] * nu2 + b.quadratic_drag[3:] * nu2 * np.abs(nu2)
        g = restoring_wrench(eta2, b.weight_n, b.buoyancy_n, b.r_cg_m, b.r_cb_m)[3:]
        return np.concatenate([J2(eta2) @ nu2, (torque(t) - drag + g) / b.total_mass[3:]])

    end = t_now + 0.05 + 0.5 * 0.02
    assert p.horizon_s(age) == pytest.approx(end - (t_now - age))
    stops = sorted({end} | {s + 0.05 for s in ticks if t_now - age < s + 0.05 < end})
    x, t0 = np.concatenate([eta0, nu0]), t_now - age
    for t1 in stops:                       # piecewise, as the torque is: the solver never steps over a switch
        x = solve_ivp(rhs, (t0, t1), x, rtol=1e-10, atol=1e-12).y[:, -1]
        t0 = t1
    np.testing.assert_allclose(got_eta, x[:3], atol=2e-6)
    np.testing.assert_allclose(got_nu, x[3:], atol=2e-5)
    assert np.max(np.abs(got_eta - eta0)) > 0.05          # it did predict: not the measurement


def test_off_or_without_a_tick_time_the_law_sees_the_measurement(heavy):
    p = _predictor(heavy, 0.05)
    eta, nu = np.array([0.1, 0.2, 0.3]), np.array([0.5, 0.5, 0.5])
    assert p.predict(eta, nu, math.nan, 0.05)[0] is eta
    p.enabled = False
    assert p.predict(eta, nu, 1.0, 0.05)[0] is eta


def test_configure_switches_it_live_and_refuses_unknown_settings(heavy):
    c = HybridController(heavy.body, load_controller_params(), heavy.tau_max, heavy.passive_dofs)
    assert not c.predictor.enabled                          # off by default: the paper's law
    changes = c.configure(delay_compensation_enabled=True, delay_compensation_command_delay_s=0.04)
    assert c.predictor.enabled and c.predictor.command_delay_s == 0.04 and len(changes) == 2
    with pytest.raises(Brov2Error, match="delay_compensation_command_delay_s"):
        c.configure(delay_compensation_command_delay_s=-0.1)
    with pytest.raises(TypeError):
        c.configure(delay_compensation_on=True)


def test_the_node_path_hands_the_attitudes_age_to_the_law(heavy):
    """AutopilotCore (control_law's tick) predicts over the attitude's age: the same measurement gives another
    torque when it is older, with the compensation on, and the same one with it off."""
    def torque(enabled, age):
        c = HybridController(heavy.body, load_controller_params(), heavy.tau_max, heavy.passive_dofs)
        c.configure(delay_compensation_enabled=enabled)
        core = AutopilotCore(c, 1.0, 1.0)
        core.set_desired(10.0, np.array([0.0, 0.0, 0.5]), np.zeros(3))
        core.set_attitude(10.0 - age, np.zeros(3), np.array([0.0, 0.0, 0.6]))
        return core.tick(10.0).tau_body_frd[5]
    assert torque(False, 0.0) == torque(False, 0.1)
    # older, so predicted further along its yaw rate: nearer the setpoint, less torque
    assert torque(True, 0.1) < torque(True, 0.0) - 0.2


def _flown(condition_delay_s, omega_d, options, dive, duration_s=None):
    settings = load_analysis_settings()
    loop = ClosedLoop(settings.loop.with_latency(LatencyCase("x", 50.0, condition_delay_s, condition_delay_s)),
                      sim_options=replace(load_sim_options(), thruster_lag="third_order", noise_enabled=True))
    r = loop.run(dive, duration_s=duration_s, omega_d_rad_s=omega_d, controller_options=options)
    m, _ = log_metrics(r.log, loop.rc_map)
    return r, sum(m["iae_%s_deg_s" % a] for a in ("roll", "pitch", "yaw")), \
        sum(m["energy_%s" % a] for a in ("roll", "pitch", "yaw"))


def test_behind_a_realistic_tether_it_keeps_a_stiff_loop_stable():
    """50 + 50 ms each way, the T200's spin-up, IMU noise (omega-limit's `realistic`), omega_d 8: the plain law
    oscillates on the bundled dive, with the compensation it tracks (and spends less)."""
    dive = load_dive_csv(os.path.join(paths.package_root(), "data", "dives", "ar_pilot_dive.csv"))
    _, plain_iae, plain_effort = _flown(0.05, 8.0, None, dive, 60.0)
    _, comp_iae, comp_effort = _flown(0.05, 8.0, dict(ON, delay_compensation_command_delay_s=0.05), dive, 60.0)
    assert comp_iae < 0.3 * plain_iae, (comp_iae, plain_iae)
    assert comp_effort < plain_effort


def test_behind_a_realistic_tether_a_yaw_step_settles_without_overshoot():
    from brov2_hybrid.analysis import metrics
    step = step_dive(math.radians(90.0), 1.0, 8.0, 50.0)
    out = {}
    for name, options in (("plain", None), ("comp", dict(ON, delay_compensation_command_delay_s=0.05))):
        r, _, _ = _flown(0.05, 8.0, options, step)
        out[name] = metrics.overshoot(r.t_s, r.log["yaw_rad"], math.radians(90.0), 1.0)
    assert out["plain"] > 15.0 and out["comp"] < 5.0, out
