"""The simulated ArduSub's MAVLink protocol (:class:`MavlinkProtocol`), on top of the sockets.

:class:`MavlinkProtocol` answers as ArduSub does: COMMAND_LONG / COMMAND_INT and
SET_MODE (:mod:`brov2_hybrid.sim.mavlink_commands`), RC_CHANNELS_OVERRIDE and
MANUAL_CONTROL (via :class:`~brov2_hybrid.sim.firmware.Firmware`), the PARAM protocol,
REQUEST_DATA_STREAM, TIMESYNC, MISSION_REQUEST_LIST (an empty mission: MISSION_COUNT 0),
MISSION_ACK and SETUP_SIGNING (:mod:`brov2_hybrid.sim.link_signing`). Messages addressed
to another system are ignored. Unknown message types are counted. The sockets are
:class:`~brov2_hybrid.sim.mavlink_server.MavlinkServer`'s.

Message intervals belong to a channel, as in ArduPilot (one GCS_MAVLINK per serial
port or SITL TCP port): what SET_MESSAGE_INTERVAL / REQUEST_DATA_STREAM set on the
TCP port applies to every client of that port, now and after a reconnect, until
changed; the UDP out link is a channel of its own.
Outgoing traffic can be held back by a telemetry transport delay (a
:class:`~brov2_hybrid.sim.delay.DelayLine`).
"""
import logging
import math

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.sim.delay import DelayLine
from brov2_hybrid.sim import telemetry
from brov2_hybrid.sim.firmware import SEVERITY_WARNING

#: ArduPilot's answer to SETUP_SIGNING while armed (GCS_MAVLINK::handle_setup_signing).
SIGNING_WHILE_ARMED = "ERROR: Won't setup signing when armed"
from brov2_hybrid.sim.link_signing import LinkSigning
from brov2_hybrid.sim.mavlink_commands import CommandHandler

LOG = logging.getLogger(__name__)


