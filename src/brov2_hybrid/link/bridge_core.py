"""ROS-free logic of the MAVLink bridge (``nodes/mavlink_bridge``): MAVLink -> MAVROS
conversions, ArduSub modes, vehicle clock, link watchdog and override re-sending.

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
Times are floats in seconds; ``mono`` arguments are a monotonic wall clock.
"""
import math

import numpy as np

from brov2_hybrid.link.ardusub import (
    CHAN_NOCHANGE,
    CHAN_RELEASE,
    MODE_FLAG_CUSTOM_MODE_ENABLED,
    MODE_FLAG_GUIDED_ENABLED,
    MODE_FLAG_MANUAL_INPUT_ENABLED,
    MODE_FLAG_SAFETY_ARMED,
    MODE_NAMES,
    MODES,
    N_OVERRIDE_CHANNELS,
    N_RELEASABLE_CHANNELS,
    stream_group_of,
)
from brov2_hybrid.errors import Brov2Error
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


#: The message the depth is taken from (:func:`depth_from_relative_alt`).
DEPTH_MESSAGE = "GLOBAL_POSITION_INT"


def depth_from_relative_alt(relative_alt_mm):
    """Depth [m, positive down] from GLOBAL_POSITION_INT.relative_alt [mm, height above
    home, which ArduSub keeps at the water surface]."""
    return -float(relative_alt_mm) / 1000.0


def mode_name(custom_mode):
    """ArduSub custom mode number -> name (``MODE(<n>)`` when unknown)."""
    return MODE_NAMES.get(custom_mode, "MODE(%d)" % custom_mode)


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


def state_from_heartbeat(base_mode, custom_mode):
    """HEARTBEAT fields -> dict(armed, guided, manual_input, mode) as mavros_msgs/State."""
    return {
        "armed": bool(base_mode & MODE_FLAG_SAFETY_ARMED),
        "guided": bool(base_mode & MODE_FLAG_GUIDED_ENABLED),
        "manual_input": bool(base_mode & MODE_FLAG_MANUAL_INPUT_ENABLED),
        "mode": mode_name(custom_mode) if base_mode & MODE_FLAG_CUSTOM_MODE_ENABLED else "MODE(base %d)" % base_mode,
    }


def override_fields(channels):
    """OverrideRCIn.channels (18 values) -> the 18 RC_CHANNELS_OVERRIDE chanN_raw values.

    MAVROS copies the values unchanged; so do we, after checking the length and range.
    """
    values = [int(c) for c in channels]
    if len(values) != N_OVERRIDE_CHANNELS:
        raise Brov2Error("override: expected %d channels, got %d" % (N_OVERRIDE_CHANNELS, len(values)))
    if any(v < CHAN_RELEASE or v > CHAN_NOCHANGE for v in values):
        raise Brov2Error("override: channel values must be %d..%d, got %s" % (CHAN_RELEASE, CHAN_NOCHANGE, values))
    return values


def release_of(channels):
    """The override that releases exactly the channels ``channels`` took (others no change)."""
    return [CHAN_RELEASE if CHAN_RELEASE < c < CHAN_NOCHANGE and k < N_RELEASABLE_CHANNELS else CHAN_NOCHANGE
            for k, c in enumerate(channels)]


