"""Optional integral action and drag feed-forward of the control law (issue 10 section 2)."""
import math

import numpy as np
import pytest

from brov2_hybrid.control.law import HybridController, attitude_torque, normalize
from brov2_hybrid.physics.hydrostatics import restoring_moment
from brov2_hybrid.control.autopilot_safety import AutopilotCore

YAW = 2


def _controller(vehicle, controller_params, **options):
    c = HybridController(vehicle.body, controller_params, vehicle.tau_max)
    c.configure(**options)
    return c


def test_integral_off_is_the_paper_law_bit_for_bit(vehicle, controller_params):
    """Off (the default): every output equals Eq. 18/24 exactly, whatever t_s says."""
    rng = np.random.default_rng(7)
    c = _controller(vehicle, controller_params, integral_ratio=0.7)
    assert not c.integral_enabled and not c.drag_feedforward_enabled
    for k in range(200):
        eta2d, eta2 = rng.uniform(-1.2, 1.2, 3), rng.uniform(-1.2, 1.2, 3)
        nu2, rate_d = rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3)
        u_lin = rng.uniform(-1, 1, 3)
        out = c.compute(eta2d, u_lin, eta2, nu2, eta2d_dot=rate_d, t_s=0.02 * k)
        tau = np.concatenate([u_lin * vehicle.tau_max[:3],
                              attitude_torque(eta2d, rate_d, eta2, nu2, c.gains.kp, c.gains.kd_total,
                                              -restoring_moment(eta2d, c.body))])
        assert out.tau_body_frd.tobytes() == tau.tobytes()
        assert out.saturated.tolist() == normalize(tau, vehicle.tau_max)[1].tolist()


def _fly_yaw(c, disturbance_nm, duration_s, step_rad=0.0, dt=0.02, substeps=20):
    """The vehicle model's yaw at roll = pitch = 0: (I + M_A) r' = tau + d - (B_L r + B_NL r |r|)."""
    inertia, (b_l, b_nl) = c.total_inertia[YAW], c.drag_model[:, YAW]
    psi, r, out = 0.0, 0.0, []
    for k in range(int(round(duration_s / dt))):
        t = k * dt
        tau = c.compute([0, 0, step_rad], [0, 0, 0], [0, 0, psi], [0, 0, r], eta2d_dot=np.zeros(3),
                        t_s=t).tau_body_frd[5]
        h = dt / substeps
        for _ in range(substeps):
            r += h * (tau + disturbance_nm - b_l * r - b_nl * r * abs(r)) / inertia
            psi += h * r
        out.append(psi)
    return np.array(out)


def test_integral_removes_the_steady_error_of_a_constant_disturbance(vehicle, controller_params):
    d = 3.0   # N m, well inside tau_max
    pd = _fly_yaw(_controller(vehicle, controller_params, omega_d_rad_s=3.0), d, 40.0)
    pdi = _fly_yaw(_controller(vehicle, controller_params, omega_d_rad_s=3.0, integral_enabled=True), d, 40.0)
    kp = _controller(vehicle, controller_params, omega_d_rad_s=3.0).gains.kp[YAW]
    assert pd[-1] == pytest.approx(d / kp, rel=1e-3)         # PD: offset d / k_p (Eq. 22 at s = 0)
    assert abs(pdi[-1]) < 1e-3 * d / kp


def test_integral_keeps_the_nominal_step_response(vehicle, controller_params):
    """Undisturbed nominal plant: the model-following integrator stays ~0, so a yaw
    step flies as the PD does (no integrator overshoot)."""
    step = math.radians(60)
    pd = _fly_yaw(_controller(vehicle, controller_params, omega_d_rad_s=2.0), 0.0, 15.0, step)
    c = _controller(vehicle, controller_params, omega_d_rad_s=2.0, integral_enabled=True)
    pdi = _fly_yaw(c, 0.0, 15.0, step)
    assert np.max(np.abs(pdi - pd)) < 0.01 * step
    assert pdi.max() <= pd.max() + 0.001 * step          # no overshoot beyond the PD's own


