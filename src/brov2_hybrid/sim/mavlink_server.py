"""The simulator's sockets: :class:`MavlinkServer` (TCP server and UDP out link) and its :class:`Connection` s.

:class:`MavlinkServer` is a single-threaded, select-based TCP server (any number of
clients at once; a client may disconnect and reconnect) plus an optional UDP "out"
link that, like ``sim_vehicle.py --out``, sends to a fixed address and accepts
whatever comes back. Each link has its own MAVLink parser (pymavlink, MAVLink 2,
robust parsing): malformed bytes are counted and skipped, never fatal. A frame refused
by signing is passed on (as BAD_DATA "Invalid signature") for the vehicle to count.
What the messages mean is :class:`~brov2_hybrid.sim.mavlink_protocol.MavlinkProtocol`'s business.
"""
import errno
import logging
import select
import socket

from pymavlink.dialects.v20 import ardupilotmega as mavlink

LOG = logging.getLogger(__name__)

RECV_BYTES = 65536
#: A client that does not read its data is cut off from new data above this backlog.
MAX_BACKLOG_BYTES = 1 << 20
#: pymavlink's BAD_DATA reason for a frame refused by signing (MAVLink.decode).
SIGNATURE_REJECTED = "Invalid signature"


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
        self.scheduler = None      # set by MavlinkProtocol
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
        self.parser_hook = None   # called with every new parser (MavlinkProtocol: signing)
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
        """Close every link (TCP clients and the UDP copy) and the listening socket."""
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

    def links(self):
        """The open links (TCP clients and the UDP copy), as a list."""
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
    def poll(self, timeout_s, wake=()):
        """Wait up to ``timeout_s`` for traffic (or for one of ``wake``, objects with ``fileno()``,
        to become readable: the caller reads them).

        Returns
        -------
        new, closed : list of Connection
        messages : list of (Connection, MAVLink message)
        """
        readers = [self.listener] + [c.sock for c in self.connections.values()] + list(wake)
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
            if sock in wake:
                continue
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
