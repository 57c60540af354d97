"""The wrench the vehicle's firmware made of the RC override a log says was sent.

Through ROS the identification flight's log has the command at every row but the motor PWMs only
from the vehicle's 10 Hz SERVO_OUTPUT_RAW stream, too slow for the schedule's pulses. The wrench
the thrusters gave is then rebuilt from what the vehicle was sent, through the chain its
firmware runs (ArduSub's manual mode): the RC override channels in whole microseconds -> u ->
the firmware's mixer (Algorithm 2, the thrust-table mixer, rounds; stock ArduSub's linear
Algorithm 1 truncates) -> whole-microsecond motor PWMs -> the vehicle's thrust table -> T.

Taking ``u * tau_max`` instead leaves out the whole-microsecond steps of both PWMs, which near
neutral are a few per cent of the command, and for a vehicle on stock firmware the whole shape
of the thrust curve. Which firmware the vehicle runs is a setting (``params/identify.yaml``
``fit.firmware``); ``auto`` tells it from the log itself, by the motor PWM samples it holds,
with the mission's detector (:class:`~brov2_hybrid.vehicle.firmware_detector.FirmwareDetector`).
"""
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.errors import InputDataError
from brov2_hybrid.link.ardusub import CHAN_NOCHANGE, CHAN_RELEASE
from brov2_hybrid.tick_log.logfile import PWM_COLUMNS, RC_COLUMNS
from brov2_hybrid.vehicle.firmware_detector import FirmwareDetector
from brov2_hybrid.vehicle.firmware_output import FIRMWARES
from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc

#: ``fit.firmware`` values: a firmware of FIRMWARES, ``auto`` (told from the log) or ``command``
#: (the old model, u * tau_max, for a log without the RC columns)
AUTO, COMMAND = "auto", "command"
CHOICES = (AUTO, COMMAND) + tuple(FIRMWARES)


@dataclass
class FirmwareDetection:
    """``fit.firmware_detection`` of ``params/identify.yaml``: the mission's detector settings
    (:class:`~brov2_hybrid.vehicle.firmware_detector.FirmwareDetector`), on the log's clock."""

    tolerance_us: float
    votes: int
    window_s: float
    grace_s: float


def rc_rows(log):
    """(n, 6) RC override channels [us] as last sent at each row: a row without them (NaN) holds the
    row before's, NaN before the first (:func:`override_wrench` reads NaN and released channels as
    neutral). None when the log has no RC columns."""
    if not all(c in log for c in RC_COLUMNS):
        return None
    rc = np.column_stack([np.asarray(log[c], dtype=float) for c in RC_COLUMNS])
    last = None
    for k in range(len(rc)):
        if np.all(np.isfinite(rc[k])):
            last = rc[k]
        elif last is not None:
            rc[k] = last
    return rc


def firmware_from_log(log, vehicle, detection):
    """The firmware (a FIRMWARES name) whose mixer explains the log's motor PWM samples for the RC
    overrides sent before them, or None when the log cannot tell (no PWMs, no RC, too few votes)."""
    rc = rc_rows(log)
    n = vehicle.n_thrusters
    if rc is None or not all(c in log for c in PWM_COLUMNS[:n]):
        return None
    t = np.asarray(log["time_s"], dtype=float)
    pwm = np.column_stack([np.asarray(log[c], dtype=float) for c in PWM_COLUMNS[:n]])
    detector = FirmwareDetector(vehicle, vehicle.rc_map, detection.tolerance_us, detection.votes,
                                detection.window_s, detection.grace_s)
    previous = None
    for k in range(len(t)):
        if np.all(np.isfinite(rc[k])):
            detector.on_override(t[k], [int(c) for c in rc[k]])
        sample = pwm[k]
        if np.all(np.isfinite(sample)) and np.all(sample > 0) and (previous is None or np.any(sample != previous)):
            detector.on_outputs(t[k], sample)
            previous = sample
        if detector.firmware is not None:
            return detector.firmware
    return None


def override_wrench(rc, vehicle, firmware):
    """(n, 6) body wrench [N, N m] the thrusters give for the RC channels ``rc`` (n, 6) [us] through
    ``firmware``'s chain (module docstring). Rows with a channel not finite, or released, are the
    pilot's neutral for that channel."""
    if firmware not in FIRMWARES:
        raise InputDataError("identify: firmware %r is not one of %s" % (firmware, ", ".join(FIRMWARES)))
    rc = np.array(rc, dtype=float)
    neutral = vehicle.rc_map.neutral_us
    rc[~np.isfinite(rc) | np.isin(rc, (CHAN_RELEASE, CHAN_NOCHANGE))] = neutral
    rc = np.rint(rc).astype(int)
    mixer = vehicle.mixer(firmware)
    lo, hi = vehicle.thrusters.pwm_min_us, vehicle.thrusters.pwm_max_us
    unique, index = np.unique(rc, axis=0, return_inverse=True)
    pwm = np.array([motor_pwm_from_rc(list(row), vehicle.rc_map, mixer, lo, hi) for row in unique], dtype=float)
    wrench = vehicle.wrench_from_pwm(pwm)
    return wrench[np.asarray(index).reshape(-1)]
