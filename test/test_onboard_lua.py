"""The on-board Lua script (brov2_hybrid.onboard.lua_script) run by lua5.3 on stand-in ArduSub bindings.

``test/onboard_harness.lua`` fakes the bindings (clock, arming, mode, AHRS, servo outputs, GCS,
parameters, MAVLink queue) and records what the script does. Expectations come from the Python
core: HybridController + normalize + Algorithm 2 (vehicle.mixers' quantitative kind), and
control.autopilot_safety for the hold; the desired-state message is packed by pymavlink
(test/onboard_lua_support.py). The optional terms, turn by turn: test_onboard_lua_terms.py.
"""
import dataclasses
import math

import numpy as np
import pytest

from brov2_hybrid.control.autopilot_safety import MODE_NO_INPUT, AutopilotCore
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.onboard.lua_script import write_script
from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from onboard_lua_support import (LUA, ONBOARD, SETTINGS, TERMS, desired_message, lua_list, pwm_of_tau, python_pwm,
                                 run_lua, servo_lines)


@pytest.fixture(scope="module", params=["bluerov2_heavy", "bluerov2"])
def script(request, tmp_path_factory):
    """(vehicle, path of its generated script)."""
    assert LUA, "lua5.3 not found: scripts/setup.sh installs it (apt-get install lua5.3)"
    vehicle = load_vehicle(request.param)
    path = str(tmp_path_factory.mktemp("onboard") / "hybrid.lua")
    return vehicle, write_script(path, vehicle, SETTINGS, ONBOARD)


def test_the_script_gives_the_python_cores_algorithm2_pwms(script):
    vehicle, path = script
    rng = np.random.default_rng(29)
    cases = []
    for k in range(300):
        big = 1.0 if k % 3 else 0.1          # a third within the unsaturated range
        cases.append((rng.uniform(-1.0, 1.0, 3) * [0.6, 0.6, math.pi] * big, rng.uniform(-0.5, 0.5, 3),
                      rng.uniform(-1.0, 1.0, 3), rng.uniform(-1.0, 1.0, 3) * [0.6, 0.6, math.pi] * big,
                      rng.uniform(-1.0, 1.0, 3), rng.uniform(1.0, 10.0)))
    body = "\n".join("print(table.concat(M.command(%s, %s, %s, %s, %s, %r), ' '))"
                     % (lua_list(a), lua_list(b), lua_list(c), lua_list(d), lua_list(e), float(w))
                     for a, b, c, d, e, w in cases)
    got = np.array([[float(x) for x in line.split()] for line in run_lua(path, body)])
    want = np.array([python_pwm(vehicle, *case) for case in cases])
    assert got.shape == want.shape == (len(cases), vehicle.n_thrusters)
    assert np.abs(got - want).max() <= 1.0
    assert np.mean(got == want) >= 0.99, "the script should give the microsecond in nearly every case"
    assert len(np.unique(got)) > 100, "the cases should span the thrust table"


