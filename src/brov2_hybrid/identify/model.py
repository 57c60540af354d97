"""From an identification log to a vehicle file: the fits of :mod:`brov2_hybrid.identify.fit` combined
into one :class:`IdentifiedModel` and written in the ``params/vehicles/<name>.yaml`` shape.

What the flight determines and what it takes from the vehicle file it starts from (the
"prior", e.g. the bundled BlueROV2 Heavy with the user's thruster layout):

* identified: effective inertia (rigid + added) and linear + quadratic damping of roll,
  pitch, yaw; heave effective mass and damping; net buoyancy B - W; the restoring lever
  W r_G - B r_B (roll and pitch each see its z component: their inverse-variance mean is used);
* from the prior: mass and weight (weigh the vehicle), r_CG, thrusters and thrust table,
  surge/sway, and the split of each effective inertia into rigid and added parts (the
  prior's ratio; only the sum is observable). B = W + (B - W); r_CB from the lever:
  r_B = (W r_G - lever) / B.

Body FRD, NED, SI units.
"""
import math
import os
import re
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, DOF_NAMES
from brov2_hybrid.errors import Brov2Error, InputDataError
from brov2_hybrid.identify import fit, heave_fit, output_chain
from brov2_hybrid.identify.disturbed import DisturbanceSettings, check_share, find_disturbed_rows
from brov2_hybrid.params import Section, load_yaml

#: The DOFs the flight identifies: heave, then roll, pitch, yaw.
IDENTIFIED = (DOF_NAMES[2],) + ANGULAR_DOF_NAMES


@dataclass(frozen=True)
class FitSettings:
    """The ``fit`` section of ``params/identify.yaml``."""

    confidence: float
    delay_max_s: float
    delay_step_s: float
    heave_substeps: int
    heave_lead_s: float
    #: the heave's force-to-depth delay is fitted in 0..heave_delay_max_s (scanned on heave_delay_step_s first)
    heave_delay_max_s: float
    heave_delay_step_s: float
    #: the intervals also hold the delete-a-block jackknife's over this many stretches (model error)
    jackknife_blocks: int = None
    #: rows left out and the refusal limit (:mod:`brov2_hybrid.identify.disturbed`); None: the file's
    disturbance: DisturbanceSettings = None
    #: the firmware whose chain rebuilds the wrench (:mod:`brov2_hybrid.identify.output_chain`)
    firmware: str = output_chain.AUTO
    firmware_detection: output_chain.FirmwareDetection = None
    #: with ``firmware`` command on a log whose thrust between the sparse motor PWM samples is u * tau_max:
    #: each interval also spans the fit through the firmware chain the log's PWMs tell (:func:`identify_log`)
    thrust_model_spread: bool = False


def load_fit_settings(path=None):
    """:class:`FitSettings` from ``path`` (default ``params/identify.yaml``: sections fit and disturbance)."""
    path = path or paths.params_path("identify.yaml")
    data = load_yaml(path)
    s = Section(data, path, "fit")
    d = Section(data, path, "disturbance")
    disturbance = DisturbanceSettings(
        gap_factor=d.number("gap_factor", 1.0, strict_min=True), margin_s=d.number("margin_s", 0.0),
        rc_neutral_us=d.positive("rc_neutral_us"), rc_tolerance_us=d.number("rc_tolerance_us", 0.0), u_neutral_tolerance=d.number("u_neutral_tolerance", 0.0),
        excitation_fraction=d.number("excitation_fraction", 0.0, 1.0),
        max_disturbed_share=d.number("max_disturbed_share", 0.0, 1.0),
        max_disturbed_share_heave=d.number("max_disturbed_share_heave", 0.0, 1.0), outlier_sigma=d.positive("outlier_sigma"))
    f = s.sub("firmware_detection")
    detection = output_chain.FirmwareDetection(
        tolerance_us=f.positive("tolerance_us"), votes=f.integer("votes", 1, 1000), window_s=f.positive("window_s"),
        grace_s=f.number("grace_s", 0.0))
    return FitSettings(confidence=s.number("confidence", 0.5, 0.999), delay_max_s=s.number("delay_max_s", 0.0),
                       delay_step_s=s.positive("delay_step_s"), heave_substeps=s.integer("heave_substeps", 1, 100),
                       heave_lead_s=s.number("heave_lead_s", 0.0),
                       heave_delay_max_s=s.number("heave_delay_max_s", 0.0),
                       heave_delay_step_s=s.positive("heave_delay_step_s"),
                       jackknife_blocks=s.integer("jackknife_blocks", 3, 1000), disturbance=disturbance,
                       firmware=s.choice("firmware", output_chain.CHOICES), firmware_detection=detection,
                       thrust_model_spread=s.boolean("thrust_model_spread"))


