"""The autopilot's live-tunable settings: one table between dynamic_reconfigure and the controller.

``cfg/HybridAutopilot.cfg`` declares each knob (name, type, range, description; its
defaults are read from ``params/controller.yaml``); ``nodes/control_law`` seeds the
reconfigure server with :func:`from_settings` and applies a reconfigure request with
:func:`configure_kwargs` (keywords of :meth:`brov2_hybrid.control.law.HybridController.configure`).
The names below are the cfg's, and ``test/test_live_settings.py`` keeps the two equal.
"""
import math

#: Knob name -> (ControllerParams / HybridController.configure keyword, to cfg, from cfg).
#: The three axis switches share the keyword closed_loop_enabled (roll, pitch, yaw).
_SCALAR = {
    "omega_d_rad_s": "omega_d_rad_s",
    "kappa": "kappa",
    "feedforward_enabled": "feedforward_enabled",
    "linear_scale": "linear_scale",
    "rate_window": "rate_window",
    "integral_enabled": "integral_enabled",
    "integral_ratio": "integral_ratio",
    "drag_feedforward_enabled": "drag_feedforward_enabled",
    "depth_hold_enabled": "depth_hold_enabled",
    "heave_omega_rad_s": "heave_omega_rad_s",
    "reference_feedforward_enabled": "reference_feedforward_enabled",
    "reference_filter_omega_rad_s": "reference_filter_omega_rad_s",
    "delay_compensation_enabled": "delay_compensation_enabled",
    "delay_compensation_command_delay_s": "delay_compensation_command_delay_s",
}
AXIS_SWITCHES = ("roll_enabled", "pitch_enabled", "yaw_enabled")
BAND = ("integral_band_deg", "integral_band_rad")     # cfg in degrees, controller in rad

#: Every live-tunable knob, by its dynamic_reconfigure name.
NAMES = tuple(_SCALAR) + AXIS_SWITCHES + (BAND[0],)


def from_settings(settings):
    """Knob values from a :class:`brov2_hybrid.params.ControllerParams` (controller.yaml)."""
    values = {name: getattr(settings, key) for name, key in _SCALAR.items()}
    values.update(zip(AXIS_SWITCHES, (bool(b) for b in settings.closed_loop_enabled)))
    values[BAND[0]] = math.degrees(getattr(settings, BAND[1]))
    return values


def configure_kwargs(config):
    """Keywords of ``HybridController.configure`` from a knob mapping (a reconfigure request).

    ``config`` must hold every name in :data:`NAMES` (KeyError naming the knob otherwise).
    """
    kwargs = {key: config[name] for name, key in _SCALAR.items()}
    kwargs["closed_loop_enabled"] = [bool(config[name]) for name in AXIS_SWITCHES]
    kwargs[BAND[1]] = math.radians(config[BAND[0]])
    return kwargs


#: The knobs that reach the on-board script live (placement:=onboard): omega_d, as its HYB_OMEGA_D
#: parameter (brov2_hybrid.onboard.uplink). Every other setting is written into the script when it is
#: generated (brov2_hybrid.onboard.lua_script, from controller.yaml) and is fixed for the run.
ON_BOARD_LIVE = ("omega_d_rad_s",)


def not_live_on_board(before, after):
    """The knobs (sorted names) whose value differs between two knob mappings and that do not reach the
    on-board script live (not in :data:`ON_BOARD_LIVE`): with placement:=onboard, such a change acts on
    nothing and must be said. A mapping of None (no settings yet) differs in nothing."""
    if before is None or after is None:
        return []
    return sorted(name for name in NAMES if name not in ON_BOARD_LIVE and before.get(name) != after.get(name))
