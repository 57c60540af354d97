"""RC override: does it reach the vehicle (:class:`OverrideVerifier`), and a node's
override publications serialised with its release of the override (:class:`OverrideGate`).

Plain Python; ``nodes/mission`` runs the verifier, ``nodes/thruster_allocation`` the
gate. Channel values are PWM [us] indexed from channel 1 (0 = release, CHAN_NOCHANGE
= leave as is); times in seconds.
"""
import threading

from brov2_hybrid.link.ardusub import CHAN_NOCHANGE

VERIFY_PENDING = "PENDING"
VERIFY_OK = "VERIFIED"
VERIFY_FAILED = "FAILED"


class OverrideVerifier(object):
    """Checks that RC overrides reach the vehicle: its motor outputs must move.

    Verification starts at the first override sent while the vehicle is armed in which
    some channel is at least ``min_deviation_us`` from neutral; if no motor output
    then moves from neutral within ``timeout_s``, the check fails. The commonest cause
    is a wrong MAVLink system id: ArduSub accepts RC_CHANNELS_OVERRIDE only from
    SYSID_MYGCS (default 255), so MAVROS (or our bridge) must use system_id 255.
    """

    def __init__(self, timeout_s, min_deviation_us, neutral_us):
        self.timeout_s = float(timeout_s)
        self.min_deviation_us = float(min_deviation_us)
        self.neutral_us = float(neutral_us)
        self.armed = False
        self.connected = True
        self._since = None
        self.state = VERIFY_PENDING
        self.outputs_seen = 0               # motor output messages received
        self._outputs_at_since = 0          # ... when the check started

    def on_armed(self, armed):
        """Vehicle armed state; a check in progress restarts after a disarm."""
        self.armed = bool(armed)
        if not self.armed:
            self._since = None

    def on_link(self, connected):
        """Vehicle link up or down. While it is down the motors cannot answer, so a check
        in progress restarts with the next override after the link returns (a lost link
        is reported by the link watchdogs, not as a system-id problem)."""
        self.connected = bool(connected)
        if not self.connected:
            self._since = None

    def on_override(self, now_s, channels):
        """An override we sent: channel PWMs (0 / 65535 = release / no change)."""
        if self.state != VERIFY_PENDING or not (self.armed and self.connected) or self._since is not None:
            return
        if any(0 < c < CHAN_NOCHANGE and abs(c - self.neutral_us) >= self.min_deviation_us for c in channels):
            self._since = float(now_s)
            self._outputs_at_since = self.outputs_seen

    def on_outputs(self, channels):
        """The vehicle's motor outputs (SERVO_OUTPUT_RAW / mavros rc/out)."""
        self.outputs_seen += 1
        if self.state == VERIFY_PENDING and self.armed and any(
                c > 0 and c != self.neutral_us for c in channels[:8]):
            self.state = VERIFY_OK

    def update(self, now_s):
        """Fail the check if no motor output moved within ``timeout_s`` of the first non-neutral armed
        override; returns the state (VERIFY_PENDING, VERIFY_OK or VERIFY_FAILED; final once decided)."""
        if self.state == VERIFY_PENDING and self._since is not None and now_s - self._since > self.timeout_s:
            self.state = VERIFY_FAILED
        return self.state

    def no_outputs(self):
        """True when the check failed with no motor output message at all during it: the vehicle
        sends no SERVO_OUTPUT_RAW, so nothing tells whether the override arrives."""
        return self.state == VERIFY_FAILED and self.outputs_seen == self._outputs_at_since

    def failure_message(self, rc_out_name="/mavros/rc/out"):
        """The error to report when the check failed: no motor outputs arrived (streams not sent), or
        they stayed neutral -- the likely cause (the system id is not ArduSub's SYSID_MYGCS) and the fix."""
        if self.no_outputs():
            return ("no motor outputs arrived from the vehicle (nothing on %s) during the %.1f s override check: "
                    "it sends no SERVO_OUTPUT_RAW, so whether it follows the override is unknown. With real "
                    "MAVROS the streams must be requested (mavros_streams does it, see its warnings; or "
                    "SET_MESSAGE_INTERVAL 36 by hand)" % (rc_out_name, self.timeout_s))
        return ("RC override is not reaching the vehicle: motors stayed at neutral for %.1f s "
                "while a non-neutral override was sent armed. ArduSub accepts RC_CHANNELS_OVERRIDE "
                "only from its ground-station system id: set the ArduSub parameter SYSID_MYGCS = 255 "
                "and run the bridge / MAVROS with system_id 255 (mavros_node _system_id:=255)."
                % self.timeout_s)


class OverrideGate(object):
    """Serialises a node's RC override publications with its release of the override.

    ``send(publish)`` runs ``publish()`` under the gate's lock unless the override was
    released (checked inside the lock). ``release(publish_release)`` marks the gate
    released *before* it waits for the lock, so no publication starts after it, then
    runs ``publish_release()`` under the lock, after any publication already in
    flight. Once released, nothing but the release goes out.
    """

    def __init__(self):
        self._lock = threading.Lock()        # one publication at a time
        self._flag_lock = threading.Lock()   # the released flag
        self.released = False

    def send(self, publish):
        """Run ``publish()`` unless released; True when it ran."""
        with self._lock:
            if self.released:
                return False
            publish()
            return True

    def release(self, publish_release):
        """Release (once): True when this call released, False when already released."""
        with self._flag_lock:
            if self.released:
                return False
            self.released = True
        with self._lock:
            publish_release()
        return True
