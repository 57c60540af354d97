"""Loop-delay compensation: the attitude predicted over the loop's delay from the model and the commands in flight.

The topside law sees an attitude ``age`` seconds old (the tether's uplink, the telemetry period) and
its command acts ``command_delay_s`` later (the downlink, the vehicle's output), held until the next
tick. In the spirit of a Smith predictor, but as a state predictor (finite spectrum assignment,
Manitius & Olbrot 1979): from the measured attitude and rates, the vehicle model is run forward over

    horizon = age + command_delay_s + hold_s / 2

(``hold_s``: the control period; half of it is the sample-and-hold's mean delay) under the torques
the law sent that act in that window (each acting ``command_delay_s`` after its tick, held until the
next), and the law acts on the predicted state. Each tick starts again from the newest measurement,
so a model error does not accumulate: it costs what it mispredicts over one horizon.

Model (the vehicle file's; the same terms as the simulator and the law's feed-forwards; body FRD,
NED, per attitude axis)::

    (I + M_A) nu2_dot = tau - (B_L + B_NL |nu2|) nu2 + (W r_G - B r_B) x d(eta2)
    eta2_dot = J2(eta2) nu2

integrated with classical Runge-Kutta in steps of at most ``step_s``. Thrust lag is not modelled:
its low-frequency delay stays in the loop (``brov2-analyze omega-limit`` counts it).
"""
import collections
import math

import numpy as np

from brov2_hybrid.control.law_kernels import model_drag
from brov2_hybrid.physics.hydrostatics import lever_moment
from brov2_hybrid.physics.kinematics import down_axis_in_body, j2_matrix


