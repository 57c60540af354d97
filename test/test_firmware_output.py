"""Output stages (quantitative / stock naive / stock compensated) and firmware detection."""
import numpy as np
import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.vehicle.firmware_detector import FirmwareDetector, classify_outputs, probe_command
from brov2_hybrid.vehicle.firmware_output import OUTPUT_STAGES, output_stage, stage_for_firmware
from brov2_hybrid.vehicle.mixers import mix_stock
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from brov2_hybrid.vehicle.rc import load_rc_map


@pytest.fixture(scope="module")
def vehicle():
    return load_vehicle()


@pytest.fixture(scope="module")
def rc_map():
    return load_rc_map()


@pytest.fixture(scope="module")
def stages(vehicle, rc_map):
    return {name: output_stage(name, vehicle, rc_map) for name in OUTPUT_STAGES}


def _err(stage, u):
    """Largest per-DOF wrench error as a fraction of tau_max."""
    return float(np.max(np.abs(stage.command(u).tau_error / stage.vehicle.tau_max)))


def test_small_yaw_lost_by_stock_delivered_by_compensation(vehicle, stages):
    u = [0, 0, 0, 0, 0, 0.05]      # 1.9 N m (docs/DESIGN.md section 11)
    naive = stages["stock_naive"].command(u)
    assert naive.motor_pwm[:4].tolist() == [1520, 1480, 1480, 1520]   # 1500 +- 400*0.05: dead band
    assert naive.tau_achieved[5] == pytest.approx(0.0, abs=1e-9)
    comp = stages["stock"].command(u)
    assert comp.tau_achieved[5] == pytest.approx(0.05 * vehicle.tau_max[5], rel=0.02)
    assert np.max(np.abs(comp.tau_achieved[:5])) < 0.005 * np.min(vehicle.tau_max)


def test_compensated_channels_are_what_stock_algorithm_1_turns_into_the_motor_pwms(vehicle, rc_map, stages):
    rng = np.random.default_rng(3)
    for u in rng.uniform(-0.4, 0.4, (20, 6)):
        cmd = stages["stock"].command(u)
        pwm = list(cmd.channel_pwm.values())
        assert all(isinstance(p, int) and 1100 <= p <= 1900 for p in pwm)
        # independent path: mixers.mix_stock on the u the channels carry, truncated to whole
        # microseconds as ArduSub's AP_Motors6DOF::calc_thrust_to_pwm does (all PWMs > 0)
        assert np.allclose(cmd.motor_pwm, np.floor(mix_stock(rc_map.u_from_pwm(cmd.channel_pwm), vehicle.T_hat)))


def test_random_small_commands_median_error_under_one_percent(vehicle, stages):
    rng = np.random.default_rng(7)
    U = rng.uniform(-0.3, 0.3, (300, 6))
    comp = np.median([_err(stages["stock"], u) for u in U])
    naive = np.median([_err(stages["stock_naive"], u) for u in U])
    quant = np.median([_err(stages["quantitative"], u) for u in U])
    assert comp <= 0.01
    assert naive > 0.04            # the problem the stage fixes (issue 8: 4-10 %)
    assert comp <= 2.0 * quant + 0.002


def test_compensated_delivers_what_algorithm_2_delivers(vehicle, stages):
    """The stock stage flies as the paper's firmware: its wrench is Algorithm 2's, not just close to u."""
    rng = np.random.default_rng(9)
    diff = [np.max(np.abs(stages["stock"].command(u).tau_achieved - stages["quantitative"].command(u).tau_achieved)
                   / vehicle.tau_max) for u in rng.uniform(-0.3, 0.3, (200, 6))]
    assert np.median(diff) < 0.002


def test_requested_wrench_stage_keeps_sub_microsecond_forces(vehicle, stages):
    """Algorithm 2 rounds each motor on its own (1531 us: 0.18 N m for 0.15); stock_wrench picks by the wrench."""
    u = [0, 0, 0, 0, 0, 0.004]      # 0.15 N m
    quant = stages["quantitative"].command(u).tau_achieved[5]
    wrench = stages["stock_wrench"].command(u).tau_achieved[5]
    want = 0.004 * vehicle.tau_max[5]
    assert abs(wrench - want) < abs(quant - want)
    assert wrench == pytest.approx(want, rel=0.5)


