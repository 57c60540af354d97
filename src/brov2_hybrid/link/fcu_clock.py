"""ROS time from the FCU's clock (``nodes/mavlink_bridge`` with ``publish_clock``).

:class:`FcuClock` turns the FCU's (the autopilot's) boot time (ATTITUDE time_boot_ms, SYSTEM_TIME)
into a monotonic ROS time for faster-than-real-time runs with /use_sim_time, and keeps it
running while the link is down; :class:`ClockRelay` says when /clock is published.
Times are floats in seconds; ``mono`` arguments are a monotonic wall clock.
"""
from brov2_hybrid.errors import Brov2Error


class FcuClock(object):
    """Monotonic ROS time from the FCU's boot time, for faster-than-real-time runs.

    While FCU time arrives, ROS time = FCU time + offset. When it stops (link
    lost), ``now(mono)`` extrapolates at the last measured rate of FCU time per
    wall second (clamped to ``[min_rate, max_rate]``), so timers and timeouts keep
    running. When FCU time restarts (a rebooted FCU counts from zero again), jumps
    ahead, or comes back far behind the time extrapolated meanwhile, the offset is
    re-anchored so ROS time never goes backwards. An FCU clock that merely pauses with
    the link up (a simulator in lockstep waiting for a command, a stalled one) is
    followed as it is: ROS time waits with it.
    """

    def __init__(self, min_rate, max_rate, jump_s):
        """``min_rate``, ``max_rate``: bounds of the measured speed (FCU s per wall s);
        ``jump_s``: an FCU time this far from the expected one re-anchors ROS time [s]."""
        if not 0 < min_rate <= max_rate or not jump_s > 0:
            raise Brov2Error("FCU clock: expected 0 < min_rate <= max_rate and jump_s > 0, got %r, %r, %r"
                             % (min_rate, max_rate, jump_s))
        self.min_rate, self.max_rate, self.jump_s = float(min_rate), float(max_rate), float(jump_s)
        self.offset_s = None
        self._last = None         # (fcu_s, ros_s, mono_s)
        self._rate = 1.0
        self._rate_anchor = None  # (fcu_s, mono_s) for the rate estimate
        self._extrapolated_s = 0.0   # latest ROS time now() gave beyond the last FCU time

    @property
    def started(self):
        """True once an FCU time has been seen."""
        return self._last is not None

    def update(self, fcu_s, mono_s):
        """FCU time ``fcu_s`` seen at wall ``mono_s``; returns the ROS time [s]."""
        fcu_s, mono_s = float(fcu_s), float(mono_s)
        if self._last is None:
            self.offset_s = 0.0
        else:
            expected = self._last[1] + max(0.0, mono_s - self._last[2]) * self._rate
            ros_s = fcu_s + self.offset_s
            if (ros_s < self._last[1] or ros_s - expected > self.jump_s
                    or self._extrapolated_s - ros_s > self.jump_s):
                # restart, jump, or back after a long extrapolation: continue from where ROS time is now
                self.offset_s = max(expected, self._last[1], self._extrapolated_s) - fcu_s
                self._rate_anchor = None
        ros_s = max(fcu_s + self.offset_s, self._last[1] if self._last else 0.0)
        if self._rate_anchor is None:
            self._rate_anchor = (fcu_s, mono_s)
        elif mono_s - self._rate_anchor[1] >= 0.5:
            rate = (fcu_s - self._rate_anchor[0]) / (mono_s - self._rate_anchor[1])
            self._rate = min(max(rate, self.min_rate), self.max_rate)
            self._rate_anchor = (fcu_s, mono_s)
        self._last = (fcu_s, ros_s, mono_s)
        return ros_s

    @property
    def rate(self):
        """Measured FCU seconds per wall second (the simulator's speed-up)."""
        return self._rate

    def now(self, mono_s):
        """ROS time [s] at wall ``mono_s``, extrapolated from the last FCU time."""
        if self._last is None:
            return 0.0
        ros_s = self._last[1] + max(0.0, float(mono_s) - self._last[2]) * self._rate
        self._extrapolated_s = max(self._extrapolated_s, ros_s)
        return ros_s


class ClockRelay(object):
    """When the bridge publishes /clock: only forwards (a ROS time not later than the
    last one published is dropped) and, while the link is lost, every ``period_s``
    from the :class:`FcuClock`'s extrapolation."""

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
        """True when the extrapolated clock is to be published: the FCU clock has
        ``started``, the link is not ``connected`` and ``period_s`` has passed."""
        return started and not connected and mono - self.last_mono >= self.period_s
