"""What the MAVLink bridge asks the vehicle to send, and at which rates.

:func:`stream_requests` lists the (message, rate) pairs; the bridge asks for each with
MAV_CMD_SET_MESSAGE_INTERVAL (:func:`interval_us`) and, for firmware without it, with
REQUEST_DATA_STREAM per ArduSub stream group (:func:`data_stream_requests`; the messages
no group carries: :func:`interval_only`). Rates in Hz.
"""
from brov2_hybrid.link.ardusub import stream_group_of
from brov2_hybrid.link.mavros_conversions import DEPTH_MESSAGE


def stream_requests(attitude_msg, attitude_rate_hz, servo_rate_hz, depth_rate_hz, time_rate_hz):
    """(message name, rate Hz) pairs the bridge asks the vehicle for."""
    return [(attitude_msg, float(attitude_rate_hz)),
            ("SERVO_OUTPUT_RAW", float(servo_rate_hz)),
            (DEPTH_MESSAGE, float(depth_rate_hz)),
            ("SYSTEM_TIME", float(time_rate_hz))]


def data_stream_requests(streams):
    """REQUEST_DATA_STREAM fallback for :func:`stream_requests`' (message, rate Hz) pairs.

    Returns (group, rate Hz) pairs, one per ArduSub stream group (``MAV_DATA_STREAM_<group>``,
    :data:`brov2_hybrid.link.ardusub.STREAM_GROUPS`) in first-seen order, each at the highest
    rate asked of its messages. Messages in no group (ATTITUDE_QUATERNION: only
    SET_MESSAGE_INTERVAL starts it) are left out; :func:`interval_only` names them.
    """
    rates = {}
    for name, rate in streams:
        try:
            group = stream_group_of(name)
        except KeyError:
            continue
        rates[group] = max(rates.get(group, 0.0), float(rate))
    return list(rates.items())


def interval_only(streams):
    """Names of :func:`stream_requests`' messages that no REQUEST_DATA_STREAM group carries."""
    out = []
    for name, _ in streams:
        try:
            stream_group_of(name)
        except KeyError:
            out.append(name)
    return out


def interval_us(rate_hz):
    """MAV_CMD_SET_MESSAGE_INTERVAL param2: interval [us] for a rate (-1 = stop)."""
    return -1.0 if rate_hz <= 0 else 1e6 / float(rate_hz)


def summary(streams):
    """One line saying what :func:`stream_requests`' (message, rate Hz) pairs asked for, and which
    of them only SET_MESSAGE_INTERVAL can start (:func:`interval_only`)."""
    only = interval_only(streams)
    return "requested streams %s%s" % (
        ", ".join("%s %.0f Hz" % (name, rate) for name, rate in streams),
        "; %s only by SET_MESSAGE_INTERVAL (a firmware without it never sends it: attitude_source euler)"
        % ", ".join(only) if only else "")
