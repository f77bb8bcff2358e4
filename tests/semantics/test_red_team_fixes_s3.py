"""Fixes of session 3's red-team findings X1, X2, X14 (helper Z1): guard explanations never raise,
an in-place op that raises keeps NumPy's writes, broadcast errors of in-place ops in loops are
NumPy's. Plain call against compiled call (eager backends: cheap)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac


def power(x, p):
    return x ** p


def test_guard_explanations_of_an_array_where_an_int_was_are_failures():
    compiled = ac.compile(power, backend="eager")
    compiled(np.arange(-3, 4), 2)
    compiled(np.arange(4, dtype=np.int8), 7)  # p becomes dynamic: relation facts on s0
    entry = compiled.entries[-1]
    args = (np.arange(-3, 4), np.arange(7))
    reasons = entry.guard.failures(args, {})
    assert reasons and all(isinstance(r, str) for r in reasons)
    assert isinstance(entry.guard.changed_sizes(args, {}), dict)
    np.testing.assert_array_equal(compiled(*args), power(*args))
    assert len(compiled.entries) == 3


def divide_in_place(x, y):
    x /= y
    return x


def divide_out(x, y):
    np.divide(x, y, out=x)
    return x


def divide_then_store(x, y):
    d = x / y  # raises before the store: x stays as it was
    x[...] = d
    return x


def divide_in_a_loop(x, y, n):
    for _ in range(n):
        x /= y
    return x


def raised(fn, args):
    x = args[0]
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value), str(info.value), x.copy()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("fn, extra", [(divide_in_place, ()), (divide_out, ()),
                                       (divide_then_store, ()), (divide_in_a_loop, (2,))])
def test_in_place_op_that_raises_writes_as_numpy(backend, fn, extra):
    compiled = ac.compile(fn, backend=backend)
    compiled(np.ones(2), np.ones(2), *extra)
    y = np.array([1.0, 0.0])
    with np.errstate(all="raise"):
        want = raised(fn, (np.array([1.0, 2.0]), y, *extra))
        got = raised(compiled, (np.array([1.0, 2.0]), y, *extra))
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warnings as errors: NumPy writes, then warns
        want = raised(fn, (np.array([1.0, 2.0]), y, *extra))
        got = raised(compiled, (np.array([1.0, 2.0]), y, *extra))
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
    assert len(compiled.entries) == 1


def add_windows(x, y, k):
    for i in range(k):
        x[i:i + 1] += y
    return x


def test_out_shape_error_in_a_loop_is_numpys():
    compiled = ac.compile(add_windows, backend="eager")
    compiled(np.zeros(6), np.ones(1), 2)
    want = raised(add_windows, (np.zeros(6), np.ones(3), 2))
    got = raised(compiled, (np.zeros(6), np.ones(3), 2))
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
