"""Output stage: normalized command u -> the RC channel values for the firmware on the vehicle.

The paper's gains assume its modified ArduSub (Algorithm 2, ``mixers.Mixer('quantitative')``):
the firmware turns the pilot input u into thruster forces m = T-dagger diag(tau_max) u
and each force into a PWM through the T200 table, jumping the dead band. Real BlueROV2
Heavies run stock ArduSub (Algorithm 1, ``mixers.mix_stock``), whose chain is linear:

* ``RC_Channel::norm_input`` (libraries/RC_Channel/RC_Channel.cpp): channel PWM ->
  (PWM - trim) / (max - trim), 1100/1500/1900 by default, 1 us steps -> u steps of 1/400;
* ``ModeManual::run`` (ArduSub/mode_manual.cpp): roll, pitch, throttle, forward, lateral
  pass straight to the motors library, yaw times ACRO_YAW_P / its default (1);
* ``AP_Motors6DOF::output_armed_stabilizing_vectored_6dof`` (libraries/AP_Motors/
  AP_Motors6DOF.cpp): the vertical group (roll, pitch, throttle) and the horizontal group
  (yaw, forward, lateral) are each mixed with the frame factors and divided by
  max(1, max |.|) of the group, then added and constrained to [-1, 1];
* ``AP_Motors6DOF::output_to_motors`` / ``calc_thrust_to_pwm``: PWM = 1500 + 400 m, linear.

So stock firmware puts small forces inside the T200 dead band (u_yaw = 0.05 gives 1520 us
on the horizontal thrusters: no thrust). The stock-compensated stage below asks stock
ArduSub for the motor PWMs Algorithm 2 would give: it takes Algorithm 2's target m*
(dead band included) and per thruster group finds the RC input u' whose Algorithm 1 mix
reproduces m* best (least squares; the group's frame factors are orthogonal +-1 columns),
scales it so Algorithm 1 never rescales, and picks the best of the neighbouring 1 us
channel quantizations by the wrench it delivers through the thrust table. Nothing has
to be flashed on the vehicle.

Stages (:data:`OUTPUT_STAGES`, by name):

* ``quantitative`` -- the vehicle runs Algorithm 2: send u as is;
* ``stock_naive`` -- the vehicle runs Algorithm 1 and u is sent as is (what the paper's
  pipeline does on a stock vehicle; kept for the analysis);
* ``stock`` -- the vehicle runs Algorithm 1, u compensated as above (target: the wrench
  of Algorithm 2's motor PWMs, so the vehicle flies as on the paper's firmware);
* ``stock_wrench`` -- as ``stock``, aiming at the requested wrench tau_max u itself.

:class:`FirmwareDetector` tells from an override and the motor outputs it produced
(/mavros/rc/out) which mixer the vehicle runs (``auto``).
"""
import collections
import itertools
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.allocation import HORIZONTAL_DOFS, VERTICAL_DOFS
from brov2_hybrid.errors import Brov2Error, as_vector
from brov2_hybrid.mixers import KINDS, QUANTITATIVE, STOCK, motor_pwm_from_rc

#: Firmware names a vehicle can run (the mixer kinds of :mod:`brov2_hybrid.mixers`).
FIRMWARES = KINDS
#: Weight of |u'|^2 against the squared normalized wrench error when choosing among the
#: 1 us candidates: only decides between candidates that deliver the same wrench.
TIE_BREAK = 1e-12
#: Values of the ``firmware`` parameter.
FIRMWARE_CHOICES = ("auto",) + FIRMWARES


@dataclass
class OutputCommand:
    """One command of an output stage. Wrenches (X, Y, Z, K, M, N) body FRD [N, N m]."""

    u_sent: np.ndarray         # (6,) u the vehicle reads from the channels (1/400 steps)
    channel_pwm: dict          # {RC channel: PWM us}
    motor_pwm: np.ndarray      # (n,) motor PWMs [us] the firmware will output, one per thruster
    force_n: np.ndarray        # (n,) thrust of each thruster at motor_pwm (thrust table) [N]
    tau_requested: np.ndarray  # (6,) tau_max * u
    tau_achieved: np.ndarray   # (6,) T @ force_n

    @property
    def tau_error(self):
        """tau_achieved - tau_requested (6,)."""
        return self.tau_achieved - self.tau_requested


