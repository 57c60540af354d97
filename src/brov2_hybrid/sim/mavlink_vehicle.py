"""The simulator's MAVLink side: sockets (:class:`MavlinkServer`) and protocol (:class:`MavlinkVehicle`).

:class:`MavlinkServer` is a single-threaded, select-based TCP server (any number of
clients at once; a client may disconnect and reconnect) plus an optional UDP "out"
link that, like ``sim_vehicle.py --out``, sends to a fixed address and accepts
whatever comes back. Each link has its own MAVLink parser (pymavlink, MAVLink 2,
robust parsing): malformed bytes are counted and skipped, never fatal.

:class:`MavlinkVehicle` answers as ArduSub does: COMMAND_LONG / COMMAND_INT
(arm/disarm 400, DO_SET_MODE 176, GET_HOME_POSITION 410, SET_MESSAGE_INTERVAL 511,
REQUEST_MESSAGE 512, REQUEST_AUTOPILOT_CAPABILITIES 520; others -> COMMAND_ACK
UNSUPPORTED; every command is acknowledged, broadcast or not, as GCS_MAVLINK does),
SET_MODE, RC_CHANNELS_OVERRIDE and MANUAL_CONTROL (via
:class:`~brov2_hybrid.sim.firmware.Firmware`), the PARAM protocol, REQUEST_DATA_STREAM,
TIMESYNC, MISSION_REQUEST_LIST (an empty mission: MISSION_COUNT 0) and MISSION_ACK.
Messages addressed to another system are ignored. Unknown message types are counted.

Message intervals belong to a channel, as in ArduPilot (one GCS_MAVLINK per serial
port or SITL TCP port): what SET_MESSAGE_INTERVAL / REQUEST_DATA_STREAM set on the
TCP port applies to every client of that port, now and after a reconnect, until
changed; the UDP out link is a channel of its own.
Outgoing traffic can be held back by a telemetry transport delay (a
:class:`~brov2_hybrid.delay.DelayLine`).

MAVLink 2 signing as ArduPilot (GCS_Signing.cpp, see :mod:`brov2_hybrid.mavlink_signing`):
SETUP_SIGNING (or ``--signing-key-file`` at start, a vehicle keyed before) keys every
link at once with one key and one table of stream timestamps; from then on everything
sent is signed and unsigned or wrongly signed messages are dropped (counted per source,
with a rate-limited STATUSTEXT), except RADIO_STATUS and RADIO. An all-zero key with
timestamp 0 turns signing off. Unlike ArduPilot, no channel is exempt: ArduPilot lets
channel 0 (a flight controller's USB port) through unsigned; our TCP port stands for
the tether network, the link signing is meant to protect.
"""
import errno
import logging
import math
import select
import socket
import time

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid import mavlink_signing
from brov2_hybrid.delay import DelayLine
from brov2_hybrid.sim import telemetry
from brov2_hybrid.sim.firmware import SEVERITY_WARNING

LOG = logging.getLogger(__name__)

RECV_BYTES = 65536
#: A client that does not read its data is cut off from new data above this backlog.
MAX_BACKLOG_BYTES = 1 << 20
#: ArduSub 4.1.0 "official" as AUTOPILOT_VERSION.flight_sw_version.
FLIGHT_SW_VERSION = (4 << 24) | (1 << 16) | (0 << 8) | 255
#: pymavlink's BAD_DATA reason for a frame refused by signing (MAVLink.decode).
SIGNATURE_REJECTED = "Invalid signature"
CAPABILITIES = (mavlink.MAV_PROTOCOL_CAPABILITY_PARAM_FLOAT | mavlink.MAV_PROTOCOL_CAPABILITY_MISSION_INT
                | mavlink.MAV_PROTOCOL_CAPABILITY_COMMAND_INT | mavlink.MAV_PROTOCOL_CAPABILITY_MAVLINK2)


def _new_parser():
    parser = mavlink.MAVLink(None)
    parser.robust_parsing = True
    return parser


class Connection(object):
    """One MAVLink link: a TCP client or the UDP out link."""

    def __init__(self, key, kind, sock, peer):
        self.key = key
        self.kind = kind
        self.sock = sock
        self.peer = peer
        self.parser = _new_parser()
        self.backlog = bytearray()
        self.scheduler = None      # set by MavlinkVehicle
        self.open = True
        self.bad_messages = 0
        self.dropped_bytes = 0
        self.last_heartbeat_s = None

    def __repr__(self):
        return "<%s link %d %s>" % (self.kind, self.key, self.peer)


