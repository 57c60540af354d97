"""Thruster lag of the simulator: the same linear filter K(s) on every thruster, in modal form.

Every thruster passes its commanded thrust through K(s) (first order 1/(tau s + 1) or
seed 003's third-order K(s), ``params/simulator.yaml``). Because the commands are held
between calls to :meth:`~brov2_hybrid.sim.plant.Plant.set_motor_pwm`, the
filter is solved exactly in modal form (one complex exponential per pole).
"""
import numpy as np
from scipy import signal

from brov2_hybrid.errors import ParameterError

#: Modal thruster-lag terms smaller than this (relative) are treated as settled.
LAG_SETTLED = 1e-12


class ModalLag(object):
    """Identical SISO filter K(s) on every thruster, solved exactly for held inputs.

    K(s) = sum_k r_k / (s - lambda_k) (strictly proper, stable). Mode states obey
    z_k' = lambda_k z_k + f_cmd, output f = sum_k Re(r_k z_k). For a held command the
    deviation from the mode's steady state decays as exp(lambda_k t). A conjugate pole
    pair is carried by one mode with weight 2.
    """

    def __init__(self, numerator, denominator, dt_s, n_thrusters):
        res, poles, direct = signal.residue(numerator, denominator)
        if np.size(direct) and np.any(np.abs(direct) > 0):
            raise ParameterError("thruster lag K(s): expected a strictly proper transfer function")
        if np.any(np.real(poles) >= 0):
            raise ParameterError("thruster lag K(s): expected stable poles, got %s" % poles)
        modes = []
        for r_k, p_k in zip(res, poles):
            if p_k.imag < -1e-9:
                continue  # represented by its conjugate with weight 2
            weight = 2.0 if p_k.imag > 1e-9 else 1.0
            modes.append((complex(p_k), weight * complex(r_k)))
        self.poles = [p for p, _ in modes]
        self.residues = [r for _, r in modes]          # weighted
        self.step_factor = [complex(np.exp(p * dt_s)) for p in self.poles]
        self.dc_gain = float(sum((-r / p).real for p, r in zip(self.poles, self.residues)))
        self.z = [np.zeros(n_thrusters, dtype=complex) for _ in self.poles]  # at last change
        self.f_cmd = np.zeros(n_thrusters)
        self.decay = [1.0 + 0j for _ in self.poles]   # exp(lambda_k (t - t_change))

    def deviations(self):
        """Current mode deviations from steady state, list of (n,) complex arrays."""
        return [(z + self.f_cmd / p) * d for z, p, d in zip(self.z, self.poles, self.decay)]

    def output(self):
        """Actual thrusts (n,) [N]."""
        f = self.dc_gain * self.f_cmd
        for r, e in zip(self.residues, self.deviations()):
            f = f + (r * e).real
        return f

    def command(self, f_cmd):
        """Hold a new command from now on; returns the deviations for the new command."""
        z_now = [e - self.f_cmd / p for e, p in zip(self.deviations(), self.poles)]
        self.f_cmd = np.array(f_cmd, dtype=float)
        self.z = z_now
        self.decay = [1.0 + 0j for _ in self.poles]
        return self.deviations()

    def reset(self, f_now):
        """Start settled at thrusts ``f_now`` (n,)."""
        self.f_cmd = np.array(f_now, dtype=float) / self.dc_gain
        self.z = [-self.f_cmd / p for p in self.poles]
        self.decay = [1.0 + 0j for _ in self.poles]
