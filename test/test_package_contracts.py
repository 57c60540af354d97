"""Package-wide contracts that keep the README's claims true.

1. No module imports another module's private names: ``from x import _y`` or ``x._y``
   on an imported module or name, anywhere in src/brov2_hybrid, nodes/ and scripts/.
2. NaN and wrongly shaped input to the core math modules: test_input_contracts.py.
3. Every public function, class and method in src/brov2_hybrid, nodes/ and scripts/ has a
   docstring (:func:`undocumented`, an ``ast`` scan; placed after section 1).
4. One word, one thing (issue 15): a :class:`~brov2_hybrid.vehicle.vehicle_file.Vehicle` is
   called ``vehicle``, never ``setup`` -- no parameter, variable, attribute, keyword or
   fixture named ``setup`` or ``*_setup`` in src/brov2_hybrid, nodes/, scripts/ and test/
   (:func:`setup_names`, an ``ast`` scan) -- and no class of src/brov2_hybrid but ``Vehicle``
   has "Vehicle" in its name (the plant, the simulator's MAVLink side and the FCU have their
   own words: ``Plant``, ``MavlinkProtocol``, ``Fcu*``). Placed after section 3.
5. The six DOF names are written once (``brov2_hybrid.dofs``): no other tuple or list
   literal in src/brov2_hybrid, nodes/ and scripts/ names three or more of them.
"""
import ast
import os

import pytest

from brov2_hybrid import paths

ROOT = paths.package_root()

# ----------------------------------------------------------------------------- 1. private names


def _python_files():
    out = []
    for base, _, names in os.walk(os.path.join(ROOT, "src", "brov2_hybrid")):
        out += [os.path.join(base, n) for n in names if n.endswith(".py")]
    for folder in ("nodes", "scripts"):
        d = os.path.join(ROOT, folder)
        for n in sorted(os.listdir(d)):
            path = os.path.join(d, n)
            if not os.path.isfile(path):
                continue
            if n.endswith(".py"):
                out.append(path)
            elif "." not in n:
                with open(path, "rb") as handle:
                    if b"python" in handle.readline():
                        out.append(path)
    return sorted(os.path.relpath(p, ROOT) for p in out)


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_crossings(source, filename="<source>"):
    """[(line, text)] where ``source`` uses a private name of a brov2_hybrid module."""
    tree = ast.parse(source, filename)
    imported = set()     # local names bound to brov2_hybrid modules or to names from them
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "brov2_hybrid":
            for alias in node.names:
                if _private(alias.name):
                    found.append((node.lineno, "from %s import %s" % (node.module, alias.name)))
                imported.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "brov2_hybrid":
                    imported.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute) and not _private(base.attr):
                base = base.value        # brov2_hybrid.params._Section: walk to the root name
            if isinstance(base, ast.Name) and base.id in imported:
                found.append((node.lineno, "%s.%s" % (base.id, node.attr)))
    return sorted(set(found))


#: Files known to cross today, with who is fixing them. strict: the day a file is clean
#: the test XPASSes and fails, and its entry must go.
KNOWN_CROSSINGS = {}


def test_crossing_finder_sees_every_form():
    src = ("from brov2_hybrid.params import _Section, load_yaml\n"
           "import brov2_hybrid.physics.kinematics as k\n"
           "from brov2_hybrid.physics import hydrostatics\n"
           "a = k._J2(0, 0) + hydrostatics._restoring_wrench + load_yaml._cache\n"
           "b = self._private + np.linalg._umath + k.J2 + k.__name__\n")
    assert [text for _, text in private_crossings(src)] == [
        "from brov2_hybrid.params import _Section", "hydrostatics._restoring_wrench", "k._J2", "load_yaml._cache"]


@pytest.mark.parametrize("relpath", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=KNOWN_CROSSINGS[p])) if p in KNOWN_CROSSINGS else p
    for p in _python_files()])
def test_no_module_imports_private_names(relpath):
    with open(os.path.join(ROOT, relpath)) as handle:
        found = private_crossings(handle.read(), relpath)
    assert not found, "%s uses private names of other modules: %s" % (
        relpath, "; ".join("line %d: %s" % f for f in found))


# ----------------------------------------------------------------------------- 3. docstrings


def undocumented(source, filename="<source>"):
    """[(line, name)] of public functions, classes and methods of ``source`` without a docstring.

    Public: a module-level or class-level def / class whose name does not start with "_"
    (a property's setter counts as its own definition). Nested functions are not counted.
    """
    tree = ast.parse(source, filename)
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not child.name.startswith("_") and ast.get_docstring(child) is None:
                    found.append((child.lineno, prefix + child.name))
                if isinstance(child, ast.ClassDef):
                    visit(child, prefix + child.name + ".")
    visit(tree, "")
    return found


def test_undocumented_finder_sees_functions_classes_methods_and_setters():
    source = ('def f():\n    pass\n'
              'def _private():\n    pass\n'
              'class C:\n    """Doc."""\n    def m(self):\n        pass\n'
              '    @property\n    def p(self):\n        """Doc."""\n    @p.setter\n    def p(self, v):\n        pass\n'
              'class D:\n    def ok(self):\n        """Doc."""\n        def inner():\n            pass\n')
    assert [name for _, name in undocumented(source)] == ["f", "C.m", "C.p", "D"]


