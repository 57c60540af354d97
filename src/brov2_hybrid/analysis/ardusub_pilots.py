"""The pilots :func:`brov2_hybrid.analysis.ardusub_fly.fly` flies real ArduSub SITL with.

A pilot has ``mode`` (the ArduSub flight mode it needs), ``depth_source`` (what depth it holds
on), ``omega_d_rad_s`` (the log's omega_d column), ``depth_setpoint_m`` (the log's column: NaN
unless the pilot holds depth), ``on_desired(t_s, eta2d)`` (a new dive row), ``on_depth(t_s,
depth_m)`` (a depth reading) and ``tick(flight, t_s, eta2d, u_lin, eta2, nu2)`` (one control
tick on ArduSub's attitude estimate; returns tau, u and the RC channels it sent). See :mod:`brov2_hybrid.analysis.ardusub_flight` for why
ArduSub's attitude controller is commanded in ALT_HOLD.
"""
import math

import numpy as np

from brov2_hybrid.control.depth_hold import HOLDING
from brov2_hybrid.control.law import normalize


def _over_link(line, t_s, eta2d, u_lin):
    """Send the pilot's input (``eta2d`` [rad], ``u_lin``) at ``t_s`` down the link ``line`` (a DelayLine);
    returns the (eta2d, u_lin) that has arrived by then, or None."""
    line.push(t_s, (np.array(eta2d, dtype=float), np.array(u_lin, dtype=float)))
    return line.get(t_s)


class HybridPilot(object):
    """The hybrid autopilot (control_law + thruster_allocation's core objects) in MANUAL.

    ``telemetry_delay_s`` / ``command_delay_s`` [s, vehicle time]: the topside loop's transport
    delays (the attitude reaches the law that much later, the override reaches ArduSub that
    much later; sample and hold, :class:`~brov2_hybrid.sim.delay.DelayLine`), as the
    in-process loop models them; until the first delayed attitude arrives the pilot sends
    neutral, as the nodes do. ``reference_delay_s`` [s, vehicle time]: how late the pilot's input (the
    desired attitude and the sticks) reaches the law, 0 when the law runs topside beside the pilot;
    a law on the vehicle is fed over the tether (:attr:`~brov2_hybrid.head_to_head.stored.Placement.
    reference_delay_s`). Until the first input arrives the law holds a level attitude at neutral sticks.
    ``translations_as_stock``: the surge and sway sticks become the force stock ArduSub's own mixer gives
    them (:meth:`~brov2_hybrid.vehicle.firmware_output.OutputStage.stick_wrench` over tau_max), so both
    pilots push the vehicle alike for the same sticks; False: the hybrid's own u * tau_max (heave is the
    depth hold's rate either way).
    """

    mode = "MANUAL"
    #: The depth the pilot's depth hold closes on.
    depth_source = ("ArduSub's reported depth, GLOBAL_POSITION_INT relative_alt at 10 Hz (what the bridge and "
                    "MAVROS give the control_law node)")

    def __init__(self, controller, output_stage, tau_max, telemetry_delay_s=0.0, command_delay_s=0.0,
                 reference_delay_s=0.0, translations_as_stock=False):
        self.controller = controller
        self.translations_as_stock = bool(translations_as_stock)
        self.output = output_stage
        self.tau_max = tau_max
        self._delays_s = (telemetry_delay_s, command_delay_s)
        self.reference_delay_s = float(reference_delay_s)
        self._last_t = None

    def _start(self, t_s):
        """A time before the last one starts a new run: the delay lines start empty."""
        if self._last_t is None or t_s < self._last_t:
            from brov2_hybrid.sim.delay import DelayLine
            self._telemetry, self._commands = DelayLine(self._delays_s[0]), DelayLine(self._delays_s[1])
            self._rows, self._inputs = DelayLine(self.reference_delay_s), DelayLine(self.reference_delay_s)
        self._last_t = t_s

    @property
    def omega_d_rad_s(self):
        """The controller's omega_d [rad/s] (the log's omega_d column)."""
        return self.controller.gains.omega_d_rad_s

    @property
    def command_delay_s(self):
        """How much later than its tick a command (the log's ``u``) is sent to ArduSub [s, vehicle time]."""
        return self._delays_s[1]

    def on_desired(self, t_s, eta2d):
        """A new dive row: feed the desired attitude ``eta2d`` [rad] at ``t_s`` [s] to the controller's
        rate estimator (when it reaches the law: ``reference_delay_s`` later)."""
        if self.reference_delay_s == 0.0:
            self.controller.update_desired(t_s, eta2d)
            return
        self._start(t_s)
        self._rows.push(t_s, np.array(eta2d, dtype=float))

    def on_depth(self, t_s, depth_m):
        """A depth reading [m, positive down] taken at ``t_s`` [s] (flight time): for the depth hold."""
        self.controller.measure_depth(t_s, depth_m)

    @property
    def depth_setpoint_m(self):
        """The depth hold's setpoint [m, positive down] while it holds, else NaN."""
        hold = self.controller.depth_hold
        return hold.setpoint_m if hold.status == HOLDING else math.nan

    def stock_translation(self, u_lin):
        """The linear command (3,) with surge and sway replaced by the force [N] stock ArduSub's mixer gives
        those sticks, over tau_max (heave as it is)."""
        u_lin = np.array(u_lin, dtype=float)
        force = self.output.stick_wrench([u_lin[0], u_lin[1], 0.0, 0.0, 0.0, 0.0])
        u_lin[:2] = force[:2] / np.asarray(self.tau_max, dtype=float)[:2]
        return u_lin

    def tick(self, flight, t_s, eta2d, u_lin, eta2, nu2):
        """One control tick; returns (tau (6,), u (6,), RC channels {ch: PWM} sent now). A time before
        the last tick's starts a new run: the delay lines start empty."""
        self._start(t_s)
        if self.reference_delay_s != 0.0:
            for sent_s, row in self._rows.pop_due(t_s):
                self.controller.update_desired(sent_s + self.reference_delay_s, row)
            arrived = _over_link(self._inputs, t_s, eta2d, u_lin)
            eta2d, u_lin = arrived if arrived is not None else (np.array([0.0, 0.0, eta2[2]]), np.zeros(3))
        if self.translations_as_stock:
            u_lin = self.stock_translation(u_lin)
        self._telemetry.push(t_s, (eta2, nu2, t_s))
        seen = self._telemetry.get(t_s)
        if seen is None:
            tau = np.zeros(6)
        else:       # the attitude's age at this tick: what the delay compensation predicts over
            tau = self.controller.compute(eta2d, u_lin, seen[0], seen[1], t_s=t_s,
                                          attitude_age_s=t_s - seen[2]).tau_body_frd
        u = normalize(tau, self.tau_max)[0]
        self._commands.push(t_s, self.output.channels(u))
        rc = self._commands.get(t_s)
        if rc is None:
            rc = self.output.channels(np.zeros(6))
        flight.override([rc.get(ch, 0) for ch in range(1, 9)])
        return tau, u, rc


