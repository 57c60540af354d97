"""Package-wide contracts that keep the README's claims true.

1. No module imports another module's private names: ``from x import _y`` or ``x._y``
   on an imported module or name, anywhere in src/brov2_hybrid, nodes/ and scripts/.
2. Every public function and method of the core math modules rejects NaN and wrongly
   shaped numeric input with a :class:`~brov2_hybrid.errors.Brov2Error` (a
   ``ValueError``) that says what was expected. The public surface is enumerated with
   ``inspect``; each callable needs an entry in :data:`CASES` (sample valid arguments
   and which of them are numeric), so a new public function without one fails here.
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
import importlib
import inspect
import os

import numpy as np
import pytest

from brov2_hybrid import paths
from brov2_hybrid.errors import Brov2Error

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


# ----------------------------------------------------------------------------- 2. NaN and shapes

CORE_MODULES = ("vehicle.allocation", "control.law", "sim.delay", "control.gains", "physics.hydrostatics",
                "control.integral_action", "control.depth_hold", "physics.kinematics", "vehicle.mixers", "control.rate_estimate",
                "vehicle.rc", "vehicle.saturating_allocation", "vehicle.thrust_table")


def public_surface():
    """Names 'module.function', 'module.Class' (constructor) and 'module.Class.method'."""
    names = []
    for m in CORE_MODULES:
        mod = importlib.import_module("brov2_hybrid." + m)
        for name, obj in vars(mod).items():
            if _private(name) or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj):
                names.append("%s.%s" % (m, name))
            elif inspect.isclass(obj):
                names.append("%s.%s" % (m, name))
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and (inspect.isfunction(member)
                                               or isinstance(member, (classmethod, staticmethod))):
                        names.append("%s.%s.%s" % (m, name, attr))
    return sorted(names)


class Case(object):
    """How to call one public callable: ``target(fixtures)`` gives the callable,
    ``args(fixtures)`` a dict of valid keyword arguments, ``numeric`` the names of the
    arguments that must refuse NaN and a wrong shape (``shape_free``: any shape is valid,
    only NaN is checked). ``numeric=()`` declares a callable without numeric input."""

    def __init__(self, target, args, numeric=(), shape_free=(), note=""):
        self.target, self.args, self.numeric, self.shape_free, self.note = target, args, numeric, shape_free, note


class Fixtures(object):
    """Sample objects the cases are built from (loaded once)."""

    def __init__(self):
        from brov2_hybrid.params import load_controller_params
        from brov2_hybrid.vehicle.rc import load_rc_map
        from brov2_hybrid.vehicle.vehicle_file import load_vehicle
        self.vehicle = load_vehicle()
        self.controller_params = load_controller_params()
        self.rc_map = load_rc_map()

    @property
    def body(self):
        return self.vehicle.body

    def depth_hold(self):
        from brov2_hybrid.control.depth_hold import DepthHold
        hold = DepthHold(self.body, self.controller_params, 3.0, self.vehicle.tau_max[2])
        hold.set_enabled(True)
        hold.measure(0.9, 5.0)
        return hold

    def controller(self):
        from brov2_hybrid.control.law import HybridController
        return HybridController(self.body, self.controller_params, self.vehicle.tau_max)

    def gains(self):
        return self.controller().gains

    def table(self):
        return self.vehicle.table

    def positions(self):
        return self.vehicle.thrusters.positions_m

    def directions(self):
        return self.vehicle.thrusters.directions

    def mixer(self):
        return self.vehicle.mixer()


def _mod(name):
    return importlib.import_module("brov2_hybrid." + name)


def _eta2():
    return np.array([0.1, -0.2, 0.3])


def _class_method(module, cls, method, make):
    return lambda f: getattr(make(f), method)


def _cases():
    k, c, d, g, h, a, mx, rc, tt = (_mod(n) for n in ("physics.kinematics", "control.law", "sim.delay", "control.gains", "physics.hydrostatics",
                                                        "vehicle.allocation", "vehicle.mixers", "vehicle.rc", "vehicle.thrust_table"))
    re_, ia, sa = _mod("control.rate_estimate"), _mod("control.integral_action"), _mod("vehicle.saturating_allocation")
    dh = _mod("control.depth_hold")
    q = [0.1, 0.2, 0.3, 0.927]
    cases = {
        # kinematics
        "physics.kinematics.J1": Case(lambda f: k.J1, lambda f: {"eta2": _eta2()}, ("eta2",)),
        "physics.kinematics.J2": Case(lambda f: k.J2, lambda f: {"eta2": _eta2()}, ("eta2",)),
        "physics.kinematics.J2_inv": Case(lambda f: k.J2_inv, lambda f: {"eta2": _eta2()}, ("eta2",)),
        "physics.kinematics.J2_from_roll_pitch": Case(lambda f: k.J2_from_roll_pitch, lambda f: {"phi": 0.1, "theta": 0.2},
                                              ("phi", "theta")),
        "physics.kinematics.J2_inv_from_roll_pitch": Case(lambda f: k.J2_inv_from_roll_pitch,
                                                  lambda f: {"phi": 0.1, "theta": 0.2}, ("phi", "theta")),
        "physics.kinematics.down_axis_in_body": Case(lambda f: k.down_axis_in_body, lambda f: {"phi": 0.1, "theta": 0.2},
                                             ("phi", "theta")),
        "physics.kinematics.euler_from_quaternion": Case(lambda f: k.euler_from_quaternion, lambda f: {"q": q}, ("q",)),
        "physics.kinematics.euler_ned_frd_from_enu_flu_quaternion": Case(
            lambda f: k.euler_ned_frd_from_enu_flu_quaternion, lambda f: {"q_enu_flu": q}, ("q_enu_flu",)),
        "physics.kinematics.quaternion_enu_flu_to_ned_frd": Case(lambda f: k.quaternion_enu_flu_to_ned_frd,
                                                         lambda f: {"q_enu_flu": q}, ("q_enu_flu",)),
        "physics.kinematics.quaternion_ned_frd_to_enu_flu": Case(lambda f: k.quaternion_ned_frd_to_enu_flu,
                                                         lambda f: {"q_ned_frd": q}, ("q_ned_frd",)),
        "physics.kinematics.quaternion_from_euler": Case(lambda f: k.quaternion_from_euler, lambda f: {"eta2": _eta2()},
                                                 ("eta2",)),
        "physics.kinematics.quaternion_multiply": Case(lambda f: k.quaternion_multiply, lambda f: {"a": q, "b": q}, ("a", "b")),
        "physics.kinematics.vector_enu_to_ned": Case(lambda f: k.vector_enu_to_ned, lambda f: {"v": [1, 2, 3]}, ("v",)),
        "physics.kinematics.vector_ned_to_enu": Case(lambda f: k.vector_ned_to_enu, lambda f: {"v": [1, 2, 3]}, ("v",)),
        "physics.kinematics.vector_flu_to_frd": Case(lambda f: k.vector_flu_to_frd, lambda f: {"v": [1, 2, 3]}, ("v",)),
        "physics.kinematics.vector_frd_to_flu": Case(lambda f: k.vector_frd_to_flu, lambda f: {"v": [1, 2, 3]}, ("v",)),
        "physics.kinematics.euler_angles": Case(lambda f: k.euler_angles, None,
                                                note="a numba kernel on a checked quaternion; euler_from_quaternion checks it"),
        "physics.kinematics.wrapped": Case(lambda f: k.wrapped, None,
                                           note="a numba kernel on a checked float; wrap_angle_float checks it"),
        "physics.kinematics.down_axis": Case(lambda f: k.down_axis, None,
                                             note="a numba kernel on checked floats; down_axis_in_body checks them"),
        "physics.kinematics.j2_matrix": Case(lambda f: k.j2_matrix, None,
                                             note="a numba kernel on checked floats; J2 and J2_from_roll_pitch check them"),
        "physics.kinematics.j2_inv_matrix": Case(lambda f: k.j2_inv_matrix, None,
                                                 note="a numba kernel on checked floats; J2_inv and "
                                                      "J2_inv_from_roll_pitch check them"),
        "physics.kinematics.wrap_angle_float": Case(lambda f: k.wrap_angle_float, lambda f: {"angle_rad": 4.0}, ("angle_rad",)),
        "physics.kinematics.wrap_angle": Case(lambda f: k.wrap_angle, lambda f: {"angle_rad": [4.0, -7.0]}, ("angle_rad",),
                                      shape_free=("angle_rad",)),
        # control
        "control.law.attitude_torque": Case(
            lambda f: c.attitude_torque,
            lambda f: {"eta2d": [0, 0, 0.5], "eta2d_dot": [0, 0, 0], "eta2": _eta2(), "nu2": [0, 0, 0.1],
                       "kp": [1.0, 1.0, 2.0], "kd_total": [0.5, 0.5, 1.0], "feedforward_moment": [0, 0, 0]},
            ("eta2d", "eta2d_dot", "eta2", "nu2", "kp", "kd_total", "feedforward_moment")),
        "control.law.normalize": Case(lambda f: c.normalize,
                                  lambda f: {"tau": np.ones(6), "tau_max": f.vehicle.tau_max}, ("tau", "tau_max")),
        "control.law.ControlOutput": Case(lambda f: c.ControlOutput,
                                      lambda f: {"tau_body_frd": np.zeros(6), "saturated": np.zeros(6, bool)},
                                      note="a result record built by compute(), not an entry point"),
        "control.rate_estimate.DesiredRateEstimator": Case(lambda f: re_.DesiredRateEstimator, lambda f: {"window": 4}, ("window",)),
        "control.rate_estimate.DesiredRateEstimator.set_window": Case(lambda f: re_.DesiredRateEstimator(4).set_window,
                                                        lambda f: {"window": 3}, ("window",)),
        "control.rate_estimate.DesiredRateEstimator.reset": Case(lambda f: re_.DesiredRateEstimator(4).reset, lambda f: {}),
        "control.rate_estimate.DesiredRateEstimator.update": Case(lambda f: re_.DesiredRateEstimator(4).update,
                                                    lambda f: {"t_s": 1.0, "eta2d": _eta2()}, ("t_s", "eta2d")),
        "control.rate_estimate.DesiredRateEstimator.rate": Case(lambda f: re_.DesiredRateEstimator(4).rate,
                                                  lambda f: {"now_s": 1.0}, ("now_s",)),
        "control.law.HybridController": Case(
            lambda f: c.HybridController,
            lambda f: {"body": f.body, "settings": f.controller_params, "tau_max": f.vehicle.tau_max},
            ("tau_max",)),
        "control.law.HybridController.configure": Case(
            lambda f: f.controller().configure,
            lambda f: {"omega_d_rad_s": 3.0, "kappa": 20.0, "linear_scale": 0.5, "integral_ratio": 0.5,
                       "integral_band_rad": 0.1},
            ("omega_d_rad_s", "kappa", "linear_scale", "integral_ratio", "integral_band_rad")),
        "control.law.HybridController.update_desired": Case(lambda f: f.controller().update_desired,
                                                        lambda f: {"t_s": 1.0, "eta2d": _eta2()}, ("t_s", "eta2d")),
        "control.law.HybridController.reset_integral": Case(lambda f: f.controller().reset_integral, lambda f: {}),
        "control.law.HybridController.measure_depth": Case(
            lambda f: f.controller().measure_depth, lambda f: {"t_s": 1.0, "depth_m": 5.0}, ("t_s",),
            note="depth_m NaN is a failed sensor (the hold goes open loop), not an error"),
        "control.depth_hold.DepthHold": Case(
            lambda f: dh.DepthHold, lambda f: {"body": f.body, "settings": f.controller_params, "omega_d_rad_s": 3.0,
                                               "tau_max_heave_n": 199.81},
            ("omega_d_rad_s", "tau_max_heave_n")),
        "control.depth_hold.DepthHold.retune": Case(lambda f: f.depth_hold().retune, lambda f: {"omega_d_rad_s": 2.0},
                                                    ("omega_d_rad_s",)),
        "control.depth_hold.DepthHold.reset": Case(lambda f: f.depth_hold().reset, lambda f: {}),
        "control.depth_hold.DepthHold.set_enabled": Case(lambda f: f.depth_hold().set_enabled,
                                                         lambda f: {"enabled": True}),
        "control.depth_hold.DepthHold.measure": Case(
            lambda f: f.depth_hold().measure, lambda f: {"t_s": 1.0, "depth_m": 5.0}, ("t_s",),
            note="depth_m NaN is a failed sensor (the hold goes open loop), not an error"),
        "control.depth_hold.DepthHold.fresh_depth": Case(lambda f: f.depth_hold().fresh_depth, lambda f: {"t_s": 1.0},
                                                         ("t_s",)),
        "control.depth_hold.DepthHold.heave_force": Case(
            lambda f: f.depth_hold().heave_force,
            lambda f: {"t_s": 1.0, "stick": 0.2, "eta2": _eta2(), "force_x_n": 3.0, "force_y_n": -2.0,
                       "open_loop_z_n": 10.0},
            ("stick", "eta2", "force_x_n", "force_y_n", "open_loop_z_n"),
            note="t_s NaN means no tick time (open loop), not an error"),
        "control.law.HybridController.torque": Case(
            lambda f: f.controller().torque, None,
            note="the in-process loop's tick on checked float arrays; compute checks its inputs and covers it"),
        "control.law.check_gimbal_lock": Case(lambda f: c.check_gimbal_lock, lambda f: {"theta": 0.2}, ("theta",)),
        "control.law.HybridController.kernel_settings": Case(lambda f: f.controller().kernel_settings, lambda f: {}),
        "control.law.HybridController.compute": Case(
            lambda f: f.controller().compute,
            lambda f: {"eta2d": _eta2(), "u_linear": [0.1, 0, 0], "eta2": _eta2(), "nu2": [0, 0, 0.1],
                       "eta2d_dot": [0, 0, 0], "t_s": 1.0},
            ("eta2d", "u_linear", "eta2", "nu2", "eta2d_dot", "t_s")),
        "control.integral_action.IntegralAction": Case(lambda f: ia.IntegralAction, lambda f: {"tau_max_nm": f.vehicle.tau_max[3:]},
                                       ("tau_max_nm",)),
        "control.integral_action.IntegralAction.reset": Case(lambda f: ia.IntegralAction(f.vehicle.tau_max[3:]).reset, lambda f: {}),
        "control.integral_action.IntegralAction.reference": Case(lambda f: ia.IntegralAction(f.vehicle.tau_max[3:]).reference,
                                                 lambda f: {}),
        "control.integral_action.IntegralAction.step": Case(
            lambda f: ia.IntegralAction(f.vehicle.tau_max[3:]).step, None,
            note="the integral's kernel, called by HybridController.compute with validated arrays; "
                 "compute's entry covers its inputs"),
        # gains
        "control.gains.PDGains": Case(lambda f: g.PDGains,
                              lambda f: {"omega_d_rad_s": 3.0, "kappa": 20.0, "kp": np.ones(3), "kd": np.ones(3),
                                         "delta_kd": np.ones(3)},
                              note="a result record built by pd_gains(), not an entry point"),
        "control.gains.pd_gains": Case(lambda f: g.pd_gains,
                               lambda f: {"omega_d_rad_s": 3.0, "total_inertia": [0.96, 1.12, 1.12],
                                          "b_check": [5.1, 5.9, 5.9], "kappa": 20.0},
                               ("omega_d_rad_s", "total_inertia", "b_check", "kappa")),
        "control.gains.trim_linear_drag": Case(lambda f: g.trim_linear_drag,
                                       lambda f: {"linear_drag": [0, 0, 0], "quadratic_drag": [2.0, 2.4, 2.4],
                                                  "v_max": [3.0, 3.0, 3.0]},
                                       ("linear_drag", "quadratic_drag", "v_max")),
        "control.gains.lti_closed_loop": Case(lambda f: g.lti_closed_loop,
                                      lambda f: {"gains": f.gains(), "total_inertia": [0.96, 1.12, 1.12],
                                                 "b_check": [5.1, 5.9, 5.9]},
                                      ("total_inertia", "b_check")),
        # hydrostatics
        "physics.hydrostatics.restoring_wrench": Case(
            lambda f: h.restoring_wrench,
            lambda f: {"eta2": _eta2(), "weight_n": 112.8, "buoyancy_n": 114.8, "r_cg_m": [0, 0, 0],
                       "r_cb_m": [0, 0, -0.02]},
            ("eta2", "weight_n", "buoyancy_n", "r_cg_m", "r_cb_m")),
        "physics.hydrostatics.lever_moment": Case(lambda f: h.lever_moment, None,
                                                  note="a numba kernel on checked floats; restoring_wrench_from_lever "
                                                       "checks them"),
        "physics.hydrostatics.restoring_wrench_from_lever": Case(
            lambda f: h.restoring_wrench_from_lever,
            lambda f: {"phi": 0.1, "theta": -0.2, "net_weight_n": -2.0, "lever": [0.0, 0.0, 2.3]},
            ("phi", "theta", "net_weight_n", "lever")),
        "physics.hydrostatics.restoring_moment": Case(lambda f: h.restoring_moment,
                                              lambda f: {"eta2": _eta2(), "params": f.body}, ("eta2",)),
        # allocation
        "vehicle.allocation.allocation_matrix": Case(lambda f: a.allocation_matrix,
                                             lambda f: {"positions_m": f.positions(),
                                                        "directions": f.directions()},
                                             ("positions_m", "directions")),
        "vehicle.allocation.heuristic_matrix": Case(lambda f: a.heuristic_matrix,
                                            lambda f: {"ardusub_factors": f.vehicle.frame.motor_factors},
                                            ("ardusub_factors",), shape_free=("ardusub_factors",),
                                            note="one row per thruster: any row count is a vehicle"),
        "vehicle.allocation.pseudo_inverse": Case(lambda f: a.pseudo_inverse, lambda f: {"T": f.vehicle.T}, ("T",)),
        "vehicle.allocation.matrix_6xn": Case(lambda f: a.matrix_6xn, lambda f: {"T": f.vehicle.T}, ("T",)),
        "vehicle.allocation.PseudoInverseAllocator": Case(lambda f: a.PseudoInverseAllocator,
                                                  lambda f: {"vehicle": f.vehicle},
                                                  note="built from a loaded Vehicle, which validates its file"),
        "vehicle.allocation.PseudoInverseAllocator.forces": Case(lambda f: f.vehicle.allocator.forces,
                                                         lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.allocation.check_allocator": Case(lambda f: a.check_allocator,
                                           lambda f: {"allocator": f.vehicle.allocator},
                                           note="takes an allocator object; refuses one without the contract"),
        "vehicle.allocation.make_allocator": Case(lambda f: a.make_allocator,
                                          lambda f: {"name": "pseudo_inverse", "vehicle": f.vehicle},
                                          note="built from a loaded Vehicle, which validates its file"),
        # saturating_allocation
        "vehicle.saturating_allocation.SaturatingAllocator": Case(lambda f: sa.SaturatingAllocator,
                                                          lambda f: {"vehicle": f.vehicle},
                                                          note="built from a loaded Vehicle, which validates its file"),
        "vehicle.saturating_allocation.SaturatingAllocator.forces": Case(lambda f: sa.SaturatingAllocator(f.vehicle).forces,
                                                                 lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.saturating_allocation.least_distance": Case(lambda f: sa.least_distance,
                                                     lambda f: {"G": np.eye(2), "h": np.ones(2)}, ("G", "h")),
        "vehicle.allocation.tau_max_from_limit": Case(lambda f: a.tau_max_from_limit,
                                              lambda f: {"T": f.vehicle.T, "directions": f.directions(),
                                                         "force_limit_n": 40.0},
                                              ("T", "directions", "force_limit_n")),
        "vehicle.allocation.thruster_groups": Case(lambda f: a.thruster_groups,
                                           lambda f: {"directions": f.directions()}, ("directions",),
                                           shape_free=("directions",), note="one row per thruster"),
        # mixers
        "vehicle.mixers.stock_rows": Case(
            lambda f: mx.stock_rows, None,
            note="a numba kernel on checked arrays; stock_normalized, stock_normalized_for_frame and "
                 "Mixer.normalized check its inputs and cover them"),
        "vehicle.mixers.truncated_pwm_rows": Case(
            lambda f: mx.truncated_pwm_rows, None,
            note="a numba kernel on checked arrays; ardusub_thrust_to_pwm checks its inputs and covers them"),
        "vehicle.mixers.stock_normalized": Case(lambda f: mx.stock_normalized,
                                        lambda f: {"u": np.full(6, 0.1), "T_hat": f.vehicle.T_hat}, ("u", "T_hat")),
        "vehicle.mixers.stock_normalized_for_frame": Case(
            lambda f: mx.stock_normalized_for_frame,
            lambda f: {"u": np.full(6, 0.1), "T_hat": f.vehicle.T_hat, "frame_config": 1, "fv_coupling_k": 1.0},
            ("u", "T_hat", "fv_coupling_k")),
        "vehicle.mixers.mix_stock": Case(lambda f: mx.mix_stock, lambda f: {"u": np.full(6, 0.1), "T_hat": f.vehicle.T_hat},
                                 ("u", "T_hat")),
        "vehicle.mixers.motor_pwm_from_rc": Case(lambda f: mx.motor_pwm_from_rc,
                                         lambda f: {"channel_pwm": [1500, 1500, 1500, 1600, 1500, 1500],
                                                    "rc_map": f.rc_map, "mixer": f.mixer(), "pwm_min_us": 1100,
                                                    "pwm_max_us": 1900},
                                         ("pwm_min_us", "pwm_max_us"),
                                         note="channel_pwm: whole-microsecond PWMs from the wire (u_from_pwm)"),
        "vehicle.mixers.Mixer": Case(lambda f: mx.Mixer,
                             lambda f: {"kind": "stock", "allocator": f.vehicle.allocator,
                                        "table": f.table(), "T_hat": f.vehicle.T_hat, "frame_config": 1,
                                        "fv_coupling_k": 1.0},
                             ("T_hat", "fv_coupling_k"), shape_free=("T_hat",), note="T_hat: one column per thruster"),
        "vehicle.mixers.Mixer.normalized": Case(lambda f: f.mixer().normalized, lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.mixers.Mixer.pwm": Case(lambda f: f.mixer().pwm, lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.mixers.Mixer.clipped_motor_pwm": Case(lambda f: f.mixer().clipped_motor_pwm,
                                                lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.mixers.algorithm2_stars": Case(lambda f: mx.algorithm2_stars, None,
                                         note="a numba kernel on checked arrays; Mixer.clipped_motor_pwm checks its inputs"),
        "vehicle.mixers.quantitative_motor_pwm": Case(lambda f: mx.quantitative_motor_pwm, None,
                                               note="a numba kernel on checked arrays; Mixer.clipped_motor_pwm checks its inputs"),
        "vehicle.mixers.stock_motor_pwm": Case(lambda f: mx.stock_motor_pwm, None,
                                        note="a numba kernel on checked arrays; Mixer.clipped_motor_pwm checks its inputs"),
        "vehicle.mixers.Mixer.motor_pwm_into": Case(lambda f: f.mixer().motor_pwm_into, None,
                                             note="the loop's tick on a checked u; clipped_motor_pwm checks it"),
        "vehicle.mixers.Mixer.motor_pwm": Case(lambda f: f.mixer().motor_pwm, lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.mixers.ardusub_thrust_to_pwm": Case(lambda f: mx.ardusub_thrust_to_pwm,
                                             lambda f: {"m_star": np.full(8, 0.1), "half_range_us": 400.0},
                                             ("m_star", "half_range_us"), shape_free=("m_star",),
                                             note="m_star: any shape (one value per motor)"),
        # rc
        "vehicle.rc.load_rc_map": Case(lambda f: rc.load_rc_map, lambda f: {}, note="reads params/ (file errors tested in test_params)"),
        "vehicle.rc.RCMap": Case(lambda f: rc.RCMap, lambda f: {"channels": (5, 6, 3, 2, 1, 4), "signs": np.ones(6)},
                         note="built by load_rc_map, which validates the file"),
        "vehicle.rc.rc_from_u": Case(lambda f: rc.rc_from_u, None, note="a numba kernel on checked arrays; RCMap.pwm_from_u checks u"),
        "vehicle.rc.u_from_rc": Case(lambda f: rc.u_from_rc, None, note="a numba kernel on checked arrays; RCMap.u_from_pwm checks the PWMs"),
        "vehicle.rc.RCMap.pwm_from_u": Case(lambda f: f.rc_map.pwm_from_u, lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.rc.RCMap.channel_array_from_u": Case(lambda f: f.rc_map.channel_array_from_u,
                                              lambda f: {"u": np.full(6, 0.1)}, ("u",)),
        "vehicle.rc.RCMap.u_from_pwm": Case(lambda f: f.rc_map.u_from_pwm, lambda f: {"channel_pwm": [1500] * 8},
                                    note="integer PWMs from the wire; 0 / 65535 / missing read as neutral"),
        # delay
        "sim.delay.DelayLine": Case(lambda f: d.DelayLine, lambda f: {"delay_s": 0.1}, ("delay_s",)),
        "sim.delay.DelayLine.clear": Case(lambda f: d.DelayLine(0.1).clear, lambda f: {}),
        "sim.delay.DelayLine.push": Case(lambda f: d.DelayLine(0.1).push, lambda f: {"t_s": 1.0, "value": "any"},
                                     ("t_s",)),
        "sim.delay.DelayLine.get": Case(lambda f: d.DelayLine(0.1).get, lambda f: {"t_s": 1.0}, ("t_s",)),
        "sim.delay.DelayLine.pop_due": Case(lambda f: d.DelayLine(0.1).pop_due, lambda f: {"t_s": 1.0}, ("t_s",)),
        "sim.delay.DelayLine.next_due_s": Case(lambda f: d.DelayLine(0.1).next_due_s, lambda f: {}),
        # thrust_table
        "vehicle.thrust_table.read_t200_csv": Case(lambda f: tt.read_t200_csv,
                                           lambda f: {"path": paths.params_path("t200_16V.csv")},
                                           note="reads a file (malformed files tested in test_thrust_table)"),
        "vehicle.thrust_table.probe_table": Case(lambda f: tt.probe_table, lambda f: {},
                                                 note="no arguments: the bundled table the kernels' self-checks use"),
        "vehicle.thrust_table.ThrustTable": Case(lambda f: tt.ThrustTable,
                                         lambda f: {"pwm_us": [1100, 1500, 1900], "force_n": [-30.0, 0.0, 40.0]},
                                         ("pwm_us", "force_n")),
        "vehicle.thrust_table.ThrustTable.from_csv": Case(lambda f: tt.ThrustTable.from_csv,
                                                  lambda f: {"path": paths.params_path("t200_16V.csv")},
                                                  note="reads a file"),
        "vehicle.thrust_table.ThrustTable.from_params": Case(lambda f: None, None, note="reads parameters (test_params)"),
        "vehicle.thrust_table.ThrustTable.force_from_pwm": Case(lambda f: f.table().force_from_pwm,
                                                        lambda f: {"pwm_us": np.full(8, 1600.0)}, ("pwm_us",),
                                                        shape_free=("pwm_us",)),
        "vehicle.thrust_table.star_from_force": Case(lambda f: tt.star_from_force, None,
                                              note="a numba kernel on checked arrays; ThrustTable.normalized_from_force checks the forces"),
        "vehicle.thrust_table.stars_from_forces": Case(lambda f: tt.stars_from_forces, None,
                                                note="a numba kernel on checked arrays; ThrustTable.normalized_from_force checks the forces"),
        "vehicle.thrust_table.pwm_from_star": Case(lambda f: tt.pwm_from_star, None,
                                            note="a numba kernel on checked arrays; ThrustTable.pwm_from_normalized checks m*"),
        "vehicle.thrust_table.pwms_from_stars": Case(lambda f: tt.pwms_from_stars, None,
                                              note="a numba kernel on checked arrays; ThrustTable.pwm_from_normalized checks m*"),
        "vehicle.thrust_table.interp_at": Case(
            lambda f: tt.interp_at, None,
            note="a numba kernel on a checked table and a finite PWM: the stock search looks up the whole-"
                 "microsecond motor PWMs of checked commands (test_thrust_table holds it to np.interp)"),
        "vehicle.thrust_table.ThrustTable.pwm_from_force": Case(lambda f: f.table().pwm_from_force,
                                                        lambda f: {"force_n": np.full(8, 5.0)}, ("force_n",),
                                                        shape_free=("force_n",)),
        "vehicle.thrust_table.ThrustTable.normalized_from_force": Case(lambda f: f.table().normalized_from_force,
                                                               lambda f: {"force_n": np.full(8, 5.0)}, ("force_n",),
                                                               shape_free=("force_n",)),
        "vehicle.thrust_table.ThrustTable.pwm_from_normalized": Case(lambda f: f.table().pwm_from_normalized,
                                                             lambda f: {"m_star": np.full(8, 0.1)}, ("m_star",),
                                                             shape_free=("m_star",)),
    }
    return cases


#: Checks that fail today, with why (strict: remove the entry when fixed). None left.
KNOWN_FAILURES = {}

CASES = _cases()


@pytest.fixture(scope="module")
def fixtures():
    return Fixtures()


def test_every_public_callable_has_a_case():
    """A new public function or method of a core module needs an entry in CASES."""
    surface = set(public_surface())
    missing = sorted(surface - set(CASES))
    stale = sorted(set(CASES) - surface)
    assert not missing, "public callables without a case in test_package_contracts.CASES: %s" % missing
    assert not stale, "CASES entries for callables that no longer exist: %s" % stale


def _nan_like(value):
    arr = np.array(value, dtype=float)
    if arr.ndim == 0:
        return float("nan")
    arr = arr.copy()
    arr.flat[arr.size // 2] = np.nan
    return arr


def _wrong_shape(value):
    arr = np.array(value, dtype=float)
    if arr.ndim == 0:
        return np.array([float(arr), float(arr)])       # a vector where a number belongs
    return np.append(arr.ravel(), arr.flat[0]).reshape(-1) if arr.ndim == 1 else arr[:-1]


def _checks():
    out = []
    for name in sorted(CASES):
        case = CASES[name]
        for arg in case.numeric:
            for kind in ("nan",) + (() if arg in case.shape_free else ("shape",)):
                marks = ()
                if (name, arg, kind) in KNOWN_FAILURES:
                    marks = (pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[(name, arg, kind)]),)
                out.append(pytest.param(name, arg, kind, marks=marks, id="%s-%s-%s" % (name, arg, kind)))
    return out


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.args is not None))
def test_sample_arguments_are_valid(fixtures, name):
    """The declared sample arguments are accepted (so the refusals below are about the bad value)."""
    case = CASES[name]
    case.target(fixtures)(**case.args(fixtures))


@pytest.mark.parametrize("name, arg, kind", _checks())
def test_rejects_nan_and_wrong_shapes(fixtures, name, arg, kind):
    case = CASES[name]
    args = case.args(fixtures)
    args[arg] = _nan_like(args[arg]) if kind == "nan" else _wrong_shape(args[arg])
    with pytest.raises(Brov2Error, match="expected") as info:
        case.target(fixtures)(**args)
    assert isinstance(info.value, ValueError)