class VehicleClock(object):
    """Monotonic ROS time from the vehicle's boot time, for faster-than-real-time runs.

    While vehicle time arrives, ROS time = vehicle time + offset. When it stops (link
    lost), ``now(mono)`` extrapolates at the last measured rate of vehicle time per
    wall second (clamped to ``[min_rate, max_rate]``), so timers and timeouts keep
    running. When vehicle time restarts (a rebooted vehicle counts from zero again) or
    jumps, the offset is re-anchored so ROS time never goes backwards.
    """

    def __init__(self, min_rate, max_rate, jump_s):
        """``min_rate``, ``max_rate``: bounds of the measured speed (vehicle s per wall s);
        ``jump_s``: a vehicle time this far from the expected one re-anchors ROS time [s]."""
        if not 0 < min_rate <= max_rate or not jump_s > 0:
            raise Brov2Error("vehicle clock: expected 0 < min_rate <= max_rate and jump_s > 0, got %r, %r, %r"
                             % (min_rate, max_rate, jump_s))
        self.min_rate, self.max_rate, self.jump_s = float(min_rate), float(max_rate), float(jump_s)
        self.offset_s = None
        self._last = None         # (vehicle_s, ros_s, mono_s)
        self._rate = 1.0
        self._rate_anchor = None  # (vehicle_s, mono_s) for the rate estimate

    @property
    def started(self):
        return self._last is not None

    def update(self, vehicle_s, mono_s):
        """Vehicle time ``vehicle_s`` seen at wall ``mono_s``; returns the ROS time [s]."""
        vehicle_s, mono_s = float(vehicle_s), float(mono_s)
        if self._last is None:
            self.offset_s = 0.0
        else:
            expected = self.now(mono_s)
            ros_s = vehicle_s + self.offset_s
            if ros_s < self._last[1] or abs(ros_s - expected) > self.jump_s:
                # restart or jump: continue from where ROS time is now
                self.offset_s = max(expected, self._last[1]) - vehicle_s
                self._rate_anchor = None
        ros_s = max(vehicle_s + self.offset_s, self._last[1] if self._last else 0.0)
        if self._rate_anchor is None:
            self._rate_anchor = (vehicle_s, mono_s)
        elif mono_s - self._rate_anchor[1] >= 0.5:
            rate = (vehicle_s - self._rate_anchor[0]) / (mono_s - self._rate_anchor[1])
            self._rate = min(max(rate, self.min_rate), self.max_rate)
            self._rate_anchor = (vehicle_s, mono_s)
        self._last = (vehicle_s, ros_s, mono_s)
        return ros_s

    @property
    def rate(self):
        """Measured vehicle seconds per wall second (the simulator's speed-up)."""
        return self._rate

    def now(self, mono_s):
        """ROS time [s] at wall ``mono_s``, extrapolated from the last vehicle time."""
        if self._last is None:
            return 0.0
        return self._last[1] + max(0.0, float(mono_s) - self._last[2]) * self._rate


class LinkMonitor(object):
    """Connected while a HEARTBEAT from the vehicle arrived within ``timeout_s`` (wall)."""

    def __init__(self, timeout_s):
        self.timeout_s = float(timeout_s)
        self.last_heartbeat = None
        self.last_message = None

    def on_heartbeat(self, mono_s):
        self.last_heartbeat = float(mono_s)

    def on_message(self, mono_s):
        self.last_message = float(mono_s)

    def connected(self, mono_s):
        return self.last_heartbeat is not None and mono_s - self.last_heartbeat <= self.timeout_s

    def silent_for(self, mono_s):
        """Wall seconds since any message (inf when none yet)."""
        return math.inf if self.last_message is None else mono_s - self.last_message


