"""ArduSub manual-control mixers: u in [-1, 1]^6 -> one motor PWM [us] per thruster.

Two kinds (:data:`KINDS`, the firmware's MOT_MIXER choices; :class:`Mixer`):

* ``quantitative`` -- Algorithm 2 (the paper's ``motor_command_new()``): the vehicle's
  allocator gives the thruster forces m (the paper's: m = T-dagger diag(tau_max) u, Eq. 9,
  :class:`brov2_hybrid.vehicle.allocation.PseudoInverseAllocator`), then the thrust table gives m*.
* ``stock`` -- Algorithm 1 (stock ``motor_command()``, :func:`mix_stock`): two groups
  (vertical: heave, roll, pitch; horizontal: surge, sway, yaw) each scaled by
  max(1, max_i |xi_i|) (``AP_Motors6DOF::output_armed_stabilizing_vectored_6dof``).
  ArduSub compares magnitudes; the paper's line 6 drops the abs, we use the magnitude.
  That is ArduSub's mixing for FRAME_CONFIG 2 (vectored_6dof, the Heavy). The other
  frames (``AP_Motors6DOF::output_armed_stabilizing``) add the roll/pitch/yaw and the
  linear terms per motor and only constrain the sum to [-1, 1]; FRAME_CONFIG 1
  (vectored, the 6-thruster BlueROV2; ``output_armed_stabilizing_vectored``) first
  limits the forward command of motors 1-4 while heaving: |forward| <= 1 -
  MOT_FV_CPLNG_K |throttle| on motors 1 and 2 when going astern and on 3 and 4 when going
  ahead (:func:`stock_normalized_for_frame`).

Whole microseconds (:meth:`Mixer.motor_pwm`, what the firmware writes to its servo outputs):

* stock ArduSub **truncates**: ``AP_Motors6DOF::output_to_motors`` (libraries/AP_Motors/
  AP_Motors6DOF.cpp) writes ``calc_thrust_to_pwm(_thrust_rpyt_out[i])``, which computes
  ``1500 + thrust_in * range`` in single-precision float and returns it as ``int16_t``, a
  conversion that drops the fraction (:func:`ardusub_thrust_to_pwm`). With every RC channel
  at 1900 a saturated group gives m* = -1/3 and motor PWM 1366 (1366.67 truncated), as
  measured on ArduSub 4.5 SITL; rounding would give 1367.
* Algorithm 2 (the paper's modified firmware, not available to us) is modelled, as
  documented since the start, as rounding to the nearest microsecond.

Input order of u: (surge, sway, heave, roll, pitch, yaw), heave positive down (FRD).
"""

import numpy as np

from brov2_hybrid.jit import compile_family
from brov2_hybrid.vehicle.allocation import HORIZONTAL_DOFS, VERTICAL_DOFS, check_allocator, matrix_6xn
from brov2_hybrid.link.ardusub import PWM_HALF_RANGE_US, PWM_NEUTRAL_US
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.vehicle.thrust_table import interp_at, probe_table, pwm_from_star, star_from_force
from brov2_hybrid.validate import as_finite, as_matrix, as_vector


#: Mixer kinds, in the order of the simulated firmware's MOT_MIXER values (0, 1):
#: Algorithm 2 (the paper's modified firmware) and Algorithm 1 (stock ArduSub).
QUANTITATIVE = "quantitative"
STOCK = "stock"
KINDS = (QUANTITATIVE, STOCK)


def _algorithm1(T_hat, u):
    """Algorithm 1 on a checked u (6,) or stack (k, 6) and a checked T-hat (6 x n)."""
    return _stock_mix(T_hat, u, VECTORED_6DOF, 0.0)


#: ArduSub's mixing per FRAME_CONFIG (AP_Motors6DOF::output_armed_stabilizing); others: "sum".
FRAME_MIXING = {1: "vectored", 2: "vectored_6dof"}
#: output_armed_stabilizing_vectored: forward_coupling_direction of motors 1..4 (0 beyond).
FORWARD_COUPLING_DIRECTION = (-1.0, -1.0, 1.0, 1.0)
#: Kernel codes of the stock mixings (:func:`stock_rows`).
VECTORED_6DOF, VECTORED, SUMMED = 0, 1, 2
MIXING_CODES = {"vectored_6dof": VECTORED_6DOF, "vectored": VECTORED, "sum": SUMMED}


