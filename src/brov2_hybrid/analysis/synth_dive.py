"""Synthesize the bundled 6-DOF "AR pilot dive" (the paper's pilot data are not public).

Recipe (``dive_synthesis`` in ``params/analysis.yaml``, seeded, so the file is
reproducible bit for bit on one numpy version):

* roll and pitch: holds of ``hold_s`` alternating with minimum-jerk moves
  (s = 10 x^3 - 15 x^4 + 6 x^5) to a new target: back to level with
  ``level_probability``, else a random angle at least ``min_move_deg`` from level within
  +-``roll_pitch_limit_deg``. A move lasts 1.875 |move| / peak rate, the peak rate drawn
  from ``peak_rate_deg_s``.
* yaw: the same with heading changes of ``yaw_turn_deg`` (sign random, flipped when
  the heading would leave +-``yaw_limit_deg``).
* tremor: each angle gets low-passed Gaussian noise of std ``tremor_deg``
  (zero-phase 2nd-order Butterworth at ``tremor_cutoff_hz``).
* surge, sway, heave: off for ``linear_off_s``, then ramp (``linear_ramp_s``, minimum
  jerk) to a plateau of random sign and magnitude in ``linear_level`` held for
  ``linear_on_s``, and back.
* roll and pitch are finally clipped to +-``roll_pitch_bound_deg``.
* ``lead_in_s`` of level, zero-command hold at both ends.

Output: ``time_s, roll_deg, pitch_deg, yaw_deg, surge, sway, heave`` at ``rate_hz``
(:func:`brov2_hybrid.dive.dive_csv.write_dive_csv`). Angles NED/FRD, heave + down.
"""
import argparse
import os
from dataclasses import dataclass

import numpy as np
from scipy import signal as sps

from brov2_hybrid import paths
from brov2_hybrid.dive.dive_csv import Dive, write_dive_csv
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid.analysis.settings import DEFAULT_ANALYSIS_FILE
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, LINEAR_DOF_NAMES

DEFAULT_OUTPUT = os.path.join("data", "dives", "ar_pilot_dive.csv")
#: Peak speed of a minimum-jerk move over its mean speed.
MIN_JERK_PEAK = 1.875


@dataclass(frozen=True)
class DiveRecipe:
    """Settings of :func:`synthesize` (angles in degrees as in the YAML)."""

    seed: int
    duration_s: float
    rate_hz: float
    lead_in_s: float
    roll_pitch_limit_deg: float
    roll_pitch_bound_deg: float
    min_move_deg: float
    level_probability: float
    yaw_limit_deg: float
    yaw_turn_deg: tuple
    peak_rate_deg_s: tuple
    hold_s: tuple
    linear_level: tuple
    linear_off_s: tuple
    linear_on_s: tuple
    linear_ramp_s: float
    tremor_deg: float
    tremor_cutoff_hz: float


