"""Dives from recorded desired states: the DesiredState messages of a bag (replay).

A bag is turned into a :class:`~brov2_hybrid.dive_csv.Dive` with the same checks as a
dive CSV (:func:`brov2_hybrid.dive_csv.dive_from_samples`: finite numbers, increasing
stamps, commands in [-1, 1], desired pitch within ``max_abs_pitch_deg``). Every way a
bag can be unusable -- missing, not a bag, truncated or unindexed (a recording that was
killed; ``rosbag reindex`` fixes it), corrupt, without the topic, the topic of another
message type -- raises :class:`~brov2_hybrid.errors.InputDataError` naming the file
(and topic), not a rosbag / genpy exception.

``rosbag`` and ``genpy`` are imported only by :func:`load_bag_dive`; the rest is plain
Python (tested without ROS). Frames and units as in the DesiredState message.
"""
import struct

from brov2_hybrid.dive_csv import dive_from_samples
from brov2_hybrid.errors import InputDataError

DESIRED_STATE_TYPE = "brov2_hybrid/DesiredState"


def desired_samples(messages, source, expected_type=DESIRED_STATE_TYPE):
    """Samples for :func:`~brov2_hybrid.dive_csv.dive_from_samples` from DesiredState messages.

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

    ``max_abs_pitch_deg`` as in :func:`brov2_hybrid.dive_csv.load_dive_csv` (default
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
