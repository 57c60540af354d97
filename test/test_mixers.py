"""Algorithm 1 (stock ArduSub) and Algorithm 2 (quantitative) mixers."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from brov2_hybrid.vehicle import mixers
from brov2_hybrid.errors import Brov2Error

unit = st.floats(-1.0, 1.0, allow_nan=False)


@pytest.mark.parametrize("kind", ["quantitative", "stock"])
def test_zero_command_is_neutral(vehicle, kind):
    np.testing.assert_array_equal(vehicle.mixer(kind).pwm(np.zeros(6)), 1500.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(unit, min_size=6, max_size=6))
def test_algorithm2_round_trip(vehicle, u):
    """T force(PWM(u)) = diag(tau_max) u while no thruster saturates (Eq. 9 inverted)."""
    u = 0.3 * np.array(u)
    m = vehicle.allocator.forces(u)
    assume(np.all(m < vehicle.table.max_forward_n) and np.all(-m < vehicle.table.max_reverse_n))
    forces = vehicle.table.force_from_pwm(vehicle.mixer().pwm(u))
    np.testing.assert_allclose(vehicle.T @ forces, vehicle.tau_max * u, atol=1e-6)


def test_algorithm2_unused_thrusters_stay_neutral(vehicle):
    """Pure yaw leaves the vertical thrusters at exactly 1500 (T-dagger's 1e-15 N of
    rounding noise must not be pushed out of the dead band)."""
    pwm = vehicle.mixer().pwm([0, 0, 0, 0, 0, 0.3])
    np.testing.assert_array_equal(pwm[4:], 1500.0)
    assert np.all(pwm[:4] != 1500.0)


def test_algorithm2_saturated_thrusters_clip(vehicle):
    pwm = vehicle.mixer().pwm([1, 0, 1, 1, 0, 1])
    assert pwm.min() >= 1100 and pwm.max() <= 1900
    assert np.any(pwm == 1900) or np.any(pwm == 1100)


def test_algorithm2_pure_yaw_uses_horizontal_thrusters(vehicle):
    """Yaw at u=0.5: 0.5 * 37.72 N m * T-dagger yaw column = +-24.97 N on thrusters 1-4."""
    m = vehicle.allocator.forces([0, 0, 0, 0, 0, 0.5])
    np.testing.assert_allclose(m[:4], 0.5 * 37.722 * 1.3242 * np.array([1, -1, -1, 1]), rtol=1e-3)
    np.testing.assert_allclose(m[4:], 0.0, atol=1e-9)


def test_algorithm1_linear_below_saturation(vehicle):
    u = np.array([0.2, -0.1, 0.15, 0.05, -0.1, 0.3])
    m1 = mixers.stock_normalized(u, vehicle.T_hat)
    m2 = mixers.stock_normalized(0.5 * u, vehicle.T_hat)
    np.testing.assert_allclose(m2, 0.5 * m1, atol=1e-12)
    np.testing.assert_allclose(m1, vehicle.T_hat.T @ u, atol=1e-12)


def test_algorithm1_group_scaling_yaw_and_surge(vehicle):
    """Yaw 1 with surge 1: xi2 = (0, -2, 0, 2) on thrusters 1-4, so the whole horizontal
    group is divided by 2: motor 1 gets (-1 + 1)/2 = 0 and motor 2 (-1 - 1)/2 = -1."""
    m = mixers.stock_normalized([1, 0, 0, 0, 0, 1], vehicle.T_hat)
    np.testing.assert_allclose(m, [0, -1, 0, 1, 0, 0, 0, 0], atol=1e-12)
    # A stock mixer cannot deliver the requested surge: net surge is half of u=1 alone.
    surge_alone = vehicle.T_hat[0] @ mixers.stock_normalized([1, 0, 0, 0, 0, 0], vehicle.T_hat)
    assert vehicle.T_hat[0] @ m == pytest.approx(0.5 * surge_alone)


def test_algorithm1_uses_magnitude_for_negative_peaks(vehicle):
    """The group max compares |xi| (ArduSub), not the signed xi of the paper's line 6."""
    m = mixers.stock_normalized([-1, 0, 0, 0, 0, -1], vehicle.T_hat)
    assert np.max(np.abs(m)) == pytest.approx(1.0)
    np.testing.assert_allclose(m, -mixers.stock_normalized([1, 0, 0, 0, 0, 1], vehicle.T_hat))


def test_algorithm1_saturates_to_pwm_limits(vehicle):
    pwm = mixers.mix_stock([0, 0, 1, 1, 1, 0], vehicle.T_hat)
    assert pwm.max() <= 1900 and pwm.min() >= 1100


@pytest.mark.parametrize("u, match", [
    (np.zeros(5), r"expected shape \(6,\)"),
    ([0, 0, 0, np.nan, 0, 0], "finite"),
])
def test_mixers_reject_bad_u(vehicle, u, match):
    for kind in ("quantitative", "stock"):
        with pytest.raises(Brov2Error, match=match):
            vehicle.mixer(kind).pwm(u)


def test_unknown_mixer_kind(vehicle):
    with pytest.raises(Brov2Error, match="expected one of"):
        vehicle.mixer("fancy")


