"""The measures and verdicts of the real-ArduSub comparison (brov2_hybrid.analysis.ardusub_experiment),
on synthetic logs with known answers (the flights themselves need ArduSub: test_real_ardusub.py)."""
import math
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.analysis import ardusub_experiment as ae
from brov2_hybrid.analysis import ardusub_report as ar
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.tick_log.logfile import NUMERIC_COLUMNS


def synthetic_log(t, desired, actual, pwm=1500.0):
    log = {name: np.zeros_like(t) for name in NUMERIC_COLUMNS}
    log["time_s"] = t
    for k, axis in enumerate(("roll", "pitch", "yaw")):
        log["%s_d_rad" % axis] = desired[:, k]
        log["%s_rad" % axis] = actual[:, k]
    for i in range(1, 9):
        log["pwm%d_us" % i] = np.full_like(t, pwm)
    return log


def flown_log(t, mode="MANUAL"):
    """A log of a run that flew: armed in ``mode`` throughout, motors off neutral."""
    log = synthetic_log(t, np.zeros((t.size, 3)), np.zeros((t.size, 3)), pwm=1550.0)
    log["vehicle_armed"], log["vehicle_mode"] = np.ones(t.size, bool), [mode] * t.size
    return log


def test_settings_are_read_with_their_file_and_key():
    cs = ae.load_compare_settings()
    assert cs.step_deg["yaw"] == 90.0 and cs.tune_factors[0] > 0 and cs.ready_after_boot_s > 0


def test_motor_effort_is_the_time_integral_of_eq_26_on_the_motors():
    t = np.linspace(0.0, 2.0, 101)
    pwm = np.full((t.size, 8), 1500.0)
    pwm[:, 0] = 1900.0       # one motor at full forward: 1 per second
    pwm[:, 1] = 1300.0       # one at half reverse: 0.5 per second
    assert ae.motor_effort_s(t, pwm) == pytest.approx(3.0)
    pwm[:, 2] = 0.0          # an output not reported yet counts as neutral
    assert ae.motor_effort_s(t, pwm) == pytest.approx(3.0)


def test_electric_energy_counts_what_the_bench_table_draws_and_nothing_in_the_dead_band(vehicle):
    """On the vehicle's T200 table (16 V bench data): 1520 us sits in the dead band, drawing nothing, though
    the motor effort counts it; 1700 us on every motor for 10 s costs 8 x 10 s x the table's power there."""
    from brov2_hybrid import paths
    from brov2_hybrid.vehicle.thrust_table import read_t200_csv
    table = ae.power_table(vehicle)
    pwm_us, power_w = read_t200_csv(paths.params_path("t200_16V.csv"), "power_w")
    np.testing.assert_array_equal(table[1], power_w)
    # the dead band docs/experiments.md quotes: no power from 1472 to 1528 us, power just outside
    band = (pwm_us >= 1472.0) & (pwm_us <= 1528.0)
    assert np.all(power_w[band] == 0.0) and np.all(power_w[~band] > 0.0)
    t = np.linspace(0.0, 10.0, 101)
    idle = np.full((t.size, 8), 1520.0)
    assert ae.motor_effort_s(t, idle) == pytest.approx(8 * 20.0 / 400.0 * 10.0)
    assert ae.electric_energy_kj(t, idle, *table) == 0.0
    busy = np.full((t.size, 8), 1700.0)
    at_1700 = float(power_w[pwm_us == 1700.0][0])
    assert at_1700 > 50.0
    assert ae.electric_energy_kj(t, busy, *table) == pytest.approx(8 * 10.0 * at_1700 / 1000.0)


