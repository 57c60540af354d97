"""T200 thrust table: PWM <-> thrust lookup of Algorithm 2 and the simulator.

The paper's lookup has 81 points, PWM 1100..1900 us in 10 us steps, normalised
PWM* = (PWM - 1500) / 400 and thrust t in newtons (force_kgf * g). The table is read
from Blue Robotics' bench CSV (columns ``pwm_us`` and ``force_kgf``) and resampled by
linear interpolation.

Both directions are linear interpolation on the table:

* :meth:`ThrustTable.force_from_pwm` (simulator: motor PWM -> thrust [N]);
* :meth:`ThrustTable.normalized_from_force` (mixer, Algorithm 2 lines 4-16: thrust
  [N] -> m* in [-1, 1]). Forces beyond the table give m* = +-1. The dead band has many
  PWMs with zero thrust: zero force maps to PWM 1500 exactly, a positive force is
  interpolated on the branch above the dead band (from its last zero point) and a
  negative force on the branch below it, so the thruster never waits inside the dead band.
"""
import csv
import math

import numpy as np

from brov2_hybrid.link.ardusub import PWM_HALF_RANGE_US, PWM_NEUTRAL_US
from brov2_hybrid.errors import Brov2Error, InputDataError
from brov2_hybrid.csv_input import open_csv
from brov2_hybrid.jit import compile_family
from brov2_hybrid.validate import as_positive

KGF_TO_N = 9.80665  # standard gravity, the definition of the kilogram-force
#: Requested forces smaller than this [N] are zero: T-dagger leaves ~1e-15 N of
#: floating-point noise on thrusters a DOF does not use, which must not leave the dead band.
ZERO_FORCE_TOLERANCE_N = 1e-9


def read_t200_csv(path, value_column="force_kgf"):
    """Read the ``pwm_us`` column and ``value_column`` (default ``force_kgf``; ``power_w``: the electric
    power the thruster draws [W]) of a T200 bench CSV.

    Returns
    -------
    pwm_us, value : ndarray
        Sorted by PWM.

    Raises
    ------
    InputDataError
        Naming the file, line and column of the first bad value.
    """
    with open_csv(path, "thrust table") as handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames or []
        for col in ("pwm_us", value_column):
            if col not in fields:
                raise InputDataError("%s:1: missing column '%s' (have %s)" % (path, col, fields))
        pwm, force = [], []
        for row in reader:
            line = reader.line_num
            for col, out in (("pwm_us", pwm), (value_column, force)):
                try:
                    value = float(row[col])
                except (TypeError, ValueError):
                    raise InputDataError("%s:%d: column '%s': expected a number, got %r" % (path, line, col, row[col]))
                if not np.isfinite(value):
                    raise InputDataError("%s:%d: column '%s': expected a finite number, got %r" % (path, line, col, row[col]))
                out.append(value)
    if len(pwm) < 3:
        raise InputDataError("%s: expected at least 3 rows, got %d" % (path, len(pwm)))
    pwm, force = np.array(pwm), np.array(force)
    order = np.argsort(pwm)
    pwm, force = pwm[order], force[order]
    if np.any(np.diff(pwm) <= 0):
        raise InputDataError("%s: duplicate PWM values" % path)
    return pwm, force


