"""Pure transport delay for sampled signals (commands and telemetry in the loop).

A :class:`DelayLine` holds time-stamped samples and hands back, at query time t, the
newest sample pushed at or before ``t - delay_s``: a sample-and-hold transport delay.
Times are in seconds on any clock that only moves forward (the simulator uses its
simulated time). Used by the vehicle simulator for the command and telemetry delays
(docs/DESIGN.md section 8: overshoot at high omega_d is sensitive to loop latency).

Properties (tested): with ``delay_s = 0`` the line returns the latest sample; a sample
is never returned before ``delay_s`` has elapsed; samples come out in push order; each
sample is stored once and dropped once (O(1) amortised per push/get).
"""
import collections
import math

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.validate import as_finite

__all__ = ["DelayLine"]

#: Tolerance [s] on "pushed at or before t - delay_s", so that a sample pushed at t0 is
#: due at exactly t0 + delay_s despite floating-point rounding of the subtraction.
TIME_TOLERANCE_S = 1e-9


def _as_delay(delay_s):
    try:
        value = float(delay_s)
    except (TypeError, ValueError):
        raise Brov2Error("delay_s: expected a number of seconds, got %r" % (delay_s,))
    if not (math.isfinite(value) and value >= 0.0):
        raise Brov2Error("delay_s: expected a finite value >= 0, got %r" % (delay_s,))
    return value


class DelayLine(object):
    """Sample-and-hold transport delay of ``delay_s`` seconds.

    Parameters
    ----------
    delay_s : float
        Delay [s], >= 0. Settable at any time through :attr:`delay_s`.

    Notes
    -----
    Query times must not decrease (a later ``get`` never looks further back than an
    earlier one): samples that can no longer be returned are discarded. When the delay
    is increased, the value last delivered is held until newer samples become due, so
    the output never jumps back in time.

    Examples
    --------
    >>> line = DelayLine(0.1)
    >>> line.push(0.0, "a"); line.push(0.05, "b")
    >>> line.get(0.05) is None, line.get(0.1), line.get(0.2)
    (True, 'a', 'b')
    """

    def __init__(self, delay_s=0.0):
        self._delay_s = _as_delay(delay_s)
        self._queue = collections.deque()  # (t_s, value), oldest first, not yet delivered
        self._held = None                  # (t_s, value) last delivered, or None
        self._last_push_s = -math.inf

    @property
    def delay_s(self):
        """Transport delay [s]."""
        return self._delay_s

    @delay_s.setter
    def delay_s(self, value):
        """Set the delay [s]; raises Brov2Error unless finite and >= 0. Applies to the next ``get``."""
        self._delay_s = _as_delay(value)

    def __len__(self):
        return len(self._queue)

    def clear(self):
        """Forget every sample (the next ``get`` returns None until a sample is due)."""
        self._queue.clear()
        self._held = None
        self._last_push_s = -math.inf

    def push(self, t_s, value):
        """Store ``value`` sampled at time ``t_s`` [s] (times must not decrease)."""
        t_s = as_finite(t_s, "DelayLine.push: t_s")
        if t_s < self._last_push_s:
            raise Brov2Error("DelayLine.push: time went backwards (%.6f s after %.6f s)"
                             % (t_s, self._last_push_s))
        self._last_push_s = t_s
        self._queue.append((t_s, value))

    def get(self, t_s):
        """Newest value pushed at a time <= ``t_s - delay_s``; None if there is none yet."""
        due = as_finite(t_s, "DelayLine.get: t_s") - self._delay_s + TIME_TOLERANCE_S
        queue = self._queue
        while queue and queue[0][0] <= due:
            self._held = queue.popleft()
        return None if self._held is None else self._held[1]

    def pop_due(self, t_s):
        """Every (time, value) due at ``t_s`` that was not delivered yet, oldest first.

        For event streams (e.g. outgoing messages) where each sample must be delivered
        once; the last one returned also becomes the value :meth:`get` holds.
        """
        due = as_finite(t_s, "DelayLine.pop_due: t_s") - self._delay_s + TIME_TOLERANCE_S
        queue = self._queue
        out = []
        while queue and queue[0][0] <= due:
            out.append(queue.popleft())
        if out:
            self._held = out[-1]
        return out

    def next_due_s(self):
        """Query time [s] at which the oldest undelivered sample becomes due (inf if none)."""
        return self._queue[0][0] + self._delay_s if self._queue else math.inf
