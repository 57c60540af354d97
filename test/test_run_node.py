"""The nodes' main() (brov2_hybrid.node_logic.run_node), with a stand-in for rospy."""
import pytest

from brov2_hybrid.errors import ParameterError
from brov2_hybrid.node_logic import run_node as rn


class FakeRos(object):
    """Records what run_node asks of rospy, in order."""

    def __init__(self):
        self.calls = []

    def init_node(self, name):
        self.calls.append(("init_node", name))

    def logfatal(self, msg, *args):
        self.calls.append(("logfatal", msg % args))

    def spin(self):
        self.calls.append(("spin",))


def _refuse(message):
    def build():
        raise ParameterError(message)
    return build


def test_builds_spins_and_cleans_up_in_order():
    ros, node = FakeRos(), object()
    rn.run_node("frames", lambda: node, cleanup=lambda n: ros.calls.append(("cleanup", n)), ros=ros)
    assert ros.calls == [("init_node", "frames"), ("spin",), ("cleanup", node)]


def test_a_refused_start_logs_fatal_and_exits_with_the_nodes_code_without_running():
    ros, refused = FakeRos(), []
    with pytest.raises(SystemExit) as done:
        rn.run_node("csv_reader", _refuse("row 3: pitch_deg 95 beyond 80"), refused_code=1,
                    refused_message="refusing the dive, nothing published: ", on_refused=lambda: refused.append(1),
                    run=lambda n: pytest.fail("ran a refused node"), cleanup=lambda n: pytest.fail("cleaned up"), ros=ros)
    assert done.value.code == 1 and refused == [1]
    assert ros.calls == [("init_node", "csv_reader"),
                         ("logfatal", "csv_reader: refusing the dive, nothing published: row 3: pitch_deg 95 beyond 80")]


def test_default_refusal_code_is_2_and_other_errors_propagate():
    with pytest.raises(SystemExit) as done:
        rn.run_node("logger", _refuse("cannot create the log"), ros=FakeRos())
    assert done.value.code == 2

    def broken():
        raise RuntimeError("a bug, not a refusal")
    with pytest.raises(RuntimeError, match="a bug"):
        rn.run_node("logger", broken, ros=FakeRos())


def test_flush_rosout_waits_before_exiting(monkeypatch):
    slept = []
    monkeypatch.setattr(rn.time, "sleep", slept.append)
    with pytest.raises(SystemExit):
        rn.run_node("joy_input", _refuse("no joystick file"), flush_rosout=True, ros=FakeRos())
    assert slept == [rn.ROSOUT_FLUSH_S]
    with pytest.raises(SystemExit):
        rn.run_node("frames", _refuse("bad"), ros=FakeRos())
    assert slept == [rn.ROSOUT_FLUSH_S]          # no wait unless asked


def test_run_replaces_spin_and_its_number_is_the_exit_code():
    ros, node = FakeRos(), object()
    with pytest.raises(SystemExit) as done:
        rn.run_node("mission", lambda: node, run=lambda n: 4 if n is node else 0,
                    cleanup=lambda n: ros.calls.append(("cleanup",)), ros=ros)
    assert done.value.code == 4 and ros.calls == [("init_node", "mission"), ("cleanup",)]
    rn.run_node("rviz_view", lambda: node, run=lambda n: None, ros=ros)   # no number: returns
