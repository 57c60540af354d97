"""Frequency response of the yaw loop (App. C, Fig. A1) against Eq. 22.

+-amplitude yaw sines per omega_d and frequency (:class:`~brov2_hybrid.analysis.jobs.BodeJob`);
gain = half peak-to-peak ratio, phase from peak times. Writes ``bode.csv`` and ``bode.png``.
"""
import math
import os

import numpy as np

from brov2_hybrid.analysis import lti, metrics, plots
from brov2_hybrid.analysis.context import write_csv
from brov2_hybrid.analysis.jobs import BodeJob, run_bode_job


def _nan_to_none(x):
    return None if (x is None or not math.isfinite(x)) else float(x)


def bode_experiment(ctx, omegas=None, freqs_hz=None):
    """App. C: frequency response at omega_d in {2, 3, 4} (Fig. A1) against Eq. 22."""
    b = ctx.settings.bode
    omegas = tuple(omegas or b.omega_d_rad_s)
    freqs = tuple(freqs_hz or b.freqs_hz)
    jobs = []
    for w in omegas:
        for f in freqs:
            t_from = max(b.transient_periods / f, b.min_transient_s)
            jobs.append(BodeJob(ctx.loop, w, f, b.amplitude_rad, t_from, t_from + b.analysed_periods / f))
    # Longest first: better load balance over the workers.
    order = sorted(range(len(jobs)), key=lambda k: -jobs[k].duration_s)
    done = ctx.runner.map(run_bode_job, [jobs[k] for k in order], "bode")
    results = [None] * len(jobs)
    for k, r in zip(order, done):
        results[k] = r
    rows, series, summary = [], [], []
    for w in omegas:
        mine = sorted((r for r in results if r["omega_d"] == w), key=lambda r: r["freq_hz"])
        f = np.array([r["freq_hz"] for r in mine])
        wr = 2.0 * math.pi * f
        gain = np.array([r["gain"] for r in mine])
        phase = np.unwrap(np.array([r["phase_rad"] for r in mine]))
        c = ctx.controller(w)
        lti_gain_at, lti_phase_at = lti.frequency_response(c, wr)
        lti_w = np.logspace(math.log10(wr[0]), math.log10(wr[-1]), 300)
        lti_gain, lti_phase = lti.frequency_response(c, lti_w)
        for k in range(len(mine)):
            rows.append([w, f[k], wr[k], gain[k], 20 * math.log10(gain[k]) if gain[k] > 0 else float("nan"),
                         math.degrees(phase[k]), lti_gain_at[k], math.degrees(lti_phase_at[k])])
        series.append({"omega_d": w, "w": wr, "gain": gain, "phase_rad": phase,
                       "lti_w": lti_w, "lti_gain": lti_gain, "lti_phase_rad": lti_phase})
        summary.append({"omega_d": w, "bandwidth_rad_s": _nan_to_none(metrics.bandwidth(wr, gain)),
                        "lti_bandwidth_rad_s": _nan_to_none(metrics.bandwidth(lti_w, lti_gain)),
                        "gain_at_omega_d": _nan_to_none(metrics.value_at(wr, gain, w)),
                        "unity_crossing_rad_s": _nan_to_none(metrics.unity_crossing(wr, gain)),
                        "lti_gain_at_omega_d": float(lti.frequency_response(c, [w])[0][0]),
                        "peak_gain": float(np.max(gain))})
    write_csv(ctx.path("bode.csv"), ["omega_d_rad_s", "freq_hz", "omega_rad_s", "gain", "gain_db", "phase_deg",
                                     "lti_gain", "lti_phase_deg"], rows)
    fig = plots.bode(ctx.path("bode.png"), series, ctx.loop.latency_label())
    return {"latency": ctx.loop.latency_label(), "per_omega_d": summary, "freqs_hz": [freqs[0], freqs[-1], len(freqs)],
            "files": ["bode.csv", os.path.basename(fig)],
            "sim_s": sum(r["sim_s"] for r in results), "wall_s": sum(r["wall_s"] for r in results)}
