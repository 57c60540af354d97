"""The depth hold's heave frequency is capped so that its loop keeps a delay margin
(controller.depth_hold_min_delay_margin_s): the margin against analytic and independent values, and the
outcome: a high omega_d behind a tether holds depth calmly with the cap and oscillates without it."""
import math
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.analysis.metrics import depth_error
from brov2_hybrid.control.depth_hold import DepthHold, heave_delay_margin_s, heave_omega_limit
from brov2_hybrid.dive.dive_csv import Dive
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.loop.settings import load_loop_settings
from brov2_hybrid.params import load_controller_params
from brov2_hybrid.tick_log.logfile import PWM_COLUMNS
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


def test_without_drag_or_filter_the_margin_is_the_double_integrators():
    """L = (w^2 + 2 w s) / s^2 (k_p = M w^2, k_d = 2 M w): crossover x = w sqrt(2 + sqrt 5), phase
    margin atan(2 x / w), delay margin that over x."""
    for omega in (0.5, 2.0, 7.0):
        x = omega * math.sqrt(2.0 + math.sqrt(5.0))
        expected = math.atan(2.0 * x / omega) / x
        assert heave_delay_margin_s(omega, 26.0, 0.0, 0.0, 0.0, 0.0) == pytest.approx(expected, rel=1e-6)


def test_with_a_filter_the_margin_is_what_a_dense_frequency_sweep_finds():
    """The same loop evaluated on a dense log grid of frequencies (numpy, no root finder): the last
    crossing of |L| = 1, its phase margin over that frequency."""
    from brov2_hybrid.control.gains import pd_gains
    mass, b_lin, b_check = 26.07, 5.18, 19.1
    w = np.logspace(-3, 3, 400001)
    for omega, filter_s in ((1.0, 0.2), (2.5, 0.2), (6.0, 0.05)):
        g = pd_gains(omega, [mass], [b_check], 3.0, n_dofs=1)
        s = 1j * w
        L = (g.kp[0] + g.kd_total[0] * s / (filter_s * s + 1.0)) / (mass * s * s + b_lin * s)
        k = np.nonzero(np.diff(np.sign(np.abs(L) - 1.0)))[0][-1]
        margin = np.pi + np.angle(L[k])
        want = ((margin + np.pi) % (2 * np.pi) - np.pi) / w[k]
        assert heave_delay_margin_s(omega, mass, b_lin, b_check, 3.0, filter_s) == pytest.approx(want, rel=2e-3)


def test_the_limit_is_the_highest_frequency_that_keeps_the_margin_and_a_filter_lowers_it():
    mass, b_lin, b_check = 26.07, 5.18, 19.1
    limit = heave_omega_limit(mass, b_lin, b_check, 0.0, 0.2, 0.15)
    assert heave_delay_margin_s(limit, mass, b_lin, b_check, 0.0, 0.2) >= 0.15
    assert heave_delay_margin_s(limit * 1.01, mass, b_lin, b_check, 0.0, 0.2) < 0.15
    assert heave_omega_limit(mass, b_lin, b_check, 0.0, 0.0, 0.15) > limit      # the filter's lag costs margin
    assert heave_omega_limit(mass, b_lin, b_check, 0.0, 0.2, 0.05) > limit      # less margin asked: higher
    with pytest.raises(Brov2Error, match="depth_hold_min_delay_margin_s"):
        heave_omega_limit(mass, b_lin, b_check, 0.0, 0.2, 10.0)


def test_the_default_omega_d_is_not_capped_and_a_high_one_is_with_its_reason():
    vehicle = load_vehicle()
    params = load_controller_params()
    hold = DepthHold(vehicle.body, params, 3.0, vehicle.tau_max[2])
    assert hold.omega_rad_s == pytest.approx(params.heave_omega_ratio * 3.0) and hold.capped() is None
    hold.retune(14.0)
    assert hold.omega_requested_rad_s == pytest.approx(params.heave_omega_ratio * 14.0)
    assert hold.omega_rad_s == pytest.approx(hold.omega_limit_rad_s)
    assert hold.omega_limit_rad_s < hold.omega_requested_rad_s
    assert "depth_hold_min_delay_margin_s" in hold.capped()
    # uncapped, its loop would have less delay margin than a 20 + 20 ms tether's delay (docs/depth-hold.md)
    assert heave_delay_margin_s(hold.omega_requested_rad_s, hold.total_mass_kg, hold.linear_drag, hold.b_check,
                                hold.kappa, hold.rate_filter_s) < 0.04
    assert hold.kp == pytest.approx(vehicle.body.total_mass[2] * hold.omega_limit_rad_s ** 2)


def test_the_controller_says_so_when_the_ceiling_binds_on_a_hold_that_is_on():
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    c = ClosedLoop().new_controller(3.0)
    assert not any("capped" in line for line in c.configure(omega_d_rad_s=10.0))        # hold off: silent
    changes = c.configure(depth_hold_enabled=True)
    assert any("capped at" in line and "depth_hold_min_delay_margin_s" in line for line in changes)
    assert not any("capped" in line for line in c.configure(kappa=25.0))                # unchanged: once
    assert not any("capped" in line for line in c.configure(omega_d_rad_s=3.0))         # below the ceiling


def _hover(min_margin_s):
    """20 s level, yaw 0, no stick, at omega_d 14 behind a 20 + 20 ms link with the depth hold on: the
    depth error RMS [m] and the motor effort [s] after the first 5 s."""
    settings = replace(load_loop_settings(), telemetry_delay_s=0.02, command_delay_s=0.02, initial_depth_m=20.0)
    loop = ClosedLoop(settings, controller_params=replace(load_controller_params(),
                                                          depth_hold_min_delay_margin_s=min_margin_s))
    t = np.arange(0.0, 20.0 + 1e-9, 0.02)
    log = loop.run(Dive(t, np.zeros((t.size, 3)), np.zeros((t.size, 3))), omega_d_rad_s=14.0,
                   controller_options={"depth_hold_enabled": True}).log
    late = log["time_s"] >= 5.0
    rms = depth_error(log["depth_m"][late], log["depth_setpoint_m"][late])[0]
    pwm = np.column_stack([log[c][late] for c in PWM_COLUMNS])
    dt = float(np.median(np.diff(log["time_s"])))
    return rms, float(np.sum(np.abs(pwm[pwm > 0] - 1500.0)) / 400.0 * dt)


def test_behind_a_tether_the_capped_hold_is_calm_and_the_uncapped_one_oscillates():
    calm_rms, calm_effort = _hover(load_controller_params().depth_hold_min_delay_margin_s)
    wild_rms, wild_effort = _hover(0.0)          # no cap: heave omega 0.75 * 14 = 10.5 rad/s
    assert calm_rms < 0.005, "capped: depth error RMS %.4f m" % calm_rms
    assert wild_rms > 5.0 * calm_rms and wild_rms > 0.01, "uncapped: depth error RMS %.4f m" % wild_rms
    assert wild_effort > 2.0 * calm_effort, (calm_effort, wild_effort)
