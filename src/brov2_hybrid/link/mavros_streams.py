"""The vehicle's message streams through a real MAVROS: what to request, when, and whether
they arrive. Plain Python; ``nodes/mavros_streams`` wires it to ROS.

mavros_node asks ArduSub for no message streams, and a freshly booted ArduSub sends none
unasked: without a request no attitude (``/mavros/imu/data``), no motor outputs
(``/mavros/rc/out``) and no depth (``/mavros/global_position/rel_alt``) ever arrive. The
package's own bridge requests them itself (:mod:`brov2_hybrid.link.stream_requests`, the
same list); with MAVROS, :class:`StreamKeeper` decides when to send
MAV_CMD_SET_MESSAGE_INTERVAL (:func:`interval_command`) through MAVROS's command service:

* once MAVROS reports the vehicle connected (it has seen a HEARTBEAT: a request sent before
  returns success without reaching the vehicle), ``settle_s`` later, every stream;
* again for every stream after each reconnection (a rebooted vehicle forgets the intervals);
* again, for the missing ones only, every ``rerequest_period_s`` while one is missing (a
  vehicle rebooted faster than MAVROS notices the link went down, a lost request);
* a stream is missing when nothing of it arrived for ``stale_s``; ``check_after_s`` after a
  request, missing streams are warned about by name (then every ``rerequest_period_s``),
  and their return is told once.

Streams whose ``topic`` is empty are requested but not checked (SYSTEM_TIME: MAVROS
publishes ``time_reference`` only when the vehicle knows the date). Times in seconds of
one monotonic clock.
"""
from dataclasses import dataclass, field

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.errors import ParameterError
from brov2_hybrid.link.stream_requests import interval_us

MAV_CMD_SET_MESSAGE_INTERVAL = mavlink.MAV_CMD_SET_MESSAGE_INTERVAL   # 511


@dataclass(frozen=True)
class Stream:
    """One message the vehicle must send: MAVLink name, rate [Hz], the MAVROS topic it arrives on
    ("" = not checked)."""

    message: str
    rate_hz: float
    topic: str = ""

    @property
    def message_id(self):
        """The MAVLink message id (ATTITUDE_QUATERNION: 31)."""
        return message_id(self.message)


def message_id(name):
    """MAVLink message id of ``name`` (common / ardupilotmega dialect); ParameterError when unknown."""
    try:
        return int(getattr(mavlink, "MAVLINK_MSG_ID_" + name))
    except AttributeError:
        raise ParameterError("unknown MAVLink message '%s' (expected a name such as ATTITUDE_QUATERNION)"
                             % name) from None


def interval_command(stream):
    """MAV_CMD_SET_MESSAGE_INTERVAL for ``stream``: (command, param1 message id, param2 interval [us])."""
    return MAV_CMD_SET_MESSAGE_INTERVAL, float(stream.message_id), interval_us(stream.rate_hz)


@dataclass
class StreamActions:
    """What :meth:`StreamKeeper.update` asks the node to do: send ``requests`` (Streams), log ``warn``
    and ``info`` texts."""

    requests: list = field(default_factory=list)
    warn: list = field(default_factory=list)
    info: list = field(default_factory=list)


class StreamKeeper(object):
    """Decides when to (re-)request the streams and tells which are missing (module docstring).

    Parameters
    ----------
    streams : list of Stream
    settle_s : float
        Wait after MAVROS reports the vehicle connected before the first request [s].
    check_after_s : float
        A stream not seen this long after its request is reported missing [s].
    stale_s : float
        A stream is missing when nothing of it arrived for this long [s].
    rerequest_period_s : float
        While a stream is missing: re-request it and repeat the warning this often [s].
    """

    def __init__(self, streams, settle_s, check_after_s, stale_s, rerequest_period_s):
        self.streams = list(streams)
        for s in self.streams:
            message_id(s.message)
        self.settle_s, self.check_after_s = float(settle_s), float(check_after_s)
        self.stale_s, self.rerequest_period_s = float(stale_s), float(rerequest_period_s)
        self.connected = False
        self._connected_s = None          # when the link came up [s]
        self._requested_s = None          # last request of all or some streams [s]
        self._warned_s = None             # last "missing" warning [s]
        self._warned = set()              # messages warned missing since they last arrived
        self._last = {}                   # message -> last arrival [s]
        self.requests_sent = 0
        self._told_ok = False             # "all arrive" said since the connection

    def on_link(self, now_s, connected):
        """MAVROS's vehicle state (``/mavros/state`` connected); a new connection schedules a full request."""
        connected = bool(connected)
        if connected and not self.connected:
            self._connected_s = float(now_s)
            self._requested_s = None
            self._last.clear()
            self._told_ok = False
        self.connected = connected

    def on_topic(self, now_s, topic):
        """A message arrived on MAVROS topic ``topic``: the streams carried there are alive."""
        for s in self.streams:
            if s.topic and s.topic == topic:
                self._last[s.message] = float(now_s)

    def missing(self, now_s):
        """Checked streams with nothing for ``stale_s`` (or never since the connection)."""
        return [s for s in self.streams if s.topic and now_s - self._last.get(s.message, -float("inf")) > self.stale_s]

    def update(self, now_s):
        """Requests to send and texts to log now (a :class:`StreamActions`)."""
        act = StreamActions()
        if not self.connected or now_s - self._connected_s < self.settle_s:
            return act
        missing = self.missing(now_s)
        if self._requested_s is None:
            act.requests = list(self.streams)
        elif missing and now_s - self._requested_s >= self.rerequest_period_s:
            act.requests = missing
        if act.requests:
            self._requested_s = float(now_s)
            self.requests_sent += len(act.requests)
            return act
        names = {s.message for s in missing}
        back = sorted(self._warned - names)
        if back:
            act.info.append("%s arrive%s again" % (", ".join(back), "s" if len(back) == 1 else ""))
            self._warned -= set(back)
        late = now_s - self._requested_s >= self.check_after_s
        if missing and late and (self._warned_s is None or now_s - self._warned_s >= self.rerequest_period_s
                                 or not names <= self._warned):
            self._warned_s = float(now_s)
            self._warned |= names
            act.warn.append(self.missing_message(missing, now_s))
        if not missing and not self._told_ok:
            self._told_ok = True
            act.info.append("the vehicle sends %s" % ", ".join(
                "%s (%s)" % (s.message, s.topic) for s in self.streams if s.topic))
        return act

    def missing_message(self, missing, now_s):
        """The warning naming the missing streams, their topics, and what it means."""
        parts = ["%s (id %d, %g Hz) on %s" % (s.message, s.message_id, s.rate_hz, s.topic) for s in missing]
        return ("no %s from the vehicle %.1f s after requesting %s with MAV_CMD_SET_MESSAGE_INTERVAL; "
                "re-requesting every %.0f s. Without them the autopilot holds the thrusters neutral "
                "(no attitude) and cannot check the override (no motor outputs). Check the link "
                "(mavros/state), that the vehicle answers commands (mavros/cmd/command), and its SRn_* "
                "stream-rate parameters"
                % ("; ".join(parts), now_s - self._requested_s, "them" if len(parts) > 1 else "it",
                   self.rerequest_period_s))
