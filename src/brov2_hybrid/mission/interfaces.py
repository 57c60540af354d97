"""What the mission sequence exchanges with the outside: its settings, the vehicle's
state and replies, the log levels, and :class:`MissionIO` -- the clock, sleeping, the
vehicle's services, the publications and the log.

:class:`~brov2_hybrid.mission.sequence.Mission` uses only these; ``nodes/mission``
implements :class:`MissionIO` on ROS (MAVROS services, latched topics, rosout) and the
tests on a simulated clock. Times are wall seconds.
"""
from dataclasses import dataclass

from brov2_hybrid.placement import PLACEMENTS

#: Log levels of :meth:`MissionIO.log` (also used by :mod:`~brov2_hybrid.mission.peer_watch`).
INFO, WARN, ERROR, FATAL = "info", "warn", "error", "fatal"


@dataclass
class MissionSettings:
    """The sequence's settings (``params/autopilot.yaml`` section ``mission``).

    ``state_topic`` and ``arming_service`` only name things in messages.
    """

    mode: str
    connect_timeout_s: float
    command_timeout_s: float
    end_hold_s: float
    disarm_at_end: bool
    exit_at_end: bool
    mode_attempts: int
    arm_timeout_s: float
    arm_retry_wait_s: float
    release_wait_s: float
    firmware: str
    firmware_timeout_s: float
    #: auto: the timeout stops the run only once the detector has judged this many motor-output samples
    #: (a mission starved by a busy machine sees few in the vehicle's time: it waits for them)
    firmware_min_samples: int = 20
    max_override_time_s: float = 1.0
    telemetry_timeout_s: float = 0.0    # armed this long without an attitude / motor outputs: stop (0: no check)
    state_topic: str = "/mavros/state"
    arming_service: str = "/mavros/cmd/arming"
    placement: str = "topside"          # onboard: the law runs in the vehicle's Lua script (docs/onboard.md)
    script_param: str = ""              # onboard: the script's parameter that tells it runs (HYB_OMEGA_D)
    onboard_script_timeout_s: float = 30.0   # onboard: wait this long for that parameter [wall s]
    onboard_active_timeout_s: float = 6.0    # onboard: engaged this long without the script's ACTIVE -> stop

    @classmethod
    def from_params(cls, p, firmware_choices):
        """Read and check the settings from a :class:`~brov2_hybrid.node_logic.node_params.ParamReader`."""
        return cls(mode=p.string("mode"), connect_timeout_s=p.positive("connect_timeout_s"),
                   command_timeout_s=p.positive("command_timeout_s"), end_hold_s=p.number("end_hold_s", 0.0),
                   disarm_at_end=p.boolean("disarm_at_end"), exit_at_end=p.boolean("exit_at_end"),
                   mode_attempts=p.integer("mode_attempts", 1, 100), arm_timeout_s=p.positive("arm_timeout_s"),
                   arm_retry_wait_s=p.number("arm_retry_wait_s", 0.0),
                   release_wait_s=p.number("release_wait_s", 0.0),
                   firmware=p.string("firmware", choices=firmware_choices),
                   firmware_timeout_s=p.positive("firmware_timeout_s"),
                   firmware_min_samples=p.integer("firmware_min_samples", 1, 100000),
                   max_override_time_s=p.positive("max_override_time_s"),
                   telemetry_timeout_s=p.number("telemetry_timeout_s", 0.0),
                   state_topic=p.string("state_topic"), arming_service=p.string("arming_service"),
                   placement=p.string("placement", choices=PLACEMENTS),
                   onboard_script_timeout_s=p.positive("onboard_script_timeout_s"),
                   onboard_active_timeout_s=p.positive("onboard_active_timeout_s"))


@dataclass
class FcuState:
    """What the FCU reports (MAVROS State): link up, armed, flight mode name."""

    connected: bool = False
    armed: bool = False
    mode: str = ""


@dataclass
class CommandReply:
    """The vehicle's answer to an arming request (MAVROS CommandBool)."""

    success: bool
    result: int = 0


class MissionIO(object):
    """What the sequence needs from outside; ``nodes/mission`` implements it on ROS."""

    def now_s(self):
        """Monotonic wall time [s]."""
        raise NotImplementedError

    def vehicle_now_s(self):
        """The vehicle's clock [s]: what the firmware check times (its vote window and timeout). On ROS the
        ROS time: the simulator's lockstep clock under /use_sim_time, which a busy machine slows down with
        everything the vehicle does, and wall time on a real vehicle. Default: :meth:`now_s`."""
        return self.now_s()

    def sleep(self, seconds):
        """Wait ``seconds`` [wall s] (returns early only on shutdown)."""
        raise NotImplementedError

    def is_shutdown(self):
        """True once the process is asked to stop."""
        raise NotImplementedError

    def set_mode(self, mode):
        """Request flight mode ``mode`` (the answer is read from the vehicle state)."""
        raise NotImplementedError

    def arm(self, armed):
        """Request arming (True) or disarming (False): a :class:`CommandReply`, or None
        when the request got no answer (the implementation logs why)."""
        raise NotImplementedError

    def get_param(self, name):
        """The vehicle's parameter ``name`` (a float), or None when it could not be read
        (the implementation logs why)."""
        raise NotImplementedError

    def publish_engaged(self, engaged):
        """Tell the autopilot the dive is on (True: the dive input starts) or off (False)."""
        raise NotImplementedError

    def publish_release(self, release):
        """Ask the autopilot to release the RC override (True) or take it again (False)."""
        raise NotImplementedError

    def publish_firmware(self, firmware):
        """Tell the autopilot the vehicle's firmware (``"stock"`` or ``"quantitative"``), latched."""
        raise NotImplementedError

    def log(self, level, text):
        """``level``: one of INFO, WARN, ERROR, FATAL."""
        raise NotImplementedError
