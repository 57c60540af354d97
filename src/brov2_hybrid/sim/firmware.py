"""Simulated ArduSub firmware: arming, flight mode, RC input and overrides, failsafe, mixer.

Behaviour follows ArduSub (docs/DESIGN.md sections 5 and 9):

* RC_CHANNELS_OVERRIDE is accepted only from system id SYSID_MYGCS. Per channel
  (1-8): 0 releases the override, 65535 leaves the channel unchanged; channels 9-18:
  0 and 65535 both mean "unchanged" (ArduPilot's GCS_MAVLINK::handle_rc_channels_override).
  An override older than RC_OVERRIDE_TIME seconds is dropped (-1: never; 0: overrides
  disabled). Without an override a channel reads neutral (there is no RC receiver).
* Pilot input is RC_CHANNELS_OVERRIDE or MANUAL_CONTROL from SYSID_MYGCS (ArduSub's
  ``GCS_MAVLINK_Sub::handle_message``). MANUAL_CONTROL is turned into overrides of
  channels 1-11 as ``Sub::transform_manual_control_to_rc_override`` (ArduSub/joystick.cpp)
  does: forward/lateral/yaw = 1500 + 0.4 * gain * (x, y, r), throttle = 1500 + 0.8 * gain *
  JS_THR_GAIN * (z - 500), each truncated to an integer and limited to 1100..1900; pitch,
  roll, camera pan/tilt 1500; lights 1100; video switch 1100. Both inputs write the same
  override slots, so the newest writer of a channel wins and RC_OVERRIDE_TIME applies
  to both. Joystick buttons (BTNn_FUNCTION) are not simulated.
* Pilot-input failsafe (ArduSub/failsafe.cpp, ``Sub::failsafe_pilot_input_check``): when
  no pilot input has been seen for FS_PILOT_TIMEOUT seconds -- counted from boot, armed
  or not; arming does not restart it -- it fires once: STATUSTEXT "Lost manual
  control", controls to neutral and, with FS_PILOT_INPUT = 2, disarm (a no-op when
  already disarmed; 1 = warn only, 0 = off). It stays latched until input resumes, so
  a vehicle armed while latched stays armed until input has come and gone again.
  (ArduSub's SITL builds compile this check out, 4.5 included: it sits inside
  ``#if CONFIG_HAL_BOARD != HAL_BOARD_SITL``; we keep it, as on a real vehicle.)
* GCS failsafe (ArduSub/failsafe.cpp, ``Sub::failsafe_gcs_check``): once a ground station
  has been seen -- a HEARTBEAT from system SYSID_MYGCS (``GCS_MAVLINK::handle_heartbeat``),
  or an RC override or MANUAL_CONTROL from it, which ArduSub counts as one -- and nothing
  from it has arrived for ``gcs_timeout_s`` (2.5 s: FS_GCS_TIMEOUT_MS on ArduSub 4.5;
  newer releases have a parameter FS_GCS_TIMEOUT), STATUSTEXT "MYGCS: 255, heartbeat
  lost" (WARNING; at most every 30 s, and not before 30 s after boot, as ArduSub's
  ``last_gcs_warn_ms`` starts at 0) and, armed, once: FS_GCS_ENABLE 2 disarms (the
  default), 1 warns only, 0 is off; 3 (depth hold) and 4 (surface) ask for a mode this
  simulator refuses, so they disarm, as ArduSub does when that mode change fails. It
  clears when the station is heard again. ArduSub checks at 3.3 Hz (``three_hz_loop``),
  so it acts up to 0.3 s later than this simulator.
* Modes: MANUAL (19) is implemented; every other mode is refused (this simulator has
  no attitude or depth controller). Motors run only when armed AND in MANUAL; otherwise
  every motor gets the neutral PWM.
* MANUAL: RC channels -> u through :mod:`brov2_hybrid.vehicle.rc` (ArduSub's channel map and
  directions), u -> eight PWMs through the selected mixer (Algorithm 2 by default,
  Algorithm 1 with MOT_MIXER = 1), in whole microseconds as the firmware writes its servo
  outputs (:meth:`brov2_hybrid.vehicle.mixers.Mixer.motor_pwm`): Algorithm 1 truncated as stock
  ArduSub's ``AP_Motors6DOF::calc_thrust_to_pwm`` does, Algorithm 2 rounded.
* Command transport delay: pilot input reaches the mixer ``command_delay_s`` after it
  arrives (a :class:`~brov2_hybrid.sim.delay.DelayLine` of the RC input state).

All times are simulated seconds. No sockets here: :mod:`brov2_hybrid.sim.mavlink_protocol`
turns MAVLink messages into calls on :class:`Firmware`. Its parameters live in a
:class:`~brov2_hybrid.sim.param_table.ParamTable`; the MANUAL_CONTROL transform is
:mod:`brov2_hybrid.sim.joystick`.
"""
import logging

