"""The MAVLink bridge's RC override sending (``nodes/mavlink_bridge``, ``/mavros/rc/override``).

:func:`override_fields` checks an OverrideRCIn; :class:`OverrideForwarder` keeps the newest
override and re-sends it while fresh, and gives the release of the channels we took once
it goes stale (:func:`release_of`); :class:`OverrideLink` is the path shared by the ROS
thread (new overrides) and the MAVLink thread (re-sends, release), under one lock.
Channel values are PWM [us] from channel 1 (0 = release, CHAN_NOCHANGE = leave as is);
times are seconds on a monotonic wall clock (``mono``).
"""
import threading
import time

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link.ardusub import CHAN_NOCHANGE, CHAN_RELEASE, N_OVERRIDE_CHANNELS, N_RELEASABLE_CHANNELS


def override_fields(channels):
    """OverrideRCIn.channels (18 values) -> the 18 RC_CHANNELS_OVERRIDE chanN_raw values.

    MAVROS copies the values unchanged; so do we, after checking the length and range.
    """
    values = [int(c) for c in channels]
    if len(values) != N_OVERRIDE_CHANNELS:
        raise Brov2Error("override: expected %d channels, got %d" % (N_OVERRIDE_CHANNELS, len(values)))
    if any(v < CHAN_RELEASE or v > CHAN_NOCHANGE for v in values):
        raise Brov2Error("override: channel values must be %d..%d, got %s" % (CHAN_RELEASE, CHAN_NOCHANGE, values))
    return values


def release_of(channels):
    """The override that releases exactly the channels ``channels`` took (others no change)."""
    return [CHAN_RELEASE if CHAN_RELEASE < c < CHAN_NOCHANGE and k < N_RELEASABLE_CHANNELS else CHAN_NOCHANGE
            for k, c in enumerate(channels)]


class OverrideForwarder(object):
    """Keeps the newest RC override and re-sends it at a fixed period while it is fresh.

    An override is fresh for ``timeout_s`` after it was received; it is sent at once
    when received and then every ``period_s``, so the vehicle sees a steady stream
    (ArduSub's RC_OVERRIDE_TIME and pilot-input failsafe never fire) until the
    autopilot stops publishing. When it goes stale, :meth:`stale_release` gives the
    override releasing the channels we took, to be sent once (the vehicle returns to
    neutral at once instead of holding the last command until RC_OVERRIDE_TIME).
    Not thread-safe: callers sharing it between threads hold one lock around each
    call and the send that follows.
    """

    def __init__(self, period_s, timeout_s):
        if not 0 < period_s <= timeout_s:
            raise Brov2Error("override: expected 0 < period_s <= timeout_s, got %r, %r" % (period_s, timeout_s))
        self.period_s = float(period_s)
        self.timeout_s = float(timeout_s)
        self.channels = None
        self._received = None
        self._sent = None
        self.taken = [CHAN_NOCHANGE] * N_OVERRIDE_CHANNELS   # channels we hold (for release)
        self._stale_announced = False

    def on_override(self, mono_s, channels):
        """A new override (18 channel values, :func:`override_fields`) received at ``mono_s``:
        it is due at once; the channels it sets are remembered for the release."""
        self.channels = override_fields(channels)
        self._received = float(mono_s)
        self._sent = None
        self._stale_announced = False
        for k, c in enumerate(self.channels):
            if c != CHAN_NOCHANGE:
                self.taken[k] = c

    def fresh(self, mono_s):
        """True while the newest override is at most ``timeout_s`` old."""
        return self._received is not None and mono_s - self._received <= self.timeout_s

    def due(self, mono_s):
        """The channels to send now, or None."""
        if not self.fresh(mono_s):
            return None
        if self._sent is None or mono_s - self._sent >= self.period_s - 1e-9:
            return self.channels
        return None

    def mark_sent(self, mono_s):
        """The override went out at ``mono_s``: the next is due ``period_s`` later."""
        self._sent = float(mono_s)

    def release(self):
        """Override releasing every channel we took (None when we took none)."""
        out = release_of(self.taken)
        return out if any(c == CHAN_RELEASE for c in out) else None

    def stale_release(self, mono_s):
        """(release, first): what to send because the override input stopped.

        ``release`` is the override releasing every channel we took (see
        :meth:`release`) once the newest override is stale, and None while it is fresh,
        before any override and when we hold no channel. It is returned on every call
        until :meth:`mark_released` (so a release that could not be sent, e.g. while
        the link is down, goes out when it can). ``first`` is True on the first call
        that returns it since the last override (warn once).
        """
        if self._received is None or self.fresh(mono_s):
            return None, False
        release = self.release()
        if release is None:
            return None, False
        first = not self._stale_announced
        self._stale_announced = True
        return release, first

    def mark_released(self):
        """The release was sent: we hold no channel any more."""
        self.taken = [CHAN_NOCHANGE] * N_OVERRIDE_CHANNELS


class OverrideLink(object):
    """The RC override path to the vehicle, shared by the ROS thread (new overrides) and
    the MAVLink thread (re-sends, the release when the input stops).

    One lock is held around the :class:`OverrideForwarder` and
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