class OverrideForwarder(object):
    """Keeps the newest RC override and re-sends it at a fixed period while it is fresh.

    An override is fresh for ``timeout_s`` after it was received; it is sent at once
    when received and then every ``period_s``, so the vehicle sees a steady stream
    (ArduSub's RC_OVERRIDE_TIME and pilot-input failsafe never fire) until the
    autopilot stops publishing. When it goes stale, :meth:`stale_release` gives the
    override releasing the channels we took, to be sent once (the vehicle returns to
    neutral at once instead of holding the last command until RC_OVERRIDE_TIME).
    Not thread-safe: callers sharing it between threads hold one lock around each
    call and the send that follows.
    """

    def __init__(self, period_s, timeout_s):
        if not 0 < period_s <= timeout_s:
            raise Brov2Error("override: expected 0 < period_s <= timeout_s, got %r, %r" % (period_s, timeout_s))
        self.period_s = float(period_s)
        self.timeout_s = float(timeout_s)
        self.channels = None
        self._received = None
        self._sent = None
        self.taken = [CHAN_NOCHANGE] * N_OVERRIDE_CHANNELS   # channels we hold (for release)
        self._stale_announced = False

    def on_override(self, mono_s, channels):
        self.channels = override_fields(channels)
        self._received = float(mono_s)
        self._sent = None
        self._stale_announced = False
        for k, c in enumerate(self.channels):
            if c != CHAN_NOCHANGE:
                self.taken[k] = c

    def fresh(self, mono_s):
        return self._received is not None and mono_s - self._received <= self.timeout_s

    def due(self, mono_s):
        """The channels to send now, or None."""
        if not self.fresh(mono_s):
            return None
        if self._sent is None or mono_s - self._sent >= self.period_s - 1e-9:
            return self.channels
        return None

    def mark_sent(self, mono_s):
        self._sent = float(mono_s)

    def release(self):
        """Override releasing every channel we took (None when we took none)."""
        out = release_of(self.taken)
        return out if any(c == CHAN_RELEASE for c in out) else None

    def stale_release(self, mono_s):
        """(release, first): what to send because the override input stopped.

        ``release`` is the override releasing every channel we took (see
        :meth:`release`) once the newest override is stale, and None while it is fresh,
        before any override and when we hold no channel. It is returned on every call
        until :meth:`mark_released` (so a release that could not be sent, e.g. while
        the link is down, goes out when it can). ``first`` is True on the first call
        that returns it since the last override (warn once).
        """
        if self._received is None or self.fresh(mono_s):
            return None, False
        release = self.release()
        if release is None:
            return None, False
        first = not self._stale_announced
        self._stale_announced = True
        return release, first

    def mark_released(self):
        """The release was sent: we hold no channel any more."""
        self.taken = [CHAN_NOCHANGE] * N_OVERRIDE_CHANNELS


def stream_requests(attitude_msg, attitude_rate_hz, servo_rate_hz, depth_rate_hz, time_rate_hz):
    """(message name, rate Hz) pairs the bridge asks the vehicle for."""
    return [(attitude_msg, float(attitude_rate_hz)),
            ("SERVO_OUTPUT_RAW", float(servo_rate_hz)),
            (DEPTH_MESSAGE, float(depth_rate_hz)),
            ("SYSTEM_TIME", float(time_rate_hz))]


def data_stream_requests(streams):
    """REQUEST_DATA_STREAM fallback for :func:`stream_requests`' (message, rate Hz) pairs.

    Returns (group, rate Hz) pairs, one per ArduSub stream group (``MAV_DATA_STREAM_<group>``,
    :data:`brov2_hybrid.link.ardusub.STREAM_GROUPS`) in first-seen order, each at the highest
    rate asked of its messages. Messages in no group (ATTITUDE_QUATERNION: only
    SET_MESSAGE_INTERVAL starts it) are left out; :func:`interval_only` names them.
    """
    rates = {}
    for name, rate in streams:
        try:
            group = stream_group_of(name)
        except KeyError:
            continue
        rates[group] = max(rates.get(group, 0.0), float(rate))
    return list(rates.items())


def interval_only(streams):
    """Names of :func:`stream_requests`' messages that no REQUEST_DATA_STREAM group carries."""
    out = []
    for name, _ in streams:
        try:
            stream_group_of(name)
        except KeyError:
            out.append(name)
    return out


def interval_us(rate_hz):
    """MAV_CMD_SET_MESSAGE_INTERVAL param2: interval [us] for a rate (-1 = stop)."""
    return -1.0 if rate_hz <= 0 else 1e6 / float(rate_hz)


def quaternion_msg_order(q_xyzw):
    """Quaternion (x, y, z, w) array -> tuple (x, y, z, w) of floats, normalised.

    A non-finite or zero quaternion gives four NaN (never an exception)."""
    q = np.asarray(q_xyzw, dtype=float)
    norm = math.sqrt(float(q @ q)) if np.all(np.isfinite(q)) else math.nan
    if not norm > 0:
        return (math.nan,) * 4
    q = q / norm
    return tuple(float(v) for v in q)
