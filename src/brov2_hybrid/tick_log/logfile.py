"""Control-tick log CSV: one row per control tick, written by the ROS ``logger`` node
and by the in-process closed loop alike, read by the analysis tools.

Files are never overwritten (:func:`unique_path` adds a suffix). Each row goes to the
kernel in one unbuffered write as soon as it is made, so a killed writer (SIGKILL) loses
nothing already written and leaves no torn row. When the disk fills (or any other write
error) the file is cut back to its last complete row, closed, and writing stops with one
:class:`LogWriteError`; later rows are dropped silently (docs/safety.md "Full disk").
Angles in rad (NED/FRD), rates in rad/s, tau in N / N m (FRD), PWMs in us.
"""
import collections
import csv
import errno
import io
import os

import numpy as np

from brov2_hybrid.link.ardusub import SERVO_OUTPUTS
from brov2_hybrid.errors import Brov2Error, InputDataError
from brov2_hybrid.csv_input import open_csv
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, DOF_NAMES, LINEAR_DOF_NAMES

# Column groups, each in the order of its AutopilotStatus field (see status_row).
DESIRED_COLUMNS = tuple("%s_d_rad" % a for a in ANGULAR_DOF_NAMES)
ATTITUDE_COLUMNS = tuple("%s_rad" % a for a in ANGULAR_DOF_NAMES)
RATE_COLUMNS = ("p_rad_s", "q_rad_s", "r_rad_s")
LINEAR_CMD_COLUMNS = tuple("%s_cmd" % d for d in LINEAR_DOF_NAMES)
TAU_COLUMNS = ("tau_x_n", "tau_y_n", "tau_z_n", "tau_k_nm", "tau_m_nm", "tau_n_nm")
U_COLUMNS = tuple("u_%s" % d for d in DOF_NAMES)
#: RC override channels 1-6 (surge..yaw on ArduSub's default RCn_OPTION map) as last sent.
RC_COLUMNS = tuple("rc%d_us" % i for i in range(1, 7))
#: The vehicle's motor outputs 1-8 as SERVO_OUTPUT_RAW / RCOut report them (a MAVLink
#: message of 8 outputs, whatever the vehicle's thruster count; unused outputs read 0).
PWM_COLUMNS = tuple("pwm%d_us" % i for i in range(1, SERVO_OUTPUTS + 1))
#: The simulated tether's pull on the vehicle at its attachment point [N, NED] (brov2_hybrid/TetherState
#: of brov2_sitl / ardusub_sitl, or the in-process plant's); NaN without a tether (a real vehicle's log).
TETHER_COLUMNS = ("tether_force_north_n", "tether_force_east_n", "tether_force_down_n")

LOG_COLUMNS = (
    ["time_s"] + list(DESIRED_COLUMNS) + list(ATTITUDE_COLUMNS) + list(RATE_COLUMNS)
    + list(LINEAR_CMD_COLUMNS) + list(TAU_COLUMNS) + list(U_COLUMNS) + list(RC_COLUMNS)
    + list(PWM_COLUMNS) + ["omega_d_rad_s", "depth_m", "pilot_axes", "depth_setpoint_m"] + list(TETHER_COLUMNS)
    + ["mode"]
)
# pilot_axes: the angular axes in pilot hands (pilot takeover, open loop) as a bit mask,
# 1 roll + 2 pitch + 4 yaw (0: all with the autopilot).
# depth_setpoint_m: the depth hold's setpoint [m, positive down]; NaN while it is off or has no depth.
# Columns added after the first release, with the value a log written before them reads as:
OPTIONAL_COLUMNS = dict({"pilot_axes": 0.0, "depth_setpoint_m": float("nan")},
                        **{c: float("nan") for c in TETHER_COLUMNS})
NUMERIC_COLUMNS = LOG_COLUMNS[:-1]


def unique_path(path):
    """``path`` if free, else ``stem_1.ext``, ``stem_2.ext``, ...: never overwrite."""
    if not os.path.exists(path):
        return path
    stem, ext = os.path.splitext(path)
    k = 1
    while os.path.exists("%s_%d%s" % (stem, k, ext)):
        k += 1
    return "%s_%d%s" % (stem, k, ext)


class LogWriteError(Brov2Error):
    """The log could not be written (disk full, I/O error); raised once, then writing stops."""