def test_step_metrics_of_a_first_order_response():
    t = np.arange(0.0, 8.0, 0.02)
    tau, hold, step = 0.5, 3.0, math.radians(20.0)
    desired = np.zeros((t.size, 3))
    desired[t >= hold, 0] = step
    actual = np.zeros((t.size, 3))
    after = t >= hold
    actual[after, 0] = step * (1.0 - np.exp(-(t[after] - hold) / tau))
    m = ae.step_metrics(synthetic_log(t, desired, actual), "roll", step, hold, band=0.05)
    # IAE of a first-order step = step * tau (minus the small tail past 5 s)
    assert m["iae_deg_s"] == pytest.approx(20.0 * tau, rel=0.02)
    assert m["settling_s"] == pytest.approx(-tau * math.log(0.05), abs=0.03)
    assert m["overshoot_pct"] == 0.0 and m["effort_s"] == 0.0


def test_estimate_quality_finds_a_known_lag_and_offset():
    t = np.arange(0.0, 20.0, 0.02)
    truth = np.column_stack([0.2 * np.sin(t), 0.1 * np.cos(0.7 * t), 0.5 * np.sin(0.3 * t)])
    lag = 0.04
    estimate = np.column_stack([np.interp(t - lag, t, truth[:, k]) for k in range(3)])
    estimate[:, 2] += math.radians(1.0)
    q = ae.estimate_quality(t, estimate, truth)
    assert q["est_lag_s"] == pytest.approx(lag, abs=0.002)
    assert q["est_rms_yaw_deg"] == pytest.approx(1.0, abs=0.1)


def summary(hybrid_iae, tuned_iae):
    row = lambda case, iae: dict({"case": case, "effort_s": 1.0, "est_lag_s": 0.0},
                                 **{"iae_%s_deg_s" % a: v for a, v in zip(("roll", "pitch", "yaw"), iae)},
                                 **{"true_iae_%s_deg_s" % a: v for a, v in zip(("roll", "pitch", "yaw"), iae)},
                                 **{"max_error_%s_deg" % a: 1.0 for a in ("roll", "pitch", "yaw")},
                                 **{"est_rms_%s_deg" % a: 0.1 for a in ("roll", "pitch", "yaw")})
    steps = [{"case": c, "input": "%s step" % a, "iae_deg_s": 1.0, "settling_s": 1.0, "overshoot_pct": 0.0,
              "effort_s": 1.0} for c in ("hybrid w=3", "ardusub tuned") for a in ("roll", "pitch", "yaw")]
    return {"dive": [row("hybrid w=3", hybrid_iae), row("ardusub default", [500, 500, 500]),
                     row("ardusub tuned", tuned_iae), row("hybrid w=3, our simulator", hybrid_iae)],
            "steps": steps, "omega_d_dive": 3.0, "gains": {"default": {"A": 1.0}, "tuned": {"A": 2.0}},
            "tune_factors": [0.5, 1.0, 2.0]}


def test_verdict_follows_the_figures():
    text = "\n".join(ar.report_section(summary([100, 100, 100], [200, 200, 200])))
    assert "IAE is lower on every axis (roll -50 %, pitch -50 %, yaw -50 %) against ArduSub's tuned" in text
    text = "\n".join(ar.report_section(summary([300, 100, 300], [200, 200, 200])))
    assert "lower on pitch only" in text
    text = "\n".join(ar.report_section(summary([300, 300, 300], [200, 200, 200])))
    assert "not lower on any axis" in text
    assert "each tried at x0.5, x1, x2" in text
    assert "Not run: no build" in "\n".join(ar.report_section({"skipped": "no build"}))


class _FakeFlight(object):
    """Records the overrides a pilot sends; mode and arming as a flight that needs nothing."""

    mode, armed = "MANUAL", True

    def __init__(self, depth_m=20.0):
        from types import SimpleNamespace
        self.sent = []
        self.requested = []
        self.sitl = SimpleNamespace(plant=SimpleNamespace(eta=np.array([0.0, 0.0, depth_m, 0.0, 0.0, 0.0])),
                                    physics=SimpleNamespace(request_depth=self.requested.append))

    def drain(self):
        pass

    def recv(self, types, timeout_s):
        from types import SimpleNamespace
        return SimpleNamespace(time_boot_ms=12000)

    def wait_time(self, t_boot_s):
        self.waited_until = t_boot_s

    def override(self, channels):
        self.sent.append(list(channels))


