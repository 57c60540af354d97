"""The mission's process exit codes, what each means, and the file that carries one.

:class:`~brov2_hybrid.mission.sequence.Mission` ends with one of the ``EXIT_*`` codes;
``nodes/mission`` exits with it and, since roslaunch exits 0 whatever its required nodes
return, also leaves it in a file (:func:`write_exit_code`) that ``make run``
(scripts/run_dive.sh) reads back (:func:`read_exit_code`) and explains
(:data:`EXIT_MEANINGS`).
"""
import os
import re

# roslaunch's words (roslaunch/pmon.py) when a required node ends: its name, then its exit description
_REQUIRED_DIED = re.compile(r"REQUIRED process \[([^\]]+)\] has died!.{0,300}?exit code (-?\d+|None)", re.S)

EXIT_OK, EXIT_CONFIG, EXIT_NO_VEHICLE, EXIT_OVERRIDE_IGNORED, EXIT_FIRMWARE = 0, 2, 3, 4, 5
EXIT_NO_TELEMETRY = 6           # armed, but no attitude or no motor outputs arrive from the vehicle
EXIT_NODE_DIED = 7              # make run: another required node (e.g. mavros_node) died and ended the run
EXIT_SHUTDOWN = 130             # stopped from outside before the run ended (the shell's code for SIGINT)
#: What each exit code means (``make run`` prints it).
EXIT_MEANINGS = {
    EXIT_OK: "the dive was flown to its end",
    EXIT_CONFIG: "bad parameters",
    EXIT_NO_VEHICLE: "no vehicle connected, or it did not enter the mode or arm",
    EXIT_OVERRIDE_IGNORED: "the vehicle ignores our RC override (SYSID_MYGCS)",
    EXIT_FIRMWARE: "the vehicle's firmware is not the one configured, or could not be told",
    EXIT_NO_TELEMETRY: "no telemetry: the vehicle's attitude or motor outputs never arrived (streams not sent)",
    EXIT_NODE_DIED: "a required node died (e.g. mavros_node, the vehicle link) and roslaunch ended the run",
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


def required_node_died(launch_output):
    """(node name, exit code or None) of the first required node roslaunch reports dead in its console
    output ``launch_output`` ("REQUIRED process [mavros-3] has died! process has died [pid 12, exit code
    -9, ...]": ("mavros", -9)), or None. The name loses roslaunch's "-N" suffix; a negative exit
    code is the signal that killed it."""
    match = _REQUIRED_DIED.search(launch_output)
    if match is None:
        return None
    name = re.sub(r"-\d+$", "", match.group(1))
    return name, None if match.group(2) == "None" else int(match.group(2))
