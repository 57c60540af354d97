"""Dive playback: where a dive comes from (a dive CSV, or the DesiredState messages
recorded in a bag for a replay) and how its rows are released against a clock.

:func:`load_dive` reads either source; every row goes through the one validation of
dive rows, :class:`brov2_hybrid.dive.dive_csv.DiveRows` (finite numbers, increasing
stamps, commands in [-1, 1], desired pitch within ``max_abs_pitch_deg``).
:class:`DivePlayback` schedules the rows; ``nodes/csv_reader`` is the rospy shell that
publishes them. Times in seconds on one clock (ROS time, which may be simulated time);
frames and units as in the DesiredState message.

Every way a bag can be unusable -- missing, not a bag, truncated or unindexed (a
recording that was killed; ``rosbag reindex`` fixes it), corrupt, without the topic,
the topic of another message type -- raises
:class:`~brov2_hybrid.errors.InputDataError` naming the file (and topic), not a rosbag /
genpy exception. ``rosbag`` and ``genpy`` are imported only by :func:`load_bag_dive`;
the rest is plain Python (tested without ROS).
"""
import struct

from brov2_hybrid.dive.dive_csv import DiveRows, load_dive_csv
from brov2_hybrid.errors import Brov2Error, InputDataError
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, LINEAR_DOF_NAMES

DESIRED_STATE_TYPE = "brov2_hybrid/DesiredState"


def desired_samples(messages, source, expected_type=DESIRED_STATE_TYPE):
    """Samples for :func:`dive_from_samples` from DesiredState messages.

    Parameters
    ----------
    messages : iterable of (msg, t_s)
        The messages of one bag topic with their record times [s]; a message without
        a header stamp gets its record time.
    source : str
        Named in errors (``run.bag:/brov2/desired_state``).

    Raises InputDataError naming ``source``, the expected type and the type found
    when a message is not an ``expected_type`` (its ROS ``_type``).
    """
    samples = []
    for k, (msg, t_s) in enumerate(messages, start=1):
        found = getattr(msg, "_type", type(msg).__name__)
        if found != expected_type:
            raise InputDataError("%s: message %d: expected type %s, found %s"
                                 % (source, k, expected_type, found))
        stamp = msg.header.stamp.to_sec() or float(t_s)
        samples.append((stamp, msg.roll_rad, msg.pitch_rad, msg.yaw_rad, msg.surge, msg.sway, msg.heave))
    return samples


def check_topic(topics, path, topic, expected_type=DESIRED_STATE_TYPE):
    """Check that ``topic`` is among a bag's ``topics`` ({name: type}) with ``expected_type``.

    Raises InputDataError naming the bag, the topic and the topics the bag has.
    """
    if topic not in topics:
        listed = ", ".join("%s (%s)" % (name, topics[name]) for name in sorted(topics)) or "none"
        raise InputDataError("%s: no messages on topic '%s'; expected %s messages there; topics in the bag: %s"
                             % (path, topic, expected_type, listed))
    if topics[topic] != expected_type:
        raise InputDataError("%s: topic '%s': expected type %s, found %s"
                             % (path, topic, expected_type, topics[topic]))


def load_bag_dive(path, topic, max_abs_pitch_deg=None):
    """Dive from the DesiredState messages on ``topic`` of the bag at ``path``.

    ``max_abs_pitch_deg`` as in :func:`brov2_hybrid.dive.dive_csv.load_dive_csv` (default
    from ``params/autopilot.yaml``). Raises InputDataError (see the module docstring).
    """
    import genpy                         # only needed for replays
    import rosbag

    # Corruption surfaces as any of these, depending on which bytes are damaged
    # (found by flipping bytes of a recorded bag): a bad record header, a bad
    # connection id, a message shorter than its type or with a non-UTF-8 string.
    corrupt = (rosbag.ROSBagFormatException, genpy.DeserializationError, struct.error, KeyError,
               UnicodeDecodeError)
    try:
        with rosbag.Bag(path) as bag:
            topics = {name: info.msg_type for name, info in bag.get_type_and_topic_info().topics.items()}
            check_topic(topics, path, topic)
            messages = [(msg, t.to_sec()) for _, msg, t in bag.read_messages(topics=[topic])]
    except rosbag.ROSBagUnindexedException:
        raise InputDataError("%s: unindexed bag (its index is missing or damaged, e.g. rosbag record was killed); "
                             "fix it with: rosbag reindex %s" % (path, path))
    except corrupt as exc:
        raise InputDataError("%s: corrupt bag (%s: %s); try rosbag check / rosbag reindex, or record again"
                             % (path, type(exc).__name__, exc))
    except (OSError, rosbag.ROSBagException) as exc:
        raise InputDataError("%s: cannot read bag (%s)" % (path, exc or type(exc).__name__))
    source = "%s:%s" % (path, topic)
    return dive_from_samples(desired_samples(messages, source), source, max_abs_pitch_deg)


