"""The mission sequence: arm the vehicle for a dive, check the RC override reaches it,
tell its firmware, end the dive. Plain Python; ``nodes/mission`` is the rospy shell.

1. wait for the vehicle link (``connect_timeout_s``), read the vehicle's RC_OVERRIDE_TIME
   and warn when it is longer than ``max_override_time_s`` (:meth:`Mission.check_override_time`:
   nothing releases our override when our link process is killed; the vehicle holds it
   that long), set the mode (``mode_attempts``
   requests) and arm: requests ``arm_retry_wait_s`` apart until armed or
   ``arm_timeout_s`` has passed (ArduSub refuses arming for a second or two after boot,
   "PreArm: ..."), each failure told with what the vehicle said (its STATUSTEXTs since
   the request, :meth:`Mission.on_statustext`); each change is confirmed by the vehicle
   state within ``command_timeout_s``;
2. engage (the dive input starts on it) -- at once with a configured firmware, or once
   the firmware is told with ``firmware`` auto;
3. while the dive runs: the :class:`~brov2_hybrid.link.override.OverrideVerifier` must see
   the motors follow a non-neutral override (else stop, naming SYSID_MYGCS and system id
   255); the :class:`~brov2_hybrid.vehicle.firmware_detector.FirmwareDetector` tells the firmware
   from the same pairs, latched once (published), and a configured firmware the vehicle
   does not run stops the run, as does auto without a verdict within
   ``firmware_timeout_s`` armed; an attitude or motor outputs that never arrive within
   ``telemetry_timeout_s`` armed and connected stop it as "no telemetry" (the vehicle
   sends no streams: nothing was requested), not as an ignored override;
With ``placement`` onboard (the law runs in the vehicle's Lua script, docs/onboard.md) there is no RC
override to check or firmware to tell (:mod:`~brov2_hybrid.mission.onboard_checks`): step 1 reads the
script's parameter instead of RC_OVERRIDE_TIME (none: EXIT_FIRMWARE), step 2 engages at once, step 3
needs the script's "brov2_hybrid: ACTIVE" (else EXIT_OVERRIDE_IGNORED).
4. when the dive is done: hold ``end_hold_s``, release the override, wait
   ``release_wait_s``, disarm (``disarm_at_end``), disengage, and end
   (``exit_at_end``) or wait for the next dive.

Everything outside -- the clock, sleeping, the vehicle's services, the publications and
the log -- comes through a :class:`~brov2_hybrid.mission.interfaces.MissionIO` (with the
settings and the vehicle's state and replies, in :mod:`~brov2_hybrid.mission.interfaces`);
the vehicle state, the overrides sent, the motor outputs, the vehicle's STATUSTEXTs and the
end of the dive come in through :meth:`Mission.on_state`, :meth:`Mission.on_override`,
:meth:`Mission.on_outputs`, :meth:`Mission.on_statustext` and :meth:`Mission.on_dive_done`
(callable from other threads). Times are wall seconds (the vehicle clock may stop while
the link is down). The outcome is a process exit code (``EXIT_*`` of
:mod:`~brov2_hybrid.mission.exit_codes`). A run stopped from outside (Ctrl-C, roslaunch
shutting down: ``io.is_shutdown()``) before it ended says so -- what it was doing and after
how long -- instead of claiming a timeout, and ends with ``EXIT_SHUTDOWN`` (or ``EXIT_OK``
when ``exit_at_end`` is false, where shutdown is the normal end).
"""
import threading

from brov2_hybrid.link.override import VERIFY_FAILED, VERIFY_OK
from brov2_hybrid.mission.exit_codes import (EXIT_FIRMWARE, EXIT_NO_TELEMETRY, EXIT_NO_VEHICLE, EXIT_OK,
                                                EXIT_OVERRIDE_IGNORED, EXIT_SHUTDOWN)
from brov2_hybrid.mission.interfaces import ERROR, FATAL, INFO, WARN, FcuState
from brov2_hybrid.mission.onboard_checks import OnboardChecks
from brov2_hybrid.onboard.uplink import ACTIVE_TEXT

