"""Lockstep: simulated time waits for each control step's command (brov2_hybrid.sim.lockstep).

The gate alone with a fake wall clock, then the whole simulator over loopback TCP with a
pymavlink controller that answers every attitude: a controller that is slow and jittery
must fly exactly the same trajectory as a fast one (what a busy machine does to a run).
"""
import os
import random
import select
import threading

import numpy as np
import pytest

os.environ["MAVLINK20"] = "1"
from pymavlink import mavutil  # noqa: E402

from brov2_hybrid.errors import Brov2Error  # noqa: E402
from brov2_hybrid.sim.config import load_link_config  # noqa: E402
from brov2_hybrid.sim.lockstep import (LockstepConfig, LockstepGate, controller_link,  # noqa: E402
                                       load_lockstep_config)
from brov2_hybrid.sim.simulator import Simulator  # noqa: E402

mavutil.set_dialect("ardupilotmega")
mavlink = mavutil.mavlink

CHANNELS = (5, 6, 3, 2, 1, 4)          # the Heavy's surge, sway, heave, roll, pitch, yaw channels
PERIOD_S = 0.02


class FakeClock(object):
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def _gate(timeout_s=1.0, release_after=3, clock=None):
    return LockstepGate(CHANNELS, PERIOD_S, LockstepConfig(timeout_s, release_after, 0.04), clock=clock or FakeClock())


def _override(pwm6):
    """18 raw channels carrying pwm6 on CHANNELS."""
    raw = [1500] * 8 + [0] * 10
    for ch, v in zip(CHANNELS, pwm6):
        raw[ch - 1] = v
    return raw


CMD = (1500, 1500, 1500, 1500, 1500, 1620)


def test_before_the_first_command_nothing_is_held():
    gate = _gate()
    gate.on_attitude_sent(0.02)
    assert not gate.holding and not gate.engaged


def test_a_step_is_answered_by_its_command_and_the_override_in_either_order():
    for override_first in (True, False):
        gate = _gate()
        gate.engage()
        gate.on_attitude_sent(0.04)
        assert gate.holding
        if override_first:
            gate.on_override(_override(CMD))
            assert gate.update() is None and gate.holding      # the override alone is not enough
            gate.answer(0.04, CMD)
        else:
            gate.answer(0.04, CMD)
            gate.update()
            assert gate.holding                                  # the command alone is not enough
            gate.on_override(_override(CMD))
        gate.update()
        assert not gate.holding
        assert gate.counters == {"steps": 1, "answered": 1, "timeouts": 0, "released": 0}


def test_a_command_for_another_attitude_or_with_other_channels_does_not_answer():
    clock = FakeClock()
    gate = _gate(timeout_s=0.5, clock=clock)
    gate.engage()
    gate.on_attitude_sent(0.06)
    gate.on_override(_override(CMD))
    gate.answer(0.04, CMD)                                    # the previous step's (a re-send)
    gate.update()
    assert gate.holding
    gate.answer(0.06, (1500,) * 6)                            # this step's, but not what the link carried
    gate.update()
    assert gate.holding
    clock.t += 0.6
    note = gate.update()
    assert not gate.holding and gate.counters["timeouts"] == 1 and note.warning
    assert "0.060" in note.text and "not what the override carries" in note.text


def test_unanswered_steps_go_on_after_the_timeout_then_the_gate_runs_free():
    clock = FakeClock()
    gate = _gate(timeout_s=0.5, release_after=2, clock=clock)
    gate.engage()
    for k, t in enumerate((0.02, 0.04)):
        gate.on_attitude_sent(t)
        assert gate.holding and gate.wait_s() == pytest.approx(0.5)
        clock.t += 0.49
        gate.update()
        assert gate.holding
        clock.t += 0.02
        note = gate.update()
        assert not gate.holding and "no command for it" in note.text and note.warning
    assert "running free" in note.text and not gate.engaged
    gate.on_attitude_sent(0.06)
    assert not gate.holding
    gate.answer(0.06, CMD)                                    # commands again: engaged again
    note = gate.update()
    assert "first command" in note.text and not note.warning and gate.engaged


def test_a_released_override_lets_the_simulator_run_free_at_once():
    gate = _gate()
    gate.engage()
    gate.on_attitude_sent(0.02)
    gate.on_override([0] * 18)             # thruster_allocation released our channels at the end
    assert not gate.holding and not gate.engaged
    note = gate.update()
    assert "released" in note.text and not note.warning and gate.counters["timeouts"] == 0
    gate.on_attitude_sent(0.04)
    assert not gate.holding


def test_attitudes_within_half_a_control_period_are_one_step():
    gate = _gate()
    gate.engage()
    gate.on_attitude_sent(0.020)
    gate.answer(0.020, CMD)
    gate.on_override(_override(CMD))
    gate.update()
    gate.on_attitude_sent(0.0275)           # a faster attitude stream: control_law does not tick on it
    assert not gate.holding
    gate.on_attitude_sent(0.030)            # half a period after the last step: a tick
    assert gate.holding


def test_an_answer_from_another_thread_wakes_the_simulator():
    gate = _gate()
    threading.Thread(target=gate.answer, args=(0.02, CMD)).start()
    readable, _, _ = select.select([gate], [], [], 5.0)
    assert readable == [gate]
    gate.update()
    assert select.select([gate], [], [], 0.0)[0] == []       # drained
    gate.close()
    gate.answer(0.04, CMD)                                   # after the simulator stopped: dropped, no error


