"""The one set of value checks: typed fields with bounds, errors naming the value.

Every check takes the value and ``name`` (what the error calls it: a parameter-file
key ``file:section.key``, a node parameter ``node ~key``, an argument ``eta2``) and
returns the value converted (float, int, bool, str, ndarray) or raises
:class:`~brov2_hybrid.errors.Brov2Error` ``"<name>: expected <what>, got <value>"``.

=====================  =============================================================
check                  accepts
=====================  =============================================================
:func:`as_number`      a finite real number (not a bool, not text), optional bounds
:func:`as_finite`      :func:`as_number` without bounds
:func:`as_positive`    :func:`as_number` > 0
:func:`as_integer`     an integer (not a bool), optional bounds
:func:`as_bool`        true or false
:func:`as_choice`      one of a tuple (or the keys of a mapping)
:func:`as_string`      a string (non-empty unless allowed), optional choices
:func:`as_string_list` a list of non-empty strings
:func:`as_flags`       ``n`` booleans
:func:`as_vector`      ``n`` finite numbers, optional lower bound on every entry
:func:`as_matrix`      a finite 2-D array of a given shape
=====================  =============================================================

The keys of a parameter mapping (a file section, a node's parameters) are read through
:class:`brov2_hybrid.params.Section`, which applies these checks and names file and key;
:func:`rule` binds a check's bounds so a table can hold one rule per setting
(:data:`brov2_hybrid.params.CONTROLLER_RULES`). No ROS, numpy only.
"""
import math
import numbers

import numpy as np

from brov2_hybrid.errors import Brov2Error


def _bounds_text(minimum, maximum, strict_min):
    """``> 0``, ``>= 1``, ``<= 5`` or ``in [0, 1]`` / ``in (0, 1]`` (None: no bound)."""
    if minimum is not None and maximum is not None:
        return "in %s%g, %g]" % ("(" if strict_min else "[", minimum, maximum)
    if minimum is not None:
        return "%s %g" % (">" if strict_min else ">=", minimum)
    return "<= %g" % maximum


def _outside(value, minimum, maximum, strict_min):
    """True if ``value`` breaks the bounds (None: no bound)."""
    if minimum is not None and (value < minimum or (strict_min and value == minimum)):
        return True
    return maximum is not None and value > maximum


def as_number(value, name, minimum=None, maximum=None, strict_min=False):
    """Return ``value`` as a finite float, optionally within bounds.

    Parameters
    ----------
    value : real number
        A Python or numpy number; a bool, text or an array is refused.
    name : str
        What the error calls the value.
    minimum, maximum : float, optional
        Inclusive bounds (``strict_min``: ``value > minimum``).

    Raises
    ------
    Brov2Error
        ``name: expected a number / a finite number / a number > 0 ..., got value``.
    """
    if type(value) is not float and (isinstance(value, (bool, np.bool_)) or not (
            isinstance(value, numbers.Real) or (isinstance(value, np.ndarray) and value.ndim == 0))):
        raise Brov2Error("%s: expected a number, got %r" % (name, value))
    try:
        number = float(value)
    except (TypeError, ValueError):      # a 0-d array of text
        raise Brov2Error("%s: expected a number, got %r" % (name, value))
    if not math.isfinite(number):
        raise Brov2Error("%s: expected a finite number, got %r" % (name, value))
    if (minimum is not None or maximum is not None) and _outside(number, minimum, maximum, strict_min):
        raise Brov2Error("%s: expected a number %s, got %r" % (name, _bounds_text(minimum, maximum, strict_min), value))
    return number


def as_finite(value, name):
    """Return ``value`` as a finite float (:func:`as_number` without bounds)."""
    return as_number(value, name)


def as_positive(value, name):
    """Return ``value`` as a finite float > 0 (:func:`as_number` with ``minimum=0, strict_min=True``)."""
    return as_number(value, name, 0.0, None, True)


