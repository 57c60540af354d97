"""The tables of figures in README.md and docs/ come from `make reproduce`, not from a hand.

Every generated block is the rendering of its saved data (docs/tables/<name>.json, which
`make reproduce` writes); the cheap tables are recomputed here in the in-process loop and
must give the saved figures (the loop is deterministic: same settings, same bits; the
tolerance only absorbs the JSON's decimal round trip).
"""
import math
import re

import numpy as np
import pytest

from brov2_hybrid.analysis import doc_tables
from brov2_hybrid.analysis import omega_limit as ol
from brov2_hybrid.analysis import options as op
from brov2_hybrid.analysis.context import Context
from brov2_hybrid.analysis.runner import Runner
from brov2_hybrid.analysis.settings import load_analysis_settings


def test_every_generated_block_is_the_rendering_of_its_saved_data():
    assert doc_tables.stale_blocks() == []


def test_every_table_is_in_the_documents():
    found = set()
    for doc in doc_tables.documents():
        with open(doc) as handle:
            found.update(name for name, _ in doc_tables.blocks(handle.read()))
    assert found <= set(doc_tables.TABLES)
    assert set(doc_tables.TABLES) - found <= set(doc_tables.OPTIONAL)


def test_a_hand_edit_is_caught(tmp_path):
    """The check itself: a digit changed in a block makes it stale."""
    (tmp_path / "docs" / "tables").mkdir(parents=True)
    data = doc_tables.load_data("options")
    (tmp_path / "docs" / "tables" / "options.json").write_text(__import__("json").dumps(data))
    body = doc_tables.render("options", data)
    doc = tmp_path / "README.md"
    doc.write_text("x\n" + doc_tables.BEGIN % "options" + "\n" + body + doc_tables.END % "options" + "\n")
    assert doc_tables.stale_blocks(str(tmp_path)) == []
    edited = re.sub(r"\| (\d)", lambda m: "| %d" % ((int(m.group(1)) + 1) % 10), body, count=1)
    doc.write_text(doc_tables.BEGIN % "options" + "\n" + edited + doc_tables.END % "options" + "\n")
    assert [name for _, name, _ in doc_tables.stale_blocks(str(tmp_path))] == ["options"]


def _close(saved, fresh, keys):
    for key in keys:
        a, b = saved[key], fresh[key]
        if isinstance(a, str) or a is None or isinstance(a, bool):
            assert a == b, key
        else:
            assert b is not None and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (key, a, b)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    settings = load_analysis_settings()
    return Context(settings, str(tmp_path_factory.mktemp("generated")), Runner(jobs=1, progress=False))


def test_the_options_table_is_what_the_loop_flies_now(ctx):
    """Every row, the tethered dive's too (the compiled loop steps the tether in its run)."""
    saved = doc_tables.load_data("options")["rows"]
    fresh = op.options_experiment(ctx)["rows"]
    assert len(saved) == len(fresh)
    for a, b in zip(saved, fresh):
        _close(a, b, op.CSV_COLUMNS)


def test_the_omega_limit_margins_and_ideal_runs_are_what_the_code_gives_now(ctx):
    """The margins of every row, and the ideal condition's flown figures (compiled loop; the
    lagged conditions fly the Python tick loop and are left to make reproduce)."""
    saved = doc_tables.load_data("omega_limit")
    s = ol.load_omega_limit_settings()
    ideal = [c for c in s.conditions if c.name == "ideal"]
    fresh = ol.omega_limit_experiment(ctx, settings=ol.OmegaLimitSettings(**dict(s.__dict__, conditions=tuple(ideal))))
    by = {(r["condition"], r["omega_d"]): r for r in saved["rows"]}
    for r in fresh["rows"]:
        _close(by[(r["condition"], r["omega_d"])], r, ol.CSV_COLUMNS)
    for r in saved["rows"]:
        margins = ol.margins_for(ctx.controller(r["omega_d"]))
        assert math.isclose(margins["delay_margin_s"], r["delay_margin_s"], rel_tol=1e-6)


def test_the_tether_tables_are_what_the_loop_flies_now(ctx):
    """docs/simulator.md's tether_pull and tether_dive blocks: the tether_loop experiment, flown now
    (its pull case is the runs the outcome test asserts on)."""
    from brov2_hybrid.analysis import tether_loop as tl
    fresh = doc_tables.table_data(tl.tether_loop_experiment(ctx))
    keys = ("mean_yaw_deg", "mean_roll_deg", "iae_roll_deg_s", "iae_pitch_deg_s", "iae_yaw_deg_s",
            "cable_steps", "newton_iterations_per_cable_step")
    for name in ("tether_pull", "tether_dive"):
        saved = doc_tables.load_data(name)
        assert saved["settings"] == fresh["settings"]
        for case in ("pull", "dive"):
            assert len(saved[case]) == len(fresh[case])
            for a, b in zip(saved[case], fresh[case]):
                assert a["name"] == b["name"]
                _close(a, b, [k for k in keys if k in a])
                for vector in ("tether_force_final_ned_n", "tether_force_mean_abs_ned_n", "tether_force_max_abs_ned_n"):
                    if a[vector] is None:
                        assert b[vector] is None
                    else:
                        np.testing.assert_allclose(b[vector], a[vector], rtol=1e-6, atol=1e-9)
