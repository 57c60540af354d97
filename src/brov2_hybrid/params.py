"""Parameter files: YAML loading, typed key access (:class:`Section`), controller settings.

Loading checks every key: a missing key, a wrong-sized list or a non-physical value
raises :class:`~brov2_hybrid.errors.ParameterError` naming the file and the key
(``file:section.key``). Units are in the key names; frames are body FRD / inertial NED.
Vehicle files (``params/vehicles/*.yaml``) are read by :mod:`brov2_hybrid.vehicle.vehicle_file`.
"""
import math
import os
from dataclasses import dataclass

import numpy as np
import yaml

from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid import paths, validate

#: The vehicle every tool flies unless told otherwise (``params/vehicles/<name>.yaml``).
DEFAULT_VEHICLE = "bluerov2_heavy"
VEHICLES_FOLDER = "vehicles"
DEFAULT_CONTROLLER_FILE = "controller.yaml"


def vehicle_file(name_or_path=None):
    """Path of a vehicle file: a name under ``params/vehicles/`` or a path to a YAML file.

    None gives :data:`DEFAULT_VEHICLE`. A name that is no file raises ParameterError
    listing the vehicles there are.
    """
    name_or_path = name_or_path or DEFAULT_VEHICLE
    if not isinstance(name_or_path, str):
        raise ParameterError("vehicle: expected a vehicle name or a YAML path, got %r" % (name_or_path,))
    if os.sep in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        return name_or_path
    path = paths.params_path(VEHICLES_FOLDER, name_or_path + ".yaml")
    if not os.path.isfile(path):
        raise ParameterError("vehicle %r: no file %s (vehicles: %s)"
                             % (name_or_path, path, ", ".join(available_vehicles())))
    return path


def available_vehicles():
    """Names of the vehicle files under ``params/vehicles/``, sorted."""
    folder = paths.params_path(VEHICLES_FOLDER)
    return sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".yaml")) if os.path.isdir(folder) else []


def load_yaml(path):
    """Read a YAML mapping from ``path``; raise ParameterError on any problem."""
    if not os.path.isfile(path):
        raise ParameterError("%s: parameter file not found" % path)
    with open(path) as handle:
        try:
            data = yaml.safe_load(handle)
        except yaml.YAMLError as exc:
            raise ParameterError("%s: not valid YAML: %s" % (path, exc))
    if not isinstance(data, dict):
        raise ParameterError("%s: expected a mapping at the top level" % path)
    return data


