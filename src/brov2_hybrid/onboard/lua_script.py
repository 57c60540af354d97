"""The hybrid on board: the Lua script that runs the law and Algorithm 2 inside stock ArduSub.

:func:`render_script` writes ``hybrid_onboard.lua.template`` out with every number from the
project's single sources (docs/onboard.md):

* the vehicle file (:func:`brov2_hybrid.vehicle.vehicle_file.load_vehicle`): tau_max, the
  allocator's force matrix F (the paper's T-dagger: forces = F (tau_max u)), the T200 table's
  inverse (force -> m*, :class:`~brov2_hybrid.vehicle.thrust_table.ThrustTable`), the PWM range;
* the controller (:class:`~brov2_hybrid.control.law.HybridController` built from
  ``controller.yaml``): I + M_A, B-check and kappa (the gains follow from omega_d on board, by
  Eq. A17/A18/23, so HYB_OMEGA_D retunes them live), the buoyancy feed-forward's lever
  W r_G - B r_B, the per-axis enables (a passive DOF stays open loop), the linear scale;
* ``params/onboard.yaml`` (:class:`OnboardSettings`): rate, timeouts, modes, MAVLink message,
  parameter names, the pilot takeover (the vehicle file's ``rc_input`` map reads the sticks).

Numbers are written with Python's shortest round-trip ``repr``, so Lua reads the same doubles.
The script runs the paper's PD law with the buoyancy feed-forward and, as controller.yaml sets them,
the drag or reference feed-forward and the integral action (law_kernels' arithmetic, ported line by
line). The depth hold (ArduSub's depth is not read by the script) and the delay compensation (no
tether delay to compensate on board) are not on board (:data:`NOT_ON_BOARD`): a controller that
enables one is refused, as is an allocator that is not linear (no force matrix).
"""
import math
import os
import string
from dataclasses import dataclass

from brov2_hybrid import params, paths
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.physics.kinematics import GIMBAL_LOCK_COS
from brov2_hybrid.validate import as_finite, as_integer
from brov2_hybrid.vehicle.thrust_table import ZERO_FORCE_TOLERANCE_N

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hybrid_onboard.lua.template")
ONBOARD_FILE = "onboard.yaml"
#: Controller options the script does not run (controller.yaml keys): refused when on.
NOT_ON_BOARD = ("depth_hold_enabled", "delay_compensation_enabled")


@dataclass(frozen=True)
class OnboardSettings:
    """The ``onboard`` section of ``params/onboard.yaml`` (its comments say what each is)."""

    source: str
    script_name: str
    rate_hz: float
    override_timeout_ms: int
    desired_timeout_s: float
    desired_lost_s: float
    active_modes: tuple
    error_retry_s: float
    report_period_s: float
    desired_message_id: int
    desired_array_id: int
    message_queue: int
    param_table_key: int
    param_prefix: str
    motor_function_first: int
    pilot_takeover: bool
    ardusub_params: dict

    @property
    def period_ms(self):
        """The loop period the script asks ArduSub for [ms] (whole milliseconds)."""
        return int(round(1000.0 / self.rate_hz))


