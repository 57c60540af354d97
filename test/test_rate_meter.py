"""Message rate from stamps (brov2_hybrid.node_logic.rate_meter)."""
import pytest

from brov2_hybrid.node_logic.rate_meter import RateMeter


def test_rate_meter_measures_stamps_and_decays():
    m = RateMeter(2.0)
    for k in range(101):
        m.add(10.0 + k * 0.02)              # 50 Hz for 2 s
    assert m.rate_hz() == pytest.approx(50.0)
    assert m.rate_hz(now_s=12.0 + 1.0) == pytest.approx(50.0 * 50 / 50, rel=0.05)   # half the window left
    assert m.rate_hz(now_s=20.0) == 0.0     # stream stopped: nothing in the window


def test_rate_meter_irregular_stamps_and_restart():
    m = RateMeter(5.0)
    for t in (0.0, 0.1, 0.15, 0.4):         # 3 intervals over 0.4 s
        m.add(t)
    assert m.rate_hz() == pytest.approx(3 / 0.4)
    m.add(0.4)                               # duplicate ignored
    assert m.rate_hz() == pytest.approx(3 / 0.4)
    m.add(-100.0)                            # vehicle clock restarted far back: start over
    m.add(-99.9)
    assert m.rate_hz() == pytest.approx(10.0)
