"""Heave fit of the identification flight's log: output error on the depth as the vehicle reports it.

Model (body FRD, NED; see :mod:`brov2_hybrid.identify.fit` for the attitude axes)::

    m_z w_dot = Z(t - d) - (b_w + c_w |w|) w + (W - B) R33,   depth_dot = R33 w

Heave has no velocity in the log, only the depth: the vehicle's depth stream (on a BlueROV2
GLOBAL_POSITION_INT's ``relative_alt``: 10 Hz, whole millimetres), written on the log row on which it
arrived. Each new depth value is fitted where it was logged by simulating the model from the logged
force (:func:`simulate_depth`, :func:`scipy.optimize.least_squares`), so the stream's rate and
quantisation are modelled as the vehicle delivers them: nothing is differentiated or smoothed.

The delay ``d`` between a logged force and the depth it shows is the heave's own, and is fitted with
the other parameters: it is the command-to-thrust delay of the attitude axes plus the depth stream's
latency to the logger (a sample taken on the vehicle, sent at 10 Hz, logged on the next control tick
after it arrived: through ROS about two control periods more than the attitude). Fitting the depth
with the attitude's delay instead leaves that latency in the residuals, and the drag that best
explains a depth shown late is too low: through ROS the heave quadratic drag came out 16 % low with
a 95 % interval that excluded the truth (docs/identification.md "Heave").

The delay is found in two steps: a scan of fixed delays 0..``delay_max_s`` (the residuals are not
convex in it), then one joint fit of all parameters and the delay from the best, whose covariance
gives the intervals (so the delay's uncertainty widens them). Intervals as the attitude axes':
s^2 (J^T J)^-1 inflated by the residuals' lag-1 correlation, Student t half-widths, or where wider
the delete-a-block jackknife's over stretches of equally many depth rows (linearised about the fit).
"""
import math

import numpy as np
from scipy import optimize

from brov2_hybrid.errors import InputDataError
from brov2_hybrid.identify.fit import (AxisFit, autocorrelation_factor, estimates, excitation_blocks, held_integral,
                                       jackknife_covariance, third_row)
from brov2_hybrid.tick_log.logfile import ATTITUDE_COLUMNS

#: The physical parameters of the heave fit, in the order of the parameter vector.
HEAVE_PARAMETERS = ("mass_kg", "linear_drag", "quadratic_drag", "net_weight_n")


def heave_window(log, rest_s, lead_s=0.5):
    """Rows of the heave block: from ``lead_s`` before the first non-zero heave command to ``rest_s`` after the
    last [s]."""
    cmd = np.asarray(log["heave_cmd"], dtype=float)
    on = np.nonzero(np.abs(cmd) > 0.0)[0]
    if on.size == 0:
        raise InputDataError("identify: the log's heave_cmd is zero throughout; expected the heave block of "
                             "the identification schedule")
    t = np.asarray(log["time_s"], dtype=float)
    return (t >= t[on[0]] - lead_s) & (t <= t[on[-1]] + rest_s)


def simulate_depth(t_s, force_n, r33, params, substeps):
    """Depth [m] at ``t_s`` of the heave model from ``params`` = (m_eff, b_lin, b_quad, net W - B, w0, z0),
    force ``force_n`` (n,) [N, + down] held over each row interval, classical Runge-Kutta with ``substeps``
    steps per interval.

    The force is constant over an interval, so the right-hand side is smooth there and RK4 is accurate
    to O(h^4): with the depth stream's 0.1 s intervals and 4 substeps the integration error is far
    below a millimetre (a first-order scheme at that step biased the fitted drags by several percent).
    """
    m, bl, bq, net, w, z = [float(v) for v in params]
    out = np.empty(len(t_s))
    out[0] = z
    for k in range(len(t_s) - 1):
        h = (t_s[k + 1] - t_s[k]) / substeps
        f = force_n[k] + net * r33[k]
        for _ in range(substeps):
            a1 = (f - (bl + bq * abs(w)) * w) / m
            w2 = w + 0.5 * h * a1
            a2 = (f - (bl + bq * abs(w2)) * w2) / m
            w3 = w + 0.5 * h * a2
            a3 = (f - (bl + bq * abs(w3)) * w3) / m
            w4 = w + h * a3
            a4 = (f - (bl + bq * abs(w4)) * w4) / m
            z += h * r33[k] * (w + 2.0 * w2 + 2.0 * w3 + w4) / 6.0
            w += h * (a1 + 2.0 * a2 + 2.0 * a3 + a4) / 6.0
        out[k + 1] = z
    return out


