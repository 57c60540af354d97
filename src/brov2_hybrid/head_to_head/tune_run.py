"""``brov2-analyze head-to-head --tune`` on real ArduSub: both sides tuned on the training set with the
same budget (:func:`tune_and_store`), the optima stored where the scoring reads them.

The search spaces are ``params/head_to_head/search_space.yaml`` (:func:`load_knobs`). A trial's
figures are its flights on the training set (:func:`~.inputs.training_inputs`: the bundled dive's
first seconds and one step per axis), summed: true-attitude IAE [deg s] and motor effort [s]. A trial
whose flights were refused on every attempt is told to the optimizer as failed, never scored. ArduSub
and each hybrid placement get ``tune_trials`` trials per effort weighting; the candidates flown for one
weighting are told to the next for free.
"""
import glob
import os

from brov2_hybrid.analysis.context import write_csv
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.head_to_head import inputs, stored, tune
from brov2_hybrid.head_to_head.flights import ARDUSUB, HYBRID, FlightJob, fresh_sitl_settings, run_flight_job
from brov2_hybrid.params import Section, load_yaml

SPACE_FILE = "search_space.yaml"


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


def _start(values, knobs):
    """The stored setting's values of the knobs, clipped into their ranges (the first trial)."""
    start = {}
    for k in knobs:
        if k.name in values:
            v = values[k.name]
            start[k.name] = v if k.choices else min(max(float(v), k.low), k.high)
    return start


def training_objective(ctx, jobs_for, train, label):
    """``evaluate(params_list)`` for :func:`~.tune.optimize`: each params dict flown on every training
    input (``jobs_for(params, name, dive)`` -> FlightJob) over ``ctx.runner``; (IAE sum, effort sum),
    or None when an input's flight was refused on every attempt."""
    def evaluate(params_list):
        jobs = [jobs_for(p, name, dive) for p in params_list for name, dive in train]
        results = ctx.runner.map(run_flight_job, jobs, label)
        out = []
        for j in range(len(params_list)):
            rows = [r["row"] for r in results[j * len(train):(j + 1) * len(train)]]
            out.append(None if any(r is None for r in rows) else
                       (sum(r["iae_true_sum"] for r in rows), sum(r["effort_s"] for r in rows)))
        return out
    return evaluate


def tune_and_store(ctx, tune_trials=None, progress=print, store=None, settings=None):
    """Tune ArduSub and the hybrid in each placement for every effort weighting; write the optima to
    ``store`` (default params/head_to_head/) and ``tuning.csv`` (every candidate) to ``ctx.out_dir``.
    Returns the tuning summary."""
    from brov2_hybrid.analysis.ardusub_experiment import load_compare_settings
    from brov2_hybrid.params import load_controller_params
    from brov2_hybrid.sim.ardusub_sitl import find_ardusub
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
                  descent_s=s.descent_s, settle_s=s.settle_s)
    sides = [(ARDUSUB, None, dict(stored.load_ardusub_settings(store)[0].params))]
    status, placements = stored.load_hybrid_settings(os.path.join(store, stored.HYBRID_FILE))
    sides += [(HYBRID, place, dict(settings_[0].options)) for place, settings_ in placements.values()]
    # ArduSub is tuned behind the tether's pilot link (the first placement's), as it is scored against it.
    ardusub_link_s = next(iter(placements.values()))[0].pilot_link_s
    results, records = {}, []
    for pilot, place, values in sides:
        side_knobs = knobs[pilot]
        name = pilot if place is None else "hybrid %s" % place.name

        def jobs_for(p, dive_name, dive, pilot=pilot, place=place):
            return FlightJob(pilot, place, "tune", tuple(p.items()), dive_name, dive,
                             pilot_link_s=ardusub_link_s if place is None else 0.0, **common)
        evaluate = training_objective(ctx, jobs_for, train, "tune %s" % name)
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
    _store(store, results, placements, note)
    return {name: [{"weight": r.weight, "params": r.params, "cost": r.cost, "iae": r.iae, "effort": r.effort,
                    "flights": r.flights, "widenings": [list(x[:2]) for x in r.widenings], "at_bounds": r.at_bounds}
                   for r in rs] for name, rs in results.items()}


def _store(store, results, placements, note):
    """Write the optima: one ArduSub .parm per weighting (the old ones removed), the hybrid's YAML."""
    for old in glob.glob(os.path.join(store, stored.ARDUSUB_PATTERN)):
        os.remove(old)
    for k, r in enumerate(results[ARDUSUB]):
        setting = stored.ArduSubSetting("tuned w=%g" % r.weight, note, tuple(sorted(r.params.items())))
        at = ", ".join(r.at_bounds) or "none"
        stored.write_parm(os.path.join(store, "ardusub_tuned%s.parm" % ("" if k == 0 else "_w%g" % r.weight)),
                          setting, ["effort weight %g deg s per s; optimum at a bound after widening: %s" % (r.weight, at)])
    new = {}
    for name, (place, _) in placements.items():
        settings = [stored.HybridSetting("tuned w=%g" % r.weight, tuple(r.params.items()))
                    for r in results["hybrid %s" % name]]
        new[name] = (place, settings)
    stored.write_hybrid(os.path.join(store, stored.HYBRID_FILE), note, new)
