#!/usr/bin/env python3
"""Fly `rostest brov2_hybrid identify.test` N times and say how each identified value and its 95 %
interval compare with the simulated vehicle's file (the bundled Heavy).

    scripts/identify_repeat.py --runs 5 [--busy 3]

``--busy K`` starts K CPU-bound processes beside the runs (a busy machine). Prints one line per run
and parameter, then per parameter: within target, interval holds the truth, spread. Run it inside
the set-up workspace (source scripts/env.sh). Exit 1 when a run failed its rostest.
"""
import argparse
import glob
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from brov2_hybrid.identify.run import true_values
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

#: The rostest's targets: relative for inertia/mass and quadratic drag, absolute [N] for B - W.
TARGETS = {"inertia_kg_m2": 0.10, "mass_kg": 0.10, "quadratic_drag": 0.15}
ROW = re.compile(r"^\| (\w+) \| (\w+) \| ([-\d.e+]+) \| ([-\d.e+]+) \|", re.M)


def _spin():
    while True:
        pass


def one_run(index, tmp, keep=None):
    """Run the rostest once in its own TMPDIR (under ``keep`` when given, else ``tmp``); (passed, report text)."""
    env = dict(os.environ, TMPDIR=os.path.join(keep or tmp, "run%d" % index))
    os.makedirs(env["TMPDIR"])
    proc = subprocess.run(["rostest", "brov2_hybrid", "identify.test"], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    with open(os.path.join(env["TMPDIR"], "rostest.txt"), "w") as handle:
        handle.write(proc.stdout)
    reports = glob.glob(os.path.join(env["TMPDIR"], "brov2_rostest_identify*", "out", "identify_report.md"))
    text = open(reports[0]).read() if reports else ""
    return proc.returncode == 0 and "RESULT: SUCCESS" in proc.stdout, text


def main():
    """Parse the arguments, fly the runs, print the per-run lines and the table; the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--busy", type=int, default=0, help="CPU-bound processes beside the runs")
    parser.add_argument("--keep", metavar="DIR", help="keep each run's rostest output and report here")
    args = parser.parse_args()
    truth = true_values(load_vehicle(None).body)
    busy = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for p in busy:
        p.start()
    found, failed = {}, 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(args.runs):
                ok, text = one_run(k, tmp, args.keep)
                failed += not ok
                refused = re.search(r"No fit: (.*)", text)
                print("run %d: rostest %s%s" % (k + 1, "passed" if ok else "FAILED",
                                                 ", refused: " + refused.group(1) if refused else ""))
                for axis, name, value, half in ROW.findall(text):
                    if (axis, name) in truth:
                        found.setdefault((axis, name), []).append((float(value), float(half)))
    finally:
        for p in busy:
            p.terminate()
    print("\n| axis | parameter | true | fitted (min .. max) | within target | interval holds the truth |")
    print("|---|---|---|---|---|---|")
    for (axis, name), values in sorted(found.items()):
        v = np.array(values)
        true = truth[(axis, name)]
        err = np.abs(v[:, 0] - true)
        if name == "net_weight_n":
            target = "%d / %d" % (np.count_nonzero(err <= 0.5), len(v))
        elif name in TARGETS:
            target = "%d / %d" % (np.count_nonzero(err <= TARGETS[name] * abs(true)), len(v))
        else:
            target = "-"
        print("| %s | %s | %.4g | %.4g .. %.4g | %s | %d / %d |" % (axis, name, true, v[:, 0].min(), v[:, 0].max(),
                                                                target, np.count_nonzero(err <= v[:, 1]), len(v)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
