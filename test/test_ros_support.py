"""ROS-free node logic (brov2_hybrid.ros_support): safety modes, rate meter, dive
playback, override verification, node parameters."""
import math
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from brov2_hybrid import ros_support as rs
from brov2_hybrid.control import HybridController
from brov2_hybrid.dive_csv import Dive
from brov2_hybrid.errors import Brov2Error, InputDataError, ParameterError
from brov2_hybrid.hydrostatics import restoring_moment
from brov2_hybrid.params import load_yaml
from brov2_hybrid.paths import params_path

ATT_TIMEOUT, DES_TIMEOUT = 0.5, 1.0


@pytest.fixture
def core(setup, controller_params):
    c = HybridController(setup.vehicle, controller_params, setup.tau_max)
    return rs.AutopilotCore(c, ATT_TIMEOUT, DES_TIMEOUT)


# ---------------------------------------------------------------- parameters
def test_every_section_of_autopilot_yaml_loads():
    data = load_yaml(params_path("autopilot.yaml"))
    for node in ("csv_reader", "control_law", "thruster_allocation", "mavlink_bridge", "logger", "mission", "frames"):
        assert rs.load_node_params(node) == data[node]


def test_overrides_win_and_unknown_keys_are_refused():
    p = rs.load_node_params("control_law", {"rate_hz": 25.0, "omega_d_rad_s": 4.0}, other_keys=("omega_d_rad_s",))
    assert p["rate_hz"] == 25.0 and "omega_d_rad_s" not in p
    with pytest.raises(ParameterError, match="~rate_hx: unknown parameter for control_law"):
        rs.load_node_params("control_law", {"rate_hx": 25.0})
    with pytest.raises(ParameterError, match="missing section 'nope'"):
        rs.load_node_params("nope")


def test_param_reader_names_the_parameter():
    p = rs.ParamReader({"a": -1.0, "b": "x", "c": 1, "d": True}, "node")
    with pytest.raises(ParameterError, match=r"node ~a: expected a number > 0, got -1.0"):
        p.positive("a")
    with pytest.raises(ParameterError, match=r"node ~b: expected one of \['timer', 'attitude'\]"):
        p.string("b", choices=("timer", "attitude"))
    with pytest.raises(ParameterError, match="node ~d: expected a finite number"):
        p.number("d")                       # a bool is not a number
    with pytest.raises(ParameterError, match="node ~zz: missing parameter"):
        p.integer("zz")
    assert p.integer("c", 1, 5) == 1 and p.boolean("d") is True


# ---------------------------------------------------------------- rate meter
def test_rate_meter_measures_stamps_and_decays():
    m = rs.RateMeter(2.0)
    for k in range(101):
        m.add(10.0 + k * 0.02)              # 50 Hz for 2 s
    assert m.rate_hz() == pytest.approx(50.0)
    assert m.rate_hz(now_s=12.0 + 1.0) == pytest.approx(50.0 * 50 / 50, rel=0.05)   # half the window left
    assert m.rate_hz(now_s=20.0) == 0.0     # stream stopped: nothing in the window


def test_rate_meter_irregular_stamps_and_restart():
    m = rs.RateMeter(5.0)
    for t in (0.0, 0.1, 0.15, 0.4):         # 3 intervals over 0.4 s
        m.add(t)
    assert m.rate_hz() == pytest.approx(3 / 0.4)
    m.add(0.4)                               # duplicate ignored
    assert m.rate_hz() == pytest.approx(3 / 0.4)
    m.add(-100.0)                            # vehicle clock restarted far back: start over
    m.add(-99.9)
    assert m.rate_hz() == pytest.approx(10.0)


# ---------------------------------------------------------------- autopilot safety core
def test_no_attitude_gives_neutral(core):
    r = core.tick(1.0)
    assert r.mode == rs.MODE_NO_ATTITUDE and "no attitude" in r.message
    assert not np.any(r.tau_body_frd) and not np.any(r.u)


