"""``brov2-analyze head-to-head --tune`` on real ArduSub: both sides tuned on the training set with the
same budget (:func:`tune_and_store`), the optima stored where the scoring reads them.

The search spaces are ``params/head_to_head/search_space.yaml`` (:func:`load_knobs`). A trial's
figures are its flight of the training set (:func:`~.inputs.training_inputs`: the bundled dive's
first seconds and one step per axis, flown as one sequence): true-attitude IAE [deg s] and motor effort [s]. A trial
whose flights were refused on every attempt is told to the optimizer as failed, never scored. ArduSub
and each hybrid placement get ``tune_trials`` trials per effort weighting; the candidates flown for one
weighting are told to the next for free.
"""
import collections
import glob
import hashlib
import json
import os
import re
import sys

from brov2_hybrid.analysis.context import write_csv
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.head_to_head import inputs, stored, tune
from brov2_hybrid.head_to_head.flights import ARDUSUB, HYBRID, FlightJob, fresh_sitl_settings, run_flight_job
from brov2_hybrid.params import Section, load_yaml

SPACE_FILE = "search_space.yaml"
#: The tuning's flight journal in the output folder (:class:`FlightJournal`): a rerun into it resumes.
JOURNAL = "tune_journal.jsonl"


def load_knobs(path=None):
    """{"ardusub": [Knob, ...], "hybrid": [Knob, ...]} of the search-space file; errors name file and key."""
    path = path or os.path.join(stored.folder(), SPACE_FILE)
    top = Section(load_yaml(path), path, None)
    allowed = set(stored.configure_keywords())
    out = {}
    for side in (ARDUSUB, HYBRID):
        sec = top.sub(side)
        knobs = []
        for name in sec.data:
            k = sec.sub(name)
            if side == HYBRID and name not in allowed:
                raise ParameterError("%s: not an option of HybridController.configure" % k.key(""))
            if "choices" in k:
                knobs.append(tune.Knob(name, choices=tuple(k.raw("choices"))))
                continue
            log = k.boolean("log") if "log" in k else True
            knob = tune.Knob(name, k.finite("low"), k.finite("high"), log, k.finite("hard_low"), k.finite("hard_high"))
            if not (knob.hard_low <= knob.low < knob.high <= knob.hard_high and (knob.low > 0 or not log)):
                raise ParameterError("%s: expected hard_low <= low < high <= hard_high, and low > 0 on a log scale"
                                     % k.key(""))
            knobs.append(knob)
        out[side] = knobs
    return out


def placement_knobs(knobs, place):
    """The ``knobs`` searched for a side in ``place`` (a :class:`~.stored.Placement`; None: ArduSub): all of
    them, but on the vehicle (:data:`~.stored.ON_VEHICLE`) none the on-board script does not run
    (:data:`~brov2_hybrid.onboard.lua_script.NOT_ON_BOARD`)."""
    if place is None or place.name not in stored.ON_VEHICLE:
        return list(knobs)
    from brov2_hybrid.onboard.lua_script import NOT_ON_BOARD
    return [k for k in knobs if k.name not in NOT_ON_BOARD]


#: omega-limit's table (``make reproduce``): the highest safe omega_d per loop condition.
OMEGA_LIMIT_TABLE = os.path.join("docs", "tables", "omega_limit.json")
#: The hybrid's knob the safety cap holds.
OMEGA_KNOB = "omega_d_rad_s"


def safe_omega_d(place, table_path=None):
    """The highest omega_d [rad/s] omega-limit's table (default :data:`OMEGA_LIMIT_TABLE`) finds safe for the
    loop of ``place`` (a :class:`~.stored.Placement`): the best of the table's conditions with the
    placement's telemetry rate and delays (with or without the delay compensation, which the tuner may
    turn on); None when no condition matches or the table is missing."""
    import json
    from brov2_hybrid import paths
    path = table_path or os.path.join(paths.package_root(), OMEGA_LIMIT_TABLE)
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        table = json.load(handle)
    loop = (place.telemetry_rate_hz, place.telemetry_delay_s, place.command_delay_s)
    found = [table["safe_omega_d"].get(c["name"]) for c in table["conditions"]
             if (c["telemetry_rate_hz"], c["telemetry_delay_s"], c["command_delay_s"]) == loop]
    found = [v for v in found if v is not None]
    return max(found) if found else None


