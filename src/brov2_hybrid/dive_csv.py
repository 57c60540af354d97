"""Dive CSV: the pilot's desired attitude and open-loop commands over time.

Schema (header row required, column order free, extra columns ignored):

=============  ======================================================
column         meaning
=============  ======================================================
``time_s``     time from the start of the dive [s], strictly increasing
``roll_deg``   desired roll, NED/FRD (``roll_rad`` also accepted)
``pitch_deg``  desired pitch (``pitch_rad`` also accepted)
``yaw_deg``    desired yaw / heading (``yaw_rad`` also accepted)
``surge``      open-loop surge command in [-1, 1], + ahead
``sway``       open-loop sway command in [-1, 1], + right
``heave``      open-loop heave command in [-1, 1], + DOWN (FRD)
=============  ======================================================

The whole file is validated before anything is used: a missing column, a non-number,
NaN, a time that does not increase or a command outside [-1, 1] raises
:class:`~brov2_hybrid.errors.InputDataError` naming the file, line and column.
"""
import csv
import math
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.errors import InputDataError, open_csv

ANGLE_AXES = ("roll", "pitch", "yaw")
LINEAR_COLUMNS = ("surge", "sway", "heave")


@dataclass
class Dive:
    """A validated dive: t_s (n,), eta2d_rad (n, 3), u_linear (n, 3); ``source`` path."""

    t_s: np.ndarray
    eta2d_rad: np.ndarray
    u_linear: np.ndarray
    source: str = ""

    def __len__(self):
        return len(self.t_s)

    @property
    def duration_s(self):
        return float(self.t_s[-1] - self.t_s[0])

    def sample(self, t_s):
        """Row in force at time ``t_s`` (the last row with time <= t_s; no lookahead).

        Returns (eta2d (3,), u_linear (3,)); before the first row, the first row.
        """
        i = max(int(np.searchsorted(self.t_s, t_s, side="right")) - 1, 0)
        return self.eta2d_rad[i], self.u_linear[i]


def _angle_columns(fields, path):
    out = []
    for axis in ANGLE_AXES:
        if axis + "_deg" in fields:
            out.append((axis + "_deg", math.pi / 180.0))
        elif axis + "_rad" in fields:
            out.append((axis + "_rad", 1.0))
        else:
            raise InputDataError("%s:1: missing column '%s_deg' (or '%s_rad'); header is %s"
                                 % (path, axis, axis, fields))
    return out


def load_dive_csv(path):
    """Read and validate a dive CSV (see module docstring); return a :class:`Dive`."""
    with open_csv(path, "dive CSV") as handle:
        reader = csv.DictReader(handle)
        fields = [f.strip() for f in (reader.fieldnames or [])]
        if not fields:
            raise InputDataError("%s:1: empty file, expected a header row" % path)
        reader.fieldnames = fields
        if "time_s" not in fields:
            raise InputDataError("%s:1: missing column 'time_s'; header is %s" % (path, fields))
        angles = _angle_columns(fields, path)
        for col in LINEAR_COLUMNS:
            if col not in fields:
                raise InputDataError("%s:1: missing column '%s'; header is %s" % (path, col, fields))
        rows = []
        last_t = -math.inf
        for row in reader:
            line = reader.line_num

            def number(col):
                raw = row.get(col)
                try:
                    value = float(raw)
                except (TypeError, ValueError):
                    raise InputDataError("%s:%d: column '%s': expected a number, got %r" % (path, line, col, raw))
                if not math.isfinite(value):
                    raise InputDataError("%s:%d: column '%s': expected a finite number, got %r" % (path, line, col, raw))
                return value

            t = number("time_s")
            if t <= last_t:
                raise InputDataError("%s:%d: column 'time_s': expected time to increase, got %g after %g"
                                     % (path, line, t, last_t))
            last_t = t
            eta = [number(col) * scale for col, scale in angles]
            lin = []
            for col in LINEAR_COLUMNS:
                value = number(col)
                if abs(value) > 1.0:
                    raise InputDataError("%s:%d: column '%s': expected a command in [-1, 1], got %g"
                                         % (path, line, col, value))
                lin.append(value)
            rows.append([t] + eta + lin)
    if not rows:
        raise InputDataError("%s: no data rows after the header" % path)
    data = np.array(rows)
    return Dive(t_s=data[:, 0], eta2d_rad=data[:, 1:4], u_linear=data[:, 4:7], source=path)


def write_dive_csv(path, t_s, eta2d_rad, u_linear, precision=6):
    """Write a dive CSV with degree columns (the schema above)."""
    t_s = np.asarray(t_s, dtype=float)
    deg = np.degrees(np.asarray(eta2d_rad, dtype=float))
    lin = np.asarray(u_linear, dtype=float)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["time_s", "roll_deg", "pitch_deg", "yaw_deg", "surge", "sway", "heave"])
        fmt = "%%.%df" % precision
        for k in range(len(t_s)):
            writer.writerow([fmt % t_s[k]] + [fmt % v for v in deg[k]] + [fmt % v for v in lin[k]])
