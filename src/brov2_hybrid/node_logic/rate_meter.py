"""Message rate [Hz] of a stream from its stamps over a sliding window (plain Python).

Used by the nodes that watch their input rate (``control_law``'s attitude stream,
``mavlink_bridge``'s vehicle attitude). Times in seconds on one clock.
"""
import collections

from brov2_hybrid.errors import Brov2Error


class RateMeter(object):
    """Message rate [Hz] from message timestamps over a sliding window.

    rate = (n - 1) / (t_newest - t_oldest) over the stamps not older than
    ``window_s`` before the newest; 0 with fewer than two stamps. ``rate_hz(now)``
    also drops stamps older than ``window_s`` before ``now``, so a stream that
    stops reads 0 after one window.
    """

    def __init__(self, window_s):
        if not window_s > 0:
            raise Brov2Error("window_s: expected a value > 0, got %r" % window_s)
        self.window_s = float(window_s)
        self._stamps = collections.deque()

    def add(self, stamp_s):
        """Count a message stamped ``stamp_s`` [s].

        A stamp not newer than the last is ignored (duplicate or reordered), unless it is more than
        one window older: the clock went back (vehicle restarted) and the count starts again."""
        if self._stamps and stamp_s <= self._stamps[-1]:
            if stamp_s < self._stamps[-1] - self.window_s:
                self._stamps.clear()      # clock went backwards (vehicle restarted)
            else:
                return                    # duplicate / reordered stamp
        self._stamps.append(float(stamp_s))
        self._trim(self._stamps[-1])

    def _trim(self, now_s):
        while self._stamps and self._stamps[0] < now_s - self.window_s:
            self._stamps.popleft()

    def rate_hz(self, now_s=None):
        """Rate [Hz] over the window; with ``now_s`` [s] the stamps older than one window before it are
        dropped first (a stopped stream reads 0). 0 with fewer than two stamps."""
        if now_s is not None:
            self._trim(now_s)
        if len(self._stamps) < 2:
            return 0.0
        span = self._stamps[-1] - self._stamps[0]
        return (len(self._stamps) - 1) / span if span > 0 else 0.0
