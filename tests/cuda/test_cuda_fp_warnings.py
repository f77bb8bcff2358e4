"""NumPy's floating-point warnings from GPU kernels (simulator): each kernel with float ops sets
a device flag when a result is NaN from operands that are not, or infinite from finite ones;
the launcher then runs the kernel's NumPy twin on the same inputs, so the warnings are NumPy's
own (per op, category and order). Values always come from the GPU kernel."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac

cuda = pytest.importorskip("numba.cuda")


def chain(x, y):
    return np.log(x) + x / y


def rows(x):
    return (x / x.sum(axis=1, keepdims=True)).max(axis=1)


def run(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(*args)
    return value, [(w.category, str(w.message)) for w in caught]


CHAIN = ac.compile(chain, device="cuda")
X, Y = np.array([1.0, 0.0, -1.0, 2.0]), np.array([1.0, 0.0, 2.0, 0.0])


@pytest.mark.parametrize("on_device", [False, True])
def test_warnings_are_numpys(on_device):
    want, expected = run(chain, X, Y)
    args = (cuda.to_device(X), cuda.to_device(Y)) if on_device else (X, Y)
    got, caught = run(CHAIN, *args)
    got = got.copy_to_host() if on_device else got
    np.testing.assert_array_equal(got, want)
    assert caught == expected and len(expected) == 4


def test_no_warning_without_fp_errors():
    ones = np.ones(4)
    assert run(CHAIN, ones, ones)[1] == run(chain, ones, ones)[1] == []
    inf = np.array([np.inf, np.nan, 1.0, 2.0])  # inf and NaN in, no new error: NumPy is silent
    assert run(CHAIN, inf, np.ones(4))[1] == run(chain, inf, np.ones(4))[1] == []


def test_errstate_ignore_and_warnings_as_errors():
    with np.errstate(all="ignore"):
        assert run(CHAIN, X, Y)[1] == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning) as plain:
            chain(X, Y)
        with pytest.raises(RuntimeWarning) as got:
            CHAIN(X, Y)
    assert str(got.value) == str(plain.value)


def test_errstate_raise_runs_numpy():
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError) as plain:
            chain(X, Y)
        with pytest.raises(FloatingPointError) as got:
            CHAIN(X, Y)
    assert str(got.value) == str(plain.value)


def test_row_kernel_warns_like_numpy():
    x = np.array([[1.0, -1.0, 2.0], [0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    compiled = ac.compile(rows, device="cuda")
    (want, expected), (got, caught) = run(rows, x), run(compiled, x)
    np.testing.assert_array_equal(got, want)
    assert caught == expected and expected
