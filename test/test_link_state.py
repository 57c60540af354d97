"""The MAVLink bridge's link (brov2_hybrid.link.link_state): link monitor and state machine,
signing handshake, waits for the vehicle's replies."""
import math
import threading

from brov2_hybrid.link import link_state as ls


def test_link_monitor():
    m = ls.LinkMonitor(2.0)
    assert not m.connected(0.0) and m.silent_for(0.0) == math.inf
    m.on_heartbeat(1.0)
    m.on_message(1.0)
    assert m.connected(2.9) and not m.connected(3.1) and m.silent_for(4.0) == 3.0


def _schedule():
    # link_timeout 2 s, silence 3 s, heartbeat every 1 s, streams every 5 s when below 0.9 * 50 Hz
    return ls.LinkSchedule(2.0, 3.0, 1.0, 5.0, 0.9, 50.0)


def test_link_schedule_connects_on_heartbeat_and_sends_heartbeats_and_requests_on_time():
    s = _schedule()
    asked = []

    def rate(value):
        return lambda: asked.append(value) or value

    s.opened(0.0)
    assert s.turn(0.0, rate(0.0)) == ls.LinkTurn(None, None, True, False)   # no vehicle HEARTBEAT yet
    assert asked == []                       # the attitude rate is asked only when a request is due
    s.on_heartbeat(0.1)
    s.on_message(0.1)
    turn = s.turn(0.1, rate(0.0))
    assert turn == ls.LinkTurn(None, True, False, True)        # connected; attitude missing: request
    s.was_connected = True
    assert s.turn(0.2, rate(0.0)) == ls.LinkTurn(None, None, False, False)   # next request at 5.1
    assert s.turn(1.0, rate(0.0)).heartbeat
    s.on_heartbeat(5.0)
    s.on_message(5.0)
    assert s.turn(5.1, rate(50.0)) == ls.LinkTurn(None, None, True, False)   # rate fine: no request
    assert asked == [0.0, 50.0]
    # threshold: 0.9 * 50 = 45 Hz; the next request is due at 10.1
    s.on_heartbeat(10.0)
    s.on_message(10.0)
    assert s.turn(10.1, rate(44.9)).request_streams


def test_link_schedule_reports_a_lost_link_and_reconnects_after_silence():
    s = _schedule()
    s.opened(0.0)
    s.on_heartbeat(0.5)
    s.on_message(0.5)
    assert s.turn(0.5, lambda: 50.0).connected_now is True
    s.was_connected = True
    s.on_message(2.0)                        # messages but no HEARTBEAT: lost after 2 s
    assert s.turn(2.4, lambda: 50.0).connected_now is None
    assert s.turn(2.6, lambda: 50.0).connected_now is False
    s.was_connected = False
    turn = s.turn(5.1, lambda: 50.0)         # 3.1 s without any message
    assert turn.close_reason == "no message for 3.0 s" and not turn.heartbeat
    s.closed()
    assert not s.connected(5.1) and s.timeout_s == 2.0
    s.opened(6.0)                            # silence counts from the new link's start
    assert s.turn(8.9, lambda: 0.0).close_reason is None
    assert s.turn(9.1, lambda: 0.0).close_reason is not None


def test_signing_link_keys_the_talking_vehicle_at_most_once_a_second():
    off = ls.SigningLink(False, 1)
    assert not off.setup_due(0.0) and not off.on_rejected((1, 1, 0), 0.0)
    assert off.rejected == 1
    s = ls.SigningLink(True, 1)
    assert s.setup_due(0.0)
    assert not s.setup_due(0.5)
    assert not s.on_rejected((1, 1, 30), 0.9)          # the vehicle, but keyed 0.9 s ago
    assert s.on_rejected((1, 1, 30), 1.0)
    assert not s.on_rejected((2, 1, 30), 5.0)          # another system: counted, not keyed
    assert not s.on_rejected(None, 5.0)
    assert s.rejected == 4
    s.opened()                                         # a new link: at once again
    assert s.setup_due(1.2)


def test_command_acks_wait_for_an_ack_after_the_request():
    acks = ls.CommandAcks()
    acks.record(400, 4, 1.0)                           # an old ACK (before the request)
    assert acks.wait(400, 2.0, 0.05) is None
    assert acks.wait(400, 1.0, 0.05) == 4
    since = 5.0
    t = threading.Timer(0.02, acks.record, (400, 0, since + 0.01))
    t.start()
    try:
        assert acks.wait(400, since, 5.0) == 0
    finally:
        t.join()
    assert acks.wait(511, 0.0, 0.01) is None           # never acknowledged


def test_replies_are_waited_for_by_key():
    now = [10.0]
    replies = ls.CommandAcks(clock=lambda: now[0])
    replies.record("RC_OVERRIDE_TIME", (3.0, 9), 10.0)
    assert replies.wait("RC_OVERRIDE_TIME", 10.0, 0.0) == (3.0, 9)
    assert replies.wait("RC_OVERRIDE_TIME", 10.5, 0.0) is None      # an older reply does not answer
    assert replies.wait("SYSID_MYGCS", 0.0, 0.0) is None