def load_onboard_settings(path=None):
    """:class:`OnboardSettings` from ``params/onboard.yaml`` (or ``path``), every key checked."""
    path = path or paths.params_path(ONBOARD_FILE)
    s = params.Section(params.load_yaml(path), path, "onboard")
    rate_hz = s.number("rate_hz", 1.0, 1000.0)
    timeout_ms = s.integer("override_timeout_ms", 1, 65535)
    if timeout_ms <= 1000.0 / rate_hz:
        raise ParameterError("%s: %d ms must exceed the loop period %.1f ms (or every override lapses between turns)"
                             % (s.key("override_timeout_ms"), timeout_ms, 1000.0 / rate_hz))
    hold_s, lost_s = s.positive("desired_timeout_s"), s.positive("desired_lost_s")
    if lost_s <= hold_s:
        raise ParameterError("%s: %g s must exceed desired_timeout_s %g s (hold first, then neutral)"
                             % (s.key("desired_lost_s"), lost_s, hold_s))
    modes = s.raw("active_modes")
    if not isinstance(modes, list) or not modes:
        raise ParameterError("%s: expected a non-empty list of ArduSub mode numbers, got %r"
                             % (s.key("active_modes"), modes))
    modes = tuple(as_integer(m, "%s[%d]" % (s.key("active_modes"), i), 0, 255) for i, m in enumerate(modes))
    prefix = s.string("param_prefix")
    if not (prefix.isupper() and prefix.endswith("_") and len(prefix) <= 6):
        raise ParameterError("%s: expected an upper-case prefix ending in '_' of at most 6 characters, got %r"
                             % (s.key("param_prefix"), prefix))
    ardusub = s.raw("ardusub_params")
    if not isinstance(ardusub, dict) or not ardusub:
        raise ParameterError("%s: expected a mapping of ArduSub parameter names to values, got %r"
                             % (s.key("ardusub_params"), ardusub))
    ardusub = {str(k): as_finite(v, "%s.%s" % (s.key("ardusub_params"), k)) for k, v in ardusub.items()}
    return OnboardSettings(
        source=path, script_name=s.string("script_name"), rate_hz=rate_hz, override_timeout_ms=timeout_ms,
        desired_timeout_s=hold_s, desired_lost_s=lost_s, active_modes=modes,
        error_retry_s=s.positive("error_retry_s"), report_period_s=s.positive("report_period_s"),
        desired_message_id=s.integer("desired_message_id", 0, (1 << 24) - 1),
        desired_array_id=s.integer("desired_array_id", 0, 65535),
        message_queue=s.integer("message_queue", 1, 25), param_table_key=s.integer("param_table_key", 0, 200),
        param_prefix=prefix, motor_function_first=s.integer("motor_function_first", 1, 255),
        pilot_takeover=s.boolean("pilot_takeover"), ardusub_params=ardusub)


def lua_number(x):
    """One float as Lua reads it back to the same double (shortest round-trip repr)."""
    x = float(x)
    if not math.isfinite(x):
        raise ParameterError("the Lua script: expected finite numbers, got %r" % x)
    return repr(x)


def lua_list(values):
    """A Lua array of floats."""
    return "{" + ", ".join(lua_number(v) for v in values) + "}"


def lua_matrix(rows):
    """A Lua array of arrays of floats, one per row."""
    return "{" + ", ".join(lua_list(r) for r in rows) + "}"


def check_on_board(controller_settings):
    """ParameterError naming the controller file and key of an option the script does not run."""
    for key in NOT_ON_BOARD:
        if getattr(controller_settings, key):
            raise ParameterError("%s:controller.%s: the on-board script does not run this option (it runs the "
                                 "paper's PD law, the drag and reference feed-forward and the integral action); "
                                 "expected false, got true (docs/onboard.md)" % (controller_settings.source, key))


