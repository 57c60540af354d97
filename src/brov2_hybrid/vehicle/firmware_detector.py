"""Which firmware does the vehicle run? Told from the overrides sent and the motor outputs seen.

The ``firmware`` parameter's ``auto`` (nodes ``mission`` and ``thruster_allocation``): each
firmware of :data:`~brov2_hybrid.vehicle.firmware_output.FIRMWARES` predicts the motor PWMs
of an RC input (:func:`predicted_motor_pwms`, through the vehicle's mixers); a motor-output
sample votes for the one firmware whose prediction explains it (:func:`classify_outputs`);
:class:`FirmwareDetector` decides once the votes agree.
"""
import collections

import numpy as np

from brov2_hybrid.vehicle.firmware_output import FIRMWARES
from brov2_hybrid.vehicle.mixers import QUANTITATIVE, STOCK, motor_pwm_from_rc


def predicted_motor_pwms(channel_pwm, vehicle, rc_map):
    """{firmware: motor PWMs (n,) [us]} that each firmware outputs for these RC channels."""
    lo, hi = vehicle.thrusters.pwm_min_us, vehicle.thrusters.pwm_max_us
    return {fw: np.array(motor_pwm_from_rc(channel_pwm, rc_map, vehicle.mixer(fw), lo, hi), dtype=float)
            for fw in FIRMWARES}


def classify_outputs(channel_pwm, motor_pwm, vehicle, rc_map, tolerance_us):
    """Which firmware explains ``motor_pwm`` for the RC input ``channel_pwm``?

    Motor directions may be reversed on a vehicle (MOT_n_DIRECTION), so each motor is
    compared by its distance from neutral |PWM - 1500|. Returns (firmware or None,
    {firmware: largest per-motor difference [us]}): the firmware whose prediction is
    within ``tolerance_us`` on every motor while the other's is not; None when both or
    neither fit (e.g. a neutral command, which every firmware maps to 1500).
    """
    neutral = vehicle.table.neutral_us
    seen = np.abs(np.asarray(motor_pwm[:vehicle.n_thrusters], dtype=float) - neutral)
    dist = {fw: float(np.max(np.abs(np.abs(p - neutral) - seen)))
            for fw, p in predicted_motor_pwms(channel_pwm, vehicle, rc_map).items()}
    fits = [fw for fw in FIRMWARES if dist[fw] <= tolerance_us]
    return (fits[0] if len(fits) == 1 else None), dist


def probe_command(u, probe_u, k):
    """The command u (6,) sent while the firmware is not known yet, at the ``k``-th override.

    The controller's own ``u`` keeps the attitude held; the probe ``probe_u`` is added with
    alternating sign, so that the motor outputs tell the mixers apart (a neutral command
    would not) while its torque averages to zero over two overrides (a constant probe turns
    the vehicle for as long as the detection takes). :func:`classify_outputs` compares
    distances from neutral, so either sign votes alike. Clipped to [-1, 1].
    """
    sign = 1.0 if k % 2 == 0 else -1.0
    return np.clip(np.asarray(u, dtype=float) + sign * np.asarray(probe_u, dtype=float), -1.0, 1.0)