def _summed(T_hat, u, fv_coupling_k=None):
    """ArduSub's ungrouped mixing on a checked u (6,) / (k, 6): per motor
    (roll + pitch + yaw) + (throttle + forward + lateral), constrained to [-1, 1]; with
    ``fv_coupling_k`` the vectored frame's forward/vertical coupling limit on motors 1-4."""
    if fv_coupling_k is None:
        return _stock_mix(T_hat, u, SUMMED, 0.0)
    return _stock_mix(T_hat, u, VECTORED, fv_coupling_k)


def _stock_mix(T_hat, u, mixing, fv_coupling_k):
    """:func:`stock_rows` (compiled where numba is) on u (6,) or (k, 6)."""
    kernels = _kernels()
    rows = kernels["stock_rows"] if kernels else stock_rows
    if u.ndim == 1:
        return rows(T_hat, u.reshape(1, -1), mixing, fv_coupling_k)[0]
    return rows(T_hat, u, mixing, fv_coupling_k)


def stock_rows(T_hat, U, mixing, fv_coupling_k):
    """Stock ArduSub's m* (k, n) for commands U (k, 6): the one implementation (a kernel).

    ``mixing`` (:data:`VECTORED_6DOF`, :data:`VECTORED`, :data:`SUMMED`) picks the frame's
    mixing (``AP_Motors6DOF::output_armed_stabilizing*``):

    * vectored_6dof (Algorithm 1): per motor, each group's xi is the sum of u_j T_hat[j, i]
      over the group's DOFs in DOF order (vertical: heave, roll, pitch; horizontal:
      surge, sway, yaw); each group is divided by max(1, max_i |xi_i|); the vertical and
      the horizontal group are added and constrained to [-1, 1];
    * vectored / sum: (roll + pitch + yaw) + (heave + forward + sway) per motor,
      constrained to [-1, 1]; vectored first limits the forward command of motors 1-4
      while heaving, |forward| <= max(0, 1 - MOT_FV_CPLNG_K |heave|), on motors 1 and 2
      going astern and on 3 and 4 going ahead.

    Plain loops on floats, so that numba compiles it (:mod:`brov2_hybrid.jit`) with the
    same numbers; U and T_hat must be checked float arrays.
    """
    k, n = U.shape[0], T_hat.shape[1]
    m = np.empty((k, n))
    v0, v1, v2 = VERTICAL_DOFS
    h0, h1, h2 = HORIZONTAL_DOFS
    xv = np.empty(n)
    xh = np.empty(n)
    for row in range(k):
        if mixing == VECTORED_6DOF:
            peak_v, peak_h = 1.0, 1.0
            for i in range(n):
                a = U[row, v0] * T_hat[v0, i] + U[row, v1] * T_hat[v1, i] + U[row, v2] * T_hat[v2, i]
                b = U[row, h0] * T_hat[h0, i] + U[row, h1] * T_hat[h1, i] + U[row, h2] * T_hat[h2, i]
                xv[i], xh[i] = a, b
                peak_v = max(peak_v, abs(a))
                peak_h = max(peak_h, abs(b))
            for i in range(n):
                mi = xv[i] / peak_v + xh[i] / peak_h
                m[row, i] = min(max(mi, -1.0), 1.0)
        else:
            surge = U[row, 0]
            limit = max(0.0, 1.0 - fv_coupling_k * abs(U[row, 2]))     # |throttle| = |heave|
            for i in range(n):
                rpy = U[row, 3] * T_hat[3, i] + U[row, 4] * T_hat[4, i] + U[row, 5] * T_hat[5, i]
                direction = FORWARD_COUPLING_DIRECTION[i] if i < len(FORWARD_COUPLING_DIRECTION) else 0.0
                if mixing == VECTORED and direction != 0.0 and (surge < 0.0) == (direction < 0.0):
                    forward = min(max(surge, -limit), limit) * T_hat[0, i]
                else:
                    forward = surge * T_hat[0, i]
                linear = U[row, 2] * T_hat[2, i] + forward + U[row, 1] * T_hat[1, i]
                m[row, i] = min(max(rpy + linear, -1.0), 1.0)
    return m


def truncated_pwm_rows(M, half_range_us):
    """Stock ArduSub's whole-microsecond motor outputs for m* M (k, n) (a kernel).

    ``1500 + m half_range`` in single precision, truncated (see :func:`ardusub_thrust_to_pwm`);
    M is clipped to [-1, 1] first. Plain loops, compiled by numba where it is installed.
    """
    k, n = M.shape
    out = np.empty((k, n))
    neutral, half = np.float32(PWM_NEUTRAL_US), np.float32(half_range_us)
    for row in range(k):
        for i in range(n):
            mi = min(max(M[row, i], -1.0), 1.0)
            out[row, i] = np.trunc(neutral + np.float32(mi) * half)
    return out


