"""The simulator's settings, all read here from ``params/simulator.yaml``.

Sections ``physics``, ``noise`` and ``tether`` (:class:`SimOptions`), ``stock_model``
(:class:`StockModelParams`), ``initial_state``, ``firmware`` (simulated ArduSub
parameters) and ``mavlink`` (endpoint and telemetry). The vehicle itself comes from its
vehicle file (:mod:`brov2_hybrid.vehicle.vehicle_file`). Units are in the key names; times in seconds
of simulated time.
"""
import math
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.validate import as_vector
from brov2_hybrid.vehicle.mixers import KINDS as MIXER_KINDS
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid.sim.tether_model import TetherSettings, load_tether_settings

DEFAULT_SIMULATOR_FILE = "simulator.yaml"
#: Vehicle models: the paper's updated SITL model and the stock ArduSub SITL one.
MODELS = ("updated", "stock")
THRUSTER_LAGS = ("none", "first_order", "third_order")


@dataclass(frozen=True)
class StockModelParams:
    """Parameters of the stock ArduSub SITL submarine (see ``params/simulator.yaml``)."""

    mass_kg: float
    inertia_kg_m2: float
    thrust_gain_n: float
    pwm_neutral_us: float
    pwm_half_range_us: float
    pwm_valid_us: tuple
    dead_zone_us: tuple
    thruster_arm_m: float
    water_density_kg_m3: float
    sphere_area_m2: float
    drag_coefficient: np.ndarray
    angular_drag_n_m_s2: float
    righting_force_n: float
    righting_offset_m: float
    net_buoyancy_n: float
    buoyancy_mass_kg: float
    vehicle_height_m: float
    gravity_m_s2: float


