"""Node parameters: a node's section of ``params/autopilot.yaml`` with the values set on
the parameter server for it, read through typed, validated accessors.

Every node in ``nodes/`` starts with
``ParamReader(load_node_params(NODE, rospy.get_param("~", {})), NODE)``; a missing,
unknown or ill-typed parameter raises :class:`~brov2_hybrid.errors.ParameterError`
naming the node and the parameter. Plain Python, no ROS.
"""
import math

from brov2_hybrid import paths
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import load_yaml

DEFAULT_AUTOPILOT_FILE = "autopilot.yaml"


def load_node_params(node, overrides=None, path=None, other_keys=()):
    """Parameters of one node: ``params/autopilot.yaml`` section ``node``, then ``overrides``.

    Parameters
    ----------
    node : str
        Section name (the node's base name, e.g. ``control_law``).
    overrides : dict, optional
        Values set on the parameter server for the node (its private namespace); they
        win over the file. Keys not in the file are refused (likely typos), except
        ``other_keys`` (private parameters the node owns otherwise, e.g.
        dynamic_reconfigure's), which are skipped.

    Returns
    -------
    dict
    """
    path = path or paths.params_path(DEFAULT_AUTOPILOT_FILE)
    data = load_yaml(path)
    if node not in data or not isinstance(data[node], dict):
        raise ParameterError("%s: missing section '%s'" % (path, node))
    merged = dict(data[node])
    for key, value in (overrides or {}).items():
        if key in other_keys:
            continue
        if key not in merged:
            raise ParameterError("~%s: unknown parameter for %s (known: %s)"
                                 % (key, node, ", ".join(sorted(merged))))
        merged[key] = value
    return merged


class ParamReader(object):
    """Typed, validated access to a node's parameter dict; errors name the parameter."""

    def __init__(self, values, node):
        self.values = values
        self.node = node

    def _raw(self, key):
        if key not in self.values:
            raise ParameterError("%s ~%s: missing parameter" % (self.node, key))
        return self.values[key]

    def _fail(self, key, expected, value):
        raise ParameterError("%s ~%s: expected %s, got %r" % (self.node, key, expected, value))

    def number(self, key, minimum=None, maximum=None, strict_min=False):
        value = self._raw(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self._fail(key, "a finite number", value)
        if minimum is not None and (value < minimum or (strict_min and value == minimum)):
            self._fail(key, "a number %s %g" % (">" if strict_min else ">=", minimum), value)
        if maximum is not None and value > maximum:
            self._fail(key, "a number <= %g" % maximum, value)
        return float(value)

    def positive(self, key):
        return self.number(key, minimum=0.0, strict_min=True)

    def integer(self, key, minimum=None, maximum=None):
        value = self._raw(key)
        if isinstance(value, bool) or not isinstance(value, int):
            self._fail(key, "an integer", value)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self._fail(key, "an integer in [%s, %s]" % (minimum, maximum), value)
        return value

    def boolean(self, key):
        value = self._raw(key)
        if not isinstance(value, bool):
            self._fail(key, "true or false", value)
        return value

    def string_list(self, key):
        """A list of non-empty strings (may be empty)."""
        value = self._raw(key)
        if not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
            self._fail(key, "a list of names", value)
        return list(value)

    def string(self, key, allow_empty=False, choices=None):
        value = self._raw(key)
        if not isinstance(value, str) or (not allow_empty and not value):
            self._fail(key, "a non-empty string" if not allow_empty else "a string", value)
        if choices is not None and value not in choices:
            self._fail(key, "one of %s" % (list(choices),), value)
        return value
