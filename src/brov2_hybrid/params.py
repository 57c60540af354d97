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
    """Typed access to one mapping of a parameter file, with key-naming errors.

    ``section`` None means the top level of the file. :meth:`key` gives the
    ``file:section.key`` name errors use.
    """

    def __init__(self, data, path, section):
        self.path = path
        self.section = section
        if section is None:
            self.data = data
        else:
            if section not in data or not isinstance(data[section], dict):
                raise ParameterError("%s: missing section '%s'" % (path, section))
            self.data = data[section]

    def key(self, key):
        """``file:section.key`` of ``key``, as errors name it."""
        return "%s:%s" % (self.path, key if self.section is None else self.section + "." + key)

    def raw(self, key):
        if key not in self.data:
            raise ParameterError("%s: missing key" % self.key(key))
        return self.data[key]

    def _wrap(self, fn, key, *args, **kwargs):
        try:
            return fn(self.raw(key), *args, **kwargs)
        except ParameterError:
            raise
        except Brov2Error as exc:
            raise ParameterError("%s: %s" % (self.key(key), str(exc).split(": ", 1)[-1]))

    def positive(self, key):
        return self._wrap(validate.as_positive, key, key)

    def finite(self, key):
        return self._wrap(validate.as_finite, key, key)

    def vector(self, key, n):
        return self._wrap(validate.as_vector, key, n, key)

    def nonnegative_vector(self, key, n):
        return self._wrap(validate.as_vector, key, n, key, minimum=0.0)

    def positive_vector(self, key, n):
        arr = self.vector(key, n)
        if np.any(arr <= 0.0):
            raise ParameterError("%s: expected every entry > 0, got %s" % (self.key(key), arr.tolist()))
        return arr

    def matrix(self, key, shape):
        return self._wrap(validate.as_matrix, key, shape, key)

    def boolean(self, key):
        value = self.raw(key)
        if not isinstance(value, bool):
            raise ParameterError("%s: expected true or false, got %r" % (self.key(key), value))
        return value

    def integer(self, key, minimum=None):
        value = self.raw(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError("%s: expected an integer, got %r" % (self.key(key), value))
        if minimum is not None and value < minimum:
            raise ParameterError("%s: expected an integer >= %d, got %d" % (self.key(key), minimum, value))
        return value


@dataclass(frozen=True)
class ControllerParams:
    """Settings of the hybrid control law (see ``params/controller.yaml``)."""

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


def load_controller_params(path=None):
    """Load :class:`ControllerParams` (default ``params/controller.yaml``)."""
    path = path or paths.params_path(DEFAULT_CONTROLLER_FILE)
    data = load_yaml(path)
    c = Section(data, path, "controller")
    enabled = c.raw("closed_loop_enabled")
    if not (isinstance(enabled, list) and len(enabled) == 3 and all(isinstance(e, bool) for e in enabled)):
        raise ParameterError("%s:controller.closed_loop_enabled: expected 3 booleans (roll, pitch, yaw)" % path)
    kappa = c.finite("kappa")
    if kappa < 0:
        raise ParameterError("%s:controller.kappa: expected a value >= 0, got %r" % (path, kappa))
    scale = c.finite("linear_scale")
    if not 0.0 <= scale <= 1.0:
        raise ParameterError("%s:controller.linear_scale: expected a value in [0, 1], got %r" % (path, scale))
    ratio = c.finite("integral_ratio")
    if ratio < 0:
        raise ParameterError("%s:controller.integral_ratio: expected a value >= 0, got %r" % (path, ratio))
    band_deg = c.positive("integral_band_deg")
    return ControllerParams(
        omega_d_rad_s=c.positive("omega_d_rad_s"),
        kappa=kappa,
        trim_rate_max_rad_s=c.positive_vector("trim_rate_max_rad_s", 3),
        trim_samples=c.integer("trim_samples", 2),
        rate_window=c.integer("rate_window", 1),
        feedforward_enabled=c.boolean("feedforward_enabled"),
        closed_loop_enabled=tuple(enabled),
        linear_scale=scale,
        source=path,
        integral_enabled=c.boolean("integral_enabled"),
        integral_ratio=ratio,
        integral_band_rad=math.radians(band_deg),
        drag_feedforward_enabled=c.boolean("drag_feedforward_enabled"),
    )
