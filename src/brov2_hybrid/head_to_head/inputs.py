"""What the head-to-head flies: its settings (the ``head_to_head`` section of params/analysis.yaml),
the scoring set and the training set.

* Scoring (``brov2-analyze head-to-head``): the dive CSVs given with ``--dive``, else the held-out
  dives, seeded synthetic dives of other kinds than the bundled one (:func:`held_out_dives`: the
  ``dive_synthesis`` recipe of :mod:`brov2_hybrid.analysis.synth_dive` with the keys of each
  ``held_out`` entry changed). The tuning never flies them.
* Training (``--tune``): the bundled dive's first ``train_dive_s`` and one step per axis
  (:func:`training_inputs`).
"""
import dataclasses
import math
import os
from dataclasses import dataclass

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.analysis import synth_dive
from brov2_hybrid.analysis.ardusub_experiment import step_input
from brov2_hybrid.analysis.context import AXES
from brov2_hybrid.dive.dive_csv import Dive, load_dive_csv
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section, load_yaml

#: Recipe keys a held-out entry may not change (the rate is the dive file's, the rest is the entry's own).
_FIXED = ("rate_hz",)


@dataclass(frozen=True)
class HeadToHeadSettings:
    """The ``head_to_head`` section of ``params/analysis.yaml`` (see its comments)."""

    trials: int
    max_attempts: int
    start_depth_m: float
    descent_s: float
    settle_s: float
    held_out: tuple          # ((name, {recipe key: value}), ...)
    train_dive_s: float
    tune_trials: int
    tune_repeats: int
    effort_weights_deg: tuple
    tie_margin: float
    tie_repeats: int
    bound_margin: float
    widen_factor: float
    max_widenings: int
    seed: int
    translations_as_stock: bool = False


