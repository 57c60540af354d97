"""The stored tuned settings of both sides: ArduSub's ``.parm`` files and the hybrid's YAML.

* ArduSub (``params/head_to_head/ardusub_tuned*.parm``): one setting per file, ``NAME VALUE`` per line
  (ArduPilot's .parm format, ``NAME,VALUE`` too), its label on a ``# setting:`` line and how it was
  found on a ``# status:`` line. Its controller always runs on board (placement ``ardusub``).
* The hybrid (``params/head_to_head/hybrid_tuned.yaml``): per placement (``tether``, ``realistic``,
  ``onboard``) the loop's telemetry rate [Hz] and delays [s], the pilot's link [s] and a list of settings, each a label
  and keywords of :meth:`~brov2_hybrid.control.law.HybridController.configure` (omega_d_rad_s, ...).

:func:`write_parm` and :func:`write_hybrid` are what ``--tune`` stores. Errors name the file and field.
"""
import glob
import inspect
import json
import math
import numbers
import os
import re
from dataclasses import dataclass

from brov2_hybrid import paths
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.params import CONTROLLER_RULES, Section, load_yaml

#: The folder of the stored settings, relative to the package root.
FOLDER = os.path.join("params", "head_to_head")
ARDUSUB_PATTERN = "ardusub_tuned*.parm"
HYBRID_FILE = "hybrid_tuned.yaml"
#: The hybrid's placements, in the order of the tables.
PLACEMENTS = ("tether", "realistic", "onboard")
#: The placements whose law runs on the vehicle: the pilot's input reaches the law over the link.
ON_VEHICLE = ("onboard",)
#: ArduSub's placement: its controller runs on board, on its own 400 Hz loop.
ARDUSUB_PLACEMENT = "ardusub"
_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,15}$")   # an ArduPilot parameter name (at most 16 characters)


@dataclass(frozen=True)
class ArduSubSetting:
    """One stored ArduSub setting: ``label``, ``status`` and ``params`` ((name, value), ...) in file order."""

    label: str
    status: str
    params: tuple
    path: str = ""


@dataclass(frozen=True)
class Placement:
    """Where the hybrid's law runs: its loop's telemetry rate [Hz] and delays [s], and ``pilot_link_s``:
    how late the pilot's input (desired attitude, sticks) reaches the vehicle from the surface over
    the link this placement flies behind [s]. A topside law sends its override over that link, so its
    default is ``command_delay_s``; a law on the vehicle (:data:`ON_VEHICLE`) is fed the pilot's
    input over it (:attr:`reference_delay_s`) and must state it. ArduSub, compared with this
    placement, gets the pilot's input that late too: a pilot at the surface flies either over the
    same tether."""

    name: str
    telemetry_rate_hz: float
    telemetry_delay_s: float
    command_delay_s: float
    pilot_link_s: float = math.nan

    def __post_init__(self):
        if math.isnan(self.pilot_link_s):
            if self.name in ON_VEHICLE:
                raise ParameterError("placement %s: pilot_link_s missing (the law runs on the vehicle: how late "
                                     "does the pilot's input reach it from the surface [s]?)" % self.name)
            object.__setattr__(self, "pilot_link_s", float(self.command_delay_s))
        if not (math.isfinite(self.pilot_link_s) and self.pilot_link_s >= 0.0):
            raise ParameterError("placement %s: pilot_link_s: expected a finite value >= 0, got %r"
                                 % (self.name, self.pilot_link_s))

    @property
    def reference_delay_s(self):
        """How late the pilot's input reaches the law [s]: the link's delay on the vehicle, 0 topside (the
        pilot's input is beside the law there; its override then crosses the link)."""
        return self.pilot_link_s if self.name in ON_VEHICLE else 0.0


@dataclass(frozen=True)
class HybridSetting:
    """One stored hybrid setting: ``label`` and ``options`` ((configure keyword, value), ...)."""

    label: str
    options: tuple

    @property
    def omega_d_rad_s(self):
        """The setting's omega_d [rad/s]."""
        return float(dict(self.options)["omega_d_rad_s"])


def folder(root=None):
    """``params/head_to_head`` of the package (or of ``root``)."""
    return os.path.join(root or paths.package_root(), FOLDER)


def read_parm(path):
    """:class:`ArduSubSetting` of the .parm file ``path``; ParameterError naming the file and line."""
    label, status, params, seen = None, "", [], set()
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            text = line.strip()
            if text.startswith("#"):
                key, _, value = text[1:].strip().partition(":")
                if key.strip() == "setting" and value.strip():
                    label = value.strip()
                elif key.strip() == "status" and value.strip():
                    status = value.strip()
                continue
            if not text:
                continue
            parts = text.replace(",", " ").split()
            where = "%s:%d" % (path, number)
            if len(parts) != 2 or not _NAME.match(parts[0]):
                raise ParameterError("%s: expected 'NAME VALUE' (an ArduPilot parameter name, then a number), got %r"
                                     % (where, text))
            try:
                value = float(parts[1])
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise ParameterError("%s: %s: expected a finite number, got %r" % (where, parts[0], parts[1]))
            if parts[0] in seen:
                raise ParameterError("%s: %s given twice" % (where, parts[0]))
            seen.add(parts[0])
            params.append((parts[0], value))
    if label is None:
        raise ParameterError("%s: expected a '# setting: LABEL' line (the setting's label in fronts.csv)" % path)
    if not params:
        raise ParameterError("%s: no parameters (expected 'NAME VALUE' lines)" % path)
    return ArduSubSetting(label, status, tuple(params), path)


