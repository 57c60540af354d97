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

The file is UTF-8 text (a byte-order mark, as spreadsheet programs write for "CSV
UTF-8", is accepted). The whole file is validated before anything is used: a byte
that is not UTF-8, a missing or repeated column, a row with another number of fields
than the header, a non-number, NaN, a time that does not increase, a command outside
[-1, 1] or a desired pitch beyond +-``max_abs_pitch_deg`` raises
:class:`~brov2_hybrid.errors.InputDataError` naming the file, line and column and
quoting the field as written (``got '1.0000001'``).

The pitch limit (``csv_reader.max_abs_pitch_deg`` in ``params/autopilot.yaml``) keeps
the desired attitude away from gimbal lock, where the control law's J2 is singular and
it refuses to compute (``kinematics.GIMBAL_LOCK_COS``); a limit at or beyond that
angle is refused. Recorded desired states (bags) go through the same checks: one
:class:`DiveRows` validates every dive row, whatever its source
(:mod:`brov2_hybrid.dive.playback` builds bag dives with it).
"""
import csv
import math
from dataclasses import dataclass

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.errors import InputDataError, ParameterError
from brov2_hybrid.csv_input import open_csv
from brov2_hybrid.validate import as_finite
from brov2_hybrid.physics.kinematics import GIMBAL_LOCK_COS
from brov2_hybrid.params import load_yaml
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, LINEAR_DOF_NAMES

ANGLE_AXES = ANGULAR_DOF_NAMES
LINEAR_COLUMNS = LINEAR_DOF_NAMES
#: params/autopilot.yaml section and key of the default desired-pitch limit
PITCH_LIMIT_SECTION, PITCH_LIMIT_KEY = "csv_reader", "max_abs_pitch_deg"
#: |pitch| at which the control law refuses (J2 singular) [deg], about 89.94
GIMBAL_LOCK_PITCH_DEG = math.degrees(math.acos(GIMBAL_LOCK_COS))


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
        """Time from the first to the last row [s]."""
        return float(self.t_s[-1] - self.t_s[0])

    def sample(self, t_s):
        """Row in force at time ``t_s`` (the last row with time <= t_s; no lookahead).

        Returns (eta2d (3,), u_linear (3,)); before the first row, the first row.
        """
        i = max(int(np.searchsorted(self.t_s, t_s, side="right")) - 1, 0)
        return self.eta2d_rad[i], self.u_linear[i]


def check_pitch_limit(value, name=PITCH_LIMIT_KEY):
    """Return ``value`` [deg] as a float if it is a usable desired-pitch limit.

    Raises ParameterError unless 0 < value < :data:`GIMBAL_LOCK_PITCH_DEG`.
    """
    try:
        limit = as_finite(value, name)
    except ValueError as exc:
        raise ParameterError(str(exc))
    if not 0.0 < limit < GIMBAL_LOCK_PITCH_DEG:
        raise ParameterError("%s: expected a pitch limit in (0, %.2f) deg (the control law refuses pitch "
                             "within %.2f deg of +-90, gimbal lock), got %r"
                             % (name, GIMBAL_LOCK_PITCH_DEG, 90.0 - GIMBAL_LOCK_PITCH_DEG, value))
    return limit


def default_max_abs_pitch_deg(path=None):
    """The desired-pitch limit [deg] of ``params/autopilot.yaml`` (csv_reader.max_abs_pitch_deg)."""
    path = path or paths.params_path("autopilot.yaml")
    section = load_yaml(path).get(PITCH_LIMIT_SECTION)
    if not isinstance(section, dict) or PITCH_LIMIT_KEY not in section:
        raise ParameterError("%s: missing key %s.%s" % (path, PITCH_LIMIT_SECTION, PITCH_LIMIT_KEY))
    return check_pitch_limit(section[PITCH_LIMIT_KEY], "%s:%s.%s" % (path, PITCH_LIMIT_SECTION, PITCH_LIMIT_KEY))


def _number(where, kind, name, raw):
    """``raw`` (text of a field, or a recorded number) as a finite float; errors quote it as given."""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise InputDataError("%s: %s '%s': expected a number, got %r" % (where, kind, name, raw))
    if not math.isfinite(value):
        raise InputDataError("%s: %s '%s': expected a finite number, got %r" % (where, kind, name, raw))
    return value


class DiveRows(object):
    """The one validation of dive samples, from a CSV or from recorded desired states.

    Parameters
    ----------
    source : str
        The dive's origin (file path, ``run.bag:/topic``), kept as :attr:`Dive.source`.
    max_abs_pitch_deg : float, optional
        Largest accepted |desired pitch| [deg]; default :func:`default_max_abs_pitch_deg`.
    """

    def __init__(self, source, max_abs_pitch_deg=None):
        self.source = source
        self.max_abs_pitch_deg = (default_max_abs_pitch_deg() if max_abs_pitch_deg is None
                                  else check_pitch_limit(max_abs_pitch_deg))
        self._rows = []
        self._last_time = None          # (value, as given)

    def add(self, where, kind, fields):
        """Check and keep one sample.

        Parameters
        ----------
        where : str
            Location named in errors (``dive.csv:13``, ``run.bag:/topic: message 3``).
        kind : str
            What a field is called there (``column``, ``field``).
        fields : sequence of 7 (name, raw, scale)
            Time [s], roll, pitch, yaw, surge, sway, heave: the field's name, its text
            or recorded value, and the factor to SI (rad for angles).
        """
        values = [_number(where, kind, name, raw) * scale for name, raw, scale in fields]
        t_name, t_raw, _ = fields[0]
        if self._last_time is not None and values[0] <= self._last_time[0]:
            raise InputDataError("%s: %s '%s': expected time to increase, got %r after %r"
                                 % (where, kind, t_name, t_raw, self._last_time[1]))
        self._last_time = (values[0], t_raw)
        p_name, p_raw, _ = fields[2]
        in_deg = p_name.endswith("_deg")
        pitch_deg = float(p_raw) if in_deg else math.degrees(values[2])
        if abs(pitch_deg) > self.max_abs_pitch_deg:
            raise InputDataError("%s: %s '%s': expected a desired pitch within +-%g deg (%s; the control law "
                                 "is singular at +-90 deg), got %r%s"
                                 % (where, kind, p_name, self.max_abs_pitch_deg, PITCH_LIMIT_KEY, p_raw,
                                    "" if in_deg else " (%.2f deg)" % pitch_deg))
        for (name, raw, _), value in zip(fields[4:], values[4:]):
            if abs(value) > 1.0:
                raise InputDataError("%s: %s '%s': expected a command in [-1, 1], got %r" % (where, kind, name, raw))
        self._rows.append(values)

    def dive(self, rebase_time=False, empty_message="no data rows"):
        """The :class:`Dive` of the rows added (time starting at 0 when ``rebase_time``)."""
        if not self._rows:
            raise InputDataError("%s: %s" % (self.source, empty_message))
        data = np.array(self._rows)
        t_s = data[:, 0] - data[0, 0] if rebase_time else data[:, 0]
        return Dive(t_s=t_s, eta2d_rad=data[:, 1:4], u_linear=data[:, 4:7], source=self.source)


def _angle_columns(fields, path):
    out = []
    for axis in ANGLE_AXES:
        if axis + "_deg" in fields and axis + "_rad" in fields:
            raise InputDataError("%s:1: both '%s_deg' and '%s_rad'; expected one of them; header is %s"
                                 % (path, axis, axis, fields))
        if axis + "_deg" in fields:
            out.append((axis + "_deg", math.pi / 180.0))
        elif axis + "_rad" in fields:
            out.append((axis + "_rad", 1.0))
        else:
            raise InputDataError("%s:1: missing column '%s_deg' (or '%s_rad'); header is %s"
                                 % (path, axis, axis, fields))
    return out


def _check_header(fields, path):
    """Column specs [(name, index, scale)] of time, roll, pitch, yaw, surge, sway, heave."""
    if not any(fields):
        raise InputDataError("%s:1: blank first line, expected the header row (%s)"
                             % (path, ",".join(("time_s",) + tuple(a + "_deg" for a in ANGLE_AXES) + LINEAR_COLUMNS)))
    used = set(("time_s",) + LINEAR_COLUMNS + tuple(a + u for a in ANGLE_AXES for u in ("_deg", "_rad")))
    seen = {}
    for k, name in enumerate(fields):
        if name in used and name in seen:
            raise InputDataError("%s:1: column '%s' appears twice (fields %d and %d); header is %s"
                                 % (path, name, seen[name] + 1, k + 1, fields))
        seen[name] = k
    if "time_s" not in seen:
        raise InputDataError("%s:1: missing column 'time_s'; header is %s" % (path, fields))
    specs = [("time_s", 1.0)] + _angle_columns(seen, path)
    for col in LINEAR_COLUMNS:
        if col not in seen:
            raise InputDataError("%s:1: missing column '%s'; header is %s" % (path, col, fields))
        specs.append((col, 1.0))
    return [(name, seen[name], scale) for name, scale in specs]


def load_dive_csv(path, max_abs_pitch_deg=None):
    """Read and validate a dive CSV (see module docstring); return a :class:`Dive`.

    ``max_abs_pitch_deg``: largest accepted |desired pitch| [deg]; by default the
    ``csv_reader.max_abs_pitch_deg`` of ``params/autopilot.yaml``.
    """
    rows = DiveRows(path, max_abs_pitch_deg)
    with open_csv(path, "dive CSV") as lines:
        reader = csv.reader(lines)
        try:
            header = next(reader, None)
            if header is None:
                raise InputDataError("%s:1: empty file, expected a header row" % path)
            fields = [f.strip() for f in header]
            specs = _check_header(fields, path)
            for record in reader:
                if not record:
                    continue                # blank line
                where = "%s:%d" % (path, reader.line_num)
                if len(record) != len(fields):
                    raise InputDataError("%s: expected %d fields as in the header, got %d (a decimal comma, "
                                         "or a missing or extra separator?)" % (where, len(fields), len(record)))
                rows.add(where, "column", [(name, record[k], scale) for name, k, scale in specs])
        except csv.Error as exc:
            raise InputDataError("%s:%d: not a valid CSV line (%s)" % (path, reader.line_num, exc))
    return rows.dive(empty_message="no data rows after the header")


def write_dive_csv(path, t_s, eta2d_rad, u_linear, precision=6):
    """Write a dive CSV with degree columns (the schema above)."""
    t_s = np.asarray(t_s, dtype=float)
    deg = np.degrees(np.asarray(eta2d_rad, dtype=float))
    lin = np.asarray(u_linear, dtype=float)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["time_s"] + ["%s_deg" % a for a in ANGLE_AXES] + list(LINEAR_COLUMNS))
        fmt = "%%.%df" % precision
        for k in range(len(t_s)):
            writer.writerow([fmt % t_s[k]] + [fmt % v for v in deg[k]] + [fmt % v for v in lin[k]])
