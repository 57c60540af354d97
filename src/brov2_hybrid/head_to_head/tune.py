"""The optimizer of ``brov2-analyze head-to-head --tune``, apart from what it flies (:func:`optimize`).

Optuna's TPE sampler (``optuna.samplers.TPESampler``), chosen over CMA-ES because the knobs are mixed:
ArduSub's are continuous, the hybrid's include on/off options (categorical), which CMA-ES does not take;
TPE also copes with a small budget and with batches asked at once (``constant_liar``), so a batch of
trials flies side by side over the flight workers (``--jobs``, ``--dask``) through Optuna's ask / tell
interface. The cost of a trial is ``IAE + weight * effort`` (summed true-attitude IAE [deg s], motor
effort [s]), the median over its flights.

* **Noise-aware**: after the budget, every trial within ``tie_margin`` (relative) of the best cost is
  flown ``tie_repeats`` more times and the optimum is the least median over all of its flights.
* **Bounds widened when hit**: after each batch, a numeric knob whose best value lies within
  ``bound_margin`` of a bound (as a fraction of its range, on a log scale for log knobs) has that bound
  moved out by ``widen_factor`` (log knobs: multiplied or divided; linear: the range grown by that
  factor on that side), within its hard limits, at most ``max_widenings`` times per knob. Knobs still at
  a bound at the end are reported (``at_bounds``), never hidden.

``evaluate(params_list)`` returns one (iae, effort) per params dict, in order, or None for a flight that
did not count (refused): such a trial is told to the sampler as failed and never becomes an optimum.
"""
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from brov2_hybrid.errors import Brov2Error


@dataclass(frozen=True)
class Knob:
    """One tuned parameter: ``name``, search range ``low``..``high``, ``log`` scale, hard limits
    (a widened bound never crosses them) or ``choices`` (categorical: the range is ignored)."""

    name: str
    low: float = 0.0
    high: float = 1.0
    log: bool = True
    hard_low: float = -math.inf
    hard_high: float = math.inf
    choices: tuple = ()


@dataclass
class Candidate:
    """One trial's parameters and the figures of each of its flights."""

    params: dict
    iae: list = field(default_factory=list)
    effort: list = field(default_factory=list)

    def cost(self, weight):
        """Median of ``iae + weight * effort`` over the flights."""
        return float(np.median([i + weight * e for i, e in zip(self.iae, self.effort)]))


@dataclass
class TuneResult:
    """The optimum of one weighting: its params, median cost, IAE and effort, and the search's record."""

    weight: float
    params: dict
    cost: float
    iae: float
    effort: float
    flights: int
    bounds: dict
    widenings: list
    at_bounds: list
    candidates: list


def _distribution(knob, bounds):
    import optuna
    if knob.choices:
        return optuna.distributions.CategoricalDistribution(knob.choices)
    low, high = bounds[knob.name]
    return optuna.distributions.FloatDistribution(low, high, log=knob.log)


def bound_hit(value, low, high, log, margin):
    """"low" or "high" when ``value`` lies within ``margin`` (a fraction of the range, log scale for
    ``log``) of that bound, else None."""
    if log:
        value, low, high = math.log(value), math.log(low), math.log(high)
    span = high - low
    if value <= low + margin * span:
        return "low"
    if value >= high - margin * span:
        return "high"
    return None


def widen(knob, low, high, side, factor):
    """(low, high) with the bound ``side`` moved out by ``factor`` within the knob's hard limits."""
    if side == "low":
        new = low / factor if knob.log else low - (factor - 1.0) * (high - low)
        return max(new, knob.hard_low), high
    new = high * factor if knob.log else high + (factor - 1.0) * (high - low)
    return low, min(new, knob.hard_high)


def _best(candidates, weight):
    return min(candidates, key=lambda c: c.cost(weight))


