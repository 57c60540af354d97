"""Rows of an identification log where the vehicle did not get what the log says it got.

On a busy machine the ROS pipeline falls behind: control_law ticks late (gaps in the rows),
the relay's command reaches thruster_allocation late or never (no u for the tick, or the
neutral override after its input timeout: RC channels at neutral while u is not), the
desired state goes stale (mode other than ACTIVE), the attitude stream stalls (attitude
and rates repeated). On such rows the command held over a row interval is not the one the
fit assumes, and a least-squares fit over them is biased, not just noisier. They are left
out of the fits, with a margin in time around them (the thrust lags the command; the
vehicle's state carries the wrong input forward). When too much of an axis's excitation
is disturbed the fit is refused (:class:`FlightDisturbed`): a rerun is needed.
"""
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.errors import InputDataError
from brov2_hybrid.control.autopilot_safety import MODE_ACTIVE, MODES
from brov2_hybrid.tick_log.logfile import ATTITUDE_COLUMNS, RATE_COLUMNS, RC_COLUMNS, U_COLUMNS

#: The control law's modes other than closed loop on fresh inputs (the in-process loop logs its own label).
DEGRADED_MODES = tuple(m for m in MODES if m != MODE_ACTIVE)


class FlightDisturbed(InputDataError):
    """The flight was too disturbed (stale or missing commands) to fit an axis; rerun it."""


@dataclass(frozen=True)
class DisturbanceSettings:
    """The ``disturbance`` section of ``params/identify.yaml`` (see there)."""

    gap_factor: float
    margin_s: float
    rc_neutral_us: float
    rc_tolerance_us: float
    u_neutral_tolerance: float
    excitation_fraction: float
    max_disturbed_share: float
    max_disturbed_share_heave: float
    outlier_sigma: float


@dataclass
class Disturbance:
    """``rows`` (n,) bool: rows left out of the fits (the causes' rows widened by the margin);
    ``causes`` {reason: (n,) bool} before the margin."""

    rows: np.ndarray
    causes: dict

    def describe(self, mask=None):
        """'N rows: reason a, reason b' of the causes (within ``mask`` (n,) bool, default all rows)."""
        mask = np.ones(len(self.rows), bool) if mask is None else mask
        found = ["%d %s" % (int(np.count_nonzero(c & mask)), r) for r, c in self.causes.items() if np.any(c & mask)]
        return ", ".join(found) if found else "none"


def find_disturbed_rows(log, settings, rc_map=None):
    """:class:`Disturbance` of a log (:func:`~brov2_hybrid.tick_log.logfile.read_log` layout).

    Causes: a tick interval longer than ``gap_factor`` times the median ("late tick", both
    rows); a control_law mode other than ACTIVE ("stale desired state or attitude (mode)"); no u for the
    tick ("command not formed"); every RC override channel at ``rc_neutral_us`` while some
    |u| exceeds ``u_neutral_tolerance`` ("neutral override"); with ``rc_map`` (the vehicle's
    :class:`~brov2_hybrid.vehicle.rc.RCMap`), RC override channels that match neither this tick's u nor
    the tick before's to ``rc_tolerance_us`` ("command sent late": the override the vehicle had
    was older); attitude and rates exactly
    repeated from the row before ("stale attitude"). Each is widened by ``margin_s`` [s] both ways.
    """
    t = np.asarray(log["time_s"], dtype=float)
    n = len(t)
    causes = {}
    gap = np.zeros(n, bool)
    if n > 2:
        dt = np.diff(t)
        late = dt > settings.gap_factor * float(np.median(dt))
        gap[:-1] |= late
        gap[1:] |= late
    causes["late tick"] = gap
    mode = log.get("mode")
    if mode is not None and len(mode) == n:
        causes["stale desired state or attitude (mode)"] = np.array([m in DEGRADED_MODES for m in mode])
    if all(c in log for c in U_COLUMNS):
        u = np.column_stack([np.asarray(log[c], dtype=float) for c in U_COLUMNS])
        causes["command not formed (no u)"] = ~np.all(np.isfinite(u), axis=1)
        rc = np.column_stack([np.asarray(log[c], dtype=float) for c in RC_COLUMNS])
        moving = np.nanmax(np.abs(np.where(np.isfinite(u), u, 0.0)), axis=1) > settings.u_neutral_tolerance
        causes["neutral override"] = np.all(rc == settings.rc_neutral_us, axis=1) & moving
        if rc_map is not None:
            causes["command sent late"] = _late_commands(u, rc, rc_map, settings.rc_tolerance_us)
    state = np.column_stack([np.asarray(log[c], dtype=float) for c in ATTITUDE_COLUMNS + RATE_COLUMNS])
    stale = np.zeros(n, bool)
    stale[1:] = np.all(np.diff(state, axis=0) == 0.0, axis=1)
    causes["stale attitude"] = stale
    hit = np.zeros(n, bool)
    for c in causes.values():
        hit |= c
    return Disturbance(widened(t, hit, settings.margin_s), causes)


def _late_commands(u, rc, rc_map, tolerance_us):
    """(n,) bool: rows whose RC channels (n, 6) [us, channels 1-6] are the PWMs of neither u (n, 6) of the
    row nor of the row before (the override goes out a moment before or after the logger hears the tick)."""
    expected = np.full(u.shape, np.nan)
    for k in range(len(u)):
        if np.all(np.isfinite(u[k])):
            for ch, pwm in rc_map.pwm_from_u(np.clip(u[k], -1.0, 1.0)).items():
                if 1 <= ch <= rc.shape[1]:
                    expected[k, ch - 1] = pwm
    used = np.any(np.isfinite(expected), axis=0)
    now = np.all(np.abs(rc[:, used] - expected[:, used]) <= tolerance_us, axis=1)
    before = np.zeros(len(u), bool)
    before[1:] = np.all(np.abs(rc[1:, used] - expected[:-1, used]) <= tolerance_us, axis=1)
    return ~(now | before)


def widened(t_s, rows, margin_s):
    """``rows`` (n,) bool widened by ``margin_s`` [s] before and after each True row (times ``t_s`` sorted)."""
    t = np.asarray(t_s, dtype=float)
    hit = np.nonzero(rows)[0]
    out = np.zeros(len(t), bool)
    if hit.size == 0:
        return out
    lo = np.searchsorted(t, t[hit] - margin_s, side="left")
    hi = np.searchsorted(t, t[hit] + margin_s, side="right")
    delta = np.zeros(len(t) + 1, int)
    np.add.at(delta, lo, 1)
    np.add.at(delta, hi, -1)
    return np.cumsum(delta[:-1]) > 0


def check_share(name, excitation, disturbance, max_share):
    """Raise :class:`FlightDisturbed` when more than ``max_share`` of the ``excitation`` rows (n,) bool of
    axis ``name`` are disturbed; returns the share (0..1)."""
    total = int(np.count_nonzero(excitation))
    if total == 0:
        return 0.0
    share = float(np.count_nonzero(excitation & disturbance.rows)) / total
    if share > max_share:
        raise FlightDisturbed(
            "identify: the flight was disturbed: %.0f %% of the %s excitation (limit %.0f %%) had stale or missing "
            "commands (rows: %s); rerun on a quieter machine"
            % (100.0 * share, name, 100.0 * max_share, disturbance.describe(excitation)))
    return share
