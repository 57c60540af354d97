"""Firmware and MAVLink settings of the simulator, from ``params/simulator.yaml``.

Sections ``firmware`` (simulated ArduSub parameters) and ``mavlink`` (endpoint and
telemetry). Units are in the key names; times in seconds of simulated time.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from brov2_hybrid.errors import ParameterError
from brov2_hybrid.mixers import Mixer
from brov2_hybrid.params import _Section, load_yaml
from brov2_hybrid.vehicle_model import simulator_file

#: Firmware pilot-input failsafe actions (ArduSub FS_PILOT_INPUT).
FS_PILOT_INPUT_CHOICES = (0, 1, 2)


@dataclass
class FirmwareConfig:
    """Initial values of the simulated firmware's parameters (see simulator.yaml)."""

    mixer: str
    sysid_mygcs: int
    rc_override_time_s: float
    fs_pilot_input: int
    fs_pilot_timeout_s: float
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


def _nonnegative(section, key):
    value = section.finite(key)
    if value < 0:
        raise ParameterError("%s: expected a value >= 0, got %r" % (section._key(key), value))
    return value


def _within(section, key, low, high):
    value = section.finite(key)
    if not low <= value <= high:
        raise ParameterError("%s: expected %g..%g, got %r" % (section._key(key), low, high, value))
    return value


def load_firmware_config(path=None):
    """Read :class:`FirmwareConfig` from the ``firmware`` section."""
    path = simulator_file(path)
    s = _Section(load_yaml(path), path, "firmware")
    mixer = s.raw("mixer")
    if mixer not in Mixer.KINDS:
        raise ParameterError("%s: expected one of %s, got %r" % (s._key("mixer"), Mixer.KINDS, mixer))
    sysid = s.integer("sysid_mygcs", 1)
    if sysid > 255:
        raise ParameterError("%s: expected 1..255, got %d" % (s._key("sysid_mygcs"), sysid))
    fs_input = s.integer("fs_pilot_input", 0)
    if fs_input not in FS_PILOT_INPUT_CHOICES:
        raise ParameterError("%s: expected one of %s, got %d"
                             % (s._key("fs_pilot_input"), FS_PILOT_INPUT_CHOICES, fs_input))
    override_time = s.finite("rc_override_time_s")
    if override_time < 0 and override_time != -1:
        raise ParameterError("%s: expected -1 (never) or a value >= 0, got %r"
                             % (s._key("rc_override_time_s"), override_time))
    return FirmwareConfig(
        mixer=mixer, sysid_mygcs=sysid, rc_override_time_s=override_time,
        fs_pilot_input=fs_input, fs_pilot_timeout_s=s.positive("fs_pilot_timeout_s"),
        loop_rate_hz=s.positive("loop_rate_hz"),
        command_delay_s=_nonnegative(s, "command_delay_s"),
        telemetry_delay_s=_nonnegative(s, "telemetry_delay_s"),
        js_gain_default=_within(s, "js_gain_default", 0.1, 1.0),
        js_thr_gain=_within(s, "js_thr_gain", 0.5, 4.0))


def load_link_config(path=None):
    """Read :class:`LinkConfig` from the ``mavlink`` section."""
    path = simulator_file(path)
    s = _Section(load_yaml(path), path, "mavlink")
    address = s.raw("address")
    if not isinstance(address, str):
        raise ParameterError("%s: expected 'tcp:HOST:PORT', got %r" % (s._key("address"), address))
    udp_out = s.raw("udp_out")
    if udp_out is not None and not isinstance(udp_out, str):
        raise ParameterError("%s: expected 'HOST:PORT' or null, got %r" % (s._key("udp_out"), udp_out))
    rates = s.raw("stream_rates_hz")
    if not isinstance(rates, dict):
        raise ParameterError("%s: expected a mapping MESSAGE_NAME: rate" % s._key("stream_rates_hz"))
    clean = {}
    for name, rate in rates.items():
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate < 0:
            raise ParameterError("%s.%s: expected a rate >= 0 [Hz], got %r" % (s._key("stream_rates_hz"), name, rate))
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


def load_initial_state(path=None):
    """Read :class:`InitialState` from the ``initial_state`` section."""
    path = simulator_file(path)
    s = _Section(load_yaml(path), path, "initial_state")
    return InitialState(depth_m=s.finite("depth_m"), attitude_deg=s.vector("attitude_deg", 3))
