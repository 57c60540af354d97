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
    in the last ``window_s`` is explained by that firmware alone (:func:`classify_outputs`).
    ``firmware`` is set once a firmware has ``votes_needed`` votes and at least four times
    the other's.

    Parameters
    ----------
    vehicle, rc_map : as :class:`OutputStage`
    tolerance_us : float
        Largest per-motor difference [us] for a prediction to explain the outputs.
    votes_needed : int
    window_s : float
        Overrides this recent [s] may have produced an output sample (transport delay).
    """

    def __init__(self, vehicle, rc_map, tolerance_us, votes_needed, window_s):
        self.vehicle = vehicle
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
        n = self.vehicle.n_thrusters
        if self.firmware is not None or len(motor_pwm) < n:
            return self.firmware
        if all(float(c) == self.vehicle.table.neutral_us for c in motor_pwm[:n]):
            return None      # disarmed, released or a neutral command: says nothing
        explained = set()
        for sent_s, channels in self._sent:
            if now_s - sent_s > self.window_s and (sent_s, channels) != self._sent[-1]:
                continue
            fw, dist = classify_outputs(channels, motor_pwm, self.vehicle, self.rc_map, self.tolerance_us)
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
