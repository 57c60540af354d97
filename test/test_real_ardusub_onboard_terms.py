"""The on-board script with its optional terms in real ArduSub 4.5 SITL: it loads in ArduSub's own Lua and flies,
and its integral action does on board what it is for. That the terms' arithmetic is the Python core's, turn by
turn, is test_onboard_lua_terms.py's; this is what only real ArduSub can show (its Lua, its loop, our physics).
Each flight starts its own SITL at real time; skipped without a
build unless ``BROV2_REQUIRE_ARDUSUB=1``.
"""
import contextlib
import dataclasses
import math

import numpy as np

from brov2_hybrid.onboard.lua_script import load_onboard_settings
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from onboard_lua_support import SETTINGS, TERMS
from test_real_ardusub_onboard import current_yaw, onboard_flight, stream, turn

ONBOARD = load_onboard_settings()
VEHICLE = load_vehicle("bluerov2_heavy")
#: The vehicle as built when a payload moved its centre of buoyancy 3 cm forward of the model's: a steady
#: pitch moment of B x 0.03 m = 3.4 N m the model (and so the buoyancy feed-forward) does not know.
AS_BUILT = dataclasses.replace(VEHICLE, body=dataclasses.replace(
    VEHICLE.body, r_cb_m=VEHICLE.body.r_cb_m + np.array([0.03, 0.0, 0.0])))


@contextlib.contextmanager
def flying(binary, settings, physics=VEHICLE, settled=True):
    """ArduSub SITL on ``physics`` with the script generated from the model (VEHICLE) and ``settings``
    (test_real_ardusub_onboard.onboard_flight), in MANUAL, armed; yields the SitlFlight."""
    f = onboard_flight(binary, settings, physics=physics, model=VEHICLE, settled=settled)
    try:
        f.arm(timeout_s=60.0)
        yield f
    finally:
        f.close()


def errors(rec):
    """ArduSub's Lua errors and the script's error reports (severity ERROR: 'brov2_hybrid: <message>' that
    announces no mode) among the texts received."""
    return [text for _, text in rec.texts if text.startswith("Lua:") or text.startswith("brov2_hybrid: ERROR")]


def test_with_ref_ff_and_integral_the_script_turns_the_vehicle_without_an_error(ardusub_binary):
    with flying(ardusub_binary, TERMS) as f:
        with open(f.sitl.script) as handle:
            text = handle.read()
        assert "integral = true," in text and "reference_feedforward = true," in text
        desired = turn(current_yaw(f))
        rec = stream(f, 4.0, desired)
    assert not errors(rec) and not any("Lua" in t for _, t in rec.texts), rec.texts
    assert rec.mode_codes() and set(rec.mode_codes()) == {1.0}, rec.texts
    yaw_err = [abs(math.remainder(desired[0][2] - e[2], 2 * math.pi)) for _, e, _ in rec.attitude]
    print("onboard SITL with ref FF + I: yaw error %.3f -> %.3f rad" % (yaw_err[0], yaw_err[-1]))
    assert yaw_err[-1] < 0.1 * yaw_err[0]
    hz = [v for _, n, v in rec.named if n == "HYB_HZ"]
    assert hz and max(hz) >= 0.8 * ONBOARD.rate_hz, hz


def steady_pitch_deg(binary, settings):
    """Mean pitch [deg] over the last 2 s of 8 s holding level on AS_BUILT (the model's CB 3 cm off)."""
    with flying(binary, settings, physics=AS_BUILT, settled=False) as f:     # the pitch: no heading needed
        rec = stream(f, 8.0, ([0.0, 0.0, current_yaw(f)], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]))
    assert rec.mode_codes() and rec.mode_codes()[-1] == 1.0, rec.texts
    t_end = rec.attitude[-1][0]
    return math.degrees(np.mean([e[1] for t, e, _ in rec.attitude if t >= t_end - 2.0]))


def test_on_board_the_integral_action_removes_a_moment_the_model_lacks(ardusub_binary):
    pd = dataclasses.replace(SETTINGS, omega_d_rad_s=10.0)
    with_i = dataclasses.replace(pd, integral_enabled=True)
    off, on = steady_pitch_deg(ardusub_binary, pd), steady_pitch_deg(ardusub_binary, with_i)
    print("onboard SITL, CB 3 cm off the model: steady pitch %.2f deg with the PD, %.2f deg with the integral"
          % (off, on))
    # the PD alone settles where k_p e = 3.4 N m: e = 3.4 / (omega_d^2 (I + M_A)) = 1.7 deg
    assert off > 1.0
    assert abs(on) < 0.2 * off
