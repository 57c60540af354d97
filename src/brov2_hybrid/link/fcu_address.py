"""FCU addresses (MAVROS ``fcu_url``) and waiting until the FCU (the autopilot) can be reached.

MAVROS 1.x opens its link once at start (libmavconn ``MAVConnInterface::open_url``):
a TCP client (``tcp://``) that finds nobody listening throws, and the node dies; it
does not retry. ``launch/mavros.launch`` therefore starts ``mavros_node`` through
``scripts/wait_for_vehicle``, which waits with :func:`wait_for_vehicle` until the
address can be opened.

URL forms, as libmavconn's ``open_url_no_connect`` / ``url_parse_*``
(``libmavconn/src/interface.cpp``) read them:

=====================================  ==========  ======================================
``/dev/ttyACM0[:baud]``                serial      no ``://``: a device path
``serial:///dev/ttyACM0[:baud]``       serial      (``serial-hwfc://``: hardware flow)
``udp://[bind][:port]@[remote][:port]``  udp       binds; the vehicle sends to it
``udp-b://`` / ``udp-pb://``           udp         as udp, remote = broadcast
``tcp://[host][:port]``                tcp         client: the vehicle must listen
``tcp-l://[host][:port]``              tcp-l       server: MAVROS listens
=====================================  ==========  ======================================

Only two forms have something to wait for: a TCP client needs a listening server
(the simulator, ArduSub SITL, a BlueOS TCP endpoint) and a serial link needs its
device (a USB autopilot appears when plugged in). UDP and TCP-server links bind a
local port and then wait for the vehicle themselves.
"""
import collections
import os
import socket
import time

from brov2_hybrid.errors import Brov2Error

# libmavconn defaults (interface.cpp url_parse_*; serial.h, udp.h).
SERIAL_DEFAULT_DEVICE = "/dev/ttyACM0"
SERIAL_DEFAULT_BAUD = 57600
UDP_DEFAULT_BIND = ("0.0.0.0", 14555)
UDP_DEFAULT_REMOTE = ("", 14550)
TCP_CLIENT_DEFAULT = ("localhost", 5760)
TCP_SERVER_DEFAULT = ("0.0.0.0", 5760)

_SCHEMES = ("serial", "serial-hwfc", "udp", "udp-b", "udp-pb", "tcp", "tcp-l")


class FcuUnreachable(Brov2Error):
    """The FCU address could not be opened within the wait."""


#: A parsed MAVROS URL. ``kind``: serial | udp | tcp | tcp-l. ``host``/``port``: the
#: TCP server (tcp), the local bind address (udp, tcp-l) or the device and baud rate
#: (serial). ``remote``: (host, port) the udp link sends to, else None. ``ids``:
#: (sysid, compid) from ``?ids=`` or None.
MavrosUrl = collections.namedtuple("MavrosUrl", "url scheme kind host port remote ids")


def _host_port(text, default_host, default_port, url, maximum=65535):
    """libmavconn url_parse_host: ``host``, ``host:port``, ``:port`` or empty.

    ``port`` is a network port, or a serial baud rate (``maximum=None``).
    """
    if ":" not in text:
        return (text or default_host), default_port
    host, _, port = text.partition(":")
    try:
        number = int(port)
    except ValueError:
        raise Brov2Error("vehicle address %r: port %r is not a number" % (url, port))
    if number < 0 or (maximum is not None and number > maximum):
        raise Brov2Error("vehicle address %r: port %d is out of range 0..65535" % (url, number))
    return (host or default_host), number


def _ids(query, url):
    if not query:
        return None
    if not query.startswith("ids=") or "," not in query:
        raise Brov2Error("vehicle address %r: query %r is not ids=SYSID,COMPID" % (url, query))
    sysid, _, compid = query[len("ids="):].partition(",")
    try:
        return int(sysid), int(compid)
    except ValueError:
        raise Brov2Error("vehicle address %r: ids %r are not numbers" % (url, query))