class OutputStage(object):
    """u -> RC channels for one firmware. Subclasses set ``firmware`` and :meth:`u_to_send`.

    Parameters
    ----------
    setup : brov2_hybrid.vehicle.Vehicle
    rc_map : brov2_hybrid.rc.RCMap
    """

    name = ""
    firmware = ""

    def __init__(self, setup, rc_map):
        self.setup = setup
        self.rc_map = rc_map
        self.vehicle_mixer = setup.mixer(self.firmware)
        self.pwm_min_us = setup.thrusters.pwm_min_us
        self.pwm_max_us = setup.thrusters.pwm_max_us

    def u_to_send(self, u):
        """u (6,) in [-1, 1] -> the u to put on the channels (before 1 us quantization)."""
        raise NotImplementedError

    def channels(self, u):
        """u (6,) -> {RC channel: PWM us}: the override to send (the fast path)."""
        u = np.clip(as_vector(u, 6, "u"), -1.0, 1.0)
        return self.rc_map.pwm_from_u(self.u_to_send(u))

    def command(self, u):
        """u (6,) -> :class:`OutputCommand` with the motor PWMs and wrench it delivers."""
        u = np.clip(as_vector(u, 6, "u"), -1.0, 1.0)
        rc = self.rc_map.pwm_from_u(self.u_to_send(u))
        motor = np.array(motor_pwm_from_rc(rc, self.rc_map, self.vehicle_mixer, self.pwm_min_us, self.pwm_max_us),
                         dtype=float)
        force = self.setup.table.force_from_pwm(motor)
        return OutputCommand(u_sent=self.rc_map.u_from_pwm(rc), channel_pwm=rc, motor_pwm=motor, force_n=force,
                             tau_requested=self.setup.tau_max * u, tau_achieved=self.setup.T @ force)


class QuantitativeFirmwareOutput(OutputStage):
    """The vehicle runs Algorithm 2 (the paper's firmware): u goes out unchanged."""

    name = QUANTITATIVE
    firmware = QUANTITATIVE

    def u_to_send(self, u):
        return u


class StockNaiveOutput(OutputStage):
    """The vehicle runs stock Algorithm 1 and u goes out unchanged (no compensation)."""

    name = "stock_naive"
    firmware = STOCK

    def u_to_send(self, u):
        return u


