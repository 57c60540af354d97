"""Lockstep: simulated time waits for the controller's command of each control step.

In real-time mode the simulator's time follows the wall clock; on a busy machine the
controller's commands arrive late in simulated time and the results depend on the load.
In lockstep mode (``brov2_sitl --lockstep``, the launch file's default with our simulator)
simulated time is held at every attitude the controller ticks on until that tick's
command has reached the vehicle, as ArduPilot's JSON lockstep holds physics until the
servo packet of a frame arrives:

1. The simulator sends an attitude (ATTITUDE or ATTITUDE_QUATERNION, the one the link
   reads) sampled at vehicle time ``t`` (its ``time_boot_ms``) and holds simulated time.
2. The controller ticks on it; ``thruster_allocation`` publishes the override and a
   ``ThrusterCommand`` stamped ``t`` (the link stamps the attitude with vehicle time).
3. The simulator's ROS shell hands that command to :meth:`LockstepGate.answer`. Once
   the RC override on the link carries the same channel values, the step is answered and
   time goes on until the next attitude.

The override and the ``ThrusterCommand`` travel different ways (MAVLink through the
bridge, a ROS topic), so the step counts as answered when both are there, whichever
came first. A step unanswered for ``timeout_s`` of wall time goes on anyway and is
counted and reported; after ``release_after`` such steps in a row the gate lets the
simulator run free (the controller stopped, or released the vehicle) until a command
arrives again. Before the first command the simulator runs free too (start-up: nothing
to wait for). The simulator never runs faster than its speed-up.

Only the step boundaries follow the control rate: an attitude is held only when it comes
at least half a control period after the last held one, the rule by which
``control_law`` ticks on attitudes.

Settings: section ``lockstep`` of ``params/simulator.yaml`` (:func:`load_lockstep_config`).
The gate is plain Python; :meth:`answer` may be called from another thread (it wakes the
simulator's ``select`` through :meth:`fileno`).
"""
import collections
import logging
import os
import threading
import time
from dataclasses import dataclass

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link.bridge_settings import ATTITUDE_MESSAGES as BY_SOURCE
from brov2_hybrid.node_logic.node_params import load_node_params
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid.sim.config import simulator_file

LOG = logging.getLogger(__name__)

#: The attitude messages a controller may tick on (the bridge's attitude sources).
ATTITUDE_MESSAGES = tuple(sorted(BY_SOURCE.values()))
#: Two vehicle times closer than this are the same instant [s] (time_boot_ms resolution / 2).
SAME_TIME_S = 0.0005


@dataclass
class LockstepConfig:
    """Section ``lockstep`` of ``params/simulator.yaml``."""

    timeout_s: float            # wall seconds a step waits for its command, then goes on (reported)
    release_after: int          # this many unanswered steps in a row: run free until commands return
    ardusub_max_lead_s: float   # sim:=ardusub: the physics' most lead over the newest command [s, vehicle time]


def load_lockstep_config(path=None):
    """Read :class:`LockstepConfig` from the ``lockstep`` section."""
    path = simulator_file(path)
    s = Section(load_yaml(path), path, "lockstep")
    return LockstepConfig(timeout_s=s.positive("timeout_s"), release_after=s.integer("release_after", 1),
                          ardusub_max_lead_s=s.positive("ardusub_max_lead_s"))


