"""The mission's part for ``placement`` onboard (docs/onboard.md "Flying it from ROS"): the law runs in
the vehicle's Lua script, so instead of the RC override and the firmware the mission checks the script.

:class:`OnboardChecks` is mixed into :class:`~brov2_hybrid.mission.sequence.Mission` (it uses its
settings, io, lock and the vehicle's texts): :meth:`OnboardChecks.check_script` before arming (the
script's parameter, ``script_param``, must exist within ``onboard_script_timeout_s``: the script loads
some seconds after the autopilot boots), :meth:`OnboardChecks.check_script_active` during the dive
(the script's "brov2_hybrid: ACTIVE" within ``onboard_active_timeout_s`` of engaging), and
:meth:`OnboardChecks.on_script_text`, which follows the script's mode texts. Times are wall seconds.
"""
from brov2_hybrid.mission.exit_codes import EXIT_FIRMWARE, EXIT_OVERRIDE_IGNORED
from brov2_hybrid.mission.interfaces import FATAL, INFO
from brov2_hybrid.onboard.uplink import ACTIVE_MODE, ACTIVE_TEXT, TEXT_PREFIX, script_mode

#: The script's texts quoted when it never took the vehicle.
LAST_WORDS = 3


class OnboardChecks(object):
    """The onboard checks of the module docstring (a mixin of Mission)."""

    _engaged_s = None          # when the dive was engaged [wall s]
    _script_active = False     # the script has been ACTIVE since engaging
    _script_mode = None        # the mode of the script's last "brov2_hybrid: MODE" text

    def on_script_text(self, text):
        """Follow the script's mode texts (call with the mission's lock held)."""
        mode = script_mode(text)
        if mode is not None:
            self._script_mode = mode
            self._script_active = self._script_active or (mode == ACTIVE_MODE and self._engaged_s is not None)

    @property
    def onboard(self):
        """True when the law runs on board (``placement`` onboard)."""
        return self.settings.placement == "onboard"

    def _engage(self):
        with self._lock:
            self._engaged_s = self.io.now_s()
            self._script_active = self._script_mode == ACTIVE_MODE    # it may have taken the vehicle at arming
        self.io.publish_engaged(True)

    def check_script(self):
        """placement onboard: read the script's parameter until it answers (True) or
        ``onboard_script_timeout_s`` has passed (False, said; the run ends with EXIT_FIRMWARE)."""
        s, io = self.settings, self.io
        deadline = io.now_s() + s.onboard_script_timeout_s
        while True:
            value = io.get_param(s.script_param)
            if value is not None:
                io.log(INFO, "placement onboard: the vehicle's script runs (%s = %g)" % (s.script_param, value))
                return True
            if io.now_s() >= deadline or io.is_shutdown():
                break
            io.sleep(s.arm_retry_wait_s)
        if self._stopped("waiting for the on-board script's parameter %s" % s.script_param):
            return False
        self._start_code = EXIT_FIRMWARE
        io.log(FATAL, "placement onboard: the vehicle has no parameter %s after %.0f s: the on-board script is not "
                      "running (SCR_ENABLE 1, the script in the autopilot's scripts folder, a reboot; "
                      "docs/onboard.md). Nothing was armed." % (s.script_param, s.onboard_script_timeout_s))
        return False

    def check_script_active(self, now_s):
        """placement onboard: EXIT_OVERRIDE_IGNORED (said) when the script has not said ACTIVE within
        ``onboard_active_timeout_s`` of engaging, else None."""
        with self._lock:
            engaged, active = self._engaged_s, self._script_active
        if not self.onboard or engaged is None or active or now_s - engaged <= self.settings.onboard_active_timeout_s:
            return None
        said = [text for _, _, text in self._texts if text.startswith(TEXT_PREFIX)][-LAST_WORDS:]
        self.io.log(FATAL, "placement onboard: the on-board script did not take the vehicle (no '%s' within %.0f s "
                           "of the dive's start; its last words: %s): is the desired state reaching it (DEBUG_FLOAT_ARRAY "
                           "through mavlink_bridge, placement onboard), is the vehicle in one of its modes, "
                           "HYB_ENABLE 1? (docs/onboard.md)"
                    % (ACTIVE_TEXT, self.settings.onboard_active_timeout_s, " | ".join(said) or "none"))
        return EXIT_OVERRIDE_IGNORED
