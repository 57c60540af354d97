"""The sample calls of control.rate_estimate's public callables (the desired-rate estimate and the
reference filter), for contract_cases.cases."""
import numpy as np


def rate_estimate_cases(re_, Case):
    """{name: Case} of ``re_`` (the module brov2_hybrid.control.rate_estimate), ``Case`` contract_cases.Case."""
    def _eta2():
        return np.array([0.1, -0.2, 0.3])
    return {
        "control.rate_estimate.DesiredRateEstimator": Case(lambda f: re_.DesiredRateEstimator, lambda f: {"window": 4}, ("window",)),
        "control.rate_estimate.DesiredRateEstimator.set_window": Case(lambda f: re_.DesiredRateEstimator(4).set_window,
                                                        lambda f: {"window": 3}, ("window",)),
        "control.rate_estimate.DesiredRateEstimator.reset": Case(lambda f: re_.DesiredRateEstimator(4).reset, lambda f: {}),
        "control.rate_estimate.DesiredRateEstimator.update": Case(lambda f: re_.DesiredRateEstimator(4).update,
                                                    lambda f: {"t_s": 1.0, "eta2d": _eta2()}, ("t_s", "eta2d")),
        "control.rate_estimate.DesiredRateEstimator.rate": Case(lambda f: re_.DesiredRateEstimator(4).rate,
                                                  lambda f: {"now_s": 1.0}, ("now_s",)),
        "control.rate_estimate.ReferenceFilter": Case(lambda f: re_.ReferenceFilter,
                                                      lambda f: {"omega_rad_s": 10.0, "max_gap_s": 0.1},
                                                      ("omega_rad_s", "max_gap_s")),
        "control.rate_estimate.ReferenceFilter.set_omega": Case(lambda f: re_.ReferenceFilter(10.0, 0.1).set_omega,
                                                                lambda f: {"omega_rad_s": 5.0}, ("omega_rad_s",)),
        "control.rate_estimate.ReferenceFilter.set_max_gap": Case(lambda f: re_.ReferenceFilter(10.0, 0.1).set_max_gap,
                                                                  lambda f: {"max_gap_s": 0.2}, ("max_gap_s",)),
        "control.rate_estimate.ReferenceFilter.reset": Case(lambda f: re_.ReferenceFilter(10.0, 0.1).reset, lambda f: {}),
        "control.rate_estimate.ReferenceFilter.update": Case(lambda f: re_.ReferenceFilter(10.0, 0.1).update,
                                                             lambda f: {"t_s": 1.0, "eta2d": _eta2()}, ("t_s", "eta2d")),
        "control.rate_estimate.ReferenceFilter.trajectory": Case(lambda f: re_.ReferenceFilter(10.0, 0.1).trajectory,
                                                                 lambda f: {"now_s": 1.0}, ("now_s",)),
    }
