"""The documents: docs/parameters.md is the rendering of the parameter files as they are,
every link between the documents lands, and the README stays a landing page."""
import glob
import os
import re

import pytest
import yaml

from brov2_hybrid import param_docs
from brov2_hybrid.paths import package_root

ROOT = package_root()

#: Documents a link may name before they exist (none now: every link must land).
PENDING_DOCS = frozenset()


def _read(relpath):
    with open(os.path.join(ROOT, relpath), encoding="utf-8") as handle:
        return handle.read()


def test_parameters_md_is_the_rendering_of_the_files_as_they_are():
    assert _read("docs/parameters.md") == param_docs.render(ROOT), (
        "docs/parameters.md is out of date: run `make docs` and commit it")


def test_every_controller_key_and_every_cfg_knob_is_in_the_reference():
    text = _read("docs/parameters.md")
    with open(os.path.join(ROOT, "params", "controller.yaml")) as handle:
        controller = yaml.safe_load(handle)["controller"]
    for key in controller:
        assert "| `controller.%s` |" % key in text, key
    with open(os.path.join(ROOT, "cfg", "HybridAutopilot.cfg")) as handle:
        declared = re.findall(r'gen\.add\("(\w+)"', handle.read())
    assert len(declared) >= 12
    for name in declared:
        assert "| `%s` |" % name in text, name


def test_the_cfg_knobs_carry_the_cfg_ranges_and_controller_defaults():
    knobs = {k.name: k for k in param_docs.read_cfg_knobs(os.path.join(ROOT, "cfg", "HybridAutopilot.cfg"))}
    with open(os.path.join(ROOT, "params", "controller.yaml")) as handle:
        controller = yaml.safe_load(handle)["controller"]
    assert knobs["omega_d_rad_s"].default == controller["omega_d_rad_s"]
    assert knobs["yaw_enabled"].default == controller["closed_loop_enabled"][2]
    assert (knobs["omega_d_rad_s"].minimum, knobs["omega_d_rad_s"].maximum) == (0.5, 8.0)
    assert knobs["roll_enabled"].type == "bool" and knobs["roll_enabled"].minimum is None


@pytest.mark.parametrize("relpath", param_docs.yaml_files(ROOT))
def test_the_line_reader_sees_what_yaml_sees(relpath):
    path = os.path.join(ROOT, relpath)
    _, entries = param_docs.read_yaml_entries(path)
    param_docs.check_against_yaml(path, entries)        # raises on any difference
    assert len({e.path for e in entries}) == len(entries)


