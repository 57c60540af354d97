"""The tether's state as the simulators report it (brov2_hybrid.sim.tether_state): once per period of
vehicle time, the pull and the nodes the plant's tether has then; only with a tether and a ROS shell."""
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.sim.config import load_sim_options
from brov2_hybrid.sim.json_physics import JsonPhysics, ServoFrame
from brov2_hybrid.sim.plant import Plant
from brov2_hybrid.sim.simulator import Simulator, build_arg_parser, simulator_from_args
from brov2_hybrid.sim.tether_state import TetherReporter, load_tether_state_config, reporter_for
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


class Recorder(object):
    """A sink that keeps what it is handed, and the tether's force at that moment."""

    def __init__(self, tether_of=None):
        self.calls = []
        self.tether_of = tether_of

    def __call__(self, t_s, force, nodes, vehicle):
        truth = self.tether_of().force_ned().copy() if self.tether_of else None
        self.calls.append((t_s, force, nodes, truth, vehicle))


class FakeShell(object):
    """The ROS shell's part reporter_for needs: ``tether_sink(topic, frame_id)``."""

    def __init__(self):
        self.sinks = []

    def tether_sink(self, topic, frame_id):
        self.sinks.append((topic, frame_id))
        return Recorder()


class FakeTether(object):
    def __init__(self):
        self.p = np.zeros((3, 3))

    def force_ned(self):
        return np.array([1.0, 2.0, 3.0])


class FakePlant(object):
    def __init__(self, tether):
        self.tether = tether
        self.eta = np.array([4.0, 5.0, 6.0, 0.0, 0.0, 0.0])


def _tethered():
    options = load_sim_options()
    return replace(options, tether=options.tether.with_changes(enabled=True))


def test_the_reporter_reports_once_per_period_of_vehicle_time():
    sink = Recorder()
    reporter = TetherReporter(0.02, sink)
    plant = FakePlant(FakeTether())
    times = np.arange(0.0, 0.2001, 0.0025)          # the firmware's 400 Hz ticks
    reported = [t for t in times if reporter.update(t, plant)]
    np.testing.assert_allclose(reported, np.arange(0.0, 0.2001, 0.02), atol=1e-9)
    assert reporter.reports == len(sink.calls) == 11
    np.testing.assert_allclose(sink.calls[0][1], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(sink.calls[0][4], [4.0, 5.0, 6.0])          # the vehicle's position
    empty = TetherReporter(0.02, sink)
    assert not empty.update(0.0, FakePlant(None)) and empty.next_s == float("inf")    # no tether: nothing, ever


def test_the_reporter_refuses_a_bad_period():
    for bad in (0.0, -1.0, float("nan"), "0.02"):
        with pytest.raises(ValueError, match="period_s"):
            TetherReporter(bad, Recorder())


def test_the_settings_come_from_the_simulator_file():
    config = load_tether_state_config()
    assert config.topic.startswith("/") and config.period_s > 0 and config.frame_id


def test_only_a_ros_shell_with_a_tether_gets_a_reporter():
    shell = FakeShell()
    assert reporter_for(shell, load_sim_options()) is None              # the tether is off by default
    assert reporter_for(None, _tethered()) is None                      # not a ROS node: nothing to publish on
    reporter = reporter_for(shell, _tethered())
    config = load_tether_state_config()
    assert reporter.period_s == config.period_s and shell.sinks == [(config.topic, config.frame_id)]


def test_brov2_sitl_reports_its_tethers_pull_every_period():
    """The simulator hands the plant's tether to its reporter: the force and nodes reported are the
    tether's at that moment, once per period of vehicle time; with --tether from the command line too."""
    sim = Simulator(vehicle=load_vehicle(), sim_options=_tethered(), speedup=50.0)
    try:
        sink = Recorder(lambda: sim.plant.tether)
        sim.tether_report = TetherReporter(0.02, sink)
        sim.advance_to(1.0)
        assert 49 <= len(sink.calls) <= 51
        for t_s, force, nodes, truth, vehicle in sink.calls:
            np.testing.assert_array_equal(force, truth)
            assert nodes.shape == (sim.plant.tether.settings.segments + 1, 3)
        np.testing.assert_allclose(sink.calls[-1][4], sim.plant.eta[:3], atol=0.05)
        np.testing.assert_allclose(np.diff([c[0] for c in sink.calls]), 0.02, atol=0.003)
    finally:
        sim.server.close()
    args = build_arg_parser().parse_args(["--tether", "--address", "tcp:127.0.0.1:0"])
    shell = FakeShell()
    sim = simulator_from_args(args, shell)
    try:
        assert sim.tether_report is not None and len(shell.sinks) == 1
    finally:
        sim.server.close()
    sim = simulator_from_args(build_arg_parser().parse_args(["--address", "tcp:127.0.0.1:0"]), FakeShell())
    try:
        assert sim.tether_report is None
    finally:
        sim.server.close()


def test_the_json_physics_reports_after_each_frame():
    plant = Plant(load_vehicle(), _tethered())
    plant.reset(eta=np.array([0.0, 0.0, 5.0, 0.0, 0.0, 0.0]))
    physics = JsonPhysics(plant)
    sink = Recorder(lambda: plant.tether)
    physics.tether_report = TetherReporter(0.02, sink)
    for k in range(400):                                   # 1 s of ArduSub's 400 Hz frames
        physics.on_frame(ServoFrame(400, k, [1500] * 16))
    assert 50 <= len(sink.calls) <= 51
    for _, force, _, truth, _ in sink.calls:
        np.testing.assert_array_equal(force, truth)