@dataclass
class IdentifiedModel:
    """The fits of one flight: ``axes`` {'roll', 'pitch', 'yaw', 'heave': :class:`~brov2_hybrid.identify.fit.AxisFit`},
    the command-to-thrust ``delay_s`` found, and the combined restoring lever terms
    ``lever_nm`` {'x', 'y', 'z': :class:`~brov2_hybrid.identify.fit.Estimate`} [N m]; ``disturbed_share``
    {axis: share (0..1) of its excitation rows left out as disturbed}, ``disturbance`` the
    :class:`~brov2_hybrid.identify.disturbed.Disturbance` found."""

    axes: dict
    delay_s: float
    lever_nm: dict
    disturbed_share: dict = None
    disturbance: object = None
    #: the firmware whose chain rebuilt the wrench from the RC override sent; None: u * tau_max
    #: (or the log's own motor PWMs, where they are as dense as the command)
    firmware: str = None
    #: what the intervals span besides the fit's own: "the <firmware> chain's fit", or why not (None: off)
    thrust_model_spread: str = None

    def effective_inertia(self):
        """(6,) diagonal of M + M_A with NaN where not identified (surge, sway, passive axes)."""
        values = [math.nan, math.nan, self.axes["heave"].estimates["mass_kg"].value]
        return np.array(values + [self.axes[a].estimates["inertia_kg_m2"].value if a in self.axes else math.nan
                                  for a in ANGULAR_DOF_NAMES])


def _combined(estimates):
    """Inverse-variance weighted mean of :class:`~brov2_hybrid.identify.fit.Estimate` (one or more)."""
    weights = [1.0 / max(e.half_width, 1e-12) ** 2 for e in estimates]
    value = sum(w * e.value for w, e in zip(weights, estimates)) / sum(weights)
    return fit.Estimate(value, 1.0 / math.sqrt(sum(weights)), estimates[0].level)


def prior_estimate(value, level):
    """A value kept from the prior (not identified): an Estimate whose half-width is NaN."""
    return fit.Estimate(float(value), math.nan, level)


def identify_log(log, vehicle, fit_settings=None, rest_s=None, window_s=None):
    """:func:`identify_once`, and with ``fit.thrust_model_spread`` (``firmware`` command, on a log whose
    thrust between the motor PWM samples is taken as u * tau_max) its intervals widened to span the
    fit through the firmware chain the log's PWM samples tell: each half-width becomes
    sqrt(half-width^2 + (value - chain's value)^2). The two thrust models differ by what neither interval
    sees, an error the same all along the flight (u * tau_max leaves out the whole-microsecond steps of the
    RC override and motor PWMs; the chain takes the log's row timing as the vehicle's); the spread
    between them is that error's size. When the log cannot tell its firmware, or the chain's fit
    fails, the intervals stay the fit's own and ``thrust_model_spread`` says why."""
    settings = fit_settings or load_fit_settings()
    fitted = identify_once(log, vehicle, settings, rest_s, window_s)
    if not settings.thrust_model_spread or fitted.firmware is not None or not fit.thrust_from_command(log, vehicle):
        return fitted
    detection = settings.firmware_detection or load_fit_settings().firmware_detection
    seen = output_chain.firmware_from_log(log, vehicle, detection)
    if seen is None:
        return replace(fitted, thrust_model_spread="none: the log's motor PWM samples tell no firmware")
    try:
        chain = identify_once(log, vehicle, replace(settings, firmware=seen), rest_s, window_s)
    except Brov2Error as e:
        return replace(fitted, thrust_model_spread="none: the fit through the %s chain failed: %s" % (seen, e))
    axes = {name: replace(f, estimates=_spread(f.estimates, chain.axes[name].estimates)) for name, f in fitted.axes.items()}
    return replace(fitted, axes=axes, lever_nm=_spread(fitted.lever_nm, chain.lever_nm),
                   thrust_model_spread="the %s chain's fit" % seen)


