"""Shared by the brov2_sitl MAVLink tests: a simulator fixture on a free port and a pymavlink ground station.

Each test starts the simulator in-process on a free port (never 5760), running
SPEEDUP times faster than real time so that the 3 s ArduSub timeouts take 0.6 s.
"""
import os
import threading
import time

import numpy as np
import pytest

os.environ["MAVLINK20"] = "1"
from pymavlink import mavutil  # noqa: E402

from brov2_hybrid.vehicle.rc import load_rc_map  # noqa: E402
from brov2_hybrid.sim.config import load_link_config  # noqa: E402
from brov2_hybrid.sim.simulator import Simulator  # noqa: E402

mavutil.set_dialect("ardupilotmega")
mavlink = mavutil.mavlink

SPEEDUP = 5.0
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
NEUTRAL8 = [1500] * 8
CHAN_NOCHANGE = 65535
YAW_RIGHT = [1500, 1500, 1500, 1600, 1500, 1500, 1500, 1500]  # channel 4 = yaw


def expected_servos(vehicle, rc8, mixer="quantitative"):
    return vehicle.mixer(mixer).pwm(load_rc_map().u_from_pwm(rc8))


def servos(msg):
    return np.array([getattr(msg, "servo%d_raw" % i) for i in range(1, 9)], dtype=float)


@pytest.fixture
def sim(vehicle, request):
    link = load_link_config()
    link.address = "tcp:127.0.0.1:0"
    link.udp_out = None
    link.home_alt_m = getattr(request, "param", link.home_alt_m)   # indirect parametrize: home altitude
    simulator = Simulator(vehicle=vehicle, link_config=link, speedup=SPEEDUP, initial_eta=[0, 0, 5.0, 0, 0, 0])
    thread = threading.Thread(target=simulator.run, name="brov2_sitl", daemon=True)
    simulator.test_started_s = simulator.clock()   # before run(): simulated time 0 is no earlier
    thread.start()
    yield simulator
    simulator.stop()
    thread.join(5.0)
    simulator.close()
    assert not thread.is_alive()


class SimTap(object):
    """Records, in the simulator's own thread, the simulated time at which each MAVLink
    message goes out and each received one is handled, so that tests can compare message
    stamps with vehicle time rather than with the wall clock (which a loaded machine stretches)."""

    def __init__(self, sim):
        self._sent = []       # (simulated time [s], packed bytes)
        self._handled = []    # (simulated time [s], message)
        send, handle = sim.server.send, sim.protocol.handle

        def tapped_send(connection, data):
            self._sent.append((sim.t_s, bytes(data)))
            send(connection, data)

        def tapped_handle(connection, message, t_s):
            self._handled.append((t_s, message))
            handle(connection, message, t_s)

        sim.server.send = tapped_send
        sim.protocol.handle = tapped_handle

    def sent(self, kind):
        """(send time [s], message) of every ``kind`` message sent so far."""
        parser = mavlink.MAVLink(None)
        out = []
        for t_s, data in list(self._sent):
            for msg in parser.parse_buffer(bytearray(data)) or []:
                if msg.get_type() == kind:
                    out.append((t_s, msg))
        return out

    def handled(self, kind, predicate=lambda msg: True):
        """(handling time [s], message) of every received ``kind`` message with predicate true."""
        return [(t_s, m) for t_s, m in list(self._handled) if m.get_type() == kind and predicate(m)]


class Gcs(object):
    """A pymavlink ground station on the simulator's TCP port."""

    def __init__(self, port, sysid=255, compid=190):
        self.m = mavutil.mavlink_connection("tcp:127.0.0.1:%d" % port, source_system=sysid,
                                            source_component=compid, autoreconnect=False)
        assert self.m.wait_heartbeat(timeout=10) is not None
        self.override = None  # 8 channel values re-sent by wait_for (pilot keeps the stick)
        self.joystick = None  # (target, x, y, z, r) MANUAL_CONTROL re-sent by wait_for
        self._last_sent = 0.0

    def close(self):
        self.m.close()

    def send_override(self, values):
        self.m.mav.rc_channels_override_send(1, 1, *values)

    def wait_for(self, predicate, timeout=10.0, what="message"):
        """First received message with predicate(msg) true; keeps re-sending self.override."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if (self.override is not None or self.joystick is not None) and time.time() - self._last_sent > 0.04:
                if self.override is not None:
                    self.send_override(self.override)
                if self.joystick is not None:
                    self.m.mav.manual_control_send(*self.joystick, 0)
                self._last_sent = time.time()
            msg = self.m.recv_match(blocking=True, timeout=0.04)
            if msg is not None and predicate(msg):
                return msg
        raise AssertionError("timed out waiting for %s" % what)

    def wait_type(self, kind, predicate=lambda msg: True, timeout=10.0):
        return self.wait_for(lambda m: m.get_type() == kind and predicate(m), timeout, kind)

    def drain(self):
        while self.m.recv_match(blocking=False) is not None:
            pass

    def command(self, command, *params):
        params = list(params) + [0] * (7 - len(params))
        self.m.mav.command_long_send(1, 1, command, 0, *params)
        return self.wait_type("COMMAND_ACK", lambda a: a.command == command)

    def arm(self, value=1):
        """Arm (1) or disarm (0). Arming also starts holding neutral sticks, as a pilot with a
        joystick does, so the pilot-input failsafe only fires when a test sets override None."""
        if value and self.override is None:
            self.override = NEUTRAL8
        assert self.command(mavlink.MAV_CMD_COMPONENT_ARM_DISARM, value).result == mavlink.MAV_RESULT_ACCEPTED

    def sync(self):
        """Return once every message sent before has been handled (replies come in order)."""
        self.m.mav.param_request_read_send(1, 1, b"SYSID_MYGCS", -1)
        self.wait_type("PARAM_VALUE", lambda p: p.param_id == "SYSID_MYGCS")

    def manual(self):
        self.m.mav.set_mode_send(1, mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 19)
        ack = self.wait_type("COMMAND_ACK", lambda a: a.command == mavlink.MAVLINK_MSG_ID_SET_MODE)
        assert ack.result == mavlink.MAV_RESULT_ACCEPTED

    def set_param(self, name, value):
        self.m.mav.param_set_send(1, 1, name.encode(), float(value), mavlink.MAV_PARAM_TYPE_REAL32)
        return self.wait_type("PARAM_VALUE", lambda p: p.param_id == name)


@pytest.fixture
def gcs(sim):
    station = Gcs(sim.port)
    yield station
    station.close()
