"""Transport delay line (sample-and-hold) used for command and telemetry latency."""
import math

import pytest
from hypothesis import given, settings, strategies as st

from brov2_hybrid.sim.delay import DelayLine
from brov2_hybrid.errors import Brov2Error


def test_zero_delay_returns_the_latest_sample():
    line = DelayLine(0.0)
    assert line.get(0.0) is None
    line.push(0.0, "a")
    line.push(1.0, "b")
    assert line.get(1.0) == "b"


def test_sample_is_due_exactly_after_the_delay():
    line = DelayLine(0.3)
    line.push(0.1, "a")
    line.push(0.2, "b")
    assert line.get(0.39) is None
    assert line.get(0.4) == "a"   # 0.1 + 0.3 despite rounding of 0.4 - 0.3
    assert line.get(0.45) == "a"
    assert line.get(0.5) == "b"
    assert line.get(10.0) == "b"  # held
    assert line.next_due_s() == math.inf


def test_increasing_the_delay_holds_the_last_value():
    line = DelayLine(0.1)
    for k in range(10):
        line.push(0.1 * k, k)
    assert line.get(0.5) == 4
    line.delay_s = 0.3
    assert line.get(0.55) == 4  # 0.25 would be due but 4 was already delivered: hold it
    assert line.get(0.8) == 5


def test_pop_due_delivers_every_sample_once_in_order():
    line = DelayLine(0.2)
    for k in range(5):
        line.push(0.01 * k, k)
    assert line.next_due_s() == pytest.approx(0.2)
    assert [v for _, v in line.pop_due(0.215)] == [0, 1]
    assert [v for _, v in line.pop_due(0.215)] == []
    assert [v for _, v in line.pop_due(1.0)] == [2, 3, 4]
    assert len(line) == 0 and line.get(1.0) == 4


def test_errors_name_the_problem():
    with pytest.raises(Brov2Error, match="delay_s"):
        DelayLine(-0.1)
    line = DelayLine(0.1)
    with pytest.raises(Brov2Error, match="delay_s"):
        line.delay_s = float("nan")
    line.push(1.0, "a")
    with pytest.raises(Brov2Error, match="backwards"):
        line.push(0.5, "b")


@settings(max_examples=80, deadline=None)
@given(st.floats(0.0, 0.5), st.lists(st.floats(0.0, 0.05), min_size=1, max_size=40),
       st.lists(st.floats(0.0, 0.05), min_size=1, max_size=40))
def test_get_matches_a_brute_force_search(delay, push_gaps, query_gaps):
    """get(t) == newest value pushed at time <= t - delay (queries in order)."""
    line = DelayLine(delay)
    times = []
    t = 0.0
    for k, gap in enumerate(push_gaps):
        t += gap
        line.push(t, k)
        times.append(t)
    q = 0.0
    for gap in query_gaps:
        q += gap * 4
        eligible = [k for k, tk in enumerate(times) if tk <= q - delay + 1e-9]
        assert line.get(q) == (eligible[-1] if eligible else None)
