"""Control-tick log CSV: one row per control tick, written by the ROS ``logger`` node
and by the in-process closed loop alike, read by the analysis tools.

Files are never overwritten (:func:`unique_path` adds a suffix); every row is complete
and flushed when written, so a crash loses at most the row being written.
Angles in rad (NED/FRD), rates in rad/s, tau in N / N m (FRD), PWMs in us.
"""
import csv
import os

import numpy as np

from brov2_hybrid.errors import InputDataError, open_csv

LOG_COLUMNS = (
    ["time_s"]
    + ["%s_d_rad" % a for a in ("roll", "pitch", "yaw")]
    + ["%s_rad" % a for a in ("roll", "pitch", "yaw")]
    + ["p_rad_s", "q_rad_s", "r_rad_s"]
    + ["surge_cmd", "sway_cmd", "heave_cmd"]
    + ["tau_x_n", "tau_y_n", "tau_z_n", "tau_k_nm", "tau_m_nm", "tau_n_nm"]
    + ["u_%s" % d for d in ("surge", "sway", "heave", "roll", "pitch", "yaw")]
    + ["rc%d_us" % i for i in range(1, 7)]
    + ["pwm%d_us" % i for i in range(1, 9)]
    + ["omega_d_rad_s", "depth_m", "mode"]
)
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


class LogWriter(object):
    """Append complete, flushed rows of :data:`LOG_COLUMNS` to a new CSV file."""

    def __init__(self, path):
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        self.path = unique_path(path)
        # 'x' mode: fail rather than overwrite if another writer raced us to the name.
        self._handle = open(self.path, "x", newline="")
        self._writer = csv.writer(self._handle)
        self._writer.writerow(LOG_COLUMNS)
        self._handle.flush()
        self.rows = 0

    def write(self, row):
        """Write one row: a mapping with every column of :data:`LOG_COLUMNS`."""
        missing = [c for c in LOG_COLUMNS if c not in row]
        if missing:
            raise InputDataError("log row: missing columns %s" % missing)
        self._writer.writerow([_fmt(row[c]) for c in LOG_COLUMNS])
        self._handle.flush()
        self.rows += 1

    def close(self):
        if not self._handle.closed:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _fmt(value):
    """Shortest text that reads back to the same float (keeps epoch times to the us)."""
    if isinstance(value, str):
        return value
    return repr(float(value))


def read_log(path):
    """Read a log CSV into a dict of numpy arrays (``mode`` stays a list of str)."""
    with open_csv(path, "log") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in LOG_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputDataError("%s:1: not a brov2_hybrid log, missing columns %s" % (path, missing))
        cols = {c: [] for c in LOG_COLUMNS}
        for row in reader:
            for c in NUMERIC_COLUMNS:
                try:
                    cols[c].append(float(row[c]))
                except (TypeError, ValueError):
                    raise InputDataError("%s:%d: column '%s': expected a number, got %r"
                                         % (path, reader.line_num, c, row[c]))
            cols["mode"].append(row["mode"])
    out = {c: np.array(cols[c]) for c in NUMERIC_COLUMNS}
    out["mode"] = cols["mode"]
    return out
