"""``brov2-analyze head-to-head`` on real ArduSub (4.5 SITL flying our model): one cheap point per side.

A few seconds of dive, one trial, ArduSub's stored setting (behind the tether's pilot link and with no
link) and the hybrid's in the tether placement (a --store folder holding just those): all fly, nothing is refused, and fronts.csv has the columns the
comparison promises. Skipped without an ArduSub build unless ``BROV2_REQUIRE_ARDUSUB=1``, as
test_real_ardusub.py.
"""
import csv
import math
import os
import shutil

import numpy as np

from brov2_hybrid.analysis import cli
from brov2_hybrid.dive.dive_csv import write_dive_csv
from brov2_hybrid.head_to_head import stored

COLUMNS = ["pilot", "placement", "setting", "pilot_link_ms", "dive", "trial", "effort_s", "energy_kj",
           "iae_true_roll", "iae_true_pitch", "iae_true_yaw", "iae_est_roll", "iae_est_pitch", "iae_est_yaw"]


def short_dive(path, seconds=6.0, rate_hz=20.0):
    """Level for 1 s, then 10 deg of roll and 30 deg of yaw (minimum-jerk ramps over 2 s), held."""
    t = np.arange(0.0, seconds + 0.5 / rate_hz, 1.0 / rate_hz)
    x = np.clip((t - 1.0) / 2.0, 0.0, 1.0)
    s = x ** 3 * (10.0 - 15.0 * x + 6.0 * x ** 2)
    eta = np.column_stack([np.radians(10.0) * s, np.zeros_like(t), np.radians(30.0) * s])
    write_dive_csv(str(path), t, eta, np.zeros((t.size, 3)), precision=4)
    return str(path)


def test_one_cheap_point_per_side_flies_and_fills_fronts_csv(tmp_path, ardusub_binary):
    store = tmp_path / "store"
    store.mkdir()
    shutil.copy(os.path.join(stored.folder(), "ardusub_tuned.parm"), str(store))
    _, placements = stored.load_hybrid_settings()
    place, settings = placements["tether"]
    # the stored tether setting with the most of the law's terms on (delay compensation, reference
    # feed-forward, integral action): one point, and the one with the most to go wrong on real ArduSub
    richest = max(settings, key=lambda h: sum(1 for _, v in h.options if v is True))
    stored.write_hybrid(str(store / stored.HYBRID_FILE), "stored (test)", {"tether": (place, [richest])})
    dive = short_dive(tmp_path / "short.csv")
    out = tmp_path / "out"
    code = cli.main(["head-to-head", "--dive", dive, "--trials", "1", "--out", str(out), "--jobs", "1",
                     "--store", str(store), "--quiet"])
    assert code == 0
    with open(str(out / "fronts.csv")) as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[:len(COLUMNS)] == COLUMNS
    # ArduSub behind the tether's pilot link (the hybrid's placement) and with its pilot's input on board
    assert sorted((r["pilot"], r["placement"], float(r["pilot_link_ms"])) for r in rows) == [
        ("ardusub", "ardusub", 0.0), ("ardusub", "ardusub", 1000.0 * place.pilot_link_s),
        ("hybrid", "tether", 1000.0 * place.pilot_link_s)]
    for r in rows:
        assert r["dive"] == "short" and r["trial"] == "1"
        assert float(r["effort_s"]) > 0.0 and float(r["energy_kj"]) > 0.0     # the motors followed: a real flight
        for key in COLUMNS[8:]:
            assert math.isfinite(float(r[key])) and float(r[key]) >= 0.0
        # the 30 deg yaw turn is tracked: well under the IAE of not moving (30 deg for the last 3+ s)
        assert float(r["iae_true_yaw"]) < 0.5 * 30.0 * 4.0
    assert (out / "points.csv").exists() and (out / "iae_effort_short_true.png").exists()
    with open(str(out / "refused.csv")) as handle:
        assert len(list(csv.DictReader(handle))) == 0
