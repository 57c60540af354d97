"""What a vehicle can do (``brov2-analyze design --vehicle FILE``): gains, margins and headroom per omega_d.

From a vehicle file (the bundled Heavy, or one ``brov2-analyze identify`` wrote), per omega_d
of the ``omega_limit`` grid (or ``--omega-d``):

* the gains of every axis (k_p, k_d + delta k_d: the one-knob design, :mod:`brov2_hybrid.control.gains`);
* the Eq. 22 loop's delay margin (the smallest over roll, pitch and yaw,
  :func:`~brov2_hybrid.analysis.omega_limit.margins_for`) and, per operating condition of
  ``omega_limit``, whether it is at least ``min_delay_margin_ratio`` times the condition's
  effective delay; the highest omega_d that passes under the design condition (margins only:
  ``brov2-analyze omega-limit`` also flies it);
* the torque a step asks for: k_p times the step of ``design`` (roll, pitch, yaw) over the
  axis's tau_max -- above 1 the command saturates at the step;
* the thrust headroom left for translation: with the yaw step's first torque (clipped to
  tau_max) on the thrusters, the largest share s of a full surge, sway and heave command
  whose Eq. 9 forces still lie within every thruster's table limits (:func:`translation_headroom`).

Angles rad inside, deg in names that say so.
"""
import math
import os

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.analysis import lti
from brov2_hybrid.analysis.context import AXES, LINEAR, write_csv
from brov2_hybrid.analysis.omega_limit import effective_delay_s, load_omega_limit_settings, margins_for
from brov2_hybrid.params import Section, load_yaml


def load_design_steps_rad(path=None):
    """``design.step_deg`` of ``params/analysis.yaml``: the step per axis (roll, pitch, yaw) [rad]."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, "design")
    return tuple(math.radians(v) for v in s.positive_vector("step_deg", 3))


def translation_headroom(vehicle, tau_attitude_nm, dof, bisections=40):
    """Largest s in [0, 1] with the Eq. 9 forces of (s tau_max[dof] on ``dof``, ``tau_attitude_nm``
    (3,) on roll, pitch, yaw) within every thruster's forward and reverse limit (0 if even s = 0 is not)."""
    table = vehicle.table

    def fits(s):
        tau = np.zeros(6)
        tau[3:] = tau_attitude_nm
        tau[dof] = s * vehicle.tau_max[dof]
        m = vehicle.T_pinv @ tau
        return bool(np.all(m <= table.max_forward_n) and np.all(m >= -table.max_reverse_n))
    if not fits(0.0):
        return 0.0
    if fits(1.0):
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(bisections):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def design_rows(vehicle, controller_params, omegas, steps_rad, settings, control_rate_hz, sim_options):
    """One row per omega_d: gains per axis, delay margin, per-condition margin verdicts, the steps'
    torque ratios and the translation headroom per linear DOF."""
    rows = []
    for w in omegas:
        c = lti.controller_for(w, vehicle, controller_params)
        g, m = c.gains, margins_for(c)
        row = {"omega_d": w, "delay_margin_s": m["delay_margin_s"], "margin_axis": m["axis"]}
        for k, a in enumerate(AXES):
            row["kp_%s" % a], row["kd_total_%s" % a] = float(g.kp[k]), float(g.kd_total[k])
            row["step_torque_ratio_%s" % a] = float(g.kp[k] * steps_rad[k] / vehicle.tau_max[3 + k])
        for cond in settings.conditions:
            t_eff = effective_delay_s(cond, control_rate_hz, sim_options)
            row["margin_ok_%s" % cond.name] = bool(m["delay_margin_s"] >= settings.min_delay_margin_ratio * t_eff)
        yaw_torque = np.array([0.0, 0.0, min(g.kp[2] * steps_rad[2], vehicle.tau_max[5])])
        for j, d in enumerate(LINEAR):
            row["headroom_%s" % d] = translation_headroom(vehicle, yaw_torque, j)
        rows.append(row)
    return rows


def design_experiment(ctx, omegas=None):
    """``design.csv`` for the context's vehicle; the highest omega_d whose margin passes per condition."""
    from brov2_hybrid.sim.config import load_sim_options
    settings = load_omega_limit_settings()
    omegas = tuple(omegas or settings.omega_d_rad_s)
    rows = design_rows(ctx.vehicle, ctx.controller_params, omegas, load_design_steps_rad(), settings,
                       ctx.loop.control_rate_hz, load_sim_options())
    columns = list(rows[0])
    write_csv(ctx.path("design.csv"), columns, [[r[k] for k in columns] for r in rows])
    highest = {}
    for cond in settings.conditions:
        ok = [r["omega_d"] for r in rows if r["margin_ok_%s" % cond.name]]
        highest[cond.name] = max(ok) if ok else None
    return {"vehicle": ctx.vehicle.name, "source": os.path.relpath(ctx.vehicle.source), "rows": rows,
            "highest_by_margin": highest, "design_condition": settings.design_condition, "files": ["design.csv"]}


def console_lines(summary):
    """The table for the terminal."""
    lines = ["  vehicle %s (%s)" % (summary["vehicle"], summary["source"]),
             "  omega_d | kp r/p/y [N m/rad] | kd+dkd r/p/y [N m s/rad] | delay margin | step torque / tau_max r/p/y "
             "| translation headroom surge/sway/heave"]
    for r in summary["rows"]:
        lines.append("  %7g | %s | %s | %5.0f ms (%s) | %s | %s" % (
            r["omega_d"], " / ".join("%.2f" % r["kp_%s" % a] for a in AXES),
            " / ".join("%.2f" % r["kd_total_%s" % a] for a in AXES), 1e3 * r["delay_margin_s"], r["margin_axis"],
            " / ".join("%.2f" % r["step_torque_ratio_%s" % a] for a in AXES),
            " / ".join("%.0f %%" % (100 * r["headroom_%s" % d]) for d in LINEAR)))
    for name, w in summary["highest_by_margin"].items():
        lines.append("  %s: highest omega_d with the delay margin required%s: %s rad/s" % (
            name, " (the design condition; `brov2-analyze omega-limit` flies it)" if name == summary["design_condition"]
            else "", "none" if w is None else "%g" % w))
    return "\n".join(lines)