def _undisturbed_runs(idx, keep, min_rows):
    """[(a, b)]: runs idx[a:b] of the heave rows with every log row from idx[a] to idx[b - 1] in ``keep``
    (n,) bool, at least ``min_rows`` long."""
    bad = np.concatenate([[0], np.cumsum(~keep)])          # disturbed log rows before each row
    runs, a = [], 0
    for j in range(1, len(idx) + 1):
        if j == len(idx) or bad[idx[j] + 1] - bad[idx[j - 1]] > 0:
            b = j if j == len(idx) or keep[idx[j - 1]] else j - 1
            if b - a >= min_rows:
                runs.append((a, b))
            a = j
    return runs


class _HeaveProblem(object):
    """The depth rows of the heave block and the force between them for any delay.

    ``t``, ``z``, ``r33``: the rows on which a new depth arrived (a depth held over several rows counts once,
    on the row it arrived); ``runs``: the undisturbed stretches of them (:func:`_undisturbed_runs`).
    """

    def __init__(self, log, wrench, rest_s, lead_s, keep, min_rows):
        rows = heave_window(log, rest_s, lead_s)
        self.t_all = np.asarray(log["time_s"], dtype=float)
        z_all = np.asarray(log["depth_m"], dtype=float)
        rows[1:] &= z_all[1:] != z_all[:-1]
        self.idx = np.nonzero(rows)[0]
        self.t, self.z = self.t_all[self.idx], z_all[self.idx]
        self.force_all = np.asarray(wrench[:, 2], dtype=float)
        _, _, r33 = third_row(np.asarray(log[ATTITUDE_COLUMNS[0]])[self.idx],
                               np.asarray(log[ATTITUDE_COLUMNS[1]])[self.idx])
        self.r33 = np.where(np.isfinite(r33), r33, 1.0)        # no attitude logged: level
        missing = ~np.isfinite(self.z)
        if np.any(missing):
            raise InputDataError("identify: the depth is missing (NaN) on %d rows of the heave block"
                                 % int(np.count_nonzero(missing)))
        keep = np.ones(len(self.t_all), bool) if keep is None else np.asarray(keep, bool)
        self.runs = _undisturbed_runs(self.idx, keep, min_rows)
        if not self.runs:
            raise InputDataError("identify: no undisturbed stretch of %d depth rows in the heave block" % min_rows)

    def force(self, delay_s):
        """(rows,) force [N, + down] averaged over each interval between depth rows, the log's force
        acting ``delay_s`` [s] after its row."""
        held = held_integral(self.t_all, self.force_all, delay_s) / np.diff(self.t_all)
        cumulative = np.concatenate([[0.0], np.cumsum(held * np.diff(self.t_all))])
        return np.append(np.diff(cumulative[self.idx]) / np.diff(self.t), 0.0)

    def residual(self, params, force, substeps):
        """Simulated minus logged depth [m] over every run; ``params`` = the 4 physical parameters, then
        (w0, z0) per run."""
        return np.concatenate([
            simulate_depth(self.t[a:b], force[a:b], self.r33[a:b],
                           np.concatenate([params[:4], params[4 + 2 * j:6 + 2 * j]]), substeps) - self.z[a:b]
            for j, (a, b) in enumerate(self.runs)])

    def start(self, prior):
        """The starting parameter vector and its scale: ``prior`` (4,), then each run at rest at its depth."""
        x0 = np.concatenate([np.asarray(prior, dtype=float)] + [[0.0, self.z[a]] for a, _ in self.runs])
        return x0, np.maximum(np.abs(x0), [1.0] * 4 + [0.1, 1.0] * len(self.runs))


def _fit_at(problem, delay_s, x0, scale, substeps):
    """least_squares of the parameters with the delay held at ``delay_s``."""
    force = problem.force(delay_s)
    return optimize.least_squares(lambda x: problem.residual(x * scale, force, substeps), x0 / scale,
                                  x_scale="jac", method="lm")


