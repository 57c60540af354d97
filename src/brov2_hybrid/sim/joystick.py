"""The simulated ArduSub's MANUAL_CONTROL -> RC override transform (ArduSub/joystick.cpp).

``Sub::transform_manual_control_to_rc_override`` without trims, input hold or buttons:
x forward, y lateral, r yaw in -1000..1000 and z throttle in 0..1000 (500 neutral)
become override PWMs [us] of channels 1-11. Pure functions;
:class:`~brov2_hybrid.sim.firmware.Firmware` calls them with its JS_* parameters.
"""
import math

from brov2_hybrid.link.ardusub import PWM_NEUTRAL_US

# Sub::transform_manual_control_to_rc_override (ArduSub/joystick.cpp): MANUAL_CONTROL
# x, y, r in -1000..1000 and z in 0..1000 (500 neutral) -> override PWMs [us].
JS_RPY_SCALE_PER_GAIN = 0.4        # rpyScale = 0.4 * gain
JS_THROTTLE_SCALE_PER_GAIN = 0.8   # throttleScale = 0.8 * gain * JS_THR_GAIN
JS_Z_NEUTRAL = 500
JS_CENTER_US = int(PWM_NEUTRAL_US)
JS_LIMITS_US = (1100, 1900)        # constrain_int16(..., 1100, 1900)
JS_GAIN_LIMITS = (0.1, 1.0)        # Sub::init_joystick: constrain_float(gain, 0.1, 1.0)
JS_LIGHTS_US = 1100                # lights1/2 start at RC9/RC10 MIN
JS_VIDEO_SWITCH_US = 1100
N_JOYSTICK_CHANNELS = 11           # set_override(0 .. 10)


def joystick_gain(js_gain_default):
    """Joystick gain (Sub::init_joystick: JS_GAIN_DEFAULT limited to 0.1..1)."""
    return min(JS_GAIN_LIMITS[1], max(JS_GAIN_LIMITS[0], js_gain_default))


def manual_control_channels(x, y, z, r, gain, js_thr_gain):
    """MANUAL_CONTROL axes -> override PWMs of channels 1-11 (list of 11 ints).

    ``Sub::transform_manual_control_to_rc_override`` without trims, input hold or
    buttons: x forward, y lateral, r yaw in -1000..1000; z throttle 0..1000, 500 neutral.
    ``gain`` is :func:`joystick_gain`'s, ``js_thr_gain`` the JS_THR_GAIN parameter.
    """
    rpy_scale = JS_RPY_SCALE_PER_GAIN * gain
    throttle_scale = JS_THROTTLE_SCALE_PER_GAIN * gain * js_thr_gain
    # C: int16_t throttleBase = 1500 - 500 * throttleScale (the fraction is dropped here)
    throttle_base = math.trunc(JS_CENTER_US - JS_Z_NEUTRAL * throttle_scale)
    low, high = JS_LIMITS_US

    def limit(value):
        # C: constrain_int16(float expression, 1100, 1900) truncates toward zero first.
        return min(high, max(low, int(math.trunc(value))))

    return [limit(JS_CENTER_US),                           # 1 pitch (pitchTrim 0)
            limit(JS_CENTER_US),                           # 2 roll (rollTrim 0)
            limit(z * throttle_scale + throttle_base),     # 3 throttle
            limit(r * rpy_scale + JS_CENTER_US),           # 4 yaw
            limit(x * rpy_scale + JS_CENTER_US),           # 5 forward
            limit(y * rpy_scale + JS_CENTER_US),           # 6 lateral
            JS_CENTER_US, JS_CENTER_US,                    # 7 camera pan, 8 camera tilt
            JS_LIGHTS_US, JS_LIGHTS_US,                    # 9 lights 1, 10 lights 2
            JS_VIDEO_SWITCH_US]                            # 11 video switch
