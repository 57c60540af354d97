"""``brov2-analyze identify``: fly the identification schedule in the in-process loop (or read a log),
fit, and write ``identified.yaml`` (vehicle-file shape, confidence intervals as comments),
``identify_report.md``, ``identify_fit.png`` and the flight's log CSV into one folder.
"""
import math
import os

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.identify import model as idmodel
from brov2_hybrid.identify.disturbed import FlightDisturbed
from brov2_hybrid.identify.flight import fly_schedule
from brov2_hybrid.identify.schedule import build_schedule, load_schedule_settings
from brov2_hybrid.tick_log.logfile import read_log
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

PARAMETERS = (("roll", "inertia_kg_m2", 3, "kg m^2"), ("pitch", "inertia_kg_m2", 4, "kg m^2"),
              ("yaw", "inertia_kg_m2", 5, "kg m^2"), ("heave", "mass_kg", 2, "kg"),
              ("roll", "linear_drag", 3, "N m s"), ("pitch", "linear_drag", 4, "N m s"),
              ("yaw", "linear_drag", 5, "N m s"), ("heave", "linear_drag", 2, "N s/m"),
              ("roll", "quadratic_drag", 3, "N m s^2"), ("pitch", "quadratic_drag", 4, "N m s^2"),
              ("yaw", "quadratic_drag", 5, "N m s^2"), ("heave", "quadratic_drag", 2, "N s^2/m^2"))


def flight_room(log):
    """What the flight needed: duration [s], depth range [m], largest |roll|, |pitch| [deg], heading span [turns]."""
    t = np.asarray(log["time_s"], dtype=float)
    depth = np.asarray(log["depth_m"], dtype=float)
    yaw = np.asarray(log["yaw_rad"], dtype=float)
    yaw = np.unwrap(yaw[np.isfinite(yaw)])
    return {"duration_s": float(t[-1] - t[0]), "depth_min_m": float(np.nanmin(depth)),
            "depth_max_m": float(np.nanmax(depth)),
            "max_abs_roll_deg": float(np.degrees(np.nanmax(np.abs(log["roll_rad"])))),
            "max_abs_pitch_deg": float(np.degrees(np.nanmax(np.abs(log["pitch_rad"])))),
            "heading_span_turns": float((yaw.max() - yaw.min()) / (2.0 * math.pi))}


def true_values(body):
    """{(axis, parameter): value} of a known body (a plant's), for the report's comparison."""
    total = body.total_mass
    out = {}
    for axis, name, k, _ in PARAMETERS:
        out[(axis, name)] = total[k] if name in ("inertia_kg_m2", "mass_kg") else getattr(body, name)[k]
    out[("heave", "net_weight_n")] = body.weight_n - body.buoyancy_n
    return out


def write_report(path, fitted, room, source, truth=None):
    """identify_report.md: the fitted values with intervals (and the truth, when known), residuals, room."""
    a = fitted.axes
    level = a["heave"].estimates["mass_kg"].level
    heave_delay = a["heave"].estimates.get("delay_s")
    lines = ["# Identification", "",
             "Source: %s. Delay from command to thrust found: %.3f s%s." % (
                 source, fitted.delay_s, "; from heave force to the logged depth: %s s" % idmodel.format_estimate(
                     heave_delay) if heave_delay is not None else ""),
             "", "Thrust between the motor PWM samples: %s." % (
                 "the RC override sent, through the %s firmware's mixer and the thrust table" % fitted.firmware
                 if fitted.firmware else "u * tau_max (no firmware chain: fit.firmware, params/identify.yaml)"),
             "", "Each interval is the wider of the measurement-noise interval and the jackknife's over stretches of "
             "the flight (model error that differs along it); an error the same all along is in neither "
             "(docs/identification.md \"What the intervals are\")%s." % (
                 "; the thrust model's own error, spanned by each interval (fit.thrust_model_spread): %s"
                 % fitted.thrust_model_spread if fitted.thrust_model_spread else ""),
             "", "| axis | parameter | fitted | %g %% CI half-width | unit |%s" % (
                 100 * level, " true | error % |" if truth else ""),
             "|---|---|---|---|---|%s" % ("---|---|" if truth else "")]
    rows = list(PARAMETERS) + [("heave", "net_weight_n", None, "N (W - B)")]
    for axis, name, _, unit in rows:
        if axis not in a:
            lines.append("| %s | %s | not flown (passive DOF): the prior's | | %s |%s" % (axis, name, unit,
                                                                                     " | |" if truth else ""))
            continue
        e = a[axis].estimates[name]
        line = "| %s | %s | %.4g | %.2g | %s |" % (axis, name, e.value, e.half_width, unit)
        if truth:
            true = truth[(axis, name)]
            err = "%.1f" % (100.0 * (e.value - true) / true) if abs(true) > 1e-9 else "-"
            line += " %.4g | %s |" % (true, err)
        lines.append(line)
    lines += ["", "Restoring lever W r_G - B r_B [N m]: " + ", ".join(
        "%s %s" % (c, idmodel.format_estimate(fitted.lever_nm[c])) for c in "xyz"), "",
        "Rows left out as disturbed (the vehicle did not get the logged command: %s); share of each axis's "
        "excitation: %s; rows left out because the response contradicted the command: %s." % (
            fitted.disturbance.describe() if fitted.disturbance is not None else "not checked",
            ", ".join("%s %.0f %%" % (n, 100.0 * v) for n, v in sorted((fitted.disturbed_share or {}).items())),
            ", ".join("%s %d" % (n, a[n].rejected) for n in idmodel.IDENTIFIED if n in a and n != "heave")), "",
        "Residual RMS: " + ", ".join("%s %.3g %s" % (n, a[n].residual_rms, "m depth" if n == "heave" else
                                                     "rad/s per row") for n in idmodel.IDENTIFIED if n in a), "",
        "Flight: %.1f s; depth %.2f..%.2f m; largest |roll| %.1f deg, |pitch| %.1f deg; heading span %.2f turns."
        % (room["duration_s"], room["depth_min_m"], room["depth_max_m"], room["max_abs_roll_deg"],
           room["max_abs_pitch_deg"], room["heading_span_turns"]), ""]
    with open(path, "w") as handle:
        handle.write("\n".join(lines))
    return path