class ArduSubAttitudePilot(object):
    """ArduSub's own attitude controller (ALT_HOLD + SET_ATTITUDE_TARGET), translations by RC."""

    mode = "ALT_HOLD"
    #: The depth ALT_HOLD closes on.
    depth_source = "ArduSub's own depth estimate on board (barometer through its inertial navigation, 400 Hz loop)"
    #: No omega_d: ArduSub's own gains fly (the log's omega_d column reads NaN).
    omega_d_rad_s = math.nan
    #: ArduSub's ALT_HOLD keeps its depth target to itself (the log's column reads NaN).
    depth_setpoint_m = math.nan

    def __init__(self, rc_map, input_delay_s=0.0):
        self.rc_map = rc_map
        #: How late the pilot's input (desired attitude and sticks) reaches ArduSub [s, vehicle time]:
        #: the topside-to-vehicle link a pilot at the surface flies over (sample and hold,
        #: :class:`~brov2_hybrid.sim.delay.DelayLine`); 0: the input is on the vehicle at once.
        self.input_delay_s = float(input_delay_s)
        self._last_t = None

    def on_desired(self, t_s, eta2d):
        """A new dive row: nothing to do (ArduSub takes the attitude itself on every tick)."""
        pass

    def on_depth(self, t_s, depth_m):
        """A depth reading: nothing to do (ALT_HOLD holds depth on ArduSub's own estimate)."""
        pass

    def tick(self, flight, t_s, eta2d, u_lin, eta2, nu2):
        """One tick: SET_ATTITUDE_TARGET ``eta2d`` [rad] and RC override of the linear commands ``u_lin``,
        as they arrive ``input_delay_s`` after ``t_s`` (before the first arrives: no attitude target, the
        linear sticks at neutral). A time before the last tick's starts a new run.

        Returns (tau (6,) all NaN: ArduSub's torque is unknown, u (6,) = (u_lin, 0, 0, 0), RC channels
        {ch: PWM [us]})."""
        if self._last_t is None or t_s < self._last_t:
            from brov2_hybrid.sim.delay import DelayLine
            self._inputs = DelayLine(self.input_delay_s)
        self._last_t = t_s
        arrived = _over_link(self._inputs, t_s, eta2d, u_lin)
        if arrived is not None:         # until the first input arrives, ArduSub keeps what it had
            flight.attitude_target(arrived[0])
            u_lin = arrived[1]
        else:
            u_lin = np.zeros(3)
        u = np.concatenate([u_lin, np.zeros(3)])
        rc = self.rc_map.pwm_from_u(u)
        flight.override([rc.get(ch, 0) for ch in range(1, 9)])
        return np.full(6, np.nan), u, rc