class ThrustTable(object):
    """Monotone thrust curve of one thruster: PWM [us] <-> thrust [N].

    Parameters
    ----------
    pwm_us : array_like, shape (n,)
        Strictly increasing PWMs.
    force_n : array_like, shape (n,)
        Thrust at each PWM [N]; non-decreasing, negative below and positive above the
        dead band, zero at ``neutral_us``.
    neutral_us, half_range_us : float
        PWM* = (PWM - neutral_us) / half_range_us.
    """

    def __init__(self, pwm_us, force_n, neutral_us=PWM_NEUTRAL_US, half_range_us=PWM_HALF_RANGE_US):
        pwm = np.array(pwm_us, dtype=float)
        force = np.array(force_n, dtype=float)
        if pwm.ndim != 1 or pwm.shape != force.shape or pwm.size < 3:
            raise Brov2Error("thrust table: expected two equal-length 1-D arrays of >= 3 points")
        if not (np.all(np.isfinite(pwm)) and np.all(np.isfinite(force))):
            raise Brov2Error("thrust table: expected finite values")
        if np.any(np.diff(pwm) <= 0):
            raise Brov2Error("thrust table: PWM must be strictly increasing")
        if np.any(np.diff(force) < 0):
            raise Brov2Error("thrust table: thrust must not decrease with PWM")
        self.neutral_us = float(neutral_us)
        self.half_range_us = as_positive(half_range_us, "half_range_us")
        if not pwm[0] < self.neutral_us < pwm[-1]:
            raise Brov2Error("thrust table: neutral PWM %g outside the table" % self.neutral_us)
        if not (force[0] < 0.0 < force[-1]):
            raise Brov2Error("thrust table: expected reverse thrust at the low end and forward at the high end")
        if np.interp(self.neutral_us, pwm, force) != 0.0:
            raise Brov2Error("thrust table: expected zero thrust at the neutral PWM %g" % self.neutral_us)
        self.pwm_us = pwm
        self.force_n = force
        self.pwm_star = (pwm - self.neutral_us) / self.half_range_us
        # Branches for the inverse map, each strictly increasing in force: the points
        # with positive (negative) thrust plus the dead-band edge next to them, at 0 N.
        pos, neg = force > 0.0, force < 0.0
        edge_hi = np.where(~pos)[0][-1]  # last PWM without forward thrust
        edge_lo = np.where(~neg)[0][0]   # first PWM without reverse thrust
        # One lookup array: reverse branch up to (0 N, dead-band low edge), then forward
        # branch from (0 N, dead-band high edge). The look-up (star_from_force, np.interp's
        # numbers) takes the forward segment for f > 0 and the reverse one for f < 0; |f| within
        # ZERO_FORCE_TOLERANCE_N gives m* = 0 explicitly.
        self.inv_force_n = np.concatenate([force[neg], [0.0, 0.0], force[pos]])
        self.inv_star = np.concatenate([self.pwm_star[neg], [self.pwm_star[edge_lo], self.pwm_star[edge_hi]],
                                        self.pwm_star[pos]])
        # star_from_force's slopes of the inverse map (0 on the dead band's zero-width step,
        # which no force beyond ZERO_FORCE_TOLERANCE_N falls in).
        self.inv_slopes = np.array([(s1 - s0) / (f1 - f0) if f1 > f0 else 0.0 for f0, f1, s0, s1 in zip(
            self.inv_force_n.tolist(), self.inv_force_n.tolist()[1:], self.inv_star.tolist(), self.inv_star.tolist()[1:])])
        self.max_forward_n = float(force[-1])
        self.max_reverse_n = float(-force[0])
        # interp_at (the stock search's look-up): each segment's slope [N/us] as np.interp computes it.
        self.slope_n_per_us = np.array([(f1 - f0) / (p1 - p0) for p0, p1, f0, f1 in zip(
            pwm.tolist(), pwm.tolist()[1:], force.tolist(), force.tolist()[1:])])

    @classmethod
    def from_csv(cls, path, pwm_min_us=1100, pwm_max_us=1900, pwm_step_us=10,
                 neutral_us=PWM_NEUTRAL_US, half_range_us=PWM_HALF_RANGE_US):
        """Load a T200 CSV and resample it on the paper's grid (default 81 points)."""
        pwm_raw, force_kgf = read_t200_csv(path)
        grid = np.arange(pwm_min_us, pwm_max_us + 0.5 * pwm_step_us, pwm_step_us, dtype=float)
        if grid[0] < pwm_raw[0] or grid[-1] > pwm_raw[-1]:
            raise InputDataError("%s: table covers %g..%g us, grid needs %g..%g us"
                                 % (path, pwm_raw[0], pwm_raw[-1], grid[0], grid[-1]))
        force = np.interp(grid, pwm_raw, force_kgf) * KGF_TO_N
        return cls(grid, force, neutral_us, half_range_us)

    @classmethod
    def from_params(cls, thruster_params):
        """Build the table described by a :class:`~brov2_hybrid.params.ThrusterParams`."""
        p = thruster_params
        return cls.from_csv(p.csv_file, p.pwm_min_us, p.pwm_max_us, p.pwm_step_us,
                            p.pwm_neutral_us, p.pwm_half_range_us)

    @property
    def symmetric_limit_n(self):
        """min(max forward, max reverse) thrust [N]: reachable in both directions."""
        return min(self.max_forward_n, self.max_reverse_n)

    def force_from_pwm(self, pwm_us):
        """Thrust [N] for PWM(s) [us]; PWMs beyond the table give its end values.

        Raises Brov2Error for a NaN PWM (it has no thrust).
        """
        force = np.interp(pwm_us, self.pwm_us, self.force_n)
        _refuse_nan(force, "pwm_us", pwm_us)
        return force

    def normalized_from_force(self, force_n):
        """Algorithm 2 lookup: thrust [N] -> m* in [-1, 1] (array in, array out).

        |force| <= ZERO_FORCE_TOLERANCE_N gives exactly 0 (PWM 1500); forces beyond the
        table give +-1.
        """
        f = np.asarray(force_n, dtype=float)
        _refuse_nan(f, "force_n", force_n)
        if f.ndim == 0:
            return star_from_force(float(f), self.inv_force_n, self.inv_star, self.inv_slopes)
        star = np.empty(f.size)
        _table_kernels()["stars_from_forces"](np.ascontiguousarray(f).reshape(-1), self.inv_force_n, self.inv_star,
                                              self.inv_slopes, star)
        return star.reshape(f.shape)

    def pwm_from_force(self, force_n):
        """Thrust [N] -> PWM [us] through :meth:`normalized_from_force`."""
        return self.neutral_us + self.half_range_us * self.normalized_from_force(force_n)

    def pwm_from_normalized(self, m_star):
        """m* in [-1, 1] -> PWM [us] (Algorithm 2 line 17)."""
        m = np.asarray(m_star, dtype=float)
        _refuse_nan(m, "m_star", m_star)
        if m.ndim == 0:
            return pwm_from_star(float(m), self.neutral_us, self.half_range_us)
        pwm = np.empty(m.size)
        _table_kernels()["pwms_from_stars"](np.ascontiguousarray(m).reshape(-1), self.neutral_us, self.half_range_us,
                                            pwm)
        return pwm.reshape(m.shape)


