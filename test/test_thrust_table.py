"""T200 thrust table: the paper's 81-point lookup and both directions of the map."""
import numpy as np
import pytest

from brov2_hybrid import paths
from brov2_hybrid.errors import Brov2Error, InputDataError
from brov2_hybrid.vehicle.thrust_table import KGF_TO_N, ThrustTable, read_t200_csv


def test_paper_grid(vehicle):
    t = vehicle.table
    assert len(t.pwm_us) == 81
    np.testing.assert_array_equal(t.pwm_us, np.arange(1100, 1901, 10))
    np.testing.assert_allclose(t.pwm_star, (t.pwm_us - 1500) / 400)


def test_end_points_match_published_16v_data(vehicle):
    """docs/DESIGN.md section 4: +5.245 kgf at 1900 us, -4.069 kgf at 1100 us, in newtons."""
    assert vehicle.table.force_from_pwm(1900) == pytest.approx(5.245 * 9.80665, abs=0.01)
    assert vehicle.table.force_from_pwm(1100) == pytest.approx(-4.069 * 9.80665, abs=0.01)


def test_dead_band_is_zero_and_zero_force_is_1500(vehicle):
    np.testing.assert_array_equal(vehicle.table.force_from_pwm([1480, 1500, 1520]), 0.0)
    assert vehicle.table.pwm_from_force(0.0) == 1500.0


def test_small_forces_jump_the_dead_band(vehicle):
    """A tiny thrust request starts at the dead band's edge (1520 / 1480 on the grid)."""
    assert vehicle.table.pwm_from_force(1e-6) == pytest.approx(1520.0, abs=1e-3)
    assert vehicle.table.pwm_from_force(-1e-6) == pytest.approx(1480.0, abs=1e-3)


def test_round_trip_force_pwm_force(vehicle):
    forces = np.linspace(-39.0, 51.0, 37)
    np.testing.assert_allclose(vehicle.table.force_from_pwm(vehicle.table.pwm_from_force(forces)), forces, atol=1e-9)


def test_round_trip_against_raw_bench_data(vehicle):
    """The 10 us resampling stays within 1 % of full thrust of the raw 4 us bench data."""
    pwm_raw, kgf = read_t200_csv(paths.params_path("t200_16V.csv"))
    err = vehicle.table.force_from_pwm(pwm_raw) - kgf * KGF_TO_N
    assert np.max(np.abs(err)) < 0.01 * vehicle.table.max_forward_n


def test_beyond_table_saturates(vehicle):
    np.testing.assert_array_equal(vehicle.table.pwm_from_force([1e3, -1e3]), [1900.0, 1100.0])
    np.testing.assert_array_equal(vehicle.table.force_from_pwm([2500, 500]), vehicle.table.force_n[[-1, 0]])


def test_rejects_bad_csv(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("pwm_us,force_kgf\n1100,-4\n1500,zero\n1900,5\n")
    with pytest.raises(InputDataError, match=r"t.csv:3: column 'force_kgf': expected a number"):
        ThrustTable.from_csv(str(bad))
    bad.write_text("pwm_us,thrust\n1100,-4\n")
    with pytest.raises(InputDataError, match="missing column 'force_kgf'"):
        ThrustTable.from_csv(str(bad))


def test_rejects_non_monotone_or_offset_tables():
    with pytest.raises(Brov2Error, match="must not decrease"):
        ThrustTable([1100, 1500, 1700, 1900], [-4, 0, 3, 2])
    with pytest.raises(Brov2Error, match="zero thrust at the neutral"):
        ThrustTable([1100, 1300, 1500, 1900], [-4, -1, 0.5, 5])


def test_force_from_pwm_rejects_nan(vehicle):
    table = vehicle.table
    with pytest.raises(Brov2Error, match="NaN"):
        table.force_from_pwm([1500.0, float("nan")])
    with pytest.raises(Brov2Error, match="NaN"):
        table.force_from_pwm(float("nan"))
    assert table.force_from_pwm(1e9) == table.max_forward_n    # beyond the table: its end value


def test_interp_at_is_force_from_pwm_number_for_number(vehicle):
    """The stock search's scalar look-up (interp_at, Python and compiled) gives exactly
    np.interp's numbers: grid points, between them, the dead band, beyond both ends
    (random and whole-microsecond PWMs)."""
    from brov2_hybrid import jit
    from brov2_hybrid.vehicle import stock_search
    from brov2_hybrid.vehicle.firmware_output import output_stage
    from brov2_hybrid.vehicle.thrust_table import interp_at
    table = vehicle.table
    rng = np.random.default_rng(5)
    pwm = np.concatenate([table.pwm_us, rng.uniform(1000.0, 2000.0, 20000), np.rint(rng.uniform(1090, 1910, 5000)),
                          1500.0 + 400.0 * rng.uniform(-1.0, 1.0, 20000), [1100.0, 1900.0, -1e9, 1e9]])
    expected = table.force_from_pwm(pwm)
    args = (table.pwm_us, table.force_n, table.slope_n_per_us)
    np.testing.assert_array_equal([interp_at(*args, p) for p in pwm.tolist()], expected)
    output_stage("stock", vehicle, vehicle.rc_map)          # compiles the search's kernels where numba is
    compiled = jit.compile_family("stock_search", stock_search.KERNELS)
    if compiled is not None:
        np.testing.assert_array_equal([compiled["interp_at"](*args, p) for p in pwm.tolist()], expected)
