"""The sample calls of control.depth_hold's public callables (the optional depth hold and its
ceiling), for contract_cases.cases."""
import numpy as np


def depth_hold_cases(dh, Case):
    """{name: Case} of ``dh`` (the module brov2_hybrid.control.depth_hold), ``Case`` contract_cases.Case."""
    def _eta2():
        return np.array([0.1, -0.2, 0.3])
    return {
        "control.depth_hold.DepthHold": Case(
            lambda f: dh.DepthHold, lambda f: {"body": f.body, "settings": f.controller_params, "omega_d_rad_s": 3.0,
                                               "tau_max_heave_n": 199.81},
            ("omega_d_rad_s", "tau_max_heave_n")),
        "control.depth_hold.DepthHold.retune": Case(lambda f: f.depth_hold().retune, lambda f: {"omega_d_rad_s": 2.0},
                                                    ("omega_d_rad_s",)),
        "control.depth_hold.DepthHold.set_own_omega": Case(lambda f: f.depth_hold().set_own_omega,
                                                           lambda f: {"heave_omega_rad_s": 1.0}, ("heave_omega_rad_s",)),
        "control.depth_hold.DepthHold.reset": Case(lambda f: f.depth_hold().reset, lambda f: {}),
        "control.depth_hold.DepthHold.capped": Case(lambda f: f.depth_hold().capped, lambda f: {}),
        "control.depth_hold.heave_delay_margin_s": Case(
            lambda f: dh.heave_delay_margin_s,
            lambda f: {"omega_rad_s": 2.0, "total_mass_kg": 26.07, "linear_drag": 5.18, "b_check": 19.1,
                       "kappa": 0.0, "rate_filter_s": 0.2},
            ("omega_rad_s", "total_mass_kg", "linear_drag", "b_check", "kappa", "rate_filter_s")),
        "control.depth_hold.heave_omega_limit": Case(
            lambda f: dh.heave_omega_limit,
            lambda f: {"total_mass_kg": 26.07, "linear_drag": 5.18, "b_check": 19.1, "kappa": 0.0,
                       "rate_filter_s": 0.2, "min_delay_margin_s": 0.15},
            ("total_mass_kg", "linear_drag", "b_check", "kappa", "rate_filter_s", "min_delay_margin_s")),
        "control.depth_hold.DepthHold.set_enabled": Case(lambda f: f.depth_hold().set_enabled,
                                                         lambda f: {"enabled": True}),
        "control.depth_hold.DepthHold.measure": Case(
            lambda f: f.depth_hold().measure, lambda f: {"t_s": 1.0, "depth_m": 5.0}, ("t_s",),
            note="depth_m NaN is a failed sensor (the hold goes open loop), not an error"),
        "control.depth_hold.DepthHold.fresh_depth": Case(lambda f: f.depth_hold().fresh_depth, lambda f: {"t_s": 1.0},
                                                         ("t_s",)),
        "control.depth_hold.DepthHold.heave_force": Case(
            lambda f: f.depth_hold().heave_force,
            lambda f: {"t_s": 1.0, "stick": 0.2, "eta2": _eta2(), "force_x_n": 3.0, "force_y_n": -2.0,
                       "open_loop_z_n": 10.0},
            ("stick", "eta2", "force_x_n", "force_y_n", "open_loop_z_n"),
            note="t_s NaN means no tick time (open loop), not an error"),
    }