def _spread(estimates, other):
    """{name: Estimate} of ``estimates`` with each half-width widened in quadrature by the distance to
    ``other``'s value of the same name (a prior's NaN half-width stays NaN)."""
    out = {}
    for name, e in estimates.items():
        o = other.get(name)
        wide = e.half_width if o is None or not math.isfinite(e.half_width) else math.hypot(e.half_width, e.value - o.value)
        out[name] = fit.Estimate(e.value, wide, e.level)
    return out


def identify_once(log, vehicle, fit_settings=None, rest_s=None, window_s=None):
    """Fit a log (dict of columns, :func:`~brov2_hybrid.tick_log.logfile.read_log` layout) of the
    identification flight flown with ``vehicle`` (the prior: thrusters, table, starting values).

    Attitude axes the vehicle cannot actuate (``passive_dofs``) are not flown and not
    fitted: they keep the prior's values. ``rest_s``: the schedule's rest after the heave
    block (default ``params/identify.yaml``). ``window_s``: (start, end) [s, the log's time_s] of the
    schedule when known (identify_flight knows it): rows outside are not fitted. Rows where the
    vehicle did not get the logged command (:mod:`brov2_hybrid.identify.disturbed`) are left
    out; an axis with too much of its excitation disturbed raises
    :class:`~brov2_hybrid.identify.disturbed.FlightDisturbed`. Returns an :class:`IdentifiedModel`.
    """
    from brov2_hybrid.identify.schedule import load_schedule_settings
    if 2 in vehicle.passive_dofs:
        raise InputDataError("identify: %s cannot actuate heave; the flight needs it" % vehicle.source)
    settings = fit_settings or load_fit_settings()
    dist_settings = settings.disturbance or load_fit_settings().disturbance
    rest = load_schedule_settings().rest_s if rest_s is None else rest_s
    flown = [k for k in range(3) if 3 + k not in vehicle.passive_dofs]
    disturbance = find_disturbed_rows(log, dist_settings, vehicle.rc_map)
    # left out of the attitude fits; the heave fit simulates through them on the command last sent
    sent = np.zeros(len(disturbance.rows), bool)
    for cause in ("command not formed (no u)", "neutral override", "command sent late"):
        sent |= disturbance.causes.get(cause, False)
    firmware = log_firmware(log, vehicle, settings)
    wrench = fit.applied_wrench(log, vehicle, sent, firmware)
    inside = np.ones(len(disturbance.rows), bool)
    if window_s is not None:
        t = np.asarray(log["time_s"], dtype=float)
        inside = (t >= window_s[0]) & (t <= window_s[1])
    keep = inside & ~disturbance.rows
    share = {}
    for k in flown:     # refuse before fitting anything: a disturbed flight gives no file at all
        torque = np.abs(np.where(inside & np.isfinite(wrench[:, 3 + k]), wrench[:, 3 + k], 0.0))
        excitation = torque >= dist_settings.excitation_fraction * max(float(np.max(torque)), 1e-9)
        share[ANGULAR_DOF_NAMES[k]] = check_share(ANGULAR_DOF_NAMES[k], excitation, disturbance,
                                                  dist_settings.max_disturbed_share)
    heave_rows = heave_fit.heave_window(log, rest, settings.heave_lead_s)
    share["heave"] = check_share("heave", heave_rows & inside & (np.asarray(log["heave_cmd"], dtype=float) != 0.0),
                                 disturbance, dist_settings.max_disturbed_share_heave)
    delay = fit.find_delay(log, wrench, settings.delay_max_s, settings.delay_step_s, flown, keep)
    level = settings.confidence
    axes = {ANGULAR_DOF_NAMES[k]: fit.fit_attitude_axis(log, wrench, k, delay, level, keep, dist_settings.outlier_sigma,
                                                       dist_settings.margin_s, settings.jackknife_blocks)
            for k in flown}
    b = vehicle.body
    prior = (b.total_mass[2], b.linear_drag[2], b.quadratic_drag[2], b.weight_n - b.buoyancy_n)
    axes["heave"] = heave_fit.fit_heave(log, wrench, delay, prior, rest, settings.heave_substeps, level,
                                        settings.heave_lead_s, keep, delay_max_s=settings.heave_delay_max_s,
                                        delay_step_s=settings.heave_delay_step_s,
                                        jackknife_blocks=settings.jackknife_blocks)
    prior_lever = b.weight_n * b.r_cg_m - b.buoyancy_n * b.r_cb_m
    found = {"x": [], "y": [], "z": []}
    for name, keys in (("roll", ("y", "z")), ("pitch", ("z", "x"))):
        if name in axes:
            for c in keys:
                found[c].append(axes[name].estimates["lever_%s_nm" % c])
    lever = {c: _combined(found[c]) if found[c] else prior_estimate(prior_lever[k], level) for k, c in enumerate("xyz")}
    return IdentifiedModel(axes, delay, lever, share, disturbance, firmware)