def stock_motor_pwm(u, T_hat, mixing, fv_coupling_k, half_range_us, pwm_min_us, pwm_max_us, out):
    """Stock ArduSub's whole-microsecond motor outputs (n,) for one u (6,) into ``out``, clipped
    to [pwm_min_us, pwm_max_us] (a kernel: :func:`stock_rows`, :func:`truncated_pwm_rows`)."""
    pwm = truncated_pwm_rows(stock_rows(T_hat, u.reshape(1, 6), mixing, fv_coupling_k), half_range_us)
    for i in range(len(out)):
        out[i] = min(max(pwm[0, i], pwm_min_us), pwm_max_us)


def quantitative_motor_pwm(u, F, tau_max, inv_force, inv_star, inv_slopes, neutral_us, half_range_us, pwm_min_us,
                           pwm_max_us, out):
    """Algorithm 2's motor outputs (n,) for one u (6,) into ``out`` (a kernel): forces
    F (tau_max u) [N] (the paper's allocation with F = T-dagger), m* by the thrust table's
    inverse (:func:`~brov2_hybrid.vehicle.thrust_table.star_from_force`), PWM
    (:func:`~brov2_hybrid.vehicle.thrust_table.pwm_from_star`) rounded to the microsecond,
    clipped to [pwm_min_us, pwm_max_us]."""
    stars = np.empty(len(out))
    algorithm2_stars(u, F, tau_max, inv_force, inv_star, inv_slopes, stars)
    for i in range(len(out)):
        pwm = np.rint(pwm_from_star(stars[i], neutral_us, half_range_us))
        out[i] = min(max(pwm, pwm_min_us), pwm_max_us)


def algorithm2_stars(u, F, tau_max, inv_force, inv_star, inv_slopes, out):
    """Algorithm 2's m* (n,) for one u (6,) into ``out`` (a kernel): forces F (tau_max u) [N]
    (the paper's allocation with F = T-dagger) through the thrust table's inverse
    (:func:`~brov2_hybrid.vehicle.thrust_table.star_from_force`)."""
    forces = F @ (tau_max * u)
    for i in range(len(out)):
        out[i] = star_from_force(forces[i], inv_force, inv_star, inv_slopes)


_MIXER_KERNELS = (stock_rows, truncated_pwm_rows, stock_motor_pwm, quantitative_motor_pwm, algorithm2_stars,
                  star_from_force,
                  pwm_from_star, interp_at)


def _probe(kernels):
    """True when the compiled mixer kernels give the Python kernels' numbers (random stacks)."""
    rng = np.random.default_rng(7)
    T_hat = np.ascontiguousarray(rng.choice([-1.0, 0.0, 1.0], (6, 8)))
    U = np.vstack([rng.uniform(-1.0, 1.0, (40, 6)), np.ones((1, 6)), -np.ones((1, 6))])
    for mixing in (VECTORED_6DOF, VECTORED, SUMMED):
        m = kernels["stock_rows"](T_hat, U, mixing, 0.4)
        if not np.array_equal(m, stock_rows(T_hat, U, mixing, 0.4)):
            return False
        if not np.array_equal(kernels["truncated_pwm_rows"](m, 400.0), truncated_pwm_rows(m, 400.0)):
            return False
    t = probe_table()
    F, tau_max = rng.uniform(-0.5, 0.5, (8, 6)), rng.uniform(20.0, 200.0, 6)   # any linear allocator
    for u in U:
        a, b = np.empty(8), np.empty(8)
        kernels["stock_motor_pwm"](u, T_hat, VECTORED_6DOF, 0.0, 400.0, 1100.0, 1900.0, a)
        stock_motor_pwm(u, T_hat, VECTORED_6DOF, 0.0, 400.0, 1100.0, 1900.0, b)
        if not np.array_equal(a, b):
            return False
        args = (F, tau_max, t.inv_force_n, t.inv_star, t.inv_slopes, t.neutral_us,
                t.half_range_us, 1100.0, 1900.0)
        kernels["quantitative_motor_pwm"](u, *(args + (a,)))
        quantitative_motor_pwm(u, *(args + (b,)))
        if not np.array_equal(a, b):
            return False
    return True


def _kernels():
    """The compiled mixer kernels, or None (run the Python ones)."""
    return compile_family("mixers", _MIXER_KERNELS, _probe)


def _commands(u):
    """u as a checked float array of shape (6,) or a stack (k, 6)."""
    if np.ndim(u) == 2:
        return as_matrix(u, (np.shape(u)[0], 6), "u")
    return as_vector(u, 6, "u")