@dataclass
class SimOptions:
    """Physics options of the simulator; every optional effect is off by default.

    Attributes
    ----------
    model : {'updated', 'stock'}
    dt_s : float
        Fixed integration step [s].
    current_ned_m_s : ndarray (3,)
        Constant ocean current, NED [m/s].
    thruster_lag : {'none', 'first_order', 'third_order'}
    thruster_time_constant_s : float
        Time constant of the first-order lag [s].
    third_order_numerator, third_order_denominator : tuple or None
        K(s) coefficients (highest power first); None reads ``params/simulator.yaml``.
    surface_buoyancy : bool
        Updated model: buoyancy falls off as the vehicle leaves the water (surface law
        over the vehicle's ``body.height_m``); False = always submerged.
    noise_enabled : bool
    attitude_noise_std_rad, rate_noise_std_rad_s, depth_noise_std_m : float
        Standard deviations of the zero-mean Gaussian measurement noise.
    seed : int
        Seed of the noise generator.
    stock : StockModelParams or None
        Stock-model parameters; None reads ``params/simulator.yaml`` when needed.
    tether : TetherSettings or None
        The tether (:mod:`brov2_hybrid.sim.tether_model`); it acts when its ``enabled`` is true.
    """

    model: str = "updated"
    dt_s: float = 1.0 / 400.0
    current_ned_m_s: np.ndarray = field(default_factory=lambda: np.zeros(3))
    thruster_lag: str = "none"
    thruster_time_constant_s: float = 0.1
    third_order_numerator: Optional[tuple] = None
    third_order_denominator: Optional[tuple] = None
    surface_buoyancy: bool = False
    noise_enabled: bool = False
    attitude_noise_std_rad: float = 0.0
    rate_noise_std_rad_s: float = 0.0
    depth_noise_std_m: float = 0.0
    seed: int = 0
    stock: Optional[StockModelParams] = None
    tether: Optional[TetherSettings] = None

    def validated(self):
        """Return a checked copy (arrays converted); raise ParameterError on bad values."""
        if self.model not in MODELS:
            raise ParameterError("SimOptions.model: expected one of %s, got %r" % (MODELS, self.model))
        if self.thruster_lag not in THRUSTER_LAGS:
            raise ParameterError("SimOptions.thruster_lag: expected one of %s, got %r"
                                 % (THRUSTER_LAGS, self.thruster_lag))
        for name in ("dt_s", "thruster_time_constant_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ParameterError("SimOptions.%s: expected a value > 0, got %r" % (name, value))
        for name in ("attitude_noise_std_rad", "rate_noise_std_rad_s", "depth_noise_std_m"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ParameterError("SimOptions.%s: expected a value >= 0, got %r" % (name, value))
        if not isinstance(self.surface_buoyancy, bool):
            raise ParameterError("SimOptions.surface_buoyancy: expected true or false, got %r"
                                 % (self.surface_buoyancy,))
        if self.tether is not None and not isinstance(self.tether, TetherSettings):
            raise ParameterError("SimOptions.tether: expected TetherSettings or None, got %r" % (self.tether,))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ParameterError("SimOptions.seed: expected an integer, got %r" % (self.seed,))
        try:
            current = as_vector(self.current_ned_m_s, 3, "SimOptions.current_ned_m_s")
        except Brov2Error as exc:
            raise ParameterError(str(exc))
        return replace(self, current_ned_m_s=current, dt_s=float(self.dt_s),
                       thruster_time_constant_s=float(self.thruster_time_constant_s))


def simulator_file(path=None):
    """Path of the simulator parameter file (default ``params/simulator.yaml``)."""
    return path or paths.params_path(DEFAULT_SIMULATOR_FILE)


def load_sim_options(path=None):
    """Read :class:`SimOptions` from the ``physics`` and ``noise`` sections.

    Every key is optional (a missing one keeps the dataclass default, i.e. off);
    an unknown key or a bad value raises :class:`ParameterError` naming file and key.
    """
    path = simulator_file(path)
    data = load_yaml(path)
    kwargs = {}
    physics = Section(data, path, "physics") if "physics" in data else None
    if physics is not None:
        known = {"model", "rate_hz", "current_ned_m_s", "thruster_lag", "thruster_time_constant_s",
                 "third_order_numerator", "third_order_denominator", "surface_buoyancy"}
        _reject_unknown(physics, known)
        if "model" in physics.data:
            kwargs["model"] = physics.choice("model", MODELS)
        if "rate_hz" in physics.data:
            kwargs["dt_s"] = 1.0 / physics.positive("rate_hz")
        if "current_ned_m_s" in physics.data:
            kwargs["current_ned_m_s"] = physics.vector("current_ned_m_s", 3)
        if "thruster_lag" in physics.data:
            kwargs["thruster_lag"] = physics.choice("thruster_lag", THRUSTER_LAGS)
        if "thruster_time_constant_s" in physics.data:
            kwargs["thruster_time_constant_s"] = physics.positive("thruster_time_constant_s")
        for key in ("third_order_numerator", "third_order_denominator"):
            if key in physics.data:
                kwargs[key] = tuple(_coefficients(physics, key))
        if "surface_buoyancy" in physics.data:
            kwargs["surface_buoyancy"] = physics.boolean("surface_buoyancy")
    if "noise" in data:
        noise = Section(data, path, "noise")
        _reject_unknown(noise, {"enabled", "seed", "attitude_std_rad", "rate_std_rad_s", "depth_std_m"})
        if "enabled" in noise.data:
            kwargs["noise_enabled"] = noise.boolean("enabled")
        if "seed" in noise.data:
            kwargs["seed"] = noise.integer("seed", 0)
        for key, name in (("attitude_std_rad", "attitude_noise_std_rad"),
                          ("rate_std_rad_s", "rate_noise_std_rad_s"),
                          ("depth_std_m", "depth_noise_std_m")):
            if key in noise.data:
                value = noise.finite(key)
                if value < 0:
                    raise ParameterError("%s:noise.%s: expected a value >= 0, got %r" % (path, key, value))
                kwargs[name] = value
    if "stock_model" in data:
        kwargs["stock"] = load_stock_model_params(path)
    if "tether" in data:
        kwargs["tether"] = load_tether_settings(path, data)
    return SimOptions(**kwargs).validated()


def _reject_unknown(section, known):
    unknown = sorted(set(section.data) - set(known))
    if unknown:
        raise ParameterError("%s:%s: unknown key(s) %s (expected some of %s)"
                             % (section.path, section.section, unknown, sorted(known)))


def _coefficients(section, key):
    value = section.raw(key)
    if not (isinstance(value, list) and value):
        raise ParameterError("%s: expected a list of polynomial coefficients" % section.key(key))
    return section.vector(key, len(value))


def load_stock_model_params(path=None):
    """Read :class:`StockModelParams` from the ``stock_model`` section."""
    path = simulator_file(path)
    s = Section(load_yaml(path), path, "stock_model")
    dead_zone = s.vector("dead_zone_us", 2)
    if not dead_zone[0] <= dead_zone[1]:
        raise ParameterError("%s: expected dead_zone_us[0] <= dead_zone_us[1]" % s.key("dead_zone_us"))
    return StockModelParams(
        mass_kg=s.positive("mass_kg"),
        inertia_kg_m2=s.positive("inertia_kg_m2"),
        thrust_gain_n=s.positive("thrust_gain_n"),
        pwm_neutral_us=s.positive("pwm_neutral_us"),
        pwm_half_range_us=s.positive("pwm_half_range_us"),
        pwm_valid_us=tuple(float(x) for x in s.vector("pwm_valid_us", 2)),
        dead_zone_us=(float(dead_zone[0]), float(dead_zone[1])),
        thruster_arm_m=s.positive("thruster_arm_m"),
        water_density_kg_m3=s.positive("water_density_kg_m3"),
        sphere_area_m2=s.positive("sphere_area_m2"),
        drag_coefficient=s.nonnegative_vector("drag_coefficient", 3),
        angular_drag_n_m_s2=s.finite("angular_drag_n_m_s2"),
        righting_force_n=s.finite("righting_force_n"),
        righting_offset_m=s.finite("righting_offset_m"),
        net_buoyancy_n=s.finite("net_buoyancy_n"),
        buoyancy_mass_kg=s.positive("buoyancy_mass_kg"),
        vehicle_height_m=s.positive("vehicle_height_m"),
        gravity_m_s2=s.positive("gravity_m_s2"),
    )


def third_order_coefficients(options):
    """K(s) numerator and denominator of the third-order lag: from ``options`` or simulator.yaml."""
    if options.third_order_numerator is not None and options.third_order_denominator is not None:
        return options.third_order_numerator, options.third_order_denominator
    defaults = load_sim_options()
    if defaults.third_order_numerator is None or defaults.third_order_denominator is None:
        raise ParameterError("%s:physics: third_order_numerator/denominator needed for thruster_lag "
                             "'third_order'" % simulator_file())
    return defaults.third_order_numerator, defaults.third_order_denominator




#: Firmware pilot-input failsafe actions (ArduSub FS_PILOT_INPUT).
FS_PILOT_INPUT_CHOICES = (0, 1, 2)
FS_GCS_ENABLE_CHOICES = (0, 1, 2, 3, 4)   # ArduSub/defines.h FS_GCS_DISABLED .. FS_GCS_SURFACE


@dataclass
class FirmwareConfig:
    """Initial values of the simulated firmware's parameters (see simulator.yaml)."""

    mixer: str
    sysid_mygcs: int
    rc_override_time_s: float
    fs_pilot_input: int
    fs_pilot_timeout_s: float
    fs_gcs_enable: int
    gcs_timeout_s: float
    loop_rate_hz: float
    command_delay_s: float
    telemetry_delay_s: float
    js_gain_default: float
    js_thr_gain: float


@dataclass
class LinkConfig:
    """MAVLink endpoint and telemetry settings (see simulator.yaml)."""

    address: str
    udp_out: object                      # "host:port" or None
    system_id: int
    component_id: int
    stream_rates_hz: dict = field(default_factory=dict)
    home_lat_deg: float = 0.0
    home_lon_deg: float = 0.0
    home_alt_m: float = 0.0
    atmospheric_pressure_pa: float = 101325.0
    water_temperature_deg_c: float = 20.0
    battery_voltage_v: float = 16.0
    earth_magnetic_field_ned_gauss: np.ndarray = field(default_factory=lambda: np.zeros(3))
    signing_warning_interval_s: float = 30.0


def load_firmware_config(path=None):
    """Read :class:`FirmwareConfig` from the ``firmware`` section."""
    path = simulator_file(path)
    s = Section(load_yaml(path), path, "firmware")
    mixer = s.choice("mixer", MIXER_KINDS)
    sysid = s.integer("sysid_mygcs", 1, 255)
    fs_input = s.choice("fs_pilot_input", FS_PILOT_INPUT_CHOICES)
    fs_gcs = s.choice("fs_gcs_enable", FS_GCS_ENABLE_CHOICES)
    override_time = s.finite("rc_override_time_s")
    if override_time < 0 and override_time != -1:
        raise ParameterError("%s: expected -1 (never) or a value >= 0, got %r"
                             % (s.key("rc_override_time_s"), override_time))
    return FirmwareConfig(
        mixer=mixer, sysid_mygcs=sysid, rc_override_time_s=override_time,
        fs_pilot_input=fs_input, fs_pilot_timeout_s=s.positive("fs_pilot_timeout_s"),
        fs_gcs_enable=fs_gcs, gcs_timeout_s=s.positive("gcs_timeout_s"),
        loop_rate_hz=s.positive("loop_rate_hz"),
        command_delay_s=s.number("command_delay_s", minimum=0.0),
        telemetry_delay_s=s.number("telemetry_delay_s", minimum=0.0),
        js_gain_default=s.number("js_gain_default", 0.1, 1.0),
        js_thr_gain=s.number("js_thr_gain", 0.5, 4.0))


def load_link_config(path=None):
    """Read :class:`LinkConfig` from the ``mavlink`` section."""
    path = simulator_file(path)
    s = Section(load_yaml(path), path, "mavlink")
    address = s.raw("address")
    if not isinstance(address, str):
        raise ParameterError("%s: expected 'tcp:HOST:PORT', got %r" % (s.key("address"), address))
    udp_out = s.raw("udp_out")
    if udp_out is not None and not isinstance(udp_out, str):
        raise ParameterError("%s: expected 'HOST:PORT' or null, got %r" % (s.key("udp_out"), udp_out))
    rates = s.raw("stream_rates_hz")
    if not isinstance(rates, dict):
        raise ParameterError("%s: expected a mapping MESSAGE_NAME: rate" % s.key("stream_rates_hz"))
    clean = {}
    for name, rate in rates.items():
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate < 0:
            raise ParameterError("%s.%s: expected a rate >= 0 [Hz], got %r" % (s.key("stream_rates_hz"), name, rate))
        clean[str(name)] = float(rate)
    return LinkConfig(
        address=address, udp_out=udp_out,
        system_id=s.integer("system_id", 1), component_id=s.integer("component_id", 0),
        stream_rates_hz=clean,
        home_lat_deg=s.finite("home_lat_deg"), home_lon_deg=s.finite("home_lon_deg"),
        home_alt_m=s.finite("home_alt_m"),
        atmospheric_pressure_pa=s.positive("atmospheric_pressure_pa"),
        water_temperature_deg_c=s.finite("water_temperature_deg_c"),
        battery_voltage_v=s.positive("battery_voltage_v"),
        earth_magnetic_field_ned_gauss=s.vector("earth_magnetic_field_ned_gauss", 3),
        signing_warning_interval_s=s.positive("signing_warning_interval_s"))


def parse_host_port(text, what):
    """'host:port' -> (host, port); raises ParameterError naming ``what``."""
    host, sep, port = str(text).rpartition(":")
    if not sep or not host:
        raise ParameterError("%s: expected HOST:PORT, got %r" % (what, text))
    try:
        number = int(port)
    except ValueError:
        raise ParameterError("%s: expected a numeric port, got %r" % (what, text))
    if not 0 <= number <= 65535:
        raise ParameterError("%s: port out of range in %r" % (what, text))
    return host, number


def parse_tcp_address(text):
    """'tcp:HOST:PORT' -> (host, port)."""
    if not str(text).startswith("tcp:"):
        raise ParameterError("address: only 'tcp:HOST:PORT' is supported, got %r" % (text,))
    return parse_host_port(str(text)[4:], "address")


@dataclass
class InitialState:
    """Where the vehicle starts: depth [m] and (roll, pitch, yaw) [deg]."""

    depth_m: float
    attitude_deg: np.ndarray

    def eta(self):
        """The start pose as :func:`start_eta` gives it."""
        return start_eta(self.depth_m, self.attitude_deg)


def start_eta(depth_m, attitude_deg):
    """Start pose (north, east, down [m], roll, pitch, yaw [rad]) at ``depth_m`` below the
    origin with attitude (roll, pitch, yaw) ``attitude_deg`` [deg]."""
    return np.concatenate([[0.0, 0.0, float(depth_m)], np.radians(np.asarray(attitude_deg, dtype=float))])


def load_initial_state(path=None):
    """Read :class:`InitialState` from the ``initial_state`` section."""
    path = simulator_file(path)
    s = Section(load_yaml(path), path, "initial_state")
    return InitialState(depth_m=s.finite("depth_m"), attitude_deg=s.vector("attitude_deg", 3))
