"""ROS-free link logic of the MAVLink bridge (``nodes/mavlink_bridge``): what to do when.

The node's MAVLink thread asks these objects each turn and only does the sending and
publishing: :class:`LinkSchedule` (connected / lost, reconnect after silence, GCS
HEARTBEAT and stream-request timers), :class:`SigningLink` (counting refused frames,
when to key the vehicle with SETUP_SIGNING), :class:`ClockRelay` (when /clock is
published) and :class:`CommandAcks` (COMMAND_ACKs waited for by the services).
Message conversions are in :mod:`brov2_hybrid.link.bridge_core`, plus the small decisions
about vehicle messages here (:func:`is_vehicle_heartbeat`, :func:`servo_channels`,
:func:`state_fields`, :func:`set_mode_fields`).
All times are seconds on a monotonic wall clock (``mono``) unless named otherwise.
"""
import collections
import threading
import time

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.link.ardusub import MODE_FLAG_SAFETY_ARMED, SERVO_OUTPUTS
from brov2_hybrid.link.bridge_core import LinkMonitor, parse_mode

#: SETUP_SIGNING is sent at most this often while the vehicle is not keyed [s].
SETUP_SIGNING_PERIOD_S = 1.0

#: What :meth:`LinkSchedule.turn` says to do: close the link (reason) or not (None); the
#: new connected state when it changed (else None); send a HEARTBEAT; request streams.
LinkTurn = collections.namedtuple("LinkTurn", "close_reason connected_now heartbeat request_streams")


def is_vehicle_heartbeat(mav_type, src_component, target_component):
    """Whether a HEARTBEAT from the target system is the vehicle's own (not a GCS's,
    not another component's)."""
    return mav_type != mavlink.MAV_TYPE_GCS and src_component == target_component


def servo_channels(raw):
    """SERVO_OUTPUT_RAW servo1..16 values -> RCOut.channels: all 16 when any of 9..16
    is non-zero, else the 8 main outputs (:data:`brov2_hybrid.link.ardusub.SERVO_OUTPUTS`; as MAVROS)."""
    raw = list(raw)
    return raw if any(raw[SERVO_OUTPUTS:]) else raw[:SERVO_OUTPUTS]


def state_fields(state, connected):
    """mavros_msgs/State fields from the last HEARTBEAT's ``state`` (dict from
    :func:`~brov2_hybrid.link.bridge_core.state_from_heartbeat` plus system_status); a
    vehicle that is not connected is not armed."""
    return {"connected": bool(connected), "armed": bool(state["armed"] and connected),
            "guided": state["guided"], "manual_input": state["manual_input"], "mode": state["mode"],
            "system_status": state["system_status"]}


def set_mode_fields(base_mode, custom_mode, armed):
    """SetMode request -> (base_mode, custom_mode number) for SET_MODE; as MAVROS, a
    custom mode sent to an armed vehicle keeps the armed flag. Brov2Error as
    :func:`~brov2_hybrid.link.bridge_core.parse_mode`."""
    base, custom = parse_mode(base_mode, custom_mode)
    if custom_mode and armed:
        base |= MODE_FLAG_SAFETY_ARMED
    return base, custom


class LinkSchedule(object):
    """The bridge's link state machine: connected while HEARTBEATs come (a
    :class:`~brov2_hybrid.link.bridge_core.LinkMonitor`), reconnect after
    ``silence_reconnect_s`` without any message, a GCS HEARTBEAT every
    ``heartbeat_period_s`` and, while connected, a stream request every
    ``stream_request_period_s`` when the measured attitude rate is below
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
        return self.monitor.timeout_s

    def opened(self, mono):
        """A new link: start the silence timer, send HEARTBEAT and requests at once."""
        self.monitor.on_message(mono)
        self._next_heartbeat = self._next_streams = 0.0

    def closed(self):
        """The link was closed: forget its HEARTBEATs and messages."""
        self.monitor = LinkMonitor(self.monitor.timeout_s)

    def on_message(self, mono):
        self.monitor.on_message(mono)

    def on_heartbeat(self, mono):
        self.monitor.on_heartbeat(mono)

    def connected(self, mono):
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
    signing, and says when to (re)send SETUP_SIGNING (with ``setup``: on connect
    and when the target vehicle talks unsigned, at most every
    :data:`SETUP_SIGNING_PERIOD_S`)."""

    def __init__(self, setup, target_system):
        self.setup = bool(setup)
        self.target_system = int(target_system)
        self.rejected = 0
        self._next_setup_s = 0.0

    def opened(self):
        """A new link: SETUP_SIGNING may go out at once."""
        self._next_setup_s = 0.0

    def setup_due(self, mono):
        """True when SETUP_SIGNING is to be sent now (and it is then counted as sent)."""
        if self.setup and mono >= self._next_setup_s:
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