class MavlinkServer(object):
    """Sockets of the simulator: TCP server on ``host:port`` and optional UDP out.

    Parameters
    ----------
    host, port : str, int
        TCP address to listen on (port 0 picks a free port; see :attr:`port`).
    udp_out : (str, int) or None
        Where to send the UDP copy of the traffic.
    """

    def __init__(self, host, port, udp_out=None):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.listener.bind((host, port))
        except OSError as exc:
            self.listener.close()
            raise OSError(exc.errno, "cannot listen on tcp:%s:%d (%s)" % (host, port, exc.strerror))
        self.listener.listen(4)
        self.listener.setblocking(False)
        self.host = host
        self._next_key = 1
        self.connections = {}
        self.udp = None
        self.parser_hook = None   # called with every new parser (MavlinkVehicle: signing)
        self.counters = {"accepted": 0, "closed": 0, "bad_data": 0, "dropped_bytes": 0}
        if udp_out is not None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(("0.0.0.0", 0))
            sock.setblocking(False)
            self.udp = self._add(Connection(0, "udp", sock, tuple(udp_out)))

    @property
    def port(self):
        """The TCP port actually listened on."""
        return self.listener.getsockname()[1]

    def _add(self, connection):
        self.connections[connection.sock.fileno()] = connection
        return connection

    def close(self):
        for connection in list(self.connections.values()):
            self._close(connection)
        self.listener.close()

    def _close(self, connection):
        if not connection.open:
            return
        connection.open = False
        self.connections.pop(connection.sock.fileno(), None)
        try:
            connection.sock.close()
        except OSError:
            pass
        if connection.kind == "tcp":
            self.counters["closed"] += 1
            LOG.info("client %s disconnected", connection.peer)

    def tcp_clients(self):
        return [c for c in self.connections.values() if c.kind == "tcp"]

    def links(self):
        return list(self.connections.values())

    # ------------------------------------------------------------------ sending
    def send(self, connection, data):
        """Queue ``data`` (bytes) on one link and try to write it now."""
        if not connection.open:
            return
        if connection.kind == "udp":
            try:
                connection.sock.sendto(data, connection.peer)
            except OSError:
                connection.dropped_bytes += len(data)  # nobody listening: UDP is lossy
            return
        if len(connection.backlog) > MAX_BACKLOG_BYTES:
            connection.dropped_bytes += len(data)
            self.counters["dropped_bytes"] += len(data)
            return
        connection.backlog += data
        self._flush(connection)

    def _flush(self, connection):
        if not connection.backlog or not connection.open:
            return
        try:
            sent = connection.sock.send(connection.backlog)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(connection)
            return
        del connection.backlog[:sent]

    # ------------------------------------------------------------------ receiving
    def poll(self, timeout_s):
        """Wait up to ``timeout_s`` for traffic.

        Returns
        -------
        new, closed : list of Connection
        messages : list of (Connection, MAVLink message)
        """
        readers = [self.listener] + [c.sock for c in self.connections.values()]
        writers = [c.sock for c in self.connections.values() if c.backlog]
        try:
            readable, writable, _ = select.select(readers, writers, [], max(0.0, timeout_s))
        except InterruptedError:
            return [], [], []
        new, closed, messages = [], [], []
        for sock in writable:
            connection = self.connections.get(sock.fileno())
            if connection is not None:
                self._flush(connection)
        for sock in readable:
            if sock is self.listener:
                new.extend(self._accept())
                continue
            connection = self.connections.get(sock.fileno())
            if connection is None:
                continue
            data = self._receive(connection)
            if data is None:
                self._close(connection)
                closed.append(connection)
            elif data:
                messages.extend((connection, m) for m in self._parse(connection, data))
        return new, closed, messages

    def _accept(self):
        accepted = []
        while True:
            try:
                sock, peer = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return accepted
            except OSError as exc:
                LOG.warning("accept failed: %s", exc)
                return accepted
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = self._add(Connection(self._next_key, "tcp", sock, peer))
            self._next_key += 1
            self.counters["accepted"] += 1
            LOG.info("client %s connected", peer)
            accepted.append(connection)

    def _receive(self, connection):
        """Bytes read (b'' if nothing now), or None when the link is gone."""
        try:
            if connection.kind == "udp":
                data, _ = connection.sock.recvfrom(RECV_BYTES)
                return data
            data = connection.sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            if connection.kind == "udp":
                return b""  # ICMP "port unreachable" from an absent ground station
            if exc.errno not in (errno.ECONNRESET, errno.EPIPE):
                LOG.warning("%s: receive failed: %s", connection, exc)
            return None
        return data if data else None

    def _parse(self, connection, data):
        try:
            parsed = connection.parser.parse_buffer(data) or []
        except Exception as exc:  # pymavlink raises on some corrupt frames even when robust
            LOG.debug("%s: parser error %s; parser reset", connection, exc)
            connection.parser = _new_parser()
            if self.parser_hook is not None:
                self.parser_hook(connection.parser)
            connection.bad_messages += 1
            self.counters["bad_data"] += 1
            return []
        good = []
        for message in parsed:
            if message.get_type() == "BAD_DATA" and message.reason == SIGNATURE_REJECTED:
                good.append(message)   # a whole frame, refused by signing: the vehicle counts it
            elif message.get_type() == "BAD_DATA":
                connection.bad_messages += 1
                self.counters["bad_data"] += 1
            else:
                good.append(message)
        return good


