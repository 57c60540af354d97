"""Depth [m, positive down] from what the real MAVROS 1.x publishes for ArduSub.

``mavlink_bridge`` publishes ``/brov2/depth_m`` itself; with ``use_mavros:=true``
``nodes/mavros_depth`` publishes it from MAVROS topics, best source first:

``vfr_hud``
    ``/mavros/vfr_hud`` (mavros_msgs/VFR_HUD, plugin ``vfr_hud.cpp``: ``altitude`` =
    MAVLink VFR_HUD.alt). ArduSub fills it with ``GCS_MAVLINK_Sub::vfr_hud_alt()`` =
    ``sub.get_alt_msl()``, the pressure-sensor depth as a negative altitude, so
    depth = -altitude (:func:`brov2_hybrid.bridge_core.depth_from_vfr_hud`, the
    bridge's own equation). Our simulator sends the same.
``rel_alt``
    ``/mavros/global_position/rel_alt`` (std_msgs/Float64, plugin
    ``global_position.cpp``: GLOBAL_POSITION_INT.relative_alt / 1000, altitude above
    home [m]). depth = -rel_alt, which is the depth only when home was set at the
    surface (ArduSub sets home on arming), hence second.

Not used: ``/mavros/imu/static_pressure`` comes from SCALED_PRESSURE, ArduSub's
first barometer (inside the electronics enclosure); the Bar30 depth sensor is
reported in SCALED_PRESSURE2, which MAVROS 1.x does not publish.
"""
import math

from brov2_hybrid.bridge_core import depth_from_vfr_hud

#: Depth sources, best first.
SOURCES = ("vfr_hud", "rel_alt")


def depth_from_rel_alt(rel_alt_m):
    """Depth [m, positive down] from MAVROS rel_alt [m, altitude above home, up]."""
    return -float(rel_alt_m)


DEPTH_FROM = {"vfr_hud": depth_from_vfr_hud, "rel_alt": depth_from_rel_alt}


class DepthSelector(object):
    """Publish the depth of the best source heard within ``stale_after_s``.

    ``offer(source, value, t_s)`` takes a raw source value (VFR_HUD.altitude or
    rel_alt [m]) at time ``t_s`` [s, any monotonic clock] and returns the depth to
    publish [m, positive down], or None when a better source is fresh (heard within
    ``stale_after_s``) or the value is not finite. ``current`` is the source last
    published from ('' before any).
    """

    def __init__(self, stale_after_s, sources=SOURCES):
        self.stale_after_s = float(stale_after_s)
        self.rank = {name: i for i, name in enumerate(sources)}
        self.last_heard = {}
        self.current = ""

    def offer(self, source, value, t_s):
        depth = DEPTH_FROM[source](value)
        if not math.isfinite(depth):
            return None
        self.last_heard[source] = t_s
        for better, rank in self.rank.items():
            if rank < self.rank[source] and t_s - self.last_heard.get(better, -math.inf) <= self.stale_after_s:
                return None
        self.current = source
        return depth

    def silent_for(self, t_s):
        """Seconds since any source was heard (inf before the first)."""
        if not self.last_heard:
            return math.inf
        return t_s - max(self.last_heard.values())