def test_active_at_rest_cancels_hydrostatics_and_passes_linear(core, setup):
    eta = np.radians([10.0, -5.0, 30.0])
    core.set_attitude(1.0, eta, [0, 0, 0])
    core.set_desired(1.0, eta, [0.5, -0.25, 0.1])
    r = core.tick(1.1)
    assert r.mode == rs.MODE_ACTIVE and r.message == ""
    np.testing.assert_allclose(r.tau_body_frd[3:], -restoring_moment(eta, setup.vehicle), atol=1e-12)
    np.testing.assert_allclose(r.u[:3], [0.5, -0.25, 0.1])
    np.testing.assert_allclose(r.tau_body_frd[:3], np.array([0.5, -0.25, 0.1]) * setup.tau_max[:3])


def test_stale_attitude_switches_to_neutral_at_the_timeout(core):
    core.set_attitude(1.0, [0, 0, 0], [0, 0, 0])
    core.set_desired(1.0, [0, 0, 0.3], [0.2, 0, 0])
    assert core.tick(1.0 + ATT_TIMEOUT - 0.01).mode == rs.MODE_ACTIVE
    r = core.tick(1.0 + ATT_TIMEOUT + 0.01)
    assert r.mode == rs.MODE_NO_ATTITUDE and "old" in r.message
    assert not np.any(r.u)


def test_stale_input_holds_last_desired_attitude_with_linear_zero(core):
    core.set_attitude(0.0, [0, 0, 0], [0, 0, 0])
    core.set_desired(0.0, [0, 0, 0.4], [0.8, 0.3, -0.2])
    active = core.tick(0.1)
    core.set_attitude(DES_TIMEOUT + 0.5, [0, 0, 0], [0, 0, 0])
    hold = core.tick(DES_TIMEOUT + 0.5)
    assert active.mode == rs.MODE_ACTIVE and hold.mode == rs.MODE_NO_INPUT
    np.testing.assert_allclose(hold.u[:3], 0.0)
    np.testing.assert_allclose(hold.eta2d, [0, 0, 0.4])
    assert hold.tau_body_frd[5] > 0          # still turning towards the held yaw
    # input resumes: active again with the new linear command
    core.set_desired(DES_TIMEOUT + 0.6, [0, 0, 0.4], [0.1, 0, 0])
    assert core.tick(DES_TIMEOUT + 0.6).mode == rs.MODE_ACTIVE


def test_hold_without_any_input_keeps_the_first_attitude(core):
    core.set_attitude(0.0, [0, 0, 0.5], [0, 0, 0])
    first = core.tick(0.0)
    core.set_attitude(0.2, [0, 0, 0.7], [0, 0, 0])   # vehicle drifted to 0.7 rad
    later = core.tick(0.2)
    assert first.mode == later.mode == rs.MODE_NO_INPUT
    np.testing.assert_allclose(later.eta2d, [0, 0, 0.5])
    assert first.tau_body_frd[5] == pytest.approx(0.0, abs=1e-12)
    assert later.tau_body_frd[5] < 0          # pushed back towards 0.5 rad


@pytest.mark.parametrize("which", ["attitude", "rates", "desired", "linear"])
def test_nan_anywhere_gives_neutral(core, which):
    att, rates, des, lin = [0.0, 0, 0], [0.0, 0, 0], [0.0, 0, 0.3], [0.2, 0, 0]
    {"attitude": att, "rates": rates, "desired": des, "linear": lin}[which][1] = math.nan
    core.set_attitude(1.0, att, rates)
    core.set_desired(1.0, des, lin)
    r = core.tick(1.0)
    assert r.mode == rs.MODE_NAN and not np.any(r.u) and not np.any(r.tau_body_frd)


def test_control_law_error_gives_fault_neutral(core):
    core.set_attitude(1.0, [0, math.pi / 2, 0], [0, 0, 0])    # gimbal lock
    core.set_desired(1.0, [0, 0, 0], [0, 0, 0])
    r = core.tick(1.0)
    assert r.mode == rs.MODE_FAULT and "gimbal" in r.message and not np.any(r.u)


def test_future_stamped_attitude_still_goes_stale(core):
    """A vehicle clock 100 s ahead: the stamp must not keep the attitude fresh; the age
    counts from the receive time."""
    core.set_desired(1.0, [0, 0, 0.3], [0.2, 0, 0], received_s=1.0)
    core.set_attitude(101.0, [0, 0, 0], [0, 0, 0], received_s=1.0)
    assert core.tick(1.0 + ATT_TIMEOUT - 0.01).mode == rs.MODE_ACTIVE
    r = core.tick(1.0 + ATT_TIMEOUT + 0.01)
    assert r.mode == rs.MODE_NO_ATTITUDE and not np.any(r.u)
    assert r.attitude_age_s == pytest.approx(ATT_TIMEOUT + 0.01)