def test_anti_windup_bounds_the_integral_by_tau_max(vehicle, controller_params):
    c = _controller(vehicle, controller_params, integral_enabled=True, integral_ratio=2.0)
    for k in range(2000):     # a 170 deg error held for 40 s: the command saturates
        out = c.compute([0, 0, 3.0], [0, 0, 0], [0, 0, 0], [0, 0, 0], eta2d_dot=np.zeros(3), t_s=0.02 * k)
    assert np.all(np.abs(c.integral.z_nm) <= vehicle.tau_max[3:])
    assert out.saturated[5]
    # Conditional integration: z stops growing once PD + z saturates (one tick of slack).
    pd = c.gains.kp[YAW] * 3.0
    assert c.integral.z_nm[YAW] <= vehicle.tau_max[5] - pd + c.ki[YAW] * math.pi * 0.02


def test_reset_and_axis_disable_clear_the_integral(vehicle, controller_params):
    c = _controller(vehicle, controller_params, integral_enabled=True)
    for k in range(300):
        c.compute([0.1, 0.1, 0.1], [0, 0, 0], [0, 0, 0], [0, 0, 0], eta2d_dot=np.zeros(3), t_s=0.02 * k)
    assert np.all(c.integral.z_nm != 0.0)
    c.reset_integral([0])
    assert c.integral.z_nm[0] == 0.0 and np.all(c.integral.z_nm[1:] != 0.0)
    c.configure(closed_loop_enabled=[True, True, False])
    assert c.integral.z_nm[2] == 0.0 and c.integral.z_nm[1] != 0.0
    with pytest.raises(Exception, match="axes"):
        c.reset_integral([3])


def test_autopilot_core_resets_the_integral_on_a_mode_change(vehicle, controller_params):
    c = _controller(vehicle, controller_params, integral_enabled=True)
    core = AutopilotCore(c, 0.5, 1.0)
    core.set_attitude(0.0, [0, 0, 0], [0, 0, 0])
    for k in range(300):      # the reference reaches the integral band, then z grows
        t = 0.02 * k
        core.set_attitude(t, [0, 0, 0], [0, 0, 0])
        core.set_desired(t, [0, 0, 0.2], [0, 0, 0])
        core.tick(t)
    assert c.integral.z_nm[YAW] != 0.0
    core.tick(9.0)       # desired state too old: NO_INPUT hold (attitude also stale -> neutral)
    assert c.integral.z_nm[YAW] == 0.0


def test_drag_feedforward_adds_the_model_drag_of_the_desired_rate(vehicle, controller_params):
    """On: tau += B_L r_d + B_NL r_d |r_d| (the vehicle file's drag at the desired body rate),
    not the linearised B-check r_d, which is 12x too much at 0.2 rad/s on the Heavy (B_L = 0)."""
    c = _controller(vehicle, controller_params, drag_feedforward_enabled=True)
    b_l, b_nl = vehicle.body.linear_drag[5], vehicle.body.quadratic_drag[5]
    for r in (0.2, -0.5, 2.0):
        rate = np.array([0.0, 0.0, r])
        c.configure(drag_feedforward_enabled=True)
        on = c.compute([0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], eta2d_dot=rate).tau_body_frd
        c.configure(drag_feedforward_enabled=False)
        off = c.compute([0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], eta2d_dot=rate).tau_body_frd
        assert on[5] - off[5] == pytest.approx(b_l * r + b_nl * r * abs(r))
    assert vehicle.body.quadratic_drag[5] * 0.2 ** 2 < c.b_check[YAW] * 0.2 / 10.0


def test_no_integration_while_the_reference_moves(vehicle, controller_params):
    """Outside the integral band (the reference still far from eta2d) z stays 0."""
    c = _controller(vehicle, controller_params, integral_enabled=True, integral_band_rad=math.radians(2.0))
    for k in range(10):   # 0.2 s into a 60 deg step: the reference is still tens of degrees away
        c.compute([0, 0, 1.0], [0, 0, 0], [0, 0, 0], [0, 0, 0], eta2d_dot=np.zeros(3), t_s=0.02 * k)
    assert abs(math.degrees(1.0 - c.integral.reference()[YAW])) > 2.0
    assert c.integral.z_nm[YAW] == 0.0


