"""Project errors and the small validators used at every public entry point.

Every error subclasses ``ValueError`` so callers can catch bad input uniformly; the
message always says what was expected and what was received.
"""
import codecs
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


#: Longest line an input CSV may have [bytes]; a longer one is refused (it is not a
#: dive, thrust table or log written by a person or by this package, and reading it
#: whole could exhaust memory, e.g. a binary file without newlines).
MAX_CSV_LINE_BYTES = 1 << 20


class Utf8Lines(object):
    """The lines of a UTF-8 text file, for :mod:`csv` readers, with errors naming file:line.

    A UTF-8 byte-order mark at the start (what spreadsheet programs write for "CSV
    UTF-8") is dropped. A byte sequence that is not UTF-8 (Latin-1 ``é``, random
    bytes), a line longer than :data:`MAX_CSV_LINE_BYTES` or a read error raises
    :class:`InputDataError` naming the file, the line and what was expected. Lines
    keep their endings (like ``open(path, newline="")``); ``line`` counts lines read.
    A context manager; iterate it (``csv.reader(lines)``).
    """

    def __init__(self, path, what):
        self.path = path
        self.what = what
        self.line = 0
        try:
            self._handle = open(path, "rb")
        except OSError as exc:
            raise InputDataError("%s: cannot open %s (%s)" % (path, what, exc))

    def __iter__(self):
        return self

    def __next__(self):
        try:
            raw = self._handle.readline(MAX_CSV_LINE_BYTES + 1)
        except OSError as exc:
            raise InputDataError("%s:%d: cannot read %s (%s)" % (self.path, self.line + 1, self.what, exc))
        if not raw:
            raise StopIteration
        self.line += 1
        if len(raw) > MAX_CSV_LINE_BYTES:
            raise InputDataError("%s:%d: %s line longer than %d bytes; expected a text CSV file"
                                 % (self.path, self.line, self.what, MAX_CSV_LINE_BYTES))
        if self.line == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputDataError(
                "%s:%d: %s is not UTF-8 text: byte 0x%02x at byte %d of the line (%s); expected UTF-8 "
                "(in a spreadsheet program, save as 'CSV UTF-8')"
                % (self.path, self.line, self.what, raw[exc.start], exc.start + 1, exc.reason))
        if b"\x00" in raw:
            raise InputDataError("%s:%d: %s has a NUL byte at byte %d of the line; expected UTF-8 text "
                                 "(UTF-16 text or a binary file?)"
                                 % (self.path, self.line, self.what, raw.index(b"\x00") + 1))
        return text

    def close(self):
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False


def open_csv(path, what):
    """Open ``path`` for csv reading as UTF-8 (BOM accepted): a :class:`Utf8Lines`.

    Raises InputDataError naming ``what`` and the file when it cannot be opened, and
    (while reading) naming the line that is not UTF-8.
    """
    return Utf8Lines(path, what)
