"""Stick shaping of the live pilot input: axis map, dead zone and expo.

Per stick (settings: :class:`~brov2_hybrid.pilot.settings.JoystickSettings`):

1. axis map, :func:`mapped_sticks`: ``stick = sign * joy.axes[index]`` (sign -1 where
   ``params/joystick.yaml`` says ``invert``), clipped to [-1, 1];
2. dead zone and expo, :func:`shape`:
   ``s = (|x| - d) / (1 - d)`` outside the dead zone ``d`` (0 inside), then
   ``y = sign(x) * ((1 - e) * s + e * s**3)`` with expo ``e`` in [0, 1]
   (e = 0 linear, e = 1 cubic: fine control near centre, full value at the end stop).

What the shaped value drives (desired rates, open-loop commands, takeover) is
:class:`brov2_hybrid.pilot.live_input.PilotInput`.
"""
import math

from brov2_hybrid.errors import InputDataError


def shape(x, dead_zone, expo):
    """Dead zone then expo of one stick value in [-1, 1] (formula in the module docstring)."""
    x = max(-1.0, min(1.0, float(x)))
    mag = abs(x)
    if mag <= dead_zone:
        return 0.0
    s = (mag - dead_zone) / (1.0 - dead_zone)
    return math.copysign((1.0 - expo) * s + expo * s ** 3, x)


def mapped_sticks(settings, axes):
    """Raw stick deflections (after axis map and sign) by name; a missing index or a
    non-finite value raises :class:`InputDataError`."""
    out = {}
    for name, m in settings.axes.items():
        if m.index >= len(axes):
            raise InputDataError("Joy.axes has %d entries, the map needs axes[%d] for %s (%s)"
                                 % (len(axes), m.index, name, settings.source))
        v = float(axes[m.index])
        if not math.isfinite(v):
            raise InputDataError("Joy.axes[%d] (%s) is not finite: %r" % (m.index, name, v))
        out[name] = max(-1.0, min(1.0, m.sign * v))
    return out