def test_motor_pwm_from_rc_is_the_mixer_on_quantised_u(vehicle):
    """RC channels carry u in whole microseconds; the chain mixes that quantised u."""
    from brov2_hybrid.vehicle.rc import load_rc_map
    rc = load_rc_map()
    u = np.array([0.1234, -0.2, 0.05, 0.0, 0.1, -0.3])
    channels = rc.pwm_from_u(u)
    u_q = rc.u_from_pwm(channels)
    assert np.max(np.abs(u_q - u)) <= 0.5 / 400 + 1e-12
    pwm = mixers.motor_pwm_from_rc(channels, rc, vehicle.mixer(), 1100, 1900)
    assert pwm == [int(p) for p in np.rint(vehicle.mixer().pwm(u_q))]
    narrow = mixers.motor_pwm_from_rc(channels, rc, vehicle.mixer(), 1450, 1550)
    assert min(narrow) >= 1450 and max(narrow) <= 1550 and (1450 in narrow or 1550 in narrow)


# --- Stock ArduSub's whole microseconds: AP_Motors6DOF::calc_thrust_to_pwm truncates --------
# Hand computation with the Heavy's motor factors (params/vehicles/bluerov2_heavy.yaml,
# columns roll, pitch, yaw, throttle, forward, lateral) applied to the channels' normalised
# inputs (ch1 pitch, ch2 roll, ch3 throttle, ch4 yaw, ch5 forward, ch6 lateral; (PWM-1500)/400):
# each group (motors 1-4: yaw/forward/lateral; 5-8: roll/pitch/throttle) is divided by its
# largest magnitude when that exceeds 1, then PWM = trunc(1500 + 400 m).
STOCK_TRUNCATION_CASES = [
    # every channel 1900: horizontal (1, -3, 1, 1)/3, vertical (-1, -3, 1, -1)/3;
    # 1500 - 133.33 = 1366.67 -> 1366 (measured on ArduSub 4.5 SITL; rounding gives 1367)
    ([1900] * 8, [1633, 1100, 1633, 1633, 1366, 1100, 1633, 1366]),
    # yaw, forward, lateral all 1100: (-1, 3, -1, -1)/3
    ([1500, 1500, 1500, 1100, 1100, 1100], [1366, 1900, 1366, 1366, 1500, 1500, 1500, 1500]),
    # pitch, roll, throttle all 1100: (1, 3, -1, 1)/3
    ([1100, 1100, 1100, 1500, 1500, 1500], [1500, 1500, 1500, 1500, 1633, 1900, 1366, 1633]),
    # yaw 1, forward 0.5: (0.5, -1.5, -0.5, 1.5)/1.5 -> 1633.33, 1100, 1366.67, 1900
    ([1500, 1500, 1500, 1900, 1700, 1500], [1633, 1100, 1366, 1900, 1500, 1500, 1500, 1500]),
    # yaw -1, forward -1, lateral -0.25: (-0.25, 2.25, -0.25, -1.75)/2.25
    # -> 1455.56, 1900, 1455.56, 1188.89
    ([1500, 1500, 1500, 1100, 1100, 1400], [1455, 1900, 1455, 1188, 1500, 1500, 1500, 1500]),
    # both groups saturating at once (the two cases above combined)
    ([1100, 1100, 1100, 1900, 1700, 1500], [1633, 1100, 1366, 1900, 1633, 1900, 1366, 1633]),
    # not saturating, whole numbers in exact arithmetic: stay whole (no float noise below them)
    ([1500, 1500, 1500, 1600, 1500, 1500], [1600, 1400, 1400, 1600, 1500, 1500, 1500, 1500]),
    ([1500, 1500, 1500, 1530, 1560, 1510], [1480, 1400, 1540, 1580, 1500, 1500, 1500, 1500]),
]


@pytest.mark.parametrize("channels, expected", STOCK_TRUNCATION_CASES)
def test_stock_motor_pwm_truncates_like_ardusub(vehicle, channels, expected):
    from brov2_hybrid.vehicle.rc import load_rc_map
    assert mixers.motor_pwm_from_rc(channels, load_rc_map(), vehicle.mixer("stock"), 1100, 1900) == expected


def test_stock_all_1900_differs_from_rounding(vehicle):
    """The case that showed it: rounding the same m* would give 1367 on motors 5 and 8."""
    from brov2_hybrid.vehicle.rc import load_rc_map
    u = load_rc_map().u_from_pwm([1900] * 8)
    rounded = np.rint(mixers.mix_stock(u, vehicle.T_hat))
    truncated = vehicle.mixer("stock").motor_pwm(u)
    assert rounded[4] == 1367 and truncated[4] == 1366
    np.testing.assert_array_equal(truncated, np.floor(mixers.mix_stock(u, vehicle.T_hat)))