def capped_knobs(knobs, limit_rad_s):
    """``knobs`` with the omega_d knob's range and hard limit held to ``limit_rad_s`` (None: as they are):
    the tuner then never flies, nor stores, an omega_d the project's own omega-limit finds unsafe for the
    placement. Brov2Error when the cap leaves the knob no range."""
    if limit_rad_s is None:
        return list(knobs)
    out = []
    for k in knobs:
        if k.name == OMEGA_KNOB and not k.choices and k.hard_high > limit_rad_s:
            if not k.low < limit_rad_s:
                raise Brov2Error("knob %s: omega-limit's safe %g rad/s is not above the search's low %g"
                                 % (k.name, limit_rad_s, k.low))
            k = tune.Knob(k.name, k.low, min(k.high, limit_rad_s), k.log, k.hard_low, limit_rad_s)
        out.append(k)
    return out


def _start(values, knobs):
    """The stored setting's values of the knobs, clipped into their ranges (the first trial); a choice the
    knob no longer offers becomes its first choice."""
    start = {}
    for k in knobs:
        if k.name in values:
            v = values[k.name]
            if k.choices:
                start[k.name] = v if v in k.choices else k.choices[0]
            else:
                start[k.name] = min(max(float(v), k.low), k.high)
    return start


class FlightJournal(object):
    """The tuning's flights, each appended to ``path`` (JSON lines) as its batch lands, so that an
    interrupted ``--tune`` resumes where it stopped.

    Optuna's TPE sampler with a fixed seed asks the same trials again when it is told the same figures
    in the same order; so a rerun is served every flight the journal holds (the n-th flight of a side,
    setting and training input is the n-th one journaled), replays the interrupted run's trials without
    flying them, and flies on from the first flight the journal lacks. The first line holds a
    fingerprint of everything the figures depend on (settings, search space, start values, loop,
    ArduSub's build, the physics: :func:`~brov2_hybrid.sim.plant.physics_signature`); a journal written with another refuses to resume, naming both.

    A flight is journaled as its two figures (training IAE [deg s] and motor effort [s]) or null
    (refused on every attempt). A last line cut short by the interruption is dropped.
    """

    def __init__(self, path, fingerprint):
        self.path, self.fingerprint = path, fingerprint
        self.rows, self.replayed, self.flown = {}, 0, 0
        self._seen = collections.Counter()
        if not os.path.exists(path):
            with open(path, "w") as handle:
                handle.write(json.dumps({"fingerprint": fingerprint}) + "\n")
            return
        with open(path) as handle:
            text = handle.read()
        if text and not text.endswith("\n"):          # the last line, cut short when the run was stopped
            text = text[:text.rfind("\n") + 1]
            with open(path, "w") as handle:
                handle.write(text)
        lines = text.split("\n")
        try:
            header = json.loads(lines[0])
        except ValueError:
            header = None
        if not isinstance(header, dict) or header.get("fingerprint") != fingerprint:
            raise Brov2Error("%s: a tuning journal of other settings (fingerprint %s, this tuning's %s): remove it, or "
                             "tune into another --out" % (path, header.get("fingerprint") if isinstance(header, dict)
                                                          else "unreadable", fingerprint))
        for k, line in enumerate(lines[1:]):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                self.rows[record["key"]] = record["figures"]
            except (ValueError, KeyError, TypeError):
                raise Brov2Error("%s:%d: expected a journal line {\"key\": ..., \"figures\": ...}, got %r"
                                 % (path, k + 2, line[:80]))

    def key(self, pilot_side, params, dive_name):
        """The key of the next flight of ``params`` by ``pilot_side`` on ``dive_name`` (counted: repeats differ)."""
        base = json.dumps([pilot_side, sorted((str(k), repr(v)) for k, v in dict(params).items()), dive_name])
        self._seen[base] += 1
        return "%s #%d" % (base, self._seen[base])

    def map(self, runner, jobs, keys, label):
        """The figures of each job ((IAE, effort) or None): the journal's where it has them, else flown over
        ``runner`` and appended."""
        out = [None] * len(jobs)
        todo = [i for i, k in enumerate(keys) if k not in self.rows]
        for i, k in enumerate(keys):
            if k in self.rows:
                row = self.rows[k]
                out[i] = None if row is None else tuple(row)
                self.replayed += 1
        if todo:
            results = runner.map(run_flight_job, [jobs[i] for i in todo], label)
            with open(self.path, "a") as handle:
                for i, r in zip(todo, results):
                    row = r["row"]
                    out[i] = None if row is None else (float(row["iae_true_sum"]), float(row["effort_s"]))
                    self.rows[keys[i]] = out[i]
                    handle.write(json.dumps({"key": keys[i], "figures": out[i]}) + "\n")
            self.flown += len(todo)
        return out


