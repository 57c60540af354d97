"""The head-to-head's figures: one row per flight (:func:`flight_row`), medians and spread per point
(:func:`points`) and the fronts (:func:`pareto`).

A flight's row: IAE per axis [deg s] of the desired attitude against the physics' true attitude
(``iae_true_*``) and against ArduSub's own estimate (``iae_est_*``, what a logger on the vehicle
records), the motor effort [s] (time integral of sum_i |PWM_i - 1500| / 400 over the motor outputs:
:func:`~brov2_hybrid.analysis.ardusub_experiment.motor_effort_s`), the electric energy the thrusters
drew [kJ] (:func:`~brov2_hybrid.analysis.ardusub_experiment.electric_energy_kj`, the vehicle's T200 bench
table) and the depth error [m] of the true
depth against the depth both pilots are asked to hold (:func:`~.inputs.depth_reference_m`): RMS,
largest and at the end.
"""
import math

import numpy as np

from brov2_hybrid.analysis import metrics
from brov2_hybrid.analysis.ardusub_experiment import electric_energy_kj, motor_effort_s
from brov2_hybrid.analysis.context import AXES
from brov2_hybrid.head_to_head.inputs import depth_reference_m
from brov2_hybrid.link import ardusub
from brov2_hybrid.physics.kinematics import wrap_angle

#: What identifies a flight, then its figures: the columns of fronts.csv, in order.
KEY_COLUMNS = ("pilot", "placement", "setting", "pilot_link_ms", "dive", "trial")
FIGURE_COLUMNS = (("effort_s", "energy_kj") + tuple("iae_true_%s" % a for a in AXES) + tuple("iae_est_%s" % a for a in AXES)
                  + ("iae_true_sum", "iae_est_sum", "depth_rms_m", "depth_max_m", "depth_end_m"))
COLUMNS = KEY_COLUMNS + FIGURE_COLUMNS + ("attempts",)
#: A point: one setting of one pilot in one placement, behind one pilot link, on one dive.
POINT_COLUMNS = KEY_COLUMNS[:5]


def flight_row(log, truth, start_depth_m, depth_rate_m_s, power=None):
    """The figures (:data:`FIGURE_COLUMNS`) of one flight: ``log`` and ``truth`` (n, 3) [rad] as
    :func:`~brov2_hybrid.analysis.ardusub_fly.fly` returns them; the depth reference starts at
    ``start_depth_m`` [m] (the true depth on the first row) and follows the heave stick at ``depth_rate_m_s``;
    ``power``: the thrusters' bench table (pwm_us, power_w) for the electric energy (None: NaN)."""
    t = np.asarray(log["time_s"], dtype=float)
    row = {}
    for k, axis in enumerate(AXES):
        desired = np.asarray(log["%s_d_rad" % axis], dtype=float)
        est = np.degrees(wrap_angle(desired - np.asarray(log["%s_rad" % axis], dtype=float)))
        true = np.degrees(wrap_angle(desired - truth[:, k]))
        ok = np.isfinite(true)
        row["iae_est_%s" % axis] = metrics.iae(t, est)
        row["iae_true_%s" % axis] = metrics.iae(t[ok], true[ok]) if np.count_nonzero(ok) > 1 else math.nan
    row["iae_true_sum"] = sum(row["iae_true_%s" % a] for a in AXES)
    row["iae_est_sum"] = sum(row["iae_est_%s" % a] for a in AXES)
    pwm = np.column_stack([log["pwm%d_us" % i] for i in range(1, ardusub.SERVO_OUTPUTS + 1)])
    row["effort_s"] = motor_effort_s(t, pwm)
    row["energy_kj"] = electric_energy_kj(t, pwm, *power) if power is not None else math.nan
    error = np.asarray(log["depth_m"], dtype=float) - depth_reference_m(t, log["heave_cmd"], start_depth_m,
                                                                        depth_rate_m_s)
    row["depth_rms_m"] = float(np.sqrt(np.mean(error ** 2)))
    row["depth_max_m"] = float(np.max(np.abs(error)))
    row["depth_end_m"] = float(error[-1])
    return row


def points(rows):
    """Medians and spread per point: one dict per (pilot, placement, setting, pilot link, dive), in first-seen
    order, with ``flights`` and, for every figure, ``<figure>`` (the median), ``<figure>_min`` and
    ``<figure>_max`` over its flights."""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[c] for c in POINT_COLUMNS), []).append(r)
    out = []
    for key, flights in groups.items():
        p = dict(zip(POINT_COLUMNS, key))
        p["flights"] = len(flights)
        for c in FIGURE_COLUMNS:
            v = np.array([f[c] for f in flights], dtype=float)
            p[c] = float(np.median(v))
            p[c + "_min"], p[c + "_max"] = float(np.min(v)), float(np.max(v))
        out.append(p)
    return out


def pareto(items, cost, effort):
    """The items no other item beats on both ``cost(item)`` and ``effort(item)`` (lower is better;
    one at least as good on both and better on one beats it), sorted by effort."""
    front = []
    for a in items:
        ca, ea = cost(a), effort(a)
        beaten = any((cost(b) <= ca and effort(b) <= ea) and (cost(b) < ca or effort(b) < ea) for b in items)
        if not beaten:
            front.append(a)
    return sorted(front, key=effort)


def best_at_effort(points_of_dive, pilot, max_effort_s=math.inf, placement=None, pilot_link_ms=None,
                   budget="effort_s"):
    """The point of ``pilot`` (and ``placement``, and behind ``pilot_link_ms``) with the least median
    summed true IAE among those whose median ``budget`` (the motor effort, or ``energy_kj``) is at most
    ``max_effort_s``, or None."""
    fit = [p for p in points_of_dive if p["pilot"] == pilot and p[budget] <= max_effort_s
           and (placement is None or p["placement"] == placement)
           and (pilot_link_ms is None or abs(p["pilot_link_ms"] - pilot_link_ms) < 1e-6)]
    return min(fit, key=lambda p: p["iae_true_sum"]) if fit else None
