"""The control ticks' recent history, so a logger that restarted loses no row.

``control_law`` keeps the last ``status_history_s`` seconds of its per-tick status in a
:class:`StatusHistory` and serves them (service ``~status_since``,
``srv/StatusSince.srv``). A respawned ``logger`` asks for every tick after the last row
of the file its previous run wrote and writes them first in its new file, so a
crash of the logger (SIGKILL, respawn about 0.4 s later) leaves no tick unlogged
(docs/safety.md "Crashes and failures"). Items are anything with a stamp; the history does not look inside.
"""
import collections
import math


class StatusHistory(object):
    """The newest ``capacity`` (stamp [s], item) pairs, stamps non-decreasing.

    ``dropped_until_s`` is the stamp of the newest item pushed out (-inf while none is).
    """

    def __init__(self, capacity):
        capacity = int(capacity)
        if capacity < 1:
            raise ValueError("status history: capacity must be >= 1 item, got %r" % capacity)
        self._items = collections.deque(maxlen=capacity)
        self.dropped_until_s = -math.inf

    def __len__(self):
        return len(self._items)

    def append(self, stamp_s, item):
        """Add ``item`` stamped ``stamp_s`` [s], dropping the oldest when full (``dropped_until_s``
        follows). A stamp older than the newest is a new timeline (the clock went back): the
        history is cleared first. Raises ValueError for a NaN stamp."""
        stamp_s = float(stamp_s)
        if math.isnan(stamp_s):
            raise ValueError("status history: stamp is NaN")
        if self._items and stamp_s < self._items[-1][0]:
            self.clear()          # the clock went back (bag replay restarted): a new timeline
        if len(self._items) == self._items.maxlen:
            self.dropped_until_s = self._items[0][0]
        self._items.append((stamp_s, item))

    def clear(self):
        """Forget every item; ``dropped_until_s`` back to -inf."""
        self._items.clear()
        self.dropped_until_s = -math.inf

    def since(self, after_s):
        """(items stamped after ``after_s``, oldest first; complete).

        ``complete`` is False when items stamped after ``after_s`` were already dropped,
        i.e. the answer has a hole at its start.
        """
        after_s = float(after_s)
        if math.isnan(after_s):
            raise ValueError("status history: after_s is NaN")
        items = [item for stamp, item in self._items if stamp > after_s]
        return items, self.dropped_until_s <= after_s


def history_capacity(rate_hz, history_s):
    """Items to hold ``history_s`` seconds of ticks at up to twice ``rate_hz``.

    Twice: the attitude trigger may tick at up to twice the control rate.
    """
    if not (rate_hz > 0 and history_s > 0):
        raise ValueError("status history: rate_hz and history_s must be > 0, got %r, %r" % (rate_hz, history_s))
    return int(math.ceil(2.0 * rate_hz * history_s))
