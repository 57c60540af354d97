"""Depth from the real MAVROS's topics (brov2_hybrid.link.mavros_depth)."""
import math

import pytest

from brov2_hybrid.link.mavros_depth import SOURCES, DepthSelector, depth_from_rel_alt


def test_rel_alt_is_negative_depth():
    selector = DepthSelector(1.0)
    # ArduSub at 5 m: GLOBAL_POSITION_INT.relative_alt = -5000 mm, MAVROS rel_alt = -5.0 m
    assert selector.offer("rel_alt", -5.0, 0.0) == 5.0
    assert selector.current == "rel_alt"
    assert depth_from_rel_alt(-2.5) == 2.5
    assert depth_from_rel_alt(0.25) == -0.25  # above home (a wave): negative depth, kept


def test_vfr_hud_is_not_a_depth_source():
    """VFR_HUD.alt is the altitude above sea level (GCS_MAVLINK::vfr_hud_alt): 579 m at 5 m
    depth in a lake at 584 m. It must not be taken for depth."""
    assert SOURCES == ("rel_alt",)
    with pytest.raises(KeyError, match="vfr_hud"):
        DepthSelector(1.0, sources=("vfr_hud", "rel_alt"))


def test_best_fresh_source_wins_and_fallback_after_staleness():
    """The ranking machinery (one source today), with a second, worse source."""
    selector = DepthSelector(1.0, sources=("rel_alt", "backup"),
                             depth_from={"rel_alt": depth_from_rel_alt, "backup": depth_from_rel_alt})
    assert selector.offer("backup", -4.0, 0.0) == 4.0           # only source so far
    assert selector.current == "backup"
    assert selector.offer("rel_alt", -5.0, 0.1) == 5.0          # better source takes over
    assert selector.offer("backup", -4.0, 0.2) is None          # suppressed while rel_alt fresh
    assert selector.offer("backup", -4.0, 1.1) is None          # 1.0 s after rel_alt: still fresh
    assert selector.offer("backup", -4.1, 1.2) == pytest.approx(4.1)   # rel_alt stale: fall back
    assert selector.current == "backup"
    assert selector.offer("rel_alt", -5.2, 1.3) == pytest.approx(5.2)  # and back
    assert selector.current == "rel_alt"


def test_non_finite_values_are_dropped_and_do_not_count_as_heard():
    selector = DepthSelector(1.0)
    assert selector.offer("rel_alt", float("nan"), 0.0) is None
    assert selector.silent_for(0.5) == math.inf
    assert selector.offer("rel_alt", -3.0, 0.5) == 3.0
    assert selector.silent_for(2.5) == pytest.approx(2.0)
