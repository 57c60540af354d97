"""The topside's watch over the on-board script, and what it does when the script has stopped.

ArduSub 4.5 never lets a script's servo override lapse (docs/onboard.md "Safety on board"): a script
that ArduSub stops (an error it did not catch, ``SCR_VM_I_COUNT`` exceeded, out of memory, scripting
stopped) leaves every motor at its last output, armed or not, until the autopilot reboots. The script
cannot undo that once it no longer runs, so the topside does: :class:`ScriptWatchdog` follows what the
script says (its ``HYB_HZ`` report every ``report_period_s``, its mode texts) and ArduSub's own texts
about it, and when the script has stopped while its last mode drove the motors it asks for a reboot
(:func:`send_reboot`), the one thing that gives the motors back: a rebooted ArduSub starts disarmed, with
the motors at neutral, and the positively buoyant vehicle rises.

The script counts as stopped when

* ArduSub says so: a STATUSTEXT ``Lua: ...`` of severity CRITICAL or worse naming the script's file
  (``<script_name> exceeded time limit``, ``.../<script_name>:123: attempt to ...``; another script's
  error is not ours), or
* it went silent: no report for ``silent_s`` of vehicle time while the vehicle's clock runs on (its
  attitude keeps coming), after at least one report.

Its last mode decides what is asked: ACTIVE, HOLD and PILOT drive the motors at some thrust (reboot);
RELEASED and the neutral modes left them at 1500 us (reported, no reboot: the motors are safe, though
ArduSub cannot drive them until a reboot). The reboot is re-asked every ``retry_s`` wall seconds until
the vehicle's clock starts again (it rebooted), and an armed vehicle is rebooted too (the force value
of ``GCS_MAVLINK::handle_preflight_reboot``), since disarming does not release the motors.

Plain Python, no rospy: ``mavlink_bridge`` feeds it (placement onboard) and sends what it asks.
"""
import math

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.onboard.uplink import SCRIPT_MODES, TEXT_PREFIX, ScriptReports, report_name, script_mode
from brov2_hybrid.validate import as_positive

#: MAV_SEVERITY_CRITICAL: ArduSub's scripting reports a stopped script at this severity (lua_scripts.cpp).
SEVERITY_CRITICAL = mavlink.MAV_SEVERITY_CRITICAL
#: MAV_SEVERITY_ERROR: the script reports an error it caught at this severity (its ``say``).
SEVERITY_ERROR = mavlink.MAV_SEVERITY_ERROR
#: The script's mode after an error it caught (neutral written; HYB_MODE 5).
CAUGHT_ERROR_MODE = SCRIPT_MODES[5]
#: The script's modes in which its last outputs drive the motors at some thrust (hybrid_onboard.lua.template).
DRIVING_MODES = ("ACTIVE", "HOLD", "PILOT")
#: The script's report the watch counts on (every ``report_period_s``: onboard.ScriptReports).
REPORT_NAME = ScriptReports.NAMES[0]
#: Messages whose time_boot_ms runs the watch's clock (the bridge's attitude source, either kind).
CLOCK_MESSAGES = ("ATTITUDE", "ATTITUDE_QUATERNION", "SYSTEM_TIME")
#: MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, param1 1: reboot the autopilot.
MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN = mavlink.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN
#: ArduPilot reboots an armed vehicle only with this in param6 (``packet.y``; GCS_Common.cpp
#: ``handle_preflight_reboot``: "refuse reboot when armed ... but allow it if forced").
FORCE_REBOOT_MAGIC = 20190226


