"""Fit of the identification flight's log: per attitude axis and heave, least squares with confidence intervals.

Model per DOF (diagonal, the simulator's and the controller's; body FRD, NED):

    roll   I_x p_dot = K - (b_x + c_x |p|) p + l_y R33 - l_z R32
    pitch  I_y q_dot = M - (b_y + c_y |q|) q + l_z R31 - l_x R33
    yaw    I_z r_dot = N - (b_z + c_z |r|) r
    heave  m_z w_dot = Z - (b_w + c_w |w|) w + (W - B) R33,   depth_dot = R33 w

with I the effective inertia (rigid + added), b/c the linear/quadratic damping, l = W r_G - B r_B
the lever of the restoring moment (:mod:`brov2_hybrid.physics.hydrostatics`) and R3j the
third row of the body -> NED rotation. The applied wrench (K, M, N, Z) comes from the logged
motor PWMs through the thrust table and T (what the thrusters gave, quantisation included);
where they are sparser than the command (through ROS), from the RC override sent through the
vehicle's firmware (:mod:`brov2_hybrid.identify.output_chain`); a log with neither falls back on
the commanded u or tau columns.

Attitude axes: equation error in integral form between consecutive rows,
nu_{k+1} - nu_k = (1/I) [int tau - int D(nu) + int g], linear in (1/I, b/I, c/I, l/I) and
solved by ordinary least squares (noise in nu_{k+1} - nu_k is the dependent variable's, so
the estimate is not biased by it). The delay from command to thrust is found by scanning
(the one giving the smallest residuals). Heave has no velocity in the log, only the depth as the
vehicle reports it: an output-error fit of the simulated depth, with its own delay
(:mod:`brov2_hybrid.identify.heave_fit`).

Confidence intervals, two and the wider kept (:func:`estimates`), mapped to the physical parameters
by the delta method, half-width = Student t quantile times the standard error:

- measurement noise: covariance s^2 (J^T J)^-1, inflated by (1 + rho) / (1 - rho) for the residuals'
  lag-1 correlation rho (dof n - p);
- model error: the delete-a-block jackknife (:func:`jackknife_covariance`) over ``jackknife_blocks``
  contiguous stretches of the flight, each with an equal share of the axis's excitation (dof blocks - 1).
  A model that is wrong in a way that differs across the flight (a command the vehicle got
  rounded, a drag law that is not quite the vehicle's, a sensor that lags) gives estimates that
  differ from one stretch to the next; the noise covariance alone assumes the model exact and
  through ROS excluded the truth on yaw's drag in every flight (docs/identification.md
  "Do the intervals hold the truth?"). An error the same in every stretch (a bias of the
  simulator's integration, a misread thrust table) is not seen by either.
"""
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from brov2_hybrid.dofs import ANGULAR_DOF_NAMES
from brov2_hybrid.errors import InputDataError
from brov2_hybrid.tick_log.logfile import ATTITUDE_COLUMNS, PWM_COLUMNS, RATE_COLUMNS, TAU_COLUMNS

ROLL, PITCH, YAW = 0, 1, 2


@dataclass
class Estimate:
    """A fitted value and its confidence interval half-width (same unit), at level ``level``."""

    value: float
    half_width: float
    level: float = 0.95

    @property
    def interval(self):
        """(low, high) of the confidence interval."""
        return self.value - self.half_width, self.value + self.half_width


@dataclass
class AxisFit:
    """One DOF's fit: name, estimates by parameter name, residual RMS and the rows used."""

    name: str
    estimates: dict
    residual_rms: float
    n_rows: int
    t_s: np.ndarray = field(default=None, repr=False)
    measured: np.ndarray = field(default=None, repr=False)
    modelled: np.ndarray = field(default=None, repr=False)
    #: rows left out because the response contradicted the logged command (see fit_attitude_axis)
    rejected: int = 0


def third_row(roll, pitch):
    """R31, R32, R33 (NED down in body axes) of ZYX Euler angles (arrays) [rad]."""
    return -np.sin(pitch), np.cos(pitch) * np.sin(roll), np.cos(pitch) * np.cos(roll)


