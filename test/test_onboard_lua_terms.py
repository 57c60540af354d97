"""The on-board script's optional terms (reference and drag feed-forward, integral action) against the Python
core over whole runs: they carry state from turn to turn, so the script and control_law's AutopilotCore around
HybridController fly the same turns (docs/onboard.md "It is the same law")."""
import dataclasses
import math

import numpy as np
import pytest

from brov2_hybrid.control.autopilot_safety import MODE_NO_INPUT, AutopilotCore
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.onboard.desired_link import desired_data
from brov2_hybrid.onboard.lua_script import write_script
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from onboard_lua_support import (LUA, ONBOARD, SETTINGS, TERMS, desired_message, lua_list, pwm_of_tau, run_lua,
                                 servo_lines)


@pytest.fixture(scope="module", params=["bluerov2_heavy", "bluerov2"])
def vehicle(request):
    assert LUA, "lua5.3 not found: scripts/setup.sh installs it (apt-get install lua5.3)"
    return load_vehicle(request.param)


class SentRate(object):
    """The topside's rate estimate as the script gets it (in the message): what the law uses for eta2d_dot."""

    def __init__(self):
        self.value = np.zeros(3)

    def update(self, t_s, eta2d):
        pass

    def reset(self):
        pass

    def rate(self, now_s=None):
        return self.value


def _dive(t_s):
    """A desired state at ``t_s`` [s] (attitude, rates, linear commands) and a lagging, biased attitude."""
    w = 2.0 * math.pi / 2.5
    eta2d = np.array([0.3 * math.sin(w * t_s), 0.2 * math.cos(0.7 * w * t_s), math.pi * math.sin(0.3 * w * t_s)])
    rates = np.array([0.3 * w * math.cos(w * t_s), -0.14 * w * math.sin(0.7 * w * t_s),
                      0.3 * w * math.pi * math.cos(0.3 * w * t_s)])
    lag = t_s - 0.12
    eta2 = np.array([0.3 * math.sin(w * lag) + 0.04, 0.2 * math.cos(0.7 * w * lag) - 0.03,
                     math.pi * math.sin(0.3 * w * lag) + 0.05])
    eta2[2] = math.pi - (math.pi - eta2[2]) % (2.0 * math.pi)
    nu2 = 0.9 * rates
    return eta2d, rates, np.array([0.4, -0.2, 0.3]), eta2, nu2


def _terms_run(vehicle, settings, path, gap_ms=(1500.0, 2800.0), until_ms=4000.0):
    """Fly the generated script and the Python core (control_law's AutopilotCore around HybridController) through
    the same turns: a 50 Hz desired stream with a gap (hold, then a new trajectory), the script's 100 Hz loop.
    Returns (script PWMs, core PWMs, core modes) per turn, and the script's integral z at the end."""
    turns, lua = [], []
    law = HybridController(vehicle.body, settings, vehicle.tau_max, vehicle.passive_dofs)
    law.rate_estimator = SentRate()
    core = AutopilotCore(law, attitude_timeout_s=10.0, desired_timeout_s=ONBOARD.desired_timeout_s)
    modes, want = [], []
    for k in range(int(until_ms / 10.0)):
        t_ms = 10.0 * k
        eta2d, rates, u_lin, eta2, nu2 = _dive(t_ms / 1000.0)
        line = "H.now, H.att, H.gyro = %r, %s, %s" % (t_ms, lua_list(eta2), lua_list(nu2))
        if k % 2 == 0 and not gap_ms[0] < t_ms < gap_ms[1]:
            sent = np.array(desired_data(eta2d, rates, u_lin), dtype=np.float32).astype(float)
            line += "\nH.queue[#H.queue + 1] = from_hex(%r)" % desired_message(eta2d, rates, u_lin)
            law.rate_estimator.value = sent[3:6]
            core.set_desired(t_ms / 1000.0, sent[0:3], sent[6:9])
        core.set_attitude(t_ms / 1000.0, eta2, nu2)
        tick = core.tick(t_ms / 1000.0)
        modes.append(tick.mode)
        want.append(pwm_of_tau(vehicle, tick.tau_body_frd).tolist())
        lua.append(line + ("\nM.start()" if k == 0 else "\nM.update()") + "\nprint_servo(H.now, H.now + 1)")
        turns.append(t_ms)
    lua.append("print('z ' .. table.concat(M.L.int.z, ' '))")
    lines = run_lua(path, "\n".join(lua))
    by_time = servo_lines(lines)
    got = [[by_time[t][ch][0] for ch in range(vehicle.n_thrusters)] for t in turns]
    z = [float(x) for x in lines[-1].split()[1:]]
    return np.array(got), np.array(want), modes, z


def test_the_scripts_reference_feedforward_and_integral_are_the_python_cores(vehicle, tmp_path):
    path = write_script(str(tmp_path / "terms.lua"), vehicle, TERMS, ONBOARD)
    got, want, modes, z = _terms_run(vehicle, TERMS, path)
    assert got.shape == want.shape
    assert MODE_NO_INPUT in modes and modes[-1] != MODE_NO_INPUT, "the run should hold through the gap, then fly"
    assert np.abs(got - want).max() <= 1.0
    assert np.mean(got == want) >= 0.99, "the script should give the microsecond in nearly every turn"
    assert max(map(abs, z)) > 0.5, "the attitude's bias should have grown the integral torque [N m]"
    # the terms change the motors: the plain PD, flown through the same turns, gives other PWMs
    plain = dataclasses.replace(TERMS, reference_feedforward_enabled=False, integral_enabled=False)
    got_plain, want_plain, _, _ = _terms_run(vehicle, plain, write_script(str(tmp_path / "plain.lua"), vehicle,
                                                                          plain, ONBOARD))
    assert np.mean(got_plain == want_plain) >= 0.99
    assert np.mean(np.abs(got_plain - got).max(axis=1) >= 5) > 0.5


@pytest.mark.parametrize("term", ["reference_feedforward_enabled", "integral_enabled", "drag_feedforward_enabled"])
def test_each_term_alone_is_the_python_cores(vehicle, tmp_path, term):
    settings = dataclasses.replace(SETTINGS, omega_d_rad_s=8.0, **{term: True})
    path = write_script(str(tmp_path / "one.lua"), vehicle, settings, ONBOARD)
    got, want, _, _ = _terms_run(vehicle, settings, path, until_ms=2000.0, gap_ms=(900.0, 1000.0))
    plain = dataclasses.replace(settings, **{term: False})
    core_plain = _terms_run(vehicle, plain, write_script(str(tmp_path / "plain.lua"), vehicle, plain, ONBOARD),
                            until_ms=2000.0, gap_ms=(900.0, 1000.0))[1]
    assert np.abs(got - want).max() <= 1.0 and np.mean(got == want) >= 0.99
    assert np.mean(np.abs(core_plain - want).max(axis=1) >= 2) > 0.3, "the term should change the motors"