class FirmwareDetector(object):
    """Tells from the overrides sent and the motor outputs seen which mixer the vehicle runs.

    Feed it every override sent (:meth:`on_override`) and every motor-output sample
    (:meth:`on_outputs`). A sample votes for a firmware when one of the overrides sent
    in the last ``window_s`` before it (or seen up to ``grace_s`` after it) is explained by
    that firmware alone (:func:`classify_outputs`). ``firmware`` is set once a firmware has
    ``votes_needed`` votes and at least four times the other's.

    Why the grace: the overrides and the motor outputs reach this detector by different
    paths (in the mission: the override topic and the vehicle's telemetry). On a busy machine
    an output sample may arrive before the override that produced it. Judged at once, against
    only the older overrides, that sample may then fit the wrong firmware's prediction for one
    of them: the thrust-table output of a small command can equal the linear mixer's output of
    a larger one (seen: a yaw override of 1539 us explained "stock" outputs of +-39 us that
    the quantitative firmware made from a newer, smaller command), and three such samples
    told the wrong firmware. Each sample is therefore judged ``grace_s`` after it arrived, with
    the overrides seen meanwhile among its candidates: the override that produced it is then
    there, its own firmware explains it, and a coincidence makes the sample ambiguous (no
    vote) rather than wrong.

    Parameters
    ----------
    vehicle, rc_map : as :class:`OutputStage`
    tolerance_us : float
        Largest per-motor difference [us] for a prediction to explain the outputs.
    votes_needed : int
    window_s : float
        Overrides this recent [s] may have produced an output sample (transport delay).
    grace_s : float
        How long after a sample arrived [s] it is judged (0: at once).
    """

    #: How many voting samples :attr:`vote_record` keeps.
    VOTE_RECORD = 8

    def __init__(self, vehicle, rc_map, tolerance_us, votes_needed, window_s, grace_s=0.0):
        self.vehicle = vehicle
        self.rc_map = rc_map
        self.tolerance_us = float(tolerance_us)
        self.votes_needed = int(votes_needed)
        self.window_s = float(window_s)
        self.grace_s = float(grace_s)
        self.votes = {fw: 0 for fw in FIRMWARES}
        #: output samples judged against at least one override (voting or not)
        self.judged = 0
        self.firmware = None
        self.last_distances = {}
        #: The samples that voted, newest last (at most :data:`VOTE_RECORD`): (time [s], firmware,
        #: motor PWMs, the override that explained them, {firmware: largest difference [us]}).
        self.vote_record = collections.deque(maxlen=self.VOTE_RECORD)
        self._sent = collections.deque()      # (time s, channel tuple)
        self._pending = collections.deque()   # (time s, motor PWMs) not judged yet

    def on_override(self, now_s, channels):
        """An override sent: channel PWMs indexed from channel 1 (0 / 65535 = release / no change).
        Judges the samples whose grace has run out; returns the firmware once decided."""
        channels = tuple(int(c) for c in channels)
        if not self._sent or self._sent[-1][1] != channels:
            self._sent.append((float(now_s), channels))
        self._judge_due(now_s)
        keep_s = self.window_s + self.grace_s
        while len(self._sent) > 1 and now_s - self._sent[1][0] > keep_s:
            self._sent.popleft()
        return self.firmware

    def on_outputs(self, now_s, motor_pwm):
        """A motor-output sample [us] (at least one per thruster). Returns the firmware once decided."""
        n = self.vehicle.n_thrusters
        if self.firmware is not None or len(motor_pwm) < n:
            return self.firmware
        if not all(float(c) == self.vehicle.table.neutral_us for c in motor_pwm[:n]):
            # all neutral (disarmed, released or a neutral command) says nothing
            self._pending.append((float(now_s), tuple(float(c) for c in motor_pwm[:n])))
        self._judge_due(now_s)
        return self.firmware

    def _judge_due(self, now_s):
        while self._pending and self.firmware is None and now_s - self._pending[0][0] >= self.grace_s:
            self._judge(*self._pending.popleft())
        if self.firmware is not None:
            self._pending.clear()

    def _judge(self, sample_s, motor_pwm):
        explained = {}
        compared = False
        for sent_s, channels in self._sent:
            if sent_s > sample_s + self.grace_s:
                break
            if sample_s - sent_s > self.window_s and (sent_s, channels) != self._sent[-1]:
                continue
            compared = True
            fw, dist = classify_outputs(channels, motor_pwm, self.vehicle, self.rc_map, self.tolerance_us)
            self.last_distances = dist
            if fw is not None:
                explained[fw] = (channels, dist)
        self.judged += compared
        if len(explained) != 1:
            return
        fw, (channels, dist) = explained.popitem()
        self.vote_record.append((sample_s, fw, tuple(int(c) for c in motor_pwm), channels,
                                 {k: round(v, 1) for k, v in dist.items()}))
        self.votes[fw] += 1
        other = [f for f in FIRMWARES if f != fw][0]
        if self.votes[fw] >= self.votes_needed and self.votes[fw] >= 4 * self.votes[other]:
            self.firmware = fw

    def mismatch_message(self, configured, parameter="firmware"):
        """The error for a configured firmware the vehicle does not run (None when it agrees)."""
        if self.firmware is None or configured in ("auto", self.firmware):
            return None
        what = {STOCK: "stock ArduSub's linear mixer (Algorithm 1)",
                QUANTITATIVE: "the thrust-table mixer of the paper's modified firmware (Algorithm 2)"}
        return ("parameter '%s' is %r but the vehicle's motor outputs (%s) follow %s (votes %s): set %s:=%s "
                "(or %s:=auto to detect it)" % (parameter, configured, "/mavros/rc/out", what[self.firmware],
                                                self.votes, parameter, self.firmware, parameter))