class ScriptWatchdog(object):
    """Whether the on-board script stopped, and whether the autopilot must reboot (module docstring).

    Parameters
    ----------
    script_name : str
        The script's file name (OnboardSettings.script_name): ArduSub's texts about it name it.
    silent_s : float
        No report for this long [s, vehicle time] means the script stopped.
    retry_s : float
        Re-ask the reboot this often [s, wall] until the vehicle's clock restarts.
    clock_gap_s : float
        The vehicle's clock stepping back more than this [s] is a new boot (its messages come in order over
        one link, and the script loads seconds after a boot, so it cannot have stopped sooner); stepping
        forward more than this, the link was out (a tether drop-out): the silence is counted again from
        there, since the reports of that while were lost with everything else, not missing.
    """

    def __init__(self, script_name, silent_s, retry_s, clock_gap_s):
        self.script_name = str(script_name)
        self.silent_s = as_positive(silent_s, "silent_s")
        self.retry_s = as_positive(retry_s, "retry_s")
        self.clock_gap_s = as_positive(clock_gap_s, "clock_gap_s")
        self.reboots_asked = 0
        self.reboots_seen = 0
        self._fresh_boot()

    def _fresh_boot(self):
        self.newest_s = -math.inf        # the vehicle's newest clock reading [s]
        self.heard_since_s = None        # the vehicle heard without a gap since this vehicle time [s]
        self.last_report_s = None        # vehicle time of the script's newest report [s]
        self.mode = None                 # the script's last announced mode
        self.stopped = None              # why the script counts as stopped (None: running, or not known yet)
        self._asked_mono = None          # when the reboot was last asked [wall s]

    # ------------------------------------------------------------------ what comes in
    def on_message(self, msg):
        """Any message from the vehicle (pymavlink): the attitude and time messages (:data:`CLOCK_MESSAGES`)
        give the clock, NAMED_VALUE_FLOAT ``HYB_HZ`` the script's report, STATUSTEXT its mode and ArduSub's
        word on it; others are ignored. Returns True when the clock showed a new boot
        (:meth:`on_vehicle_time`)."""
        kind = msg.get_type()
        if kind in CLOCK_MESSAGES:
            return self.on_vehicle_time(msg.time_boot_ms / 1000.0)
        if kind == "NAMED_VALUE_FLOAT":
            if report_name(msg.name) == REPORT_NAME:
                return self.on_report(msg.time_boot_ms / 1000.0)
        elif kind == "STATUSTEXT":
            self.on_text(msg.severity, msg.text)
        return False

    def on_vehicle_time(self, t_s):
        """The vehicle's clock (an attitude's time_boot_ms / 1000) [s]. A step back of more than
        ``clock_gap_s`` is a new boot: everything known of the script is forgotten (returns True then); a
        step forward of more than that, a link that was out: the silence counts from here."""
        if t_s < self.newest_s - self.clock_gap_s:
            rebooted = self.stopped is not None and self._asked_mono is not None
            self._fresh_boot()
            self.reboots_seen += int(rebooted)
            self.newest_s = self.heard_since_s = t_s
            return True
        if self.heard_since_s is None or t_s > self.newest_s + self.clock_gap_s:
            self.heard_since_s = t_s
        self.newest_s = max(self.newest_s, t_s)
        return False

    def on_report(self, t_s):
        """One of the script's reports (NAMED_VALUE_FLOAT ``HYB_HZ``) at vehicle time ``t_s`` [s]; returns
        True when its time showed a new boot."""
        rebooted = self.on_vehicle_time(t_s)
        self.last_report_s = t_s if self.last_report_s is None else max(self.last_report_s, t_s)
        return rebooted

    def on_text(self, severity, text):
        """A STATUSTEXT: the script's own (``brov2_hybrid: ...``: it runs, as a report says; its mode, or an
        error it caught), and ArduSub's ``Lua: ...`` about this script."""
        text = str(text).strip()
        if text.startswith(TEXT_PREFIX):
            if math.isfinite(self.newest_s):
                self.last_report_s = self.newest_s if self.last_report_s is None else max(self.last_report_s,
                                                                                          self.newest_s)
            mode = script_mode(text)
            if mode is not None:
                self.mode = mode
            elif severity <= SEVERITY_ERROR:
                # an error the script caught: it wrote neutral and retries (sending no report meanwhile, but
                # this text again at each try)
                self.mode = CAUGHT_ERROR_MODE
            return
        if (self.stopped is None and severity <= SEVERITY_CRITICAL and text.startswith("Lua:")
                and self.script_name in text):
            self.stopped = "ArduSub stopped it: %r" % text

    # ------------------------------------------------------------------ what to do
    @property
    def driving(self):
        """True when the script's last announced mode drives the motors at some thrust."""
        return self.mode in DRIVING_MODES

    def check(self, mono):
        """Called every turn with the wall time ``mono`` [s]. Returns None (nothing to do) or
        (reason, reboot): the script has stopped (``reason``), newly found, or with a reboot due again;
        ``reboot`` True asks :func:`send_reboot` (its last mode drove the motors)."""
        newly = False
        if self.stopped is None:
            if self.last_report_s is None:
                return None
            silent_since = max(self.last_report_s, self.heard_since_s)
            if self.newest_s - silent_since <= self.silent_s:
                return None
            self.stopped = ("no report (HYB_HZ) for %.1f s of vehicle time while its attitude kept coming "
                            "(bound %.1f s)"
                            % (self.newest_s - silent_since, self.silent_s))
            newly = True
        if not self.driving:
            return (self.stopped, False) if newly else None
        if self._asked_mono is not None and mono - self._asked_mono < self.retry_s:
            return None
        self._asked_mono = mono
        self.reboots_asked += 1
        return self.stopped, True

    def turn(self, mono, send, target, armed):
        """:meth:`check`, and what the bridge does with it: the reboot sent with ``send`` (``send(fn)`` calls
        ``fn(mav)``, says whether it went out) to ``target`` (system, component), forced when ``armed``.
        Returns the error to log, or None."""
        act = self.check(mono)
        if act is None:
            return None
        reason, reboot = act
        if not reboot:
            return ("the on-board script stopped (%s); its last mode %s left the motors at neutral, and ArduSub "
                    "cannot drive them until the autopilot reboots (docs/onboard.md)" % (reason, self.mode))
        sent = send(lambda mav: send_reboot(mav, target, armed))
        return ("the on-board script stopped (%s) while its last mode %s drove the motors: ArduSub 4.5 holds a "
                "script's last motor outputs until a reboot, so the autopilot is rebooted "
                "(MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN%s, request %d%s; re-asked every %.0f s until it reboots; "
                "docs/onboard.md)" % (reason, self.mode, ", forced: armed" if armed else "", self.reboots_asked,
                                      "" if sent else ", not sent: no link", self.retry_s))

    def reboot_text(self):
        """What to say when the vehicle's clock started again (:meth:`on_message` True)."""
        return "the vehicle's clock started again: the autopilot rebooted%s" % (
            " (asked: the on-board script had stopped)" if self.reboots_seen else "")


def send_reboot(mav, target, armed):
    """COMMAND_LONG MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN (reboot the autopilot) to ``target`` (system,
    component) on the pymavlink ``MAVLink`` object ``mav``; ``armed``: force it (an armed ArduPilot
    refuses a plain reboot)."""
    mav.command_long_send(target[0], target[1], MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, 0,
                          1, 0, 0, 0, 0, FORCE_REBOOT_MAGIC if armed else 0, 0)