def _forward_filled(values):
    """``values`` (n, m) with each NaN replaced by the last finite value above it (0 before the first)."""
    out = np.array(values, dtype=float)
    for k in range(len(out)):
        bad = ~np.isfinite(out[k])
        out[k, bad] = out[k - 1, bad] if k else 0.0
    return out


def applied_wrench(log, vehicle, sent_rows=None, firmware=None):
    """(n, 6) body wrench [N, N m] the thrusters gave at each row.

    With ``firmware`` (a :data:`~brov2_hybrid.vehicle.firmware_output.FIRMWARES` name) and the RC
    columns: the RC override channels each row's u made (the logged ones on the ``sent_rows``, and
    where the log has no u), through that firmware's chain to thrust
    (:func:`~brov2_hybrid.identify.output_chain.override_wrench`), on every row; the log's motor PWMs
    only told which firmware (the ROS logger's come from the vehicle's 10 Hz SERVO_OUTPUT_RAW stream,
    held between samples: taken as the thrust they lag the override by up to a sample).

    Without: from the log's motor PWMs (T @ thrust(PWM), the vehicle's table) when they are logged
    as often as the command, else from the command, u * tau_max, also on rows without motor PWMs (0:
    none received); a missing u (NaN) holds the previous one, and on the ``sent_rows`` (n,) bool, where
    the vehicle did not get the logged u (a neutral override, a command sent late or never:
    :mod:`brov2_hybrid.identify.disturbed`), the RC channels as last sent are read back to u (``rc_map``).
    """
    from brov2_hybrid.identify.output_chain import override_wrench, rc_rows
    from brov2_hybrid.tick_log.logfile import U_COLUMNS
    n = vehicle.n_thrusters
    pwm = np.column_stack([np.asarray(log[c], dtype=float) for c in PWM_COLUMNS[:n]])
    rc = rc_rows(log) if firmware is not None else None
    if rc is not None and all(c in log for c in U_COLUMNS):
        # the override each tick's u made (what the vehicle got just after the tick); the logged one
        # through ROS is mostly the tick before's (the row is written before the allocation's message
        # comes back), and taken as the row's it put the thrust a row late. Rows where the vehicle did
        # not get the logged u keep the override as last sent.
        u = _forward_filled(np.column_stack([np.asarray(log[c], dtype=float) for c in U_COLUMNS]))
        sent = np.array([vehicle.rc_map.channel_array_from_u(np.clip(row, -1.0, 1.0), rc.shape[1]) for row in u],
                        dtype=float)
        if sent_rows is not None:
            sent[sent_rows] = rc[sent_rows]
        rc = sent
    if rc is not None:
        # the override sent, through the firmware: on every row (held motor PWM samples lag it)
        return override_wrench(rc, vehicle, firmware)
    commanded = _command_wrench(log, vehicle, sent_rows)
    if _pwm_too_sparse(pwm, commanded):
        return commanded
    known = np.all(pwm > 0, axis=1)
    wrench = commanded.copy()
    wrench[known] = vehicle.wrench_from_pwm(pwm[known])
    return wrench


def _command_wrench(log, vehicle, sent_rows=None):
    """(n, 6) the commanded wrench [N, N m]: u * tau_max (a missing u holds the previous one; on the
    ``sent_rows`` the RC channels as last sent, read back to u), or the logged tau without u columns."""
    from brov2_hybrid.tick_log.logfile import RC_COLUMNS, U_COLUMNS
    if not all(c in log for c in U_COLUMNS):
        return _forward_filled(np.column_stack([np.asarray(log[c], dtype=float) for c in TAU_COLUMNS]))
    u = np.column_stack([np.asarray(log[c], dtype=float) for c in U_COLUMNS])
    if sent_rows is not None and np.any(sent_rows):
        rc = np.column_stack([np.asarray(log[c], dtype=float) for c in RC_COLUMNS])
        u[sent_rows] = [vehicle.rc_map.u_from_pwm(row) for row in rc[sent_rows]]
    return _forward_filled(u) * np.asarray(vehicle.tau_max, dtype=float)