class LockstepGate(object):
    """Holds simulated time at each control step until that step's command has arrived.

    Parameters
    ----------
    channels : sequence of int
        RC channels (1-based) of (surge, sway, heave, roll, pitch, yaw): where the
        command's ``rc_pwm_us`` appear in the override.
    control_period_s : float
        The controller's period [s]: an attitude is a step boundary when it is at least
        half of it after the last one.
    config : LockstepConfig
    attitude_message : str
        The attitude message the controller ticks on: ATTITUDE or ATTITUDE_QUATERNION.
    clock : callable
        Monotonic wall clock [s].
    """

    def __init__(self, channels, control_period_s, config, attitude_message="ATTITUDE_QUATERNION",
                 clock=time.monotonic):
        if not control_period_s > 0:
            raise Brov2Error("lockstep: control period must be > 0 s, got %r" % (control_period_s,))
        if attitude_message not in ATTITUDE_MESSAGES:
            raise Brov2Error("lockstep: attitude message: expected one of %s, got %r"
                             % (ATTITUDE_MESSAGES, attitude_message))
        self.attitude_message = attitude_message
        self.channels = tuple(int(c) for c in channels)
        self.min_step_s = 0.5 * float(control_period_s)
        self.config = config
        self.clock = clock
        self.engaged = False
        self.counters = {"steps": 0, "answered": 0, "timeouts": 0, "released": 0}
        self._held = None            # (vehicle time [s], wall time it was held)
        self._last_step_s = None
        self._answers = {}           # vehicle time [s] rounded to ms -> rc_pwm_us tuple
        self._override = None        # channel values of the last accepted override
        self._misses = 0
        self._note = None            # a message from on_override for the next update()
        self._inbox = collections.deque()
        self._lock = threading.Lock()
        self._closed = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    # ------------------------------------------------------------------ any thread
    def answer(self, stamp_s, rc_pwm_us):
        """The controller's command for the attitude of vehicle time ``stamp_s`` [s]:
        ``rc_pwm_us`` on :attr:`channels`. Safe from any thread."""
        with self._lock:
            if self._closed:
                return      # a command that came after the simulator stopped
            self._inbox.append((float(stamp_s), tuple(int(v) for v in rc_pwm_us)))
            try:
                os.write(self._wake_w, b"x")
            except BlockingIOError:
                pass        # the pipe is full: the simulator is awake anyway

    def fileno(self):
        """Readable when :meth:`answer` was called (for ``select``)."""
        return self._wake_r

    # ------------------------------------------------------------------ simulator thread
    def on_attitude_sent(self, t_s):
        """An attitude sampled at vehicle time ``t_s`` [s] left the vehicle: hold time here
        when it is a step boundary and the gate is engaged."""
        if not self.engaged or self._held is not None:
            return
        if self._last_step_s is not None and t_s - self._last_step_s < self.min_step_s - SAME_TIME_S:
            return
        self._last_step_s = t_s
        self._held = (float(t_s), self.clock())
        self.counters["steps"] += 1

    def on_override(self, channels):
        """The vehicle accepted an RC override with these raw values (channel k at index k - 1)."""
        values = list(channels)
        self._override = tuple(int(values[c - 1]) if c - 1 < len(values) else 0 for c in self.channels)
        if self.engaged and not any(self._override):
            # every channel of ours released (0): the controller handed the vehicle back
            self.engaged = False
            self._held = None
            self._last_step_s = None
            self.counters["released"] += 1
            self._note = "lockstep: the controller released the RC override; running free until commands come again"

    def engage(self):
        """Wait for the controller from the next attitude on, without waiting for a first command
        (a controller known to answer every attitude from the start, e.g. in tests)."""
        self.engaged = True
        self._misses = 0

    @property
    def holding(self):
        """True while simulated time must not advance."""
        return self._held is not None

    def update(self):
        """Take the commands that arrived and release the held step when it is answered or timed
        out; returns a :class:`Note` to log (or None)."""
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        with self._lock:
            arrived, self._inbox = list(self._inbox), collections.deque()
        message, self._note = self._note, None
        for stamp_s, pwm in arrived:
            self._answers[_key(stamp_s)] = pwm
            if not self.engaged:
                self.engage()
                message = "lockstep: first command received; simulated time now waits for each control step"
        if len(self._answers) > 64:
            for key in sorted(self._answers)[:-32]:
                del self._answers[key]
        if self._held is None:
            return _note(message)
        t_s, since = self._held
        expected = self._answers.get(_key(t_s))
        if expected is not None and expected == self._override:
            self._held = None
            self._misses = 0
            self.counters["answered"] += 1
            return _note(message)
        if self.clock() - since < self.config.timeout_s:
            return _note(message)
        self._held = None
        self._misses += 1
        self.counters["timeouts"] += 1
        why = ("no command for it" if expected is None else
               "its command %s is not what the override carries (%s)" % (list(expected), self._override))
        message = ("lockstep: step at vehicle time %.3f s went on after %.1f s of wall time: %s (%d so far)"
                   % (t_s, self.config.timeout_s, why, self.counters["timeouts"]))
        if self._misses >= self.config.release_after:
            self.engaged = False
            self._last_step_s = None
            self.counters["released"] += 1
            message += ("; %d steps in a row unanswered: running free until commands come again"
                        % self._misses)
        return Note(message, warning=True)

    def wait_s(self):
        """Longest wall wait before :meth:`update` must run again (the held step's time-out)."""
        if self._held is None:
            return float("inf")
        return max(0.0, self._held[1] + self.config.timeout_s - self.clock())

    def close(self):
        """Close the wake-up pipe; commands that come later are dropped."""
        with self._lock:
            self._closed = True
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass


class Note(collections.namedtuple("Note", "text warning")):
    """What the gate has to say: ``text``, and whether it is a ``warning`` (a step went on
    without its command) or news (engaged, released)."""


def _note(text):
    return Note(text, warning=False) if text else None


def _key(t_s):
    return int(round(t_s * 1000.0))


@dataclass
class ControllerLink:
    """What the gate needs to know of the controller: its period, the attitude it ticks on and
    the topic of its commands (the nodes' settings in ``params/autopilot.yaml``)."""

    control_period_s: float
    attitude_message: str
    command_topic: str


def controller_link(get_param, path=None):
    """:class:`ControllerLink` from the nodes' parameters: ``get_param(name, default)`` reads the
    parameter server (e.g. ``rospy.get_param``); ``params/autopilot.yaml`` gives the defaults."""
    def value(node, key):
        return get_param("/%s/%s" % (node, key), load_node_params(node, path=path)[key])

    rate_hz = value("control_law", "rate_hz")
    if isinstance(rate_hz, bool) or not isinstance(rate_hz, (int, float)) or not rate_hz > 0:
        raise Brov2Error("/control_law/rate_hz: expected a rate > 0 [Hz], got %r" % (rate_hz,))
    source = value("mavlink_bridge", "attitude_source")
    if source not in BY_SOURCE:
        raise Brov2Error("/mavlink_bridge/attitude_source: expected one of %s, got %r" % (sorted(BY_SOURCE), source))
    return ControllerLink(1.0 / float(rate_hz), BY_SOURCE[source], str(value("thruster_allocation", "thruster_topic")))