class StockCompensatedOutput(OutputStage):
    """The vehicle runs stock Algorithm 1; u' makes it output Algorithm 2's motor PWMs.

    The target is the wrench Algorithm 2's own (whole-microsecond) motor PWMs deliver, so
    the vehicle flies as on the paper's firmware, which the paper's gains assume.
    """

    name = "stock"
    firmware = STOCK
    #: 'algorithm2': reproduce Algorithm 2's wrench; 'requested': tau_max * u itself.
    target = "algorithm2"

    def __init__(self, setup, rc_map):
        super(StockCompensatedOutput, self).__init__(setup, rc_map)
        self.target_mixer = setup.mixer(QUANTITATIVE)
        self.half_range_us = float(rc_map.half_range_us)
        T_hat_t = setup.T_hat.T  # (n, 6): motor i's factors for (surge, ..., yaw)
        # Per group (horizontal first, then vertical: its candidates are scored with the
        # horizontal thrusters' roll and pitch moments already known): the DOFs, the
        # motors they drive, A = their frame factors (n x 3).
        self.groups = []
        for dofs in (HORIZONTAL_DOFS, VERTICAL_DOFS):
            dofs = list(dofs)
            motors = np.nonzero(np.any(T_hat_t[:, dofs] != 0.0, axis=1))[0]
            A = T_hat_t[np.ix_(motors, dofs)]
            self.groups.append((dofs, motors, A, np.linalg.pinv(A)))
        # The 2^3 neighbouring 1 us quantizations of a group's three channels.
        self.corners = np.array(list(itertools.product((0.0, 1.0), repeat=3)))
        self.newton_steps = 3

    def u_to_send(self, u):
        if not np.any(u):
            return u                                              # neutral stays exactly neutral
        setup = self.setup
        table = setup.table
        m_target = self.target_mixer.normalized(u)               # Algorithm 2's m* (n,)
        f_target = table.force_from_pwm(np.rint(table.pwm_from_normalized(m_target)))
        tau_req = setup.T @ f_target if self.target == "algorithm2" else setup.tau_max * u
        w = 1.0 / setup.tau_max
        f_now = f_target.copy()
        u_out = np.zeros(6)
        for dofs, motors, A, A_pinv in self.groups:
            others = np.ones(setup.T.shape[1], dtype=bool)
            others[motors] = False
            T_g = setup.T[:, motors]
            tau_rest = setup.T[:, others] @ f_now[others]
            # Start: Algorithm 2's motor outputs, least squares through the group's factors.
            v = A_pinv @ m_target[motors]
            # Then Newton steps on the group's own wrench rows, through the thrust table's
            # local slope (the table is piecewise linear; a motor in the dead band has none).
            for _ in range(self.newton_steps):
                m = np.clip(A @ v, -1.0, 1.0)
                slope = self._slope_n(m)
                if not np.any(slope[np.abs(m) > 0.0] > 0.0):
                    break
                J = (T_g[dofs] * slope) @ A                       # d tau_g / d v
                r = tau_req[dofs] - T_g[dofs] @ table.force_from_pwm(table.pwm_from_normalized(m)) \
                    - tau_rest[dofs]
                step = np.linalg.lstsq(J, r, rcond=None)[0]
                v_new = v + step
                if not np.all(np.isfinite(v_new)):
                    break
                v = v_new
            v = np.clip(v, -1.0, 1.0)
            peak = float(np.max(np.abs(A @ v)))
            if peak > 1.0:                      # Algorithm 1 would rescale the group by this
                v = v / peak
            # Candidates: floor/ceil of each channel on the 1/400 grid, kept in [-1, 1].
            # and u itself (the uncompensated command: better when the group saturates).
            lo = np.floor(v * self.half_range_us) / self.half_range_us
            cand = np.clip(np.vstack([lo + self.corners / self.half_range_us,
                                      np.rint(u[dofs] * self.half_range_us) / self.half_range_us]), -1.0, 1.0)
            m = cand @ A.T                                        # (8 candidates, n motors)
            m = m / np.maximum(1.0, np.max(np.abs(m), axis=1))[:, None]
            pwm = np.rint(table.pwm_from_normalized(m))
            forces = table.force_from_pwm(pwm)
            err = (forces @ T_g.T + tau_rest - tau_req) * w
            # Ties (e.g. several candidates inside the dead band) go to the smallest command.
            score = np.einsum("ij,ij->i", err, err) + TIE_BREAK * np.einsum("ij,ij->i", cand, cand)
            best = int(np.argmin(score))
            u_out[dofs] = cand[best]
            f_now[motors] = forces[best]
        return u_out

    def _slope_n(self, m):
        """d thrust / d m* [N] of the thrust table at m* (one-sided away from neutral)."""
        table = self.setup.table
        pwm = table.pwm_from_normalized(m)
        h = 0.5 * float(np.min(np.diff(table.pwm_us)))
        side = np.where(m >= 0.0, 1.0, -1.0)
        f1 = table.force_from_pwm(pwm + side * h)
        f0 = table.force_from_pwm(pwm)
        return (f1 - f0) / (side * h) * table.half_range_us


class StockRequestedWrenchOutput(StockCompensatedOutput):
    """As :class:`StockCompensatedOutput`, aiming at the requested wrench tau_max * u.

    Closer to the request than Algorithm 2 itself for the smallest forces: Algorithm 2
    rounds each motor's PWM to the whole microsecond on its own (just past the dead band
    one microsecond is ~0.05 N, a large share of a small force); this stage picks the
    microseconds by the wrench they deliver together.
    """

    name = "stock_wrench"
    target = "requested"


#: Output stages by name.
OUTPUT_STAGES = collections.OrderedDict(
    (cls.name, cls) for cls in (QuantitativeFirmwareOutput, StockNaiveOutput, StockCompensatedOutput,
                                StockRequestedWrenchOutput))


def output_stage(name, setup, rc_map):
    """The output stage called ``name`` (``quantitative``, ``stock`` or ``stock_naive``)."""
    if name not in OUTPUT_STAGES:
        raise Brov2Error("output stage: expected one of %s, got %r" % (tuple(OUTPUT_STAGES), name))
    return OUTPUT_STAGES[name](setup, rc_map)


def stage_for_firmware(firmware, setup, rc_map):
    """The output stage to fly a vehicle running ``firmware`` ('quantitative' or 'stock')."""
    if firmware not in FIRMWARES:
        raise Brov2Error("firmware: expected one of %s, got %r" % (FIRMWARES, firmware))
    return output_stage(firmware, setup, rc_map)


# --------------------------------------------------------------------------- auto-detection
def predicted_motor_pwms(channel_pwm, setup, rc_map):
    """{firmware: motor PWMs (n,) [us]} that each firmware outputs for these RC channels."""
    lo, hi = setup.thrusters.pwm_min_us, setup.thrusters.pwm_max_us
    return {fw: np.array(motor_pwm_from_rc(channel_pwm, rc_map, setup.mixer(fw), lo, hi), dtype=float)
            for fw in FIRMWARES}