from brov2_hybrid.link.ardusub import (CHAN_NOCHANGE, CHAN_RELEASE, MANUAL, MODE_NAMES, MODES, N_OVERRIDE_CHANNELS,
                                       N_RELEASABLE_CHANNELS)
from brov2_hybrid.sim.delay import DelayLine
from brov2_hybrid.vehicle import mixers
from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc
from brov2_hybrid.sim import joystick
from brov2_hybrid.sim.param_table import PARAM_INT8, PARAM_INT16, PARAM_REAL32, ParamDef, ParamTable

LOG = logging.getLogger(__name__)

SUPPORTED_MODES = (MANUAL,)

#: FS_GCS_ENABLE values (ArduSub/defines.h) and the modes 3 and 4 ask for.
FS_GCS_DISABLED, FS_GCS_WARN_ONLY, FS_GCS_DISARM, FS_GCS_HOLD, FS_GCS_SURFACE = range(5)
FS_GCS_MODES = {FS_GCS_HOLD: MODES["ALT_HOLD"], FS_GCS_SURFACE: MODES["SURFACE"]}
GCS_WARN_PERIOD_S = 30.0   # Sub::failsafe_gcs_check: "Send a warning every 30 seconds"

N_RC_CHANNELS = N_OVERRIDE_CHANNELS

MIXER_KINDS = mixers.KINDS  # MOT_MIXER 0, 1

# MAV_SEVERITY
SEVERITY_CRITICAL = 2
SEVERITY_WARNING = 4
SEVERITY_INFO = 6

#: Range [s] of the simulated transport delays (parameters SIM_CMD_DELAY, SIM_TLM_DELAY).
SIM_DELAY_RANGE_S = (0.0, 5.0)


def add_delay_param(params, name, owner, attribute):
    """Add the simulated transport delay ``name`` [s] (REAL32, :data:`SIM_DELAY_RANGE_S`) to
    ``params``: its value is ``owner.<attribute>`` now, and a value set is written there."""
    def apply(value_s):
        setattr(owner, attribute, value_s)
        return None              # accepted
    params.add(ParamDef(name, float(getattr(owner, attribute)), PARAM_REAL32, *SIM_DELAY_RANGE_S), on_change=apply)


