"""Settings of the live pilot input: ``params/joystick.yaml`` read into :class:`JoystickSettings`.

Used by :mod:`brov2_hybrid.pilot.live_input` (``nodes/joy_input``) and the stick
shaping (:mod:`brov2_hybrid.pilot.stick_shaping`). Every key is read through
:class:`brov2_hybrid.params.Section`: a missing key, a wrong type or a value out of
range raises :class:`~brov2_hybrid.errors.ParameterError` naming ``file:key``
(docs/flying.md "Flying with a joystick or a headset").
"""
from dataclasses import dataclass, field

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, LINEAR_DOF_NAMES

DEFAULT_JOYSTICK_FILE = "joystick.yaml"
#: Angular DOFs, in the order of eta2d (NED/FRD roll, pitch, yaw).
ANGULAR = ANGULAR_DOF_NAMES
#: Linear DOFs, in the order of u_linear (surge, sway, heave).
LINEAR = LINEAR_DOF_NAMES
#: Buttons whose presses are events (the deadman is held, not pressed).
TOGGLE_BUTTONS = ("arm_toggle", "roll_enable_toggle", "pitch_enable_toggle", "yaw_enable_toggle")


@dataclass
class AxisMap:
    """Where one DOF's stick is in ``sensor_msgs/Joy.axes`` and its sense."""

    index: int          # index in sensor_msgs/Joy.axes
    sign: float         # +1, or -1 when inverted


@dataclass
class JoystickSettings:
    """The checked contents of ``params/joystick.yaml``."""

    axes: dict                      # name (roll..heave) -> AxisMap
    buttons: dict                   # deadman / toggles -> index in Joy.buttons
    dead_zone: float                # [-] of full deflection
    expo: float                     # [-] in [0, 1]
    max_rate_rad_s: np.ndarray      # (3,) desired-rate at full stick (roll, pitch, yaw)
    bound_rad: np.ndarray           # (2,) |roll|, |pitch| limit of eta2d
    takeover_threshold: float       # [-] raw deflection that hands an axis to the pilot
    release_threshold: float        # [-] raw deflection below which it is handed back
    joy_timeout_s: float            # joystick silent longer -> hold, linear zero
    pose_timeout_s: float           # headset silent longer -> hold its last attitude
    max_step_s: float               # longest dt integrated in one step (a stalled clock)
    source: str = field(default="")


def _axis_map(axes, name):
    """:class:`AxisMap` of ``axes.<name>``: ``{index: N >= 0, invert: true|false (default false)}``."""
    entry = axes.sub(name)
    invert = entry.boolean("invert") if "invert" in entry else False
    return AxisMap(entry.integer("index", 0), -1.0 if invert else 1.0)


def load_joystick_settings(path=None):
    """Read and validate ``params/joystick.yaml`` (or ``path``); errors name file and key."""
    path = path or paths.params_path(DEFAULT_JOYSTICK_FILE)
    top = Section(load_yaml(path), path, None)
    axes_section = top.sub("axes")
    axes = {name: _axis_map(axes_section, name) for name in ANGULAR + LINEAR}
    buttons_section = top.sub("buttons")
    buttons = {name: buttons_section.integer(name, 0) for name in ("deadman",) + TOGGLE_BUTTONS}
    rates, bounds = top.sub("max_rate_deg_s"), top.sub("bound_deg")
    takeover = top.number("takeover_threshold", 0.0, 1.0, strict_min=True)
    release = top.number("release_threshold", 0.0, 1.0)
    dead_zone = top.number("dead_zone", 0.0, 0.99)
    if not release < takeover:
        raise ParameterError("%s: release_threshold (%g) must be below takeover_threshold (%g)"
                             % (path, release, takeover))
    if not dead_zone <= release:
        raise ParameterError("%s: dead_zone (%g) must not exceed release_threshold (%g): a centred stick "
                             "must hand the axis back" % (path, dead_zone, release))
    return JoystickSettings(
        axes=axes, buttons=buttons, dead_zone=dead_zone,
        expo=top.number("expo", 0.0, 1.0),
        max_rate_rad_s=np.radians([rates.number(k, 0.0, 360.0, strict_min=True) for k in ANGULAR]),
        bound_rad=np.radians([bounds.number(k, 0.0, 80.0, strict_min=True) for k in ANGULAR[:2]]),
        takeover_threshold=takeover, release_threshold=release,
        joy_timeout_s=top.positive("joy_timeout_s"),
        pose_timeout_s=top.positive("pose_timeout_s"),
        max_step_s=top.positive("max_step_s"),
        source=str(path))
