"""The MAVLink bridge's link (``nodes/mavlink_bridge``): what to do when.

The node's MAVLink thread asks these objects each turn and only does the sending:
:class:`LinkSchedule` (connected / lost from the vehicle's HEARTBEATs through a
:class:`LinkMonitor`, reconnect after silence, GCS HEARTBEAT and stream-request timers),
:class:`SigningLink` (counting refused frames, when to key the vehicle with
SETUP_SIGNING) and :class:`CommandAcks` (the vehicle's replies, COMMAND_ACK and
PARAM_VALUE, waited for by the services).
All times are seconds on a monotonic wall clock (``mono``).
"""
import collections
import math
import threading
import time


#: SETUP_SIGNING is sent at most this often while the vehicle is not keyed [s].
SETUP_SIGNING_PERIOD_S = 1.0


#: What :meth:`LinkSchedule.turn` says to do: close the link (reason) or not (None); the
#: new connected state when it changed (else None); send a HEARTBEAT; request streams.
LinkTurn = collections.namedtuple("LinkTurn", "close_reason connected_now heartbeat request_streams")


class LinkMonitor(object):
    """Connected while a HEARTBEAT from the vehicle arrived within ``timeout_s`` (wall)."""

    def __init__(self, timeout_s):
        self.timeout_s = float(timeout_s)
        self.last_heartbeat = None
        self.last_message = None

    def on_heartbeat(self, mono_s):
        """The vehicle's HEARTBEAT arrived at ``mono_s``."""
        self.last_heartbeat = float(mono_s)

    def on_message(self, mono_s):
        """Any message from the vehicle arrived at ``mono_s``."""
        self.last_message = float(mono_s)

    def connected(self, mono_s):
        """True while the last HEARTBEAT is at most ``timeout_s`` old at ``mono_s``."""
        return self.last_heartbeat is not None and mono_s - self.last_heartbeat <= self.timeout_s

    def silent_for(self, mono_s):
        """Wall seconds since any message (inf when none yet)."""
        return math.inf if self.last_message is None else mono_s - self.last_message


class LinkSchedule(object):
    """The bridge's link state machine: connected while HEARTBEATs come (a
    :class:`LinkMonitor`), reconnect after ``silence_reconnect_s`` without any message,
    a GCS HEARTBEAT every ``heartbeat_period_s`` and, while connected, a stream request
    every ``stream_request_period_s`` when the measured attitude rate is below
    ``rerequest_fraction`` of the requested ``attitude_rate_hz``."""

    def __init__(self, link_timeout_s, silence_reconnect_s, heartbeat_period_s, stream_request_period_s,
                 rerequest_fraction, attitude_rate_hz):
        self.monitor = LinkMonitor(link_timeout_s)
        self.silence_reconnect_s = float(silence_reconnect_s)
        self.heartbeat_period_s = float(heartbeat_period_s)
        self.stream_request_period_s = float(stream_request_period_s)
        self.rerequest_fraction = float(rerequest_fraction)
        self.attitude_rate_hz = float(attitude_rate_hz)
        self.was_connected = False      # what the node last published
        self._next_heartbeat = self._next_streams = 0.0

    @property
    def timeout_s(self):
        """Link timeout [s]: connected while a HEARTBEAT came within it."""
        return self.monitor.timeout_s

    def opened(self, mono):
        """A new link: start the silence timer, send HEARTBEAT and requests at once."""
        self.monitor.on_message(mono)
        self._next_heartbeat = self._next_streams = 0.0

    def closed(self):
        """The link was closed: forget its HEARTBEATs and messages."""
        self.monitor = LinkMonitor(self.monitor.timeout_s)

    def on_message(self, mono):
        """Any message from the vehicle arrived at ``mono``."""
        self.monitor.on_message(mono)

    def on_heartbeat(self, mono):
        """The vehicle's HEARTBEAT arrived at ``mono``."""
        self.monitor.on_heartbeat(mono)

    def connected(self, mono):
        """True while the vehicle's HEARTBEATs keep coming (see :class:`LinkMonitor`)."""
        return self.monitor.connected(mono)

    def turn(self, mono, attitude_rate_hz):
        """What to do at the end of one turn of the MAVLink thread (a :data:`LinkTurn`).

        ``attitude_rate_hz``: a function giving the measured attitude rate [Hz], asked
        only when a stream request is due. The caller sets :attr:`was_connected` when it
        publishes the new state.
        """
        if self.monitor.silent_for(mono) > self.silence_reconnect_s:
            return LinkTurn("no message for %.1f s" % self.silence_reconnect_s, None, False, False)
        connected = self.monitor.connected(mono)
        heartbeat = mono >= self._next_heartbeat
        if heartbeat:
            self._next_heartbeat = mono + self.heartbeat_period_s
        request = False
        if connected and mono >= self._next_streams:
            request = attitude_rate_hz() < self.rerequest_fraction * self.attitude_rate_hz
            self._next_streams = mono + self.stream_request_period_s
        return LinkTurn(None, connected if connected != self.was_connected else None, heartbeat, request)


class SigningLink(object):
    """The bridge's side of MAVLink 2 signing: counts vehicle frames refused by
    signing, and says when to (re)send SETUP_SIGNING (with ``signing_setup``: on connect
    and when the target vehicle talks unsigned, at most every
    :data:`SETUP_SIGNING_PERIOD_S`)."""

    def __init__(self, signing_setup, target_system):
        self.signing_setup = bool(signing_setup)
        self.target_system = int(target_system)
        self.rejected = 0
        self._next_setup_s = 0.0

    def opened(self):
        """A new link: SETUP_SIGNING may go out at once."""
        self._next_setup_s = 0.0

    def setup_due(self, mono):
        """True when SETUP_SIGNING is to be sent now (and it is then counted as sent)."""
        if self.signing_setup and mono >= self._next_setup_s:
            self._next_setup_s = mono + SETUP_SIGNING_PERIOD_S
            return True
        return False

    def on_rejected(self, sender, mono):
        """A frame from ``sender`` ((system, component, msgid) or None) refused by signing.

        Returns True when SETUP_SIGNING is to be sent now (the target vehicle talks but
        is not keyed yet)."""
        self.rejected += 1
        if sender is not None and sender[0] == self.target_system:
            return self.setup_due(mono)
        return False


class CommandAcks(object):
    """Replies from the vehicle keyed by what they answer (COMMAND_ACK by command id,
    PARAM_VALUE by parameter name), recorded by the MAVLink thread and waited for by
    service calls on other threads."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._cond = threading.Condition()
        self._acks = {}                      # command id -> (mono, result)

    def record(self, command, result, mono):
        """The reply ``result`` to ``command`` arrived at ``mono`` (wakes the waiters)."""
        with self._cond:
            self._acks[command] = (mono, result)
            self._cond.notify_all()

    def wait(self, command, since, timeout_s):
        """The result of the first ACK of ``command`` received at or after ``since``,
        or None when none arrives within ``timeout_s``."""
        deadline = self._clock() + timeout_s
        with self._cond:
            while True:
                ack = self._acks.get(command)
                if ack is not None and ack[0] >= since:
                    return ack[1]
                remaining = deadline - self._clock()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
