"""The mission's process exit codes, what each means, and the file that carries one.

:class:`~brov2_hybrid.node_logic.mission.Mission` ends with one of the ``EXIT_*`` codes;
``nodes/mission`` exits with it and, since roslaunch exits 0 whatever its required nodes
return, also leaves it in a file (:func:`write_exit_code`) that ``make run``
(scripts/run_dive.sh) reads back (:func:`read_exit_code`) and explains
(:data:`EXIT_MEANINGS`).
"""
import os

EXIT_OK, EXIT_CONFIG, EXIT_NO_VEHICLE, EXIT_OVERRIDE_IGNORED, EXIT_FIRMWARE = 0, 2, 3, 4, 5
EXIT_NO_TELEMETRY = 6           # armed, but no attitude or no motor outputs arrive from the vehicle
EXIT_SHUTDOWN = 130             # stopped from outside before the run ended (the shell's code for SIGINT)
#: What each exit code means (``make run`` prints it).
EXIT_MEANINGS = {
    EXIT_OK: "the dive was flown to its end",
    EXIT_CONFIG: "bad parameters",
    EXIT_NO_VEHICLE: "no vehicle connected, or it did not enter the mode or arm",
    EXIT_OVERRIDE_IGNORED: "the vehicle ignores our RC override (SYSID_MYGCS)",
    EXIT_FIRMWARE: "the vehicle's firmware is not the one configured, or could not be told",
    EXIT_NO_TELEMETRY: "no telemetry: the vehicle's attitude or motor outputs never arrived (streams not sent)",
    EXIT_SHUTDOWN: "shut down before the run ended",
}




def write_exit_code(path, code):
    """Leave the process exit code ``code`` in the file ``path`` (one line; "" = nowhere).

    roslaunch exits 0 whatever its required nodes return, so ``make run``
    (scripts/run_dive.sh) reads the mission's outcome from here. Written to a temporary
    file and renamed, so a reader never sees half a line.
    """
    if not path:
        return
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "w") as out:
        out.write("%d\n" % int(code))
    os.replace(tmp, path)


def read_exit_code(path):
    """The exit code :func:`write_exit_code` left in ``path``, or None (no file, not a number)."""
    try:
        with open(path) as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None
