"""ArduSubSitl(onboard=...) / ``ardusub_sitl --onboard`` without running ArduSub: the script is installed in
its scripts folder, ArduSub's defaults carry onboard.ardusub_params, and SIM_RATE_HZ and the physics run
at ardusub_sitl.onboard_sim_rate_hz (docs/onboard.md "Onboard vs topside on SITL"). A stand-in binary:
nothing is started."""
import os
import stat

import pytest

from brov2_hybrid.onboard.lua_script import load_onboard_settings
from brov2_hybrid.sim.ardusub_sitl import ArduSubSitl, free_instance, load_sitl_settings
from brov2_hybrid.sim.config import load_initial_state, load_sim_options
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

ONBOARD = load_onboard_settings()
SETTINGS = load_sitl_settings()


@pytest.fixture
def binary(tmp_path):
    path = tmp_path / "ardusub"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (tmp_path / SETTINGS.defaults).write_text("FRAME_CONFIG 2\n")
    return str(path)


def sitl(binary, **kw):
    return ArduSubSitl(load_vehicle("bluerov2_heavy"), load_sim_options(), load_initial_state().eta(),
                       instance=free_instance(), binary=binary, **kw)


def run_defaults(s):
    with open([f for f in s.command()[-1].split(",") if f.endswith("brov2_run.parm")][0]) as handle:
        return handle.read()


def test_onboard_installs_the_script_sets_scripting_and_runs_the_frames_faster(binary):
    s = sitl(binary, onboard=ONBOARD)
    try:
        assert s.script == os.path.join(s.folder, "scripts", ONBOARD.script_name)
        with open(s.script) as handle:
            assert "brov2_hybrid on board" in handle.read()
        defaults = run_defaults(s)
        for name, value in ONBOARD.ardusub_params.items():
            assert "%s %r" % (name, value) in defaults
        assert SETTINGS.onboard_sim_rate_hz > SETTINGS.sim_rate_hz
        assert "SIM_RATE_HZ %d" % SETTINGS.onboard_sim_rate_hz in defaults
        assert s.plant.dt_s == pytest.approx(1.0 / SETTINGS.onboard_sim_rate_hz)
    finally:
        s.close()
    assert not os.path.exists(s.folder)


def test_without_onboard_nothing_changes(binary):
    s = sitl(binary)
    try:
        assert s.script is None and not os.path.exists(os.path.join(s.folder, "scripts"))
        defaults = run_defaults(s)
        assert "SCR_ENABLE" not in defaults and "SIM_RATE_HZ %d" % SETTINGS.sim_rate_hz in defaults
    finally:
        s.close()