def test_future_stamped_desired_state_still_goes_stale(core):
    core.set_attitude(0.0, [0, 0, 0], [0, 0, 0], received_s=0.0)
    core.set_desired(50.0, [0, 0, 0.4], [0.8, 0, 0], received_s=0.0)
    core.set_attitude(DES_TIMEOUT + 0.1, [0, 0, 0], [0, 0, 0], received_s=DES_TIMEOUT + 0.1)
    r = core.tick(DES_TIMEOUT + 0.1)
    assert r.mode == rs.MODE_NO_INPUT and not np.any(r.u[:3])


def test_old_stamp_received_late_is_still_old(core):
    """Clamping is one-sided: a message stamped before it arrived keeps its stamp's age."""
    core.set_attitude(0.0, [0, 0, 0], [0, 0, 0], received_s=0.4)
    core.set_desired(0.4, [0, 0, 0], [0, 0, 0], received_s=0.4)
    assert core.tick(ATT_TIMEOUT + 0.01).mode == rs.MODE_NO_ATTITUDE


def test_rate_estimate_uses_stamps_not_receive_times(core):
    """Header stamps still feed the desired-rate estimate: samples 0.1 s apart by stamp
    but received together give the stamped rate."""
    for k in range(5):
        core.set_desired(k * 0.1, [0, 0, 0.05 * k], [0, 0, 0], received_s=1.0)
    np.testing.assert_allclose(core.controller.rate_estimator.rate()[2], 0.5, rtol=1e-9)


def test_tick_time_follows_a_slightly_early_clock_but_not_a_future_stamp():
    assert rs.tick_time(10.0, None, 0.5) == 10.0
    assert rs.tick_time(10.0, 10.02, 0.5) == 10.02        # /clock one step behind the attitude
    assert rs.tick_time(10.0, 9.9, 0.5) == 10.0           # an old stamp never moves time back
    assert rs.tick_time(10.0, 110.0, 0.5) == 10.0         # a stamp from the future is ignored


def test_neutral_result_commands_nothing():
    r = rs.neutral_result(rs.MODE_FAULT, "internal error: boom")
    assert r.mode == rs.MODE_FAULT and r.mode in rs.NEUTRAL_MODES and r.message == "internal error: boom"
    assert not np.any(r.u) and not np.any(r.tau_body_frd) and not np.any(r.saturated)
    assert r.u.shape == r.tau_body_frd.shape == (6,) and np.all(np.isnan(r.eta2))


def test_rate_estimate_restarts_after_an_input_gap(core):
    core.set_desired(0.0, [0, 0, 0.0], [0, 0, 0])
    core.set_desired(0.5, [0, 0, 0.0], [0, 0, 0])
    core.set_desired(5.0, [0, 0, 1.0], [0, 0, 0])    # after a 4.5 s gap
    np.testing.assert_allclose(core.controller.rate_estimator.rate(), 0.0)


# ---------------------------------------------------------------- dive playback
def _dive(times, yaw):
    n = len(times)
    eta = np.zeros((n, 3))
    eta[:, 2] = yaw
    return Dive(t_s=np.array(times, float), eta2d_rad=eta, u_linear=np.zeros((n, 3)))


def test_playback_releases_rows_only_when_due():
    pb = rs.DivePlayback(_dive([2.0, 2.5, 3.0], [0.1, 0.2, 0.3]), start_s=10.0)
    assert pb.pop_due(9.99) == [] and pb.next_due_s() == 10.0
    rows = pb.pop_due(10.6)
    assert [r[0] for r in rows] == [10.0, 10.5]            # stamped with their due time
    np.testing.assert_allclose([r[1][2] for r in rows], [0.1, 0.2])
    assert not pb.finished and pb.pop_due(10.99) == []
    assert [r[0] for r in pb.pop_due(11.0)] == [11.0]
    assert pb.finished and pb.next_due_s() is None and pb.pop_due(100.0) == []