def test_hybrid_pilot_delays_attitude_and_command_as_the_loop_says(vehicle):
    """Topside latency on real ArduSub: with 40 ms telemetry and 60 ms command delay the first
    override that is not neutral goes out 100 ms after the first attitude, and it is the
    command the law formed 60 ms earlier."""
    from brov2_hybrid.analysis.ardusub_pilots import HybridPilot
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from dataclasses import replace
    loop = ClosedLoop(replace(load_analysis_settings().loop, mixer="stock", output_stage="stock"), vehicle)
    pilot = HybridPilot(loop.new_controller(3.0), loop.output, vehicle.tau_max, 0.04, 0.06)
    flight = _FakeFlight()
    neutral = [loop.output.channels(np.zeros(6)).get(ch, 0) for ch in range(1, 9)]
    formed = []
    for k in range(10):
        t = 0.02 * k
        tau, u, rc = pilot.tick(flight, t, np.array([0.0, 0.0, 0.5]), np.zeros(3), np.zeros(3), np.zeros(3))
        formed.append(tau)
    first = next(k for k, sent in enumerate(flight.sent) if sent != neutral)
    assert first == 5                                  # 0.04 + 0.06 s at 50 Hz
    assert not np.any(formed[1]) and np.any(formed[2])  # the law first sees an attitude at 40 ms


def test_a_run_with_a_lagging_reader_or_above_the_depth_bound_is_refused(monkeypatch):
    cs = ae.load_compare_settings()
    t = np.linspace(0.0, 1.0, 51)
    log = flown_log(t)
    log["depth_m"] = np.full(51, 10.0)
    log["reader_lag_s"] = np.zeros(51)
    import brov2_hybrid.analysis.ardusub_fly as af
    monkeypatch.setattr(af, "fly", lambda *args, **kwargs: (log, np.zeros((51, 3))))
    pilot = type("P", (), {"mode": "MANUAL"})()
    assert af.run_on(_FakeFlight(), pilot, None, False, cs)[0] is log
    log["reader_lag_s"][20] = cs.max_reader_lag_s + 0.01
    with pytest.raises(Brov2Error, match="reader fell"):
        af.run_on(_FakeFlight(), pilot, None, False, cs)
    log["reader_lag_s"][20] = 0.0
    log["depth_m"][30] = cs.min_depth_m - 0.1
    with pytest.raises(Brov2Error, match="not submerged"):
        af.run_on(_FakeFlight(), pilot, None, False, cs)


def test_a_vehicle_that_rose_is_carried_back_down_before_the_next_run(monkeypatch):
    cs = ae.load_compare_settings()
    t = np.linspace(0.0, 1.0, 51)
    log = flown_log(t)
    log["depth_m"], log["reader_lag_s"] = np.full(51, 10.0), np.zeros(51)
    import brov2_hybrid.analysis.ardusub_fly as af
    monkeypatch.setattr(af, "fly", lambda *args, **kwargs: (log, np.zeros((51, 3))))
    pilot = type("P", (), {"mode": "MANUAL"})()
    deep = _FakeFlight(depth_m=cs.start_depth_m - 0.5 * cs.redive_m)
    af.run_on(deep, pilot, None, False, cs)
    assert deep.requested == []
    risen = _FakeFlight(depth_m=cs.start_depth_m - 2.0 * cs.redive_m)
    af.run_on(risen, pilot, None, False, cs)
    assert risen.requested == [cs.start_depth_m] and risen.waited_until == 12.0 + cs.redive_settle_s


