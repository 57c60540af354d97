"""Depth from the real MAVROS's topics (brov2_hybrid.mavros_depth)."""
import math

import pytest

from brov2_hybrid.mavros_depth import DepthSelector, depth_from_rel_alt


def test_vfr_hud_altitude_and_rel_alt_are_negative_depth():
    selector = DepthSelector(1.0)
    # ArduSub at 5 m: VFR_HUD.alt = -5 (altitude up, depth down)
    assert selector.offer("vfr_hud", -5.0, 0.0) == 5.0
    assert depth_from_rel_alt(-2.5) == 2.5
    assert depth_from_rel_alt(0.25) == -0.25  # above home (a wave): negative depth, kept


def test_best_fresh_source_wins_and_fallback_after_staleness():
    selector = DepthSelector(1.0)
    assert selector.offer("rel_alt", -4.0, 0.0) == 4.0          # only source so far
    assert selector.current == "rel_alt"
    assert selector.offer("vfr_hud", -5.0, 0.1) == 5.0          # better source takes over
    assert selector.offer("rel_alt", -4.0, 0.2) is None         # suppressed while vfr_hud fresh
    assert selector.offer("rel_alt", -4.0, 1.1) is None         # 1.0 s after vfr_hud: still fresh
    assert selector.offer("rel_alt", -4.1, 1.2) == pytest.approx(4.1)   # vfr_hud stale: fall back
    assert selector.current == "rel_alt"
    assert selector.offer("vfr_hud", -5.2, 1.3) == pytest.approx(5.2)   # and back
    assert selector.current == "vfr_hud"


def test_non_finite_values_are_dropped_and_do_not_count_as_heard():
    selector = DepthSelector(1.0)
    assert selector.offer("vfr_hud", float("nan"), 0.0) is None
    assert selector.silent_for(0.5) == math.inf
    assert selector.offer("rel_alt", -3.0, 0.5) == 3.0          # NaN vfr_hud does not suppress
    assert selector.silent_for(2.5) == pytest.approx(2.0)
