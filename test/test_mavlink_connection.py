"""The MAVLink bridge's connection (brov2_hybrid.link.mavlink_connection) over a fake pymavlink
connection: opening (and failing to), sending, EOF, closing, signing and keying the vehicle."""
import os

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid import paths
from brov2_hybrid.link import mavlink_connection as mc
from brov2_hybrid.link import mavlink_signing

URL = "tcp:127.0.0.1:5760"


class FakeLog(object):
    """rospy's logging functions, recorded."""

    def __init__(self):
        self.lines = []

    def loginfo(self, msg, *args):
        self.lines.append(("info", msg % args))

    def logwarn(self, msg, *args):
        self.lines.append(("warn", msg % args))

    def logwarn_throttle(self, period_s, msg):
        self.lines.append(("warn_throttle", period_s, msg))


class FakeConnection(object):
    """A mavutil connection: ``mav`` encodes into ``sent``; ``fail`` makes writes raise OSError."""

    def __init__(self, url, **kwargs):
        self.url, self.kwargs = url, kwargs
        self.sent, self.closed, self.fail = [], False, False
        self.mav = mavlink.MAVLink(self, kwargs["source_system"], kwargs["source_component"])
        self.handle_eof = self.handle_disconnect = None
        self.incoming = []

    def write(self, buf):
        if self.fail:
            raise OSError("Broken pipe")
        self.sent.append(bytes(buf))

    def setup_signing(self, secret_key, **kwargs):
        self.mav.signing.secret_key = secret_key       # what mavutil does for the parser
        self.mav.signing.sign_outgoing = kwargs["sign_outgoing"]
        self.mav.signing.timestamp = kwargs["initial_timestamp"]

    def recv_match(self, blocking, timeout):
        return self.incoming.pop(0) if self.incoming else None

    def close(self):
        self.closed = True


def _link(key=None, connect=None):
    made, log = [], FakeLog()

    def make(url, **kwargs):
        made.append(FakeConnection(url, **kwargs))
        return made[-1]
    link = mc.MavlinkConnection(URL, (255, 190), (1, 1), key, key is not None, 2.0, 0.5, log,
                                connect=connect or make)
    return link, made, log


def test_open_send_receive_and_close():
    link, made, log = _link()
    assert not link.send(lambda m: m.heartbeat_send(6, 8, 0, 0, 4))       # nothing open: not sent
    assert link.open()
    (conn,) = made
    assert conn.url == URL and conn.kwargs == {"source_system": 255, "source_component": 190,
                                               "dialect": "ardupilotmega", "autoreconnect": False, "retries": 0}
    assert link.send(lambda m: m.heartbeat_send(6, 8, 0, 0, 4))
    beat = mavlink.MAVLink(None).decode(bytearray(conn.sent[0]))
    assert beat.get_type() == "HEARTBEAT" and (beat.get_srcSystem(), beat.get_srcComponent()) == (255, 190)
    conn.incoming.append(beat)
    assert link.receive(0.1) is beat and link.receive(0.1) is None
    link.close("no message for 3.0 s")
    assert conn.closed and link.conn is None
    assert log.lines[-1] == ("warn", "mavlink_bridge: closing link to %s: no message for 3.0 s" % URL)
    link.close("again")                                  # nothing open: nothing said
    assert len(log.lines) == 2


def test_a_failed_open_or_send_is_warned_and_reported():
    def refuse(url, **kwargs):
        raise OSError("Connection refused")
    link, _, log = _link(connect=refuse)
    assert not link.open() and link.conn is None
    assert log.lines == [("warn_throttle", mc.CONNECT_WARN_PERIOD_S, "mavlink_bridge: cannot connect to %s "
                          "(Connection refused); retrying every 0.5 s" % URL)]
    link, made, log = _link()
    link.open()
    made[0].fail = True
    assert not link.send(lambda m: m.heartbeat_send(6, 8, 0, 0, 4))
    assert log.lines[-1] == ("warn_throttle", 2.0, "mavlink_bridge: send failed: Broken pipe")


def test_eof_is_noted_and_cleared_by_the_next_open():
    link, made, _ = _link()
    link.open()
    assert not link.eof
    made[0].handle_eof()                                # pymavlink's hook: the vehicle went away
    assert link.eof
    link.close()
    link.open()
    assert not link.eof and made[1].handle_disconnect is not None


def test_a_signing_key_signs_what_is_sent_and_keys_the_vehicle():
    key = mavlink_signing.load_key(os.path.join(paths.package_root(), "test", "data", "signing_test.key"))
    link, made, _ = _link(key=key)
    link.open()
    assert made[0].mav.signing.sign_outgoing and made[0].mav.signing.secret_key == key
    assert link.send_setup_signing()
    keying = mavlink.MAVLink(None).decode(bytearray(made[0].sent[0]))
    assert keying.get_type() == "SETUP_SIGNING" and bytes(keying.secret_key) == key
    assert (keying.target_system, keying.target_component) == (1, 1)
    unsigned, made, _ = _link()
    unsigned.open()
    assert not made[0].mav.signing.sign_outgoing


def _types(conn):
    parser = mavlink.MAVLink(None)
    return [parser.decode(bytearray(buf)).get_type() for buf in conn.sent]


def test_the_vehicle_is_keyed_at_most_once_a_period_and_when_it_talks_unsigned():
    key = mavlink_signing.load_key(os.path.join(paths.package_root(), "test", "data", "signing_test.key"))
    link, made, _ = _link(key=key)
    link.open()
    assert link.key_vehicle(0.0) and not link.key_vehicle(0.5)       # SETUP_SIGNING_PERIOD_S = 1 s
    # a frame of vehicle 1/1 (HEARTBEAT, id 0) refused by signing, after the period: keyed again
    from_vehicle = mavlink.MAVLink_bad_data(bytes([0xFD, 9, 0, 0, 7, 1, 1, 0, 0, 0]), "Invalid signature")
    text = link.on_unsigned(from_vehicle, 1.5)
    assert _types(made[0]) == ["SETUP_SIGNING", "SETUP_SIGNING"]
    assert text == ("1 unsigned or wrongly signed messages dropped (last from 1/1); is the vehicle keyed with key "
                    "%s? (~signing_setup keys it)" % mavlink_signing.fingerprint(key))
    other = mavlink.MAVLink_bad_data(bytes([0xFD, 9, 0, 0, 7, 2, 1, 0, 0, 0]), "Invalid signature")
    assert link.on_unsigned(other, 9.0).startswith("2 unsigned") and len(made[0].sent) == 2   # not our vehicle
    assert "(last from ?)" in link.on_unsigned(mavlink.MAVLink_bad_data(b"", "Invalid signature"), 9.0)


def test_without_signing_the_vehicle_is_never_keyed():
    link, made, _ = _link()
    link.open()
    assert not link.key_vehicle(0.0) and made[0].sent == []