@pytest.mark.parametrize("dof", range(6))
@pytest.mark.parametrize("amp", [0.02, -0.02, 0.05, 0.2, -0.5])
def test_no_small_command_loss_single_dof(vehicle, stages, dof, amp):
    u = np.zeros(6)
    u[dof] = amp
    got = stages["stock"].command(u).tau_achieved[dof]
    assert got == pytest.approx(amp * vehicle.tau_max[dof], rel=0.10)


def test_compensated_not_worse_than_naive_at_large_commands(stages):
    """Saturated commands: the compensation falls back to u itself when that is closer."""
    def rms(stage, u):
        return float(np.linalg.norm(stage.command(u).tau_error / stage.vehicle.tau_max))
    rng = np.random.default_rng(11)
    U = rng.uniform(-1.0, 1.0, (60, 6))
    comp = np.array([rms(stages["stock"], u) for u in U])
    naive = np.array([rms(stages["stock_naive"], u) for u in U])
    assert np.median(comp) <= np.median(naive) + 1e-9
    assert np.all(comp <= naive * 1.1 + 1e-9)


def test_unknown_stage_and_firmware_named(vehicle, rc_map):
    with pytest.raises(Brov2Error, match="stock_naive"):
        output_stage("bogus", vehicle, rc_map)
    with pytest.raises(Brov2Error, match="firmware"):
        stage_for_firmware("stock_naive", vehicle, rc_map)
    assert stage_for_firmware("stock", vehicle, rc_map).name == "stock"


def test_classify_by_motor_outputs(vehicle, rc_map, stages):
    probe = rc_map.pwm_from_u([0, 0, 0, 0, 0, 0.05])
    stock = stages["stock_naive"].command([0, 0, 0, 0, 0, 0.05]).motor_pwm
    quant = stages["quantitative"].command([0, 0, 0, 0, 0, 0.05]).motor_pwm
    assert classify_outputs(probe, stock, vehicle, rc_map, 3.0)[0] == "stock"
    assert classify_outputs(probe, quant, vehicle, rc_map, 3.0)[0] == "quantitative"
    # a motor reversed on the vehicle (MOT_n_DIRECTION) mirrors its PWM about 1500
    reversed_ = quant.copy()
    reversed_[1] = 3000 - reversed_[1]
    assert classify_outputs(probe, reversed_, vehicle, rc_map, 3.0)[0] == "quantitative"
    neutral = rc_map.pwm_from_u(np.zeros(6))
    assert classify_outputs(neutral, np.full(8, 1500.0), vehicle, rc_map, 3.0)[0] is None
    assert classify_outputs(probe, np.full(8, 1700.0), vehicle, rc_map, 3.0)[0] is None


def _channels(rc_map, u):
    return rc_map.channel_array_from_u(u, 18, 65535)


def test_the_probe_rides_on_the_controllers_command_and_averages_to_zero(vehicle, rc_map):
    """While the firmware is not known, the controller keeps holding the attitude: the probe is
    added to its u with alternating sign, and either sign tells the mixers apart."""
    probe = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.05])
    u_hold = np.array([0.0, 0.0, 0.1, 0.02, -0.01, -0.03])     # a PD holding attitude, some heave
    sent = [probe_command(u_hold, probe, k) for k in range(6)]
    np.testing.assert_allclose(sent[0] - u_hold, probe)
    np.testing.assert_allclose(sent[1] - u_hold, -probe)
    np.testing.assert_allclose(np.mean(sent, axis=0), u_hold, atol=1e-15)   # no net probe torque
    for u in sent[:2]:
        channels = rc_map.pwm_from_u(u)
        for firmware in ("stock", "quantitative"):
            motors = vehicle.mixer(firmware).pwm(rc_map.u_from_pwm(rc_map.channel_array_from_u(u)))
            assert classify_outputs(channels, motors, vehicle, rc_map, 3.0)[0] == firmware
    assert np.max(probe_command(np.ones(6), probe, 0)) == 1.0            # clipped


