#!/usr/bin/env python3
"""Depth hold of the hybrid autopilot against ArduSub's ALT_HOLD, on real ArduSub SITL with our physics.

    source scripts/env.sh
    BROV2_ARDUSUB="$(bash scripts/build_ardusub.sh | tail -n 1)/ardusub" python scripts/depth_hold_vs_althold.py [--out DIR]

A preliminary comparison (docs/depth-hold.md "Not done yet" says what is still wrong with it).
One flight per pilot, each on a fresh SITL that boots at the surface (ArduSub calibrates its depth
at boot): full heave stick down for 10 s, 15 s to settle, the bundled dive with its heave stick at 0
(150 s: hold depth under the dive's attitudes and translations), then full stick down for 2 s (a
depth step of each pilot's own rate) and 18 s to settle. Pilots: the hybrid autopilot at omega_d 3
with the depth hold on the depth ArduSub reports (GLOBAL_POSITION_INT, as the bridge and MAVROS
give it), MANUAL, stock-compensated output stage; ArduSub's own ALT_HOLD with default gains
(SET_ATTITUDE_TARGET attitudes, RC translations, the heave stick its climb rate, with
PILOT_SPEED_UP / PILOT_SPEED_DN set to the depth hold's max_depth_rate_m_s so that full stick asks
both pilots for the same depth rate; ArduSub's own values are printed).
Depth is the physics' depth, sampled when each ATTITUDE tick is processed. Motor effort: integral
of sum |PWM - 1500| / 400 over time [s], vertical motors 5-8 and all. Prints one JSON line per
pilot and writes DIR/depth_hold_vs_althold.json.
"""
import argparse
import json
import math
import os
import sys
from dataclasses import replace

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.analysis import ardusub_experiment as ax
from brov2_hybrid.analysis.context import Context
from brov2_hybrid.analysis.settings import load_analysis_settings
from brov2_hybrid.dive.dive_csv import Dive, load_dive_csv
from brov2_hybrid.params import load_controller_params

DT_S = 0.02
DESCENT_S, SETTLE_S, STEP_S, AFTER_STEP_S = 10.0, 15.0, 2.0, 18.0


def flight_plan(bundled):
    """(dive, start of the hold part [s], start of the step [s]) of the comparison flight."""
    pre = np.arange(0.0, DESCENT_S + SETTLE_S - 1e-9, DT_S)
    post = np.arange(0.0, STEP_S + AFTER_STEP_S + 1e-9, DT_S)
    t_hold = DESCENT_S + SETTLE_S
    t_step = t_hold + float(bundled.t_s[-1] - bundled.t_s[0]) + DT_S
    t = np.concatenate([pre, t_hold + bundled.t_s - bundled.t_s[0], t_step + post])
    eta = np.vstack([np.zeros((pre.size, 3)), bundled.eta2d_rad, np.zeros((post.size, 3))])
    u = np.vstack([np.zeros((pre.size, 3)), bundled.u_linear, np.zeros((post.size, 3))])
    u[:, 2] = 0.0
    u[t < DESCENT_S, 2] = 1.0
    u[(t >= t_step) & (t < t_step + STEP_S), 2] = 1.0
    return Dive(t_s=t, eta2d_rad=eta, u_linear=u, source="descent, bundled dive at heave 0, depth step"), t_hold, t_step


def measures(log, t_hold, t_step):
    """Depth error and effort of one flight's log (hold part and step part)."""
    d, t = log["depth_m"], log["time_s"]
    vertical = np.column_stack([log["pwm%d_us" % i] for i in (5, 6, 7, 8)])
    every = np.column_stack([log["pwm%d_us" % i] for i in range(1, 9)])
    hold, step = (t >= t_hold) & (t < t_step), t >= t_step
    e = d[hold] - d[hold][0]
    change = d[step] - d[step][0]
    return {"depth_at_hold_start_m": float(d[hold][0]),
            "hold_rms_m": float(np.sqrt(np.mean(e * e))), "hold_max_m": float(np.max(np.abs(e))),
            "hold_effort_vertical_s": float(ax.motor_effort_s(t[hold], vertical[hold])),
            "hold_effort_all_s": float(ax.motor_effort_s(t[hold], every[hold])),
            "step_final_change_m": float(np.mean(change[t[step] > t_step + STEP_S + AFTER_STEP_S - 3.0])),
            "step_peak_change_m": float(np.max(change)),
            "step_effort_vertical_s": float(ax.motor_effort_s(t[step], vertical[step]))}


def main(argv=None):
    """Fly both pilots; 0 when both flew."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/depth_hold_vs_althold")
    args = parser.parse_args(argv)
    settings = load_analysis_settings()
    ctx = Context(settings, out_dir=args.out, loop=replace(settings.loop, initial_depth_m=0.0))
    cs = ax.load_compare_settings()
    bundled = load_dive_csv(os.path.join(paths.package_root(), cs.dive_csv))
    dive, t_hold, t_step = flight_plan(bundled)

    def hybrid():
        pilot = ax.hybrid_pilot(ctx, 3.0)
        pilot.controller.configure(depth_hold_enabled=True)
        return pilot

    rate_cm_s = 100.0 * load_controller_params().max_depth_rate_m_s
    results = {}
    for label, make in (("hybrid depth hold (omega_d 3)", hybrid),
                        ("ArduSub ALT_HOLD (default gains)", lambda: ax.ardusub_pilot(ctx))):
        flight = ax.new_flight(ctx, cs)
        try:
            if label.startswith("ArduSub"):
                for name in ("PILOT_SPEED_UP", "PILOT_SPEED_DN"):
                    print("ArduSub %s: %s cm/s, set to %g" % (name, flight.get_param(name), rate_cm_s), flush=True)
                    flight.set_param(name, rate_cm_s)
            log, _ = ax.run_on(flight, make(), dive, relative_yaw=False)
        finally:
            flight.close()
        results[label] = measures(log, t_hold, t_step)
        print(label, json.dumps(results[label]), flush=True)
    path = os.path.join(args.out, "depth_hold_vs_althold.json")
    with open(path, "w") as handle:
        json.dump(results, handle, indent=1)
    print("written: %s" % path)
    return 0 if all(not math.isnan(r["hold_rms_m"]) for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
