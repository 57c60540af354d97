"""The autopilot's safety logic (brov2_hybrid.control.autopilot_safety): modes and the neutral
command on missing, stale or non-finite inputs, input ages, tick time."""
import math

import numpy as np
import pytest

from brov2_hybrid.control import autopilot_safety as safety
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.hydrostatics import restoring_moment

ATT_TIMEOUT, DES_TIMEOUT = 0.5, 1.0


@pytest.fixture
def core(vehicle, controller_params):
    c = HybridController(vehicle.body, controller_params, vehicle.tau_max)
    return safety.AutopilotCore(c, ATT_TIMEOUT, DES_TIMEOUT)


def test_no_attitude_gives_neutral(core):
    r = core.tick(1.0)
    assert r.mode == safety.MODE_NO_ATTITUDE and "no attitude" in r.message
    assert not np.any(r.tau_body_frd)


def test_active_at_rest_cancels_hydrostatics_and_passes_linear(core, vehicle):
    eta = np.radians([10.0, -5.0, 30.0])
    core.set_attitude(1.0, eta, [0, 0, 0])
    core.set_desired(1.0, eta, [0.5, -0.25, 0.1])
    r = core.tick(1.1)
    assert r.mode == safety.MODE_ACTIVE and r.message == ""
    np.testing.assert_allclose(r.tau_body_frd[3:], -restoring_moment(eta, vehicle.body), atol=1e-12)
    np.testing.assert_allclose(r.tau_body_frd[:3], np.array([0.5, -0.25, 0.1]) * vehicle.tau_max[:3])


def test_stale_attitude_switches_to_neutral_at_the_timeout(core):
    core.set_attitude(1.0, [0, 0, 0], [0, 0, 0])
    core.set_desired(1.0, [0, 0, 0.3], [0.2, 0, 0])
    assert core.tick(1.0 + ATT_TIMEOUT - 0.01).mode == safety.MODE_ACTIVE
    r = core.tick(1.0 + ATT_TIMEOUT + 0.01)
    assert r.mode == safety.MODE_NO_ATTITUDE and "old" in r.message
    assert not np.any(r.tau_body_frd)


def test_stale_input_holds_last_desired_attitude_with_linear_zero(core):
    core.set_attitude(0.0, [0, 0, 0], [0, 0, 0])
    core.set_desired(0.0, [0, 0, 0.4], [0.8, 0.3, -0.2])
    active = core.tick(0.1)
    core.set_attitude(DES_TIMEOUT + 0.5, [0, 0, 0], [0, 0, 0])
    hold = core.tick(DES_TIMEOUT + 0.5)
    assert active.mode == safety.MODE_ACTIVE and hold.mode == safety.MODE_NO_INPUT
    np.testing.assert_allclose(hold.tau_body_frd[:3], 0.0)
    np.testing.assert_allclose(hold.eta2d, [0, 0, 0.4])
    assert hold.tau_body_frd[5] > 0          # still turning towards the held yaw
    # input resumes: active again with the new linear command
    core.set_desired(DES_TIMEOUT + 0.6, [0, 0, 0.4], [0.1, 0, 0])
    assert core.tick(DES_TIMEOUT + 0.6).mode == safety.MODE_ACTIVE


def test_hold_without_any_input_keeps_the_first_attitude(core):
    core.set_attitude(0.0, [0, 0, 0.5], [0, 0, 0])
    first = core.tick(0.0)
    core.set_attitude(0.2, [0, 0, 0.7], [0, 0, 0])   # vehicle drifted to 0.7 rad
    later = core.tick(0.2)
    assert first.mode == later.mode == safety.MODE_NO_INPUT
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
    assert r.mode == safety.MODE_NAN and not np.any(r.tau_body_frd)


def test_control_law_error_gives_fault_neutral(core):
    core.set_attitude(1.0, [0, math.pi / 2, 0], [0, 0, 0])    # gimbal lock
    core.set_desired(1.0, [0, 0, 0], [0, 0, 0])
    r = core.tick(1.0)
    assert r.mode == safety.MODE_FAULT and "gimbal" in r.message and not np.any(r.tau_body_frd)