def _pwm_too_sparse(pwm, commanded):
    """True when the motor PWM samples ``pwm`` (n, thrusters) [us] (0: none received) change less than
    half as often as the ``commanded`` wrench rows (n, 6): the thrust is then taken as the command."""
    known = np.all(pwm > 0, axis=1)
    pwm_changes = np.count_nonzero(np.any(np.diff(pwm, axis=0) != 0.0, axis=1))
    command_changes = np.count_nonzero(np.any(np.diff(commanded, axis=0) != 0.0, axis=1))
    return not np.any(known) or pwm_changes < 0.5 * command_changes


def thrust_from_command(log, vehicle):
    """True when :func:`applied_wrench` without a firmware takes the thrust as the command (u * tau_max)
    on the rows between motor PWM samples (the log's PWMs are too sparse for it), False when it reads the
    log's own motor PWMs."""
    pwm = np.column_stack([np.asarray(log[c], dtype=float) for c in PWM_COLUMNS[:vehicle.n_thrusters]])
    return _pwm_too_sparse(pwm, _command_wrench(log, vehicle))


def held_integral(t_s, values, delay_s):
    """Integral of the row-held ``values`` (row k in force on [t_k + delay, t_{k+1} + delay)) over each
    row interval [t_k, t_{k+1}] (n - 1,)."""
    t = np.asarray(t_s, dtype=float)
    v = np.asarray(values, dtype=float)
    cumulative = np.concatenate([[0.0], np.cumsum(v[:-1] * np.diff(t))])
    at = np.interp(t, t + delay_s, cumulative, left=0.0)
    return np.diff(at)


def _trapezoid(t_s, values):
    return 0.5 * (values[1:] + values[:-1]) * np.diff(t_s)


def autocorrelation_factor(residuals):
    """(1 + rho) / (1 - rho) for the lag-1 correlation rho of ``residuals`` (>= 1)."""
    r = residuals - np.mean(residuals)
    denom = float(np.dot(r, r))
    if len(r) < 3 or denom == 0.0:
        return 1.0
    rho = min(max(float(np.dot(r[1:], r[:-1]) / denom), 0.0), 0.95)
    return (1.0 + rho) / (1.0 - rho)


def _half_widths(jacobian, cov, dof, level):
    cov_g = jacobian @ cov @ jacobian.T
    quantile = float(stats.t.ppf(0.5 + 0.5 * level, max(dof, 1)))
    return quantile * np.sqrt(np.maximum(np.diag(cov_g), 0.0))


def estimates(names, values, jacobian, cov, dof, level, model_cov=None, model_dof=None):
    """Estimates of physical parameters ``values`` = g(theta) with d g / d theta = ``jacobian``: the
    half-width from the noise covariance ``cov`` of theta (``dof`` degrees of freedom) or, where
    wider, from the model-error covariance ``model_cov`` (the jackknife's, ``model_dof``; None: noise only)."""
    half = _half_widths(jacobian, cov, dof, level)
    if model_cov is not None:
        half = np.maximum(half, _half_widths(jacobian, model_cov, model_dof, level))
    return {name: Estimate(float(v), float(half[k]), level) for k, (name, v) in enumerate(zip(names, values))}


def excitation_blocks(weight, n_blocks):
    """(n,) block labels 0..n_blocks - 1 of rows in time order: contiguous stretches each holding an
    equal share of the non-negative excitation ``weight`` (n,) (the rows of a stretch without any
    belong to the block they fall in)."""
    w = np.asarray(weight, dtype=float)
    n_blocks = int(n_blocks)
    if n_blocks < 2 or len(w) < n_blocks:
        raise InputDataError("identify: jackknife_blocks must be at least 2 and at most the %d rows fitted; "
                             "got %d" % (len(w), n_blocks))
    cumulative = np.cumsum(np.where(np.isfinite(w), np.abs(w), 0.0))
    if cumulative[-1] <= 0.0:
        cumulative = np.arange(1.0, len(w) + 1.0)         # nothing excited: equal row counts
    share = cumulative / cumulative[-1]
    return np.minimum((share * n_blocks - 1e-12).astype(int), n_blocks - 1).clip(0)


