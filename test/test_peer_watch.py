"""PeerWatch: restarts and absences of the watched nodes, each told once."""
from brov2_hybrid.mission.interfaces import INFO, WARN
from brov2_hybrid.mission.peer_watch import PeerWatch


def test_a_restart_is_told_once_with_both_pids():
    w = PeerWatch(["control_law", "logger"])
    assert w.update({"control_law": 100, "logger": 200}) == []
    assert w.update({"control_law": 100, "logger": 200}) == []
    assert w.update({"control_law": None, "logger": 200}) == [
        (WARN, "control_law is not running (pid 100 gone); the launch respawns it")]
    assert w.update({"control_law": None, "logger": 200}) == []          # said once
    assert w.update({"control_law": 101, "logger": 200}) == [
        (WARN, "control_law restarted (pid 100 -> 101): it died and was respawned")]
    assert w.update({"control_law": 101, "logger": 200}) == []


def test_a_respawn_between_two_polls_is_still_a_restart():
    w = PeerWatch(["logger"])
    w.update({"logger": 7})
    assert w.update({"logger": 9}) == [(WARN, "logger restarted (pid 7 -> 9): it died and was respawned")]


def test_a_node_never_seen_says_nothing_and_a_brief_silence_is_told_back():
    w = PeerWatch(["mavlink_bridge", "frames"])
    assert w.update({}) == []                                           # real MAVROS: no bridge
    w.update({"frames": 5})
    assert w.update({"frames": None}) == [(WARN, "frames is not running (pid 5 gone); the launch respawns it")]
    assert w.update({"frames": 5}) == [(INFO, "frames answers again (pid 5)")]   # the master was slow to answer