def test_future_stamped_attitude_still_goes_stale(core):
    """A vehicle clock 100 s ahead: the stamp must not keep the attitude fresh; the age
    counts from the receive time."""
    core.set_desired(1.0, [0, 0, 0.3], [0.2, 0, 0], received_s=1.0)
    core.set_attitude(101.0, [0, 0, 0], [0, 0, 0], received_s=1.0)
    assert core.tick(1.0 + ATT_TIMEOUT - 0.01).mode == safety.MODE_ACTIVE
    r = core.tick(1.0 + ATT_TIMEOUT + 0.01)
    assert r.mode == safety.MODE_NO_ATTITUDE and not np.any(r.tau_body_frd)
    assert r.attitude_age_s == pytest.approx(ATT_TIMEOUT + 0.01)


def test_future_stamped_desired_state_still_goes_stale(core):
    core.set_attitude(0.0, [0, 0, 0], [0, 0, 0], received_s=0.0)
    core.set_desired(50.0, [0, 0, 0.4], [0.8, 0, 0], received_s=0.0)
    core.set_attitude(DES_TIMEOUT + 0.1, [0, 0, 0], [0, 0, 0], received_s=DES_TIMEOUT + 0.1)
    r = core.tick(DES_TIMEOUT + 0.1)
    assert r.mode == safety.MODE_NO_INPUT and not np.any(r.tau_body_frd[:3])


def test_old_stamp_received_late_is_still_old(core):
    """Clamping is one-sided: a message stamped before it arrived keeps its stamp's age."""
    core.set_attitude(0.0, [0, 0, 0], [0, 0, 0], received_s=0.4)
    core.set_desired(0.4, [0, 0, 0], [0, 0, 0], received_s=0.4)
    assert core.tick(ATT_TIMEOUT + 0.01).mode == safety.MODE_NO_ATTITUDE


def test_rate_estimate_uses_stamps_not_receive_times(core):
    """Header stamps still feed the desired-rate estimate: samples 0.1 s apart by stamp
    but received together give the stamped rate."""
    for k in range(5):
        core.set_desired(k * 0.1, [0, 0, 0.05 * k], [0, 0, 0], received_s=1.0)
    np.testing.assert_allclose(core.controller.rate_estimator.rate()[2], 0.5, rtol=1e-9)


def test_tick_time_follows_a_slightly_early_clock_but_not_a_future_stamp():
    assert safety.tick_time(10.0, None, 0.5) == 10.0
    assert safety.tick_time(10.0, 10.02, 0.5) == 10.02        # /clock one step behind the attitude
    assert safety.tick_time(10.0, 9.9, 0.5) == 10.0           # an old stamp never moves time back
    assert safety.tick_time(10.0, 110.0, 0.5) == 10.0         # a stamp from the future is ignored


def test_neutral_result_commands_nothing():
    r = safety.neutral_result(safety.MODE_FAULT, "internal error: boom")
    assert r.mode == safety.MODE_FAULT and r.mode in safety.NEUTRAL_MODES and r.message == "internal error: boom"
    assert not np.any(r.tau_body_frd) and not np.any(r.saturated)
    assert r.saturated.shape == r.tau_body_frd.shape == (6,) and np.all(np.isnan(r.eta2))


def test_rate_estimate_restarts_after_an_input_gap(core):
    core.set_desired(0.0, [0, 0, 0.0], [0, 0, 0])
    core.set_desired(0.5, [0, 0, 0.0], [0, 0, 0])
    core.set_desired(5.0, [0, 0, 1.0], [0, 0, 0])    # after a 4.5 s gap
    np.testing.assert_allclose(core.controller.rate_estimator.rate(), 0.0)


def test_core_rejects_bad_timeouts(vehicle, controller_params):
    c = HybridController(vehicle.body, controller_params, vehicle.tau_max)
    with pytest.raises(Brov2Error, match="timeouts"):
        safety.AutopilotCore(c, 0.0, 1.0)
