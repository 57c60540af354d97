"""Helpers of the simulated firmware's tests: a Firmware of the vehicle with changed parameters, RC
channels by number and Algorithm 2's expected motor PWMs.
"""
import dataclasses

import numpy as np

from brov2_hybrid.link.ardusub import CHAN_NOCHANGE
from brov2_hybrid.vehicle.rc import load_rc_map
from brov2_hybrid.sim.config import load_firmware_config
from brov2_hybrid.sim.firmware import Firmware

GCS = 255
NEUTRAL = [1500] * 8


def firmware(vehicle, **changes):
    config = dataclasses.replace(load_firmware_config(), **changes)
    return Firmware(vehicle, config)


def channels(**pwm_by_channel):
    """18 override values, NOCHANGE except the given ones (ch4=1600 -> chan4)."""
    values = [CHAN_NOCHANGE] * 8 + [0] * 10
    for name, pwm in pwm_by_channel.items():
        values[int(name[2:]) - 1] = pwm
    return values


def expected_pwm(vehicle, mixer, rc):
    """Whole microseconds as each firmware writes them: stock ArduSub truncates
    (AP_Motors6DOF::calc_thrust_to_pwm returns a float as int16_t), Algorithm 2 rounds."""
    u = load_rc_map().u_from_pwm(rc)
    whole = np.floor if mixer == "stock" else np.rint
    return [int(p) for p in whole(vehicle.mixer(mixer).pwm(u))]