def optimize(evaluate, knobs, budget, weight, s, batch=1, start=None, progress=None, known=()):
    """Tune ``knobs`` (list of :class:`Knob`) for ``weight`` [deg s per s of effort] with ``budget``
    trials in batches of ``batch``: a :class:`TuneResult`.

    ``s``: the settings (HeadToHeadSettings: seed, tie_margin, tie_repeats, bound_margin, widen_factor,
    max_widenings, tune_repeats); ``start``: params flown first (e.g. the stored setting); ``known``:
    candidates already flown (another weighting's), told to the sampler for free and eligible as optima."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if budget < 1 or batch < 1:
        raise Brov2Error("optimize: expected budget >= 1 and batch >= 1, got %r, %r" % (budget, batch))
    bounds = {k.name: (float(k.low), float(k.high)) for k in knobs if not k.choices}
    for k in knobs:
        if not k.choices and not (k.hard_low <= k.low < k.high <= k.hard_high and (k.low > 0 or not k.log)):
            raise Brov2Error("knob %s: expected hard_low <= low < high <= hard_high (low > 0 on a log scale)" % k.name)
    with warnings.catch_warnings():              # constant_liar is "experimental" in Optuna 4
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(seed=s.seed, constant_liar=True,
                                             n_startup_trials=min(10, max(budget // 3, 1)))
    study = optuna.create_study(sampler=sampler, direction="minimize")
    candidates = list(known)
    for c in candidates:
        if all(c.params[k.name] in k.choices if k.choices else bounds[k.name][0] <= c.params[k.name] <= bounds[k.name][1]
               for k in knobs):
            dists = {k.name: _distribution(k, bounds) for k in knobs}
            study.add_trial(optuna.trial.create_trial(params=dict(c.params), distributions=dists, value=c.cost(weight)))
    if start is not None:
        study.enqueue_trial(dict(start), skip_if_exists=True)
    widenings, counts, spent = [], {}, 0
    while spent < budget:
        dists = {k.name: _distribution(k, bounds) for k in knobs}
        trials = [study.ask(dists) for _ in range(min(batch, budget - spent))]
        flights = [t.params for t in trials for _ in range(s.tune_repeats)]
        results = evaluate(flights)
        for j, t in enumerate(trials):
            c = Candidate(dict(t.params))
            for figures in results[j * s.tune_repeats:(j + 1) * s.tune_repeats]:
                if figures is not None:            # None: no flight counted (refused): never scored
                    c.iae.append(float(figures[0]))
                    c.effort.append(float(figures[1]))
            if c.iae:
                candidates.append(c)
                study.tell(t, c.cost(weight))
            else:
                study.tell(t, state=optuna.trial.TrialState.FAIL)
        spent += len(trials)
        if not candidates:
            continue
        best = _best(candidates, weight)
        for k in knobs:
            if k.choices or counts.get(k.name, 0) >= s.max_widenings:
                continue
            low, high = bounds[k.name]
            side = bound_hit(best.params[k.name], low, high, k.log, s.bound_margin)
            if side is not None:
                new = widen(k, low, high, side, s.widen_factor)
                if new != (low, high):
                    widenings.append((k.name, side, (low, high), new))
                    bounds[k.name] = new
                    counts[k.name] = counts.get(k.name, 0) + 1
        if progress:
            progress("tune w=%g: %d/%d trials, best cost %.1f" % (weight, spent, budget, best.cost(weight)))
    if not candidates:
        raise Brov2Error("optimize: no trial of %d flew (every flight refused): nothing to tune on" % budget)
    best_cost = _best(candidates, weight).cost(weight)
    ties = [c for c in candidates if c.cost(weight) <= best_cost * (1.0 + s.tie_margin)]
    if len(ties) > 1 and s.tie_repeats > 0:
        flights = [c.params for c in ties for _ in range(s.tie_repeats)]
        results = evaluate(flights)
        for j, c in enumerate(ties):
            for figures in results[j * s.tie_repeats:(j + 1) * s.tie_repeats]:
                if figures is not None:
                    c.iae.append(float(figures[0]))
                    c.effort.append(float(figures[1]))
    best = _best(ties, weight)
    at_bounds = [k.name for k in knobs if not k.choices and bound_hit(
        best.params[k.name], bounds[k.name][0], bounds[k.name][1], k.log, s.bound_margin)]
    return TuneResult(weight, dict(best.params), best.cost(weight), float(np.median(best.iae)),
                      float(np.median(best.effort)), len(best.iae), dict(bounds), widenings, at_bounds, candidates)
