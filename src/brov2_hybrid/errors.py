"""Project errors (only errors: the value checks are in :mod:`brov2_hybrid.validate`).

Every error subclasses ``ValueError`` so callers can catch bad input uniformly; the
message always says what was expected and what was received.
"""


class Brov2Error(ValueError):
    """Base class of the errors raised by brov2_hybrid for bad input."""


class ParameterError(Brov2Error):
    """A parameter file or parameter value is missing or non-physical."""


class InputDataError(Brov2Error):
    """A data file (dive CSV, thrust table, log) is malformed."""


class GimbalLock(Brov2Error):
    """The attitude reached pitch +-90 deg, where the Euler-angle law's roll and yaw errors are undefined
    (a closed loop that flies there has lost the attitude)."""