class LogWriter(object):
    """Append complete rows of :data:`LOG_COLUMNS` to a new CSV file.

    ``rows`` counts the rows on disk; ``error`` is None while writing, else the
    :class:`LogWriteError` that stopped it.
    """

    def __init__(self, path):
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        self.path = unique_path(path)
        # 'x' mode: fail rather than overwrite if another writer raced us to the name.
        # Unbuffered: every row reaches the kernel whole in write(), none waits in a buffer.
        self._handle = open(self.path, "xb", buffering=0)
        self.rows = 0
        self.error = None
        self._end_bytes = 0         # file size after the last complete row (or header)
        self._line = io.StringIO()
        self._csv = csv.writer(self._line)
        try:
            self._append(LOG_COLUMNS)
        except OSError as exc:
            self._handle.close()
            raise LogWriteError("log %s: cannot write the header (%s)" % (self.path, _reason(exc)))

    def write(self, row):
        """Write one row: a mapping with every column of :data:`LOG_COLUMNS`.

        Returns True once the row is in the file, False when writing has stopped. The
        write that fails (e.g. disk full) cuts the file back to its last complete row,
        closes it and raises :class:`LogWriteError`; this happens once.
        """
        missing = [c for c in LOG_COLUMNS if c not in row]
        if missing:
            raise InputDataError("log row: missing columns %s" % missing)
        if self.error is not None or self._handle.closed:
            return False
        try:
            self._append([_fmt(row[c]) for c in LOG_COLUMNS])
        except OSError as exc:
            self.error = LogWriteError("log %s: %s after %d rows; logging stopped, the rows written are intact"
                                       % (self.path, _reason(exc), self.rows))
            self._cut_back()
            raise self.error
        self.rows += 1
        return True

    def _append(self, fields):
        self._line.seek(0)
        self._line.truncate()
        self._csv.writerow(fields)
        data = self._line.getvalue().encode("utf-8")
        done = 0
        while done < len(data):   # a short write (disk nearly full) is continued or raises
            done += os.write(self._handle.fileno(), data[done:])
        self._end_bytes += len(data)

    def _cut_back(self):
        """Drop a partly written row, so that every row in the file is complete."""
        try:
            os.ftruncate(self._handle.fileno(), self._end_bytes)
        finally:
            self._handle.close()

    def close(self):
        """Flush the file to disk (fsync) and close it; a second call does nothing."""
        if not self._handle.closed:
            try:
                os.fsync(self._handle.fileno())
            finally:
                self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _reason(exc):
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "disk full (%s)" % os.strerror(exc.errno)
    return "write failed (%s)" % exc


def _fmt(value):
    """Shortest text that reads back to the same float (keeps epoch times to the us)."""
    if isinstance(value, str):
        return value
    return repr(float(value))


def status_row(status, u, override_us, motor_pwm_us, depth_m, tether_force_ned_n=None):
    """One log row from a control tick's status and what the logger heard beside it.

    ``status`` has the fields of ``brov2_hybrid/AutopilotStatus`` (the ROS message, or
    any object with those attributes); ``u`` is the normalised command thruster_allocation
    formed from the tick's tau (ThrusterCommand.u, :class:`TickJoin`; None: NaN); ``override_us`` the
    RC override channels as last sent (from channel 1), ``motor_pwm_us`` the vehicle's
    motor outputs (from output 1), ``depth_m`` [m, positive down], ``tether_force_ned_n`` the
    simulated tether's latest pull (3,) [N, NED] (None: no tether). Unknown values are NaN
    (e.g. a row filled in after a logger restart: only the tick's own status survived).
    """
    row = {"time_s": status.header.stamp.to_sec(), "omega_d_rad_s": status.omega_d_rad_s,
           "mode": status.mode, "depth_m": depth_m, "depth_setpoint_m": getattr(status, "depth_setpoint_m", float("nan")),
           "pilot_axes": sum(1 << k for k, b in enumerate(status.pilot_axes) if b)}
    for columns, values in ((DESIRED_COLUMNS, status.desired_rad), (ATTITUDE_COLUMNS, status.attitude_rad),
                            (RATE_COLUMNS, status.rates_rad_s), (LINEAR_CMD_COLUMNS, status.linear_cmd),
                            (TAU_COLUMNS, status.tau), (U_COLUMNS, [] if u is None else u),
                            (RC_COLUMNS, override_us), (PWM_COLUMNS, motor_pwm_us),
                            (TETHER_COLUMNS, [] if tether_force_ned_n is None else tether_force_ned_n)):
        values = list(values)
        if len(values) < len(columns):
            values += [float("nan")] * (len(columns) - len(values))
        row.update(zip(columns, values))
    return row


