"""The control law's kernels (brov2_hybrid.control.law_kernels): the numbers of the law's
vector equations as first written, and compiled (numba) = Python bit for bit."""
import math

import numpy as np
import pytest

from brov2_hybrid.control import law_kernels
from brov2_hybrid.physics.hydrostatics import restoring_wrench_from_lever
from brov2_hybrid.physics.kinematics import J2_inv_from_roll_pitch, wrap_angle


def _tick_args(rng, feedforward=True, drag=True, integral=True, reference=False):
    def v(scale=1.0):
        return rng.uniform(-scale, scale, 3)
    eta2 = v(3.0)
    eta2[1] = rng.uniform(-1.3, 1.3)
    state = np.vstack([v(), v(), v(), (rng.random(3) < 0.3).astype(float)])
    lever = v(3.0) if feedforward else np.full(3, math.nan)
    return [v(3.5), v(), eta2, v(), v(0.5), float(rng.uniform(0.0, 10.0)), rng.uniform(10.0, 60.0, 6),
            float(rng.uniform(0.5, 1.0)), rng.uniform(1.0, 40.0, 3), rng.uniform(-2.0, 10.0, 3), lever, drag, integral,
            np.vstack([rng.uniform(0.0, 2.0, 3), rng.uniform(0.0, 3.0, 3)]), rng.uniform(0.0, 30.0, 3),
            rng.uniform(0.1, 1.0, 3),
            (rng.random(3) < 0.8).astype(float), state, np.array([float(rng.uniform(-1.0, 10.0))]),
            float(rng.choice([math.inf, 0.05])), reference, np.vstack([v(3.0), v(2.0), v(3.0)]),
            np.array([float(rng.uniform(-1.0, 10.0)), float(rng.choice([0.0, 0.02]))]), float(rng.uniform(2.0, 30.0)),
            np.zeros(6)]


def test_control_torque_is_the_vector_equations_as_first_written():
    """Without the integral action, tau is the law's numpy formulas of the first tick loop, bit for bit:
    linear_scale u tau_max; kp (J2_inv @ wrap(eta2d - eta2)) + kd (J2_inv @ eta2d_dot - nu2) - m_hydro(eta2d),
    + the drag B_L r + B_NL r |r| of r = J2_inv @ eta2d_dot; times the enabled mask."""
    rng = np.random.default_rng(3)
    run = law_kernels.kernels()["control_torque"]
    for k in range(300):
        args = _tick_args(rng, feedforward=k % 2 == 0, drag=k % 3 == 0, integral=False)
        (eta2d, u_lin, eta2, nu2, rate_d, _, tau_max, scale, kp, kd, lever, drag, _, drag_model, _, _, enabled) = args[:17]
        run(*args)
        J2i = J2_inv_from_roll_pitch(eta2[0], eta2[1])
        ff = (-restoring_wrench_from_lever(eta2d[0], eta2d[1], 1.0, lever.tolist())[3:] if k % 2 == 0
              else np.zeros(3))
        att = kp * (J2i @ wrap_angle(eta2d - eta2)) + kd * (J2i @ rate_d - nu2) + ff
        if drag:
            r = J2i @ rate_d
            att += drag_model[0] * r + drag_model[1] * r * np.abs(r)
        expected = np.concatenate([scale * u_lin * tau_max[:3], att * enabled])
        assert args[-1].tolist() == expected.tolist()


@pytest.mark.skipif(law_kernels.kernels()["control_torque"] is law_kernels.control_torque,
                    reason="numba is not installed here (or BROV2_NO_JIT is set): only the Python kernels run")
def test_compiled_law_gives_the_python_numbers():
    """Every option on and off, random states: the compiled tick = the Python tick (tau and the
    integral state), and the compiled rate estimate and reference filter = the Python ones over
    irregular samples."""
    rng = np.random.default_rng(4)
    compiled = law_kernels.kernels()
    for k in range(400):
        args = _tick_args(rng, feedforward=k % 2 == 0, drag=k % 3 == 0, integral=k % 4 != 0, reference=k % 5 == 0)
        twin = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        compiled["control_torque"](*args)
        law_kernels.control_torque(*twin)
        for a, b in zip(args, twin):
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b, equal_nan=True)
    for window in (1, 3, 8):
        arrays = [(np.zeros(window + 2), np.zeros((window + 2, 3)), np.zeros((window + 2, 3)),
                   np.zeros(1, dtype=np.int64)) for _ in range(2)]
        t = 0.0
        for _ in range(60):
            t += float(rng.choice([0.0, 0.01, 0.02, 0.1]))       # 0.0: a re-sent setpoint replaces the last
            eta2d, now = rng.uniform(-3.5, 3.5, 3), t + float(rng.uniform(0.0, 0.2))
            outs = []
            for run, (times, values, diffs, meta) in zip((compiled, law_kernels.KERNELS), arrays):
                get = run.get if isinstance(run, dict) else {f.__name__: f for f in run}.get
                get("rate_update")(times, values, diffs, meta, window, t, eta2d)
                out = np.empty(3)
                get("rate_estimate")(times, diffs, int(meta[0]), now, out)
                outs.append(out)
            assert outs[0].tolist() == outs[1].tolist()
    filters = [(np.zeros((3, 3)), np.array([math.nan, 0.0])) for _ in range(2)]
    t = 0.0
    for _ in range(200):
        t += float(rng.choice([0.0, 0.01, 0.02, 0.05, 0.3]))   # 0.3: past the 0.1 s gap of a stream
        eta2d, now = rng.uniform(-3.5, 3.5, 3), t + float(rng.choice([0.0, 0.05, 0.4]))
        outs = []
        for run, (state, meta) in zip((compiled, {f.__name__: f for f in law_kernels.KERNELS}), filters):
            run["reference_update"](state, meta, 8.0, 0.1, t, eta2d)
            out = np.empty((3, 3))
            run["reference_output"](state, meta, 8.0, now, out)
            torque = np.empty(3)
            run["reference_torque"](out, np.array([0.96, 1.12, 1.12]), np.array([[0.0] * 3, [2.08, 2.42, 2.42]]),
                                    torque)
            outs.append(np.concatenate([state.ravel(), out.ravel(), torque]))
        assert outs[0].tolist() == outs[1].tolist()
