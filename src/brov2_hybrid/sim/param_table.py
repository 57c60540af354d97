"""The simulated firmware's parameters: :class:`ParamDef` (one parameter) and :class:`ParamTable`.

The PARAM protocol of :mod:`brov2_hybrid.sim.mavlink_protocol` lists, reads and sets
them; :class:`~brov2_hybrid.sim.firmware.Firmware` and the simulator add their own
(with a change callback when a new value must take effect). A value is checked
(finite, integer where declared, within its limits) before the callback sees it.
"""
import math
from dataclasses import dataclass


@dataclass
class ParamDef:
    """One firmware parameter: value, MAV_PARAM_TYPE, limits, and whether it is settable."""

    name: str
    value: float
    param_type: int
    minimum: float
    maximum: float
    integer: bool = False
    read_only: bool = False


# MAV_PARAM_TYPE
PARAM_INT8 = 2
PARAM_INT16 = 4
PARAM_REAL32 = 9


class ParamTable(object):
    """Ordered firmware parameters with validation and change callbacks."""

    def __init__(self):
        self._defs = []
        self._index = {}
        self._callbacks = {}

    def add(self, definition, on_change=None):
        """Append a :class:`ParamDef`; ``on_change(value)`` is called when a set value is accepted."""
        self._index[definition.name] = len(self._defs)
        self._defs.append(definition)
        if on_change is not None:
            self._callbacks[definition.name] = on_change

    def __len__(self):
        return len(self._defs)

    def __contains__(self, name):
        return name in self._index

    def names(self):
        """Parameter names in table order."""
        return [d.name for d in self._defs]

    def get(self, name):
        """Current value of ``name``; KeyError if unknown."""
        return self._defs[self._index[name]].value

    def definition(self, name):
        """The :class:`ParamDef` of ``name``; KeyError if unknown."""
        return self._defs[self._index[name]]

    def by_index(self, index):
        """(definition, index) for 0 <= index < len, else None."""
        if 0 <= index < len(self._defs):
            return self._defs[index], index
        return None

    def index(self, name):
        """Position of ``name`` in the table (PARAM_VALUE.param_index); KeyError if unknown."""
        return self._index[name]

    def set(self, name, value):
        """Set a parameter; returns (accepted, message). Unknown name raises KeyError."""
        d = self._defs[self._index[name]]
        if d.read_only:
            return False, "%s is read-only" % name
        try:
            value = float(value)
        except (TypeError, ValueError):
            return False, "%s: not a number" % name
        if not math.isfinite(value):
            return False, "%s: not a finite number" % name
        if d.integer:
            if value != round(value):
                return False, "%s: expected an integer, got %g" % (name, value)
            value = float(round(value))
        if not d.minimum <= value <= d.maximum:
            return False, "%s: %g outside %g..%g" % (name, value, d.minimum, d.maximum)
        callback = self._callbacks.get(name)
        if callback is not None:
            problem = callback(value)
            if problem:
                return False, problem
        d.value = value
        return True, ""
