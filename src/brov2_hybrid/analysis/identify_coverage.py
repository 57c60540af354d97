"""Do the identification's 95 % intervals hold the truth? Coverage over repeated in-process flights.

The identification schedule (:mod:`brov2_hybrid.identify.schedule`) is flown on the bundled vehicle in
the in-process loop once per seed of the simulator's sensor noise, the depth delivered as the
vehicle streams it through ROS (:class:`~brov2_hybrid.identify.flight.DepthStream`), and each
flight fitted as ``brov2-analyze identify`` does (:func:`brov2_hybrid.identify.model.identify_log`).
Per identified parameter, the share of flights whose interval holds the vehicle file's value is
the interval's coverage: about its level (95 %) when the intervals are honest.

Flown at each physics rate of ``identify_coverage.physics_rates_hz`` (params/analysis.yaml): the
simulator's default 400 Hz and a step fine enough to be the continuous model the fit assumes. The
two agree since the stepper takes the drag as the trapezoid over the step
(:func:`brov2_hybrid.sim.stepper.integrate`); with plain Euler the 400 Hz flights read as an inertia
about 0.4 % low, which no interval saw. The table says both.
"""
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.params import Section, load_yaml


@dataclass(frozen=True)
class CoverageSettings:
    """``identify_coverage`` of params/analysis.yaml: ``seeds`` flights per physics rate from
    ``first_seed``, at each of ``physics_rates_hz`` [Hz]."""

    seeds: int
    first_seed: int
    physics_rates_hz: tuple


def load_coverage_settings(path=None):
    """:class:`CoverageSettings` from ``path`` (default params/analysis.yaml)."""
    path = path or paths.params_path("analysis.yaml")
    s = Section(load_yaml(path), path, "identify_coverage")
    rates = tuple(float(r) for r in s.positive_list("physics_rates_hz"))
    return CoverageSettings(s.integer("seeds", 1, 1000), s.integer("first_seed", 0, 2 ** 31), rates)


def fly_and_fit(vehicle, seed, physics_rate_hz):
    """{(axis, parameter): (fitted, half-width)} of one in-process identification flight on ``vehicle``
    with sensor-noise ``seed``, the physics at ``physics_rate_hz``."""
    from brov2_hybrid.identify import model as idmodel
    from brov2_hybrid.identify.flight import fly_schedule
    from brov2_hybrid.identify.schedule import build_schedule, load_schedule_settings
    from brov2_hybrid.sim.config import load_sim_options
    options = replace(load_sim_options(), noise_enabled=True, seed=int(seed), dt_s=1.0 / float(physics_rate_hz))
    schedule = build_schedule(load_schedule_settings(), skip=vehicle.passive_dof_names)
    log, _, _ = fly_schedule(schedule, vehicle, vehicle, sim_options=options)
    fitted = idmodel.identify_log(log, vehicle)
    return {(axis, name): (e.value, e.half_width) for axis, fit in fitted.axes.items()
            for name, e in fit.estimates.items()}


def coverage_experiment(settings=None, vehicle_name=None, progress=None):
    """The coverage summary: ``rows`` [{axis, parameter, rate_hz, covered, flights, true, median_error,
    median_half_width}] (the last three in the parameter's unit), ``level``, ``seeds``, ``vehicle``."""
    from brov2_hybrid.identify.run import true_values
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    settings = settings or load_coverage_settings()
    vehicle = load_vehicle(vehicle_name)
    truth = true_values(vehicle.body)
    rows = []
    for rate in settings.physics_rates_hz:
        found = {}
        for seed in range(settings.first_seed, settings.first_seed + settings.seeds):
            for key, value in fly_and_fit(vehicle, seed, rate).items():
                found.setdefault(key, []).append(value)
            if progress:
                progress("identify coverage: %g Hz seed %d done" % (rate, seed))
        for key in sorted(truth, key=lambda k: (k[0], k[1])):
            if key not in found:
                continue
            fitted = np.array(found[key])
            true = truth[key]
            errors = np.abs(fitted[:, 0] - true)
            rows.append({"axis": key[0], "parameter": key[1], "rate_hz": rate,
                         "covered": int(np.count_nonzero(errors <= fitted[:, 1])), "flights": len(fitted),
                         "true": float(true), "median_error": float(np.median(errors)),
                         "median_half_width": float(np.median(fitted[:, 1]))})
    from brov2_hybrid.identify.model import load_fit_settings
    return {"rows": rows, "level": load_fit_settings().confidence, "seeds": settings.seeds,
            "vehicle": vehicle.name}