class MavlinkVehicle(object):
    """MAVLink behaviour of the simulated ArduSub on top of a :class:`MavlinkServer`.

    Parameters
    ----------
    server : MavlinkServer
    model : VehicleModel
    firmware : Firmware
    builder : TelemetryBuilder
    link_config : LinkConfig
    telemetry_delay_s : float
        Transport delay of everything the vehicle sends [s, simulated].
    """

    def __init__(self, server, model, firmware, builder, link_config, telemetry_delay_s=0.0):
        self.server = server
        self.model = model
        self.firmware = firmware
        self.builder = builder
        self.encoder = builder.encoder
        self.config = link_config
        self.system_id = link_config.system_id
        self.component_id = link_config.component_id
        self._outgoing = DelayLine(telemetry_delay_s)
        self.counters = {"received": 0, "unhandled": {}, "not_for_us": 0, "commands": 0, "mission_acks": 0,
                         "signature_rejected": 0, "signature_rejected_by_source": {}}
        # One signing state for every link and for what we send (ArduPilot: one key,
        # one shared signing_streams table; GCS_Signing.cpp load_signing_key).
        self.signing = mavlink.MAVLinkSigning()
        self.encoder.signing = self.signing
        self._signing_warned_s = {}   # (system, component) -> last STATUSTEXT time [s]
        server.parser_hook = self._setup_parser
        # Interval changes per channel ("tcp" port, "udp" out): name -> interval [s] or None.
        self._channel_intervals = {"tcp": {}, "udp": {}}
        self.input_changed = False   # set when a message may change the motor outputs
        self._handlers = {
            "HEARTBEAT": self._on_heartbeat,
            "RC_CHANNELS_OVERRIDE": self._on_rc_override,
            "COMMAND_LONG": self._on_command_long,
            "COMMAND_INT": self._on_command_int,
            "SET_MODE": self._on_set_mode,
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
        self._commands = {
            mavlink.MAV_CMD_COMPONENT_ARM_DISARM: self._cmd_arm_disarm,
            mavlink.MAV_CMD_DO_SET_MODE: self._cmd_do_set_mode,
            mavlink.MAV_CMD_GET_HOME_POSITION: self._cmd_get_home_position,
            mavlink.MAV_CMD_SET_MESSAGE_INTERVAL: self._cmd_set_message_interval,
            mavlink.MAV_CMD_REQUEST_MESSAGE: self._cmd_request_message,
            mavlink.MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES: self._cmd_autopilot_capabilities,
        }
        for connection in server.links():
            self.on_connect(connection, model.t_s)

    @property
    def telemetry_delay_s(self):
        return self._outgoing.delay_s

    @telemetry_delay_s.setter
    def telemetry_delay_s(self, value):
        self._outgoing.delay_s = value

    # ------------------------------------------------------------------ links
    def on_connect(self, connection, t_s):
        self._setup_parser(connection.parser)
        connection.scheduler = telemetry.StreamScheduler(self.config.stream_rates_hz, t_s)
        for name, interval in self._channel_intervals[connection.kind].items():
            connection.scheduler.set_interval(name, interval, t_s)

    # ------------------------------------------------------------------ signing
    @property
    def signing_enabled(self):
        return self.signing.secret_key is not None

    def _setup_parser(self, parser):
        parser.signing = self.signing
        mavlink_signing.verify_before_updating_streams(parser)

    def set_signing_key(self, key, initial_timestamp, unix_s=None):
        """Key every link with ``key`` (32 bytes); an all-zero key with timestamp 0 disables.

        The next outgoing timestamp is the largest of ``initial_timestamp``, the current
        one and the wall clock (ArduPilot raises it to GPS time: update_signing_timestamp).
        """
        key = bytes(bytearray(key))
        if len(key) != mavlink_signing.KEY_BYTES:
            raise ValueError("signing key: expected %d bytes, got %d" % (mavlink_signing.KEY_BYTES, len(key)))
        signing = self.signing
        if mavlink_signing.is_disabling(key, initial_timestamp):
            signing.secret_key = None
            signing.sign_outgoing = False
            signing.allow_unsigned_callback = None
            LOG.info("MAVLink signing disabled (all-zero key)")
            return
        signing.secret_key = key
        signing.sign_outgoing = True
        signing.allow_unsigned_callback = mavlink_signing.accept_unsigned
        signing.link_id = 0
        signing.timestamp = max(int(initial_timestamp), signing.timestamp,
                                mavlink_signing.timestamp_now(time.time() if unix_s is None else unix_s))
        LOG.info("MAVLink signing enabled on every link, key fingerprint %s", mavlink_signing.fingerprint(key))

    def _on_setup_signing(self, connection, message, t_s):
        # GCS_MAVLINK::handle_setup_signing: store the key, activate it on all links now.
        # Once keyed, only a correctly signed SETUP_SIGNING gets here (the parser checks).
        self.set_signing_key(message.secret_key, message.initial_timestamp)

    def _on_rejected(self, connection, message, t_s):
        """A frame refused by signing: count it, warn about its sender now and then."""
        self.counters["signature_rejected"] += 1
        sender = mavlink_signing.sender_of(message)
        source = sender[:2] if sender else None
        by_source = self.counters["signature_rejected_by_source"]
        key = "%d/%d" % source if source else "unknown"
        by_source[key] = by_source.get(key, 0) + 1
        last = self._signing_warned_s.get(source)
        if last is not None and t_s - last < self.config.signing_warning_interval_s:
            return
        self._signing_warned_s[source] = t_s
        signed = bool(bytes(message.data)[2] & mavlink.MAVLINK_IFLAG_SIGNED) if sender else False
        text = "Signing: dropped %s msg %s from %s" % ("badly signed" if signed else "unsigned",
                                                       sender[2] if sender else "?", key)
        LOG.warning("%s (%d so far from it)", text, by_source[key])
        self.statustext(SEVERITY_WARNING, text, t_s)

    def _set_channel_interval(self, connection, name, interval_s, t_s):
        """Set ``name``'s interval on ``connection``'s channel (None stops it)."""
        self._channel_intervals[connection.kind][name] = interval_s
        for link in self.server.links():
            if link.kind == connection.kind and link.scheduler is not None:
                link.scheduler.set_interval(name, interval_s, t_s)

    def on_close(self, connection):
        pass

    def _emit(self, connection, message, t_s):
        """Send ``message`` to one link (or all when ``connection`` is None), after the delay."""
        data = message.pack(self.encoder)
        if self._outgoing.delay_s <= 0.0:
            self._deliver(connection, data)
        else:
            self._outgoing.push(t_s, (connection, data))

    def _deliver(self, connection, data):
        if connection is None:
            for link in self.server.links():
                self.server.send(link, data)
        elif connection.open:
            self.server.send(connection, data)

    def statustext(self, severity, text, t_s, connection=None):
        self._emit(connection, self.encoder.statustext_encode(severity, text.encode("ascii", "replace")[:50]), t_s)

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
        for connection in self.server.links():
            if connection.scheduler is None:
                continue
            for name in connection.scheduler.pop_due(t_s):
                if name not in built:
                    if sample is None:
                        sample = telemetry.Sample(self.model)
                    built[name] = self.builder.build(name, sample, self.firmware).pack(self.encoder)
                self._queue_bytes(connection, built[name], t_s)
        for _, (connection, data) in self._outgoing.pop_due(t_s):
            self._deliver(connection, data)

    def _queue_bytes(self, connection, data, t_s):
        if self._outgoing.delay_s <= 0.0:
            self._deliver(connection, data)
        else:
            self._outgoing.push(t_s, (connection, data))

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

    def _on_rc_override(self, connection, message, t_s):
        channels = [getattr(message, "chan%d_raw" % i, 0) for i in range(1, 19)]
        if self.firmware.handle_rc_override(t_s, message.get_srcSystem(), channels):
            self.input_changed = True
        else:
            LOG.debug("RC override from system %d ignored (SYSID_MYGCS %d)",
                      message.get_srcSystem(), self.firmware.sysid_mygcs)

    def _on_manual_control(self, connection, message, t_s):
        # ArduSub GCS_MAVLINK_Sub::handle_message, MAVLINK_MSG_ID_MANUAL_CONTROL.
        if self.firmware.handle_manual_control(t_s, message.get_srcSystem(), message.x, message.y,
                                               message.z, message.r, message.buttons):
            self.input_changed = True

    def _ack(self, connection, command, result, t_s, message=None):
        target_system = message.get_srcSystem() if message is not None else 0
        target_component = message.get_srcComponent() if message is not None else 0
        self._emit(connection, self.encoder.command_ack_encode(command, result, 0, 0, target_system,
                                                               target_component), t_s)

    def _on_command_long(self, connection, message, t_s):
        params = [message.param1, message.param2, message.param3, message.param4,
                  message.param5, message.param6, message.param7]
        self._run_command(connection, message, message.command, params, t_s)

    def _on_command_int(self, connection, message, t_s):
        params = [message.param1, message.param2, message.param3, message.param4,
                  message.x, message.y, message.z]
        self._run_command(connection, message, message.command, params, t_s)

    def _run_command(self, connection, message, command, params, t_s):
        self.counters["commands"] += 1
        handler = self._commands.get(command)
        if handler is None:
            self._ack(connection, command, mavlink.MAV_RESULT_UNSUPPORTED, t_s, message)
            return
        if not all(math.isfinite(p) for p in params[:4]):
            result = mavlink.MAV_RESULT_DENIED
        else:
            result = handler(connection, params, t_s)
        self._ack(connection, command, result, t_s, message)

    def _cmd_arm_disarm(self, connection, params, t_s):
        if params[0] not in (0.0, 1.0):
            return mavlink.MAV_RESULT_DENIED
        self.firmware.set_armed(t_s, params[0] == 1.0)
        self.input_changed = True
        return mavlink.MAV_RESULT_ACCEPTED

    def _change_mode(self, base_mode, custom_mode, t_s):
        if not int(base_mode) & mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED:
            self.statustext(SEVERITY_WARNING, "Only custom modes are supported", t_s)
            return mavlink.MAV_RESULT_DENIED
        accepted, _ = self.firmware.set_mode(int(custom_mode))
        self.input_changed = True
        return mavlink.MAV_RESULT_ACCEPTED if accepted else mavlink.MAV_RESULT_DENIED

    def _cmd_do_set_mode(self, connection, params, t_s):
        return self._change_mode(params[0], params[1], t_s)

    def _on_set_mode(self, connection, message, t_s):
        result = self._change_mode(message.base_mode, message.custom_mode, t_s)
        # ArduPilot acknowledges SET_MODE with the message id as the command number.
        self._ack(connection, mavlink.MAVLINK_MSG_ID_SET_MODE, result, t_s, message)

    def _cmd_set_message_interval(self, connection, params, t_s):
        name = telemetry.MESSAGE_BY_ID.get(int(params[0]))
        if name is None:
            return mavlink.MAV_RESULT_FAILED
        interval_us = params[1]
        if interval_us == 0:
            interval_s = connection.scheduler.default_intervals.get(name)
        elif interval_us < 0:
            interval_s = None
        else:
            interval_s = interval_us * 1e-6
        self._set_channel_interval(connection, name, interval_s, t_s)
        LOG.info("%s: %s interval %s", connection, name, connection.scheduler.interval_s(name))
        return mavlink.MAV_RESULT_ACCEPTED

    def _cmd_request_message(self, connection, params, t_s):
        message_id = int(params[0])
        if message_id == mavlink.MAVLINK_MSG_ID_AUTOPILOT_VERSION:
            self._emit(connection, self._autopilot_version(), t_s)
            return mavlink.MAV_RESULT_ACCEPTED
        if message_id == mavlink.MAVLINK_MSG_ID_HOME_POSITION:
            self._emit(connection, self._home_position(t_s), t_s)
            return mavlink.MAV_RESULT_ACCEPTED
        if message_id == mavlink.MAVLINK_MSG_ID_GPS_GLOBAL_ORIGIN:
            self._emit(connection, self._gps_global_origin(t_s), t_s)
            return mavlink.MAV_RESULT_ACCEPTED
        name = telemetry.MESSAGE_BY_ID.get(message_id)
        if name is None:
            return mavlink.MAV_RESULT_FAILED
        sample = telemetry.Sample(self.model)
        self._emit(connection, self.builder.build(name, sample, self.firmware), t_s)
        return mavlink.MAV_RESULT_ACCEPTED

    def _cmd_autopilot_capabilities(self, connection, params, t_s):
        # GCS_MAVLINK::handle_command_request_autopilot_capabilities: param1 must be 1.
        # MAVROS's sys_status sends it broadcast (target 0) and does not wait for the
        # ACK; ArduPilot acknowledges anyway, so MAVROS logs "CMD: Unexpected command
        # 520" against a real vehicle too.
        if params[0] != 1.0:
            return mavlink.MAV_RESULT_FAILED
        self._emit(connection, self._autopilot_version(), t_s)
        return mavlink.MAV_RESULT_ACCEPTED

    def _cmd_get_home_position(self, connection, params, t_s):
        # GCS_MAVLINK::handle_command_get_home_position: home is always set here (the NED
        # origin at home_lat/lon/alt), so HOME_POSITION and GPS_GLOBAL_ORIGIN, ACCEPTED.
        # MAVROS's home_position plugin polls this every 10 s until HOME_POSITION arrives.
        self._emit(connection, self._home_position(t_s), t_s)
        self._emit(connection, self._gps_global_origin(t_s), t_s)
        return mavlink.MAV_RESULT_ACCEPTED

    def _home_position(self, t_s):
        # GCS_MAVLINK::send_home_position: local x, y, z 0, q identity, approach 0.
        c = self.config
        return self.encoder.home_position_encode(int(round(c.home_lat_deg * 1e7)), int(round(c.home_lon_deg * 1e7)),
                                                 int(round(c.home_alt_m * 1000)), 0.0, 0.0, 0.0,
                                                 [1.0, 0.0, 0.0, 0.0], 0.0, 0.0, 0.0, int(t_s * 1e6))

    def _gps_global_origin(self, t_s):
        c = self.config
        return self.encoder.gps_global_origin_encode(int(round(c.home_lat_deg * 1e7)),
                                                     int(round(c.home_lon_deg * 1e7)),
                                                     int(round(c.home_alt_m * 1000)), int(t_s * 1e6))

    def _autopilot_version(self):
        return self.encoder.autopilot_version_encode(CAPABILITIES, FLIGHT_SW_VERSION, 0, 0, 0,
                                                     [0] * 8, [0] * 8, [0] * 8, 0, 0, 0)

    def _on_request_data_stream(self, connection, message, t_s):
        if message.req_stream_id == mavlink.MAV_DATA_STREAM_ALL:
            groups = list(telemetry.STREAM_GROUPS.values())
        else:
            groups = [telemetry.STREAM_GROUPS.get(message.req_stream_id, ())]
        rate = message.req_message_rate if message.start_stop else 0
        for group in groups:
            for name in group:
                self._set_channel_interval(connection, name, (1.0 / rate) if rate > 0 else None, t_s)

    def _on_timesync(self, connection, message, t_s):
        if message.tc1 == 0:
            self._emit(connection, self.encoder.timesync_encode(int(t_s * 1e9), message.ts1), t_s)

    def _on_mission_request_list(self, connection, message, t_s):
        mission_type = getattr(message, "mission_type", 0)
        self._emit(connection, self.encoder.mission_count_encode(message.get_srcSystem(),
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
            self._emit(connection, self._param_value(name, t_s), t_s)

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
        self._emit(connection, self._param_value(name, t_s), t_s)

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
            self._emit(None, self._param_value(name, t_s), t_s)
        else:
            self.statustext(SEVERITY_WARNING, problem, t_s, connection)
            self._emit(connection, self._param_value(name, t_s), t_s)


def _param_name(param_id):
    if isinstance(param_id, bytes):
        param_id = param_id.decode("ascii", "replace")
    return str(param_id).split("\x00", 1)[0]