def jackknife_covariance(jacobian, residual, blocks):
    """Delete-a-block jackknife covariance (p, p) of a least-squares fit's parameter vector about its
    solution, from the fit's ``jacobian`` (n, p) of the residual and the ``residual`` (n,) there, with
    rows labelled into ``blocks`` (n,): (g - 1) / g sum_b (d_b - mean d)(d_b - mean d)^T over the g
    blocks, d_b the change of the parameters with block b left out, (J_b'^T J_b')^+ J_b^T r_b (J_b'
    the other rows; one Gauss-Newton step from the solution, where J^T r = 0: exact for a fit linear
    in its parameters, as the attitude axes are)."""
    J = np.asarray(jacobian, dtype=float)
    r = np.asarray(residual, dtype=float)
    labels = np.unique(blocks)
    jtj = J.T @ J
    d = np.array([np.linalg.pinv(jtj - J[blocks == b].T @ J[blocks == b]) @ (J[blocks == b].T @ r[blocks == b])
                  for b in labels])
    d -= d.mean(axis=0)
    g = len(labels)
    return (g - 1.0) / g * (d.T @ d)


def _attitude_design(log, wrench, delay_s, axis, keep=None):
    """(y, X, names of the lever terms, rows used (n - 1,) bool) of the integral equation error of ``axis``;
    ``keep`` (n,) bool: rows that may be used (an interval needs both its rows; default all)."""
    t = np.asarray(log["time_s"], dtype=float)
    nu = np.asarray(log[RATE_COLUMNS[axis]], dtype=float)
    r31, r32, r33 = third_row(np.asarray(log[ATTITUDE_COLUMNS[0]]), np.asarray(log[ATTITUDE_COLUMNS[1]]))
    columns = [held_integral(t, wrench[:, 3 + axis], delay_s), -_trapezoid(t, nu), -_trapezoid(t, nu * np.abs(nu))]
    if axis == ROLL:
        levers = (("lever_y_nm", r33), ("lever_z_nm", -r32))
    elif axis == PITCH:
        levers = (("lever_z_nm", r31), ("lever_x_nm", -r33))
    else:
        levers = ()
    columns += [_trapezoid(t, g) for _, g in levers]
    y, X = np.diff(nu), np.column_stack(columns)
    rows = np.isfinite(y) & np.all(np.isfinite(X), axis=1)     # a logged NaN (no attitude yet) drops its rows
    if keep is not None:
        rows &= keep[1:] & keep[:-1]
    return y[rows], X[rows], [name for name, _ in levers], rows


def _solve(y, X):
    theta, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
    if rank < X.shape[1]:
        raise InputDataError("identify: the log does not excite every term of the model (rank %d of %d); "
                             "was the identification schedule flown?" % (rank, X.shape[1]))
    return theta, y - X @ theta


def find_delay(log, wrench, delay_max_s, delay_step_s, axes=(ROLL, PITCH, YAW), keep=None):
    """The command-to-thrust delay [s] on the grid 0..delay_max_s giving the smallest attitude residuals
    (sum over ``axes`` of RSS relative to its value at zero delay) over the rows ``keep`` (n,) bool."""
    grid = np.arange(0.0, delay_max_s + 0.5 * delay_step_s, delay_step_s)
    totals = np.zeros(len(grid))
    for axis in axes:
        rss = np.array([float(np.sum(_solve(*_attitude_design(log, wrench, d, axis, keep)[:2])[1] ** 2)) for d in grid])
        totals += rss / rss[0]
    return float(grid[int(np.argmin(totals))])