class Section(object):
    """Typed access to one mapping of parameters, with errors naming the source and key.

    The one reader of parameter mappings: a parameter-file section (this class), a
    node's parameters (:class:`~brov2_hybrid.node_logic.node_params.ParamReader`, which
    names ``node ~key``). Every accessor reads a key with a check of
    :mod:`brov2_hybrid.validate` and raises :class:`ParameterError` naming the key
    (:meth:`key`) and what was expected; a missing key says so.

    ``section`` None means the top level of ``data``; a dotted name (``axes.roll``)
    is a nested mapping (also :meth:`sub`). ``path`` is the file (or another source name).
    """

    #: What a missing key is called in errors.
    MISSING = "missing key"

    def __init__(self, data, path, section):
        self.path = path
        self.section = section
        if section is None:
            self.data = data
        else:
            node = data
            for part in section.split("."):
                if not isinstance(node, dict) or not isinstance(node.get(part), dict):
                    raise ParameterError("%s: missing section '%s'" % (path, section))
                node = node[part]
            self.data = node

    def key(self, key):
        """``file:section.key`` of ``key``, as errors name it."""
        return "%s:%s" % (self.path, key if self.section is None else self.section + "." + key)

    def sub(self, key):
        """The nested mapping ``key`` of this one as a :class:`Section` (ParameterError if it is no mapping)."""
        dotted = key if self.section is None else self.section + "." + key
        if not isinstance(self.data.get(key), dict):
            raise ParameterError("%s: missing section '%s'" % (self.path, dotted))
        nested = Section(self.data[key], self.path, None)
        nested.section = dotted
        return nested

    def __contains__(self, key):
        """True if the mapping has ``key``."""
        return key in self.data

    def raw(self, key):
        """The value of ``key`` unchecked; ParameterError if it is missing."""
        if key not in self.data:
            raise ParameterError("%s: %s" % (self.key(key), self.MISSING))
        return self.data[key]

    def read(self, key, check, *args, **kwargs):
        """``check(value, *args, name, **kwargs)`` on the value of ``key``, ``name`` = :meth:`key`.

        ``check`` is a check of :mod:`brov2_hybrid.validate` (or a :func:`~brov2_hybrid.validate.rule`
        with ``args`` empty); its Brov2Error becomes a ParameterError.
        """
        try:
            return check(self.raw(key), *args, self.key(key), **kwargs)
        except ParameterError:
            raise
        except Brov2Error as exc:
            raise ParameterError(str(exc))

    def number(self, key, minimum=None, maximum=None, strict_min=False):
        """A finite number within inclusive bounds (``strict_min``: > minimum), as float."""
        return self.read(key, validate.as_number, minimum=minimum, maximum=maximum, strict_min=strict_min)

    def finite(self, key):
        """A finite number, as float."""
        return self.read(key, validate.as_number)

    def positive(self, key):
        """A finite number > 0, as float."""
        return self.read(key, validate.as_positive)

    def integer(self, key, minimum=None, maximum=None):
        """An integer within inclusive bounds."""
        return self.read(key, validate.as_integer, minimum=minimum, maximum=maximum)

    def boolean(self, key):
        """true or false."""
        return self.read(key, validate.as_bool)

    def choice(self, key, choices):
        """One of ``choices`` (a tuple, or the keys of a mapping)."""
        return self.read(key, validate.as_choice, choices)

    def string(self, key, allow_empty=False, choices=None):
        """A string (non-empty unless ``allow_empty``), one of ``choices`` if given."""
        return self.read(key, validate.as_string, allow_empty=allow_empty, choices=choices)

    def string_list(self, key):
        """A list of non-empty strings (may be empty)."""
        return self.read(key, validate.as_string_list)

    def flags(self, key, n):
        """``n`` booleans, as a bool array (n,)."""
        return self.read(key, validate.as_flags, n)

    def vector(self, key, n, minimum=None, strict_min=False):
        """``n`` finite numbers (each >= ``minimum``, or > with ``strict_min``), as float array (n,)."""
        return self.read(key, validate.as_vector, n, minimum=minimum, strict_min=strict_min)

    def nonnegative_vector(self, key, n):
        """``n`` finite numbers >= 0, as float array (n,)."""
        return self.vector(key, n, minimum=0.0)

    def positive_vector(self, key, n):
        """``n`` finite numbers > 0, as float array (n,)."""
        return self.vector(key, n, minimum=0.0, strict_min=True)

    def positive_list(self, key):
        """A non-empty list of finite numbers > 0, as a tuple of floats."""
        raw = self.raw(key)
        if not (isinstance(raw, list) and raw):
            raise ParameterError("%s: expected a non-empty list of numbers > 0, got %r" % (self.key(key), raw))
        return tuple(float(v) for v in self.positive_vector(key, len(raw)))

    def matrix(self, key, shape):
        """A finite float array of the 2-D ``shape``."""
        return self.read(key, validate.as_matrix, shape)


@dataclass(frozen=True)
class ControllerParams:
    """Settings of the hybrid control law (see ``params/controller.yaml``).

    Built by :func:`load_controller_params`, which checks every value
    (:data:`CONTROLLER_RULES`); :class:`~brov2_hybrid.control.law.HybridController` takes
    them as checked. ``closed_loop_enabled``: (roll, pitch, yaw) bools.
    """

    omega_d_rad_s: float
    kappa: float
    trim_rate_max_rad_s: np.ndarray
    trim_samples: int
    rate_window: int
    feedforward_enabled: bool
    closed_loop_enabled: tuple
    linear_scale: float
    source: str = ""
    # Optional integral action and drag feed-forward (off = the paper's PD law; see control/law.py).
    integral_enabled: bool = False
    integral_ratio: float = 0.3
    integral_band_rad: float = 0.035
    drag_feedforward_enabled: bool = False
    # Optional reference feed-forward (off = the paper's law; see control/law.py, control/rate_estimate.py).
    reference_feedforward_enabled: bool = False
    reference_filter_omega_rad_s: float = 10.0
    reference_filter_max_gap_s: float = 0.1
    # Optional depth hold (off = open-loop heave, the paper's law; see control/depth_hold.py).
    depth_hold_enabled: bool = False
    heave_omega_ratio: float = 0.75
    heave_omega_rad_s: float = 0.0
    heave_kappa: float = 0.0
    heave_trim_speed_max_m_s: float = 0.5
    max_depth_rate_m_s: float = 0.5
    min_depth_m: float = 0.3
    max_depth_m: float = 100.0
    depth_timeout_s: float = 1.0
    depth_rate_filter_s: float = 0.2
    depth_hold_max_force_fraction: float = 0.5
    depth_hold_min_delay_margin_s: float = 0.15
    # Optional loop-delay compensation (off = the paper's law; see control/delay_compensation.py).
    delay_compensation_enabled: bool = False
    delay_compensation_command_delay_s: float = 0.0
    delay_compensation_step_s: float = 0.005