def test_a_run_that_did_not_fly_is_refused_with_its_reason(monkeypatch):
    """Disarmed, another mode, motors idle while commanded: refused (FlightRefused), never scored."""
    import brov2_hybrid.analysis.ardusub_fly as af
    rs = af.load_refusal_settings()
    t = np.linspace(0.0, 2.0, 101)
    log = flown_log(t)
    log["u_yaw"] = np.full(t.size, 0.3)
    assert af.refusal(log, "MANUAL", rs) is None
    disarmed = dict(log, vehicle_armed=np.arange(t.size) < 60)
    assert "disarmed on 41 of 101 rows (first at t = 1.20 s)" in af.refusal(disarmed, "MANUAL", rs)
    assert "mode MANUAL, not ALT_HOLD" in af.refusal(log, "ALT_HOLD", rs)
    idle = dict(log)
    for i in range(1, 9):
        idle["pwm%d_us" % i] = np.where(t > 0.5, 1500.0 + 0.5 * rs.motor_deadband_us, 1550.0)
    assert "did not follow the pilot" in af.refusal(idle, "MANUAL", rs)
    still = dict(idle, u_yaw=np.zeros(t.size))       # no command: neutral motors are what was asked...
    for i in range(1, 9):
        still["pwm%d_us" % i] = np.full(t.size, 1500.0)
    assert "neutral for the whole run" in af.refusal(still, "MANUAL", rs)   # ...but never all run long
    unknown = dict(log)
    for i in range(1, 9):
        unknown["pwm%d_us" % i] = np.where(t < 1.0, 0.0, 1550.0)     # no SERVO_OUTPUT_RAW yet: not judged
    assert af.refusal(unknown, "MANUAL", rs) is None
    # run_on refuses it
    monkeypatch.setattr(af, "fly", lambda *args, **kwargs: (disarmed, np.zeros((t.size, 3))))
    pilot = type("P", (), {"mode": "MANUAL"})()
    with pytest.raises(af.FlightRefused, match="not a flight, not scored: ArduSub was disarmed"):
        af.run_on(_FakeFlight(), pilot, None, False)


def test_motors_that_answer_a_short_command_a_few_rows_later_followed_it():
    """The hybrid's 20 deg roll step at omega_d 2 on real ArduSub (measured): |u| >= command_active on 8 rows
    only, and the motors, reported in SERVO_OUTPUT_RAW and carried by the next ATTITUDE's row, show a command
    2 rows after it. Judged on their own rows, 2 of the 8 looked idle (25 % > 20 %): a flight refused as not
    flown. Judged over motor_response_s after each row, it flew; motors that never answer are still refused."""
    import brov2_hybrid.analysis.ardusub_fly as af
    rs = af.load_refusal_settings()
    assert rs.motor_response_s >= 0.06            # 3 rows at 50 Hz
    t = np.arange(0.0, 8.0 + 1e-9, 0.02)
    log = flown_log(t)
    for i in range(1, 9):
        log["pwm%d_us" % i] = np.full(t.size, 1500.0)
    command = np.zeros(t.size)
    rows = np.nonzero((t >= 3.0 - 1e-9) & (t < 3.17))[0][[0, 1, 2, 3, 4, 6, 7, 8]]    # 8 rows, as flown
    command[rows] = 0.3
    log["u_roll"] = command
    moving = np.zeros(t.size, bool)
    moving[rows[0] + 2:rows[-1] + 3] = True      # the motors follow 2 rows (40 ms) later
    for i in (5, 7):
        log["pwm%d_us" % i] = np.where(moving, 1700.0, 1500.0)
    assert af.refusal(log, "MANUAL", rs) is None
    assert af.refusal(log, "MANUAL", replace(rs, motor_response_s=0.0)) is not None   # the old rule: 25 %
    # the pilot's own command delay adds to the response: 0.1 s more and the motors are 7 rows late
    late = dict(log)
    for i in (5, 7):
        late["pwm%d_us" % i] = np.roll(log["pwm%d_us" % i], 5)
    assert "did not follow" in af.refusal(late, "MANUAL", replace(rs, motor_response_s=0.06))
    assert af.refusal(late, "MANUAL", replace(rs, motor_response_s=0.06), command_delay_s=0.1) is None
    # motors that never answer the step (off neutral elsewhere) are refused
    never = dict(log)
    for i in (5, 7):
        never["pwm%d_us" % i] = np.where(t < 1.0, 1600.0, 1500.0)
    assert "did not follow" in af.refusal(never, "MANUAL", rs)
    # a command in the last motor_response_s of the log cannot show in it: not judged
    end = dict(log, u_roll=np.where(t > t[-1] - 0.5 * rs.motor_response_s, 0.3, 0.0))
    assert af.refusal(end, "MANUAL", rs) is None


