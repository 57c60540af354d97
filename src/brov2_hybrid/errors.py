"""Project errors and the small validators used at every public entry point.

Every error subclasses ``ValueError`` so callers can catch bad input uniformly; the
message always says what was expected and what was received.
"""
import math

import numpy as np


class Brov2Error(ValueError):
    """Base class of the errors raised by brov2_hybrid for bad input."""


class ParameterError(Brov2Error):
    """A parameter file or parameter value is missing or non-physical."""


class InputDataError(Brov2Error):
    """A data file (dive CSV, thrust table, log) is malformed."""


def as_vector(x, n, name):
    """Return ``x`` as a new finite float array of shape ``(n,)``.

    Parameters
    ----------
    x : array_like
        Value to check.
    n : int
        Expected length.
    name : str
        Name used in the error message.

    Raises
    ------
    Brov2Error
        If ``x`` has another shape or contains NaN or infinity.
    """
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise Brov2Error("%s: expected %d numbers, got %r (%s)" % (name, n, x, exc))
    if arr.shape != (n,):
        raise Brov2Error("%s: expected shape (%d,), got %s" % (name, n, arr.shape))
    # Python's isfinite over a short list is several times faster than numpy's
    # reduction machinery on 3- to 8-element vectors (this runs every control tick).
    if not all(map(math.isfinite, arr.tolist())):
        raise Brov2Error("%s: expected finite numbers, got %s" % (name, arr.tolist()))
    return arr


def as_matrix(x, shape, name):
    """Return ``x`` as a new finite float array of the given 2-D ``shape``."""
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise Brov2Error("%s: expected a %dx%d array of numbers (%s)" % ((name,) + tuple(shape) + (exc,)))
    if arr.shape != tuple(shape):
        raise Brov2Error("%s: expected shape %s, got %s" % (name, tuple(shape), arr.shape))
    if not np.all(np.isfinite(arr)):
        raise Brov2Error("%s: expected finite numbers, got NaN or infinity" % name)
    return arr


def as_finite(x, name):
    """Return ``x`` as a finite float, else raise :class:`Brov2Error`."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise Brov2Error("%s: expected a number, got %r" % (name, x))
    if not math.isfinite(value):
        raise Brov2Error("%s: expected a finite number, got %r" % (name, x))
    return value


def as_positive(x, name):
    """Return ``x`` as a finite float > 0, else raise :class:`Brov2Error`."""
    value = as_finite(x, name)
    if value <= 0.0:
        raise Brov2Error("%s: expected a value > 0, got %r" % (name, x))
    return value


def as_nonnegative_vector(x, n, name):
    """Return ``x`` as a finite ``(n,)`` array with every entry >= 0."""
    arr = as_vector(x, n, name)
    if np.any(arr < 0.0):
        raise Brov2Error("%s: expected every entry >= 0, got %s" % (name, arr.tolist()))
    return arr


def open_csv(path, what):
    """Open ``path`` for csv reading; raise InputDataError naming ``what`` if it cannot."""
    try:
        return open(path, newline="")
    except OSError as exc:
        raise InputDataError("%s: cannot open %s (%s)" % (path, what, exc))
