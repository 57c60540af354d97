"""The compiled loop's arguments (brov2_hybrid.loop.fly_args) and jit.grouped_call.

fly takes a few groups (plain tuples, one per concept) instead of one argument per value;
grouped_call calls a compiled kernel with such tuples without numba typing them again in
Python on every call, and must give the dispatcher's own results.
"""
import inspect
import sys
from dataclasses import replace

import numpy as np
import pytest

from brov2_hybrid import jit
from brov2_hybrid.loop import fly_args as loop_args
from brov2_hybrid.loop import kernel as loop_kernel
from brov2_hybrid.loop.closed_loop import ClosedLoop
from brov2_hybrid.analysis.settings import load_analysis_settings
from brov2_hybrid.dive.shapes import step_dive


def _numba_expected():
    """numba must import where requirements-nodeps.txt installs it and numpy is new enough."""
    major, minor = (int(x) for x in np.__version__.split(".")[:2])
    return sys.version_info >= (3, 9) and (major, minor) >= (1, 22) and not jit.jit_disabled()


def test_fly_takes_the_named_groups():
    names = list(inspect.signature(loop_kernel.fly).parameters)
    assert names == list(loop_args.FlyArguments._fields)
    assert len(names) <= 15


@pytest.mark.parametrize("mixer", ["quantitative", "stock"])
def test_the_groups_are_plain_tuples_of_numbers_and_arrays(mixer):
    """numba types plain tuples from their fingerprint in C; a namedtuple it would type in Python."""
    settings = load_analysis_settings().loop
    loop = ClosedLoop(replace(settings, mixer=mixer))
    dive = step_dive(0.5, 0.1, 1.0, settings.desired_rate_hz)
    controller = loop.new_controller()
    args = loop_args.fly_arguments(loop, dive, controller, np.zeros((3, 40)))
    assert args is not None

    def leaves(value):
        if type(value) is tuple:
            for v in value:
                yield from leaves(v)
        else:
            yield value
    for name, group in zip(args._fields, args):
        assert type(group) in (tuple, np.ndarray), name
        for leaf in leaves(group):
            assert isinstance(leaf, (bool, int, float, np.ndarray)), (name, type(leaf))
    assert args.plant[0].shape == (13,) and args.status.shape == (3,)


def _sum_of(k, groups):
    total = 0.0
    for a in groups[0]:
        total += a[k]
    return total + groups[1][0] * groups[1][1]


def test_grouped_call_gives_the_dispatchers_results_and_types_each_kind_once():
    if not _numba_expected():
        pytest.skip("no numba here (or BROV2_NO_JIT)")
    import numba
    dispatcher = numba.njit(_sum_of)
    call = jit.grouped_call(dispatcher)
    assert jit.grouped_call(dispatcher) is call               # one per dispatcher
    arrays = tuple(np.arange(4.0) + i for i in range(6))      # a fingerprint over 40 bytes
    assert call(1, (arrays, (2.0, 3))) == dispatcher(1, (arrays, (2.0, 3))) == 6 * 1 + 15 + 6.0
    typed = []
    original = type(dispatcher).typeof_pyval
    try:
        type(dispatcher).typeof_pyval = lambda self, v: typed.append(v) or original(self, v)
        assert call(2, (arrays, (2.0, 3))) == 6 * 2 + 15 + 6.0
        assert typed == []                                    # the known kind: no typing in Python
        ints = tuple(np.arange(4) for _ in range(6))          # another kind: typed (and compiled) once
        assert call(3, (ints, (2.0, 3))) == 6 * 3 + 6.0
        assert typed
    finally:
        type(dispatcher).typeof_pyval = original