class AttitudePredictor(object):
    """Predicts the attitude over the loop delay (module docstring).

    Parameters
    ----------
    inertia : array_like (3,)
        Effective inertia (rigid + added) of roll, pitch, yaw [kg m^2].
    drag : array_like (2, 3)
        Linear [N m s/rad] and quadratic [N m s^2/rad^2] drag of roll, pitch, yaw.
    lever_nm : array_like (3,)
        W r_G - B r_B [N m], the restoring moment's lever.
    tau_max : array_like (3,)
        The largest torque per axis [N m]: what was sent is clipped to it, as the vehicle is.
    settings : brov2_hybrid.params.ControllerParams
        ``delay_compensation_enabled``, ``delay_compensation_command_delay_s`` and
        ``delay_compensation_step_s`` (the longest integration step [s]).
    """

    def __init__(self, inertia, drag, lever_nm, tau_max, settings):
        self.inertia = np.asarray(inertia, dtype=float)
        self.drag = np.asarray(drag, dtype=float)
        self.lever = [float(c) for c in lever_nm]
        self.tau_max = np.asarray(tau_max, dtype=float)
        self.step_s = float(settings.delay_compensation_step_s)
        self.enabled = bool(settings.delay_compensation_enabled)
        #: the vehicle-side delay from a tick to its torque acting [s] (a parameter: the topside cannot see it)
        self.command_delay_s = float(settings.delay_compensation_command_delay_s)
        #: (tick time [s], torque (3,) [N m]) sent, newest last; kept for the longest horizon seen
        self._sent = collections.deque()
        self._last_t = math.nan
        self._period_s = math.nan

    def configure(self, new):
        """Apply the checked settings in ``new`` ({HybridController.configure keyword: value}; others are
        ignored); returns one line per change, for the log."""
        changes = []
        enabled = new.get("delay_compensation_enabled", self.enabled)
        delay = new.get("delay_compensation_command_delay_s", self.command_delay_s)
        if enabled != self.enabled:
            changes.append("delay compensation %s -> %s" % (self.enabled, enabled))
            self.reset()
        if delay != self.command_delay_s:
            changes.append("delay compensation command delay %.3f -> %.3f s" % (self.command_delay_s, delay))
        self.enabled, self.command_delay_s = enabled, delay
        return changes

    def compensate(self, eta2d, eta2d_dot, eta2, nu2, t_s, attitude_age_s):
        """(eta2d, eta2, nu2) for the law: the attitude and rates predicted (:meth:`predict`) and the setpoint
        carried along its rate ``eta2d_dot`` over the same horizon (the command acts then, and the pilot's
        setpoint is known only up to now)."""
        eta2p, nu2p = self.predict(eta2, nu2, t_s, attitude_age_s)
        if eta2p is eta2:
            return eta2d, eta2, nu2
        return eta2d + self.horizon_s(attitude_age_s) * np.asarray(eta2d_dot, dtype=float), eta2p, nu2p

    def reset(self):
        """Forget the commands sent (a restart, a mode change to neutral)."""
        self._sent.clear()
        self._last_t = math.nan
        self._period_s = math.nan

    def horizon_s(self, attitude_age_s):
        """The prediction horizon [s] for an attitude ``attitude_age_s`` old at the tick."""
        hold = self._period_s if math.isfinite(self._period_s) else 0.0
        return max(float(attitude_age_s), 0.0) + self.command_delay_s + 0.5 * hold

    def record(self, t_s, torque_nm):
        """Keep the torque (3,) [N m] sent at tick ``t_s`` [s] (clipped to tau_max, as the vehicle gets it)."""
        if not math.isfinite(t_s):
            return
        if math.isfinite(self._last_t) and t_s > self._last_t:
            self._period_s = t_s - self._last_t
        self._last_t = t_s
        self._sent.append((float(t_s), np.clip(np.asarray(torque_nm, dtype=float), -self.tau_max, self.tau_max)))
        keep = 1.0 + self.command_delay_s          # at most a second of measurement age is predicted over
        while len(self._sent) > 2 and self._sent[1][0] < t_s - keep:
            self._sent.popleft()

    def torque_at(self, t_s):
        """The torque (3,) [N m] acting at time ``t_s``: the newest sent at or before t_s - command_delay_s
        (zeros before the first)."""
        due = t_s - self.command_delay_s + 1e-9
        for sent_t, torque in reversed(self._sent):
            if sent_t <= due:
                return torque
        return np.zeros(3)

    def predict(self, eta2, nu2, t_s, attitude_age_s):
        """(eta2, nu2) (3,) predicted from the measured ones, ``attitude_age_s`` [s] old at tick ``t_s`` [s],
        over :meth:`horizon_s`; the inputs are returned unchanged when disabled or without a tick time."""
        if not self.enabled or not math.isfinite(t_s):
            return eta2, nu2
        start = t_s - max(float(attitude_age_s), 0.0)
        horizon = self.horizon_s(attitude_age_s)
        if horizon <= 0.0:
            return eta2, nu2
        # integrate piecewise: break at every instant a sent torque starts acting
        breaks = sorted({start + horizon} | {sent_t + self.command_delay_s for sent_t, _ in self._sent
                                             if start < sent_t + self.command_delay_s < start + horizon})
        state = np.concatenate([np.asarray(eta2, dtype=float), np.asarray(nu2, dtype=float)])
        t = start
        for end in breaks:
            torque = self.torque_at(t)
            n = max(1, int(math.ceil((end - t) / self.step_s - 1e-9)))
            h = (end - t) / n
            for _ in range(n):
                state = self._rk4(state, torque, h)
            t = end
        return state[:3], state[3:]

    def _rk4(self, x, torque, h):
        k1 = self._derivative(x, torque)
        k2 = self._derivative(x + 0.5 * h * k1, torque)
        k3 = self._derivative(x + 0.5 * h * k2, torque)
        k4 = self._derivative(x + h * k3, torque)
        return x + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0

    def _derivative(self, x, torque):
        """d/dt (eta2, nu2) of the model (module docstring) under ``torque`` (3,) [N m]."""
        phi, theta = x[0], x[1]
        nu2 = x[3:]
        dx, dy, dz = down_axis_in_body(phi, theta)
        restoring = lever_moment(self.lever[0], self.lever[1], self.lever[2], dx, dy, dz)
        acc = [(torque[a] - model_drag(self.drag[0, a], self.drag[1, a], nu2[a]) + restoring[a]) / self.inertia[a]
               for a in range(3)]
        return np.concatenate([j2_matrix(phi, theta) @ nu2, acc])