def load_recipe(path=None):
    """Read the ``dive_synthesis`` section of ``params/analysis.yaml``."""
    path = path or paths.params_path(DEFAULT_ANALYSIS_FILE)
    s = Section(load_yaml(path), path, "dive_synthesis")

    def span(key):
        lo, hi = s.vector(key, 2)
        if not 0.0 <= lo <= hi:
            raise ParameterError("%s:dive_synthesis.%s: expected [low, high] with 0 <= low <= high" % (path, key))
        return (float(lo), float(hi))

    p = s.finite("level_probability")
    if not 0.0 <= p <= 1.0:
        raise ParameterError("%s:dive_synthesis.level_probability: expected 0..1, got %r" % (path, p))
    recipe = DiveRecipe(
        seed=s.integer("seed", 0), duration_s=s.positive("duration_s"), rate_hz=s.positive("rate_hz"),
        lead_in_s=s.finite("lead_in_s"), roll_pitch_limit_deg=s.positive("roll_pitch_limit_deg"),
        roll_pitch_bound_deg=s.positive("roll_pitch_bound_deg"),
        min_move_deg=s.positive("min_move_deg"), level_probability=p,
        yaw_limit_deg=s.positive("yaw_limit_deg"), yaw_turn_deg=span("yaw_turn_deg"),
        peak_rate_deg_s=span("peak_rate_deg_s"), hold_s=span("hold_s"), linear_level=span("linear_level"),
        linear_off_s=span("linear_off_s"), linear_on_s=span("linear_on_s"),
        linear_ramp_s=s.positive("linear_ramp_s"), tremor_deg=s.finite("tremor_deg"),
        tremor_cutoff_hz=s.positive("tremor_cutoff_hz"))
    if recipe.min_move_deg >= recipe.roll_pitch_limit_deg:
        raise ParameterError("%s:dive_synthesis.min_move_deg: expected < roll_pitch_limit_deg" % path)
    if not 0.0 <= recipe.lead_in_s < 0.5 * recipe.duration_s:
        raise ParameterError("%s:dive_synthesis.lead_in_s: expected 0 <= lead_in_s < duration_s / 2" % path)
    return recipe


