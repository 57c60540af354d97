"""Live pilot input (brov2_hybrid.dive: pilot_settings, stick_shaping, pilot_input, pilot_takeover, js_event):
stick shaping, rate integration, deadman, buttons, takeover, headset frames, the control law's takeover
and the /dev/input/js event parser."""
import math
import struct
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.errors import Brov2Error, InputDataError, ParameterError
from brov2_hybrid.physics.kinematics import quaternion_from_euler
from brov2_hybrid.pilot.settings import load_joystick_settings
from brov2_hybrid.pilot.stick_shaping import shape
from brov2_hybrid.pilot.live_input import PilotInput
from brov2_hybrid.pilot.takeover import PilotTakeover
from brov2_hybrid.pilot.js_event import JS_EVENT_AXIS, JS_EVENT_BUTTON, JS_EVENT_INIT, JsState
from brov2_hybrid.control.autopilot_safety import MODE_ACTIVE, MODE_NO_INPUT, TickResult

S = load_joystick_settings()
N_AXES, N_BUTTONS = 8, 11


def joy(**sticks):
    """Joy axes/buttons with the named DOFs deflected (FRD/NED sense) and named buttons held."""
    axes = [0.0] * N_AXES
    buttons = [0] * N_BUTTONS
    for name, value in sticks.items():
        if name in S.axes:
            m = S.axes[name]
            axes[m.index] = m.sign * value
        elif value:
            buttons[S.buttons[name]] = 1
    return axes, buttons


def started(attitude=(0.0, 0.0, 0.0), pose_mode=False):
    p = PilotInput(S, pose_mode=pose_mode)
    p.on_attitude(attitude)
    p.on_joy(0.0, *joy(deadman=True))
    assert p.step(0.0) is not None
    return p


# --------------------------------------------------------------------------- shaping
def test_shape_dead_zone_expo_formula():
    d, e = 0.1, 0.4
    assert shape(0.1, d, e) == 0.0 and shape(-0.05, d, e) == 0.0
    assert shape(1.0, d, e) == pytest.approx(1.0) and shape(-1.0, d, e) == pytest.approx(-1.0)
    s = (0.55 - d) / (1 - d)        # 0.5
    assert shape(0.55, d, e) == pytest.approx((1 - e) * 0.5 + e * 0.125)
    assert shape(-0.55, d, e) == pytest.approx(-((1 - e) * 0.5 + e * 0.125))
    assert shape(0.55, d, 0.0) == pytest.approx(s)      # linear without expo
    assert shape(2.0, d, e) == pytest.approx(1.0)        # clipped


def test_yaml_defaults_are_consistent():
    assert S.release_threshold < S.takeover_threshold
    assert S.dead_zone <= S.release_threshold
    assert np.all(S.bound_rad < math.radians(80))


def test_yaml_errors_name_the_key(tmp_path):
    text = open(S.source).read()
    bad = tmp_path / "j.yaml"
    bad.write_text(text.replace("release_threshold: 0.15", "release_threshold: 0.95"))
    with pytest.raises(ParameterError, match="release_threshold"):
        load_joystick_settings(str(bad))
    bad.write_text(text.replace("roll:  {index: 3, invert: true}", "roll:  {index: -1, invert: true}"))
    with pytest.raises(ParameterError, match=r"j.yaml:axes.roll.index: expected an integer >= 0, got -1"):
        load_joystick_settings(str(bad))
    bad.write_text(text.replace("roll:  {index: 3, invert: true}", "roll:  {index: 3, invert: 1}"))
    with pytest.raises(ParameterError, match=r"j.yaml:axes.roll.invert: expected true or false, got 1"):
        load_joystick_settings(str(bad))
    bad.write_text(text.replace("expo: ", "expo: 2.0  # was "))
    with pytest.raises(ParameterError, match=r"j.yaml:expo: expected a number in \[0, 1\], got 2.0"):
        load_joystick_settings(str(bad))


def test_short_joy_message_refused():
    p = PilotInput(S)
    with pytest.raises(InputDataError, match="axes"):
        p.on_joy(0.0, [0.0, 0.0], [0] * N_BUTTONS)
    with pytest.raises(InputDataError, match="buttons"):
        p.on_joy(0.0, [0.0] * N_AXES, [0, 0])
    with pytest.raises(InputDataError, match="not finite"):
        p.on_joy(0.0, [math.nan] * N_AXES, [0] * N_BUTTONS)


