"""A scripted vehicle on a simulated wall clock for the mission tests (test_mission.py,
test_mission_checks.py): it turns the overrides it receives into motor outputs through ArduSub's
manual chain (mixers.motor_pwm_from_rc, as the simulator's firmware) with the mixer of the firmware
it runs; the real OverrideVerifier and FirmwareDetector judge them.
"""
import math

import numpy as np
import pytest

from brov2_hybrid.mission import sequence as ms
from brov2_hybrid.mission import interfaces as mio
from brov2_hybrid.vehicle.firmware_detector import FirmwareDetector
from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc
from brov2_hybrid.link.override import OverrideVerifier
from brov2_hybrid.vehicle.rc import load_rc_map

STEP_S = 0.02           # the scripted vehicle's and autopilot's period [s]


@pytest.fixture(scope="module")
def rc_map():
    return load_rc_map()


def mission_settings(**changes):
    values = dict(mode="MANUAL", connect_timeout_s=30.0, max_override_time_s=1.0, command_timeout_s=5.0, end_hold_s=1.0,
                  disarm_at_end=True, exit_at_end=True, mode_attempts=3, arm_timeout_s=20.0, arm_retry_wait_s=1.0,
                  release_wait_s=0.3, firmware="auto", firmware_timeout_s=6.0)
    values.update(changes)
    return mio.MissionSettings(**values)