def interp_at(xp, fp, slopes, x):
    """np.interp's arithmetic for one finite x on a table (a kernel, compiled by numba where it is).

    ``xp`` increasing, ``fp`` its values, ``slopes[j] = (fp[j+1] - fp[j]) / (xp[j+1] - xp[j])``:
    a grid point gives its own value, beyond the table its end values, else
    ``slopes[j] * (x - xp[j]) + fp[j]`` with xp[j] <= x < xp[j+1] -- the numbers np.interp
    gives (the same expression), found by bisection.
    """
    n = len(xp)
    if not x > xp[0]:
        return fp[0]
    if x >= xp[n - 1]:
        return fp[n - 1]
    lo, hi = 0, n - 1                 # xp[lo] <= x < xp[hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if xp[mid] <= x:
            lo = mid
        else:
            hi = mid
    if xp[lo] == x:
        return fp[lo]
    return slopes[lo] * (x - xp[lo]) + fp[lo]


def star_from_force(f, inv_force, inv_star, inv_slopes):
    """Algorithm 2's look-up of one finite thrust ``f`` [N] -> m* in [-1, 1] (a kernel).

    0 within ZERO_FORCE_TOLERANCE_N of zero (PWM 1500); -1 / +1 beyond the table's
    reverse / forward ends; else np.interp's number on the inverse table (``inv_force``
    non-decreasing, ``inv_star`` its m*, ``inv_slopes`` their segments' slopes).
    """
    if abs(f) <= ZERO_FORCE_TOLERANCE_N:
        return 0.0
    if f < inv_force[0]:
        return -1.0
    if f > inv_force[len(inv_force) - 1]:
        return 1.0
    return interp_at(inv_force, inv_star, inv_slopes, f)


def pwm_from_star(m_star, neutral_us, half_range_us):
    """Algorithm 2 line 17 for one m* (a kernel): neutral + half_range clip(m*, -1, 1) [us]."""
    return neutral_us + half_range_us * min(max(m_star, -1.0), 1.0)


def pwms_from_stars(stars, neutral_us, half_range_us, out):
    """:func:`pwm_from_star` of each m* in ``stars`` (k,) into ``out`` (k,) (a kernel)."""
    for i in range(len(stars)):
        out[i] = pwm_from_star(stars[i], neutral_us, half_range_us)


def stars_from_forces(forces, inv_force, inv_star, inv_slopes, out):
    """:func:`star_from_force` of each thrust in ``forces`` (k,) into ``out`` (k,) (a kernel)."""
    for i in range(len(forces)):
        out[i] = star_from_force(forces[i], inv_force, inv_star, inv_slopes)


#: The thrust table the kernels' self-checks use (the bundled T200 at 16 V, no vehicle file: the
#: low-level modules load nothing above them).
PROBE_TABLE_CSV = "t200_16V.csv"


def probe_table():
    """:data:`PROBE_TABLE_CSV` as a :class:`ThrustTable` (for the compiled kernels' self-checks)."""
    from brov2_hybrid import paths
    return ThrustTable.from_csv(paths.params_path(PROBE_TABLE_CSV))


def _probe_table(kernels):
    """True when the compiled look-up gives the Python numbers (forces across the table, the dead band's edges)."""
    table = probe_table()
    forces = np.concatenate([np.linspace(-60.0, 60.0, 2001), table.force_n, [0.0, -0.0, 1e-9, -1e-9, 2e-9, -2e-9]])
    out, twin = np.empty(forces.size), np.empty(forces.size)
    kernels["stars_from_forces"](forces, table.inv_force_n, table.inv_star, table.inv_slopes, out)
    stars_from_forces(forces, table.inv_force_n, table.inv_star, table.inv_slopes, twin)
    return np.array_equal(out, twin)


TABLE_KERNELS = (interp_at, star_from_force, stars_from_forces, pwm_from_star, pwms_from_stars)


def _table_kernels():
    """The thrust table's kernels, compiled where numba is (else the Python functions)."""
    compiled = compile_family("thrust_table", TABLE_KERNELS, _probe_table)
    return compiled if compiled else {f.__name__: f for f in TABLE_KERNELS}


def _refuse_nan(values, name, given):
    """Brov2Error when ``values`` (what ``given`` became) holds a NaN.

    NaN passes through np.interp and np.minimum/maximum; on the per-tick vectors the
    cheapest test is one dot product (NaN in any element makes it NaN).
    """
    values = np.asarray(values)
    if math.isnan(values.dot(values) if values.ndim == 1 else float(np.sum(values * values))):
        raise Brov2Error("%s: expected numbers, got NaN in %s" % (name, np.asarray(given).tolist()))