def script_values(vehicle, controller_settings, onboard):
    """The template's values ({name: Lua text}) for a vehicle, controller settings and :class:`OnboardSettings`."""
    check_on_board(controller_settings)
    F = vehicle.allocator.force_matrix
    if F is None:
        raise ParameterError("%s: allocator %r is not linear (no force matrix); the on-board script runs "
                             "forces = F (tau_max u) only" % (vehicle.source, vehicle.allocator.name))
    law = HybridController(vehicle.body, controller_settings, vehicle.tau_max, vehicle.passive_dofs)
    settings = law.kernel_settings()
    lever, enabled = settings[4], settings[10]
    flag = {True: "true", False: "false"}
    table, thr, rc = vehicle.table, vehicle.thrusters, vehicle.rc_map
    return {
        "sources": "%s, %s and %s" % (os.path.basename(vehicle.source), os.path.basename(controller_settings.source),
                                      os.path.basename(onboard.source)),
        "vehicle": vehicle.name,
        "n_thrusters": str(vehicle.n_thrusters),
        "tau_max": lua_list(vehicle.tau_max),
        "force_matrix": lua_matrix(F),
        "inv_force": lua_list(table.inv_force_n),
        "inv_star": lua_list(table.inv_star),
        "inv_slopes": lua_list(table.inv_slopes),
        "zero_force_n": lua_number(ZERO_FORCE_TOLERANCE_N),
        "neutral_us": lua_number(table.neutral_us),
        "half_range_us": lua_number(table.half_range_us),
        "pwm_min_us": lua_number(thr.pwm_min_us),
        "pwm_max_us": lua_number(thr.pwm_max_us),
        "total_inertia": lua_list(law.total_inertia),
        "b_check": lua_list(law.b_check),
        "kappa": lua_number(law.gains.kappa),
        "omega_d": lua_number(law.gains.omega_d_rad_s),
        "ff_lever": "false" if math.isnan(lever[0]) else lua_list(lever),
        "drag": lua_matrix(law.drag_model),
        "drag_feedforward": flag[law.drag_feedforward_enabled],
        "reference_feedforward": flag[law.reference_feedforward_enabled],
        "reference_omega": lua_number(law.reference_filter.omega_rad_s),
        "reference_max_gap_s": lua_number(law.reference_filter.max_gap_s),
        "integral": flag[law.integral_enabled],
        "integral_ratio": lua_number(law.integral_ratio),
        "integral_band_rad": lua_number(law.integral.band_rad) if math.isfinite(law.integral.band_rad) else "math.huge",
        "linear_scale": lua_number(law.linear_scale),
        "enabled": lua_list(enabled),
        "gimbal_lock_cos": lua_number(GIMBAL_LOCK_COS),
        "period_ms": str(onboard.period_ms),
        "override_timeout_ms": str(onboard.override_timeout_ms),
        "desired_timeout_ms": lua_number(1000.0 * onboard.desired_timeout_s),
        "desired_lost_ms": lua_number(1000.0 * onboard.desired_lost_s),
        "active_modes": "{" + ", ".join("[%d] = true" % m for m in onboard.active_modes) + "}",
        "error_retry_ms": str(int(round(1000.0 * onboard.error_retry_s))),
        "report_period_ms": lua_number(1000.0 * onboard.report_period_s),
        "desired_message_id": str(onboard.desired_message_id),
        "desired_array_id": str(onboard.desired_array_id),
        "message_queue": str(onboard.message_queue),
        "param_table_key": str(onboard.param_table_key),
        "param_prefix": onboard.param_prefix,
        "motor_function_first": str(onboard.motor_function_first),
        "pilot_takeover": flag[onboard.pilot_takeover],
        "rc_channels": "{" + ", ".join(str(int(c)) for c in rc.channels) + "}",
        "rc_signs": lua_list(rc.signs),
        "rc_neutral_us": lua_number(rc.neutral_us),
        "rc_half_range_us": lua_number(rc.half_range_us),
    }


def render_script(vehicle, controller_settings, onboard):
    """The Lua script's text for a vehicle, controller settings and :class:`OnboardSettings`."""
    with open(TEMPLATE) as handle:
        return string.Template(handle.read()).substitute(script_values(vehicle, controller_settings, onboard))


def write_script(path, vehicle, controller_settings, onboard):
    """Write :func:`render_script` to ``path``; return the path."""
    text = render_script(vehicle, controller_settings, onboard)
    with open(path, "w") as handle:
        handle.write(text)
    return path


def install_script(folder, vehicle, controller_settings, onboard):
    """Write the script into ``<folder>/scripts/`` (ArduSub's scripts folder when ``folder`` is its working
    directory, as in SITL); return its path. ArduSub also needs ``onboard.ardusub_params`` (SCR_ENABLE ...)."""
    scripts = os.path.join(folder, "scripts")
    os.makedirs(scripts, exist_ok=True)
    return write_script(os.path.join(scripts, onboard.script_name), vehicle, controller_settings, onboard)