# --------------------------------------------------------------------------- integration
def test_nothing_before_attitude_then_starts_at_measured_attitude():
    p = PilotInput(S)
    p.on_joy(0.0, *joy(deadman=True))
    assert p.step(0.0) is None
    p.on_attitude([0.1, math.radians(70), 2.0])     # pitch beyond the bound
    cmd = p.step(0.1)
    assert cmd.eta2d == pytest.approx([0.1, S.bound_rad[1], 2.0])


def test_yaw_rate_integrates_over_stamps_and_wraps():
    p = started(attitude=(0.0, 0.0, math.radians(170)))
    stick = 0.5                                        # below the takeover threshold
    rate = shape(stick, S.dead_zone, S.expo) * S.max_rate_rad_s[2]
    t = 0.0
    for _ in range(40):                                # 40 steps of 0.05 s = 2 s
        t += 0.05
        p.on_joy(t, *joy(deadman=True, yaw=stick))
        cmd = p.step(t)
    expected = math.radians(170) + rate * 2.0
    expected = (expected + math.pi) % (2 * math.pi) - math.pi
    assert cmd.eta2d[2] == pytest.approx(expected, abs=1e-9)
    assert -math.pi < cmd.eta2d[2] <= math.pi
    assert not cmd.pilot_axes.any()


def test_roll_rate_clamped_to_bound():
    p = started()
    t = 0.0
    for _ in range(200):                               # 10 s at 0.8 stick: far beyond 45 deg
        t += 0.05
        p.on_joy(t, *joy(deadman=True, roll=0.8))
        cmd = p.step(t)
    assert cmd.eta2d[0] == pytest.approx(S.bound_rad[0])


def test_long_gap_integrates_at_most_max_step():
    p = started()
    p.on_joy(5.0, *joy(deadman=True, pitch=0.5))
    cmd = p.step(5.0)
    rate = shape(0.5, S.dead_zone, S.expo) * S.max_rate_rad_s[1]
    assert cmd.eta2d[1] == pytest.approx(rate * S.max_step_s)


def test_linear_commands_shaped():
    p = started()
    p.on_joy(0.05, *joy(deadman=True, surge=1.0, sway=-0.5, heave=0.04))
    cmd = p.step(0.05)
    assert cmd.u_linear == pytest.approx([1.0, shape(-0.5, S.dead_zone, S.expo), 0.0])


# --------------------------------------------------------------------------- deadman / stale
def test_deadman_released_holds_and_zeroes_linear():
    p = started()
    p.on_joy(0.05, *joy(deadman=True, yaw=0.5, surge=0.7))
    held = p.step(0.05).eta2d
    p.on_joy(0.1, *joy(deadman=False, yaw=0.5, surge=0.7))
    for t in (0.1, 0.15, 0.2):
        cmd = p.step(t)
        assert cmd.eta2d == pytest.approx(held)
        assert cmd.u_linear == pytest.approx([0, 0, 0])
        assert not cmd.deadman and "deadman released" in cmd.message


def test_silent_joystick_holds():
    p = started()
    p.on_joy(0.05, *joy(deadman=True, surge=0.7))
    assert p.step(0.05).u_linear[0] > 0
    cmd = p.step(0.05 + S.joy_timeout_s + 0.01)
    assert cmd.u_linear == pytest.approx([0, 0, 0]) and "silent" in cmd.message


# --------------------------------------------------------------------------- buttons
def test_button_edges():
    p = started()
    p.on_joy(0.05, *joy(deadman=True, arm_toggle=True, yaw_enable_toggle=True))
    assert sorted(p.step(0.05).events) == ["arm_toggle", "yaw_enable_toggle"]
    p.on_joy(0.1, *joy(deadman=True, arm_toggle=True, yaw_enable_toggle=True))   # still held: no edge
    assert p.step(0.1).events == []
    p.on_joy(0.15, *joy(deadman=True))
    p.on_joy(0.2, *joy(deadman=True, roll_enable_toggle=True, pitch_enable_toggle=True))
    assert sorted(p.step(0.2).events) == ["pitch_enable_toggle", "roll_enable_toggle"]
    # without the deadman only disarm/arm goes through
    p.on_joy(0.25, *joy())
    p.on_joy(0.3, *joy(arm_toggle=True, roll_enable_toggle=True))
    assert p.step(0.3).events == ["arm_toggle"]