def test_playback_loops_with_a_gap():
    pb = rs.DivePlayback(_dive([0.0, 1.0], [0.0, 1.0]), start_s=0.0, loop=True, loop_gap_s=0.5)
    stamps = [r[0] for r in pb.pop_due(4.0)]
    assert stamps == [0.0, 1.0, 1.5, 2.5, 3.0, 4.0]
    assert not pb.finished


# ---------------------------------------------------------------- override verification
def test_verifier_passes_when_motors_move():
    v = rs.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_override(0.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    v.on_outputs([1500] * 7 + [1560])
    assert v.update(1.0) == rs.VERIFY_OK
    assert v.update(10.0) == rs.VERIFY_OK


def test_verifier_fails_when_motors_stay_neutral_and_names_the_fix():
    v = rs.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_override(5.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    v.on_outputs([1500] * 8)
    assert v.update(7.9) == rs.VERIFY_PENDING
    assert v.update(8.1) == rs.VERIFY_FAILED
    assert "SYSID_MYGCS" in v.failure_message() and "system_id 255" in v.failure_message()


def test_verifier_waits_for_a_non_neutral_override_while_armed():
    v = rs.OverrideVerifier(timeout_s=1.0, min_deviation_us=20, neutral_us=1500)
    v.on_override(0.0, [1700] * 6 + [65535] * 12)         # disarmed: not counted
    v.on_armed(True)
    v.on_override(0.5, [1510] * 6 + [65535] * 12)         # too close to neutral
    v.on_override(0.6, [0] * 6 + [65535] * 12)            # release: not a command
    assert v.update(100.0) == rs.VERIFY_PENDING


def test_verifier_does_not_blame_the_system_id_for_a_lost_link():
    """The link drops 0.1 s after the first override: no verdict while it is down; after
    it returns the check restarts with the next override and can still fail."""
    v = rs.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_override(0.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    v.on_link(False)
    v.on_override(1.0, [1500, 1500, 1500, 1600] + [65535] * 14)   # sent into a dead link
    assert v.update(10.0) == rs.VERIFY_PENDING
    v.on_link(True)
    v.on_override(11.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    assert v.update(13.0) == rs.VERIFY_PENDING
    assert v.update(14.1) == rs.VERIFY_FAILED


def test_verifier_uses_the_given_neutral():
    """With a 1520 us neutral (thrusters.yaml pwm_neutral_us), motors at 1520 have not moved
    and an override at 1520 is not a command."""
    v = rs.OverrideVerifier(timeout_s=1.0, min_deviation_us=20, neutral_us=1520)
    v.on_armed(True)
    v.on_override(0.0, [1520] * 6 + [65535] * 12)        # neutral for this vehicle: not counted
    v.on_override(0.1, [1500] * 6 + [65535] * 12)        # 20 us below neutral: the check starts
    v.on_outputs([1520] * 8)                              # motors at neutral: not moved
    assert v.update(1.05) == rs.VERIFY_PENDING            # counted from 0.1 s, not from 0.0 s
    assert v.update(1.15) == rs.VERIFY_FAILED


def test_verifier_restarts_after_a_disarm():
    v = rs.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_override(0.0, [1600] * 6 + [65535] * 12)
    v.on_armed(False)
    assert v.update(5.0) == rs.VERIFY_PENDING


# ---------------------------------------------------------------- override gate
def test_gate_sends_until_released_then_only_the_release():
    gate, log = rs.OverrideGate(), []
    assert gate.send(lambda: log.append("active"))
    assert gate.release(lambda: log.append("release"))
    assert not gate.send(lambda: log.append("active"))
    assert not gate.release(lambda: log.append("release"))     # released once
    assert log == ["active", "release"] and gate.released


def test_gate_publication_waiting_for_the_lock_during_a_release_is_dropped():
    """The race of the review: an override is formed while the release (several messages
    with pauses) holds the lock; it must not go out after the release."""
    gate, log = rs.OverrideGate(), []
    releasing, finish = threading.Event(), threading.Event()

    def publish_release():
        log.append("release 1")
        releasing.set()
        finish.wait(5.0)
        log.append("release 2")

    releaser = threading.Thread(target=gate.release, args=(publish_release,))
    releaser.start()
    assert releasing.wait(5.0)
    sent = []
    publisher = threading.Thread(target=lambda: sent.append(gate.send(lambda: log.append("active"))))
    publisher.start()
    time.sleep(0.05)                  # the publisher now waits for the lock (or already gave up)
    finish.set()
    releaser.join(5.0)
    publisher.join(5.0)
    assert sent == [False] and log == ["release 1", "release 2"]


def test_gate_publication_in_flight_goes_out_before_the_release():
    gate, log = rs.OverrideGate(), []
    publishing, finish = threading.Event(), threading.Event()

    def publish_active():
        publishing.set()
        finish.wait(5.0)
        log.append("active")

    publisher = threading.Thread(target=gate.send, args=(publish_active,))
    publisher.start()
    assert publishing.wait(5.0)
    releaser = threading.Thread(target=gate.release, args=(lambda: log.append("release"),))
    releaser.start()
    time.sleep(0.05)
    assert gate.released and log == []          # flagged at once, sent after the publication in flight
    finish.set()
    publisher.join(5.0)
    releaser.join(5.0)
    assert log == ["active", "release"]
    assert not gate.send(lambda: log.append("active"))


# ---------------------------------------------------------------- bag samples -> dive
def _desired_msg(stamp_s, yaw, type_name=rs.DESIRED_STATE_TYPE):
    header = SimpleNamespace(stamp=SimpleNamespace(to_sec=lambda: stamp_s))
    return SimpleNamespace(_type=type_name, header=header, roll_rad=0.0, pitch_rad=0.0, yaw_rad=yaw,
                           surge=0.1, sway=0.0, heave=0.0)


def test_desired_samples_from_bag_messages():
    msgs = [(_desired_msg(10.0, 0.1), 50.0), (_desired_msg(0.0, 0.2), 50.5)]   # 2nd: no stamp -> record time
    assert rs.desired_samples(msgs, "x.bag:/t") == [(10.0, 0.0, 0.0, 0.1, 0.1, 0.0, 0.0),
                                                    (50.5, 0.0, 0.0, 0.2, 0.1, 0.0, 0.0)]


def test_desired_samples_name_the_wrong_type():
    msgs = [(_desired_msg(1.0, 0.0), 1.0), (SimpleNamespace(_type="std_msgs/Bool", data=True), 2.0)]
    with pytest.raises(InputDataError, match="x.bag:/t: message 2: expected type brov2_hybrid/DesiredState, "
                                             "found std_msgs/Bool"):
        rs.desired_samples(msgs, "x.bag:/t")



def test_dive_from_samples_rebases_time_and_validates():
    d = rs.dive_from_samples([(100.0, 0, 0, 0.1, 0, 0, 0), (100.5, 0, 0, 0.2, 0.5, 0, 0)], "x.bag:/t")
    np.testing.assert_allclose(d.t_s, [0.0, 0.5])
    np.testing.assert_allclose(d.eta2d_rad[:, 2], [0.1, 0.2])
    with pytest.raises(InputDataError, match="x.bag:/t: message 2: field 'stamp': expected time to increase"):
        rs.dive_from_samples([(1.0, 0, 0, 0, 0, 0, 0), (1.0, 0, 0, 0, 0, 0, 0)], "x.bag:/t")
    with pytest.raises(InputDataError, match="message 1: field 'yaw_rad': expected a finite number"):
        rs.dive_from_samples([(1.0, 0, 0, math.nan, 0, 0, 0)], "x.bag:/t")
    with pytest.raises(InputDataError, match="message 1: field 'heave': expected a command in"):
        rs.dive_from_samples([(1.0, 0, 0, 0, 0, 0, 1.5)], "x.bag:/t")
    with pytest.raises(InputDataError, match="no desired-state messages"):
        rs.dive_from_samples([], "x.bag:/t")


def test_percentile_summary():
    s = rs.percentile_summary(range(1, 101))
    assert s["n"] == 100 and s["p50"] == pytest.approx(50.5) and s["max"] == 100
    assert math.isnan(rs.percentile_summary([])["p99"])


def test_core_rejects_bad_timeouts(setup, controller_params):
    c = HybridController(setup.vehicle, controller_params, setup.tau_max)
    with pytest.raises(Brov2Error, match="timeouts"):
        rs.AutopilotCore(c, 0.0, 1.0)