def test_detector_votes_with_transport_delay(vehicle, rc_map, stages):
    det = FirmwareDetector(vehicle, rc_map, tolerance_us=3.0, votes_needed=3, window_s=0.5)
    rng = np.random.default_rng(5)
    history = []
    t = 0.0
    decided = None
    for k in range(40):
        u = rng.uniform(-0.2, 0.2, 6)
        det.on_override(t, _channels(rc_map, u))
        history.append(u)
        if k >= 3 and k % 2 == 0:       # outputs of the command sent 3 ticks (60 ms) ago
            decided = det.on_outputs(t, list(stages["stock_naive"].command(history[k - 3]).motor_pwm))
        t += 0.02
    assert decided == "stock"
    assert det.votes["quantitative"] == 0
    msg = det.mismatch_message("quantitative")
    assert "'firmware'" in msg and "firmware:=stock" in msg and "Algorithm 1" in msg
    assert det.mismatch_message("stock") is None and det.mismatch_message("auto") is None


def test_detector_ignores_neutral_and_undecided(vehicle, rc_map):
    det = FirmwareDetector(vehicle, rc_map, tolerance_us=3.0, votes_needed=3, window_s=0.5)
    det.on_override(0.0, _channels(rc_map, np.zeros(6)))
    for k in range(10):
        assert det.on_outputs(0.01 * k, [1500] * 8) is None
    assert det.votes == {"quantitative": 0, "stock": 0}
    assert det.mismatch_message("stock") is None


def test_closed_loop_refuses_a_stage_for_another_firmware():
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    from brov2_hybrid.loop.settings import LoopSettings
    with pytest.raises(Brov2Error, match="output_stage 'quantitative' drives quantitative firmware"):
        ClosedLoop(LoopSettings(mixer="stock", output_stage="quantitative"))


def test_closed_loop_yaw_step_on_stock_firmware_compensated_like_quantitative():
    """Issue 8 goal: stock compensated within 5 % of the quantitative firmware's settling time."""
    import math
    from brov2_hybrid.analysis import metrics
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    from brov2_hybrid.dive.shapes import step_dive
    from brov2_hybrid.loop.settings import LoopSettings
    step = math.radians(90.0)
    settle = {}
    for name, settings in (("quantitative", LoopSettings()), ("stock", LoopSettings(mixer="stock")),
                           ("naive", LoopSettings(mixer="stock", output_stage="stock_naive"))):
        res = ClosedLoop(settings).run(step_dive(step, 1.0, 8.0, 50.0), 8.0, omega_d_rad_s=3.0)
        settle[name] = metrics.settling_time(res.t_s, res.log["yaw_rad"], step, 1.0, band=0.05)
    assert math.isfinite(settle["quantitative"])
    assert abs(settle["stock"] - settle["quantitative"]) <= 0.05 * settle["quantitative"]
    assert not settle["naive"] <= 1.5 * settle["quantitative"]     # the dead band costs the naive stock


def test_neutral_and_dead_band_ties_stay_neutral(rc_map, stages):
    assert set(stages["stock"].command(np.zeros(6)).channel_pwm.values()) == {1500}
    # a request Algorithm 2 itself delivers as zero (rounded onto the dead-band edge): every
    # candidate delivers nothing, and the tie goes to the neutral channels
    cmd = stages["stock"].command([0, 0, 0, 0, 0, 1e-6])
    assert stages["quantitative"].command([0, 0, 0, 0, 0, 1e-6]).tau_achieved[5] == 0.0
    assert set(cmd.channel_pwm.values()) == {1500}