# --------------------------------------------------------------------------- takeover
def test_takeover_open_loop_then_hand_back_captures_attitude():
    p = started()
    p.on_joy(0.05, *joy(deadman=True, roll=0.95))
    cmd = p.step(0.05)
    assert cmd.pilot_axes.tolist() == [True, False, False]
    assert cmd.u_pilot[0] == pytest.approx(shape(0.95, S.dead_zone, S.expo))
    assert cmd.u_pilot[1:] == pytest.approx([0, 0]) and cmd.changes
    p.on_attitude([0.3, 0.0, 0.0])                         # the vehicle rolls under the pilot
    p.on_joy(0.1, *joy(deadman=True, roll=0.5))          # between the thresholds: still the pilot's
    cmd = p.step(0.1)
    assert cmd.pilot_axes[0] and cmd.u_pilot[0] == pytest.approx(shape(0.5, S.dead_zone, S.expo))
    assert cmd.eta2d[0] == pytest.approx(0.3)            # desired follows measured while taken over
    p.on_attitude([0.42, 0.0, 0.0])
    p.on_joy(0.15, *joy(deadman=True, roll=0.05))        # below release (and the dead zone): hand back
    cmd = p.step(0.15)
    assert not cmd.pilot_axes.any() and cmd.u_pilot[0] == 0.0
    assert cmd.eta2d[0] == pytest.approx(0.42) and "handed back" in cmd.changes[0]
    p.on_attitude([0.2, 0.0, 0.0])                         # later attitude changes: the capture holds
    p.on_joy(0.2, *joy(deadman=True))
    assert p.step(0.2).eta2d[0] == pytest.approx(0.42)


def test_deadman_release_hands_back():
    p = started()
    p.on_joy(0.05, *joy(deadman=True, yaw=-1.0))
    assert p.step(0.05).pilot_axes[2]
    p.on_attitude([0.0, 0.0, -1.0])
    p.on_joy(0.1, *joy(yaw=-1.0))
    cmd = p.step(0.1)
    assert not cmd.pilot_axes.any() and cmd.eta2d[2] == pytest.approx(-1.0)


def test_control_law_takeover_replaces_pd_on_pilot_axes():
    tau_max = np.array([10, 10, 10, 4, 5, 6.0])
    take = PilotTakeover(0.5)

    def result(mode=MODE_ACTIVE):
        return TickResult(mode, "", np.array([1, 2, 3, 0.4, 0.5, 0.6]),
                          np.zeros(6, dtype=bool), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), 0.0, 0.0)
    r, axes = take.apply(result(), 1.0, tau_max, MODE_ACTIVE)
    assert not axes.any() and r.tau_body_frd[3] == 0.4       # no takeover yet
    take.set(1.0, [False, True, False], [0.9, -0.5, 0.3])
    r, axes = take.apply(result(), 1.2, tau_max, MODE_ACTIVE)
    assert axes.tolist() == [False, True, False]
    assert r.tau_body_frd.tolist() == [1, 2, 3, 0.4, -0.5 * tau_max[4], 0.6]
    r, axes = take.apply(result(MODE_NO_INPUT), 1.2, tau_max, MODE_ACTIVE)
    assert not axes.any() and r.tau_body_frd[4] == 0.5          # hold modes win over the pilot
    r, axes = take.apply(result(), 1.6, tau_max, MODE_ACTIVE)
    assert not axes.any() and r.tau_body_frd[4] == 0.5          # stale takeover = none
    with pytest.raises(InputDataError):
        take.set(2.0, [True, False, False], [math.nan, 0, 0])
    with pytest.raises(Brov2Error):
        PilotTakeover(0.0)


