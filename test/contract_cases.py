"""The sample calls of the core modules' public callables, for test_input_contracts.py.

:func:`public_surface` enumerates the public functions, classes and methods of
:data:`CORE_MODULES` with ``inspect``; each needs a :class:`Case` in :func:`cases` (valid
sample arguments and which of them are numeric), so a new public callable without one fails
``test_every_public_callable_has_a_case``.
"""
import importlib
import inspect

import numpy as np

from brov2_hybrid import paths
from contract_cases_depth import depth_hold_cases
from contract_cases_rate import rate_estimate_cases


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


CORE_MODULES = ("vehicle.allocation", "control.law", "sim.delay", "control.gains", "physics.hydrostatics",
                "control.integral_action", "control.depth_hold", "physics.kinematics", "vehicle.mixers", "control.rate_estimate",
                "vehicle.rc", "vehicle.saturating_allocation", "vehicle.thrust_table")


def public_surface():
    """Names 'module.function', 'module.Class' (constructor) and 'module.Class.method'."""
    names = []
    for m in CORE_MODULES:
        mod = importlib.import_module("brov2_hybrid." + m)
        for name, obj in vars(mod).items():
            if _private(name) or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj):
                names.append("%s.%s" % (m, name))
            elif inspect.isclass(obj):
                names.append("%s.%s" % (m, name))
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and (inspect.isfunction(member)
                                               or isinstance(member, (classmethod, staticmethod))):
                        names.append("%s.%s.%s" % (m, name, attr))
    return sorted(names)


class Case(object):
    """How to call one public callable: ``target(fixtures)`` gives the callable,
    ``args(fixtures)`` a dict of valid keyword arguments, ``numeric`` the names of the
    arguments that must refuse NaN and a wrong shape (``shape_free``: any shape is valid,
    only NaN is checked). ``numeric=()`` declares a callable without numeric input."""

    def __init__(self, target, args, numeric=(), shape_free=(), note=""):
        self.target, self.args, self.numeric, self.shape_free, self.note = target, args, numeric, shape_free, note


class Fixtures(object):
    """Sample objects the cases are built from (loaded once)."""

    def __init__(self):
        from brov2_hybrid.params import load_controller_params
        from brov2_hybrid.vehicle.rc import load_rc_map
        from brov2_hybrid.vehicle.vehicle_file import load_vehicle
        self.vehicle = load_vehicle()
        self.controller_params = load_controller_params()
        self.rc_map = load_rc_map()

    @property
    def body(self):
        return self.vehicle.body

    def depth_hold(self):
        from brov2_hybrid.control.depth_hold import DepthHold
        hold = DepthHold(self.body, self.controller_params, 3.0, self.vehicle.tau_max[2])
        hold.set_enabled(True)
        hold.measure(0.9, 5.0)
        return hold

    def controller(self):
        from brov2_hybrid.control.law import HybridController
        return HybridController(self.body, self.controller_params, self.vehicle.tau_max)

    def gains(self):
        return self.controller().gains

    def table(self):
        return self.vehicle.table

    def positions(self):
        return self.vehicle.thrusters.positions_m

    def directions(self):
        return self.vehicle.thrusters.directions

    def mixer(self):
        return self.vehicle.mixer()


def _mod(name):
    return importlib.import_module("brov2_hybrid." + name)


def _eta2():
    return np.array([0.1, -0.2, 0.3])


def _class_method(module, cls, method, make):
    return lambda f: getattr(make(f), method)