class TickJoin(object):
    """Join each tick's log row with the u thruster_allocation formed for that tick.

    The logger hears a tick twice: control_law's status (time_s = the tick's stamp) and,
    a moment later or earlier, thruster_allocation's ThrusterCommand with the same stamp
    and the u it sent. :meth:`row` takes a row (its ``u_*`` columns are set here) and
    :meth:`command` a command; both return the rows now complete, in tick order. A row
    whose command has not come after ``max_pending`` newer rows (allocation down or slow)
    goes out with u NaN; so do the rows older than a tick whose command came (one
    publisher's commands arrive in order). The first command per stamp counts (a re-send
    of a stale tau carries its old stamp). :meth:`flush` returns every row left.
    """

    def __init__(self, max_pending, max_commands=256):
        if int(max_pending) < 0:
            raise ValueError("tick join: max_pending must be >= 0, got %r" % max_pending)
        self.max_pending = int(max_pending)
        self._pending = collections.deque()          # [row, u or None], oldest first
        self._commands = collections.OrderedDict()   # stamp -> u, commands no row has taken yet
        self._max_commands = int(max_commands)

    def row(self, row):
        """Take a tick's log row (keyed by its ``time_s``); returns the rows now complete, in tick order.

        The row is complete at once if its command came first; otherwise the oldest rows beyond
        ``max_pending`` waiting ones go out with u NaN."""
        u = self._commands.pop(row["time_s"], None)
        self._pending.append([row, u])
        if u is not None:
            return self._ready(len(self._pending))
        return self._ready(max(0, len(self._pending) - self.max_pending))

    def command(self, stamp_s, u):
        """Take thruster_allocation's ``u`` (6,) for the tick stamped ``stamp_s`` [s]; returns the rows now
        complete, in tick order: the matching row with its u, and the older rows before it with u NaN.

        A command whose row has not come yet is kept (at most ``max_commands``, oldest dropped)."""
        for k, entry in enumerate(self._pending):
            if entry[0]["time_s"] == stamp_s:
                if entry[1] is None:
                    entry[1] = list(u)
                return self._ready(k + 1)
        if stamp_s not in self._commands:
            self._commands[stamp_s] = list(u)
            while len(self._commands) > self._max_commands:
                self._commands.popitem(last=False)
        return []

    def flush(self):
        """Every row still waiting, in tick order (u NaN where its command never came)."""
        return self._ready(len(self._pending))

    def pending_times(self):
        """time_s of the rows still waiting for their u."""
        return {entry[0]["time_s"] for entry in self._pending}

    def _ready(self, count):
        """The first ``count`` pending rows with their u (NaN where none came)."""
        out = []
        for _ in range(count):
            row, u = self._pending.popleft()
            values = [float("nan")] * len(U_COLUMNS) if u is None else u
            out.append(dict(row, **dict(zip(U_COLUMNS, values))))
        return out


def last_row_time_s(path, tail_bytes=65536):
    """time_s of the last complete row of a log file (None: no row, or no such file).

    Reads the file's tail (``tail_bytes``, doubled until a whole row is in it). A row
    cut short at the end (cannot happen with :class:`LogWriter`; a copied file may end
    so) is skipped.
    """
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            while True:
                start = max(0, size - tail_bytes)
                handle.seek(start)
                lines = handle.read().decode("utf-8", errors="replace").split("\n")
                for line in reversed(lines[1:] if start else lines):   # lines[0] may be cut
                    fields = next(csv.reader([line]), [])
                    if len(fields) == len(LOG_COLUMNS) and fields[0] != "time_s":
                        try:
                            return float(fields[0])
                        except ValueError:
                            continue
                if not start:
                    return None
                tail_bytes *= 2
    except OSError:
        return None


def read_log(path):
    """Read a log CSV into a dict of numpy arrays (``mode`` stays a list of str)."""
    with open_csv(path, "log") as handle:
        reader = csv.DictReader(handle)
        present = set(reader.fieldnames or [])
        missing = [c for c in LOG_COLUMNS if c not in present and c not in OPTIONAL_COLUMNS]
        if missing:
            raise InputDataError("%s:1: not a brov2_hybrid log, missing columns %s" % (path, missing))
        cols = {c: [] for c in LOG_COLUMNS}
        for row in reader:
            for c in NUMERIC_COLUMNS:
                if c not in present:
                    cols[c].append(OPTIONAL_COLUMNS[c])
                    continue
                try:
                    cols[c].append(float(row[c]))
                except (TypeError, ValueError):
                    raise InputDataError("%s:%d: column '%s': expected a number, got %r"
                                         % (path, reader.line_num, c, row[c]))
            cols["mode"].append(row["mode"])
    out = {c: np.array(cols[c]) for c in NUMERIC_COLUMNS}
    out["mode"] = cols["mode"]
    return out