def fit_heave(log, wrench, delay_s, prior, rest_s, substeps=4, level=0.95, lead_s=0.5, keep=None, min_rows=5,
              delay_max_s=None, delay_step_s=0.01, jackknife_blocks=None):
    """:class:`~brov2_hybrid.identify.fit.AxisFit` of heave: mass_kg (effective), linear_drag, quadratic_drag,
    net_weight_n (W - B) and delay_s (force to depth).

    ``prior``: (m_eff, b_lin, b_quad, W - B) to start from (the vehicle file's); the rows fitted
    are :func:`heave_window`'s (``rest_s``, ``lead_s``). ``keep`` (n,) bool (default all): the
    depth is simulated only across kept rows: each run of them between disturbed stretches
    starts from its own depth and heave rate (fitted too), runs under ``min_rows`` depth rows
    are dropped. ``delay_max_s``: the force-to-depth delay is fitted in 0..delay_max_s (scanned on
    ``delay_step_s``, then fitted jointly: module docstring); None: held at ``delay_s``.
    ``jackknife_blocks``: the intervals also hold the jackknife's over that many stretches of the
    depth rows (module docstring); None: noise only.
    """
    problem = _HeaveProblem(log, wrench, rest_s, lead_s, keep, min_rows)
    x0, scale = problem.start(prior)
    if delay_max_s is None:
        sol = _fit_at(problem, delay_s, x0, scale, substeps)
        params, res, jac = sol.x * scale, sol.fun, sol.jac / scale
        found_delay = float(delay_s)
    else:
        grid = np.arange(0.0, delay_max_s + 0.5 * delay_step_s, delay_step_s)
        scans = [_fit_at(problem, d, x0, scale, substeps) for d in grid]
        best = int(np.argmin([s.cost for s in scans]))
        params, found_delay, res, jac = _joint_fit(problem, scans[best].x * scale, scale, grid[best],
                                                              delay_max_s, substeps)
    n, p = len(res), len(params) + (1 if delay_max_s is not None else 0)
    s2 = float(res @ res) / max(n - p, 1) * autocorrelation_factor(res)
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    model_cov = model_dof = None
    if jackknife_blocks is not None:
        model_cov = jackknife_covariance(jac, res, excitation_blocks(np.ones(n), jackknife_blocks))
        model_dof = jackknife_blocks - 1
    est = estimates(HEAVE_PARAMETERS, params[:4], np.eye(4, jac.shape[1]), cov, n - p, level, model_cov, model_dof)
    if delay_max_s is not None:
        est["delay_s"] = estimates(["delay_s"], [found_delay], np.eye(1, jac.shape[1], jac.shape[1] - 1), cov,
                                    n - p, level, model_cov, model_dof)["delay_s"]
    used = np.concatenate([np.arange(a, b) for a, b in problem.runs])
    return AxisFit("heave", est, math.sqrt(float(res @ res) / n), n, problem.t[used], problem.z[used],
                   problem.z[used] + res)


def _joint_fit(problem, params, scale, delay_s, delay_max_s, substeps):
    """All parameters and the delay (bounded to 0..delay_max_s) from ``params`` at ``delay_s``: (params,
    delay [s], residual, jacobian in physical units with the delay's column last)."""
    delay_scale = max(delay_max_s, 1e-3)
    x0 = np.append(params / scale, delay_s / delay_scale)
    lower = np.full(len(x0), -np.inf)
    upper = np.full(len(x0), np.inf)
    lower[-1], upper[-1] = 0.0, delay_max_s / delay_scale
    x0[-1] = min(max(x0[-1], lower[-1]), upper[-1])

    def residual(x):
        return problem.residual(x[:-1] * scale, problem.force(x[-1] * delay_scale), substeps)

    sol = optimize.least_squares(residual, x0, bounds=(lower, upper), x_scale="jac", method="trf",
                                 diff_step=np.append(np.full(len(x0) - 1, 1e-6), 1e-3))
    jac = sol.jac / np.append(scale, delay_scale)
    return sol.x[:-1] * scale, float(sol.x[-1] * delay_scale), sol.fun, jac