def fingerprint(*parts):
    """A short hash of ``parts``' reprs, arrays in full (what a journal's figures depend on)."""
    import numpy as np
    with np.printoptions(threshold=sys.maxsize, precision=17):
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def training_objective(ctx, jobs_for, train, label, journal=None, side=""):
    """``evaluate(params_list)`` for :func:`~.tune.optimize`: each params dict flown on every training
    input (``jobs_for(params, name, dive)`` -> FlightJob) over ``ctx.runner``, through ``journal``
    (:class:`FlightJournal`; None: none) under ``side``'s name; (IAE sum, effort sum), or None when an
    input's flight was refused on every attempt."""
    def evaluate(params_list):
        jobs = [jobs_for(p, name, dive) for p in params_list for name, dive in train]
        if journal is None:
            figures = [None if r["row"] is None else (r["row"]["iae_true_sum"], r["row"]["effort_s"])
                       for r in ctx.runner.map(run_flight_job, jobs, label)]
        else:
            keys = [journal.key(side, p, name) for p in params_list for name, _ in train]
            figures = journal.map(ctx.runner, jobs, keys, label)
        out = []
        for j in range(len(params_list)):
            rows = figures[j * len(train):(j + 1) * len(train)]
            out.append(None if any(r is None for r in rows) else
                       (sum(r[0] for r in rows), sum(r[1] for r in rows)))
        return out
    return evaluate


def chosen_sides(names, only=None):
    """The side names of ``names`` (``ardusub`` and the stored placements, in order) to tune: all, or those
    in ``only``; Brov2Error naming a name that is neither."""
    if not only:
        return list(names)
    unknown = sorted(set(only) - set(names))
    if unknown:
        raise Brov2Error("--tune-only %s: expected one of %s" % (unknown[0], ", ".join(names)))
    return [n for n in names if n in set(only)]


def tune_and_store(ctx, tune_trials=None, progress=print, store=None, settings=None, only=None):
    """Tune ArduSub and the hybrid in each placement (or the sides named in ``only``: ``ardusub`` and
    placement names) for every effort weighting; write the optima to ``store`` (default
    params/head_to_head/; sides not tuned keep their stored settings) and ``tuning.csv`` (every candidate)
    to ``ctx.out_dir``. Returns the tuning summary."""
    from brov2_hybrid.analysis.ardusub_experiment import flight_sim_options, load_compare_settings
    from brov2_hybrid.params import load_controller_params
    from brov2_hybrid.sim.ardusub_sitl import find_ardusub
    from brov2_hybrid.sim.plant import physics_signature
    find_ardusub()
    store = store or stored.folder()
    source = getattr(ctx.settings, "source", None)
    s = settings or inputs.load_settings(source)
    cs = fresh_sitl_settings(load_compare_settings(source), s)
    budget = tune_trials or s.tune_trials
    rate = load_controller_params().max_depth_rate_m_s
    train = inputs.training_inputs(s, cs)
    knobs = load_knobs(os.path.join(store, SPACE_FILE) if os.path.exists(os.path.join(store, SPACE_FILE)) else None)
    batch = max(1, ctx.runner.jobs)
    common = dict(trial=1, loop=ctx.loop, cs=cs, depth_rate_m_s=rate, max_attempts=s.max_attempts,
                  descent_s=s.descent_s, settle_s=s.settle_s, translations_as_stock=s.translations_as_stock)
    sides = [(ARDUSUB, None, dict(stored.load_ardusub_settings(store)[0].params))]
    status, placements = stored.load_hybrid_settings(os.path.join(store, stored.HYBRID_FILE))
    sides += [(HYBRID, place, dict(settings_[0].options)) for place, settings_ in placements.values()]
    chosen = chosen_sides([ARDUSUB] + list(placements), only)
    sides = [side for side in sides if (ARDUSUB if side[1] is None else side[1].name) in chosen]
    # ArduSub is tuned behind the tether's pilot link (the first placement's), as it is scored against it.
    ardusub_link_s = next(iter(placements.values()))[0].pilot_link_s
    limits = {place.name: safe_omega_d(place) for place, _ in placements.values()}
    journal = FlightJournal(os.path.join(ctx.out_dir, JOURNAL),
                            fingerprint(budget, s, cs, knobs, sorted(limits.items()), sides, ardusub_link_s, ctx.loop, os.path.realpath(find_ardusub()), train,
                                        physics_signature(ctx.vehicle, flight_sim_options(ctx))))
    if journal.rows:
        progress("tune: resuming from %s (%d flights journaled: replayed, not flown again)"
                 % (journal.path, len(journal.rows)))
    results, records = {}, []
    for pilot, place, values in sides:
        side_knobs = placement_knobs(knobs[pilot], place)
        if place is not None:
            limit = limits[place.name]
            side_knobs = capped_knobs(side_knobs, limit)
            progress("tune hybrid %s: omega_d held to %s" % (place.name, "omega-limit's safe %g rad/s" % limit
                                                             if limit is not None else "the search space (omega-limit "
                                                             "has no row for this loop)"))
        name = pilot if place is None else "hybrid %s" % place.name

        def jobs_for(p, dive_name, dive, pilot=pilot, place=place):
            return FlightJob(pilot, place, "tune", tuple(p.items()), dive_name, dive,
                             pilot_link_s=ardusub_link_s if place is None else 0.0, **common)
        evaluate = training_objective(ctx, jobs_for, train, "tune %s" % name, journal, name)
        known, results[name] = [], []
        for w in s.effort_weights_deg:
            r = tune.optimize(evaluate, side_knobs, budget, w, s, batch, _start(values, side_knobs), progress, known)
            known = r.candidates
            results[name].append(r)
            progress("tune %s w=%g: cost %.1f (IAE %.1f deg s, effort %.1f s) over %d flights; widened %s; at bounds %s"
                     % (name, w, r.cost, r.iae, r.effort, r.flights, [x[:2] for x in r.widenings] or "none",
                        r.at_bounds or "none"))
        records += [[name, k, c.params, c.iae, c.effort] for k, c in enumerate(known)]
    write_csv(os.path.join(ctx.out_dir, "tuning.csv"), ["side", "candidate", "params", "iae_deg_s", "effort_s"],
              [[n, k, repr(p), repr(i), repr(e)] for n, k, p, i, e in records])
    note = "tuned by the optimizer (Optuna TPE, %d trials per weighting on the training set)" % budget
    _store(store, results, placements, note, status)
    return {name: [{"weight": r.weight, "params": r.params, "cost": r.cost, "iae": r.iae, "effort": r.effort,
                    "flights": r.flights, "widenings": [list(x[:2]) for x in r.widenings], "at_bounds": r.at_bounds}
                   for r in rs] for name, rs in results.items()}