def _stock_inputs(rng, n):
    """Commands that exercise every branch of the stock search: saturating ones (groups
    Algorithm 1 would rescale), dead-band ones, sparse ones (exact zeros: symmetric
    targets), whole-microsecond ones, single axes and the corners of the cube."""
    eye = np.vstack([np.eye(6), -np.eye(6), 0.05 * np.eye(6), np.ones((1, 6)), -np.ones((1, 6))])
    return np.vstack([
        eye,
        rng.uniform(-1.0, 1.0, (n, 6)),
        rng.uniform(-0.04, 0.04, (n // 4, 6)),
        rng.uniform(-1.0, 1.0, (n // 2, 6)) * (rng.random((n // 2, 6)) < 0.4),
        np.clip(rng.normal(0.0, 1.5, (n // 4, 6)), -1.0, 1.0),
        np.rint(rng.uniform(-400, 400, (n // 4, 6))) / 400.0,
    ])


@pytest.mark.parametrize("vehicle_name, name, n", [("bluerov2_heavy", "stock", 3000), ("bluerov2_heavy", "stock_wrench", 800),
                                              ("bluerov2", "stock", 800), ("bluerov2", "stock_wrench", 400)])
def test_stock_search_gives_the_reference_rc_values(vehicle_name, name, n):
    """The stage every user flies gives exactly the channels of the search as first written
    (reference_stock_compensation), over a large random set that includes saturation."""
    from brov2_hybrid.bench.stock_search_reference import reference_stock_compensation
    from brov2_hybrid.vehicle.mixers import stock_normalized
    vehicle = load_vehicle(vehicle_name)
    stage = output_stage(name, vehicle, vehicle.rc_map)
    U = _stock_inputs(np.random.default_rng(16), n)
    # the set saturates: Algorithm 1 rescales a group for a good share of the commands
    raw = np.abs(U @ vehicle.T_hat)
    assert np.mean(np.max(raw, axis=1) > 1.0) > 0.3
    differ = [u.tolist() for u in U
              if not np.array_equal(stage.u_to_send(u), reference_stock_compensation(stage, u))]
    assert not differ, "%d of %d commands differ, e.g. %s" % (len(differ), len(U), differ[:3])
    # and the RC values (what goes on the wire) therefore too; spot-check the path through channels()
    for u in U[:50]:
        assert stage.channels(u) == vehicle.rc_map.pwm_from_u(reference_stock_compensation(stage, np.clip(u, -1, 1)))
    assert stock_normalized(U[:1], vehicle.T_hat).shape == (1, vehicle.n_thrusters)


def test_stock_search_neutral_and_thread_safe_scratch(vehicle, stages):
    """Zero stays exactly zero; two interleaved commands do not share scratch state."""
    stage = stages["stock"]
    assert stage.u_to_send(np.zeros(6)).tolist() == [0.0] * 6
    a, b = np.full(6, 0.2), np.array([0.0, 0.0, 0.0, 0.0, 0.0, -0.3])
    first = stage.u_to_send(a)
    stage.u_to_send(b)
    np.testing.assert_array_equal(stage.u_to_send(a), first)


def _late_override_votes(vehicle, rc_map, grace_s, seed=3):
    """Votes when each override reaches the detector 0.1 s after the output sample it produced
    (a busy machine: the override topic lags the vehicle's telemetry). The vehicle runs the
    quantitative firmware; the commands: the probe on a small, moving yaw command."""
    det = FirmwareDetector(vehicle, rc_map, tolerance_us=3.0, votes_needed=3, window_s=1.0, grace_s=grace_s)
    rng = np.random.default_rng(seed)
    mixer = vehicle.mixer("quantitative")
    events = []                                      # (arrival time, kind, payload)
    for k in range(150):
        t = 0.02 * k
        u = probe_command(np.r_[0.0, 0.0, 0.0, 0.0, 0.0, rng.uniform(-0.12, 0.12)], [0, 0, 0, 0, 0, 0.05], k)
        channels = _channels(rc_map, u)
        motors = mixer.pwm(rc_map.u_from_pwm(rc_map.channel_array_from_u(u)))
        events.append((t + 0.10, 0, channels))        # the override, seen late
        events.append((t + 0.02, 1, list(motors)))     # its motor outputs, seen first
    for at, kind, payload in sorted(events, key=lambda e: (e[0], e[1])):
        if kind == 0:
            det.on_override(at, payload)
        else:
            det.on_outputs(at, payload)
    return det


def test_a_late_override_cannot_tell_the_wrong_firmware(vehicle, rc_map):
    """The dive rostest once flew the quantitative simulator with the stock output stage: on a
    busy machine three samples, judged before their override arrived, fitted the linear mixer's
    output of an older one. Judged after the grace, the true override is a candidate."""
    judged_at_once = _late_override_votes(vehicle, rc_map, grace_s=0.0)
    assert judged_at_once.votes["stock"] > 0          # the failure this guards against happens here
    with_grace = _late_override_votes(vehicle, rc_map, grace_s=0.3)
    assert with_grace.firmware == "quantitative"
    assert with_grace.votes["stock"] == 0, with_grace.vote_record
