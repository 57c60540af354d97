"""Linux joystick device records (``/dev/input/js*``) read into axes and buttons (``nodes/js_reader``).

The kernel's joystick API (linux/joystick.h) delivers 8-byte ``struct js_event``
records: ``{ __u32 time; __s16 value; __u8 type; __u8 number; }``; :class:`JsState`
parses them and keeps the axes and buttons as ``sensor_msgs/Joy`` would carry them.
"""
import struct

from brov2_hybrid.errors import InputDataError

# Linux joystick API (linux/joystick.h): struct js_event { __u32 time; __s16 value; __u8 type; __u8 number; }
JS_EVENT_FORMAT = "<IhBB"
JS_EVENT_SIZE = struct.calcsize(JS_EVENT_FORMAT)     # 8 bytes
JS_EVENT_BUTTON = 0x01
JS_EVENT_AXIS = 0x02
JS_EVENT_INIT = 0x80
JS_AXIS_MAX = 32767.0


class JsState(object):
    """Axes and buttons of a Linux joystick from its 8-byte ``js_event`` records.

    Axis values are published as joy_node does (ros-drivers/joystick_drivers,
    joy/src/joy_node.cpp, Joystick::run: ``scale = -1 / (1 - deadzone) / 32767``):
    ``axes[n] = -value / 32767`` (no dead zone here; params/joystick.yaml has ours), so
    stick up / left read positive as in every joy_node-based map.
    """

    def __init__(self):
        self.axes = []
        self.buttons = []

    @staticmethod
    def parse(data):
        """bytes (a multiple of 8) -> list of (time_ms, value, type, number)."""
        if len(data) % JS_EVENT_SIZE:
            raise InputDataError("js_event stream: %d bytes is not a multiple of %d" % (len(data), JS_EVENT_SIZE))
        return [struct.unpack_from(JS_EVENT_FORMAT, data, off) for off in range(0, len(data), JS_EVENT_SIZE)]

    def feed(self, data):
        """Apply the events in ``data``; True when anything changed."""
        changed = False
        for _, value, etype, number in self.parse(data):
            kind = etype & ~JS_EVENT_INIT
            if kind == JS_EVENT_AXIS:
                target, v = self.axes, max(-1.0, min(1.0, -value / JS_AXIS_MAX))
            elif kind == JS_EVENT_BUTTON:
                target, v = self.buttons, 1 if value else 0
            else:
                continue
            while len(target) <= number:
                target.append(0.0 if target is self.axes else 0)
            if target[number] != v:
                target[number] = v
                changed = True
        return changed
