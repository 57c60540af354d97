"""Telemetry of the simulated vehicle: message builders and per-link stream scheduling.

What ArduSub SITL sends, built from the :class:`~brov2_hybrid.sim.plant.Plant`
and the :class:`~brov2_hybrid.sim.firmware.Firmware`: HEARTBEAT (1 Hz), ATTITUDE and
ATTITUDE_QUATERNION (IMU attitude, noisy when noise is on), RAW_IMU and SCALED_IMU2
(accelerometer = specific force, gyro, magnetometer), SCALED_PRESSURE2 (external depth
sensor, as the Bar30 on ArduSub), VFR_HUD (alt: altitude above sea level, home_alt_m
minus the depth, as ``GCS_MAVLINK::vfr_hud_alt``) and GLOBAL_POSITION_INT (alt above sea
level; relative_alt = -depth, home being at the surface as ArduSub keeps it), SERVO_OUTPUT_RAW (the eight motor PWMs), RC_CHANNELS (the RC input the
firmware uses), SYS_STATUS, SYSTEM_TIME and SIM_STATE (true state, no noise).

Timestamps (time_boot_ms, time_usec) follow simulated time. Rates are in simulated
time, per link, changed by MAV_CMD_SET_MESSAGE_INTERVAL or REQUEST_DATA_STREAM
(ArduPilot's stream groups).
"""
import math

import numpy as np
from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.link.ardusub import SERVO_OUTPUTS
from brov2_hybrid.link import ardusub
from brov2_hybrid.link.ardusub import MANUAL
from brov2_hybrid.physics.kinematics import J1, quaternion_from_euler, wrap_angle

#: Messages the simulator can send, by name.
MESSAGE_NAMES = ("HEARTBEAT", "ATTITUDE", "ATTITUDE_QUATERNION", "RAW_IMU", "SCALED_IMU2",
                 "SCALED_PRESSURE2", "VFR_HUD", "GLOBAL_POSITION_INT", "SERVO_OUTPUT_RAW",
                 "RC_CHANNELS", "SYS_STATUS", "SYSTEM_TIME", "SIM_STATE")
MESSAGE_IDS = {name: getattr(mavlink, "MAVLINK_MSG_ID_" + name) for name in MESSAGE_NAMES}
MESSAGE_BY_ID = {number: name for name, number in MESSAGE_IDS.items()}
HEARTBEAT_INTERVAL_S = 1.0

#: REQUEST_DATA_STREAM groups by MAV_DATA_STREAM number (brov2_hybrid.link.ardusub.STREAM_GROUPS).
STREAM_GROUPS = {getattr(mavlink, "MAV_DATA_STREAM_" + group): names for group, names in ardusub.STREAM_GROUPS.items()}

EARTH_RADIUS_M = 6378137.0  # WGS-84 equatorial radius, flat-earth position offsets
_SENSORS = (mavlink.MAV_SYS_STATUS_SENSOR_3D_GYRO | mavlink.MAV_SYS_STATUS_SENSOR_3D_ACCEL
            | mavlink.MAV_SYS_STATUS_SENSOR_3D_MAG | mavlink.MAV_SYS_STATUS_SENSOR_ABSOLUTE_PRESSURE
            | mavlink.MAV_SYS_STATUS_SENSOR_MOTOR_OUTPUTS | mavlink.MAV_SYS_STATUS_AHRS)
_MG_PER_MS2 = 1000.0  # milli-g per g (divided by g below)


class StreamScheduler(object):
    """Message intervals and next due times of one link (simulated seconds)."""

    def __init__(self, default_rates_hz, t_s):
        self.default_intervals = {"HEARTBEAT": HEARTBEAT_INTERVAL_S}
        for name, rate in default_rates_hz.items():
            if name not in MESSAGE_IDS:
                raise KeyError(name)
            self.default_intervals[name] = (1.0 / rate) if rate > 0 else None
        self.intervals = {}
        self.next_due = {}
        for name, interval in self.default_intervals.items():
            self.set_interval(name, interval, t_s)

    def set_interval(self, name, interval_s, t_s):
        """Send ``name`` every ``interval_s`` seconds from ``t_s`` on; None stops it."""
        if interval_s is None or interval_s <= 0:
            self.intervals.pop(name, None)
            self.next_due.pop(name, None)
            return
        self.intervals[name] = float(interval_s)
        self.next_due[name] = t_s

    def interval_s(self, name):
        """Interval [s] of message ``name``, None when it is not streamed."""
        return self.intervals.get(name)

    def next_due_s(self):
        """Earliest next due time [s] over the streamed messages (inf when none is)."""
        return min(self.next_due.values()) if self.next_due else math.inf

    def pop_due(self, t_s, tolerance_s=1e-9):
        """Names due at ``t_s`` (their next due time moves one interval on)."""
        due = [name for name, when in self.next_due.items() if when <= t_s + tolerance_s]
        for name in due:
            interval = self.intervals[name]
            when = self.next_due[name] + interval
            self.next_due[name] = when if when > t_s else t_s + interval
        return due


