"""Depth [m, positive down] from what the real MAVROS 1.x publishes for ArduSub.

``mavlink_bridge`` publishes ``/brov2/depth_m`` itself; with ``use_mavros:=true``
``nodes/mavros_depth`` publishes it from MAVROS topics (:data:`SOURCES`, best first; the
machinery ranks several, one is enough today):

``rel_alt``
    ``/mavros/global_position/rel_alt`` (std_msgs/Float64, plugin
    ``global_position.cpp``: GLOBAL_POSITION_INT.relative_alt / 1000, height above
    home [m]). depth = -rel_alt, the bridge's own source
    (:func:`brov2_hybrid.link.mavros_conversions.depth_from_relative_alt`): ArduSub keeps home at
    the water surface (``Sub::set_home_to_current_location``, ArduSub/commands.cpp,
    subtracts the pressure-sensor depth from the home altitude) and, before home is
    set, sends the barometric altitude against the pressure calibrated at boot
    (``AP_AHRS::get_relative_position_D_home``), so it is -depth on every vehicle.

Not used: ``/mavros/vfr_hud`` ``altitude`` (MAVLink VFR_HUD.alt) is
``GCS_MAVLINK::vfr_hud_alt`` (libraries/GCS_MAVLink/GCS_Common.cpp), the altitude above
sea level: -depth only where home is at altitude 0 (ArduSub SITL at a 584 m home
reported -579 m at 5 m depth). ``/mavros/imu/static_pressure`` comes from SCALED_PRESSURE, ArduSub's
first barometer (inside the electronics enclosure); the Bar30 depth sensor is
reported in SCALED_PRESSURE2, which MAVROS 1.x does not publish.
"""
import math

#: Depth sources, best first.
SOURCES = ("rel_alt",)


def depth_from_rel_alt(rel_alt_m):
    """Depth [m, positive down] from MAVROS rel_alt [m, height above home (the surface), up]."""
    return -float(rel_alt_m)


DEPTH_FROM = {"rel_alt": depth_from_rel_alt}


class DepthSelector(object):
    """Publish the depth of the best source heard within ``stale_after_s``.

    ``offer(source, value, t_s)`` takes a raw source value (rel_alt [m]) at time ``t_s``
    [s, any monotonic clock] and returns the depth to publish [m, positive down], or None
    when a better source is fresh (heard within ``stale_after_s``) or the value is not
    finite. ``current`` is the source last published from ('' before any). ``depth_from``
    maps each source name to its equation (default :data:`DEPTH_FROM`).
    """

    def __init__(self, stale_after_s, sources=SOURCES, depth_from=None):
        self.depth_from = dict(DEPTH_FROM if depth_from is None else depth_from)
        unknown = [s for s in sources if s not in self.depth_from]
        if unknown:
            raise KeyError("depth sources: unknown %s (known: %s)" % (unknown, sorted(self.depth_from)))
        self.stale_after_s = float(stale_after_s)
        self.rank = {name: i for i, name in enumerate(sources)}
        self.last_heard = {}
        self.current = ""

    def offer(self, source, value, t_s):
        """Depth [m, positive down] to publish from ``value`` of ``source`` heard at ``t_s`` [s], or None.

        None when the depth is not finite (the source then does not count as heard) or a better
        source was heard within ``stale_after_s``. Raises KeyError for a source without an equation."""
        depth = self.depth_from[source](value)
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