def plot_fit(path, fitted):
    """identify_fit.png: per attitude axis the measured and modelled rate change per row, heave depth."""
    from brov2_hybrid.figures import plt, save_figure
    fig, axes = plt.subplots(4, 1, figsize=(10, 10))
    for ax, name in zip(axes, idmodel.IDENTIFIED[1:] + idmodel.IDENTIFIED[:1]):
        if name not in fitted.axes:
            ax.set_title("%s: not flown (passive)" % name, fontsize=9)
            continue
        f = fitted.axes[name]
        ax.plot(f.t_s, f.measured, lw=0.8, label="measured")
        ax.plot(f.t_s, f.modelled, lw=0.8, label="fitted model")
        ax.set_ylabel("%s\n%s" % (name, "depth [m]" if name == "heave" else "d rate [rad/s]"))
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1].set_xlabel("time [s]")
    return save_figure(fig, path)


def _write_outputs(out_dir, fitted, prior, log, source, truth_body=None, name="identified"):
    body = idmodel.identified_body(fitted, prior.body)
    header = ["Identified by brov2-analyze identify from %s; prior vehicle file %s." % (source, prior.source),
              "Fitted values carry their confidence intervals as comments; everything else is the prior's."]
    vehicle_path = idmodel.write_vehicle_file(prior, body, os.path.join(out_dir, "identified.yaml"), name,
                                              idmodel.body_comments(fitted), header)
    room = flight_room(log)
    report = write_report(os.path.join(out_dir, "identify_report.md"), fitted, room, source,
                          true_values(truth_body) if truth_body is not None else None)
    figure = plot_fit(os.path.join(out_dir, "identify_fit.png"), fitted)
    return {"vehicle_file": vehicle_path, "report": report, "figure": figure, "room": room, "model": fitted,
            "body": body}


def identify_plant(plant, out_dir, prior=None, loop_settings=None, sim_options=None):
    """Fly the schedule on the vehicle file ``plant`` (name or path), the attitude held by the law tuned
    for ``prior`` (default: ``plant`` itself), fit, and write everything into ``out_dir``.

    Returns a dict: vehicle_file, report, figure, log, room, model, body."""
    os.makedirs(out_dir, exist_ok=True)
    plant_vehicle = load_vehicle(plant)
    prior_vehicle = load_vehicle(prior) if prior else plant_vehicle
    if not (np.array_equal(plant_vehicle.T, prior_vehicle.T) and plant_vehicle.frame.frame_config
            == prior_vehicle.frame.frame_config):
        raise Brov2Error("identify: the plant %s and the prior %s have different thrusters or ArduSub frames; "
                         "the prior (--vehicle) must be the same vehicle as the plant, only its model may differ"
                         % (plant_vehicle.source, prior_vehicle.source))
    schedule = build_schedule(load_schedule_settings(), skip=prior_vehicle.passive_dof_names)
    log, result, _ = fly_schedule(schedule, plant_vehicle, prior_vehicle, loop_settings, sim_options,
                                  log_path=os.path.join(out_dir, "identify_flight.csv"))
    fitted = idmodel.identify_log(log, prior_vehicle)
    out = _write_outputs(out_dir, fitted, prior_vehicle, log, "a flight on %s" % plant_vehicle.source,
                         plant_vehicle.body, name="%s_identified" % plant_vehicle.name)
    out["log"] = result.log_path
    return out


def write_refusal(path, source, reason, window_s=None):
    """identify_report.md of a flight whose fit was refused (:class:`~brov2_hybrid.identify.disturbed.FlightDisturbed`),
    with the schedule's ``window_s`` (start, end) [s, the log's time_s] when known."""
    lines = ["# Identification", "", "Source: %s." % source, ""]
    if window_s is not None:
        lines += ["Schedule window: %r .. %r s (the log's time_s)." % (float(window_s[0]), float(window_s[1])), ""]
    with open(path, "w") as handle:
        handle.write("\n".join(lines + ["No fit: %s" % reason, ""]))
    return path


def identify_log_file(log_csv, out_dir, vehicle=None, window_s=None):
    """Fit the logger CSV ``log_csv`` of an identification flight flown with ``vehicle`` (name or path);
    write everything into ``out_dir``. ``window_s``: (start, end) of the schedule [s, the log's time_s],
    when known. Returns the dict of :func:`identify_plant` (log: the CSV). A flight too disturbed to
    fit raises :class:`~brov2_hybrid.identify.disturbed.FlightDisturbed` after writing the report
    that says so (and no identified.yaml)."""
    os.makedirs(out_dir, exist_ok=True)
    prior = load_vehicle(vehicle)
    log = read_log(log_csv)
    try:
        fitted = idmodel.identify_log(log, prior, window_s=window_s)
    except FlightDisturbed as exc:
        write_refusal(os.path.join(out_dir, "identify_report.md"), log_csv, exc, window_s)
        raise
    out = _write_outputs(out_dir, fitted, prior, log, log_csv, name="%s_identified" % prior.name)
    out["log"] = log_csv
    return out
