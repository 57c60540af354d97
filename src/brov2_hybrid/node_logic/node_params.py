"""Node parameters: a node's section of ``params/autopilot.yaml`` with the values set on
the parameter server for it, read through typed, validated accessors.

Every node in ``nodes/`` starts with
``ParamReader(load_node_params(NODE, rospy.get_param("~", {})), NODE)``; a missing,
unknown or ill-typed parameter raises :class:`~brov2_hybrid.errors.ParameterError`
naming the node and the parameter. Plain Python, no ROS.
"""
from brov2_hybrid import paths
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section, load_yaml

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


class ParamReader(Section):
    """Typed, validated access to a node's parameter dict: a :class:`~brov2_hybrid.params.Section`
    whose errors name the node's parameter (``control_law ~rate_hz: expected ...``).

    Accessors (number, positive, integer, boolean, string, string_list, choice, vector, ...)
    are Section's, with its checks from :mod:`brov2_hybrid.validate`.
    """

    MISSING = "missing parameter"

    def __init__(self, values, node):
        super().__init__(values, node, None)
        self.values = values
        self.node = node

    def key(self, key):
        """``node ~key``: how errors name the parameter ``key``."""
        return "%s ~%s" % (self.node, key)
