"""What the on-board script's harness tests share: running the generated script under lua5.3 on the
stand-in bindings (``test/onboard_harness.lua``), the desired-state message as ArduPilot hands it to a
script, and the Python core's motor PWMs to compare with (HybridController, normalize, Algorithm 2)."""
import dataclasses
import os
import shutil
import subprocess

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid import params
from brov2_hybrid.control.law import HybridController, normalize
from brov2_hybrid.onboard.desired_link import ARRAY_NAME, desired_data
from brov2_hybrid.onboard.lua_script import load_onboard_settings

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onboard_harness.lua")
LUA = shutil.which("lua5.3")
ONBOARD = load_onboard_settings()
SETTINGS = params.load_controller_params()
#: The law with its reference feed-forward and integral action (the head-to-head's on-board setting's terms).
TERMS = dataclasses.replace(SETTINGS, omega_d_rad_s=10.0, reference_feedforward_enabled=True,
                            reference_filter_omega_rad_s=25.0, integral_enabled=True)


def run_lua(path, body):
    """Run ``body`` after the harness and the script (as M); its printed lines."""
    code = "dofile(%r)\nlocal M = dofile(%r)\n%s\n" % (HARNESS, path, body)
    proc = subprocess.run([LUA, "-"], input=code, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def lua_list(values):
    return "{" + ", ".join(repr(float(v)) for v in values) + "}"


def python_pwm(vehicle, eta2d, eta2d_dot, u_linear, eta2, nu2, omega):
    """The Python core's motor PWMs: the law, u = clip(tau / tau_max), Algorithm 2 (rounded, clipped)."""
    law = HybridController(vehicle.body, dataclasses.replace(SETTINGS, omega_d_rad_s=omega), vehicle.tau_max,
                           vehicle.passive_dofs)
    tau = law.compute(eta2d, u_linear, eta2, nu2, eta2d_dot=eta2d_dot).tau_body_frd
    return pwm_of_tau(vehicle, tau)


def pwm_of_tau(vehicle, tau):
    u, _ = normalize(tau, vehicle.tau_max)
    thr = vehicle.thrusters
    return vehicle.mixer("quantitative").clipped_motor_pwm(u, thr.pwm_min_us, thr.pwm_max_us)


def desired_message(eta2d, eta2d_dot, u_linear, array_id=ONBOARD.desired_array_id, data=None):
    """A DEBUG_FLOAT_ARRAY as ArduPilot's parser hands it to scripting (mavlink_message_t), hex:
    checksum, the wire header (magic .. msgid), the payload zero-filled (MAVLink 2 trims it)."""
    data = desired_data(eta2d, eta2d_dot, u_linear) if data is None else data
    msg = mavlink.MAVLink_debug_float_array_message(123456, ARRAY_NAME, array_id, data)
    wire = msg.pack(mavlink.MAVLink(None, srcSystem=255, srcComponent=190))
    payload = wire[10:-2].ljust(255, b"\0")
    return (wire[-2:] + wire[:10] + payload).hex()


def servo_lines(lines):
    """{time ms: {channel: (pwm, timeout)}} from the harness's ``servo`` lines."""
    out = {}
    for line in lines:
        if line.startswith("servo "):
            _, t, ch, pwm, timeout = line.split()
            out.setdefault(float(t), {})[int(ch)] = (int(pwm), int(timeout))
    return out