def distinct_optima(results):
    """[(label, [TuneResult, ...]), ...]: the optima of ``results`` (one per weighting) with the weightings
    that found the same parameters joined under one label ("tuned w=0.2, 1"), in weighting order: the
    same setting is stored, and flown by the scoring, once."""
    groups = []
    for r in results:
        for params, members in groups:
            if params == r.params:
                members.append(r)
                break
        else:
            groups.append((r.params, [r]))
    return [("tuned w=%s" % ", ".join("%g" % m.weight for m in members), members) for _, members in groups]


def _store(store, results, placements, note, old_status=""):
    """Write the optima: one ArduSub .parm per distinct optimum (the old ones removed), the hybrid's YAML.
    A side without results (not tuned: ``--tune-only``) keeps its stored settings, and the YAML's status
    says which placements were tuned and which kept (with ``old_status``, the status they were stored with)."""
    for old in glob.glob(os.path.join(store, stored.ARDUSUB_PATTERN)) if ARDUSUB in results else ():
        os.remove(old)
    for k, (label, members) in enumerate(distinct_optima(results.get(ARDUSUB, []))):
        r = members[0]
        setting = stored.ArduSubSetting(label, note, tuple(sorted(r.params.items())))
        at = ", ".join(sorted(set(b for m in members for b in m.at_bounds))) or "none"
        stored.write_parm(os.path.join(store, "ardusub_tuned%s.parm" % ("" if k == 0 else "_w%g" % r.weight)),
                          setting, ["effort weight %s deg s per s; optimum at a bound after widening: %s"
                                    % (", ".join("%g" % m.weight for m in members), at)])
    new, kept = {}, []
    for name, (place, old) in placements.items():
        if "hybrid %s" % name not in results:
            new[name] = (place, old)
            kept.append(name)
            continue
        settings = [stored.HybridSetting(label, tuple(members[0].params.items()))
                    for label, members in distinct_optima(results["hybrid %s" % name])]
        new[name] = (place, settings)
    tuned = [n for n in placements if n not in kept]
    status = note
    if kept:
        said = _status_of(old_status, kept)
        status = "%s: %s; %s" % (", ".join(tuned) or "no placement", note, said if said else
                                 "%s: kept as stored before (%s)" % (", ".join(kept), old_status))
    stored.write_hybrid(os.path.join(store, stored.HYBRID_FILE), status, new)


def _status_of(status, names):
    """The parts of a stored ``status`` ("tether: ...; realistic and onboard: ...") that speak of the
    placements ``names``, joined; "" unless those parts name every one of them (then the caller says
    "kept as stored before" with the whole status)."""
    parts, said = [], set()
    for part in (p.strip() for p in status.split("; ")):
        head = part.split(":", 1)[0] if ":" in part else ""
        named = set(n for n in re.split(r",\s*|\s+and\s+", head) if n)
        if named and named <= set(names):
            parts.append(part)
            said |= named
    return "; ".join(parts) if said == set(names) else ""