def dive_from_samples(samples, source, max_abs_pitch_deg=None):
    """Build a :class:`~brov2_hybrid.dive.dive_csv.Dive` from recorded desired states (time rebased to 0).

    Parameters
    ----------
    samples : sequence of (stamp_s, roll_rad, pitch_rad, yaw_rad, surge, sway, heave)
        In recording order (e.g. the DesiredState messages of a bag).
    source : str
        Named in errors (e.g. ``run.bag:/brov2/desired_state``).
    max_abs_pitch_deg : float, optional
        As in :func:`brov2_hybrid.dive.dive_csv.load_dive_csv`.

    The same checks as a dive CSV (:class:`~brov2_hybrid.dive.dive_csv.DiveRows`); errors name the message index
    (1-based) and the field.
    """
    names = ("stamp",) + tuple("%s_rad" % a for a in ANGULAR_DOF_NAMES) + LINEAR_DOF_NAMES
    rows = DiveRows(source, max_abs_pitch_deg)
    for k, sample in enumerate(samples, start=1):
        where = "%s: message %d" % (source, k)
        if len(sample) != len(names):
            raise InputDataError("%s: expected %d values, got %d" % (where, len(names), len(sample)))
        rows.add(where, "field", [(name, raw, 1.0) for name, raw in zip(names, sample)])
    return rows.dive(rebase_time=True, empty_message="no desired-state messages")


def load_dive(dive_file="", bag_file="", bag_topic="", max_abs_pitch_deg=None):
    """The dive of exactly one source: a dive CSV (``dive_file``) or the DesiredState
    messages on ``bag_topic`` of a bag (``bag_file``); the other one empty.

    ``max_abs_pitch_deg`` as in :func:`brov2_hybrid.dive.dive_csv.load_dive_csv`. Raises
    :class:`~brov2_hybrid.errors.Brov2Error` when both or neither source is given, and
    :class:`~brov2_hybrid.errors.InputDataError` naming the file for a bad one.
    """
    if bool(dive_file) == bool(bag_file):
        raise Brov2Error("csv_reader: set exactly one of ~dive_file (CSV) and ~bag_file (bag), got %r and %r"
                         % (dive_file, bag_file))
    if dive_file:
        return load_dive_csv(dive_file, max_abs_pitch_deg)
    return load_bag_dive(bag_file, bag_topic, max_abs_pitch_deg)


class DivePlayback(object):
    """Schedules the rows of a :class:`~brov2_hybrid.dive.dive_csv.Dive` against a clock.

    Row ``i`` is due at ``start_s + (t_i - t_0) + k * period`` (k = loop count); rows
    are released only once due (no lookahead), in order, each with its due time as
    stamp. Without looping the dive is finished once the last row was released.
    With looping, one loop lasts the dive's duration plus ``loop_gap_s``.
    """

    def __init__(self, dive, start_s, loop=False, loop_gap_s=0.0):
        if loop_gap_s < 0:
            raise Brov2Error("loop_gap_s: expected a value >= 0, got %r" % loop_gap_s)
        self.dive = dive
        self.start_s = float(start_s)
        self.loop = bool(loop)
        self._offsets = dive.t_s - dive.t_s[0]
        self.period_s = float(self._offsets[-1]) + float(loop_gap_s)
        if self.loop and self.period_s <= 0:
            raise Brov2Error("loop: a one-row dive needs loop_gap_s > 0 to loop")
        self._next = 0          # index of the next row across loops (i + k * n)

    def due_time(self, k):
        """Due time [s, the clock of ``start_s``] of row ``k`` counted across loops (row k % n of loop k // n)."""
        n = len(self.dive)
        return self.start_s + self._offsets[k % n] + (k // n) * self.period_s

    @property
    def finished(self):
        """True once the last row was released (never when looping)."""
        return not self.loop and self._next >= len(self.dive)

    def next_due_s(self):
        """Due time of the next row, or None when finished."""
        return None if self.finished else self.due_time(self._next)

    @property
    def rows_released(self):
        """Rows released so far (across loops)."""
        return self._next

    def end_message(self, now_s):
        """What the player says when it stops at ``now_s``: the dive finished, or where it
        was stopped (row k of n, t of T s of the dive) when it had not."""
        n = len(self.dive)
        if self.finished:
            return "dive finished (%d rows)" % n
        k = self._next % n
        into_s = min(max(0.0, now_s - self.start_s - (self._next // n) * self.period_s), float(self._offsets[-1]))
        loops = " in loop %d" % (self._next // n + 1) if self.loop else ""
        return "dive stopped before its end: at row %d of %d (%.1f s of %.1f s)%s" % (
            k, n, into_s, float(self._offsets[-1]), loops)

    def pop_due(self, now_s):
        """Rows due at ``now_s`` not released yet: list of (stamp_s, eta2d, u_linear)."""
        out = []
        n = len(self.dive)
        while not self.finished and self.due_time(self._next) <= now_s:
            i = self._next % n
            out.append((self.due_time(self._next), self.dive.eta2d_rad[i], self.dive.u_linear[i]))
            self._next += 1
        return out