def classify_outputs(channel_pwm, motor_pwm, setup, rc_map, tolerance_us):
    """Which firmware explains ``motor_pwm`` for the RC input ``channel_pwm``?

    Motor directions may be reversed on a vehicle (MOT_n_DIRECTION), so each motor is
    compared by its distance from neutral |PWM - 1500|. Returns (firmware or None,
    {firmware: largest per-motor difference [us]}): the firmware whose prediction is
    within ``tolerance_us`` on every motor while the other's is not; None when both or
    neither fit (e.g. a neutral command, which every firmware maps to 1500).
    """
    neutral = setup.table.neutral_us
    seen = np.abs(np.asarray(motor_pwm[:setup.n_thrusters], dtype=float) - neutral)
    dist = {fw: float(np.max(np.abs(np.abs(p - neutral) - seen)))
            for fw, p in predicted_motor_pwms(channel_pwm, setup, rc_map).items()}
    fits = [fw for fw in FIRMWARES if dist[fw] <= tolerance_us]
    return (fits[0] if len(fits) == 1 else None), dist


class FirmwareDetector(object):
    """Tells from the overrides sent and the motor outputs seen which mixer the vehicle runs.

    Feed it every override sent (:meth:`on_override`) and every motor-output sample
    (:meth:`on_outputs`). A sample votes for a firmware when one of the overrides sent
    in the last ``window_s`` is explained by that firmware alone (:func:`classify_outputs`).
    ``firmware`` is set once a firmware has ``votes_needed`` votes and at least four times
    the other's.

    Parameters
    ----------
    setup, rc_map : as :class:`OutputStage`
    tolerance_us : float
        Largest per-motor difference [us] for a prediction to explain the outputs.
    votes_needed : int
    window_s : float
        Overrides this recent [s] may have produced an output sample (transport delay).
    """

    def __init__(self, setup, rc_map, tolerance_us, votes_needed, window_s):
        self.setup = setup
        self.rc_map = rc_map
        self.tolerance_us = float(tolerance_us)
        self.votes_needed = int(votes_needed)
        self.window_s = float(window_s)
        self.votes = {fw: 0 for fw in FIRMWARES}
        self.firmware = None
        self.last_distances = {}
        self._sent = collections.deque()   # (time s, channel tuple)

    def on_override(self, now_s, channels):
        """An override sent: channel PWMs indexed from channel 1 (0 / 65535 = release / no change)."""
        channels = tuple(int(c) for c in channels)
        if not self._sent or self._sent[-1][1] != channels:
            self._sent.append((float(now_s), channels))
        while len(self._sent) > 1 and now_s - self._sent[1][0] > self.window_s:
            self._sent.popleft()

    def on_outputs(self, now_s, motor_pwm):
        """A motor-output sample [us] (at least one per thruster). Returns the firmware once decided."""
        n = self.setup.n_thrusters
        if self.firmware is not None or len(motor_pwm) < n:
            return self.firmware
        if all(float(c) == self.setup.table.neutral_us for c in motor_pwm[:n]):
            return None      # disarmed, released or a neutral command: says nothing
        explained = set()
        for sent_s, channels in self._sent:
            if now_s - sent_s > self.window_s and (sent_s, channels) != self._sent[-1]:
                continue
            fw, dist = classify_outputs(channels, motor_pwm, self.setup, self.rc_map, self.tolerance_us)
            self.last_distances = dist
            if fw is not None:
                explained.add(fw)
        if len(explained) == 1:
            fw = explained.pop()
            self.votes[fw] += 1
            other = [f for f in FIRMWARES if f != fw][0]
            if self.votes[fw] >= self.votes_needed and self.votes[fw] >= 4 * self.votes[other]:
                self.firmware = fw
        return self.firmware

    def mismatch_message(self, configured, parameter="firmware"):
        """The error for a configured firmware the vehicle does not run (None when it agrees)."""
        if self.firmware is None or configured in ("auto", self.firmware):
            return None
        what = {STOCK: "stock ArduSub's linear mixer (Algorithm 1)",
                QUANTITATIVE: "the thrust-table mixer of the paper's modified firmware (Algorithm 2)"}
        return ("parameter '%s' is %r but the vehicle's motor outputs (%s) follow %s (votes %s): set %s:=%s "
                "(or %s:=auto to detect it)" % (parameter, configured, "/mavros/rc/out", what[self.firmware],
                                                self.votes, parameter, self.firmware, parameter))