class Firmware(object):
    """State machine of the simulated ArduSub.

    Parameters
    ----------
    vehicle : Vehicle
        The vehicle: both mixers (``vehicle.mixer(kind)``), the PWM limits, one motor
        output per thruster.
    config : FirmwareConfig
    rc_map : RCMap, optional
        Defaults to the vehicle's (``vehicle.rc_map``).
    """

    def __init__(self, vehicle, config, rc_map=None):
        self.vehicle = vehicle
        self.config = config
        self.rc_map = rc_map if rc_map is not None else vehicle.rc_map
        self.n_motors = vehicle.n_thrusters
        self.mixers = {kind: vehicle.mixer(kind) for kind in MIXER_KINDS}
        thrusters = vehicle.thrusters
        self.pwm_min_us = int(thrusters.pwm_min_us)
        self.pwm_max_us = int(thrusters.pwm_max_us)
        self.neutral_us = int(thrusters.pwm_neutral_us)
        self._command_line = DelayLine(config.command_delay_s)
        self.params = ParamTable()
        self.params.add(ParamDef("SYSID_MYGCS", float(config.sysid_mygcs), PARAM_INT16, 1, 255, integer=True))
        self.params.add(ParamDef("RC_OVERRIDE_TIME", float(config.rc_override_time_s), PARAM_REAL32, -1, 120),
                        on_change=self._check_override_time)
        self.params.add(ParamDef("FS_PILOT_INPUT", float(config.fs_pilot_input), PARAM_INT8, 0, 2, integer=True))
        self.params.add(ParamDef("FS_PILOT_TIMEOUT", float(config.fs_pilot_timeout_s), PARAM_REAL32, 0.1, 60.0))
        self.params.add(ParamDef("FS_GCS_ENABLE", float(config.fs_gcs_enable), PARAM_INT8, 0, 4, integer=True))
        self.params.add(ParamDef("MOT_MIXER", float(MIXER_KINDS.index(config.mixer)), PARAM_INT8, 0, 1, integer=True),
                        on_change=self._on_mixer)
        self.params.add(ParamDef("JS_GAIN_DEFAULT", float(config.js_gain_default), PARAM_REAL32,
                                 *joystick.JS_GAIN_LIMITS))
        self.params.add(ParamDef("JS_THR_GAIN", float(config.js_thr_gain), PARAM_REAL32, 0.5, 4.0))
        add_delay_param(self.params, "SIM_CMD_DELAY", self._command_line, "delay_s")
        self.mixer_kind = config.mixer
        self.armed = False
        self.mode = MANUAL
        self.failsafe_pilot_input = False
        self.failsafe_gcs = False
        self.gcs_timeout_s = float(config.gcs_timeout_s)
        self._gcs_last_seen_s = None             # never seen: no GCS failsafe (ArduSub)
        self._gcs_last_warn_s = 0.0              # failsafe.last_gcs_warn_ms starts at 0
        # Sub::failsafe.last_pilot_input_ms starts at 0: the count runs from boot.
        self._last_pilot_input_s = 0.0
        self._pending_pilot_input_s = []         # arrivals not yet seen (command delay)
        self._live_values = [0] * N_RC_CHANNELS   # override PWMs as received (0 = none)
        self._live_stamps = [None] * N_RC_CHANNELS
        self._no_input = (tuple(self._live_values), tuple(self._live_stamps))
        self._messages = []                      # (severity, text) to broadcast
        self._cache_key = None
        self._cache_pwm = None
        self.motor_pwm_us = [self.neutral_us] * self.n_motors
        self.counters = {"override_accepted": 0, "override_rejected_sysid": 0,
                         "override_disabled": 0, "pilot_failsafe": 0, "gcs_failsafe": 0,
                         "manual_control_accepted": 0, "manual_control_rejected_sysid": 0}

    # ------------------------------------------------------------------ parameters
    def _check_override_time(self, value):
        if value < 0 and value != -1:
            return "RC_OVERRIDE_TIME: expected -1 (never) or >= 0, got %g" % value
        return None

    def _on_mixer(self, value):
        self.mixer_kind = MIXER_KINDS[int(value)]
        self._cache_key = None
        LOG.info("mixer: %s", self.mixer_kind)
        return None

    @property
    def sysid_mygcs(self):
        """SYSID_MYGCS: the only MAVLink system id whose RC overrides the firmware accepts."""
        return int(self.params.get("SYSID_MYGCS"))

    @property
    def command_delay_s(self):
        """The simulated command transport delay [s] (SIM_CMD_DELAY)."""
        return self._command_line.delay_s

    # ------------------------------------------------------------------ messages
    def _say(self, severity, text):
        LOG.info("STATUSTEXT: %s", text)
        self._messages.append((severity, text))

    def pop_messages(self):
        """STATUSTEXTs (severity, text) raised since the last call."""
        messages, self._messages = self._messages, []
        return messages

    # ------------------------------------------------------------------ inputs
    def handle_rc_override(self, t_s, sysid, channels):
        """RC_CHANNELS_OVERRIDE from ``sysid``: ``channels`` are the 8 or 18 raw values.

        Returns True when accepted (sender is SYSID_MYGCS and overrides are enabled).
        Input from SYSID_MYGCS counts as pilot input even when overrides are disabled
        (ArduSub sets last_pilot_input_ms before GCS_MAVLINK::handle_rc_channels_override).
        """
        if sysid != self.sysid_mygcs:
            self.counters["override_rejected_sysid"] += 1
            return False
        self._pilot_input(t_s)
        self._gcs_seen(t_s)      # GCS_MAVLINK::handle_rc_channels_override, overrides enabled or not
        if self.params.get("RC_OVERRIDE_TIME") == 0:
            self.counters["override_disabled"] += 1
            return False
        updates = {}
        for i, value in enumerate(list(channels)[:N_RC_CHANNELS]):
            value = int(value)
            if value == CHAN_NOCHANGE:
                continue
            if i >= N_RELEASABLE_CHANNELS and value == CHAN_RELEASE:
                continue  # channels 9-18: 0 also means "no change"
            updates[i] = value
        self._set_overrides(t_s, updates)
        self.counters["override_accepted"] += 1
        return True

    def handle_heartbeat(self, t_s, sysid):
        """HEARTBEAT from ``sysid``: SYSID_MYGCS's keeps the GCS failsafe away
        (``GCS_MAVLINK::handle_heartbeat``: any component, any MAV_TYPE)."""
        if sysid == self.sysid_mygcs:
            self._gcs_seen(t_s)

    def _gcs_seen(self, t_s):
        self._gcs_last_seen_s = t_s if self._gcs_last_seen_s is None else max(self._gcs_last_seen_s, t_s)

    @property
    def joystick_gain(self):
        """Joystick gain (Sub::init_joystick: JS_GAIN_DEFAULT limited to 0.1..1)."""
        return joystick.joystick_gain(self.params.get("JS_GAIN_DEFAULT"))

    def manual_control_channels(self, x, y, z, r):
        """MANUAL_CONTROL axes -> override PWMs of channels 1-11 with the current gains
        (:func:`brov2_hybrid.sim.joystick.manual_control_channels`)."""
        return joystick.manual_control_channels(x, y, z, r, self.joystick_gain, self.params.get("JS_THR_GAIN"))

    def handle_manual_control(self, t_s, sysid, x, y, z, r, buttons=0):
        """MANUAL_CONTROL from ``sysid`` (already checked to target this vehicle).

        Returns True when accepted (sender is SYSID_MYGCS). ``buttons`` are counted
        as received but their functions (BTNn_FUNCTION) are not simulated.
        """
        if sysid != self.sysid_mygcs:
            self.counters["manual_control_rejected_sysid"] += 1
            return False
        self._gcs_seen(t_s)      # "a manual control message is considered to be a 'heartbeat'"
        values = self.manual_control_channels(x, y, z, r)
        if self.params.get("RC_OVERRIDE_TIME") != 0:   # RC_Channels::set_override ignores them then
            self._set_overrides(t_s, dict(enumerate(values)))
        self._pilot_input(t_s)
        self.counters["manual_control_accepted"] += 1
        return True

    def _set_overrides(self, t_s, updates):
        """Write override PWMs {channel index: value} received at ``t_s`` (0 releases)."""
        for i, value in updates.items():
            self._live_values[i] = value
            self._live_stamps[i] = t_s if value != CHAN_RELEASE else None
        self._command_line.push(t_s, (tuple(self._live_values), tuple(self._live_stamps)))

    def _pilot_input(self, t_s):
        """Pilot input arrived at ``t_s``; the firmware sees it command_delay_s later."""
        self._pending_pilot_input_s.append(t_s + self._command_line.delay_s)

    def _neutral_controls(self, t_s):
        self._live_values = [0] * N_RC_CHANNELS
        self._live_stamps = [None] * N_RC_CHANNELS
        self._command_line.clear()
        self._command_line.push(t_s, (tuple(self._live_values), tuple(self._live_stamps)))

    def set_armed(self, t_s, arm):
        """Arm or disarm; returns True (always possible in this simulator)."""
        arm = bool(arm)
        if arm and not self.armed:
            # Arming restarts no failsafe timer and clears no latch (ArduSub).
            self._say(SEVERITY_INFO, "Arming motors")
        elif not arm and self.armed:
            self._say(SEVERITY_INFO, "Disarming motors")
        self.armed = arm
        return True

    def set_mode(self, custom_mode):
        """Switch flight mode; returns (accepted, text)."""
        name = MODE_NAMES.get(int(custom_mode), "mode %d" % int(custom_mode))
        if int(custom_mode) not in SUPPORTED_MODES:
            text = "Mode %s not supported by brov2_sitl (MANUAL only)" % name
            self._say(SEVERITY_WARNING, text)
            return False, text
        self.mode = int(custom_mode)
        return True, "Mode %s" % name

    # ------------------------------------------------------------------ outputs
    def _input_state(self, t_s):
        """(values, stamps, firmware time) of the RC input as the firmware sees it now."""
        state = self._command_line.get(t_s)
        if state is None:
            state = self._no_input
        return state[0], state[1], t_s - self._command_line.delay_s

    def rc_channels(self, t_s):
        """The 18 RC input PWMs the firmware uses at ``t_s`` (overrides, else neutral)."""
        values, stamps, t_fw = self._input_state(t_s)
        timeout = self.params.get("RC_OVERRIDE_TIME")
        out = []
        for value, stamp in zip(values, stamps):
            live = value > 0 and stamp is not None and (timeout < 0 or t_fw - stamp < timeout)
            out.append(value if live else self.neutral_us)
        return out

    def u(self, t_s):
        """Normalised pilot command u (6,) from the RC channels (brov2_hybrid.vehicle.rc)."""
        return self.rc_map.u_from_pwm(self.rc_channels(t_s))

    def last_pilot_input_s(self, t_s):
        """When the firmware last saw pilot input, as of ``t_s`` (0 = boot: none yet)."""
        pending = self._pending_pilot_input_s
        while pending and pending[0] <= t_s:
            self._last_pilot_input_s = max(self._last_pilot_input_s, pending.pop(0))
        return self._last_pilot_input_s

    def update(self, t_s):
        """Run the firmware loop at ``t_s``: failsafe, then motors. Returns one PWM per motor."""
        self._check_pilot_failsafe(t_s)
        self._check_gcs_failsafe(t_s)
        if self.armed and self.mode == MANUAL:
            channels = self.rc_channels(t_s)
            key = (self.mixer_kind, tuple(channels))
            if key != self._cache_key:
                pwm = motor_pwm_from_rc(channels, self.rc_map, self.mixers[self.mixer_kind],
                                        self.pwm_min_us, self.pwm_max_us)
                self._cache_key, self._cache_pwm = key, pwm
            self.motor_pwm_us = list(self._cache_pwm)
        else:
            self.motor_pwm_us = [self.neutral_us] * self.n_motors
        return self.motor_pwm_us

    def _check_pilot_failsafe(self, t_s):
        """Sub::failsafe_pilot_input_check: armed or not, fire once, latch until input."""
        action = int(self.params.get("FS_PILOT_INPUT"))
        if action == 0:
            self.failsafe_pilot_input = False
            return
        if t_s < self.last_pilot_input_s(t_s) + self.params.get("FS_PILOT_TIMEOUT"):
            self.failsafe_pilot_input = False
            return
        if self.failsafe_pilot_input:
            return  # only act once
        self.failsafe_pilot_input = True
        self.counters["pilot_failsafe"] += 1
        self._say(SEVERITY_CRITICAL, "Lost manual control")
        self._neutral_controls(t_s)
        if action == 2 and self.armed:
            self.set_armed(t_s, False)

    def _gcs_lost(self, t_s):
        """True when a GCS was seen once and not for gcs_timeout_s."""
        return self._gcs_last_seen_s is not None and t_s - self._gcs_last_seen_s >= self.gcs_timeout_s

    def _check_gcs_failsafe(self, t_s):
        """Sub::failsafe_gcs_check (ArduSub/failsafe.cpp)."""
        action = int(self.params.get("FS_GCS_ENABLE"))
        if action == FS_GCS_DISABLED:
            return
        if not self._gcs_lost(t_s):
            self.failsafe_gcs = False
            return
        if t_s - self._gcs_last_warn_s >= GCS_WARN_PERIOD_S:
            self._gcs_last_warn_s = t_s
            self._say(SEVERITY_WARNING, "MYGCS: %d, heartbeat lost" % self.sysid_mygcs)
        if self.failsafe_gcs or not self.armed:
            return
        self.failsafe_gcs = True
        self.counters["gcs_failsafe"] += 1
        if action == FS_GCS_DISARM:
            self.set_armed(t_s, False)
        elif action in FS_GCS_MODES and not self.set_mode(FS_GCS_MODES[action])[0]:
            self.set_armed(t_s, False)   # GCS_FAILSAFE_HOLDFAILED / _SURFACEFAILED

    def next_event_s(self, t_s):
        """Earliest time after ``t_s`` at which :meth:`update` may act without new input.

        (Delayed input becoming due, an override expiring, the pilot failsafe firing.)
        The simulator need not run the firmware loop between now and then.
        """
        candidates = [self._command_line.next_due_s()]
        values, stamps, _ = self._input_state(t_s)
        timeout = self.params.get("RC_OVERRIDE_TIME")
        delay = self._command_line.delay_s
        if timeout > 0:
            live = [s for v, s in zip(values, stamps) if v > 0 and s is not None]
            later = [s + delay + timeout for s in live if s + delay + timeout > t_s]
            if later:
                candidates.append(min(later))
        last_input = self.last_pilot_input_s(t_s)   # also drops arrivals already seen
        if int(self.params.get("FS_PILOT_INPUT")) != 0 and not self.failsafe_pilot_input:
            candidates.append(last_input + self.params.get("FS_PILOT_TIMEOUT"))
        if self._pending_pilot_input_s:
            candidates.append(self._pending_pilot_input_s[0])
        if int(self.params.get("FS_GCS_ENABLE")) != FS_GCS_DISABLED and self._gcs_last_seen_s is not None:
            if not self._gcs_lost(t_s):
                candidates.append(self._gcs_last_seen_s + self.gcs_timeout_s)
            else:
                candidates.append(self._gcs_last_warn_s + GCS_WARN_PERIOD_S)
        return min(candidates)