def test_hyb_omega_d_retunes_the_gains_live(script):
    vehicle, path = script
    case = ([0.1, -0.05, 0.3], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    body = """
H.queue[1] = from_hex(%r)
M.start()
run_until(M, 200)
H.params.HYB_OMEGA_D = 6.0
run_until(M, 400)
print_servo(190, 200)
print_servo(390, 400)
""" % desired_message(case[0], case[1], case[2])
    lines = run_lua(path, body)
    by_time = servo_lines(lines)
    before, after = [by_time[t] for t in sorted(by_time)]
    at = {w: python_pwm(vehicle, case[0], case[1], case[2], case[3], case[4], w) for w in (SETTINGS.omega_d_rad_s, 6.0)}
    assert [before[ch][0] for ch in range(vehicle.n_thrusters)] == at[SETTINGS.omega_d_rad_s].tolist()
    assert [after[ch][0] for ch in range(vehicle.n_thrusters)] == at[6.0].tolist()
    assert at[6.0].tolist() != at[SETTINGS.omega_d_rad_s].tolist()


def test_a_disarmed_vehicle_gets_no_output_but_neutral_once_when_it_disarms(script):
    vehicle, path = script
    body = """
H.queue[1] = from_hex(%r)
H.armed = false
M.start()
run_until(M, 500)
H.armed = true
run_until(M, 1000)
H.armed = false
run_until(M, 1500)
print_servo(0, 2000)
""" % desired_message([0.2, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0])
    by_time = servo_lines(run_lua(path, body))
    armed = [t for t in by_time if t < 1000.0]
    after = {t: calls for t, calls in by_time.items() if t >= 1000.0}
    assert armed and min(armed) >= 500.0, "a disarmed vehicle must get no servo output call"
    assert list(after) == [1000.0], "disarmed: neutral once, at the first turn that sees it, then nothing"
    assert after[1000.0] == {ch: (1500, ONBOARD.override_timeout_ms) for ch in range(vehicle.n_thrusters)}
    assert any(pwm != 1500 for t in armed for pwm, _ in by_time[t].values())


def leave_the_flying_mode(then):
    """Lua: armed in STABILIZE (0) with full sticks until 500 ms, then MANUAL, driving the desired state until
    1000 ms, then STABILIZE again; ``then`` follows."""
    assert 0 not in ONBOARD.active_modes
    return """
H.queue[1] = from_hex(%r)
H.mode = 0
H.rc = {1900, 1900, 1900, 1900, 1900, 1900}
M.start()
run_until(M, 500)
H.mode = %d
run_until(M, 1000)
H.mode = 0
""" % (desired_message([0.2, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0]), ONBOARD.active_modes[0]) + then


def test_outside_its_flying_modes_the_script_writes_neutral_once_then_nothing(script, tmp_path):
    """With ``pilot_takeover`` false: neutral once on leaving the flying modes, then no call."""
    vehicle, _ = script
    path = write_script(str(tmp_path / "no_takeover.lua"), vehicle, SETTINGS,
                        dataclasses.replace(ONBOARD, pilot_takeover=False))
    body = leave_the_flying_mode("""
run_until(M, 1500)
print_servo(0, 2000)
""")
    by_time = servo_lines(run_lua(path, body))
    assert min(by_time) >= 500.0 and [t for t in by_time if t >= 1000.0] == [1000.0]
    assert {pwm for pwm, _ in by_time[1000.0].values()} == {1500}


def pilot_cases(n, seed):
    """``n`` stick sets: PWMs of RC channels 1..6 [us], some at the ends, some released (0)."""
    rng = np.random.default_rng(seed)
    cases = rng.integers(1100, 1901, (n, 6))
    cases[::7] = rng.choice([1100, 1500, 1900, 0], (len(cases[::7]), 6))
    return cases


def test_once_it_has_driven_the_motors_the_pilot_flies_them_through_the_script(script):
    """``pilot_takeover`` (default on): armed outside the flying modes after the script has driven the motors
    (ArduSub can no longer drive them: docs/onboard.md), each loop turn the motors get the pilot's sticks
    as the Python core mixes them: vehicle.rc's channel map and Algorithm 2, to the microsecond
    (mixers.motor_pwm_from_rc). Before the script has driven them it leaves them to ArduSub."""
    vehicle, path = script
    assert ONBOARD.pilot_takeover
    cases = pilot_cases(120, 31)
    turn_ms = ONBOARD.period_ms
    steps = "\n".join("H.rc = {%s}\nrun_until(M, %d)" % (", ".join(str(int(p)) for p in case), 1600 + turn_ms * (k + 1))
                       for k, case in enumerate(cases))
    body = leave_the_flying_mode("""
run_until(M, 1600)
%s
print_servo(0, 1000000)
for _, t in ipairs(H.texts) do print("text " .. t.text) end
""" % steps)
    lines = run_lua(path, body)
    by_time = servo_lines(lines)
    assert min(by_time) >= 500.0, "before the script drove them, ArduSub flies: no call in STABILIZE"
    thr = vehicle.thrusters
    mixer = vehicle.mixer("quantitative")
    for k, case in enumerate(cases):
        got = by_time[1600.0 + turn_ms * k]
        want = motor_pwm_from_rc(case.tolist(), vehicle.rc_map, mixer, thr.pwm_min_us, thr.pwm_max_us)
        assert [got[ch][0] for ch in sorted(got)] == want, (case, got)
    assert len({tuple(p for p, _ in v.values()) for v in by_time.values()}) > 100
    assert any(line.startswith("text brov2_hybrid: PILOT") for line in lines)


def test_a_disarmed_vehicle_gets_nothing_from_the_pilots_sticks(script):
    vehicle, path = script
    body = """
H.queue[1] = from_hex(%r)
M.start()
run_until(M, 500)
H.mode, H.armed = 0, false
H.rc = {1900, 1900, 1900, 1900, 1900, 1900}
run_until(M, 1500)
print_servo(500, 2000)
""" % desired_message([0.2, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0])
    by_time = servo_lines(run_lua(path, body))
    assert list(by_time) == [500.0] and {pwm for pwm, _ in by_time[500.0].values()} == {1500}


def test_every_override_carries_the_timeout_of_onboard_yaml(script):
    vehicle, path = script
    body = """
H.queue[1] = from_hex(%r)
M.start()
run_until(M, 5000)
print_servo(0, 6000)
""" % desired_message([0.2, 0.1, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0])
    by_time = servo_lines(run_lua(path, body))
    calls = [v for per_time in by_time.values() for v in per_time.values()]
    assert len(calls) >= vehicle.n_thrusters * 400
    assert {timeout for _, timeout in calls} == {ONBOARD.override_timeout_ms}
    # the overrides follow each other faster than they lapse: the motors never fall back mid-flight
    assert np.diff(sorted(by_time)).max() < ONBOARD.override_timeout_ms


def test_desired_stream_loss_holds_like_control_law_then_goes_neutral(script):
    vehicle, path = script
    eta2d, rates, u_lin = [0.2, -0.1, 0.5], [0.05, 0.0, -0.1], [0.4, -0.2, 0.3]
    eta2, nu2 = [0.05, 0.02, 0.4], [0.1, -0.1, 0.05]
    body = """
H.att, H.gyro = %s, %s
H.queue[1] = from_hex(%r)
M.start()
run_until(M, 5000)
local d = M.S.desired
print("desired " .. table.concat(d.eta2d, " ") .. " " .. table.concat(d.eta2d_dot, " ") .. " " .. table.concat(d.u_linear, " "))
print_servo(0, 6000)
""" % (lua_list(eta2), lua_list(nu2), desired_message(eta2d, rates, u_lin))
    lines = run_lua(path, body)
    sent = [float(x) for x in lines[0].split()[1:]]            # as float32 on the wire
    np.testing.assert_allclose(sent, eta2d + rates + u_lin, atol=1e-6)
    by_time = servo_lines(lines[1:])
    pwm_at = {t: [by_time[t][ch][0] for ch in range(vehicle.n_thrusters)] for t in by_time}
    active = python_pwm(vehicle, sent[0:3], sent[3:6], sent[6:9], eta2, nu2, SETTINGS.omega_d_rad_s).tolist()
    law = HybridController(vehicle.body, SETTINGS, vehicle.tau_max, vehicle.passive_dofs)
    core = AutopilotCore(law, attitude_timeout_s=10.0, desired_timeout_s=ONBOARD.desired_timeout_s)
    core.set_desired(0.0, sent[0:3], sent[6:9])
    core.set_attitude(2.0, eta2, nu2)
    tick = core.tick(2.0)
    assert tick.mode == MODE_NO_INPUT
    hold = pwm_of_tau(vehicle, tick.tau_body_frd).tolist()
    neutral = [1500] * vehicle.n_thrusters
    assert hold != active and hold != neutral
    hold_ms, lost_ms = 1000.0 * ONBOARD.desired_timeout_s, 1000.0 * ONBOARD.desired_lost_s
    for t, pwm in pwm_at.items():
        want = active if t <= hold_ms else (hold if t <= lost_ms else neutral)
        assert pwm == want, "at %.0f ms" % t
    assert max(pwm_at) >= 4900.0, "neutral is commanded, not left to lapse"


def test_a_non_finite_desired_state_gives_neutral(script):
    vehicle, path = script
    body = """
H.att, H.gyro = {0.2, 0.1, 0.3}, {0.1, 0.0, 0.0}
H.queue[1] = from_hex(%r)
M.start()
run_until(M, 300)
print_servo(0, 300)
""" % desired_message(None, None, None, data=[math.nan, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0] + [0.0] * 49)
    by_time = servo_lines(run_lua(path, body))
    assert by_time and all(pwm == 1500 for per in by_time.values() for pwm, _ in per.values())


def test_other_messages_and_arrays_are_not_taken_for_the_desired_state(script):
    vehicle, path = script
    body = """
H.queue[1] = from_hex(%r)
M.start()
run_until(M, 100)
print(M.S.desired == nil and "none" or "taken")
""" % desired_message([0.2, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0], array_id=ONBOARD.desired_array_id + 1)
    assert run_lua(path, body)[0] == "none"


def test_a_script_error_is_reported_to_the_topside_and_drives_nothing(script):
    vehicle, path = script
    body = """
H.queue[1] = from_hex(%r)
H.functions[%d] = nil
M.start()
local _, delay = M.update()
print("delay " .. delay)
run_until(M, 3000)
for _, t in ipairs(H.texts) do print(string.format("text %%d %%s", t.severity, t.text)) end
print_servo(0, 3000)
""" % (desired_message([0.2, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0]), ONBOARD.motor_function_first + 1)
    lines = run_lua(path, body)
    assert lines[0] == "delay %d" % round(1000 * ONBOARD.error_retry_s)
    errors = [line for line in lines if line.startswith("text 3 ")]
    assert errors and "SERVOn_FUNCTION %d" % (ONBOARD.motor_function_first + 1) in errors[0]
    assert not servo_lines(lines)


def test_a_bad_omega_d_is_reported_and_the_motors_go_neutral(script):
    vehicle, path = script
    body = """
H.queue[1] = from_hex(%r)
M.start()
run_until(M, 200)
H.params.HYB_OMEGA_D = -1.0
run_until(M, 3000)
for _, t in ipairs(H.texts) do print(string.format("text %%d %%s", t.severity, t.text)) end
print_servo(0, 3000)
""" % desired_message([0.2, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0])
    lines = run_lua(path, body)
    assert any(line.startswith("text 3 ") and "HYB_OMEGA_D" in line for line in lines)
    by_time = servo_lines(lines)
    after = [t for t in by_time if t >= 200.0]
    assert after == [200.0] and {pwm for pwm, _ in by_time[200.0].values()} == {1500}
    assert any(pwm != 1500 for pwm, _ in by_time[100.0].values())


def test_the_script_reports_its_rate(script):
    vehicle, path = script
    body = """
M.start()
run_until(M, 2500)
for _, n in ipairs(H.named) do print(string.format("named %s %.3f", n.name, n.value)) end
"""
    named = [line.split()[1:] for line in run_lua(path, body) if line.startswith("named ")]
    rates = [float(v) for name, v in named if name == "HYB_HZ"]
    assert rates and rates[0] == pytest.approx(1000.0 / ONBOARD.period_ms, rel=0.02)


@pytest.mark.parametrize("terms", [False, True], ids=["pd", "ref_ff_and_integral"])
def test_a_loop_turn_fits_arduSubs_instruction_budget(script, tmp_path, terms):
    vehicle, path = script
    if terms:
        path = write_script(str(tmp_path / "terms.lua"), vehicle, TERMS, ONBOARD)
    body = """
H.att, H.gyro = {0.1, -0.2, 1.0}, {0.3, 0.1, -0.2}
H.queue[1] = from_hex(%r)
M.start()
H.now = 10.0
print(count_instructions(M.update))
""" % desired_message([0.2, 0.1, -0.5], [0.1, 0.0, 0.2], [0.5, -0.3, 0.2])
    count = int(run_lua(path, body)[0])
    budget = ONBOARD.ardusub_params["SCR_VM_I_COUNT"]
    print("one loop turn: %d Lua instructions (SCR_VM_I_COUNT %d)" % (count, budget))
    assert 500 < count < 0.2 * budget