def test_settings_come_from_the_files_and_the_parameter_server(tmp_path):
    config = load_lockstep_config()
    assert 0 < config.timeout_s < 2.0          # below the bridge's link time-out: see simulator.yaml
    link = controller_link(lambda name, default: default)
    assert link.control_period_s == pytest.approx(1 / 50.0)
    assert link.attitude_message == "ATTITUDE_QUATERNION" and link.command_topic == "/brov2/thruster_command"
    served = {"/control_law/rate_hz": 25.0, "/mavlink_bridge/attitude_source": "euler"}
    link = controller_link(lambda name, default: served.get(name, default))
    assert link.control_period_s == pytest.approx(0.04) and link.attitude_message == "ATTITUDE"
    with pytest.raises(Brov2Error, match="rate_hz"):
        controller_link(lambda name, default: 0 if name.endswith("rate_hz") else default)
    with pytest.raises(Brov2Error, match="attitude message"):
        LockstepGate(CHANNELS, PERIOD_S, config, attitude_message="RAW_IMU")


# ---------------------------------------------------------------------- the simulator in lockstep

class Controller(threading.Thread):
    """A ground station that flies yaw with a PD on every ATTITUDE_QUATERNION and tells the gate,
    optionally late and in random order (a busy machine)."""

    def __init__(self, sim, gate, jitter_seed=None):
        super(Controller, self).__init__(daemon=True)
        self.sim, self.gate = sim, gate
        self.rng = random.Random(jitter_seed) if jitter_seed is not None else None
        self.stop = threading.Event()
        self.answers = 0

    def run(self):
        m = mavutil.mavlink_connection("tcp:127.0.0.1:%d" % self.sim.port, source_system=255,
                                       source_component=190, autoreconnect=False)
        armed = False
        while not self.stop.is_set():
            msg = m.recv_match(type="ATTITUDE_QUATERNION", blocking=True, timeout=0.1)
            if msg is None:
                continue
            if not armed:
                m.mav.command_long_send(1, 1, mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0)
                armed = True
            w, x, y, z = msg.q1, msg.q2, msg.q3, msg.q4
            yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
            u = np.clip(2.0 * (np.radians(30.0) - yaw) - 0.8 * msg.yawspeed, -1.0, 1.0)
            cmd = (1500, 1500, 1500, 1500, 1500, int(round(1500 + 400 * u)))
            raw = _override(cmd)[:8]
            if self.rng is not None:
                self.stop.wait(self.rng.uniform(0.0, 0.03))
            if self.rng is not None and self.rng.random() < 0.5:
                self.gate.answer(msg.time_boot_ms / 1000.0, cmd)
                m.mav.rc_channels_override_send(1, 1, *raw)
            else:
                m.mav.rc_channels_override_send(1, 1, *raw)
                self.gate.answer(msg.time_boot_ms / 1000.0, cmd)
            self.answers += 1
        m.close()


def _engaged_simulator(vehicle, timeout_s):
    """(simulator on a free port at 50x, its lockstep gate waiting from the first attitude on)."""
    link = load_link_config()
    link.address = "tcp:127.0.0.1:0"
    link.udp_out = None
    gate = LockstepGate(vehicle.rc_map.channels, PERIOD_S, LockstepConfig(timeout_s=timeout_s, release_after=3,
                                                                          ardusub_max_lead_s=0.04))
    gate.engage()
    sim = Simulator(vehicle=vehicle, link_config=link, speedup=50.0, initial_eta=[0, 0, 5.0, 0, 0, 0], lockstep=gate)
    return sim, gate


def _fly(vehicle, jitter_seed, duration_s=3.0):
    sim, gate = _engaged_simulator(vehicle, timeout_s=10.0)
    controller = Controller(sim, gate, jitter_seed)
    controller.start()
    try:
        sim.run(duration_s)
    finally:
        controller.stop.set()
        controller.join(5.0)
        sim.close()
    return sim.plant.eta.copy(), sim.plant.nu.copy(), dict(gate.counters)


def test_a_slow_jittery_controller_flies_exactly_the_trajectory_of_a_fast_one(vehicle):
    eta_fast, nu_fast, fast = _fly(vehicle, None)
    eta_slow, nu_slow, slow = _fly(vehicle, jitter_seed=7)
    assert fast["timeouts"] == slow["timeouts"] == 0
    assert fast["answered"] >= 0.9 * 3.0 / PERIOD_S
    assert fast["steps"] - fast["answered"] <= 1         # the run may end while a step waits
    assert slow["steps"] == fast["steps"] and slow["answered"] == fast["answered"]
    assert np.degrees(eta_fast[5]) > 10.0               # it did turn towards 30 deg
    np.testing.assert_array_equal(eta_slow, eta_fast)
    np.testing.assert_array_equal(nu_slow, nu_fast)


def test_a_held_vehicle_keeps_sending_heartbeats(vehicle):
    """While a step waits (nobody answers), simulated time stands still, but the vehicle still says
    it is alive on the wall clock, so that a ground station does not declare the link lost."""
    sim, gate = _engaged_simulator(vehicle, timeout_s=30.0)
    thread = threading.Thread(target=sim.run, daemon=True)
    thread.start()
    m = mavutil.mavlink_connection("tcp:127.0.0.1:%d" % sim.port, source_system=255, source_component=190,
                                   autoreconnect=False)
    try:
        assert m.recv_match(type="ATTITUDE_QUATERNION", blocking=True, timeout=10.0) is not None
        held_at = sim.t_s
        beats = [m.recv_match(type="HEARTBEAT", blocking=True, timeout=3.0) for _ in range(3)]
        assert all(b is not None for b in beats)
        assert gate.holding and sim.t_s == held_at          # no simulated time passed meanwhile
    finally:
        sim.stop()
        thread.join(5.0)
        m.close()
        sim.close()
