"""Vehicle, thruster and controller parameters loaded from ``params/*.yaml``.

Loading checks every key: a missing key, a wrong-sized list or a non-physical value
(negative mass, drag or inertia, zero-length thrust direction) raises
:class:`~brov2_hybrid.errors.ParameterError` naming the file and the key.
Units are in the key names; frames are body FRD / inertial NED.
"""
import math
import os
from dataclasses import dataclass, field

import numpy as np
import yaml

from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid import errors, paths

DEFAULT_VEHICLE_FILE = "brov2_heavy.yaml"
DEFAULT_THRUSTER_FILE = "thrusters.yaml"
DEFAULT_CONTROLLER_FILE = "controller.yaml"


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


class _Section(object):
    """Typed access to one mapping of a parameter file, with key-naming errors."""

    def __init__(self, data, path, section):
        self.path = path
        self.section = section
        if section is None:
            self.data = data
        else:
            if section not in data or not isinstance(data[section], dict):
                raise ParameterError("%s: missing section '%s'" % (path, section))
            self.data = data[section]

    def _key(self, key):
        return "%s:%s" % (self.path, key if self.section is None else self.section + "." + key)

    def raw(self, key):
        if key not in self.data:
            raise ParameterError("%s: missing key" % self._key(key))
        return self.data[key]

    def _wrap(self, fn, key, *args):
        try:
            return fn(self.raw(key), *args)
        except ParameterError:
            raise
        except Brov2Error as exc:
            raise ParameterError("%s: %s" % (self._key(key), str(exc).split(": ", 1)[-1]))

    def positive(self, key):
        return self._wrap(errors.as_positive, key, key)

    def finite(self, key):
        return self._wrap(errors.as_finite, key, key)

    def vector(self, key, n):
        return self._wrap(errors.as_vector, key, n, key)

    def nonnegative_vector(self, key, n):
        return self._wrap(errors.as_nonnegative_vector, key, n, key)

    def positive_vector(self, key, n):
        arr = self.vector(key, n)
        if np.any(arr <= 0.0):
            raise ParameterError("%s: expected every entry > 0, got %s" % (self._key(key), arr.tolist()))
        return arr

    def matrix(self, key, shape):
        return self._wrap(errors.as_matrix, key, shape, key)

    def boolean(self, key):
        value = self.raw(key)
        if not isinstance(value, bool):
            raise ParameterError("%s: expected true or false, got %r" % (self._key(key), value))
        return value

    def integer(self, key, minimum=None):
        value = self.raw(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError("%s: expected an integer, got %r" % (self._key(key), value))
        if minimum is not None and value < minimum:
            raise ParameterError("%s: expected an integer >= %d, got %d" % (self._key(key), minimum, value))
        return value


@dataclass(frozen=True)
class VehicleParams:
    """Rigid-body, hydrodynamic and hydrostatic parameters (body FRD, SI).

    Attributes
    ----------
    mass_kg : float
    weight_n, buoyancy_n : float
        Weight W and buoyancy B of the submerged vehicle [N].
    r_cg_m, r_cb_m : ndarray (3,)
        Centre of gravity / buoyancy from the body origin, FRD [m].
    inertia_kg_m2 : ndarray (3,)
        I_xx, I_yy, I_zz [kg m^2].
    added_mass, linear_drag, quadratic_drag : ndarray (6,)
        Diagonal M_A, B_L, B_NL in 6-DOF order.
    thruster_positions_m : ndarray (8, 3)
    thruster_directions : ndarray (8, 3)
        Unit thrust directions (normalised on load).
    """

    mass_kg: float
    weight_n: float
    buoyancy_n: float
    r_cg_m: np.ndarray
    r_cb_m: np.ndarray
    inertia_kg_m2: np.ndarray
    added_mass: np.ndarray
    linear_drag: np.ndarray
    quadratic_drag: np.ndarray
    water_density_kg_m3: float
    gravity_m_s2: float
    thruster_positions_m: np.ndarray
    thruster_directions: np.ndarray
    name: str = "vehicle"
    source: str = field(default="", compare=False)

    @property
    def rigid_body_mass(self):
        """Diagonal of M, shape (6,): [m, m, m, I_xx, I_yy, I_zz]."""
        return np.concatenate([np.full(3, self.mass_kg), self.inertia_kg_m2])

    @property
    def total_mass(self):
        """Diagonal of M + M_A, shape (6,)."""
        return self.rigid_body_mass + self.added_mass


def load_vehicle_params(path=None):
    """Load :class:`VehicleParams` from a YAML file (default ``params/brov2_heavy.yaml``)."""
    path = path or paths.params_path(DEFAULT_VEHICLE_FILE)
    data = load_yaml(path)
    v = _Section(data, path, "vehicle")
    t = _Section(data, path, "thrusters")
    directions = t.matrix("directions", (8, 3))
    norms = np.linalg.norm(directions, axis=1)
    if np.any(norms < 1e-9):
        bad = int(np.argmin(norms)) + 1
        raise ParameterError("%s:thrusters.directions: thruster %d has a zero direction" % (path, bad))
    return VehicleParams(
        mass_kg=v.positive("mass_kg"),
        weight_n=v.positive("weight_n"),
        buoyancy_n=v.positive("buoyancy_n"),
        r_cg_m=v.vector("r_cg_m", 3),
        r_cb_m=v.vector("r_cb_m", 3),
        inertia_kg_m2=v.positive_vector("inertia_kg_m2", 3),
        added_mass=v.nonnegative_vector("added_mass", 6),
        linear_drag=v.nonnegative_vector("linear_drag", 6),
        quadratic_drag=v.nonnegative_vector("quadratic_drag", 6),
        water_density_kg_m3=v.positive("water_density_kg_m3"),
        gravity_m_s2=v.positive("gravity_m_s2"),
        thruster_positions_m=t.matrix("positions_m", (8, 3)),
        thruster_directions=directions / norms[:, None],
        name=str(v.data.get("name", "vehicle")),
        source=path,
    )


@dataclass(frozen=True)
class ThrusterParams:
    """Thrust-table location and the per-thruster force limit used for tau_max."""

    csv_file: str
    pwm_min_us: int
    pwm_max_us: int
    pwm_step_us: int
    pwm_neutral_us: int
    pwm_half_range_us: int
    force_limit_n: object  # float [N], or None to derive it from the table
    ardusub_factors: np.ndarray = None  # (8, 6): roll, pitch, yaw, throttle, forward, lateral
    source: str = ""


def load_thruster_params(path=None):
    """Load :class:`ThrusterParams` (default ``params/thrusters.yaml``)."""
    path = path or paths.params_path(DEFAULT_THRUSTER_FILE)
    data = load_yaml(path)
    s = _Section(data, path, "thrust_table")
    csv_file = s.raw("csv_file")
    if not isinstance(csv_file, str) or not csv_file:
        raise ParameterError("%s:thrust_table.csv_file: expected a file name" % path)
    if not os.path.isabs(csv_file):
        csv_file = os.path.join(os.path.dirname(os.path.abspath(path)), csv_file)
    top = _Section(data, path, None)
    limit = top.raw("force_limit_n")
    if limit is not None:
        limit = top.positive("force_limit_n")
    lo, hi = s.integer("pwm_min_us", 0), s.integer("pwm_max_us", 0)
    neutral = s.integer("pwm_neutral_us", 0)
    if not lo < neutral < hi:
        raise ParameterError("%s:thrust_table: expected pwm_min_us < pwm_neutral_us < pwm_max_us" % path)
    return ThrusterParams(
        csv_file=csv_file, pwm_min_us=lo, pwm_max_us=hi,
        pwm_step_us=s.integer("pwm_step_us", 1), pwm_neutral_us=neutral,
        pwm_half_range_us=s.integer("pwm_half_range_us", 1),
        force_limit_n=limit, ardusub_factors=top.matrix("ardusub_factors", (8, 6)),
        source=path)


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
    # Optional integral action and drag feed-forward (off = the paper's PD law; see control.py).
    integral_enabled: bool = False
    integral_ratio: float = 0.3
    integral_band_rad: float = 0.035
    drag_feedforward_enabled: bool = False


def load_controller_params(path=None):
    """Load :class:`ControllerParams` (default ``params/controller.yaml``)."""
    path = path or paths.params_path(DEFAULT_CONTROLLER_FILE)
    data = load_yaml(path)
    c = _Section(data, path, "controller")
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