def stock_normalized(u, T_hat):
    """Algorithm 1 lines 1-18: m* in [-1, 1] (n,) from u (6,) and T-hat (6 x n).

    A stack of commands u (k, 6) gives m* (k, n), row by row the same numbers.
    """
    return _algorithm1(matrix_6xn(T_hat, "T_hat"), _commands(u))


def stock_normalized_for_frame(u, T_hat, frame_config, fv_coupling_k):
    """Stock ArduSub's m* for its FRAME_CONFIG: Algorithm 1 (2, vectored_6dof), the
    vectored frame's coupled sum (1) or the plain sum (others). u (6,) or a stack (k, 6)."""
    T_hat, u = matrix_6xn(T_hat, "T_hat"), _commands(u)
    mixing = FRAME_MIXING.get(int(frame_config), "sum")
    if mixing == "vectored_6dof":
        return _algorithm1(T_hat, u)
    return _summed(T_hat, u, as_finite(fv_coupling_k, "fv_coupling_k") if mixing == "vectored" else None)


def mix_stock(u, T_hat):
    """Algorithm 1: n PWMs [us] from u (6,) with the heuristic matrix T-hat (6 x n)."""
    # ArduSub's fixed motor-output convention (Algorithm 1 line 19)
    return PWM_NEUTRAL_US + PWM_HALF_RANGE_US * stock_normalized(u, T_hat)


def ardusub_thrust_to_pwm(m_star, half_range_us=PWM_HALF_RANGE_US):
    """Stock ArduSub's motor output [us] for m* in [-1, 1]: whole microseconds, truncated.

    ``AP_Motors6DOF::calc_thrust_to_pwm`` (libraries/AP_Motors/AP_Motors6DOF.cpp), called by
    ``AP_Motors6DOF::output_to_motors``: ``1500 + thrust_in * range`` evaluated in ``float``
    (IEEE single precision) and returned as ``int16_t``, which truncates toward zero. The
    float32 arithmetic is reproduced so that a value that is a whole number in exact
    arithmetic (e.g. m* = 0.25 -> 1600) is not pushed below it by float64 noise.

    Parameters
    ----------
    m_star : float or array_like
        Motor thrust commands in [-1, 1] (``_thrust_rpyt_out``; already constrained).
    half_range_us : float
        MOT_PWM_MAX - 1500 = 1500 - MOT_PWM_MIN (400 us with ArduSub's 1100/1900).

    Returns
    -------
    ndarray of float (whole numbers), the shape of ``m_star``
    """
    m = np.asarray(m_star, dtype=float)
    if np.any(np.isnan(m)):
        raise Brov2Error("m_star: expected numbers, got NaN in %s" % m.tolist())
    half_range_us = as_finite(half_range_us, "half_range_us")
    kernels = _kernels()
    rows = kernels["truncated_pwm_rows"] if kernels else truncated_pwm_rows
    pwm = rows(np.ascontiguousarray(m.reshape(1, -1)), half_range_us)
    return pwm.reshape(m.shape) if m.ndim else np.float64(pwm[0, 0])


