"""Stock ArduSub and MAVLink facts, each written once (docs/DESIGN.md sections 9 and 11).

Imported by the MAVLink bridge's logic (:mod:`brov2_hybrid.link.mavros_conversions`,
:mod:`~brov2_hybrid.link.stream_requests`, :mod:`~brov2_hybrid.link.override_sender`), the
simulated firmware and its telemetry (:mod:`brov2_hybrid.sim`) and the RC map
(:mod:`brov2_hybrid.vehicle.rc`). Plain numbers, no pymavlink import, so the ROS-free core
can use them cheaply; ``test/test_ardusub.py`` checks every MAVLink number against
pymavlink's generated enums (an independent copy of the MAVLink XML).

Sources:

* Modes: ArduPilot ``ArduSub/mode.h``, ``enum class Mode::Number`` (HEARTBEAT.custom_mode).
* Mode flags: MAVLink ``common.xml``, ``MAV_MODE_FLAG`` (HEARTBEAT.base_mode bits).
* Override values: MAVLink ``RC_CHANNELS_OVERRIDE`` and MAVROS ``mavros_msgs/OverrideRCIn``
  (``CHAN_RELEASE = 0``, ``CHAN_NOCHANGE = 65535``); ArduPilot's
  ``GCS_MAVLINK::handle_rc_channels_override``: on channels 1-8, 0 releases the override
  and UINT16_MAX leaves the channel unchanged; on channels 9-18 both mean "unchanged".
* PWM: RCn_MIN/TRIM/MAX 1100/1500/1900 by default (``RC_Channel::norm_input``) and motor
  output PWM = 1500 + 400 m (``AP_Motors6DOF::output_to_motors``), docs/DESIGN.md section 11.
* Stream groups: ArduPilot ``ArduSub/GCS_Mavlink.cpp``, ``STREAM_*_msgs`` (which message
  REQUEST_DATA_STREAM turns on), restricted to the messages this package sends or asks for.
"""

#: ArduSub flight modes, name -> HEARTBEAT.custom_mode (ArduSub/mode.h, Mode::Number).
MODES = {
    "STABILIZE": 0,
    "ACRO": 1,
    "ALT_HOLD": 2,
    "AUTO": 3,
    "GUIDED": 4,
    "CIRCLE": 7,
    "SURFACE": 9,
    "POSHOLD": 16,
    "MANUAL": 19,
    "MOTOR_DETECT": 20,
    "SURFTRAK": 21,
}
#: custom_mode -> name.
MODE_NAMES = {number: name for name, number in MODES.items()}
#: The mode the hybrid autopilot flies in (pilot input passed to the mixer).
MANUAL = MODES["MANUAL"]

# HEARTBEAT.base_mode bits (MAVLink common.xml, MAV_MODE_FLAG).
MODE_FLAG_CUSTOM_MODE_ENABLED = 1
MODE_FLAG_GUIDED_ENABLED = 8
MODE_FLAG_MANUAL_INPUT_ENABLED = 64
MODE_FLAG_SAFETY_ARMED = 128

# RC_CHANNELS_OVERRIDE / OverrideRCIn special channel values.
CHAN_RELEASE = 0
CHAN_NOCHANGE = 65535
#: Channels in RC_CHANNELS_OVERRIDE (MAVLink 2) and OverrideRCIn.channels.
N_OVERRIDE_CHANNELS = 18
#: Channels 1..N on which CHAN_RELEASE releases the override (above: "unchanged").
N_RELEASABLE_CHANNELS = 8

#: Motor outputs in SERVO_OUTPUT_RAW / mavros RCOut (servo1_raw..servo8_raw; common.xml): a
#: MAVLink fact, whatever the vehicle's thruster count; outputs past the last thruster read 0.
SERVO_OUTPUTS = 8

#: Stock RC input trim and motor output neutral [us].
PWM_NEUTRAL_US = 1500.0
#: Stock RC input half range (max - trim = trim - min) and motor output scale [us].
PWM_HALF_RANGE_US = 400.0

#: REQUEST_DATA_STREAM groups: MAV_DATA_STREAM name (without the prefix) -> messages.
#: ATTITUDE_QUATERNION is in no group on ArduSub (STREAM_EXTRA1_msgs holds ATTITUDE,
#: SIMSTATE, AHRS2, PID_TUNING): only MAV_CMD_SET_MESSAGE_INTERVAL starts it.
STREAM_GROUPS = {
    "RAW_SENSORS": ("RAW_IMU", "SCALED_IMU2", "SCALED_PRESSURE2"),
    "EXTENDED_STATUS": ("SYS_STATUS",),
    "POSITION": ("GLOBAL_POSITION_INT",),
    "RC_CHANNELS": ("SERVO_OUTPUT_RAW", "RC_CHANNELS"),
    "EXTRA1": ("ATTITUDE", "SIM_STATE"),
    "EXTRA2": ("VFR_HUD",),
    "EXTRA3": ("SYSTEM_TIME",),
}


def stream_group_of(message_name):
    """Name of the REQUEST_DATA_STREAM group (key of :data:`STREAM_GROUPS`) carrying a message.

    Raises KeyError for a message in no group.
    """
    for group, names in STREAM_GROUPS.items():
        if message_name in names:
            return group
    raise KeyError("%s is in no ArduSub stream group (ardusub.STREAM_GROUPS)" % message_name)
