"""The tether's state as the simulators report it: its pull on the vehicle and its nodes, every period.

The simulators (``brov2_sitl``, ``ardusub_sitl`` as ROS nodes, i.e. with ``--lockstep``) hand a
:class:`TetherReporter` their plant (its :class:`~brov2_hybrid.sim.tether_model.Tether`) as vehicle
time goes on; the reporter calls its sink (the ROS shell's publisher of ``brov2_hybrid/TetherState``,
:meth:`~brov2_hybrid.sim.controller_commands.ControllerCommands.tether_sink`) once per period.
Settings: ``params/simulator.yaml`` section ``tether_state``. NED [m, N]; vehicle time [s].
"""
import math
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.params import Section, load_yaml

SECTION = "tether_state"


@dataclass(frozen=True)
class TetherStateConfig:
    """``params/simulator.yaml`` section ``tether_state``."""

    topic: str           # brov2_hybrid/TetherState topic
    period_s: float      # one message per this much vehicle time [s]
    frame_id: str        # the NED world frame the message's positions and force are in


def load_tether_state_config(path=None):
    """:class:`TetherStateConfig` from ``path`` (default ``params/simulator.yaml``)."""
    from brov2_hybrid.sim.config import simulator_file
    path = simulator_file(path)
    s = Section(load_yaml(path), path, SECTION)
    return TetherStateConfig(topic=s.string("topic"), period_s=s.positive("period_s"), frame_id=s.string("frame_id"))


class TetherReporter(object):
    """Calls ``sink(t_s, force_ned_n, nodes_ned_m, vehicle_ned_m)`` at the first :meth:`update` on or
    after each multiple of ``period_s`` [s] of vehicle time from 0: the tether's pull (3,) [N], its
    nodes (n + 1, 3) [m] and the vehicle's body origin (3,) [m], NED (copies).

    ``reports`` counts the calls."""

    def __init__(self, period_s, sink):
        if not (isinstance(period_s, (int, float)) and math.isfinite(period_s) and period_s > 0):
            raise ValueError("tether reporter: period_s must be > 0, got %r" % (period_s,))
        self.period_s = float(period_s)
        self.sink = sink
        self.reports = 0
        self._next_s = 0.0

    @property
    def next_s(self):
        """Vehicle time [s] from which the next :meth:`update` reports (a simulator's next event)."""
        return self._next_s

    def update(self, t_s, plant):
        """Report the tether of ``plant`` (a Plant; its ``tether`` None: nothing to report) if a period
        has begun since the last report."""
        tether = plant.tether
        if tether is None:
            self._next_s = math.inf          # nothing to report, ever: no more events
            return False
        if t_s < self._next_s:
            return False
        self.sink(float(t_s), tether.force_ned().copy(), tether.p.copy(), np.array(plant.eta[:3], dtype=float))
        self.reports += 1
        self._next_s = (math.floor(t_s / self.period_s + 1e-9) + 1.0) * self.period_s
        return True


def reporter_for(controller, sim_options, params_file=None):
    """The :class:`TetherReporter` a simulator run as a ROS node hands its tether to: with a tether
    (``sim_options.tether`` enabled) and a ROS shell (``controller``, with ``tether_sink(topic,
    frame_id)``), one publishing on ``tether_state``'s topic; else None."""
    tether = sim_options.tether
    if controller is None or tether is None or not tether.enabled:
        return None
    config = load_tether_state_config(params_file)
    return TetherReporter(config.period_s, controller.tether_sink(config.topic, config.frame_id))