def load_settings(path=None):
    """Read :class:`HeadToHeadSettings`; errors name the file and key."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, "head_to_head")
    entries = s.raw("held_out")
    if not isinstance(entries, list) or len(entries) < 2:
        raise ParameterError("%s: expected a list of at least two held-out dives" % s.key("held_out"))
    recipe_keys = set(f.name for f in dataclasses.fields(synth_dive.DiveRecipe)) - set(_FIXED)
    held = []
    for k, entry in enumerate(entries):
        where = "%s[%d]" % (s.key("held_out"), k)
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ParameterError("%s: expected a mapping with a 'name'" % where)
        changes = {key: value for key, value in entry.items() if key != "name"}
        unknown = sorted(set(changes) - recipe_keys)
        if unknown:
            raise ParameterError("%s.%s: not a dive_synthesis key (expected one of %s)"
                                 % (where, unknown[0], ", ".join(sorted(recipe_keys))))
        if "seed" not in changes:
            raise ParameterError("%s.seed: missing key (a held-out dive has its own seed)" % where)
        held.append((entry["name"], changes))
    if len({name for name, _ in held}) != len(held):
        raise ParameterError("%s: two held-out dives share a name" % s.key("held_out"))
    weights = s.raw("effort_weights_deg")
    if not isinstance(weights, list) or not weights:
        raise ParameterError("%s: expected a non-empty list of numbers >= 0" % s.key("effort_weights_deg"))
    return HeadToHeadSettings(
        trials=s.integer("trials", 1), max_attempts=s.integer("max_attempts", 1),
        start_depth_m=s.number("start_depth_m", 0.0), descent_s=s.number("descent_s", 0.0),
        settle_s=s.number("settle_s", 0.0), held_out=tuple(held), train_dive_s=s.positive("train_dive_s"),
        tune_trials=s.integer("tune_trials", 1), tune_repeats=s.integer("tune_repeats", 1),
        effort_weights_deg=tuple(float(w) for w in s.vector("effort_weights_deg", len(weights), minimum=0.0)),
        tie_margin=s.number("tie_margin", 0.0), tie_repeats=s.integer("tie_repeats", 0),
        bound_margin=s.number("bound_margin", 0.0, 0.5), widen_factor=s.number("widen_factor", 1.0, strict_min=True),
        max_widenings=s.integer("max_widenings", 0), seed=s.integer("seed", 0),
        translations_as_stock=s.boolean("translations_as_stock"))


def held_out_dives(settings, recipe=None):
    """[(name, Dive), ...]: the held-out synthetic dives of ``settings`` (from ``recipe``, default the
    ``dive_synthesis`` section). ParameterError naming the entry when a change makes a bad recipe."""
    base = recipe or synth_dive.load_recipe()
    out = []
    for name, changes in settings.held_out:
        values = {}
        for key, value in changes.items():
            old = getattr(base, key)
            values[key] = tuple(float(v) for v in value) if isinstance(old, tuple) else type(old)(value)
        r = dataclasses.replace(base, **values)
        if r.min_move_deg >= r.roll_pitch_limit_deg or not 0.0 <= r.lead_in_s < 0.5 * r.duration_s:
            raise ParameterError("head_to_head.held_out %s: expected min_move_deg < roll_pitch_limit_deg and "
                                 "0 <= lead_in_s < duration_s / 2" % name)
        dive = synth_dive.synthesize(r)
        out.append((name, Dive(dive.t_s, dive.eta2d_rad, dive.u_linear, source="held-out %s (seed %d)"
                               % (name, r.seed))))
    return out


def dive_files(files):
    """[(name, Dive), ...] of the dive CSVs ``files`` (name: the file name without .csv; made unique)."""
    out, names = [], set()
    for path in files:
        name = os.path.splitext(os.path.basename(path))[0]
        while name in names:
            name += "'"
        names.add(name)
        out.append((name, load_dive_csv(path)))
    return out


def first_seconds(dive, seconds):
    """``dive`` cut to its first ``seconds`` [s] (the whole dive when shorter)."""
    keep = dive.t_s - dive.t_s[0] <= seconds + 1e-9
    return Dive(dive.t_s[keep], dive.eta2d_rad[keep], dive.u_linear[keep],
                source="%s, first %g s" % (dive.source, seconds))


def with_descent(dive, descent_s, settle_s, rate_hz=50.0):
    """(plan, t_dive [s]): full heave stick (down) for ``descent_s``, level and still for ``settle_s``,
    then ``dive`` from ``t_dive`` on (its yaw as it is: the plan starts at yaw 0, as a fresh SITL does)."""
    pre = np.arange(0.0, descent_s + settle_s - 1e-9, 1.0 / rate_hz)
    if pre.size == 0:
        return dive, 0.0
    t_dive = descent_s + settle_s
    u = np.zeros((pre.size, 3))
    u[pre < descent_s, 2] = 1.0
    plan = Dive(np.concatenate([pre, t_dive + dive.t_s - dive.t_s[0]]), np.vstack([np.zeros((pre.size, 3)), dive.eta2d_rad]),
                np.vstack([u, dive.u_linear]), source="descent %g s, settle %g s, then %s" % (descent_s, settle_s, dive.source))
    return plan, t_dive


def attitude_only(dive):
    """``dive`` with its surge, sway and heave commands at 0 (an attitude-only input)."""
    return Dive(dive.t_s, dive.eta2d_rad, np.zeros_like(dive.u_linear), source="%s, attitude only" % dive.source)


#: The name of the training sequence in the tuning's journal and flights.
TRAINING = "training sequence"


def training_parts(settings, cs):
    """[(name, Dive), ...]: the bundled dive's first ``train_dive_s`` (``cs``: the ``ardusub`` section,
    whose dive_csv it is) and one step per axis of ``cs.step_deg`` (each from level, yaw 0: it holds 0 for
    ``cs.hold_s`` first)."""
    path = cs.dive_csv if os.path.isabs(cs.dive_csv) else os.path.join(paths.package_root(), cs.dive_csv)
    out = [("bundled", first_seconds(load_dive_csv(path), settings.train_dive_s))]
    for axis in AXES:
        out.append(("%s step" % axis, step_input(axis, math.radians(cs.step_deg[axis]), cs.hold_s, cs.after_step_s)))
    return out


def training_inputs(settings, cs):
    """[(TRAINING, Dive)]: the training set (:func:`training_parts`) flown as one sequence, one part after
    the other (:func:`chained`), so that a trial is one flight on one SITL.

    Flown apart, every part paid its own SITL boot, descent and settling, far longer than a step: most
    of the tuning's time. In the sequence each step starts from where the part before left the vehicle,
    which its hold brings back to level and yaw 0: both sides fly that too."""
    return [(TRAINING, chained(training_parts(settings, cs)))]


def chained(parts):
    """One Dive of the ``parts`` ([(name, Dive), ...]) one after the other: each part's first row one sample
    period (the part before's) after the part before's last."""
    t, eta, u = [], [], []
    start = 0.0
    for _, dive in parts:
        local = dive.t_s - dive.t_s[0]
        t.append(start + local)
        eta.append(dive.eta2d_rad)
        u.append(dive.u_linear)
        step = float(np.median(np.diff(dive.t_s))) if dive.t_s.size > 1 else 0.02
        start = start + local[-1] + step
    return Dive(np.concatenate(t), np.vstack(eta), np.vstack(u),
                source="sequence: " + ", ".join(name for name, _ in parts))


def depth_reference_m(t_s, heave_stick, start_depth_m, rate_m_s):
    """The depth both pilots are asked to hold [m, positive down]: the start depth plus the heave
    stick (+ down, [-1, 1]) times ``rate_m_s`` integrated over time (rows of the dive in force,
    sample and hold), as ALT_HOLD's climb-rate stick and the hybrid's depth hold take it."""
    t = np.asarray(t_s, dtype=float)
    stick = np.clip(np.asarray(heave_stick, dtype=float), -1.0, 1.0)
    step = np.concatenate([[0.0], np.diff(t) * stick[:-1]]) if t.size else t
    return start_depth_m + rate_m_s * np.cumsum(step)