POLL_S = 0.05                   # state polling period of the waits and the dive loop [wall s]
NOT_ARMED_WARN_PERIOD_S = 5.0   # "not armed" is repeated at most this often [wall s]
RC_OUT_NAME = "/mavros/rc/out"  # how the motor outputs are named in messages
IMU_NAME = "/mavros/imu/data"   # how the attitude is named in messages
ATTITUDE, OUTPUTS = "attitude", "motor outputs"   # the telemetry the run needs from the vehicle
SEVERITY_WARNING = 4            # MAV_SEVERITY_WARNING: this or more severe is a reason worth telling
ARMING_TEXT_PREFIXES = ("PreArm:", "Arm:")   # AP_Arming::check_failed (libraries/AP_Arming/AP_Arming.cpp)
MAX_REASONS = 3                 # vehicle texts quoted in one message
REASON_WAIT_S = 0.3             # after a last failed request, wait this long for the vehicle's reason
                                # (its STATUSTEXT and the reply travel different ways) [wall s]


class Mission(OnboardChecks):
    """The sequence of the module docstring.

    Parameters
    ----------
    settings : brov2_hybrid.mission.interfaces.MissionSettings
    verifier : brov2_hybrid.link.override.OverrideVerifier
    detector : brov2_hybrid.vehicle.firmware_detector.FirmwareDetector
    io : brov2_hybrid.mission.interfaces.MissionIO
    """

    def __init__(self, settings, verifier, detector, io):
        self.settings = settings
        self.verifier = verifier
        self.detector = detector
        self.io = io
        self._lock = threading.Lock()
        self._state = FcuState()
        self._dive_done = False
        self._firmware_told = False
        self._armed_since_vehicle_s = None
        self._not_armed_warned_s = None
        self._texts = []                # (wall s, severity, text) the vehicle said, newest last
        self._started_s = None          # when run() began [wall s]
        self._heard = set()             # telemetry heard at least once (ATTITUDE, OUTPUTS)
        self._watch_since = None        # armed and connected since [wall s] (None: not both)
        self._start_code = None         # why start() failed, when not EXIT_NO_VEHICLE

    # ------------------------------------------------------------------ inputs
    def on_state(self, connected, armed, mode):
        """The vehicle state (link, armed, mode name)."""
        with self._lock:
            self._state = FcuState(bool(connected), bool(armed), mode)
            if not (connected and armed):
                self._watch_since = None     # the wait restarts; what was heard stays heard
            self.verifier.on_link(connected)
            self.verifier.on_armed(armed)

    def on_override(self, channels):
        """An RC override we sent (channel PWMs [us] from channel 1)."""
        with self._lock:
            self.verifier.on_override(self.io.now_s(), channels)
            self.detector.on_override(self.io.vehicle_now_s(), channels)

    def on_outputs(self, channels):
        """The vehicle's motor outputs [us]."""
        with self._lock:
            self._heard.add(OUTPUTS)
            self.verifier.on_outputs(list(channels))
            if self._state.armed:
                self.detector.on_outputs(self.io.vehicle_now_s(), list(channels))

    def on_attitude(self):
        """An attitude from the vehicle arrived (MAVROS imu/data)."""
        with self._lock:
            self._heard.add(ATTITUDE)

    def on_statustext(self, severity, text):
        """A STATUSTEXT from the vehicle (MAV_SEVERITY, text), e.g. "PreArm: Battery 1 unhealthy"."""
        with self._lock:
            self._texts.append((self.io.now_s(), int(severity), str(text).strip()))
            self.on_script_text(text)
            del self._texts[:-50]

    def vehicle_reasons(self, since_s):
        """What the vehicle said since ``since_s`` that may explain a refusal: its arming
        texts ("PreArm: ...", "Arm: ...") and anything of severity WARNING or worse, the
        newest :data:`MAX_REASONS`, without repeats, oldest first."""
        with self._lock:
            texts = [(sev, text) for t, sev, text in self._texts if t >= since_s]
        reasons = []
        for sev, text in reversed(texts):
            if (sev <= SEVERITY_WARNING or text.startswith(ARMING_TEXT_PREFIXES)) and text not in reasons:
                reasons.append(text)
        return list(reversed(reasons[:MAX_REASONS]))

    def on_dive_done(self, done):
        """The dive input has played to its end (``done`` True; latched until the sequence ends it)."""
        with self._lock:
            self._dive_done = self._dive_done or bool(done)

    # ------------------------------------------------------------------ sequence
    def wait(self, predicate, timeout_s):
        """Poll ``predicate(FcuState)`` until true (True) or ``timeout_s`` passed (False)."""
        deadline = self.io.now_s() + timeout_s
        while not self.io.is_shutdown() and self.io.now_s() < deadline:
            with self._lock:
                if predicate(self._state):
                    return True
            self.io.sleep(POLL_S)
        return False

    def check_override_time(self):
        """Read the vehicle's RC_OVERRIDE_TIME and warn when an override we sent could
        outlive us for longer than ``max_override_time_s``. Returns the value (None: unread)."""
        s, io = self.settings, self.io
        value = io.get_param("RC_OVERRIDE_TIME")
        if value is None:
            io.log(WARN, "could not read the vehicle's RC_OVERRIDE_TIME: if this autopilot's link dies, "
                         "the motors keep the last override for that long (set it to <= %g s)" % s.max_override_time_s)
        elif value < 0:
            io.log(WARN, "the vehicle's RC_OVERRIDE_TIME is %g: overrides never expire, so if this autopilot's "
                         "link dies (e.g. kill -9 of the bridge or mavros_node) the motors keep the last override "
                         "until the pilot-input failsafe; set RC_OVERRIDE_TIME <= %g s"
                   % (value, s.max_override_time_s))
        elif value > s.max_override_time_s:
            io.log(WARN, "the vehicle's RC_OVERRIDE_TIME is %g s: if this autopilot's link dies (e.g. kill -9 of "
                         "the bridge or mavros_node) the motors keep the last override for %g s; set "
                         "RC_OVERRIDE_TIME <= %g s" % (value, value, s.max_override_time_s))
        else:
            io.log(INFO, "the vehicle's RC_OVERRIDE_TIME is %g s" % value)
        return value

    def _stopped(self, doing):
        """True (and says so) when the process was asked to stop while ``doing``."""
        if not self.io.is_shutdown():
            return False
        since = self._started_s if self._started_s is not None else self.io.now_s()
        self.io.log(WARN, "shut down after %.1f s while %s" % (self.io.now_s() - since, doing))
        return True

    def start(self):
        """Connect, set the mode, arm; True when the vehicle is armed in the mode."""
        s, io = self.settings, self.io
        if self._started_s is None:
            self._started_s = io.now_s()
        io.log(INFO, "waiting up to %.0f s for the vehicle" % s.connect_timeout_s)
        if not self.wait(lambda st: st.connected, s.connect_timeout_s):
            if self._stopped("waiting for the vehicle (none connected yet)"):
                return False
            io.log(FATAL, "no vehicle connected within %.0f s (check fcu_url and that the "
                          "simulator / vehicle is running)" % s.connect_timeout_s)
            return False
        if self.onboard:
            if not self.check_script():
                return False
        else:
            self.check_override_time()
        for _ in range(s.mode_attempts):
            io.set_mode(s.mode)
            if self.wait(lambda st: st.mode == s.mode, s.command_timeout_s):
                break
            if self._stopped("setting mode %s" % s.mode):
                return False
        else:
            io.log(FATAL, "the vehicle did not enter mode %s after %d requests (it reports %r)"
                   % (s.mode, s.mode_attempts, self._state.mode))
            return False
        if not self.arm():
            return False
        self._armed_since_vehicle_s = io.vehicle_now_s()
        if self.onboard:
            io.log(INFO, "armed in %s; dive starts (placement onboard: the vehicle's script flies it)" % s.mode)
            self._engage()
        elif s.firmware == "auto":
            io.log(INFO, "armed in %s; telling the vehicle's firmware from its motor outputs "
                         "before the dive starts" % s.mode)
        else:
            io.log(INFO, "armed in %s; dive starts (firmware %s, checked against the motor outputs)"
                   % (s.mode, s.firmware))
            self._engage()
        return True

    def arm(self):
        """Arming requests ``arm_retry_wait_s`` apart until armed (True) or ``arm_timeout_s``
        has passed or shutdown (False); each failure is told with the vehicle's reason."""
        s, io = self.settings, self.io
        started_s = io.now_s()
        deadline_s = started_s + s.arm_timeout_s
        attempt, last_reasons = 0, []
        while True:
            attempt += 1
            asked_s = io.now_s()
            reply = io.arm(True)
            if reply is not None and reply.success and self.wait(lambda st: st.armed, s.command_timeout_s):
                return True
            if reply is None:
                why = "no reply from %s" % s.arming_service
            elif not reply.success:
                why = "refused by the vehicle, result %d" % reply.result
            else:
                why = "accepted, but %s did not report armed within %.1f s" % (s.state_topic, s.command_timeout_s)
            left_s = deadline_s - io.now_s()
            retry = left_s > 0 and not io.is_shutdown()
            # the pause before the next request also lets the vehicle's reason arrive
            io.sleep(min(s.arm_retry_wait_s, left_s) if retry else REASON_WAIT_S)
            reasons = self.vehicle_reasons(asked_s)
            last_reasons = reasons or last_reasons
            if reasons:
                why += "; the vehicle says: %s" % " | ".join(reasons)
            io.log(WARN, "arming attempt %d failed (%s)%s" % (
                attempt, why, ", retrying (%.1f s left)" % max(0.0, deadline_s - io.now_s()) if retry else ""))
            if not retry or io.is_shutdown():
                break
        if self._stopped("arming (%d attempts in %.1f s)" % (attempt, io.now_s() - started_s)):
            return False
        io.log(FATAL, "the vehicle did not arm within %.0f s (%d attempts)%s" % (
            s.arm_timeout_s, attempt, "; last reason from the vehicle: %s" % " | ".join(last_reasons)
            if last_reasons else ""))
        return False

    def check_firmware(self, now_s):
        """Latch the firmware once told; an exit code when the run must stop, else None. ``now_s``: the
        vehicle's clock (:meth:`~brov2_hybrid.mission.interfaces.MissionIO.vehicle_now_s`)."""
        s, io = self.settings, self.io
        with self._lock:
            found = self.detector.firmware
            mismatch = self.detector.mismatch_message(s.firmware)
            votes = dict(self.detector.votes)
            dist = dict(self.detector.last_distances)
            record = list(self.detector.vote_record)
            judged = self.detector.judged
        if found is None:
            if (s.firmware == "auto" and self._armed_since_vehicle_s is not None
                    and now_s - self._armed_since_vehicle_s > s.firmware_timeout_s and judged >= s.firmware_min_samples):
                io.log(FATAL, "parameter 'firmware' is auto but the vehicle's motor outputs (%s) matched neither "
                              "stock ArduSub (Algorithm 1) nor the paper's firmware (Algorithm 2) within %.0f s "
                              "armed and %d samples (votes %s, last per-motor differences %s us); set firmware:=stock "
                              "or firmware:=quantitative"
                       % (RC_OUT_NAME, s.firmware_timeout_s, judged, votes, {k: round(v, 1) for k, v in dist.items()}))
                return EXIT_FIRMWARE
            return None
        if self._firmware_told:
            return None
        if mismatch:
            io.log(FATAL, mismatch)
            return EXIT_FIRMWARE
        self._firmware_told = True
        io.publish_firmware(found)
        io.log(INFO, "firmware %s: the samples that voted (time s, firmware, motor PWMs, override, "
                     "largest differences us): %s" % (found, record))
        if s.firmware == "auto":
            io.log(INFO, "the vehicle runs %s firmware (motor outputs, votes %s); dive starts" % (found, votes))
            io.publish_engaged(True)
        else:
            io.log(INFO, "motor outputs confirm firmware %s (votes %s)" % (found, votes))
        return None

    def check_telemetry(self, now_s):
        """EXIT_NO_TELEMETRY (said) when the attitude or the motor outputs have never arrived and the
        vehicle has been armed and connected for ``telemetry_timeout_s`` without a break, else None.
        Only a first arrival counts: a later silence is a lost link, which the link watchdogs report
        (0 s: no check)."""
        s = self.settings
        if s.telemetry_timeout_s <= 0:
            return None
        with self._lock:
            if not (self._state.connected and self._state.armed):
                return None
            if self._watch_since is None:
                self._watch_since = now_s
            silent = [what for what in (ATTITUDE, OUTPUTS) if what not in self._heard]
            waited_s = now_s - self._watch_since
        if not silent or waited_s <= s.telemetry_timeout_s:
            return None
        names = {ATTITUDE: "attitude (%s: ATTITUDE_QUATERNION or ATTITUDE)" % IMU_NAME,
                 OUTPUTS: "motor outputs (%s: SERVO_OUTPUT_RAW)" % RC_OUT_NAME}
        self.io.log(FATAL, "no telemetry: no %s arrived from the vehicle in %.1f s armed and connected, so the "
                           "autopilot holds the thrusters neutral and cannot check the override. The vehicle "
                           "sends these streams only when asked: with real MAVROS, mavros_streams asks (see its "
                           "warnings: does /mavros/cmd/command reach the vehicle?)"
                    % (" and no ".join(names[w] for w in silent), waited_s))
        return EXIT_NO_TELEMETRY

    def finish(self, disarm=True):
        """Release the override, disarm (when ``disarm``), disengage."""
        io = self.io
        io.publish_release(True)
        io.sleep(self.settings.release_wait_s)
        if disarm:
            reply = io.arm(False)
            if reply is None or not reply.success:
                io.log(ERROR, "disarm failed; disarm the vehicle by hand")
            else:
                io.log(INFO, "disarmed")
        io.publish_engaged(False)

    def _warn_not_armed(self, now_s):
        if self._not_armed_warned_s is None or now_s - self._not_armed_warned_s >= NOT_ARMED_WARN_PERIOD_S:
            self._not_armed_warned_s = now_s
            self.io.log(WARN, "the vehicle is not armed")

    def run(self):
        """The whole sequence; returns the process exit code."""
        s, io = self.settings, self.io
        self._started_s = io.now_s()
        if not self.start():
            if self._start_code is not None:
                return self._start_code
            return EXIT_SHUTDOWN if io.is_shutdown() else EXIT_NO_VEHICLE
        reported = script_reported = False
        while not io.is_shutdown():
            with self._lock:
                state = self.verifier.update(io.now_s())
                done = self._dive_done
                armed = self._state.armed
            code = self.check_telemetry(io.now_s())
            if code is not None:
                self.finish(disarm=True)
                return code
            if state == VERIFY_FAILED:
                io.log(FATAL, self.verifier.failure_message(RC_OUT_NAME))
                self.finish(disarm=True)
                return EXIT_NO_TELEMETRY if self.verifier.no_outputs() else EXIT_OVERRIDE_IGNORED
            code = self.check_script_active(io.now_s()) if self.onboard else self.check_firmware(io.vehicle_now_s())
            if code is not None:
                self.finish(disarm=True)
                return code
            if self.onboard and self._script_active and not script_reported:
                io.log(INFO, "the on-board script flies the vehicle ('%s')" % ACTIVE_TEXT)
                script_reported = True
            if state == VERIFY_OK and not reported:
                io.log(INFO, "RC override reaches the vehicle (motor outputs follow it)")
                reported = True
            if not armed:
                self._warn_not_armed(io.now_s())
            if done:
                io.log(INFO, "dive finished; holding %.1f s, then release and disarm" % s.end_hold_s)
                io.sleep(s.end_hold_s)
                self.finish(disarm=s.disarm_at_end)
                if s.exit_at_end:
                    return EXIT_OK
                with self._lock:
                    self._dive_done = False
            io.sleep(POLL_S)
        if not s.exit_at_end:
            return EXIT_OK               # shutdown is how a run without exit_at_end ends
        self._stopped("the dive was running (not finished)")
        return EXIT_SHUTDOWN

