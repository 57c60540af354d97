"""ArduSub RC input channels <-> normalised command u (docs/DESIGN.md section 9).

ArduSub reads pilot input on RC channels 1-6 = pitch, roll, throttle, yaw, forward,
lateral (PWM 1100..1900 us, neutral 1500). Directions: roll + = right side down,
pitch + = nose up, yaw + = clockwise from above, forward + = ahead, lateral + = right,
throttle + = up. Our u is (surge, sway, heave, roll, pitch, yaw) in FRD, so every DOF
maps with sign +1 except heave (throttle = -heave). The mapping lives in the vehicle
file (``params/vehicles/<name>.yaml``, ``rc_input``); :func:`load_rc_map` reads it.

Channel PWMs are whole microseconds, so u passes through a 1/400 quantisation on its
way to the vehicle, as it does through MAVROS and ArduSub.
"""
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.link.ardusub import CHAN_NOCHANGE, CHAN_RELEASE, PWM_HALF_RANGE_US, PWM_NEUTRAL_US
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.validate import as_vector
from brov2_hybrid.params import Section, load_yaml, vehicle_file


@dataclass(frozen=True)
class RCMap:
    """Which RC channel (1-based) carries each DOF of u, and with which sign."""

    channels: tuple          # (6,) channel numbers for surge, sway, heave, roll, pitch, yaw
    signs: np.ndarray        # (6,) +1 or -1
    neutral_us: float = PWM_NEUTRAL_US
    half_range_us: float = PWM_HALF_RANGE_US

    def pwm_from_u(self, u):
        """u (6,) in [-1, 1] -> {channel: PWM us (int)} for the six channels."""
        pwm = np.empty(6)
        rc_from_u(as_vector(u, 6, "u"), self.signs, self.neutral_us, self.half_range_us, pwm)
        return {ch: int(p) for ch, p in zip(self.channels, pwm.tolist())}

    def channel_array_from_u(self, u, n_channels=8, fill=0):
        """u (6,) -> list of ``n_channels`` PWMs indexed from channel 1; others = ``fill``."""
        out = [fill] * n_channels
        for ch, pwm in self.pwm_from_u(u).items():
            out[ch - 1] = pwm
        return out

    def u_from_pwm(self, channel_pwm):
        """{channel: PWM us} or a sequence indexed from channel 1 -> u (6,) in [-1, 1].

        Missing channels and PWM 0 / 65535 (MAVLink "release" / "no change") read as neutral.
        """
        get = channel_pwm.get if isinstance(channel_pwm, dict) else (
            lambda ch, default: channel_pwm[ch - 1] if ch - 1 < len(channel_pwm) else default)
        pwm = [get(ch, CHAN_RELEASE) for ch in self.channels]
        u = np.empty(6)
        u_from_rc(np.array([CHAN_RELEASE if p is None else float(p) for p in pwm]), self.signs, self.neutral_us,
                  self.half_range_us, u)
        return u


def rc_from_u(u, signs, neutral_us, half_range_us, out):
    """Channel PWMs (6,) [us, whole numbers] into ``out`` for u (6,), per DOF (a kernel):
    rint(neutral + half_range sign clip(u, -1, 1)).

    Run as Python by :class:`RCMap` and the output stages (a few microseconds; a node loads
    no numba for it), compiled inside the in-process loop's run
    (:mod:`brov2_hybrid.loop.kernel`)."""
    for k in range(6):
        out[k] = np.rint(neutral_us + half_range_us * signs[k] * min(max(u[k], -1.0), 1.0))


def u_from_rc(pwm, signs, neutral_us, half_range_us, out):
    """u (6,) in [-1, 1] into ``out`` from channel PWMs (6,) per DOF (a kernel): sign (PWM -
    neutral) / half_range, clipped; CHAN_RELEASE and CHAN_NOCHANGE read as 0."""
    for k in range(6):
        p = pwm[k]
        v = 0.0 if (p == CHAN_RELEASE or p == CHAN_NOCHANGE) else signs[k] * (p - neutral_us) / half_range_us
        out[k] = min(max(v, -1.0), 1.0)


def load_rc_map(name_or_path=None):
    """Read the ``rc_input`` section of a vehicle file (a name or a path; default: the Heavy)."""
    path = vehicle_file(name_or_path)
    s = Section(load_yaml(path), path, "rc_input")
    channels = s.raw("channels")
    # Channels 1-6: ArduSub's pilot inputs (RCMAP defaults), the log's rc1..rc6 columns and
    # the in-process loop's override read exactly these.
    if not (isinstance(channels, list) and len(channels) == 6
            and all(isinstance(c, int) and 1 <= c <= 6 for c in channels) and len(set(channels)) == 6):
        raise ParameterError("%s:rc_input.channels: expected the 6 channels 1..6 in some order (ArduSub's "
                             "pilot inputs; the log's rc1..rc6 columns), got %r" % (path, channels))
    signs = s.vector("signs", 6)
    if not np.all(np.isin(signs, (-1.0, 1.0))):
        raise ParameterError("%s:rc_input.signs: expected each sign to be 1 or -1" % path)
    return RCMap(tuple(channels), signs, float(s.positive("pwm_neutral_us")), float(s.positive("pwm_half_range_us")))
