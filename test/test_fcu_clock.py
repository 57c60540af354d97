"""ROS time from the FCU's clock (brov2_hybrid.link.fcu_clock): the FCU clock
and the /clock relay."""
import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link import fcu_clock as fc
from brov2_hybrid.node_logic.node_params import load_node_params


def _fcu_clock():
    p = load_node_params("mavlink_bridge")
    return fc.FcuClock(p["clock_min_speedup"], p["clock_max_speedup"], p["clock_jump_s"])


def test_fcu_clock_follows_fcu_time_and_never_goes_back():
    c = _fcu_clock()
    assert c.now(0.0) == 0.0 and not c.started
    for k in range(101):                     # 4x speed-up: 20 ms FCU per 5 ms wall
        t = c.update(k * 0.02, 100.0 + k * 0.005)
    assert t == pytest.approx(2.0)
    assert c.rate == pytest.approx(4.0, rel=0.01)
    # link lost: extrapolate at 4x
    assert c.now(100.5 + 1.0) == pytest.approx(2.0 + 4.0 * 1.0, rel=0.01)
    # FCU restarted at time 0, 1 s (wall) later: continue from the extrapolated time
    t_restart = c.update(0.02, 101.5)
    assert t_restart >= 2.0 + 3.9
    later = c.update(0.52, 101.625)          # FCU time advances 0.5 s
    assert later - t_restart == pytest.approx(0.5)


def test_a_pausing_fcu_clock_pauses_ros_time_without_a_jump():
    """A simulator in lockstep holds its time while the controller thinks: ROS time waits with
    it, whatever the pause (no re-anchoring that would move stamps off the vehicle's time)."""
    c = _fcu_clock()
    for k in range(101):                     # 10x speed-up
        c.update(k * 0.02, 100.0 + k * 0.002)
    t = c.update(2.02, 100.2 + 1.0)          # 1 s of wall time for one 20 ms step: 10 s "expected"
    assert t == pytest.approx(2.02) and c.offset_s == 0.0
    # a long link loss that was extrapolated still re-anchors when the FCU comes back behind
    published = c.now(101.2 + 3.0)
    back = c.update(2.04, 101.2 + 3.0)
    assert back >= published


def test_fcu_clock_refuses_bad_bounds():
    with pytest.raises(Brov2Error, match="FCU clock: expected 0 < min_rate <= max_rate"):
        fc.FcuClock(2.0, 1.0, 5.0)
    with pytest.raises(Brov2Error, match="jump_s > 0"):
        fc.FcuClock(0.1, 100.0, 0.0)


def test_clock_relay_only_goes_forward_and_keeps_time_running_while_the_link_is_down():
    c = fc.ClockRelay(0.01)
    assert c.accept(1.0, 100.0) and c.last_s == 1.0
    assert not c.accept(1.0, 100.1) and not c.accept(0.5, 100.1)
    assert c.last_s == 1.0 and c.last_mono == 100.0
    assert not c.keepalive_due(100.5, started=True, connected=True)
    assert not c.keepalive_due(100.5, started=False, connected=False)
    assert not c.keepalive_due(100.005, started=True, connected=False)
    assert c.keepalive_due(100.01, started=True, connected=False)