class MavlinkProtocol(object):
    """MAVLink behaviour of the simulated ArduSub on top of a
    :class:`~brov2_hybrid.sim.mavlink_server.MavlinkServer`.

    Parameters
    ----------
    server : MavlinkServer
    plant : Plant
    firmware : Firmware
    builder : TelemetryBuilder
    link_config : LinkConfig
    telemetry_delay_s : float
        Transport delay of everything the vehicle sends [s, simulated].
    """

    def __init__(self, server, plant, firmware, builder, link_config, telemetry_delay_s=0.0):
        self.server = server
        self.plant = plant
        self.firmware = firmware
        self.builder = builder
        self.encoder = builder.encoder
        self.config = link_config
        self.system_id = link_config.system_id
        self.component_id = link_config.component_id
        self._outgoing = DelayLine(telemetry_delay_s)
        self.counters = {"received": 0, "unhandled": {}, "not_for_us": 0, "commands": 0, "mission_acks": 0,
                         "signature_rejected": 0, "signature_rejected_by_source": {}}
        self.link_signing = LinkSigning(link_config.signing_warning_interval_s, self.counters)
        self.signing = self.link_signing.signing
        self.encoder.signing = self.signing
        server.parser_hook = self.link_signing.setup_parser
        # Interval changes per channel ("tcp" port, "udp" out): name -> interval [s] or None.
        self._channel_intervals = {"tcp": {}, "udp": {}}
        self.input_changed = False   # set when a message may change the motor outputs
        #: A :class:`~brov2_hybrid.sim.lockstep.LockstepGate` told of attitudes sent and overrides accepted.
        self.lockstep = None
        self.commands = CommandHandler(self)
        self._handlers = {
            "HEARTBEAT": self._on_heartbeat,
            "RC_CHANNELS_OVERRIDE": self._on_rc_override,
            "COMMAND_LONG": self.commands.on_command_long,
            "COMMAND_INT": self.commands.on_command_int,
            "SET_MODE": self.commands.on_set_mode,
            "PARAM_REQUEST_LIST": self._on_param_request_list,
            "PARAM_REQUEST_READ": self._on_param_request_read,
            "PARAM_SET": self._on_param_set,
            "REQUEST_DATA_STREAM": self._on_request_data_stream,
            "TIMESYNC": self._on_timesync,
            "SYSTEM_TIME": self._ignore,
            "MISSION_REQUEST_LIST": self._on_mission_request_list,
            "MISSION_ACK": self._on_mission_ack,
            "MANUAL_CONTROL": self._on_manual_control,
            "SETUP_SIGNING": self._on_setup_signing,
        }
        for connection in server.links():
            self.on_connect(connection, plant.t_s)

    @property
    def telemetry_delay_s(self):
        """Transport delay [s] of everything the vehicle sends (a :class:`~brov2_hybrid.sim.delay.DelayLine`)."""
        return self._outgoing.delay_s

    @telemetry_delay_s.setter
    def telemetry_delay_s(self, value):
        """Set the outgoing delay [s]; raises Brov2Error unless finite and >= 0."""
        self._outgoing.delay_s = value

    # ------------------------------------------------------------------ links
    def on_connect(self, connection, t_s):
        """A new link at simulated time ``t_s`` [s]: check its signatures with the shared signing state
        and give it the default stream rates plus the interval changes made on its channel."""
        self.link_signing.setup_parser(connection.parser)
        connection.scheduler = telemetry.StreamScheduler(self.config.stream_rates_hz, t_s)
        for name, interval in self._channel_intervals[connection.kind].items():
            connection.scheduler.set_interval(name, interval, t_s)

    # ------------------------------------------------------------------ signing
    @property
    def signing_enabled(self):
        """True while MAVLink signing is on: a key is set, every link signs and checks signatures."""
        return self.link_signing.enabled

    def set_signing_key(self, key, initial_timestamp, unix_s=None):
        """Key every link (:meth:`~brov2_hybrid.sim.link_signing.LinkSigning.set_key`)."""
        self.link_signing.set_key(key, initial_timestamp, unix_s)

    def _on_setup_signing(self, connection, message, t_s):
        # GCS_MAVLINK::handle_setup_signing (libraries/GCS_MAVLink/GCS_Signing.cpp): refused
        # while armed; else store the key and activate it on all links now. Once keyed, only
        # a correctly signed SETUP_SIGNING gets here (the parser checks).
        if self.firmware.armed:
            self.statustext(SEVERITY_WARNING, SIGNING_WHILE_ARMED, t_s)
            return
        self.set_signing_key(message.secret_key, message.initial_timestamp)

    def _on_rejected(self, connection, message, t_s):
        """A frame refused by signing: count it, warn about its sender now and then."""
        text = self.link_signing.on_rejected(message, t_s)
        if text is not None:
            self.statustext(SEVERITY_WARNING, text, t_s)

    # ------------------------------------------------------------------ streams
    def set_channel_interval(self, connection, name, interval_s, t_s):
        """Set ``name``'s interval on ``connection``'s channel (None stops it)."""
        self._channel_intervals[connection.kind][name] = interval_s
        for link in self.server.links():
            if link.kind == connection.kind and link.scheduler is not None:
                link.scheduler.set_interval(name, interval_s, t_s)

    def on_close(self, connection):
        """A link closed: nothing to do (its streams went with it; channel intervals persist)."""
        pass

    def emit(self, connection, message, t_s):
        """Send ``message`` to one link (or all when ``connection`` is None), after the delay."""
        data = message.pack(self.encoder)
        if self._outgoing.delay_s <= 0.0:
            self._deliver(connection, data)
        else:
            self._outgoing.push(t_s, (connection, data, None))

    def _deliver(self, connection, data, attitude_s=None):
        """Send ``data``; ``attitude_s``: the vehicle time of the attitude it carries, for the lockstep."""
        if connection is None:
            for link in self.server.links():
                self.server.send(link, data)
        elif connection.open:
            self.server.send(connection, data)
        else:
            return
        if attitude_s is not None and self.lockstep is not None:
            self.lockstep.on_attitude_sent(attitude_s)

    def statustext(self, severity, text, t_s, connection=None):
        """Send STATUSTEXT ``text`` (ASCII, cut to 50 characters) with MAV_SEVERITY ``severity`` to
        ``connection`` (None: every link), after the telemetry delay."""
        self.emit(connection, self.encoder.statustext_encode(severity, text.encode("ascii", "replace")[:50]), t_s)

    # ------------------------------------------------------------------ time
    def next_due_s(self):
        """Earliest simulated time at which :meth:`tick` has something to send."""
        due = [c.scheduler.next_due_s() for c in self.server.links() if c.scheduler is not None]
        due.append(self._outgoing.next_due_s())
        return min(due) if due else math.inf

    def tick(self, t_s):
        """Send firmware STATUSTEXTs, due telemetry, and delayed traffic now due."""
        for severity, text in self.firmware.pop_messages():
            self.statustext(severity, text, t_s)
        sample = None
        built = {}
        held = self.lockstep.attitude_message if self.lockstep is not None else None
        for connection in self.server.links():
            if connection.scheduler is None:
                continue
            for name in connection.scheduler.pop_due(t_s):
                if name not in built:
                    if sample is None:
                        sample = telemetry.Sample(self.plant)
                    built[name] = self.builder.build(name, sample, self.firmware).pack(self.encoder)
                sampled_s = telemetry.boot_s(sample) if name == held else None
                self._queue_bytes(connection, built[name], t_s, sampled_s)
        for _, item in self._outgoing.pop_due(t_s):
            self._deliver(*item)

    def _queue_bytes(self, connection, data, t_s, attitude_s=None):
        if self._outgoing.delay_s <= 0.0:
            self._deliver(connection, data, attitude_s)
        else:
            self._outgoing.push(t_s, (connection, data, attitude_s))

    # ------------------------------------------------------------------ receiving
    def handle(self, connection, message, t_s):
        """Act on one received message at simulated time ``t_s``."""
        kind = message.get_type()
        if kind == "BAD_DATA":
            self._on_rejected(connection, message, t_s)
            return
        self.counters["received"] += 1
        handler = self._handlers.get(kind)
        if handler is None:
            unhandled = self.counters["unhandled"]
            unhandled[kind] = unhandled.get(kind, 0) + 1
            return
        if not self._for_us(message):
            self.counters["not_for_us"] += 1
            return
        try:
            handler(connection, message, t_s)
        except Exception:  # a well-formed but nonsensical message must never stop the vehicle
            self.counters["handler_errors"] = self.counters.get("handler_errors", 0) + 1
            LOG.exception("error handling %s from system %d", kind, message.get_srcSystem())

    def _for_us(self, message):
        target = getattr(message, "target_system", 0)
        if target not in (0, self.system_id):
            return False
        if message.get_type() == "MANUAL_CONTROL" and message.target != self.system_id:
            return False  # ArduSub: "only accept control aimed at us" (no broadcast)
        component = getattr(message, "target_component", 0)
        return component in (0, self.component_id) or message.get_type() == "RC_CHANNELS_OVERRIDE"

    def _ignore(self, connection, message, t_s):
        pass

    def _on_heartbeat(self, connection, message, t_s):
        connection.last_heartbeat_s = t_s
        self.firmware.handle_heartbeat(t_s, message.get_srcSystem())     # GCS failsafe

    def _on_rc_override(self, connection, message, t_s):
        channels = [getattr(message, "chan%d_raw" % i, 0) for i in range(1, 19)]
        if self.firmware.handle_rc_override(t_s, message.get_srcSystem(), channels):
            self.input_changed = True
            if self.lockstep is not None:
                self.lockstep.on_override(channels)
        else:
            LOG.debug("RC override from system %d ignored (SYSID_MYGCS %d)",
                      message.get_srcSystem(), self.firmware.sysid_mygcs)

    def _on_manual_control(self, connection, message, t_s):
        # ArduSub GCS_MAVLINK_Sub::handle_message, MAVLINK_MSG_ID_MANUAL_CONTROL.
        if self.firmware.handle_manual_control(t_s, message.get_srcSystem(), message.x, message.y,
                                               message.z, message.r, message.buttons):
            self.input_changed = True

    def _on_request_data_stream(self, connection, message, t_s):
        if message.req_stream_id == mavlink.MAV_DATA_STREAM_ALL:
            groups = list(telemetry.STREAM_GROUPS.values())
        else:
            groups = [telemetry.STREAM_GROUPS.get(message.req_stream_id, ())]
        rate = message.req_message_rate if message.start_stop else 0
        for group in groups:
            for name in group:
                self.set_channel_interval(connection, name, (1.0 / rate) if rate > 0 else None, t_s)

    def _on_timesync(self, connection, message, t_s):
        if message.tc1 == 0:
            self.emit(connection, self.encoder.timesync_encode(int(t_s * 1e9), message.ts1), t_s)

    def _on_mission_request_list(self, connection, message, t_s):
        mission_type = getattr(message, "mission_type", 0)
        self.emit(connection, self.encoder.mission_count_encode(message.get_srcSystem(),
                                                                message.get_srcComponent(), 0, mission_type), t_s)

    def _on_mission_ack(self, connection, message, t_s):
        # The GCS's reply to MISSION_COUNT 0 (MAVROS's mission plugins send it). With no
        # transfer in progress ArduPilot's MissionItemProtocol has nothing to do with it.
        self.counters["mission_acks"] += 1

    # ------------------------------------------------------------------ parameters
    def _param_value(self, name, t_s):
        params = self.firmware.params
        d = params.definition(name)
        return self.encoder.param_value_encode(name.encode("ascii"), float(d.value), d.param_type,
                                               len(params), params.index(name))

    def _on_param_request_list(self, connection, message, t_s):
        for name in self.firmware.params.names():
            self.emit(connection, self._param_value(name, t_s), t_s)

    def _on_param_request_read(self, connection, message, t_s):
        params = self.firmware.params
        if message.param_index >= 0:
            found = params.by_index(message.param_index)
            name = found[0].name if found else None
        else:
            name = _param_name(message.param_id)
        if name is None or name not in params:
            self.counters["unknown_param"] = self.counters.get("unknown_param", 0) + 1
            return
        self.emit(connection, self._param_value(name, t_s), t_s)

    def _on_param_set(self, connection, message, t_s):
        name = _param_name(message.param_id)
        params = self.firmware.params
        if name not in params:
            self.counters["unknown_param"] = self.counters.get("unknown_param", 0) + 1
            LOG.info("PARAM_SET of unknown parameter %r ignored", name)
            return
        accepted, problem = params.set(name, message.param_value)
        if accepted:
            LOG.info("parameter %s = %g", name, params.get(name))
            self.input_changed = True
            self.emit(None, self._param_value(name, t_s), t_s)
        else:
            self.statustext(SEVERITY_WARNING, problem, t_s, connection)
            self.emit(connection, self._param_value(name, t_s), t_s)


def _param_name(param_id):
    if isinstance(param_id, bytes):
        param_id = param_id.decode("ascii", "replace")
    return str(param_id).split("\x00", 1)[0]