def pooled(summary, rate_hz):
    """Share of all intervals at ``rate_hz`` that hold the truth."""
    rows = [r for r in summary["rows"] if r["rate_hz"] == rate_hz]
    return sum(r["covered"] for r in rows) / float(sum(r["flights"] for r in rows))


def markdown_table(summary):
    """Per parameter and physics rate: coverage, median |error| and median half-width (the parameter's unit)."""
    rates = sorted({r["rate_hz"] for r in summary["rows"]})
    head = "| axis | parameter | true | " + " | ".join("covered at %g Hz | error / half-width at %g Hz" % (f, f)
                                                       for f in rates) + " |"
    lines = ["%d flights of the identification schedule per physics rate on the %s, sensor noise on, the depth "
             "as the vehicle streams it; how many %.0f %% intervals hold the vehicle file's value, and the "
             "median |fitted - true| beside the median half-width:" % (summary["seeds"], summary["vehicle"],
                                                                        100.0 * summary["level"]), "",
             head, "|---|---|---|" + "---|---|" * len(rates)]
    by = {(r["axis"], r["parameter"], r["rate_hz"]): r for r in summary["rows"]}
    for axis, name in sorted({(r["axis"], r["parameter"]) for r in summary["rows"]}):
        cells = []
        for f in rates:
            r = by[(axis, name, f)]
            cells.append("%d / %d | %.3g / %.3g" % (r["covered"], r["flights"], r["median_error"],
                                                  r["median_half_width"]))
        lines.append("| %s | %s | %.4g | %s |" % (axis, name, by[(axis, name, rates[0])]["true"], " | ".join(cells)))
    lines += ["", "All intervals together: " + ", ".join("%.0f %% at %g Hz" % (100.0 * pooled(summary, f), f)
                                                     for f in rates) + "."]
    return lines


def identify_coverage_experiment(ctx, omegas=None, quick=False):
    """``brov2-analyze identify-coverage``: :func:`coverage_experiment` on the context's vehicle (``omegas``
    unused: the schedule's law is the vehicle's default); ``quick``: 2 seeds per rate. Writes
    identify_coverage.csv into ``ctx.out_dir``."""
    import csv
    import os
    settings = load_coverage_settings()
    if quick:
        settings = replace(settings, seeds=2)
    progress = None
    if ctx.runner.progress:
        import sys
        progress = lambda text: sys.stderr.write(text + "\n")     # noqa: E731
    summary = coverage_experiment(settings, ctx.loop.vehicle, progress)
    os.makedirs(ctx.out_dir, exist_ok=True)
    path = os.path.join(ctx.out_dir, "identify_coverage.csv")
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(summary["rows"][0]))
        writer.writeheader()
        writer.writerows(summary["rows"])
    summary["files"] = ["identify_coverage.csv"]
    return summary


def report_section(summary):
    """REPORT.md's section: the table and what it means."""
    return (["## Identification: do the intervals hold the truth?", ""] + markdown_table(summary)
            + ["", "The simulator's default 400 Hz step and a fine one give the same coverage: the stepper takes the "
               "drag as the trapezoid over each step, so the step does not bias the fit (docs/identification.md).",
               ""])


def console_lines(summary):
    """The pooled coverage per physics rate, for the terminal."""
    rates = sorted({r["rate_hz"] for r in summary["rows"]})
    return "\n".join("  %g Hz physics: %.0f %% of the %.0f %% intervals hold the truth"
                     % (f, 100.0 * pooled(summary, f), 100.0 * summary["level"]) for f in rates)
