"""The MAVLink bridge's message contents (``nodes/mavlink_bridge``): vehicle MAVLink
messages -> MAVROS messages, and MAVROS requests -> MAVLink fields, as MAVROS 1.x does.

* attitude -> ``/mavros/imu/data`` (:func:`imu_from_euler`, :func:`imu_from_quaternion`,
  :func:`imu_or_nan`, :func:`quaternion_msg_order`);
* depth -> ``/brov2/depth_m`` (:data:`DEPTH_MESSAGE`, :func:`depth_from_relative_alt`);
* SERVO_OUTPUT_RAW -> ``/mavros/rc/out`` (:func:`servo_channels`);
* HEARTBEAT -> ``/mavros/state`` (:func:`is_vehicle_heartbeat`, :func:`state_from_heartbeat`,
  :func:`state_fields`, :func:`mode_name`);
* ``/mavros/set_mode`` -> SET_MODE (:func:`parse_mode`, :func:`set_mode_fields`);
* PARAM_VALUE -> ``/mavros/param/get``'s ParamValue (:func:`param_value_fields`).

Conversions follow MAVROS 1.x exactly (docs/DESIGN.md section 9): MAVLink attitude is
body FRD in NED; ``/mavros/imu/data`` carries the orientation of body FLU in ENU
(``q_enu_flu = Q_NED_ENU * q_ned_frd * Q_FRD_FLU``) and the body rates in FLU.
Depth [m, positive down] is taken from GLOBAL_POSITION_INT.relative_alt [mm, up]:
ArduSub's ``GCS_MAVLINK_Sub::global_position_int_relative_alt`` (ArduSub/GCS_Mavlink.cpp)
sends ``AP_AHRS::get_relative_position_D_home`` (libraries/AP_AHRS/AP_AHRS.cpp) negated,
the height above home, and ArduSub puts home at the water surface
(``Sub::set_home_to_current_location``, ArduSub/commands.cpp: home altitude minus the
pressure-sensor depth); before home is set it falls back to the barometric altitude
against the pressure calibrated at boot. Either way it is -depth on every vehicle (0 when
no depth sensor is fitted). VFR_HUD.alt is not: ``GCS_MAVLINK::vfr_hud_alt``
(libraries/GCS_MAVLink/GCS_Common.cpp) is the altitude above sea level, which equals
-depth only where home is at altitude 0 (ArduSub SITL with --home ...,584,...: -579 m).
Angles rad, rates rad/s.
"""
import math

import numpy as np
from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link.ardusub import (
    MODE_FLAG_CUSTOM_MODE_ENABLED,
    MODE_FLAG_GUIDED_ENABLED,
    MODE_FLAG_MANUAL_INPUT_ENABLED,
    MODE_FLAG_SAFETY_ARMED,
    MODE_NAMES,
    MODES,
    SERVO_OUTPUTS,
)
from brov2_hybrid.physics.kinematics import (
    quaternion_from_euler,
    quaternion_ned_frd_to_enu_flu,
    vector_frd_to_flu,
)


def imu_from_euler(roll, pitch, yaw, p, q, r):
    """MAVLink ATTITUDE (NED/FRD) -> (q_enu_flu (x, y, z, w), angular velocity FLU (3,))."""
    q_ned_frd = quaternion_from_euler([roll, pitch, yaw])
    return quaternion_ned_frd_to_enu_flu(q_ned_frd), vector_frd_to_flu([p, q, r])


def imu_from_quaternion(q1, q2, q3, q4, p, q, r):
    """MAVLink ATTITUDE_QUATERNION (w, x, y, z order, NED/FRD) -> as :func:`imu_from_euler`."""
    return quaternion_ned_frd_to_enu_flu([q2, q3, q4, q1]), vector_frd_to_flu([p, q, r])


def imu_or_nan(convert, *fields):
    """``convert(*fields)`` (:func:`imu_from_quaternion` or :func:`imu_from_euler`), made safe.

    Returns (q_enu_flu (4,), angular velocity FLU (3,), error). When the vehicle's
    attitude cannot be converted (a zero quaternion, a NaN field: ``Brov2Error``),
    orientation and rates are NaN and ``error`` says why; otherwise ``error`` is "".
    A NaN attitude makes control_law command neutral (mode NAN_NEUTRAL).
    """
    try:
        q, w = convert(*fields)
    except Brov2Error as exc:
        return np.full(4, np.nan), np.full(3, np.nan), str(exc)
    return q, w, ""


