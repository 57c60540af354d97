"""Which of the run's respawning nodes restarted or are down: told on /rosout.

The launch file respawns control_law, thruster_allocation, mavlink_bridge, frames and
logger when they die (docs/safety.md "Crashes and failures"); roslaunch says so only on its own
console. ``nodes/mission`` polls each watched node's process id through the ROS master
(``watch_nodes``, every ``watch_period_s``) and :class:`PeerWatch` turns the readings
into messages for /rosout: a node seen running that is gone ("not running"), and a node
that runs again under a new process id ("restarted"). A node never seen (e.g.
mavlink_bridge when the real MAVROS is used) says nothing.
"""
from brov2_hybrid.mission.interfaces import INFO, WARN


class PeerWatch(object):
    """Process ids of named nodes over time -> (level, text) messages, each change once."""

    def __init__(self, names):
        self.names = tuple(names)
        self._pid = {}         # name -> last pid seen running
        self._down = set()     # names reported not running

    def update(self, readings):
        """Take ``{name: pid or None}`` (None: not registered / not answering); return messages."""
        out = []
        for name in self.names:
            pid = readings.get(name)
            last = self._pid.get(name)
            if pid is None:
                if last is not None and name not in self._down:
                    self._down.add(name)
                    out.append((WARN, "%s is not running (pid %d gone); the launch respawns it" % (name, last)))
                continue
            if last is not None and pid != last:
                out.append((WARN, "%s restarted (pid %d -> %d): it died and was respawned" % (name, last, pid)))
            elif name in self._down:
                out.append((INFO, "%s answers again (pid %d)" % (name, pid)))
            self._down.discard(name)
            self._pid[name] = pid
        return out