def test_ardusub_thrust_to_pwm_truncates_in_single_precision():
    # 1/3 and 2/3 of the range: 1633.33 -> 1633, 1366.67 -> 1366, 1766.67 -> 1766
    np.testing.assert_array_equal(mixers.ardusub_thrust_to_pwm([1 / 3, -1 / 3, 2 / 3]), [1633, 1366, 1766])
    # ArduSub holds thrust_in as a float (single precision, ulp 3e-8 at 0.25): a command
    # closer than that to 0.25 is 0.25 there and gives 1600, not 1599.9999996 -> 1599
    assert mixers.ardusub_thrust_to_pwm(0.25 - 1e-9) == 1600.0
    assert mixers.ardusub_thrust_to_pwm(0.25 - 1e-6) == 1599.0
    np.testing.assert_array_equal(mixers.ardusub_thrust_to_pwm([-1.0, 0.0, 1.0]), [1100, 1500, 1900])
    with pytest.raises(Brov2Error, match="NaN"):
        mixers.ardusub_thrust_to_pwm([0.1, np.nan])


def test_quantitative_motor_pwm_rounds(vehicle):
    """Algorithm 2 keeps its documented rounding to the nearest microsecond."""
    u = np.array([0.1234, -0.2, 0.05, 0.0, 0.1, -0.3])
    np.testing.assert_array_equal(vehicle.mixer("quantitative").motor_pwm(u), np.rint(vehicle.mixer("quantitative").pwm(u)))


@pytest.mark.parametrize("name", ["bluerov2_heavy", "bluerov2"])
def test_stock_mixer_on_a_stack_of_commands_is_row_by_row_the_same(name):
    """Algorithm 1 on u (k, 6) gives exactly the m* and motor PWMs of each row on its own
    (the stock-compensated output stage scores its candidates with one call)."""
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    vehicle = load_vehicle(name)
    mixer = vehicle.mixer("stock")
    rng = np.random.default_rng(7)
    u = np.vstack([rng.uniform(-1, 1, (200, 6)), np.rint(rng.uniform(-400, 400, (200, 6))) / 400,
                   np.eye(6), -np.eye(6), np.ones((1, 6)), np.zeros((1, 6))])
    stacked_m, stacked_pwm = mixers.stock_normalized(u, vehicle.T_hat), mixer.motor_pwm(u)
    assert stacked_m.shape == stacked_pwm.shape == (len(u), vehicle.n_thrusters)
    for k in range(len(u)):
        np.testing.assert_array_equal(stacked_m[k], mixers.stock_normalized(u[k], vehicle.T_hat))
        np.testing.assert_array_equal(stacked_pwm[k], mixer.motor_pwm(u[k]))


def test_stock_mixer_refuses_a_stack_of_wrong_width(vehicle):
    with pytest.raises(Brov2Error, match=r"u: expected shape \(2, 6\)"):
        mixers.stock_normalized(np.zeros((2, 5)), vehicle.T_hat)


def test_stock_mixing_follows_the_frame_config():
    """AP_Motors6DOF::output_armed_stabilizing: FRAME_CONFIG 2 groups (Algorithm 1), 1 sums with the
    vectored frame's forward/vertical coupling, other frames sum; checked by hand here and against
    real ArduSub 4.5 in test_real_ardusub.py (all channels 1900 on the 6-thruster vectored frame ->
    1900 1100 1500 1500 1500 1100, measured)."""
    from brov2_hybrid.vehicle.mixers import STOCK, stock_normalized_for_frame
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    v = load_vehicle("bluerov2")
    factors = v.frame.motor_factors          # roll, pitch, yaw, throttle, forward, lateral per motor
    u = np.array([1.0, 1.0, -1.0, 1.0, 1.0, 1.0])  # every stick full: throttle up = heave -1
    m = stock_normalized_for_frame(u, v.T_hat, 1, 1.0)
    # by hand: rpy + throttle + forward (limited to 1 - |throttle| = 0 on motors 3, 4 going ahead) + lateral
    throttle, k = 1.0, 1.0
    expected = []
    for i, (roll, pitch, yaw, thr, fwd, lat) in enumerate(factors):
        forward = 1.0
        if i in (2, 3):
            forward = min(forward, max(0.0, 1.0 - k * abs(throttle)))
        expected.append(np.clip(roll + pitch + yaw + thr * throttle + fwd * forward + lat, -1, 1))
    np.testing.assert_allclose(m, expected, atol=1e-12)
    np.testing.assert_allclose(1500 + 400 * m, [1900, 1100, 1500, 1500, 1500, 1100])
    # without the coupling (k = 0) motors 3 and 4 keep their forward command
    m0 = stock_normalized_for_frame(u, v.T_hat, 1, 0.0)
    assert m0[2] == pytest.approx(np.clip(factors[2][2] + factors[2][4] + factors[2][5], -1, 1))
    # FRAME_CONFIG 2 is Algorithm 1; another frame (3) is the plain sum
    heavy = load_vehicle("bluerov2_heavy")
    np.testing.assert_allclose(stock_normalized_for_frame(u, heavy.T_hat, 2, 1.0),
                               heavy.mixer(STOCK).normalized(u))
    plain = np.clip((u[:, None] * heavy.T_hat).sum(axis=0), -1, 1)
    np.testing.assert_allclose(stock_normalized_for_frame(u, heavy.T_hat, 3, 1.0), plain, atol=1e-12)