def test_comments_attach_to_their_key(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("# The file.\n# Second line.\n\n"
                    "# Section comment.\nsec:                 # trailing\n"
                    "  a: 1               # a's comment\n"
                    "                     #   continued\n"
                    "  # b's block comment\n  b: 'x # not a comment'\n"
                    "  c: [1, 2]\n  d:\n    - {k: 1}   # first\n    - {k: 2}\ntop: null\n")
    header, entries = param_docs.read_yaml_entries(str(path))
    param_docs.check_against_yaml(str(path), entries)
    got = {e.path: (e.value, e.comment) for e in entries}
    assert header == "The file. Second line."
    assert got["sec"] == ("", "Section comment. trailing")
    assert got["sec.a"] == ("1", "a's comment continued")
    assert got["sec.b"] == ("'x # not a comment'", "b's block comment")
    assert got["sec.c"] == ("[1, 2]", "")
    assert got["sec.d[0]"] == ("{k: 1}", "first") and got["sec.d[1]"] == ("{k: 2}", "")
    assert got["top"] == ("null", "")


def test_an_edited_comment_changes_the_document(tmp_path):
    """The check can fail: the rendering follows the comment, so an edit without `make docs` is caught."""
    (tmp_path / "params").mkdir()
    (tmp_path / "cfg").mkdir()
    (tmp_path / "params" / "controller.yaml").write_text("controller:\n  kappa: 20.0   # old words\n")
    (tmp_path / "cfg" / "HybridAutopilot.cfg").write_text(
        "import sys\nfrom dynamic_reconfigure.parameter_generator_catkin import ParameterGenerator, double_t\n"
        "gen = ParameterGenerator()\ngen.add('kappa', double_t, 1, 'Kappa.', 20.0, 0.0, 100.0)\n"
        "sys.exit(gen.generate('p', 'n', 'N'))\n")
    before = param_docs.render(str(tmp_path))
    assert "| `controller.kappa` | `20.0` | old words |" in before
    (tmp_path / "params" / "controller.yaml").write_text("controller:\n  kappa: 20.0   # new words\n")
    assert "new words" in param_docs.render(str(tmp_path)) and before != param_docs.render(str(tmp_path))


def test_a_file_the_reader_cannot_follow_is_named(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a:\n  - x: 1\n    y: 2\n")
    with pytest.raises(param_docs.ParamDocsError, match=r"bad\.yaml:3: a key inside a block list"):
        param_docs.read_yaml_entries(str(path))


# -- links between the documents ------------------------------------------------------------

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _documents():
    return ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def _anchors(text):
    """GitHub's heading anchors of a Markdown text."""
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", _FENCE.sub("", text), re.M):
        plain = re.sub(r"[`*]", "", heading).strip().lower()
        found.add(re.sub(r"[^\w\- ]", "", plain).replace(" ", "-"))
    return found


def _links():
    for doc in _documents():
        for target in _LINK.findall(_FENCE.sub("", _read(doc))):
            if not re.match(r"[a-z]+:", target):
                yield doc, target


def test_every_relative_link_lands():
    """Every link of README.md and docs/*.md points to a file of the repository (or one of
    PENDING_DOCS) and, with a #fragment into a Markdown file, to one of its headings."""
    bad = []
    for doc, target in _links():
        path, _, fragment = target.partition("#")
        relpath = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
        if not os.path.exists(os.path.join(ROOT, relpath)):
            if relpath not in PENDING_DOCS:
                bad.append("%s: %s (no such file)" % (doc, target))
            continue
        if fragment and relpath.endswith(".md") and fragment not in _anchors(_read(relpath)):
            bad.append("%s: %s (no such heading)" % (doc, target))
    assert bad == []


def test_the_link_check_can_fail():
    assert "which-option-helps-on-which-input" in _anchors("## Which option helps on which input\n")
    assert "saturation-aware-allocation-vs-eq-9" in _anchors("## Saturation-aware allocation vs Eq. 9\n")
    assert list(_LINK.findall("see [x](docs/nothing.md#a) and ![i](docs/img/a.png)")) == [
        "docs/nothing.md#a", "docs/img/a.png"]


def test_the_readme_is_a_landing_page():
    text = _read("README.md")
    assert len(text.splitlines()) <= 200
    assert "make test" in text and "make run" in text
    for doc in _documents()[1:]:
        assert "(%s)" % doc in text or "(%s#" % doc in text, "README's docs table misses %s" % doc
    for doc in PENDING_DOCS:
        assert "(%s)" % doc in text, doc


def test_no_project_history_in_the_documents_or_the_code():
    """Docs and code say what is, not which issue or commit brought it."""
    pattern = re.compile(r"\bissue \d|\bcommit [0-9a-f]{7}", re.I)
    files = _documents() + [os.path.relpath(p, ROOT) for folder in ("src", "nodes", "scripts")
                            for p in glob.glob(os.path.join(ROOT, folder, "**", "*"), recursive=True)
                            if os.path.isfile(p) and not p.endswith((".pyc", ".png"))]
    found = ["%s:%d: %s" % (f, n, line.strip()) for f in files
             for n, line in enumerate(_read(f).splitlines(), 1) if pattern.search(line)]
    assert found == []