#: The rule of every controller setting, stated once: :func:`load_controller_params` reads
#: ``controller.yaml`` with it and :meth:`brov2_hybrid.control.law.HybridController.configure`
#: checks live changes with it. Keys are :class:`ControllerParams` fields (the file has
#: ``integral_band_deg``, checked with the rule of ``integral_band_rad``).
CONTROLLER_RULES = {
    "omega_d_rad_s": validate.rule(validate.as_positive),
    "kappa": validate.rule(validate.as_number, minimum=0.0),
    "trim_rate_max_rad_s": validate.rule(validate.as_vector, 3, minimum=0.0, strict_min=True),
    "trim_samples": validate.rule(validate.as_integer, minimum=2),
    "rate_window": validate.rule(validate.as_integer, minimum=1),
    "feedforward_enabled": validate.rule(validate.as_bool),
    "closed_loop_enabled": validate.rule(validate.as_flags, 3),
    "linear_scale": validate.rule(validate.as_number, minimum=0.0, maximum=1.0),
    "integral_enabled": validate.rule(validate.as_bool),
    "integral_ratio": validate.rule(validate.as_number, minimum=0.0),
    "integral_band_rad": validate.rule(validate.as_positive),
    "drag_feedforward_enabled": validate.rule(validate.as_bool),
    "reference_feedforward_enabled": validate.rule(validate.as_bool),
    "reference_filter_omega_rad_s": validate.rule(validate.as_positive),
    "reference_filter_max_gap_s": validate.rule(validate.as_positive),
    "depth_hold_enabled": validate.rule(validate.as_bool),
    "heave_omega_ratio": validate.rule(validate.as_positive),
    "heave_omega_rad_s": validate.rule(validate.as_number, minimum=0.0),
    "heave_kappa": validate.rule(validate.as_number, minimum=0.0),
    "heave_trim_speed_max_m_s": validate.rule(validate.as_positive),
    "max_depth_rate_m_s": validate.rule(validate.as_positive),
    "min_depth_m": validate.rule(validate.as_number),
    "max_depth_m": validate.rule(validate.as_number),
    "depth_timeout_s": validate.rule(validate.as_positive),
    "depth_rate_filter_s": validate.rule(validate.as_number, minimum=0.0),
    "depth_hold_max_force_fraction": validate.rule(validate.as_number, minimum=0.0, maximum=1.0, strict_min=True),
    "depth_hold_min_delay_margin_s": validate.rule(validate.as_number, minimum=0.0, maximum=2.0),
    "delay_compensation_enabled": validate.rule(validate.as_bool),
    "delay_compensation_command_delay_s": validate.rule(validate.as_number, minimum=0.0, maximum=0.5),
    "delay_compensation_step_s": validate.rule(validate.as_positive),
}


def load_controller_params(path=None):
    """Load :class:`ControllerParams` (default ``params/controller.yaml``), every key checked
    with :data:`CONTROLLER_RULES`; errors name ``file:controller.key``."""
    path = path or paths.params_path(DEFAULT_CONTROLLER_FILE)
    c = Section(load_yaml(path), path, "controller")
    values = {key: c.read(key, check) for key, check in CONTROLLER_RULES.items() if key != "integral_band_rad"}
    values["closed_loop_enabled"] = tuple(bool(b) for b in values["closed_loop_enabled"])
    band_deg = c.read("integral_band_deg", CONTROLLER_RULES["integral_band_rad"])
    if values["min_depth_m"] >= values["max_depth_m"]:
        raise ParameterError("%s: min_depth_m %g must lie above max_depth_m %g (depth positive down)"
                             % (c.key("min_depth_m"), values["min_depth_m"], values["max_depth_m"]))
    return ControllerParams(source=path, integral_band_rad=math.radians(band_deg), **values)
