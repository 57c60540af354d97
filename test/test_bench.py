"""Bench statistics (brov2_hybrid.bench)."""
import math

import pytest

from brov2_hybrid.bench.core import percentile_summary


def test_percentile_summary():
    s = percentile_summary(range(1, 101))
    assert s["n"] == 100 and s["p50"] == pytest.approx(50.5) and s["max"] == 100
    assert math.isnan(percentile_summary([])["p99"])