def cases():
    k, c, d, g, h, a, mx, rc, tt = (_mod(n) for n in ("physics.kinematics", "control.law", "sim.delay", "control.gains", "physics.hydrostatics",
                                                        "vehicle.allocation", "vehicle.mixers", "vehicle.rc", "vehicle.thrust_table"))
    re_, ia, sa = _mod("control.rate_estimate"), _mod("control.integral_action"), _mod("vehicle.saturating_allocation")
    dh = _mod("control.depth_hold")
    q = [0.1, 0.2, 0.3, 0.927]
    cases = {
        # kinematics
        "physics.kinematics.J1": Case(lambda f: k.J1, lambda f: {"eta2": _eta2()}, ("eta2",)),
        "physics.kinematics.J2": Case(lambda f: k.J2, lambda f: {"eta2": _eta2()}, ("eta2",)),
        "physics.kinematics.J2_inv": Case(lambda f: k.J2_inv, lambda f: {"eta2": _eta2()}, ("eta2",)),
        "physics.kinematics.J2_from_roll_pitch": Case(lambda f: k.J2_from_roll_pitch, lambda f: {"phi": 0.1, "theta": 0.2},
                                              ("phi", "theta")),
        "physics.kinematics.J2_inv_from_roll_pitch": Case(lambda f: k.J2_inv_from_roll_pitch,
                                                  lambda f: {"phi": 0.1, "theta": 0.2}, ("phi", "theta")),
        "physics.kinematics.down_axis_in_body": Case(lambda f: k.down_axis_in_body, lambda f: {"phi": 0.1, "theta": 0.2},
                                             ("phi", "theta")),
        "physics.kinematics.euler_from_quaternion": Case(lambda f: k.euler_from_quaternion, lambda f: {"q": q}, ("q",)),
        "physics.kinematics.euler_ned_frd_from_enu_flu_quaternion": Case(
            lambda f: k.euler_ned_frd_from_enu_flu_quaternion, lambda f: {"q_enu_flu": q}, ("q_enu_flu",)),
        "physics.kinematics.quaternion_enu_flu_to_ned_frd": Case(lambda f: k.quaternion_enu_flu_to_ned_frd,
                                                         lambda f: {"q_enu_flu": q}, ("q_enu_flu",)),
        "physics.kinematics.quaternion_ned_frd_to_enu_flu": Case(lambda f: k.quaternion_ned_frd_to_enu_flu,
                                                         lambda f: {"q_ned_frd": q}, ("q_ned_frd",)),
        "physics.kinematics.quaternion_from_euler": Case(lambda f: k.quaternion_from_euler, lambda f: {"eta2": _eta2()},
                                                 ("eta2",)),
        "physics.kinematics.quaternion_multiply": Case(lambda f: k.quaternion_multiply, lambda f: {"a": q, "b": q}, ("a", "b")),
        "physics.kinematics.vector_enu_to_ned": Case(lambda f: k.vector_enu_to_ned, lambda f: {"v": [1, 2, 3]}, ("v",)),
        "physics.kinematics.vector_ned_to_enu": Case(lambda f: k.vector_ned_to_enu, lambda f: {"v": [1, 2, 3]}, ("v",)),
        "physics.kinematics.vector_flu_to_frd": Case(lambda f: k.vector_flu_to_frd, lambda f: {"v": [1, 2, 3]}, ("v",)),
        "physics.kinematics.vector_frd_to_flu": Case(lambda f: k.vector_frd_to_flu, lambda f: {"v": [1, 2, 3]}, ("v",)),
        "physics.kinematics.euler_angles": Case(lambda f: k.euler_angles, None,
                                                note="a numba kernel on a checked quaternion; euler_from_quaternion checks it"),
        "physics.kinematics.rotation_ned_frd": Case(lambda f: k.rotation_ned_frd, None,
                                                    note="a numba kernel on the plant's normalised state quaternion; "
                                                         "its callers (the stepper, the tether) hold checked state"),
        "physics.kinematics.wrapped": Case(lambda f: k.wrapped, None,
                                           note="a numba kernel on a checked float; wrap_angle_float checks it"),
        "physics.kinematics.down_axis": Case(lambda f: k.down_axis, None,
                                             note="a numba kernel on checked floats; down_axis_in_body checks them"),
        "physics.kinematics.j2_matrix": Case(lambda f: k.j2_matrix, None,
                                             note="a numba kernel on checked floats; J2 and J2_from_roll_pitch check them"),
        "physics.kinematics.j2_inv_matrix": Case(lambda f: k.j2_inv_matrix, None,
                                                 note="a numba kernel on checked floats; J2_inv and "
                                                      "J2_inv_from_roll_pitch check them"),
        "physics.kinematics.wrap_angle_float": Case(lambda f: k.wrap_angle_float, lambda f: {"angle_rad": 4.0}, ("angle_rad",)),
        "physics.kinematics.wrap_angle": Case(lambda f: k.wrap_angle, lambda f: {"angle_rad": [4.0, -7.0]}, ("angle_rad",),
                                      shape_free=("angle_rad",)),
        # control
        "control.law.attitude_torque": Case(
            lambda f: c.attitude_torque,
            lambda f: {"eta2d": [0, 0, 0.5], "eta2d_dot": [0, 0, 0], "eta2": _eta2(), "nu2": [0, 0, 0.1],
                       "kp": [1.0, 1.0, 2.0], "kd_total": [0.5, 0.5, 1.0], "feedforward_moment": [0, 0, 0]},
            ("eta2d", "eta2d_dot", "eta2", "nu2", "kp", "kd_total", "feedforward_moment")),
        "control.law.normalize": Case(lambda f: c.normalize,
                                  lambda f: {"tau": np.ones(6), "tau_max": f.vehicle.tau_max}, ("tau", "tau_max")),
        "control.law.ControlOutput": Case(lambda f: c.ControlOutput,
                                      lambda f: {"tau_body_frd": np.zeros(6), "saturated": np.zeros(6, bool)},
                                      note="a result record built by compute(), not an entry point"),
        "control.law.HybridController.reset_desired": Case(lambda f: f.controller().reset_desired, lambda f: {}),
        "control.law.HybridController": Case(
            lambda f: c.HybridController,
            lambda f: {"body": f.body, "settings": f.controller_params, "tau_max": f.vehicle.tau_max},
            ("tau_max",)),
        "control.law.HybridController.configure": Case(
            lambda f: f.controller().configure,
            lambda f: {"omega_d_rad_s": 3.0, "kappa": 20.0, "linear_scale": 0.5, "integral_ratio": 0.5,
                       "integral_band_rad": 0.1},
            ("omega_d_rad_s", "kappa", "linear_scale", "integral_ratio", "integral_band_rad")),
        "control.law.HybridController.update_desired": Case(lambda f: f.controller().update_desired,
                                                        lambda f: {"t_s": 1.0, "eta2d": _eta2()}, ("t_s", "eta2d")),
        "control.law.HybridController.reset_integral": Case(lambda f: f.controller().reset_integral, lambda f: {}),
        "control.law.HybridController.measure_depth": Case(
            lambda f: f.controller().measure_depth, lambda f: {"t_s": 1.0, "depth_m": 5.0}, ("t_s",),
            note="depth_m NaN is a failed sensor (the hold goes open loop), not an error"),
        "control.law.HybridController.torque": Case(
            lambda f: f.controller().torque, None,
            note="the in-process loop's tick on checked float arrays; compute checks its inputs and covers it"),
        "control.law.check_gimbal_lock": Case(lambda f: c.check_gimbal_lock, lambda f: {"theta": 0.2}, ("theta",)),
        "control.law.HybridController.kernel_settings": Case(lambda f: f.controller().kernel_settings, lambda f: {}),
        "control.law.HybridController.compute": Case(
            lambda f: f.controller().compute,
            lambda f: {"eta2d": _eta2(), "u_linear": [0.1, 0, 0], "eta2": _eta2(), "nu2": [0, 0, 0.1],
                       "eta2d_dot": [0, 0, 0], "t_s": 1.0},
            ("eta2d", "u_linear", "eta2", "nu2", "eta2d_dot", "t_s")),
        "control.integral_action.IntegralAction": Case(lambda f: ia.IntegralAction, lambda f: {"tau_max_nm": f.vehicle.tau_max[3:]},
                                       ("tau_max_nm",)),
        "control.integral_action.IntegralAction.reset": Case(lambda f: ia.IntegralAction(f.vehicle.tau_max[3:]).reset, lambda f: {}),
        "control.integral_action.IntegralAction.reference": Case(lambda f: ia.IntegralAction(f.vehicle.tau_max[3:]).reference,
                                                 lambda f: {}),
        "control.integral_action.IntegralAction.step": Case(
            lambda f: ia.IntegralAction(f.vehicle.tau_max[3:]).step, None,
            note="the integral's kernel, called by HybridController.compute with validated arrays; "
                 "compute's entry covers its inputs"),
        # gains
        "control.gains.PDGains": Case(lambda f: g.PDGains,
                              lambda f: {"omega_d_rad_s": 3.0, "kappa": 20.0, "kp": np.ones(3), "kd": np.ones(3),
                                         "delta_kd": np.ones(3)},
                              note="a result record built by pd_gains(), not an entry point"),
        "control.gains.pd_gains": Case(lambda f: g.pd_gains,
                               lambda f: {"omega_d_rad_s": 3.0, "total_inertia": [0.96, 1.12, 1.12],
                                          "b_check": [5.1, 5.9, 5.9], "kappa": 20.0},
                               ("omega_d_rad_s", "total_inertia", "b_check", "kappa")),
        "control.gains.loop_margins": Case(lambda f: g.loop_margins,
                                           lambda f: {"kp": 16.0, "kd_total": 8.0, "inertia": 0.3, "damping": 1.0,
                                                      "rate_filter_s": 0.0},
                                           ("kp", "kd_total", "inertia", "damping", "rate_filter_s")),
        "control.gains.trim_linear_drag": Case(lambda f: g.trim_linear_drag,
                                       lambda f: {"linear_drag": [0, 0, 0], "quadratic_drag": [2.0, 2.4, 2.4],
                                                  "v_max": [3.0, 3.0, 3.0]},
                                       ("linear_drag", "quadratic_drag", "v_max")),
        "control.gains.lti_closed_loop": Case(lambda f: g.lti_closed_loop,
                                      lambda f: {"gains": f.gains(), "total_inertia": [0.96, 1.12, 1.12],
                                                 "b_check": [5.1, 5.9, 5.9]},
                                      ("total_inertia", "b_check")),
        # hydrostatics
        "physics.hydrostatics.restoring_wrench": Case(
            lambda f: h.restoring_wrench,
            lambda f: {"eta2": _eta2(), "weight_n": 112.8, "buoyancy_n": 114.8, "r_cg_m": [0, 0, 0],
                       "r_cb_m": [0, 0, -0.02]},
            ("eta2", "weight_n", "buoyancy_n", "r_cg_m", "r_cb_m")),
        "physics.hydrostatics.lever_moment": Case(lambda f: h.lever_moment, None,
                                                  note="a numba kernel on checked floats; restoring_wrench_from_lever "
                                                       "checks them"),
        "physics.hydrostatics.restoring_wrench_from_lever": Case(
            lambda f: h.restoring_wrench_from_lever,
            lambda f: {"phi": 0.1, "theta": -0.2, "net_weight_n": -2.0, "lever": [0.0, 0.0, 2.3]},
            ("phi", "theta", "net_weight_n", "lever")),
        "physics.hydrostatics.restoring_moment": Case(lambda f: h.restoring_moment,
                                              lambda f: {"eta2": _eta2(), "params": f.body}, ("eta2",)),
        # allocation
        "vehicle.allocation.allocation_matrix": Case(lambda f: a.allocation_matrix,
                                             lambda f: {"positions_m": f.positions(),
                                                        "directions": f.directions()},
                                             ("positions_m", "directions")),
        "vehicle.allocation.heuristic_matrix": Case(lambda f: a.heuristic_matrix,
                                            lambda f: {"ardusub_factors": f.vehicle.frame.motor_factors},
                                            ("ardusub_factors",), shape_free=("ardusub_factors",),
                                            note="one row per thruster: any row count is a vehicle"),
        "vehicle.allocation.pseudo_inverse": Case(lambda f: a.pseudo_inverse, lambda f: {"T": f.vehicle.T}, ("T",)),
        "vehicle.allocation.matrix_6xn": Case(lambda f: a.matrix_6xn, lambda f: {"T": f.vehicle.T}, ("T",)),
        "vehicle.allocation.PseudoInverseAllocator": Case(lambda f: a.PseudoInverseAllocator,
                                                  lambda f: {"vehicle": f.vehicle},
                                                  note="built from a loaded Vehicle, which validates its file"),
        "vehicle.allocation.PseudoInverseAllocator.forces": Case(lambda f: f.vehicle.allocator.forces,
                                                         lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.allocation.check_allocator": Case(lambda f: a.check_allocator,
                                           lambda f: {"allocator": f.vehicle.allocator},
                                           note="takes an allocator object; refuses one without the contract"),
        "vehicle.allocation.make_allocator": Case(lambda f: a.make_allocator,
                                          lambda f: {"name": "pseudo_inverse", "vehicle": f.vehicle},
                                          note="built from a loaded Vehicle, which validates its file"),
        # saturating_allocation
        "vehicle.saturating_allocation.SaturatingAllocator": Case(lambda f: sa.SaturatingAllocator,
                                                          lambda f: {"vehicle": f.vehicle},
                                                          note="built from a loaded Vehicle, which validates its file"),
        "vehicle.saturating_allocation.SaturatingAllocator.forces": Case(lambda f: sa.SaturatingAllocator(f.vehicle).forces,
                                                                 lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.saturating_allocation.least_distance": Case(lambda f: sa.least_distance,
                                                     lambda f: {"G": np.eye(2), "h": np.ones(2)}, ("G", "h")),
        "vehicle.allocation.tau_max_from_limit": Case(lambda f: a.tau_max_from_limit,
                                              lambda f: {"T": f.vehicle.T, "directions": f.directions(),
                                                         "force_limit_n": 40.0},
                                              ("T", "directions", "force_limit_n")),
        "vehicle.allocation.thruster_groups": Case(lambda f: a.thruster_groups,
                                           lambda f: {"directions": f.directions()}, ("directions",),
                                           shape_free=("directions",), note="one row per thruster"),
        # mixers
        "vehicle.mixers.stock_rows": Case(
            lambda f: mx.stock_rows, None,
            note="a numba kernel on checked arrays; stock_normalized, stock_normalized_for_frame and "
                 "Mixer.normalized check its inputs and cover them"),
        "vehicle.mixers.truncated_pwm_rows": Case(
            lambda f: mx.truncated_pwm_rows, None,
            note="a numba kernel on checked arrays; ardusub_thrust_to_pwm checks its inputs and covers them"),
        "vehicle.mixers.stock_normalized": Case(lambda f: mx.stock_normalized,
                                        lambda f: {"u": np.full(6, 0.1), "T_hat": f.vehicle.T_hat}, ("u", "T_hat")),
        "vehicle.mixers.stock_normalized_for_frame": Case(
            lambda f: mx.stock_normalized_for_frame,
            lambda f: {"u": np.full(6, 0.1), "T_hat": f.vehicle.T_hat, "frame_config": 1, "fv_coupling_k": 1.0},
            ("u", "T_hat", "fv_coupling_k")),
        "vehicle.mixers.mix_stock": Case(lambda f: mx.mix_stock, lambda f: {"u": np.full(6, 0.1), "T_hat": f.vehicle.T_hat},
                                 ("u", "T_hat")),
        "vehicle.mixers.motor_pwm_from_rc": Case(lambda f: mx.motor_pwm_from_rc,
                                         lambda f: {"channel_pwm": [1500, 1500, 1500, 1600, 1500, 1500],
                                                    "rc_map": f.rc_map, "mixer": f.mixer(), "pwm_min_us": 1100,
                                                    "pwm_max_us": 1900},
                                         ("pwm_min_us", "pwm_max_us"),
                                         note="channel_pwm: whole-microsecond PWMs from the wire (u_from_pwm)"),
        "vehicle.mixers.Mixer": Case(lambda f: mx.Mixer,
                             lambda f: {"kind": "stock", "allocator": f.vehicle.allocator,
                                        "table": f.table(), "T_hat": f.vehicle.T_hat, "frame_config": 1,
                                        "fv_coupling_k": 1.0},
                             ("T_hat", "fv_coupling_k"), shape_free=("T_hat",), note="T_hat: one column per thruster"),
        "vehicle.mixers.Mixer.normalized": Case(lambda f: f.mixer().normalized, lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.mixers.Mixer.pwm": Case(lambda f: f.mixer().pwm, lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.mixers.Mixer.clipped_motor_pwm": Case(lambda f: f.mixer().clipped_motor_pwm,
                                                lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.mixers.algorithm2_stars": Case(lambda f: mx.algorithm2_stars, None,
                                         note="a numba kernel on checked arrays; Mixer.clipped_motor_pwm checks its inputs"),
        "vehicle.mixers.quantitative_motor_pwm": Case(lambda f: mx.quantitative_motor_pwm, None,
                                               note="a numba kernel on checked arrays; Mixer.clipped_motor_pwm checks its inputs"),
        "vehicle.mixers.stock_motor_pwm": Case(lambda f: mx.stock_motor_pwm, None,
                                        note="a numba kernel on checked arrays; Mixer.clipped_motor_pwm checks its inputs"),
        "vehicle.mixers.Mixer.motor_pwm_into": Case(lambda f: f.mixer().motor_pwm_into, None,
                                             note="the loop's tick on a checked u; clipped_motor_pwm checks it"),
        "vehicle.mixers.Mixer.motor_pwm": Case(lambda f: f.mixer().motor_pwm, lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.mixers.ardusub_thrust_to_pwm": Case(lambda f: mx.ardusub_thrust_to_pwm,
                                             lambda f: {"m_star": np.full(8, 0.1), "half_range_us": 400.0},
                                             ("m_star", "half_range_us"), shape_free=("m_star",),
                                             note="m_star: any shape (one value per motor)"),
        # rc
        "vehicle.rc.load_rc_map": Case(lambda f: rc.load_rc_map, lambda f: {}, note="reads params/ (file errors tested in test_params)"),
        "vehicle.rc.RCMap": Case(lambda f: rc.RCMap, lambda f: {"channels": (5, 6, 3, 2, 1, 4), "signs": np.ones(6)},
                         note="built by load_rc_map, which validates the file"),
        "vehicle.rc.rc_from_u": Case(lambda f: rc.rc_from_u, None, note="a numba kernel on checked arrays; RCMap.pwm_from_u checks u"),
        "vehicle.rc.u_from_rc": Case(lambda f: rc.u_from_rc, None, note="a numba kernel on checked arrays; RCMap.u_from_pwm checks the PWMs"),
        "vehicle.rc.RCMap.pwm_from_u": Case(lambda f: f.rc_map.pwm_from_u, lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.rc.RCMap.channel_array_from_u": Case(lambda f: f.rc_map.channel_array_from_u,
                                              lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.rc.RCMap.u_from_pwm": Case(lambda f: f.rc_map.u_from_pwm, lambda f: {"channel_pwm": [1500] * 8},
                                    note="integer PWMs from the wire; 0 / 65535 / missing read as neutral"),
        # delay
        "sim.delay.DelayLine": Case(lambda f: d.DelayLine, lambda f: {"delay_s": 0.1}, ("delay_s",)),
        "sim.delay.DelayLine.clear": Case(lambda f: d.DelayLine(0.1).clear, lambda f: {}),
        "sim.delay.DelayLine.push": Case(lambda f: d.DelayLine(0.1).push, lambda f: {"t_s": 1.0, "value": "any"},
                                     ("t_s",)),
        "sim.delay.DelayLine.get": Case(lambda f: d.DelayLine(0.1).get, lambda f: {"t_s": 1.0}, ("t_s",)),
        "sim.delay.DelayLine.pop_due": Case(lambda f: d.DelayLine(0.1).pop_due, lambda f: {"t_s": 1.0}, ("t_s",)),
        "sim.delay.DelayLine.next_due_s": Case(lambda f: d.DelayLine(0.1).next_due_s, lambda f: {}),
        # thrust_table
        "vehicle.thrust_table.read_t200_csv": Case(lambda f: tt.read_t200_csv,
                                           lambda f: {"path": paths.params_path("t200_16V.csv")},
                                           note="reads a file (malformed files tested in test_thrust_table)"),
        "vehicle.thrust_table.probe_table": Case(lambda f: tt.probe_table, lambda f: {},
                                                 note="no arguments: the bundled table the kernels' self-checks use"),
        "vehicle.thrust_table.ThrustTable": Case(lambda f: tt.ThrustTable,
                                         lambda f: {"pwm_us": [1100, 1500, 1900], "force_n": [-30.0, 0.0, 40.0]},
                                         ("pwm_us", "force_n")),
        "vehicle.thrust_table.ThrustTable.from_csv": Case(lambda f: tt.ThrustTable.from_csv,
                                                  lambda f: {"path": paths.params_path("t200_16V.csv")},
                                                  note="reads a file"),
        "vehicle.thrust_table.ThrustTable.from_params": Case(lambda f: None, None, note="reads parameters (test_params)"),
        "vehicle.thrust_table.ThrustTable.force_from_pwm": Case(lambda f: f.table().force_from_pwm,
                                                        lambda f: {"pwm_us": np.full(8, 1600.0)}, ("pwm_us",),
                                                        shape_free=("pwm_us",)),
        "vehicle.thrust_table.star_from_force": Case(lambda f: tt.star_from_force, None,
                                              note="a numba kernel on checked arrays; ThrustTable.normalized_from_force checks the forces"),
        "vehicle.thrust_table.stars_from_forces": Case(lambda f: tt.stars_from_forces, None,
                                                note="a numba kernel on checked arrays; ThrustTable.normalized_from_force checks the forces"),
        "vehicle.thrust_table.pwm_from_star": Case(lambda f: tt.pwm_from_star, None,
                                            note="a numba kernel on checked arrays; ThrustTable.pwm_from_normalized checks m*"),
        "vehicle.thrust_table.pwms_from_stars": Case(lambda f: tt.pwms_from_stars, None,
                                              note="a numba kernel on checked arrays; ThrustTable.pwm_from_normalized checks m*"),
        "vehicle.thrust_table.interp_at": Case(
            lambda f: tt.interp_at, None,
            note="a numba kernel on a checked table and a finite PWM: the stock search looks up the whole-"
                 "microsecond motor PWMs of checked commands (test_thrust_table holds it to np.interp)"),
        "vehicle.thrust_table.ThrustTable.pwm_from_force": Case(lambda f: f.table().pwm_from_force,
                                                        lambda f: {"force_n": np.full(8, 5.0)}, ("force_n",),
                                                        shape_free=("force_n",)),
        "vehicle.thrust_table.ThrustTable.normalized_from_force": Case(lambda f: f.table().normalized_from_force,
                                                               lambda f: {"force_n": np.full(8, 5.0)}, ("force_n",),
                                                               shape_free=("force_n",)),
        "vehicle.thrust_table.ThrustTable.pwm_from_normalized": Case(lambda f: f.table().pwm_from_normalized,
                                                             lambda f: {"m_star": np.full(8, 0.1)}, ("m_star",),
                                                             shape_free=("m_star",)),
    }
    cases.update(rate_estimate_cases(re_, Case))
    cases.update(depth_hold_cases(dh, Case))
    return cases
