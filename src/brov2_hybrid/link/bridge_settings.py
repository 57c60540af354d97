"""The MAVLink bridge's settings (``nodes/mavlink_bridge``), read and checked in one place.

:class:`BridgeSettings` takes a :class:`~brov2_hybrid.node_logic.node_params.ParamReader` over
params/autopilot.yaml's ``mavlink_bridge`` section (plus the node's private parameters)
and checks what the types alone cannot: the override re-send rate is at least
:data:`MIN_OVERRIDE_RATE_HZ`, and ``signing_setup`` has a key to send. Errors are
:class:`~brov2_hybrid.errors.Brov2Error` naming the parameter. Periods in seconds
(wall clock), rates in Hz.
"""
from brov2_hybrid.link import mavlink_signing
from brov2_hybrid.link.stream_requests import stream_requests
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.placement import PLACEMENTS

#: Lowest RC override re-send rate accepted (as thruster_allocation's ~override_rate_hz:
#: a steady override stream keeps ArduSub's pilot-input failsafe from firing).
MIN_OVERRIDE_RATE_HZ = 10.0

#: ~attitude_source -> the MAVLink message the attitude is taken from.
ATTITUDE_MESSAGES = {"quaternion": "ATTITUDE_QUATERNION", "euler": "ATTITUDE"}


def requested_streams(p):
    """(message, rate Hz) pairs asked of the vehicle, from the ``mavlink_bridge`` section's
    attitude_source and *_rate_hz (the bridge asks for them; with real MAVROS, mavros_streams does)."""
    return stream_requests(ATTITUDE_MESSAGES[p.string("attitude_source", choices=tuple(ATTITUDE_MESSAGES))],
                           p.positive("attitude_rate_hz"), p.positive("servo_rate_hz"),
                           p.positive("depth_rate_hz"), p.positive("time_rate_hz"))


class BridgeSettings(object):
    """Every parameter of mavlink_bridge, typed and checked (attributes named as the
    parameters, periods derived from rates where the bridge uses periods)."""

    def __init__(self, p):
        self.url = p.string("fcu_url")
        self.system_id = p.integer("system_id", 1, 255)
        self.component_id = p.integer("component_id", 0, 255)
        self.target_system = p.integer("target_system", 1, 255)
        self.target_component = p.integer("target_component", 0, 255)
        self.heartbeat_period_s = 1.0 / p.positive("heartbeat_rate_hz")
        self.link_timeout_s = p.positive("link_timeout_s")
        self.silence_reconnect_s = p.positive("silence_reconnect_s")
        self.reconnect_period_s = p.positive("reconnect_period_s")
        override_rate = p.positive("override_rate_hz")
        if override_rate < MIN_OVERRIDE_RATE_HZ:
            raise Brov2Error("mavlink_bridge ~override_rate_hz: expected >= %g Hz, got %g"
                             % (MIN_OVERRIDE_RATE_HZ, override_rate))
        self.override_period_s = 1.0 / override_rate
        self.override_timeout_s = p.positive("override_timeout_s")
        self.attitude_msg = ATTITUDE_MESSAGES[p.string("attitude_source", choices=tuple(ATTITUDE_MESSAGES))]
        self.attitude_rate_hz = p.positive("attitude_rate_hz")
        self.streams = requested_streams(p)
        self.stream_request_period_s = p.positive("stream_request_period_s")
        self.command_timeout_s = p.positive("command_timeout_s")
        self.publish_clock = p.boolean("publish_clock")
        self.clock_period_s = p.positive("clock_period_s")
        self.world_frame = p.string("world_frame_id")
        self.body_frame = p.string("body_frame_id")
        self.warn_period_s = p.positive("warn_period_s")
        self.receive_timeout_s = p.positive("receive_timeout_s")
        self.stream_rerequest_fraction = p.number("stream_rerequest_fraction", 0.0, 1.0)
        self.release_repeats = p.integer("release_repeats", 1, 100)
        self.release_interval_s = p.number("release_interval_s", 0.0, 1.0)
        self.io_join_timeout_s = p.positive("io_join_timeout_s")
        self.key_file = p.string("signing_key_file", allow_empty=True)
        self.signing_key = mavlink_signing.load_key(self.key_file) if self.key_file else None
        self.signing_setup = p.boolean("signing_setup")
        if self.signing_setup and self.signing_key is None:
            raise Brov2Error("mavlink_bridge ~signing_setup: true needs ~signing_key_file (the key to send)")
        self.clock_min_speedup = p.positive("clock_min_speedup")
        self.clock_max_speedup = p.positive("clock_max_speedup")
        self.clock_jump_s = p.positive("clock_jump_s")
        self.attitude_rate_window_s = p.positive("attitude_rate_window_s")
        # placement:=onboard: the uplink to the on-board script (brov2_hybrid.onboard.uplink)
        self.placement = p.string("placement", choices=PLACEMENTS)
        self.uplink_max_rate_hz = p.positive("uplink_max_rate_hz")
        self.uplink_param_retry_s = p.positive("uplink_param_retry_s")
        self.uplink_param_tolerance = p.positive("uplink_param_tolerance")
        self.script_report_log_s = p.positive("script_report_log_s")
        self.script_silent_s = p.positive("script_silent_s")
        self.script_reboot_retry_s = p.positive("script_reboot_retry_s")
        self.script_clock_gap_s = p.positive("script_clock_gap_s")
