"""MAVROS FCU URLs (as libmavconn parses them) and waiting for the FCU (brov2_hybrid.link.fcu_address)."""
import socket
import threading
import time

import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link.fcu_address import (
    free_tcp_port,
    FcuUnreachable,
    describe_wait,
    parse_mavros_url,
    wait_for_vehicle,
)


@pytest.mark.parametrize("url, kind, host, port, remote, ids", [
    # forms and defaults of libmavconn interface.cpp url_parse_*
    ("tcp://127.0.0.1:5760", "tcp", "127.0.0.1", 5760, None, None),
    ("tcp://localhost", "tcp", "localhost", 5760, None, None),
    ("tcp://:5762", "tcp", "localhost", 5762, None, None),
    ("TCP://Vehicle.Local:5770/?ids=255,240", "tcp", "vehicle.local", 5770, None, (255, 240)),
    ("tcp-l://0.0.0.0:5761", "tcp-l", "0.0.0.0", 5761, None, None),
    ("tcp-l://", "tcp-l", "0.0.0.0", 5760, None, None),
    ("udp://0.0.0.0:14550@", "udp", "0.0.0.0", 14550, ("", 14550), None),
    ("udp://:14555@192.168.2.2:14550", "udp", "0.0.0.0", 14555, ("192.168.2.2", 14550), None),
    ("udp-b://@", "udp", "0.0.0.0", 14555, ("", 14550), None),
    ("udp-pb://@:14560", "udp", "0.0.0.0", 14555, ("", 14560), None),
    ("/dev/ttyACM0:115200", "serial", "/dev/ttyACM0", 115200, None, None),
    ("/dev/ttyUSB1", "serial", "/dev/ttyUSB1", 57600, None, None),
    ("serial:///dev/ttyACM0:921600?ids=1,240", "serial", "/dev/ttyACM0", 921600, None, (1, 240)),
    ("serial-hwfc:///dev/ttyTHS1:1500000", "serial", "/dev/ttyTHS1", 1500000, None, None),
])
def test_parse_mavros_url_forms(url, kind, host, port, remote, ids):
    parsed = parse_mavros_url(url)
    assert (parsed.kind, parsed.host, parsed.port, parsed.remote, parsed.ids) == (
        kind, host, port, remote, ids)


@pytest.mark.parametrize("url, fragment", [
    ("", "empty"),
    ("udpin:0.0.0.0:14550://x", "unknown scheme"),
    ("http://127.0.0.1:5760", "unknown scheme"),
    ("udp://0.0.0.0:14550", "needs '@'"),
    ("tcp://127.0.0.1:port", "not a number"),
    ("tcp://127.0.0.1:70000", "out of range"),
    ("tcp://127.0.0.1:5760/?sysid=1", "ids=SYSID,COMPID"),
])
def test_parse_mavros_url_refuses_malformed(url, fragment):
    with pytest.raises(Brov2Error, match=fragment):
        parse_mavros_url(url)


@pytest.mark.parametrize("url", ["tcp:127.0.0.1:5760", "udpin:0.0.0.0:14550"])
def test_pymavlink_form_is_refused_with_the_mavros_form(url):
    """pymavlink's ``tcp:host:port`` has no '://': libmavconn would open a device "tcp"."""
    with pytest.raises(Brov2Error, match="pymavlink's form.*tcp://127.0.0.1:5760"):
        parse_mavros_url(url)


def test_only_tcp_client_and_serial_have_something_to_wait_for():
    assert "127.0.0.1:5760" in describe_wait(parse_mavros_url("tcp://127.0.0.1:5760"))
    assert "/dev/ttyACM0" in describe_wait(parse_mavros_url("/dev/ttyACM0:115200"))
    for url in ("udp://0.0.0.0:14550@", "udp-b://@", "tcp-l://:5760"):
        assert describe_wait(parse_mavros_url(url)) == ""
        assert wait_for_vehicle(url, 0.5, 0.05, 0.1) == 0.0



def test_waits_for_a_listener_that_appears_later():
    port = free_tcp_port()
    delay_s = 0.6
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    opened = {}

    def listen_later():
        time.sleep(delay_s)
        listener.bind(("127.0.0.1", port))
        listener.listen(1)
        opened["t"] = time.monotonic()

    thread = threading.Thread(target=listen_later)
    start = time.monotonic()
    thread.start()
    try:
        waited = wait_for_vehicle("tcp://127.0.0.1:%d" % port, 10.0, 0.05, 0.5)
        returned = time.monotonic()
    finally:
        thread.join()
        listener.close()
    assert "t" in opened and returned >= opened["t"]
    assert waited >= delay_s * 0.9
    assert returned - start == pytest.approx(waited, abs=0.2)


def test_never_appearing_listener_raises_naming_address_and_wait():
    port = free_tcp_port()
    start = time.monotonic()
    with pytest.raises(FcuUnreachable) as info:
        wait_for_vehicle("tcp://127.0.0.1:%d" % port, 0.5, 0.05, 0.2)
    elapsed = time.monotonic() - start
    text = str(info.value)
    assert "tcp://127.0.0.1:%d" % port in text
    assert "waited" in text and "TCP server" in text and "refused" in text.lower()
    assert 0.5 <= elapsed < 3.0


def test_serial_device_waits_until_the_file_exists(tmp_path):
    device = tmp_path / "ttyACM0"
    timer = threading.Timer(0.3, device.write_text, args=("",))
    timer.start()
    try:
        waited = wait_for_vehicle("%s:115200" % device, 5.0, 0.05, 0.5)
    finally:
        timer.join()
    assert waited >= 0.25
    with pytest.raises(FcuUnreachable, match="serial device"):
        wait_for_vehicle("serial://%s/missing:57600" % tmp_path, 0.2, 0.05, 0.5)


def test_fake_clock_timeout_is_exact():
    """The timeout is measured on the given clock; attempts stop once it has passed."""
    now = [0.0]
    attempts = []

    def clock():
        return now[0]

    def sleep(dt):
        attempts.append(now[0])
        now[0] += dt

    with pytest.raises(FcuUnreachable, match="waited 2.0 s"):
        wait_for_vehicle("/nonexistent/ttyACM9", 2.0, 0.5, 0.1, clock=clock, sleep=sleep)
    assert attempts == [0.0, 0.5, 1.0, 1.5]


def test_free_tcp_port_can_be_listened_on():
    port = free_tcp_port()
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", port))      # nothing holds it
        server.listen(1)
    finally:
        server.close()