class Mixer(object):
    """A mixer bound to its matrices: ``mixer.pwm(u)`` / ``mixer.normalized(u)``.

    Parameters
    ----------
    kind : one of :data:`KINDS` ('quantitative', 'stock')
        Algorithm 2 (the paper's modified firmware) or Algorithm 1 (stock ArduSub).
    allocator : an allocator of :data:`brov2_hybrid.vehicle.allocation.ALLOCATORS`
        u -> thruster forces (Algorithm 2's first step).
    table : ThrustTable
    T_hat : array_like (6, n)
        ArduSub's heuristic matrix (Algorithm 1).
    frame_config : int
        ArduSub's FRAME_CONFIG: how stock ArduSub mixes (:data:`FRAME_MIXING`; 2,
        vectored_6dof: Algorithm 1).
    fv_coupling_k : float
        MOT_FV_CPLNG_K, the vectored frame's forward/vertical coupling (vehicle file).
    """

    def __init__(self, kind, allocator, table, T_hat, frame_config, fv_coupling_k):
        if kind not in KINDS:
            raise Brov2Error("mixer: expected one of %s, got %r" % (KINDS, kind))
        self.kind = kind
        self.allocator = check_allocator(allocator) if kind == QUANTITATIVE else allocator
        self.table = table
        self.T_hat = matrix_6xn(T_hat, "T_hat")
        self.frame_mixing = FRAME_MIXING.get(int(frame_config), "sum")
        self.fv_coupling_k = as_finite(fv_coupling_k, "fv_coupling_k") if self.frame_mixing == "vectored" else None
        #: F (n, 6) of a linear allocator (forces = F (tau_max u), the paper's T-dagger), None for a
        #: nonlinear one (its forces() then runs on every command).
        self.force_matrix = allocator.force_matrix if kind == QUANTITATIVE else None
        self._mixing_code = MIXING_CODES[self.frame_mixing]
        self._fv_k = float(self.fv_coupling_k or 0.0)
        self._kernels = _kernels() or {f.__name__: f for f in _MIXER_KERNELS}

    def normalized(self, u):
        """m* in [-1, 1], shape (n,); stock: also u (k, 6) -> (k, n)."""
        if self.kind == STOCK:
            if self.frame_mixing == "vectored_6dof":
                return _algorithm1(self.T_hat, _commands(u))      # T_hat checked once, here
            return _summed(self.T_hat, _commands(u), self.fv_coupling_k)
        return self.table.normalized_from_force(self.allocator.forces(u))

    def pwm(self, u):
        """Motor PWMs [us], shape (n,)."""
        return self.table.pwm_from_normalized(self.normalized(u))

    def clipped_motor_pwm(self, u, pwm_min_us=-np.inf, pwm_max_us=np.inf):
        """:meth:`motor_pwm` of one command u (6,), clipped to [pwm_min_us, pwm_max_us] (n,).

        One kernel call (:func:`stock_motor_pwm`, :func:`quantitative_motor_pwm`) for stock
        ArduSub and for Algorithm 2 with a linear allocator (forces = F tau_max u); other
        allocators run :meth:`motor_pwm` (the same table kernels) and clip.
        """
        out = np.empty(self.T_hat.shape[1])
        self.motor_pwm_into(as_vector(u, 6, "u"), float(pwm_min_us), float(pwm_max_us), out)
        return out

    def motor_pwm_into(self, u, pwm_min_us, pwm_max_us, out):
        """:meth:`clipped_motor_pwm` of a checked float u (6,) into ``out`` (n,) (the loop's tick)."""
        k = self._kernels
        if self.kind == STOCK:
            k["stock_motor_pwm"](u, self.T_hat, self._mixing_code, self._fv_k, self.table.half_range_us, pwm_min_us,
                                 pwm_max_us, out)
        elif self.force_matrix is not None:
            t = self.table
            k["quantitative_motor_pwm"](u, self.force_matrix, self.allocator.tau_max, t.inv_force_n, t.inv_star,
                                        t.inv_slopes, t.neutral_us, t.half_range_us, pwm_min_us, pwm_max_us, out)
        else:
            out[:] = np.minimum(np.maximum(np.rint(self.pwm(u)), pwm_min_us), pwm_max_us)

    def motor_pwm(self, u):
        """Motor PWMs in whole microseconds as the firmware writes them, shape (n,).

        Stock: also a stack of commands u (k, 6) -> (k, n) (one call scores many candidates).

        Stock: truncated (:func:`ardusub_thrust_to_pwm`, ArduSub's ``calc_thrust_to_pwm``);
        quantitative (Algorithm 2): rounded to the nearest microsecond.
        """
        if self.kind == STOCK:
            return ardusub_thrust_to_pwm(self.normalized(u), self.table.half_range_us)
        return self.clipped_motor_pwm(u)


def motor_pwm_from_rc(channel_pwm, rc_map, mixer, pwm_min_us, pwm_max_us):
    """ArduSub's manual-mode chain: RC channel PWMs -> u -> mixer -> motor PWMs.

    The one place the simulated firmware and the in-process closed loop turn pilot input
    into motor outputs: whole microseconds as the firmware writes them
    (:meth:`Mixer.motor_pwm`: stock ArduSub truncates, Algorithm 2 rounds), clipped to
    [pwm_min_us, pwm_max_us].

    Parameters
    ----------
    channel_pwm : dict or sequence
        {channel: PWM us} or PWMs indexed from channel 1 (see RCMap.u_from_pwm).
    rc_map : brov2_hybrid.vehicle.rc.RCMap
    mixer : Mixer

    Returns
    -------
    list of int, one per thruster
    """
    pwm_min_us, pwm_max_us = as_finite(pwm_min_us, "pwm_min_us"), as_finite(pwm_max_us, "pwm_max_us")
    return [int(p) for p in mixer.clipped_motor_pwm(rc_map.u_from_pwm(channel_pwm), pwm_min_us, pwm_max_us).tolist()]