class _TargetFlight(_FakeFlight):
    def __init__(self):
        super().__init__()
        self.targets = []

    def attitude_target(self, eta2d):
        self.targets.append(np.array(eta2d))


def test_ardusubs_pilot_input_arrives_over_the_pilots_link(vehicle):
    """A pilot at the surface flies ArduSub over the tether too: with a 40 ms link at 50 Hz ticks,
    ArduSub is sent nothing for two ticks, then each attitude target and stick two ticks late."""
    from brov2_hybrid.analysis.ardusub_pilots import ArduSubAttitudePilot
    rows = [(np.array([0.0, 0.0, 0.1 * k]), np.array([0.1 * k, 0.0, 0.0])) for k in range(8)]
    for delay_s, late in ((0.0, 0), (0.04, 2)):
        pilot, flight = ArduSubAttitudePilot(vehicle.rc_map, delay_s), _TargetFlight()
        sticks = []
        for k, (eta2d, u_lin) in enumerate(rows):
            sticks.append(pilot.tick(flight, 0.02 * k, eta2d, u_lin, np.zeros(3), np.zeros(3))[1][0])
        assert len(flight.targets) == len(rows) - late
        assert [t[2] for t in flight.targets] == pytest.approx([0.1 * k for k in range(len(rows) - late)])
        assert sticks == pytest.approx([0.0] * late + [0.1 * k for k in range(len(rows) - late)])


def test_a_law_on_the_vehicle_is_fed_the_pilots_input_over_the_link(vehicle):
    """The hybrid on the vehicle (the onboard placement) with a 40 ms pilot link forms, at each tick, the
    torque the topside law forms on the input of two ticks before (the rate estimator's too)."""
    from brov2_hybrid.analysis.ardusub_pilots import HybridPilot
    from brov2_hybrid.loop.closed_loop import ClosedLoop
    from brov2_hybrid.analysis.settings import load_analysis_settings
    from dataclasses import replace
    loop = ClosedLoop(replace(load_analysis_settings().loop, mixer="stock", output_stage="stock"), vehicle)
    late = HybridPilot(loop.new_controller(6.0), loop.output, vehicle.tau_max, reference_delay_s=0.04)
    now = HybridPilot(loop.new_controller(6.0), loop.output, vehicle.tau_max)
    direct = HybridPilot(loop.new_controller(6.0), loop.output, vehicle.tau_max)
    eta2 = np.array([0.05, -0.02, 0.3])
    desired = [np.array([0.0, 0.1 * math.sin(0.5 * k), 0.3 + 0.05 * k]) for k in range(12)]
    got, want, undelayed = [], [], []
    for k in range(12):
        t = 0.02 * k
        late.on_desired(t, desired[k])
        got.append(late.tick(_FakeFlight(), t, desired[k], np.zeros(3), eta2, np.zeros(3))[0])
        direct.on_desired(t, desired[k])
        undelayed.append(direct.tick(_FakeFlight(), t, desired[k], np.zeros(3), eta2, np.zeros(3))[0])
        if k >= 2:
            now.on_desired(t, desired[k - 2])
            want.append(now.tick(_FakeFlight(), t, desired[k - 2], np.zeros(3), eta2, np.zeros(3))[0])
    np.testing.assert_allclose(got[2:], want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(got[2:], undelayed[2:], rtol=1e-3)     # the link is felt