# --------------------------------------------------------------------------- headset
def test_pose_mode_enu_flu_to_ned_frd():
    # Body FRD 10 deg right side down, 20 deg nose up, heading 30 deg east of north (NED):
    # in ENU/FLU (REP-103) the same body has roll +10 deg about x forward... expressed
    # independently: ENU yaw = 90 - 30 = 60 deg (from east, counter-clockwise), FLU pitch
    # = -20 deg (y left: nose up is negative), FLU roll = +10 deg.
    q_enu_flu = quaternion_from_euler(np.radians([10.0, -20.0, 60.0]))
    p = started(pose_mode=True)
    p.on_pose_quaternion(0.05, q_enu_flu)
    p.on_joy(0.05, *joy(deadman=True, surge=1.0))
    cmd = p.step(0.05)
    assert np.degrees(cmd.eta2d) == pytest.approx([10.0, 20.0, 30.0], abs=1e-9)
    assert cmd.u_linear[0] == pytest.approx(1.0)
    # beyond the bound: clamped; stale pose: held with a message
    p.on_pose_quaternion(0.1, quaternion_from_euler(np.radians([0.0, -60.0, 90.0])))
    assert np.degrees(p.step(0.1).eta2d)[1] == pytest.approx(math.degrees(S.bound_rad[1]))
    p.on_joy(0.9, *joy(deadman=True))
    cmd = p.step(0.9)
    assert "headset pose" in cmd.message and np.degrees(cmd.eta2d)[1] == pytest.approx(45.0)
    with pytest.raises(Brov2Error):
        p.on_pose_quaternion(1.0, [0, 0, 0, 0])


# --------------------------------------------------------------------------- /dev/input/js
def js(time_ms, value, etype, number):
    return struct.pack("<IhBB", time_ms, value, etype, number)


def test_js_events_parsed_like_joy_node():
    st = JsState()
    data = (js(10, 0, JS_EVENT_AXIS | JS_EVENT_INIT, 1) + js(10, 0, JS_EVENT_BUTTON | JS_EVENT_INIT, 4)
            + js(20, -32767, JS_EVENT_AXIS, 1) + js(30, 1, JS_EVENT_BUTTON, 4) + js(40, -32768, JS_EVENT_AXIS, 0))
    assert len(data) == 40 and st.feed(data)
    assert st.axes == [1.0, 1.0]            # stick up (negative raw) reads +1, as joy_node
    assert st.buttons == [0, 0, 0, 0, 1]
    assert not st.feed(js(50, 1, JS_EVENT_BUTTON, 4))      # no change
    assert st.feed(js(60, 16384, JS_EVENT_AXIS, 1)) and st.axes[1] == pytest.approx(-16384 / 32767)
    with pytest.raises(InputDataError, match="multiple of 8"):
        st.feed(data[:7])


def test_replace_keeps_settings_validation_free():
    # a settings copy with another pose timeout behaves accordingly (dataclass, no hidden state)
    s2 = replace(S, pose_timeout_s=10.0)
    p = PilotInput(s2, pose_mode=True)
    p.on_attitude([0, 0, 0])
    p.on_pose_quaternion(0.0, quaternion_from_euler([0, 0, 0.5]))
    p.on_joy(5.0, *joy(deadman=True))
    assert p.step(5.0).message == ""


# --------------------------------------------------------------------------- log column
def test_log_pilot_axes_column_and_older_logs(tmp_path):
    from brov2_hybrid.tick_log.logfile import LOG_COLUMNS, LogWriter, read_log
    w = LogWriter(str(tmp_path / "new.csv"))
    row = {c: 0.0 for c in LOG_COLUMNS}
    row.update(mode="ACTIVE", pilot_axes=5)            # roll + yaw in pilot hands
    w.write(row)
    assert read_log(w.path)["pilot_axes"].tolist() == [5.0]
    old = tmp_path / "old.csv"                         # a log written before the column existed
    cols = [c for c in LOG_COLUMNS if c != "pilot_axes"]
    old.write_text(",".join(cols) + "\n" + ",".join("ACTIVE" if c == "mode" else "1.0" for c in cols) + "\n")
    log = read_log(str(old))
    assert log["pilot_axes"].tolist() == [0.0] and log["yaw_rad"].tolist() == [1.0]
