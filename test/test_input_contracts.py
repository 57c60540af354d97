"""Every public function and method of the core math modules rejects NaN and wrongly shaped
numeric input with a :class:`~brov2_hybrid.errors.Brov2Error` (a ``ValueError``) that says what
was expected. The public surface and the sample calls: contract_cases.py.
"""
import numpy as np
import pytest

from contract_cases import Fixtures, cases, public_surface
from brov2_hybrid.errors import Brov2Error

#: Checks that fail today, with why (strict: remove the entry when fixed). None left.
KNOWN_FAILURES = {}

CASES = cases()


@pytest.fixture(scope="module")
def fixtures():
    return Fixtures()


def test_every_public_callable_has_a_case():
    """A new public function or method of a core module needs an entry in CASES."""
    surface = set(public_surface())
    missing = sorted(surface - set(CASES))
    stale = sorted(set(CASES) - surface)
    assert not missing, "public callables without a case in test_input_contracts.CASES: %s" % missing
    assert not stale, "CASES entries for callables that no longer exist: %s" % stale


def _nan_like(value):
    arr = np.array(value, dtype=float)
    if arr.ndim == 0:
        return float("nan")
    arr = arr.copy()
    arr.flat[arr.size // 2] = np.nan
    return arr


def _wrong_shape(value):
    arr = np.array(value, dtype=float)
    if arr.ndim == 0:
        return np.array([float(arr), float(arr)])       # a vector where a number belongs
    return np.append(arr.ravel(), arr.flat[0]).reshape(-1) if arr.ndim == 1 else arr[:-1]


def _checks():
    out = []
    for name in sorted(CASES):
        case = CASES[name]
        for arg in case.numeric:
            for kind in ("nan",) + (() if arg in case.shape_free else ("shape",)):
                marks = ()
                if (name, arg, kind) in KNOWN_FAILURES:
                    marks = (pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[(name, arg, kind)]),)
                out.append(pytest.param(name, arg, kind, marks=marks, id="%s-%s-%s" % (name, arg, kind)))
    return out


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.args is not None))
def test_sample_arguments_are_valid(fixtures, name):
    """The declared sample arguments are accepted (so the refusals below are about the bad value)."""
    case = CASES[name]
    case.target(fixtures)(**case.args(fixtures))


@pytest.mark.parametrize("name, arg, kind", _checks())
def test_rejects_nan_and_wrong_shapes(fixtures, name, arg, kind):
    case = CASES[name]
    args = case.args(fixtures)
    args[arg] = _nan_like(args[arg]) if kind == "nan" else _wrong_shape(args[arg])
    with pytest.raises(Brov2Error, match="expected") as info:
        case.target(fixtures)(**args)
    assert isinstance(info.value, ValueError)