def _vector_step(state, t_s, eta2d, eta2d_dot, eta2, J2i, tau_att, kp, kd, inertia, drag, drag_ff, ki, enabled,
                 tau_max, band):
    """The IntegralAction docstring's equations on 3-vectors with numpy: the independent
    expectation of the test below (model torque clipped to tau_max, drag B_L r + B_NL r |r|)."""
    from brov2_hybrid.physics.kinematics import wrap_angle
    m, md, z, last = state
    dt = 0.0 if last is None else max(t_s - last, 0.0)
    b_l, b_nl = drag

    def damping(r):
        return b_l * r + b_nl * r * np.abs(r)
    if dt > 0.0:
        rate = np.maximum(np.abs(md), np.abs(eta2d_dot))
        fastest = max(float(np.max((b_l + 2.0 * b_nl * rate + np.abs(kd)) / inertia)),
                      float(np.max(np.sqrt(np.abs(kp) / inertia))))
        n = max(1, int(math.ceil(dt * fastest / 0.2)))
        h = dt / n
        ff = damping(eta2d_dot) if drag_ff else np.zeros(3)
        for _ in range(n):
            pd = np.clip(kp * wrap_angle(eta2d - m) + kd * (eta2d_dot - md) + ff, -tau_max, tau_max)
            acc = (pd - damping(md)) / inertia
            md = md + h * acc
            m = wrap_angle(m + h * md)
        e = J2i @ wrap_angle(m - eta2)
        total = tau_att + z
        pushing_out = (np.abs(total) >= tau_max) & (np.sign(e) == np.sign(total))
        settled = np.abs(wrap_angle(eta2d - m)) <= band
        z = np.clip(z + np.where(enabled & settled & ~pushing_out, ki * e * dt, 0.0), -tau_max, tau_max)
    z = np.where(enabled, z, 0.0)
    return [m, md, z, t_s]


@pytest.mark.parametrize("band", [math.inf, 0.05])
def test_integral_step_is_the_vector_equations_bit_for_bit(band):
    """IntegralAction.step (axis by axis on floats) against the same equations on 3-vectors:
    the same numbers, over random states, rates, saturation, disabled axes and uneven ticks."""
    from types import SimpleNamespace
    from brov2_hybrid.control import integral_action as ia
    from brov2_hybrid.control.integral_action import IntegralAction
    rng = np.random.default_rng(21)
    for _ in range(40):
        tau_max = rng.uniform(1.0, 10.0, 3)
        action = IntegralAction(tau_max)
        action.band_rad = band
        kp, kd = rng.uniform(1.0, 20.0, 3), rng.uniform(1.0, 10.0, 3)
        inertia, ki = rng.uniform(0.1, 1.0, 3), rng.uniform(0.0, 30.0, 3)
        drag = np.vstack([rng.uniform(0.0, 2.0, 3), rng.uniform(0.0, 3.0, 3)])
        drag_ff = bool(rng.random() < 0.5)
        t, eta2d, state = 0.0, rng.uniform(-1.0, 1.0, 3), None
        for k in range(40):
            t += float(rng.choice([0.0, 0.01, 0.02, 0.05]))
            if k % 10 == 9:
                eta2d = rng.uniform(-3.5, 3.5, 3)
            eta2d_dot, eta2, nu2 = rng.normal(0.0, 0.3, 3), rng.uniform(-3.0, 3.0, 3), rng.normal(0.0, 0.5, 3)
            eta2[1] = rng.uniform(-1.2, 1.2)                  # pitch away from gimbal lock
            J2i, tau_att, enabled = np.eye(3) + rng.normal(0.0, 0.1, (3, 3)), rng.normal(0.0, 8.0, 3), rng.random(3) < 0.8
            z = action.step(t, eta2d, eta2d_dot, eta2, nu2, J2i, tau_att, SimpleNamespace(kp=kp, kd_total=kd),
                            inertia, drag, drag_ff, ki, enabled).copy()
            if state is None:          # the first tick starts the model at the measured attitude, no dt
                state = [action.reference(), action.state[ia.ETA2M_DOT].copy(), np.zeros(3), t]
                continue
            state = _vector_step(state, t, eta2d, eta2d_dot, eta2, J2i, tau_att, kp, kd, inertia, drag, drag_ff, ki,
                                 enabled, tau_max, band)
            assert z.tolist() == state[2].tolist()
            assert action.reference().tolist() == state[0].tolist()