def log_firmware(log, vehicle, settings):
    """The firmware whose chain rebuilds the log's wrench (``settings.firmware``; ``auto``: told from the log),
    or None for u * tau_max (``command``, or ``auto`` on a log that cannot tell). A firmware set that the
    log's motor PWMs contradict raises InputDataError."""
    if settings.firmware == output_chain.COMMAND:
        return None
    detection = settings.firmware_detection or load_fit_settings().firmware_detection
    seen = output_chain.firmware_from_log(log, vehicle, detection)
    if settings.firmware == output_chain.AUTO:
        return seen
    if seen is not None and seen != settings.firmware:
        raise InputDataError("identify: fit.firmware is %r but the log's motor PWMs follow the %r firmware's mixer; "
                             "set fit.firmware to %s or auto (params/identify.yaml)" % (settings.firmware, seen, seen))
    return settings.firmware


def identified_body(model, prior_body):
    """The prior's :class:`~brov2_hybrid.vehicle.vehicle_file.BodyParams` with the identified values
    (see the module docstring for the split and what is kept)."""
    b = prior_body
    added, inertia = b.added_mass.copy(), b.inertia_kg_m2.copy()
    linear, quadratic = b.linear_drag.copy(), b.quadratic_drag.copy()
    for k, name in ((3, "roll"), (4, "pitch"), (5, "yaw")):
        if name not in model.axes:
            continue        # passive: the prior's
        e = model.axes[name].estimates
        total = e["inertia_kg_m2"].value
        share = b.added_mass[k] / b.total_mass[k]
        added[k], inertia[k - 3] = share * total, (1.0 - share) * total
        linear[k], quadratic[k] = max(e["linear_drag"].value, 0.0), max(e["quadratic_drag"].value, 0.0)
    h = model.axes["heave"].estimates
    added[2] = max(h["mass_kg"].value - b.mass_kg, 0.0)
    linear[2], quadratic[2] = max(h["linear_drag"].value, 0.0), max(h["quadratic_drag"].value, 0.0)
    buoyancy = b.weight_n - h["net_weight_n"].value
    lever = np.array([model.lever_nm[c].value for c in "xyz"])
    r_cb = (b.weight_n * b.r_cg_m - lever) / buoyancy
    return replace(b, inertia_kg_m2=inertia, added_mass=added, linear_drag=linear, quadratic_drag=quadratic,
                   buoyancy_n=float(buoyancy), r_cb_m=r_cb)


