"""The live-tunable settings table (live_settings) agrees with cfg/HybridAutopilot.cfg and
with the controller: seeding from controller.yaml and applying it back changes nothing."""
import importlib.util
import math
import os
import re

import pytest

from brov2_hybrid.control import live_settings
from brov2_hybrid.control.law import HybridController
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from brov2_hybrid.params import load_controller_params

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CFG = os.path.join(REPO, "cfg", "HybridAutopilot.cfg")


def cfg_names():
    with open(CFG) as handle:
        return re.findall(r'gen\.add\("(\w+)"', handle.read())


def test_the_table_names_exactly_the_cfg_knobs():
    names = cfg_names()
    assert len(names) == len(set(names)) == 18
    assert sorted(live_settings.NAMES) == sorted(names)


def test_seed_then_apply_changes_nothing_and_each_knob_reaches_the_controller():
    vehicle = load_vehicle()
    settings = load_controller_params()
    controller = HybridController(vehicle.body, settings, vehicle.tau_max)
    seed = live_settings.from_settings(settings)
    assert seed["integral_band_deg"] == pytest.approx(2.0)            # controller.yaml says 2 deg
    assert controller.configure(**live_settings.configure_kwargs(seed)) == []
    changed = dict(seed, omega_d_rad_s=4.0, yaw_enabled=False, integral_band_deg=5.0)
    controller.configure(**live_settings.configure_kwargs(changed))
    assert controller.gains.omega_d_rad_s == 4.0
    assert list(controller.closed_loop_enabled) == [True, True, False]
    assert controller.integral.band_rad == pytest.approx(math.radians(5.0))
    assert not controller.depth_hold.enabled                           # controller.yaml: off
    controller.configure(**live_settings.configure_kwargs(dict(changed, depth_hold_enabled=True)))
    assert controller.depth_hold.enabled
    omega_before = controller.depth_hold.omega_rad_s                  # heave_omega_ratio * omega_d, capped
    controller.configure(**live_settings.configure_kwargs(dict(changed, depth_hold_enabled=True,
                                                                heave_omega_rad_s=0.8)))
    assert controller.depth_hold.omega_rad_s == 0.8 != omega_before
    assert controller.depth_hold.kp == pytest.approx(controller.depth_hold.total_mass_kg * 0.8 ** 2)
    assert not controller.reference_feedforward_enabled                # controller.yaml: off
    controller.configure(**live_settings.configure_kwargs(dict(changed, reference_feedforward_enabled=True,
                                                                reference_filter_omega_rad_s=7.0)))
    assert controller.reference_feedforward_enabled and controller.reference_filter.omega_rad_s == 7.0


def test_a_request_missing_a_knob_names_it():
    seed = live_settings.from_settings(load_controller_params())
    del seed["kappa"]
    with pytest.raises(KeyError, match="kappa"):
        live_settings.configure_kwargs(seed)


def _generated_config():
    """The catkin-generated HybridAutopilotConfig (conftest puts src/ first on sys.path,
    whose brov2_hybrid has no cfg subpackage: load the devel-space file itself)."""
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        path = os.path.join(entry, "brov2_hybrid", "cfg", "HybridAutopilotConfig.py")
        if entry and os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("generated_hybrid_autopilot_config", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    pytest.skip("catkin workspace not built or not sourced (source scripts/env.sh)")


def test_generated_cfg_defaults_are_controller_yaml():
    generated = _generated_config()
    seed = live_settings.from_settings(load_controller_params())
    for name in live_settings.NAMES:
        assert generated.defaults[name] == pytest.approx(seed[name]), name


def test_launch_files_leave_the_controller_defaults_to_controller_yaml():
    """params/controller.yaml is the one place of the knobs' defaults: a launch file may pass a
    value a user gave (an arg whose default is empty), never a number of its own."""
    import glob
    import os
    import xml.etree.ElementTree as ET
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    files = glob.glob(os.path.join(root, "launch", "*.launch"))
    assert files
    for path in files:
        tree = ET.parse(path)
        args = {a.get("name"): a.get("default") for a in tree.iter("arg") if a.get("default") is not None}
        for param in tree.iter("param"):
            if param.get("name") not in live_settings.NAMES:
                continue
            value = param.get("value", "")
            assert value.startswith("$(arg "), "%s: %s set to %r (controller.yaml holds the default)" % (
                path, param.get("name"), value)
            arg = value[len("$(arg "):-1]
            assert args.get(arg) == "", "%s: arg %s defaults to %r, expected '' (controller.yaml's)" % (
                path, arg, args.get(arg))
            assert param.get("if"), "%s: %s is set even when %s is empty" % (path, param.get("name"), arg)
        for name in ("omega_d", "kappa"):
            if name in args:
                assert args[name] == "", "%s: arg %s defaults to %r" % (path, name, args[name])


def test_on_board_every_knob_but_omega_d_is_named_when_it_changes():
    settings = load_controller_params()
    before = live_settings.from_settings(settings)
    assert live_settings.not_live_on_board(None, before) == []
    assert live_settings.not_live_on_board(before, dict(before)) == []
    assert live_settings.not_live_on_board(before, dict(before, omega_d_rad_s=9.0)) == []
    changed = dict(before, integral_enabled=not before["integral_enabled"], yaw_enabled=not before["yaw_enabled"],
                   integral_band_deg=before["integral_band_deg"] + 1.0)
    assert live_settings.not_live_on_board(before, changed) == ["integral_band_deg", "integral_enabled", "yaw_enabled"]
    # every knob is one or the other: none slips past the warning
    for name in live_settings.NAMES:
        flipped = dict(before, **{name: "changed"})
        assert live_settings.not_live_on_board(before, flipped) == ([] if name in live_settings.ON_BOARD_LIVE else [name])