@pytest.mark.parametrize("path", _python_files())
def test_every_public_name_has_a_docstring(path):
    """Every public function, class and method in src/brov2_hybrid, nodes/ and scripts/
    says what it does (issue 15: the project explains itself)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        missing = undocumented(handle.read(), path)
    assert not missing, "%s: public names without a docstring: %s" % (
        path, ", ".join("%s (line %d)" % (name, line) for line, name in missing))


# ----------------------------------------------------------------------------- 4. names

#: Names that end in "_setup" and are not a Vehicle, each with what it is.
SETUP_NAMES_ALLOWED = {
    "signing_setup": "the bridge's ~signing_setup parameter: whether to send MAVLink SETUP_SIGNING",
}


def _is_setup_name(name):
    return (name == "setup" or name.endswith("_setup")) and name not in SETUP_NAMES_ALLOWED


def setup_names(source, filename="<source>"):
    """[(line, what)] where ``source`` names something ``setup`` (or ``*_setup``): a parameter,
    a variable, an attribute, a call's keyword, a function (a pytest fixture) or a
    ``pytest.mark.parametrize`` argument. A Vehicle is ``vehicle`` (issue 15)."""
    tree = ast.parse(source, filename)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and _is_setup_name(node.arg):
            found.append((node.lineno, "parameter %s" % node.arg))
        elif isinstance(node, ast.Name) and _is_setup_name(node.id):
            found.append((node.lineno, "name %s" % node.id))
        elif isinstance(node, ast.Attribute) and _is_setup_name(node.attr):
            found.append((node.lineno, "attribute .%s" % node.attr))
        elif isinstance(node, ast.keyword) and node.arg and _is_setup_name(node.arg):
            found.append((node.value.lineno, "keyword %s=" % node.arg))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_setup_name(node.name):
            found.append((node.lineno, "function %s" % node.name))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parametrize"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            for name in node.args[0].value.replace(",", " ").split():
                if _is_setup_name(name):
                    found.append((node.lineno, "parametrized %s" % name))
    return sorted(set(found))


def vehicle_classes(source, filename="<source>"):
    """[(line, name)] of the classes of ``source`` with "Vehicle" in the name, but ``Vehicle``."""
    return [(node.lineno, node.name) for node in ast.walk(ast.parse(source, filename))
            if isinstance(node, ast.ClassDef) and "vehicle" in node.name.lower() and node.name != "Vehicle"]


def _test_files():
    out = []
    for base, dirs, names in os.walk(os.path.join(ROOT, "test")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out += [os.path.relpath(os.path.join(base, n), ROOT) for n in names if n.endswith(".py")]
    return sorted(out)


def test_setup_finder_sees_every_form():
    source = ("def f(setup, plant_setup=None, *, signing_setup=True):\n"
              "    setup = load_vehicle()\n"
              "    ctx.setup.body, Loop(setup=v), self.signing_setup, setup_parser(p), signing.setup_due(0)\n"
              "@pytest.fixture\ndef setup():\n    pass\n"
              "@pytest.mark.parametrize('setup, n', [(1, 2)])\ndef test_a(setup, n):\n    pass\n"
              "class MavlinkVehicle:\n    pass\nclass Vehicle:\n    pass\nclass vehicle_clock:\n    pass\n")
    assert setup_names(source) == [
        (1, "parameter plant_setup"), (1, "parameter setup"), (2, "name setup"), (3, "attribute .setup"),
        (3, "keyword setup="), (5, "function setup"), (7, "parametrized setup"), (8, "parameter setup")]
    assert vehicle_classes(source) == [(10, "MavlinkVehicle"), (14, "vehicle_clock")]


@pytest.mark.parametrize("path", _python_files() + _test_files())
def test_no_setup_names_in_the_code(path):
    """No parameter, variable, attribute, keyword or fixture named ``setup`` (issue 15:
    ``vehicle`` is the one word for a Vehicle; pytest's and setuptools' own ``setup``
    live in files this does not scan)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        found = setup_names(handle.read(), path)
    assert not found, "%s: a Vehicle is `vehicle`, not `setup`: %s" % (
        path, ", ".join("%s (line %d)" % (what, line) for line, what in found))


def test_only_the_vehicle_description_is_a_vehicle_class():
    """In src/brov2_hybrid only ``Vehicle`` (the vehicle file) has "Vehicle" in a class name."""
    found = []
    for path in _python_files():
        if path.startswith(os.path.join("src", "brov2_hybrid")):
            with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
                found += ["%s:%d %s" % (path, line, name) for line, name in vehicle_classes(handle.read(), path)]
    assert not found, "classes named after the vehicle that are not the Vehicle: %s" % ", ".join(found)


# ----------------------------------------------------------------------------- 5. DOF names

#: The DOF names; src/brov2_hybrid/dofs.py alone spells them out together.
_DOF_WORDS = {"surge", "sway", "heave", "roll", "pitch", "yaw"}


def spelled_dof_tuples(source, filename="<source>"):
    """[line] of tuple / list literals of ``source`` that name three or more DOFs."""
    tree = ast.parse(source, filename)
    return sorted(node.lineno for node in ast.walk(tree)
                  if isinstance(node, (ast.Tuple, ast.List))
                  and len({e.value for e in node.elts if isinstance(e, ast.Constant)} & _DOF_WORDS) >= 3)


def test_dof_tuple_finder():
    assert spelled_dof_tuples('a = ("roll", "pitch", "yaw")\nb = ["x", "y"]\nc = ["surge", 1, "sway", "heave"]\n') == [1, 3]


@pytest.mark.parametrize("path", [p for p in _python_files() if p != os.path.join("src", "brov2_hybrid", "dofs.py")])
def test_dof_names_are_written_once(path):
    """The DOF names come from brov2_hybrid.dofs (issue 15: each fact once)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        lines = spelled_dof_tuples(handle.read(), path)
    assert not lines, "%s: DOF names spelled out on line(s) %s; import them from brov2_hybrid.dofs" % (path, lines)