def parse_mavros_url(url):
    """MAVROS ``fcu_url`` -> :data:`MavrosUrl`; raises Brov2Error on a malformed URL."""
    text = str(url).strip()
    if not text:
        raise Brov2Error("vehicle address is empty (expected e.g. tcp://127.0.0.1:5760)")
    if "://" not in text:  # libmavconn: "looks like file path"
        head = text.split(":", 1)[0].lower()
        if head in ("tcp", "tcpin", "udp", "udpin", "udpout", "udpbcast"):
            raise Brov2Error("vehicle address %r is in pymavlink's form (mavlink_bridge's fcu_url); "
                             "MAVROS wants e.g. tcp://127.0.0.1:5760 or udp://0.0.0.0:14550@" % text)
        device, baud = _host_port(text, SERIAL_DEFAULT_DEVICE, SERIAL_DEFAULT_BAUD, text, None)
        return MavrosUrl(text, "serial", "serial", device, baud, None, None)
    scheme, _, rest = text.partition("://")
    scheme = scheme.lower()
    if scheme not in _SCHEMES:
        raise Brov2Error("vehicle address %r: unknown scheme %r (MAVROS knows %s, or a device path)"
                         % (text, scheme, ", ".join(s + "://" for s in _SCHEMES)))
    slash = rest.find("/")
    host = rest if slash < 0 else rest[:slash]
    path_query = "" if slash < 0 else rest[slash:]
    path, _, query = path_query.partition("?")
    ids = _ids(query, text)
    if scheme.startswith("serial"):
        device, baud = _host_port(path, SERIAL_DEFAULT_DEVICE, SERIAL_DEFAULT_BAUD, text, None)
        return MavrosUrl(text, scheme, "serial", device, baud, None, ids)
    host = host.lower()
    if scheme.startswith("udp"):
        if "@" not in host:
            raise Brov2Error("vehicle address %r: a udp URL needs '@' between the local and the "
                             "remote address (e.g. udp://0.0.0.0:14550@)" % text)
        bind, _, remote = host.partition("@")
        bind_host, bind_port = _host_port(bind, UDP_DEFAULT_BIND[0], UDP_DEFAULT_BIND[1], text)
        remote_addr = _host_port(remote, UDP_DEFAULT_REMOTE[0], UDP_DEFAULT_REMOTE[1], text)
        return MavrosUrl(text, scheme, "udp", bind_host, bind_port, remote_addr, ids)
    default = TCP_CLIENT_DEFAULT if scheme == "tcp" else TCP_SERVER_DEFAULT
    tcp_host, tcp_port = _host_port(host, default[0], default[1], text)
    return MavrosUrl(text, scheme, scheme, tcp_host, tcp_port, None, ids)


def describe_wait(address):
    """What :func:`wait_for_vehicle` waits for at ``address`` (a :data:`MavrosUrl`), or ''."""
    if address.kind == "tcp":
        return "a TCP server accepting connections on %s:%d" % (address.host, address.port)
    if address.kind == "serial":
        return "the serial device %s" % address.host
    return ""


def _tcp_accepts(host, port, timeout_s):
    try:
        sock = socket.create_connection((host, port), timeout=timeout_s)
    except OSError as exc:
        return str(exc)
    sock.close()
    return ""


def wait_for_vehicle(address, timeout_s, poll_period_s, connect_timeout_s,
                     clock=time.monotonic, sleep=time.sleep):
    """Block until ``address`` (a :data:`MavrosUrl` or URL text) can be opened.

    tcp: a connection to host:port succeeds (and is closed at once); serial: the
    device file exists; udp / tcp-l: nothing to wait for. Tries every
    ``poll_period_s`` [s]; ``timeout_s`` [s] <= 0 waits forever.

    Returns the seconds waited. Raises :class:`FcuUnreachable` naming the
    address, what was awaited, how long, and the last error, once ``timeout_s``
    has passed.
    """
    if not isinstance(address, MavrosUrl):
        address = parse_mavros_url(address)
    what = describe_wait(address)
    start = clock()
    if not what:
        return 0.0
    while True:
        if address.kind == "tcp":
            error = _tcp_accepts(address.host, address.port, connect_timeout_s)
        else:
            error = "" if os.path.exists(address.host) else "no such device"
        waited = clock() - start
        if not error:
            return waited
        if timeout_s > 0 and waited >= timeout_s:
            raise FcuUnreachable(
                "vehicle %s not reachable: waited %.1f s for %s (last error: %s)"
                % (address.url, waited, what, error))
        sleep(poll_period_s)


def free_tcp_port(host="127.0.0.1"):
    """A TCP port on ``host`` that nothing listens on now (the OS picks it; tests and tools
    start a simulator or a master there). Another process may take it before the caller does."""
    sock = socket.socket()
    try:
        sock.bind((host, 0))
        return sock.getsockname()[1]
    finally:
        sock.close()