def load_ardusub_settings(directory=None):
    """Every stored ArduSub setting in ``directory`` (default :func:`folder`): ``ardusub_tuned*.parm``,
    sorted by file name; ParameterError if none."""
    directory = directory or folder()
    files = sorted(glob.glob(os.path.join(directory, ARDUSUB_PATTERN)))
    if not files:
        raise ParameterError("%s: no %s file (ArduSub's stored settings)" % (directory, ARDUSUB_PATTERN))
    settings = [read_parm(f) for f in files]
    labels = [s.label for s in settings]
    if len(set(labels)) != len(labels):
        raise ParameterError("%s: two ArduSub settings share a label: %s" % (directory, labels))
    return settings


def configure_keywords():
    """The keywords a hybrid setting may hold: those of HybridController.configure."""
    return tuple(n for n in inspect.signature(HybridController.configure).parameters if n != "self")


def _hybrid_setting(entry, where):
    if not isinstance(entry, dict) or not isinstance(entry.get("label"), str) or not entry["label"].strip():
        raise ParameterError("%s: expected a mapping with a non-empty 'label'" % where)
    allowed = configure_keywords()
    options = []
    for key, value in entry.items():
        if key == "label":
            continue
        if key not in allowed:
            raise ParameterError("%s.%s: unknown; expected one of %s" % (where, key, ", ".join(allowed)))
        try:                     # the rule configure applies: a bad value is named here, not at flight time
            CONTROLLER_RULES[key](value, key)
        except Brov2Error as error:
            raise ParameterError("%s.%s: %s" % (where, key, error))
        options.append((key, value))
    if "omega_d_rad_s" not in dict(options):
        raise ParameterError("%s.omega_d_rad_s: missing key" % where)
    return HybridSetting(entry["label"].strip(), tuple(options))


def load_hybrid_settings(path=None):
    """(status, {placement name: (:class:`Placement`, [HybridSetting, ...])}) of ``hybrid_tuned.yaml``."""
    path = path or os.path.join(folder(), HYBRID_FILE)
    top = Section(load_yaml(path), path, None)
    status = top.string("status")
    placements = top.sub("placements")
    unknown = sorted(set(placements.data) - set(PLACEMENTS))
    if unknown:
        raise ParameterError("%s: unknown placement %s; expected %s" % (placements.key(unknown[0]), unknown[0],
                                                                        ", ".join(PLACEMENTS)))
    out = {}
    for name in PLACEMENTS:
        if name not in placements:
            continue
        s = placements.sub(name)
        if name in ON_VEHICLE and "pilot_link_s" not in s:
            raise ParameterError("%s: missing key (the law runs on the vehicle: how late the pilot's input reaches "
                                 "it from the surface [s])" % s.key("pilot_link_s"))
        place = Placement(name, s.positive("telemetry_rate_hz"), s.number("telemetry_delay_s", 0.0),
                          s.number("command_delay_s", 0.0),
                          s.number("pilot_link_s", 0.0) if "pilot_link_s" in s else math.nan)
        entries = s.raw("settings")
        if not isinstance(entries, list) or not entries:
            raise ParameterError("%s: expected a non-empty list of settings" % s.key("settings"))
        settings = [_hybrid_setting(e, "%s[%d]" % (s.key("settings"), k)) for k, e in enumerate(entries)]
        if len({h.label for h in settings}) != len(settings):
            raise ParameterError("%s: two settings share a label" % s.key("settings"))
        out[name] = (place, settings)
    if not out:
        raise ParameterError("%s: no placement (expected some of %s)" % (placements.key(""), ", ".join(PLACEMENTS)))
    return status, out


def write_parm(path, setting, comment_lines=()):
    """Write ``setting`` (:class:`ArduSubSetting`) as a .parm file ``path`` that :func:`read_parm` reads back."""
    lines = ["# setting: %s" % setting.label, "# status: %s" % setting.status]
    lines += ["# %s" % c for c in comment_lines]
    lines += ["%s %r" % (name, float(value)) for name, value in setting.params]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def write_hybrid(path, status, placements):
    """Write ``placements`` ({name: (Placement, [HybridSetting, ...])}) and ``status`` as ``hybrid_tuned.yaml``."""
    lines = ["# The hybrid autopilot's settings flown by `brov2-analyze head-to-head`, per placement (written by",
             "# `brov2-analyze head-to-head --tune`; docs/experiments.md \"Head-to-head with tuned ArduSub\").",
             "status: %s" % json.dumps(status), "placements:"]
    for name in PLACEMENTS:
        if name not in placements:
            continue
        place, settings = placements[name]
        lines += ["  %s:" % name, "    telemetry_rate_hz: %r" % place.telemetry_rate_hz,
                  "    telemetry_delay_s: %r" % place.telemetry_delay_s,
                  "    command_delay_s: %r" % place.command_delay_s, "    pilot_link_s: %r" % place.pilot_link_s,
                  "    settings:"]
        for h in settings:
            lines.append("      - {%s}" % ", ".join(["label: %s" % json.dumps(h.label)] + ["%s: %s" % (k, _yaml_value(v))
                                                                       for k, v in h.options]))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def _yaml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):      # a count (rate_window): an integer, as configure expects
        return repr(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    raise ParameterError("a hybrid option's value must be a number or a boolean, got %r" % (value,))
