"""Like for like in translation (head_to_head.translations_as_stock): the hybrid's surge and sway
command in the head-to-head is the force stock ArduSub's own mixer gives the same sticks, so both
pilots push the vehicle alike and the effort compares attitude control, not stick curves."""
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid.analysis.ardusub_pilots import HybridPilot
from brov2_hybrid.head_to_head import inputs
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.loop.settings import load_loop_settings
from brov2_hybrid.vehicle.firmware_output import output_stage
from brov2_hybrid.vehicle.vehicle_file import load_vehicle


@pytest.fixture(scope="module")
def vehicle():
    return load_vehicle()


def test_stock_sticks_give_little_force_at_small_sticks_and_about_tau_max_at_full(vehicle):
    """Stock ArduSub's mixer is linear in PWM and a T200 gives nothing inside its dead band, so a small
    stick is far less than its share of tau_max; a full stick is about tau_max; the force grows with the
    stick and is zero at zero."""
    stage = output_stage("stock", vehicle, vehicle.rc_map)
    for axis in (0, 1):
        forces = []
        for s in (0.0, 0.1, 0.2, 0.5, 1.0):
            u = np.zeros(6)
            u[axis] = s
            forces.append(stage.stick_wrench(u)[axis])
        assert forces[0] == 0.0 and np.all(np.diff(forces) > 0.0)
        assert forces[2] < 0.5 * 0.2 * vehicle.tau_max[axis]
        assert forces[-1] == pytest.approx(vehicle.tau_max[axis], rel=0.1)


class _Flight(object):
    def __init__(self):
        self.sent = None

    def override(self, channels):
        self.sent = channels


def _surge_force(vehicle, as_stock, stick=0.2):
    """The surge force [N] of the override the head-to-head's hybrid pilot sends for ``stick`` of surge,
    level and still at the desired attitude (the attitude loop asks for nothing)."""
    loop = ClosedLoop(replace(load_loop_settings(), mixer="stock", output_stage="stock"), vehicle)
    pilot = HybridPilot(loop.new_controller(3.0), loop.output, vehicle.tau_max, translations_as_stock=as_stock)
    flight = _Flight()
    level = np.zeros(3)
    pilot.tick(flight, 0.0, level, [stick, 0.0, 0.0], level, level)
    rc = {ch: pwm for ch, pwm in enumerate(flight.sent, start=1) if pwm}
    u = vehicle.rc_map.u_from_pwm(rc)
    return loop.output.stick_wrench(u)[0]


def test_with_the_setting_the_hybrid_pushes_as_hard_as_stock_arduSub_and_without_it_far_harder(vehicle):
    stock = output_stage("stock", vehicle, vehicle.rc_map).stick_wrench([0.2, 0, 0, 0, 0, 0])[0]
    assert _surge_force(vehicle, True) == pytest.approx(stock, rel=0.15)
    assert _surge_force(vehicle, False) == pytest.approx(0.2 * vehicle.tau_max[0], rel=0.15)
    assert _surge_force(vehicle, False) > 2.0 * stock


def test_the_head_to_head_flies_with_the_setting_of_analysis_yaml():
    from brov2_hybrid.analysis.ardusub_experiment import load_compare_settings
    from brov2_hybrid.head_to_head import command, stored
    s = inputs.load_settings()
    assert s.translations_as_stock is True
    ctx = type("Ctx", (), {"loop": load_loop_settings()})()
    _, placements = stored.load_hybrid_settings()
    ardusub = stored.load_ardusub_settings()
    dives = inputs.held_out_dives(s)[:1]
    for flag in (True, False):
        jobs = command.flight_jobs(ctx, dives, 1, replace(s, translations_as_stock=flag), load_compare_settings(),
                                   0.5, ardusub, placements)
        assert jobs and all(j.translations_as_stock is flag for j in jobs)