def _robust_sigma(residual):
    """Standard deviation of ``residual`` from its median absolute deviation (outliers do not inflate it)."""
    return 1.4826 * float(np.median(np.abs(residual - np.median(residual))))


def _outlier_scale(residual, impulse):
    """The scale the outlier rule measures a row's residual in: the larger of the residuals' robust sigma and
    that of the rows where the applied impulse ``impulse`` (the design's first column) changed from the
    row before: the command's edges, whose timing the log knows only to the pipeline's jitter, and, where
    the rows' lengths jitter (through ROS), every row under a torque. On a log whose quiet rows fit to
    nothing (no sensor noise, a wrench rebuilt exactly) the robust sigma of all rows would call every edge
    an outlier."""
    sigma = _robust_sigma(residual)
    edges = np.concatenate([[False], np.abs(np.diff(impulse)) > 1e-12 * max(float(np.max(np.abs(impulse))), 1e-300)])
    if np.count_nonzero(edges) >= 10:
        sigma = max(sigma, _robust_sigma(residual[edges]))
    return sigma


def fit_attitude_axis(log, wrench, axis, delay_s, level=0.95, keep=None, outlier_sigma=None, margin_s=0.0,
                      jackknife_blocks=None):
    """:class:`AxisFit` of one attitude axis (0 roll, 1 pitch, 2 yaw): inertia_kg_m2, linear_drag,
    quadratic_drag and, for roll/pitch, the restoring lever terms [N m]; over the rows ``keep`` (n,) bool
    (default all: :mod:`brov2_hybrid.identify.disturbed` gives the undisturbed ones).

    ``jackknife_blocks``: the intervals also hold the jackknife's over that many stretches of equal
    applied impulse (module docstring); None: noise only.

    ``outlier_sigma``: row intervals whose rate change departs from the fit by more than this many
    robust standard deviations are rows where the vehicle did not get the logged command (a late
    delivery the log cannot show); they are left out, widened by ``margin_s`` [s], and the axis
    refitted (twice at most). ``rejected`` of the result counts the rows so left out.
    """
    from brov2_hybrid.identify.disturbed import widened
    t = np.asarray(log["time_s"], dtype=float)
    keep = np.ones(len(t), bool) if keep is None else np.asarray(keep, bool)
    y, X, lever_names, used = _attitude_design(log, wrench, delay_s, axis, keep)
    theta, residual = _solve(y, X)
    rejected = np.zeros(len(t), bool)
    for _ in range(2 if outlier_sigma else 0):
        bad = np.abs(residual) > outlier_sigma * _outlier_scale(residual, X[:, 0])
        if not np.any(bad):
            break
        start = np.nonzero(used)[0][bad]
        rejected[start] = rejected[start + 1] = True
        rejected = widened(t, rejected, margin_s)
        y, X, lever_names, used = _attitude_design(log, wrench, delay_s, axis, keep & ~rejected)
        theta, residual = _solve(y, X)
    n, p = X.shape
    s2 = float(residual @ residual) / max(n - p, 1) * autocorrelation_factor(residual)
    cov = s2 * np.linalg.inv(X.T @ X)
    a = theta[0]
    values = [1.0 / a] + [th / a for th in theta[1:]]
    jac = np.zeros((p, p))
    jac[0, 0] = -1.0 / a ** 2
    for k in range(1, p):
        jac[k, 0] = -theta[k] / a ** 2
        jac[k, k] = 1.0 / a
    names = ["inertia_kg_m2", "linear_drag", "quadratic_drag"] + lever_names
    model_cov = None
    if jackknife_blocks is not None:
        model_cov = jackknife_covariance(X, residual, excitation_blocks(X[:, 0], jackknife_blocks))
    return AxisFit(ANGULAR_DOF_NAMES[axis], estimates(names, values, jac, cov, n - p, level, model_cov,
                                                      None if jackknife_blocks is None else jackknife_blocks - 1),
                   math.sqrt(float(residual @ residual) / n), n, t[1:][used], y, X @ theta,
                   int(np.count_nonzero(rejected & keep)))