def quaternion_msg_order(q_xyzw):
    """Quaternion (x, y, z, w) array -> tuple (x, y, z, w) of floats, normalised.

    A non-finite or zero quaternion gives four NaN (never an exception)."""
    q = np.asarray(q_xyzw, dtype=float)
    norm = math.sqrt(float(q @ q)) if np.all(np.isfinite(q)) else math.nan
    if not norm > 0:
        return (math.nan,) * 4
    q = q / norm
    return tuple(float(v) for v in q)


#: The message the depth is taken from (:func:`depth_from_relative_alt`).
DEPTH_MESSAGE = "GLOBAL_POSITION_INT"


def depth_from_relative_alt(relative_alt_mm):
    """Depth [m, positive down] from GLOBAL_POSITION_INT.relative_alt [mm, height above
    home, which ArduSub keeps at the water surface]."""
    return -float(relative_alt_mm) / 1000.0


def servo_channels(raw):
    """SERVO_OUTPUT_RAW servo1..16 values -> RCOut.channels: all 16 when any of 9..16
    is non-zero, else the 8 main outputs (:data:`brov2_hybrid.link.ardusub.SERVO_OUTPUTS`; as MAVROS)."""
    raw = list(raw)
    return raw if any(raw[SERVO_OUTPUTS:]) else raw[:SERVO_OUTPUTS]


def is_vehicle_heartbeat(mav_type, src_component, target_component):
    """Whether a HEARTBEAT from the target system is the vehicle's own (not a GCS's,
    not another component's)."""
    return mav_type != mavlink.MAV_TYPE_GCS and src_component == target_component


def mode_name(custom_mode):
    """ArduSub custom mode number -> name (``MODE(<n>)`` when unknown)."""
    return MODE_NAMES.get(custom_mode, "MODE(%d)" % custom_mode)


def state_from_heartbeat(base_mode, custom_mode):
    """HEARTBEAT fields -> dict(armed, guided, manual_input, mode) as mavros_msgs/State."""
    return {
        "armed": bool(base_mode & MODE_FLAG_SAFETY_ARMED),
        "guided": bool(base_mode & MODE_FLAG_GUIDED_ENABLED),
        "manual_input": bool(base_mode & MODE_FLAG_MANUAL_INPUT_ENABLED),
        "mode": mode_name(custom_mode) if base_mode & MODE_FLAG_CUSTOM_MODE_ENABLED else "MODE(base %d)" % base_mode,
    }


def state_fields(state, connected):
    """mavros_msgs/State fields from the last HEARTBEAT's ``state`` (dict from
    :func:`state_from_heartbeat` plus system_status); a
    vehicle that is not connected is not armed."""
    return {"connected": bool(connected), "armed": bool(state["armed"] and connected),
            "guided": state["guided"], "manual_input": state["manual_input"], "mode": state["mode"],
            "system_status": state["system_status"]}


def parse_mode(base_mode, custom_mode):
    """SetMode request -> (base_mode, custom_mode number) for MAVLink SET_MODE.

    ``custom_mode`` is a name (``MANUAL``), a number as text, or empty; with an empty
    custom mode, ``base_mode`` must be a non-zero MAV_MODE.
    """
    text = (custom_mode or "").strip().upper()
    if not text:
        if not base_mode:
            raise Brov2Error("set_mode: expected a custom_mode name (e.g. MANUAL) or a base_mode")
        return int(base_mode), 0
    if text in MODES:
        number = MODES[text]
    elif text.isdigit():
        number = int(text)
    else:
        raise Brov2Error("set_mode: unknown ArduSub mode %r; expected one of %s"
                         % (custom_mode, sorted(MODES)))
    return int(base_mode) | MODE_FLAG_CUSTOM_MODE_ENABLED, number


def set_mode_fields(base_mode, custom_mode, armed):
    """SetMode request -> (base_mode, custom_mode number) for SET_MODE; as MAVROS, a
    custom mode sent to an armed vehicle keeps the armed flag. Brov2Error as
    :func:`parse_mode`."""
    base, custom = parse_mode(base_mode, custom_mode)
    if custom_mode and armed:
        base |= MODE_FLAG_SAFETY_ARMED
    return base, custom


#: MAV_PARAM_TYPE values of integer parameters (UINT8 .. INT64): MAVROS returns them in
#: ParamValue.integer, the others (REAL32, REAL64) in ParamValue.real.
INTEGER_PARAM_TYPES = frozenset(range(1, 9))


def param_value_fields(value, param_type):
    """PARAM_VALUE's float ``value`` of MAV_PARAM_TYPE ``param_type`` -> (integer, real) of a
    mavros_msgs/ParamValue, as MAVROS's param plugin fills it (ArduPilot sends every
    value as a float)."""
    if param_type in INTEGER_PARAM_TYPES:
        return int(round(value)), 0.0
    return 0, float(value)