class ClockRelay(object):
    """When the bridge publishes /clock: only forwards (a ROS time not later than the
    last one published is dropped) and, while the link is lost, every ``period_s``
    from the :class:`~brov2_hybrid.link.bridge_core.VehicleClock`'s extrapolation."""

    def __init__(self, period_s):
        self.period_s = float(period_s)
        self.last_s = 0.0        # ROS time last published [s]
        self.last_mono = -1.0

    def accept(self, ros_s, mono):
        """True when ``ros_s`` is to be published now (later than the last one)."""
        if ros_s > self.last_s:
            self.last_s = ros_s
            self.last_mono = mono
            return True
        return False

    def keepalive_due(self, mono, started, connected):
        """True when the extrapolated clock is to be published: the vehicle clock has
        ``started``, the link is not ``connected`` and ``period_s`` has passed."""
        return started and not connected and mono - self.last_mono >= self.period_s


#: MAV_PARAM_TYPE values of integer parameters (UINT8 .. INT64): MAVROS returns them in
#: ParamValue.integer, the others (REAL32, REAL64) in ParamValue.real.
INTEGER_PARAM_TYPES = frozenset(range(1, 9))


def param_value_fields(value, param_type):
    """PARAM_VALUE's float ``value`` of MAV_PARAM_TYPE ``param_type`` -> (integer, real) of a
    mavros_msgs/ParamValue, as MAVROS's param plugin fills it (ArduPilot sends every
    value as a float)."""
    if param_type in INTEGER_PARAM_TYPES:
        return int(round(value)), 0.0
    return 0, float(value)


class CommandAcks(object):
    """Replies from the vehicle keyed by what they answer (COMMAND_ACK by command id,
    PARAM_VALUE by parameter name), recorded by the MAVLink thread and waited for by
    service calls on other threads."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._cond = threading.Condition()
        self._acks = {}                      # command id -> (mono, result)

    def record(self, command, result, mono):
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


class OverrideLink(object):
    """The RC override path to the vehicle, shared by the ROS thread (new overrides) and
    the MAVLink thread (re-sends, the release when the input stops).

    One lock is held around the :class:`~brov2_hybrid.link.bridge_core.OverrideForwarder` and
    the send that follows. ``send(channels)`` sends one RC_CHANNELS_OVERRIDE and returns
    whether it went out; ``stopped()`` is True once the node shuts down, after which only
    :meth:`release_all`'s release is sent; ``on_stale()`` is called once each time the
    input went stale and our channels are about to be released (to warn).
    """

    def __init__(self, forwarder, send, stopped, on_stale, clock=time.monotonic):
        self.forwarder = forwarder
        self._send = send
        self._stopped = stopped
        self._on_stale = on_stale
        self._clock = clock
        self._lock = threading.Lock()

    def on_override(self, channels):
        """A new override from the autopilot, received now (``clock()``): keep it and
        send it at once. Bad channels raise Brov2Error (nothing is sent)."""
        with self._lock:
            if self._stopped():
                return
            mono = self._clock()
            self.forwarder.on_override(mono, channels)
            if self._send(self.forwarder.channels):
                self.forwarder.mark_sent(mono)

    def forward(self, mono):
        """Re-send the override while fresh; release our channels once when it went stale."""
        with self._lock:
            if self._stopped():
                return
            release, first = self.forwarder.stale_release(mono)
            if release is not None:
                if first:
                    self._on_stale()
                if self._send(release):
                    self.forwarder.mark_released()
            channels = self.forwarder.due(mono)
            if channels is not None and self._send(channels):
                self.forwarder.mark_sent(mono)

    def release_all(self, repeats, interval_s, linked, sleep=time.sleep):
        """At shutdown: send the release of every channel we took ``repeats`` times,
        ``interval_s`` apart, when ``linked`` (a link is open). Returns the number sent."""
        with self._lock:
            release = self.forwarder.release()
            if release is None or not linked:
                return 0
            for k in range(repeats):
                if k:
                    sleep(interval_s)
                self._send(release)
            self.forwarder.mark_released()
            return repeats
