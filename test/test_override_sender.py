"""The MAVLink bridge's RC override sending (brov2_hybrid.link.override_sender): channel checks,
re-sending while fresh, the release when the input stops and at shutdown."""
import pytest

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link import override_sender as osend
from brov2_hybrid.link.ardusub import CHAN_NOCHANGE, CHAN_RELEASE


def test_override_fields_and_release():
    ch = [1600, 1500, 1400, 1500, 1550, 1500] + [65535] * 12
    assert osend.override_fields(ch) == ch
    with pytest.raises(Brov2Error, match="expected 18 channels"):
        osend.override_fields(ch[:8])
    with pytest.raises(Brov2Error, match="0..65535"):
        osend.override_fields([70000] + ch[1:])
    assert osend.release_of(ch) == [0] * 6 + [65535] * 12


def test_override_forwarder_resends_while_fresh():
    f = osend.OverrideForwarder(period_s=0.05, timeout_s=1.0)
    assert f.due(0.0) is None and f.release() is None
    ch = [1600] * 6 + [65535] * 12
    f.on_override(0.0, ch)
    assert f.due(0.0) == ch
    f.mark_sent(0.0)
    assert f.due(0.03) is None and f.due(0.05) == ch
    f.mark_sent(0.05)
    assert f.due(0.99) == ch and f.due(1.01) is None          # stale after timeout_s
    assert f.release() == [0] * 6 + [65535] * 12
    with pytest.raises(Brov2Error):
        osend.OverrideForwarder(period_s=2.0, timeout_s=1.0)


def test_override_forwarder_releases_once_when_the_input_stops():
    f = osend.OverrideForwarder(period_s=0.05, timeout_s=1.0)
    assert f.stale_release(5.0) == (None, False)                 # never received: nothing to release
    ch = [1600, 1500, 1400, 1500, 1550, 1500] + [65535] * 12
    f.on_override(0.0, ch)
    assert f.stale_release(0.99) == (None, False)                # fresh
    release = [0] * 6 + [65535] * 12
    assert f.stale_release(1.01) == (release, True)              # the fresh -> stale edge: warn
    assert f.stale_release(1.02) == (release, False)             # not sent yet (link down): again, no warning
    f.mark_released()
    assert f.stale_release(1.03) == (None, False) and f.release() is None   # we hold nothing now
    # the input comes back, then stops again: one more release, one more warning
    f.on_override(2.0, ch)
    assert f.due(2.0) == ch
    assert f.stale_release(3.01) == (release, True)


def test_override_forwarder_after_a_release_from_the_autopilot_sends_no_second_release():
    """thruster_allocation released its channels itself (0 on 1-6): when that stream stops
    there is nothing left to release and nothing to warn about."""
    f = osend.OverrideForwarder(period_s=0.05, timeout_s=1.0)
    f.on_override(0.0, [1600] * 6 + [65535] * 12)
    f.on_override(0.5, [0] * 6 + [65535] * 12)
    assert f.stale_release(2.0) == (None, False)


class _Wire(object):
    """A fake link: records what is sent; ``up`` says whether sends go out."""

    def __init__(self):
        self.sent, self.up, self.stale_warnings, self.stopped, self.now = [], True, 0, False, 0.0

    def send(self, channels):
        if self.up:
            self.sent.append(list(channels))
        return self.up

    def overrides(self, period_s=0.05, timeout_s=1.0):
        return osend.OverrideLink(osend.OverrideForwarder(period_s, timeout_s), self.send, lambda: self.stopped,
                               self._stale, clock=lambda: self.now)

    def _stale(self):
        self.stale_warnings += 1


def _override(yaw_us):
    return [1500, 1500, 1500, yaw_us, 1500, 1500] + [CHAN_NOCHANGE] * 12


def test_override_link_sends_at_once_resends_while_fresh_and_releases_once_when_stale():
    w = _Wire()
    o = w.overrides()
    o.on_override(_override(1600))
    assert w.sent == [_override(1600)]
    with pytest.raises(Brov2Error):
        o.on_override([1500] * 3)                      # wrong length: nothing sent
    assert len(w.sent) == 1
    w.sent.clear()
    for k in range(1, 11):                             # turns 0.1 s apart, period 0.05 s: a re-send each turn
        o.forward(0.1 * k)
    assert w.sent == [_override(1600)] * 10
    w.sent.clear()
    release = [CHAN_RELEASE] * 6 + [CHAN_NOCHANGE] * 12   # only the six channels we took
    w.up = False                                       # link down when the input goes stale
    o.forward(1.2)
    assert w.sent == [] and w.stale_warnings == 1
    w.up = True
    o.forward(1.3)                                     # the release goes out when it can, warned once
    o.forward(1.4)
    assert w.sent == [release] and w.stale_warnings == 1


def test_override_link_after_stop_sends_only_the_shutdown_release():
    w = _Wire()
    o = w.overrides()
    o.on_override(_override(1450))
    w.sent.clear()
    w.stopped = True
    o.on_override(_override(1700))
    o.forward(0.5)
    assert w.sent == []
    sleeps = []
    assert o.release_all(3, 0.02, linked=True, sleep=sleeps.append) == 3
    assert w.sent == [[CHAN_RELEASE] * 6 + [CHAN_NOCHANGE] * 12] * 3 and sleeps == [0.02, 0.02]
    assert o.release_all(3, 0.02, linked=True, sleep=sleeps.append) == 0   # nothing held any more


def test_override_link_sends_no_release_without_a_link_or_without_channels():
    w = _Wire()
    o = w.overrides()
    assert o.release_all(3, 0.0, linked=True) == 0     # took no channel
    o.on_override(_override(1550))
    w.sent.clear()
    assert o.release_all(3, 0.0, linked=False) == 0 and w.sent == []