def cb_height_m(body):
    """Height [m] of the centre of buoyancy above the centre of gravity (z_G - z_B, FRD)."""
    return float(body.r_cg_m[2] - body.r_cb_m[2])


def format_estimate(e, digits=4):
    """``value +- half-width`` of an Estimate, or ``value (prior)`` for a value kept from the prior."""
    if math.isnan(e.half_width):
        return "%.*g (prior)" % (digits, e.value)
    return "%.*g +- %.*g" % (digits, e.value, 2, e.half_width)


def body_comments(model):
    """{body key: comment} stating each fitted value with its confidence interval."""
    a = model.axes
    level = "%g %%" % (100 * a["heave"].estimates["mass_kg"].level)
    flown = [n for n in IDENTIFIED if n in a]
    eff = ", ".join("%s %s" % (n, format_estimate(a[n].estimates["inertia_kg_m2"]))
                    for n in ANGULAR_DOF_NAMES if n in a)
    lin = ", ".join("%s %s" % (n, format_estimate(a[n].estimates["linear_drag"])) for n in flown)
    quad = ", ".join("%s %s" % (n, format_estimate(a[n].estimates["quadratic_drag"])) for n in flown)
    h = a["heave"].estimates
    return {
        "inertia_kg_m2": "identified effective I + M_A (%s CI): %s; split as the prior" % (level, eff),
        "added_mass": "heave effective mass m + Z_wdot identified %s kg (%s CI)"
                      % (format_estimate(h["mass_kg"]), level),
        "linear_drag": "identified (%s CI; negative fits written as 0): %s" % (level, lin),
        "quadratic_drag": "identified (%s CI): %s" % (level, quad),
        "buoyancy_n": "B = W - (W - B); identified B - W = %s N (%s CI)"
                      % (format_estimate(fit.Estimate(-h["net_weight_n"].value, h["net_weight_n"].half_width)), level),
        "r_cb_m": "from the restoring lever W r_G - B r_B = [%s] N m (%s CI)"
                  % (", ".join(format_estimate(model.lever_nm[c]) for c in "xyz"), level),
    }


def _flow(values):
    return "[" + ", ".join("%.6g" % v for v in values) + "]"


def write_vehicle_file(prior_vehicle, body, path, name, comments=None, header=None):
    """Write ``prior_vehicle``'s file with ``body``'s values (and ``comments`` {key: text}) to ``path``.

    The prior file's text is kept (thrusters, frame, RC map, comments elsewhere); the
    thrust table's CSV becomes an absolute path so the file works from any folder; the
    result is loaded back to check it. Returns the path.
    """
    with open(prior_vehicle.source) as handle:
        text = handle.read()
    comments = comments or {}
    values = {"mass_kg": "%.6g" % body.mass_kg, "weight_n": "%.6g" % body.weight_n,
              "buoyancy_n": "%.6g" % body.buoyancy_n, "r_cb_m": _flow(body.r_cb_m),
              "inertia_kg_m2": _flow(body.inertia_kg_m2), "added_mass": _flow(body.added_mass),
              "linear_drag": _flow(body.linear_drag), "quadratic_drag": _flow(body.quadratic_drag)}
    for key, value in values.items():
        note = ("  # " + comments[key]) if key in comments else ""
        text, count = re.subn(r"^(  %s:)[^\n]*$" % key, lambda m: "%s %s%s" % (m.group(1), value, note), text,
                              count=1, flags=re.M)
        if count != 1:
            raise Brov2Error("%s: no body key %r to write" % (prior_vehicle.source, key))
    text = re.sub(r"^name:[^\n]*$", "name: %s" % name, text, count=1, flags=re.M)
    text = re.sub(r"^(  csv_file:)[^\n]*$", lambda m: "%s %s" % (m.group(1), prior_vehicle.thrusters.csv_file),
                  text, count=1, flags=re.M)
    if header:
        text = "".join("# %s\n" % line for line in header) + text
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    load_vehicle(path)
    return path
