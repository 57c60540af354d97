"""Outcome of the depth hold in the in-process loop (the control law, output stage, firmware mixer
and vehicle model of the ROS pipeline, without ROS): the bundled dive flown with and without it."""
import os
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid import paths
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.analysis.metrics import depth_error
from brov2_hybrid.analysis.settings import load_analysis_settings
from brov2_hybrid.dive.dive_csv import load_dive_csv
from brov2_hybrid.sim.config import load_sim_options

#: The goal of the depth hold on our simulator [m].
RMS_GOAL_M = 0.05


@pytest.fixture(scope="module")
def flights():
    """The bundled dive (150 s; the pilot's heave stick moves the depth setpoint by metres) with the
    depth hold on and off, with the simulator's sensor noise on and some loop latency."""
    settings = load_analysis_settings()
    dive = load_dive_csv(os.path.join(paths.package_root(), settings.dive.csv_file))
    loop_settings = replace(settings.loop, telemetry_delay_s=0.02, command_delay_s=0.01)
    options = replace(load_sim_options(), noise_enabled=True, seed=11)
    runs = {}
    for on in (True, False):
        loop = ClosedLoop(loop_settings, sim_options=options)
        runs[on] = loop.run(dive, controller_options={"depth_hold_enabled": on}).log
    return runs


def test_the_bundled_dive_holds_the_commanded_depth(flights):
    log = flights[True]
    rms, worst, held = depth_error(log["depth_m"], log["depth_setpoint_m"])
    assert held >= len(log["depth_m"]) - 2      # every tick held depth once the first (delayed) reading came
    assert rms <= RMS_GOAL_M, "depth error RMS %.3f m" % rms
    # the pilot's stick did move the setpoint (a held constant would be an easier test)
    assert np.nanmax(log["depth_setpoint_m"]) - np.nanmin(log["depth_setpoint_m"]) > 2.0


def test_without_the_hold_the_depth_wanders_far_from_what_the_stick_asked(flights):
    """The same dive open loop: the depth misses the trajectory the hold followed by far more
    (the net buoyancy and the open-loop stick carry it away); fails if the option is bypassed."""
    setpoint = flights[True]["depth_setpoint_m"]
    held_rms = depth_error(flights[True]["depth_m"], setpoint)[0]
    open_rms = depth_error(flights[False]["depth_m"], setpoint)[0]
    assert np.all(np.isnan(flights[False]["depth_setpoint_m"]))
    assert open_rms > 1.0 and open_rms > 20.0 * held_rms, (open_rms, held_rms)


def test_a_live_switch_engages_the_hold_at_the_depth_of_the_moment():
    """depth_hold_enabled switched on mid-run (as dynamic_reconfigure does): from that tick the
    setpoint starts at the depth then, and the vehicle, drifting up open loop before, stays there."""
    settings = load_analysis_settings()
    from brov2_hybrid.dive.shapes import step_dive
    dive = step_dive(0.0, 1.0, 20.0, settings.loop.desired_rate_hz)   # attitude held level, no stick
    loop = ClosedLoop(settings.loop, sim_options=load_sim_options())
    log = loop.run(dive, retunes=[(8.0, {"depth_hold_enabled": True})]).log
    t, depth, setpoint = log["time_s"], log["depth_m"], log["depth_setpoint_m"]
    before, after = t < 8.0 - 1e-9, t >= 8.0 - 1e-9
    assert np.all(np.isnan(setpoint[before])) and np.all(np.isfinite(setpoint[after]))
    assert depth[before][0] - depth[before][-1] > 0.3           # B > W: it rose while open loop
    assert abs(setpoint[after][0] - depth[after][0]) < 0.01
    assert np.max(np.abs(depth[t > 14.0] - setpoint[t > 14.0])) < 0.05


def test_the_holds_own_heave_frequency_trades_depth_error_for_thrust_and_retunes_live():
    """``heave_omega_rad_s`` (controller.yaml, dynamic_reconfigure, the head-to-head's tuned knob) flown: the
    bundled dive's first 60 s with the hold at the ratio's frequency (0.75 omega_d = 2.25 rad/s) and at its
    own 0.6 rad/s from t = 5 s (a live retune). The soft hold's k_p is (0.6 / 2.25)^2 of the stiff one's, so
    it lets the depth stray further and works its heave force less (tick-to-tick changes). Fails when the
    knob is ignored (the two flights are then the same)."""
    settings = load_analysis_settings()
    from brov2_hybrid.head_to_head.inputs import first_seconds
    dive = first_seconds(load_dive_csv(os.path.join(paths.package_root(), settings.dive.csv_file)), 60.0)
    logs = {}
    for own in (0.0, 0.6):
        loop = ClosedLoop(settings.loop, sim_options=load_sim_options())
        logs[own] = loop.run(dive, controller_options={"depth_hold_enabled": True},
                             retunes=[(5.0, {"heave_omega_rad_s": own})]).log
    late = {own: log["time_s"] > 10.0 for own, log in logs.items()}
    rms = {own: depth_error(log["depth_m"][late[own]], log["depth_setpoint_m"][late[own]])[0]
           for own, log in logs.items()}
    # how hard the hold works the heave force: its mean change from tick to tick [N]
    work = {own: float(np.mean(np.abs(np.diff(log["tau_z_n"][late[own]])))) for own, log in logs.items()}
    assert rms[0.6] > 2.0 * rms[0.0], rms
    assert work[0.6] < 0.8 * work[0.0], work
    early = logs[0.0]["time_s"] < 5.0 - 1e-9                       # the same law until the retune
    np.testing.assert_allclose(logs[0.6]["tau_z_n"][early], logs[0.0]["tau_z_n"][early])
