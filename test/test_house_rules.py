"""The house's rules, read from the code (an AST scan, nothing imported):

1. no import cycle among the package's modules (every ``import`` counts, also one inside a
   function: a lazy import is still a dependency);
2. no two rooms (the subpackages of src/brov2_hybrid; a top-level module is a room of its own)
   import each other, directly or round a longer circle: the rooms stand in layers;
3. no source file over 400 lines in src/, nodes/, scripts/ and test/.
"""
import ast
import os

import pytest

from brov2_hybrid import paths

ROOT = paths.package_root()
SRC = os.path.join(ROOT, "src")
MAX_LINES = 400


def _modules():
    """{dotted module name: path} of every module of src/brov2_hybrid."""
    out = {}
    for folder, _, files in os.walk(os.path.join(SRC, "brov2_hybrid")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, SRC)[:-3].replace(os.sep, ".")
                out[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return out


def imports_of(source, module, known):
    """The package modules that ``source`` (the text of ``module``) imports, anywhere in it."""
    found = set()
    package = module if module + ".__init__" in known else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            names = [base] + ["%s.%s" % (base, a.name) for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and name != "brov2_hybrid":
                found.add(name)
    return found


def _graph():
    modules = _modules()
    known = set(modules) | {m + ".__init__" for m in modules}
    graph = {}
    for name, path in modules.items():
        with open(path, encoding="utf-8") as handle:
            graph[name] = imports_of(handle.read(), name, known)
    return graph


def cycles(graph):
    """The strongly connected components of ``graph`` with more than one node (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def room_of(module):
    """brov2_hybrid.sim.plant -> brov2_hybrid.sim; a top-level module is its own room."""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_the_cycle_finder_sees_a_circle_and_not_a_layer():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    known = {"brov2_hybrid.sim", "brov2_hybrid.sim.plant", "brov2_hybrid.sim.__init__", "brov2_hybrid.errors"}
    source = "def f():\n    from brov2_hybrid.errors import Brov2Error\nfrom . import plant\n"
    assert imports_of(source, "brov2_hybrid.sim.delay", known) == {"brov2_hybrid.errors", "brov2_hybrid.sim",
                                                                  "brov2_hybrid.sim.plant"}


def test_no_import_cycle_among_the_modules():
    found = cycles(_graph())
    assert not found, "modules importing each other (round a circle): %s" % found


def test_no_two_rooms_import_each_other():
    rooms = {}
    for module, imported in _graph().items():
        rooms.setdefault(room_of(module), set()).update(room_of(m) for m in imported if room_of(m) != room_of(module))
    found = cycles(rooms)
    assert not found, "rooms importing each other (round a circle): %s" % found


def _sources():
    out = []
    for top in ("src", "nodes", "scripts", "test"):
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            for name in files:
                path = os.path.join(folder, name)
                if name.endswith(".py") or (top in ("nodes", "scripts") and _is_python_program(path)):
                    out.append(os.path.relpath(path, ROOT))
    return sorted(out)


def _is_python_program(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return "python" in handle.readline()
    except (UnicodeDecodeError, OSError):
        return False


@pytest.mark.parametrize("relpath", _sources())
def test_no_source_file_over_400_lines(relpath):
    with open(os.path.join(ROOT, relpath), encoding="utf-8") as handle:
        n = sum(1 for _ in handle)
    assert n <= MAX_LINES, "%s: %d lines (at most %d: split it by concept)" % (relpath, n, MAX_LINES)