class Sample(object):
    """One tick's sensor readings, computed lazily and shared by the messages of the tick."""

    def __init__(self, plant):
        self.plant = plant
        self.t_s = plant.t_s
        self._attitude = None
        self._specific_force = None
        self._eta = None

    @property
    def eta(self):
        """True pose (x, y, z [m] NED, roll, pitch, yaw [rad]) of the model at this tick."""
        if self._eta is None:
            self._eta = self.plant.eta
        return self._eta

    @property
    def attitude(self):
        """Measured (eta2, nu2), noisy if the model's noise is on."""
        if self._attitude is None:
            self._attitude = self.plant.measured_attitude()
        return self._attitude

    @property
    def specific_force(self):
        """Accelerometer reading [m/s^2], body FRD (the model's specific force)."""
        if self._specific_force is None:
            self._specific_force = self.plant.specific_force_body()
        return self._specific_force


def _u16(value):
    """Round and clamp to a MAVLink uint16 field (0..65535; the field's range, not CHAN_NOCHANGE)."""
    return int(min(0xFFFF, max(0, round(value))))


def _i16(value):
    return int(min(32767, max(-32768, round(value))))


def boot_ms(sample):
    """The ``time_boot_ms`` of a message sampled at ``sample`` (simulated time, truncated to ms)."""
    return int(sample.t_s * 1000.0) & 0xFFFFFFFF


def boot_s(sample):
    """The vehicle time [s] a receiver reads from the ``time_boot_ms`` of ``sample``'s messages."""
    return boot_ms(sample) / 1000.0