def as_integer(value, name, minimum=None, maximum=None):
    """Return ``value`` as an int (a Python or numpy integer, not a bool), within inclusive bounds."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise Brov2Error("%s: expected an integer, got %r" % (name, value))
    value = int(value)
    if (minimum is not None or maximum is not None) and _outside(value, minimum, maximum, False):
        raise Brov2Error("%s: expected an integer %s, got %r" % (name, _bounds_text(minimum, maximum, False), value))
    return value


def as_bool(value, name):
    """Return ``value`` as a bool; only true or false (Python or numpy) are accepted, not 0/1."""
    if not isinstance(value, (bool, np.bool_)):
        raise Brov2Error("%s: expected true or false, got %r" % (name, value))
    return bool(value)


def _listed(choices):
    """Choices as a list for messages: a mapping or set sorted, a sequence in its order."""
    return sorted(choices) if isinstance(choices, (dict, set, frozenset)) else list(choices)


def as_choice(value, choices, name):
    """Return ``value`` if it is one of ``choices`` (a tuple, or the keys of a mapping)."""
    try:
        known = value in choices
    except TypeError:           # an unhashable value (a YAML list) is in no mapping
        known = False
    if isinstance(value, bool):     # True == 1: a bool is only one of boolean choices
        known = any(c is value for c in _listed(choices))
    if not known:
        raise Brov2Error("%s: expected one of %s, got %r" % (name, _listed(choices), value))
    return value


def as_string(value, name, allow_empty=False, choices=None):
    """Return ``value`` if it is a string (non-empty unless ``allow_empty``), one of ``choices`` if given."""
    if not isinstance(value, str) or (not allow_empty and not value):
        raise Brov2Error("%s: expected %s, got %r" % (name, "a string" if allow_empty else "a non-empty string", value))
    return value if choices is None else as_choice(value, choices, name)


def as_string_list(value, name):
    """Return ``value`` as a list of non-empty strings (it may be empty)."""
    if not (isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value)):
        raise Brov2Error("%s: expected a list of names, got %r" % (name, value))
    return list(value)


def as_flags(value, n, name):
    """Return ``value`` as a bool array of shape ``(n,)``; each entry must be true or false."""
    entries = value.tolist() if isinstance(value, np.ndarray) else value
    if not (isinstance(entries, (list, tuple)) and len(entries) == n
            and all(isinstance(e, (bool, np.bool_)) for e in entries)):
        raise Brov2Error("%s: expected %d booleans, got %r" % (name, n, value))
    return np.array(entries, dtype=bool)


def as_vector(value, n, name, minimum=None, strict_min=False):
    """Return ``value`` as a new finite float array of shape ``(n,)``.

    Parameters
    ----------
    value : array_like
        Value to check.
    n : int
        Expected length.
    name : str
        Name used in the error message.
    minimum : float, optional
        Lower bound on every entry (``strict_min``: every entry > minimum).

    Raises
    ------
    Brov2Error
        If ``value`` has another shape, contains NaN or infinity, or breaks the bound.
    """
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise Brov2Error("%s: expected %d numbers, got %r (%s)" % (name, n, value, exc))
    if arr.shape != (n,):
        raise Brov2Error("%s: expected shape (%d,), got %s" % (name, n, arr.shape))
    # Python's isfinite over a short list is several times faster than numpy's
    # reduction machinery on 3- to 8-element vectors (this runs every control tick).
    entries = arr.tolist()
    if not all(map(math.isfinite, entries)):
        raise Brov2Error("%s: expected finite numbers, got %s" % (name, entries))
    if minimum is not None and any(_outside(e, minimum, None, strict_min) for e in entries):
        raise Brov2Error("%s: expected every entry %s, got %s" % (name, _bounds_text(minimum, None, strict_min), entries))
    return arr


def as_matrix(value, shape, name):
    """Return ``value`` as a new finite float array of the given 2-D ``shape``."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise Brov2Error("%s: expected a %dx%d array of numbers (%s)" % ((name,) + tuple(shape) + (exc,)))
    if arr.shape != tuple(shape):
        raise Brov2Error("%s: expected shape %s, got %s" % (name, tuple(shape), arr.shape))
    if not np.all(np.isfinite(arr)):
        raise Brov2Error("%s: expected finite numbers, got NaN or infinity" % name)
    return arr


def rule(check, *args, **kwargs):
    """Bind a check's arguments: ``rule(as_number, minimum=0.0)(value, name)``.

    The result is called ``(value, name)`` like :func:`as_finite`; positional ``args``
    go between the value and the name (``rule(as_vector, 3)`` checks 3 numbers).
    """
    def apply(value, name):
        return check(value, *args, name, **kwargs)
    apply.__doc__ = "%s with %s %s" % (check.__name__, args, kwargs)
    return apply
