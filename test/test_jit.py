"""Compiled kernels (brov2_hybrid.jit): one implementation, compiled where numba is.

The compiled stock search and mixers must give exactly the Python functions' numbers (the
RC values the nodes send depend on them), must really be compiled where numba is
installed (a silent fallback would only show as a slow bench), and their disk cache must
follow the sources of every kernel in a family.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from brov2_hybrid import jit
from brov2_hybrid.vehicle import mixers, stock_search
from brov2_hybrid.vehicle.firmware_output import output_stage
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


def _numba_expected():
    """numba must import where requirements-nodeps.txt installs it and numpy is new enough."""
    major, minor = (int(x) for x in np.__version__.split(".")[:2])
    return sys.version_info >= (3, 9) and (major, minor) >= (1, 22) and not jit.jit_disabled()


@pytest.fixture(scope="module")
def heavy():
    return load_vehicle("bluerov2_heavy")


def test_kernels_are_compiled_where_numba_is_installed(heavy):
    stage = output_stage("stock", heavy, heavy.rc_map)
    if not _numba_expected():
        pytest.skip("no numba here (or BROV2_NO_JIT): the Python kernels run")
    assert mixers._kernels() is not None
    assert stage._command is not stock_search.compensated_command     # the numba dispatcher


@pytest.mark.parametrize("name", ["bluerov2_heavy", "bluerov2"])
def test_compiled_stock_search_gives_the_python_kernels_numbers(name):
    """Compiled compensated_command == the same function run as Python, over saturating and
    dead-band commands (the RC values are then the same: test_firmware_output holds both
    to the search as first written)."""
    vehicle = load_vehicle(name)
    stage = output_stage("stock", vehicle, vehicle.rc_map)
    if stage._command is stock_search.compensated_command:
        pytest.skip("the Python kernel runs here")
    rng = np.random.default_rng(3)
    U = np.vstack([rng.uniform(-1.0, 1.0, (400, 6)), rng.uniform(-0.03, 0.03, (100, 6)),
                   np.clip(rng.normal(0.0, 1.5, (200, 6)), -1.0, 1.0)])
    for u in U:
        assert np.array_equal(stage._u_to_send(u, stage._command), stage._u_to_send(u, stock_search.compensated_command)), u


def test_mixer_kernel_matches_the_broadcast_algorithm1(heavy):
    """stock_rows (vectored_6dof) against Algorithm 1 written with numpy broadcasting: the
    same floating-point sums, so bit for bit the same m*."""
    rng = np.random.default_rng(5)
    U = np.vstack([rng.uniform(-1.0, 1.0, (2000, 6)), np.ones((1, 6)), -np.ones((1, 6))])
    T_hat = heavy.T_hat
    contrib = U[:, :, None] * T_hat
    m = 0.0
    for dofs in ((2, 3, 4), (0, 1, 5)):
        xi = contrib[:, dofs[0]] + contrib[:, dofs[1]] + contrib[:, dofs[2]]
        m = m + xi / np.maximum(1.0, np.abs(xi).max(axis=1, keepdims=True))
    np.testing.assert_array_equal(mixers.stock_normalized(U, T_hat), np.clip(m, -1.0, 1.0))
    # the truncation in single precision: 0.25 -> exactly 1600, 1/3 -> 1633 (truncated)
    assert mixers.ardusub_thrust_to_pwm(np.array([0.25, 1.0 / 3.0, -1.0 / 3.0, 2.0])).tolist() == \
        [1600.0, 1633.0, 1366.0, 1900.0]


def test_cache_folder_follows_every_source_of_the_family(tmp_path, monkeypatch):
    """Editing a callee in another module must give the family a new cache folder."""
    a, b = tmp_path / "ka.py", tmp_path / "kb.py"
    a.write_text("def f(x):\n    return g(x) + 1.0\n")
    b.write_text("def g(x):\n    return 2.0 * x\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import ka
        import kb
        first = jit._cache_dir("fam", (ka.f, kb.g), "0.0")
        b.write_text("def g(x):\n    return 3.0 * x\n")
        assert jit._cache_dir("fam", (ka.f, kb.g), "0.0") != first
        assert jit._cache_dir("fam", (ka.f, kb.g), "0.1") != jit._cache_dir("fam", (ka.f, kb.g), "0.0")
    finally:
        sys.path.remove(str(tmp_path))
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "c"))
    assert jit.cache_root() == str(tmp_path / "c")


def test_no_jit_runs_the_python_kernels(heavy):
    """BROV2_NO_JIT=1: the stage flies the Python kernel (a fresh process, as a user sets it)."""
    code = ("from brov2_hybrid.vehicle.vehicle_file import load_vehicle\n"
            "from brov2_hybrid.vehicle.firmware_output import output_stage\n"
            "from brov2_hybrid.vehicle import stock_search, mixers\n"
            "s = load_vehicle('bluerov2_heavy'); st = output_stage('stock', s, s.rc_map)\n"
            "print(st._command is stock_search.compensated_command, mixers._kernels() is None)\n")
    env = dict(os.environ, BROV2_NO_JIT="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


def test_warm_compiles_every_family():
    """`python -m brov2_hybrid.kernels` (make setup) leaves every family compiled where numba is."""
    from brov2_hybrid import kernels
    families = kernels.warm()
    assert {"mixers", "stock_search", "plant"} <= set(families)
    if _numba_expected():
        assert all(families.values()), families


def test_cache_is_shared_by_every_import_path(tmp_path):
    """The catkin workspace imports the package through symlinks, `make setup` from the
    repository: a kernel compiled through one path is loaded, not recompiled, through the other."""
    if not _numba_expected():
        pytest.skip("no numba here")
    real = tmp_path / "real"
    real.mkdir()
    (real / "toy_kernels.py").write_text("def twice(x):\n    return 2.0 * x\n")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "import toy_kernels\n"
            "from brov2_hybrid import jit\n"
            "k = jit.compile_family('toy', (toy_kernels.twice,), lambda c: c['twice'](1.5) == 3.0)\n"
            "print(k is not None)\n")
    env = dict(os.environ, BROV2_NUMBA_CACHE=str(tmp_path / "cache"), NUMBA_DEBUG_CACHE="1")
    runs = [subprocess.run([sys.executable, "-c", code, str(tmp_path / folder)], env=env, capture_output=True,
                           text=True, check=True) for folder in ("link", "real")]
    assert [r.stdout.splitlines()[-1] for r in runs] == ["True", "True"]
    assert "data saved to" in runs[0].stdout
    assert "data loaded from" in runs[1].stdout and "data saved to" not in runs[1].stdout


_PIPELINE = r'''
import numpy as np
from brov2_hybrid import jit
from brov2_hybrid.control.law import HybridController, normalize
from brov2_hybrid.link.ardusub import PWM_NEUTRAL_US
from brov2_hybrid.control.autopilot_safety import AutopilotCore
from brov2_hybrid.params import load_controller_params
from brov2_hybrid.sim.config import load_link_config
from brov2_hybrid.sim.simulator import Simulator
from brov2_hybrid.vehicle.firmware_output import stage_for_firmware
from brov2_hybrid.vehicle.vehicle_file import load_vehicle

vehicle = load_vehicle()
for firmware, integral in (("quantitative", False), ("stock", True)):
    link = load_link_config()
    link.address, link.udp_out = "tcp:127.0.0.1:0", "127.0.0.1:9"
    sim = Simulator(vehicle=vehicle, link_config=link, initial_eta=[0, 0, 5.0, 0, 0, 0])
    sim.firmware.params.set("MOT_MIXER", 0 if firmware == "quantitative" else 1)
    sim.firmware.set_armed(0.0, True)
    controller = HybridController(vehicle.body, load_controller_params(), vehicle.tau_max, vehicle.passive_dofs)
    controller.configure(omega_d_rad_s=3.5, integral_enabled=integral)      # a live retune, as from rqt
    core = AutopilotCore(controller, 0.5, 0.5)
    stage = stage_for_firmware(firmware, vehicle, vehicle.rc_map)
    try:
        for k in range(100):              # 2 s of control_law -> thruster_allocation -> firmware -> plant
            t = sim.t_s
            eta2, nu2 = sim.plant.measured_attitude()
            core.set_attitude(t, eta2, nu2, received_s=t)
            core.set_desired(t, np.array([0.0, 0.1, 0.5]), np.array([0.2, 0.0, -0.1]), received_s=t)
            result = core.tick(t)
            u, _ = normalize(result.tau_body_frd, vehicle.tau_max)
            channels = stage.command(u).channel_pwm
            sim.firmware.handle_rc_override(t, sim.firmware.sysid_mygcs,
                                            [channels.get(ch, int(PWM_NEUTRAL_US)) for ch in range(1, 9)])
            sim.advance_to(t + 0.02)
    finally:
        sim.close()
compiled = [(name + "." + f, d) for name, ks in jit._FAMILIES.items() if ks for f, d in ks.items()]
missed = sorted(name for name, d in compiled if d.stats.cache_misses)
print("families", sorted(n for n, ks in jit._FAMILIES.items() if ks), "compiled in flight", missed)
'''


def test_no_kernel_compiles_in_flight_after_the_warm_up(tmp_path):
    """After `python -m brov2_hybrid.kernels` (make setup) on an empty cache, a process flying the node
    pipeline (AutopilotCore and the law with a live retune and integral action, thruster_allocation's
    normalize and output stage on both firmwares, the simulator's firmware and plant) loads every kernel
    variant from the cache: numba compiles none in flight (a compile would stall a control tick for
    seconds)."""
    if not _numba_expected():
        pytest.skip("no numba here")
    env = dict(os.environ, BROV2_NUMBA_CACHE=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-m", "brov2_hybrid.kernels"], env=env, check=True, capture_output=True)
    run = subprocess.run([sys.executable, "-c", _PIPELINE], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    line = run.stdout.strip().splitlines()[-1]
    assert line.endswith("compiled in flight []"), line
    assert "control_law" in line and "stock_search" in line and "plant_io" in line