class TelemetryBuilder(object):
    """Builds the MAVLink messages of :data:`MESSAGE_NAMES` from model and firmware state.

    Parameters
    ----------
    encoder : pymavlink MAVLink object
        Encodes with the vehicle's system/component id.
    link_config : LinkConfig
    body : brov2_hybrid.vehicle.vehicle_file.BodyParams
        Water density and gravity for the pressure sensor.
    wall_unix_at_boot_s : float
        Unix time [s] that simulated time 0 corresponds to (SYSTEM_TIME).
    """

    def __init__(self, encoder, link_config, body, wall_unix_at_boot_s):
        self.encoder = encoder
        self.config = link_config
        self.rho_g = body.water_density_kg_m3 * body.gravity_m_s2
        self.gravity_m_s2 = body.gravity_m_s2
        self.unix_at_boot_s = wall_unix_at_boot_s
        self.mag_ned_mgauss = 1000.0 * np.asarray(link_config.earth_magnetic_field_ned_gauss, dtype=float)
        self._builders = {name: getattr(self, "_" + name.lower()) for name in MESSAGE_NAMES}

    def build(self, name, sample, firmware):
        """The MAVLink message ``name`` for this tick's ``sample`` and ``firmware`` state."""
        return self._builders[name](sample, firmware)

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _boot_ms(sample):
        return boot_ms(sample)

    def _lat_lon_alt(self, sample):
        north, east, down = sample.eta[:3]
        lat0 = math.radians(self.config.home_lat_deg)
        lat = self.config.home_lat_deg + math.degrees(north / EARTH_RADIUS_M)
        lon = self.config.home_lon_deg + math.degrees(east / (EARTH_RADIUS_M * max(1e-6, math.cos(lat0))))
        return lat, lon, self.config.home_alt_m - down

    def _imu(self, sample):
        eta2, nu2 = sample.attitude
        acc_mg = sample.specific_force / self.gravity_m_s2 * _MG_PER_MS2
        gyro_mrad = np.asarray(nu2) * 1000.0
        mag = J1(eta2).T @ self.mag_ned_mgauss
        return [_i16(a) for a in acc_mg], [_i16(g) for g in gyro_mrad], [_i16(m) for m in mag]

    # ---------------------------------------------------------------- messages
    def _heartbeat(self, sample, fw):
        base = mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
        if fw.mode == MANUAL:
            base |= mavlink.MAV_MODE_FLAG_MANUAL_INPUT_ENABLED
        if fw.armed:
            base |= mavlink.MAV_MODE_FLAG_SAFETY_ARMED
        if fw.failsafe_pilot_input:
            status = mavlink.MAV_STATE_CRITICAL
        else:
            status = mavlink.MAV_STATE_ACTIVE if fw.armed else mavlink.MAV_STATE_STANDBY
        return self.encoder.heartbeat_encode(mavlink.MAV_TYPE_SUBMARINE, mavlink.MAV_AUTOPILOT_ARDUPILOTMEGA,
                                             base, fw.mode, status)

    def _attitude(self, sample, fw):
        eta2, nu2 = sample.attitude
        return self.encoder.attitude_encode(self._boot_ms(sample), *[float(a) for a in eta2],
                                            *[float(a) for a in nu2])

    def _attitude_quaternion(self, sample, fw):
        eta2, nu2 = sample.attitude
        x, y, z, w = quaternion_from_euler(eta2)
        return self.encoder.attitude_quaternion_encode(self._boot_ms(sample), float(w), float(x), float(y),
                                                       float(z), *[float(a) for a in nu2])

    def _raw_imu(self, sample, fw):
        acc, gyro, mag = self._imu(sample)
        return self.encoder.raw_imu_encode(int(sample.t_s * 1e6), *acc, *gyro, *mag)

    def _scaled_imu2(self, sample, fw):
        acc, gyro, mag = self._imu(sample)
        return self.encoder.scaled_imu2_encode(self._boot_ms(sample), *acc, *gyro, *mag)

    def _scaled_pressure2(self, sample, fw):
        depth = max(0.0, sample.plant.depth_m())
        pressure_hpa = (self.config.atmospheric_pressure_pa + self.rho_g * depth) / 100.0
        return self.encoder.scaled_pressure2_encode(self._boot_ms(sample), pressure_hpa, 0.0,
                                                    int(round(self.config.water_temperature_deg_c * 100)))

    def _vfr_hud(self, sample, fw):
        velocity = sample.plant.velocity_ned_m_s()
        heading = int(math.degrees(wrap_angle(sample.eta[5])) % 360.0)
        # VFR_HUD.throttle: the throttle channel as a percentage of its full range.
        rc = fw.rc_map
        low_us = rc.neutral_us - rc.half_range_us
        throttle = 100.0 * (fw.rc_channels(sample.t_s)[rc.channels[2] - 1] - low_us) / (2.0 * rc.half_range_us)
        altitude_m = self._lat_lon_alt(sample)[2]     # above sea level (GCS_MAVLINK::vfr_hud_alt)
        return self.encoder.vfr_hud_encode(0.0, float(math.hypot(velocity[0], velocity[1])), heading,
                                           int(min(100, max(0, round(throttle)))),
                                           float(altitude_m), float(-velocity[2]))

    def _global_position_int(self, sample, fw):
        lat, lon, alt = self._lat_lon_alt(sample)
        velocity = sample.plant.velocity_ned_m_s() * 100.0
        heading = int(round(math.degrees(wrap_angle(sample.eta[5])) * 100.0)) % 36000
        return self.encoder.global_position_int_encode(
            self._boot_ms(sample), int(round(lat * 1e7)), int(round(lon * 1e7)), int(round(alt * 1000)),
            int(round(-sample.eta[2] * 1000)), _i16(velocity[0]), _i16(velocity[1]), _i16(velocity[2]), heading)

    def _servo_output_raw(self, sample, fw):
        # servo1_raw..servo8_raw: one per motor, outputs past the last motor read 0.
        pwm = [_u16(p) for p in fw.motor_pwm_us] + [0] * (SERVO_OUTPUTS - len(fw.motor_pwm_us))
        return self.encoder.servo_output_raw_encode(int(sample.t_s * 1e6) & 0xFFFFFFFF, 0, *pwm)

    def _rc_channels(self, sample, fw):
        channels = [_u16(c) for c in fw.rc_channels(sample.t_s)]
        return self.encoder.rc_channels_encode(self._boot_ms(sample), len(channels), *channels, 255)

    def _sys_status(self, sample, fw):
        millivolts = int(round(self.config.battery_voltage_v * 1000))
        return self.encoder.sys_status_encode(_SENSORS, _SENSORS, _SENSORS, 0, millivolts, -1, -1,
                                              0, 0, 0, 0, 0, 0)

    def _system_time(self, sample, fw):
        unix_us = int((self.unix_at_boot_s + sample.t_s) * 1e6)
        return self.encoder.system_time_encode(unix_us, self._boot_ms(sample))

    def _sim_state(self, sample, fw):
        plant = sample.plant
        eta, nu = sample.eta, plant.nu
        x, y, z, w = plant.quaternion_ned_frd()
        lat, lon, alt = self._lat_lon_alt(sample)
        acc = sample.specific_force
        velocity = plant.velocity_ned_m_s()
        return self.encoder.sim_state_encode(
            float(w), float(x), float(y), float(z), float(eta[3]), float(eta[4]), float(eta[5]),
            float(acc[0]), float(acc[1]), float(acc[2]), float(nu[3]), float(nu[4]), float(nu[5]),
            float(lat), float(lon), float(alt), 0.0, 0.0,
            float(velocity[0]), float(velocity[1]), float(velocity[2]),
            int(round(lat * 1e7)), int(round(lon * 1e7)))