class ScriptedFcu(mio.MissionIO):
    """A vehicle and autopilot on a simulated clock, advanced by the mission's sleeps.

    It connects at ``connect_at_s``, enters a requested mode ``mode_delay_s`` later
    (unless ``accepts_mode`` is false), answers arming requests with ``arm_replies`` in
    turn (then success) and is armed 0.1 s after a successful one (unless
    ``arm_takes_effect`` is false). Before ``prearm_until_s`` it refuses arming as ArduSub
    does after boot: result 4 (MAV_RESULT_FAILED) and a STATUSTEXT ``prearm_text``. Armed, the autopilot sends a small random override
    each step and the vehicle outputs what its ``firmware`` makes of it ("ignores": motors
    stay neutral, a wrong SYSID_MYGCS; "unknown": twice stock's deflection). The dive
    ends ``dive_s`` after engagement.
    """

    def __init__(self, vehicle, rc_map, firmware="quantitative", connect_at_s=0.5, mode_delay_s=0.2,
                 accepts_mode=True, arm_replies=(), arm_takes_effect=True, dive_s=10.0, disarm_at_s=math.inf,
                 prearm_until_s=0.0, prearm_text="PreArm: Battery 1 unhealthy", override_time_s=1.0,
                 sends=("attitude", "outputs"), vehicle_clock_rate=1.0, outputs_every=1):
        self.vehicle, self.rc_map, self.firmware = vehicle, rc_map, firmware
        self.connect_at_s, self.mode_delay_s, self.accepts_mode = connect_at_s, mode_delay_s, accepts_mode
        self.arm_replies, self.arm_takes_effect = list(arm_replies), arm_takes_effect
        self.dive_s, self.disarm_at_s = dive_s, disarm_at_s
        self.prearm_until_s, self.prearm_text = prearm_until_s, prearm_text
        self.params = {"RC_OVERRIDE_TIME": override_time_s}     # None: the read fails
        self.sends = sends              # the streams the vehicle sends: attitude, outputs
        self.vehicle_clock_rate = vehicle_clock_rate    # vehicle seconds per wall second (a busy lockstep SITL: < 1)
        self.outputs_every = outputs_every  # the mission handles every n-th motor-output sample (a starved node)
        self._armed_steps = 0
        self.t = 0.0
        self.shutdown_at_s = math.inf
        self.connected, self.armed, self.mode = False, False, "STABILIZE"
        self._pending = []              # (due s, attribute, value)
        self.events = []                # (t, what, value): requests and publications
        self.logs = []                  # (level, text)
        self.engaged_at_s = None
        self.dives_done = 0
        self.rng = np.random.default_rng(7)
        self.mission = None

    # MissionIO
    def now_s(self):
        return self.t

    def vehicle_now_s(self):
        return self.vehicle_clock_rate * self.t

    def is_shutdown(self):
        return self.t >= self.shutdown_at_s

    def sleep(self, seconds):
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t = min(self.t + STEP_S, end)
            self._step()
        self.t = max(self.t, end)           # a sleep shorter than 1 ns still passes time

    def set_mode(self, mode):
        self.events.append((self.t, "set_mode", mode))
        if self.accepts_mode:
            self._pending.append((self.t + self.mode_delay_s, "mode", mode))

    def arm(self, armed):
        self.events.append((self.t, "arm", armed))
        if armed and self.t < self.prearm_until_s:
            self.mission.on_statustext(6, "Arming motors")              # said, but not a reason (no prefix, INFO)
            self.mission.on_statustext(6, "an unrelated INFO text")
            self.mission.on_statustext(2, self.prearm_text)             # MAV_SEVERITY_CRITICAL, as check_failed
            return mio.CommandReply(False, 4)
        reply = self.arm_replies.pop(0) if self.arm_replies else mio.CommandReply(True, 0)
        if reply is not None and reply.success and self.arm_takes_effect:
            self._pending.append((self.t + 0.1, "armed", armed))
        return reply

    def get_param(self, name):
        self.params_read = getattr(self, "params_read", []) + [(self.t, name)]
        return self.params.get(name)

    def publish_engaged(self, engaged):
        self.events.append((self.t, "engaged", engaged))
        self.engaged_at_s = self.t if engaged else None

    def publish_release(self, release):
        self.events.append((self.t, "release", release))

    def publish_firmware(self, firmware):
        self.events.append((self.t, "firmware", firmware))

    def log(self, level, text):
        self.logs.append((level, text))

    # the vehicle
    def _outputs(self, channels):
        if self.firmware == "ignores":
            return [1500] * 8
        lo, hi = self.vehicle.thrusters.pwm_min_us, self.vehicle.thrusters.pwm_max_us
        mixer = self.vehicle.mixer("stock" if self.firmware == "unknown" else self.firmware)
        pwm = motor_pwm_from_rc(channels, self.rc_map, mixer, lo, hi)
        return [1500 + 2 * (p - 1500) for p in pwm] if self.firmware == "unknown" else pwm

    def _step(self):
        if not self.connected and self.t >= self.connect_at_s:
            self.connected = True
        for item in [p for p in self._pending if p[0] <= self.t]:
            self._pending.remove(item)
            setattr(self, item[1], item[2])
        if self.t >= self.disarm_at_s:
            self.armed = False
        self.mission.on_state(self.connected, self.armed, self.mode)
        if self.armed:
            channels = self.rc_map.channel_array_from_u(self.rng.uniform(-0.2, 0.2, 6), 18, 65535)
            self.mission.on_override(channels)
            if "attitude" in self.sends:
                self.mission.on_attitude()
            self._armed_steps += 1
            if "outputs" in self.sends and self._armed_steps % self.outputs_every == 0:
                self.mission.on_outputs(self._outputs(channels))
        if self.engaged_at_s is not None and self.t >= self.engaged_at_s + self.dive_s:
            self.dives_done += 1
            self.engaged_at_s = None
            self.mission.on_dive_done(True)

    # reading the record
    def published(self, *whats):
        return [(what, value) for _, what, value in self.events if what in whats]

    def time_of(self, what, value):
        return next(t for t, w, v in self.events if w == what and v == value)

    def texts(self, level):
        return [text for lvl, text in self.logs if lvl == level]


def make_mission(vehicle, rc_map, settings=None, **fcu):
    io = ScriptedFcu(vehicle, rc_map, **fcu)
    verifier = OverrideVerifier(3.0, 20, rc_map.neutral_us)
    detector = FirmwareDetector(vehicle, rc_map, 3.0, 3, 1.0)
    io.mission = ms.Mission(settings or mission_settings(), verifier, detector, io)
    return io.mission, io


# ---------------------------------------------------------------- a dive flown to its end