def _min_jerk(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * x * (10.0 - 15.0 * x + 6.0 * x * x)


class _Track(object):
    """A piecewise signal on a fixed grid: holds and minimum-jerk transitions."""

    def __init__(self, t):
        self.t = t
        self.y = np.zeros_like(t)

    def move(self, t_start, duration, y_from, y_to):
        """From t_start: minimum-jerk move y_from -> y_to over ``duration``, then hold y_to."""
        after = self.t >= t_start
        self.y[after] = y_from + (y_to - y_from) * _min_jerk((self.t[after] - t_start) / duration)


def _angle_track(t, rng, r, t_begin, t_end, next_target, end_level):
    track = _Track(t)
    now, value = t_begin, 0.0
    return_rate = 0.5 * (r.peak_rate_deg_s[0] + r.peak_rate_deg_s[1])
    while True:
        now += rng.uniform(*r.hold_s)
        target = next_target(value)
        duration = MIN_JERK_PEAK * abs(target - value) / rng.uniform(*r.peak_rate_deg_s)
        back = MIN_JERK_PEAK * abs(target) / return_rate if end_level else 0.0
        if now + duration + back + r.hold_s[0] > t_end:
            break
        track.move(now, duration, value, target)
        now, value = now + duration, target
    if end_level and value != 0.0:  # back to level before the final hold
        duration = MIN_JERK_PEAK * abs(value) / return_rate
        track.move(max(now + r.hold_s[0], t_end - duration), duration, value, 0.0)
    return track.y


def _linear_track(t, rng, r, t_begin, t_end):
    track = _Track(t)
    now = t_begin
    while True:
        now += rng.uniform(*r.linear_off_s)
        on = rng.uniform(*r.linear_on_s)
        if now + 2.0 * r.linear_ramp_s + on > t_end:
            break
        level = rng.choice([-1.0, 1.0]) * rng.uniform(*r.linear_level)
        track.move(now, r.linear_ramp_s, 0.0, level)
        track.move(now + r.linear_ramp_s + on, r.linear_ramp_s, level, 0.0)
        now += 2.0 * r.linear_ramp_s + on
    return track.y


def synthesize(recipe):
    """Generate the dive of ``recipe``: a :class:`~brov2_hybrid.dive.dive_csv.Dive` (rad inside)."""
    r = recipe
    rng = np.random.default_rng(r.seed)
    t = np.round(np.arange(0.0, r.duration_s + 0.5 / r.rate_hz, 1.0 / r.rate_hz), 9)
    t_begin, t_end = r.lead_in_s, r.duration_s - r.lead_in_s
    lim = r.roll_pitch_limit_deg

    def roll_pitch_target(value):
        if value != 0.0 and rng.uniform() < r.level_probability:
            return 0.0
        while True:
            target = rng.uniform(-lim, lim)
            if abs(target) >= r.min_move_deg and abs(target - value) >= r.min_move_deg:
                return target

    def yaw_target(value):
        turn = rng.choice([-1.0, 1.0]) * rng.uniform(*r.yaw_turn_deg)
        if abs(value + turn) > r.yaw_limit_deg:
            turn = -turn
        return value + turn

    angles = np.column_stack([
        _angle_track(t, rng, r, t_begin, t_end, roll_pitch_target, True),
        _angle_track(t, rng, r, t_begin, t_end, roll_pitch_target, True),
        _angle_track(t, rng, r, t_begin, t_end, yaw_target, False),
    ])
    if r.tremor_deg > 0.0:
        b, a = sps.butter(2, r.tremor_cutoff_hz / (0.5 * r.rate_hz))
        noise = sps.filtfilt(b, a, rng.standard_normal(angles.shape), axis=0)
        noise *= r.tremor_deg / np.std(noise, axis=0)
        if r.lead_in_s > 0.0:  # fade the tremor in and out inside the lead-in holds
            fade = 0.5 * r.lead_in_s
            noise *= (_min_jerk((t - fade) / fade) * _min_jerk((t_end + fade - t) / fade))[:, None]
        angles += noise
        angles[:, :2] = np.clip(angles[:, :2], -r.roll_pitch_bound_deg, r.roll_pitch_bound_deg)
    linear = np.column_stack([_linear_track(t, rng, r, t_begin, t_end) for _ in range(3)])
    return Dive(t_s=t, eta2d_rad=np.radians(angles), u_linear=linear, source="synthesized seed %d" % r.seed)


def dive_statistics(dive):
    """Ranges and peak rates per DOF (for data/dives/README.md and the tests)."""
    deg = np.degrees(dive.eta2d_rad)
    rates = np.diff(deg, axis=0) / np.diff(dive.t_s)[:, None]
    out = {"duration_s": dive.duration_s, "rows": len(dive)}
    for k, name in enumerate(ANGULAR_DOF_NAMES):
        out[name + "_min_deg"] = float(np.min(deg[:, k]))
        out[name + "_max_deg"] = float(np.max(deg[:, k]))
        out[name + "_peak_rate_deg_s"] = float(np.max(np.abs(rates[:, k])))
    for k, name in enumerate(LINEAR_DOF_NAMES):
        out[name + "_min"] = float(np.min(dive.u_linear[:, k]))
        out[name + "_max"] = float(np.max(dive.u_linear[:, k]))
    return out


def main(argv=None):
    """Command line: synthesize the dive from the recipe (``--params``) and write it (``--out``, default
    the bundled dive CSV); prints the ranges and peak rates per DOF and returns 0."""
    parser = argparse.ArgumentParser(description="Synthesize the bundled AR pilot dive CSV.")
    parser.add_argument("--out", default=os.path.join(paths.package_root(), DEFAULT_OUTPUT),
                        help="output CSV (default: %(default)s)")
    parser.add_argument("--params", default=None, help="analysis YAML with a dive_synthesis section")
    args = parser.parse_args(argv)
    dive = synthesize(load_recipe(args.params))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    write_dive_csv(args.out, dive.t_s, dive.eta2d_rad, dive.u_linear, precision=3)
    stats = dive_statistics(dive)
    print("wrote %s: %d rows, %.1f s" % (args.out, stats["rows"], stats["duration_s"]))
    for name in ANGULAR_DOF_NAMES:
        print("  %-5s %7.2f .. %7.2f deg, peak rate %5.1f deg/s" % (
            name, stats[name + "_min_deg"], stats[name + "_max_deg"], stats[name + "_peak_rate_deg_s"]))
    for name in LINEAR_DOF_NAMES:
        print("  %-5s %6.3f .. %6.3f" % (name, stats[name + "_min"], stats[name + "_max"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
