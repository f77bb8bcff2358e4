"""Output layouts inside structured functions follow NumPy's (``loop_layouts.empty_following``).

NumPy gives a ufunc's fresh output the memory order of its operands (``order="K"``): a
Fortran-ordered ``X * 1.0`` is Fortran-ordered, and ``np.empty_like(X)`` keeps ``X``'s layout.
Loop code allocates in numba, so the rule is decided there: from the operands' numba types
(``C``, ``F``), at run time from their strides (``A``). Each case compares strides and values with
the plain call.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.loop_layouts import call_in_memory_order, empty_following
from tests.helpers import assert_same_bits, outcome

RNG = np.random.default_rng(5)
CUBE = RNG.standard_normal((6, 5, 4))


@numba.njit
def _allocated(a, b):
    return empty_following(a.shape, np.float64, (a, b))


LAYOUT_CASES = {
    "C, 1-D": (np.ones((3, 4)), np.ones(4)),
    "F, 1-D": (np.asfortranarray(np.ones((3, 4))), np.ones(4)),
    "F, F": (np.asfortranarray(np.ones((3, 4))), np.asfortranarray(np.ones((3, 4)))),
    "F, C": (np.asfortranarray(np.ones((3, 4))), np.ones((3, 4))),
    "strided C": (np.ones((3, 8))[:, ::2], np.ones(4)),
    "strided F": (np.ones((8, 3)).T[:, ::2], np.ones(4)),
    "3-D permuted": (CUBE.transpose(1, 0, 2), np.ones(4)),
    "3-D strided permuted": (CUBE[:, ::2].transpose(2, 0, 1), np.ones(3)),
    "3-D strided both": (CUBE[::2], CUBE[::2]),
    "3-D F strided": (np.asfortranarray(CUBE)[:, :, ::2], np.ones(2)),
}


@pytest.mark.parametrize("a, b", LAYOUT_CASES.values(), ids=LAYOUT_CASES.keys())
def test_empty_following_has_numpys_strides(a, b):
    got, want = _allocated(a, b), a * b
    assert (got.shape, got.strides) == (want.shape, want.strides)


def rebind_in_loop(X, n):
    for i in range(n):
        X = X * 1.0 + i
    return X


def likes_in_loop(X):
    out = np.empty_like(X)
    zeros = np.zeros_like(X)
    ones = np.ones_like(X, dtype=np.int32)
    for i in range(X.shape[0]):
        out[i] = X[i] * 2
        zeros[i] = ones[i] + X[i]
    return out, zeros, ones


def row_sums_of_a_temporary(X, n):
    total = np.zeros(X.shape[0])
    for i in range(n):
        total += (X * 2.0 + i).sum(axis=1)
    return total


def _same(got, want):
    """Values, types, dtypes and bits of every array (``assert_same_bits``), and its layout."""
    assert_same_bits(got, want)
    assert _layouts(got) == _layouts(want)


def _layouts(value):
    arrays = value if isinstance(value, tuple) else (value,)
    return [(a.shape, a.strides) for a in arrays]


LAYOUTS = {"C": lambda a: a.copy(), "F": np.asfortranarray,
           "transposed view": lambda a: np.ascontiguousarray(a.T).T,
           "strided": lambda a: np.repeat(a, 2, axis=1)[:, ::2]}


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_a_loop_region_keeps_numpys_output_layout(layout):
    X = layout(RNG.standard_normal((70, 6)))
    compiled = ac.compile(rebind_in_loop)
    for n in (0, 3, 70):
        value, error, _ = outcome(compiled, (X, n))
        assert error is None
        _same(value, rebind_in_loop(X, n))


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_like_functions_in_loop_code_keep_the_prototype_layout(layout):
    X = layout(RNG.standard_normal((70, 3)))
    _same(ac.compile(likes_in_loop)(X), likes_in_loop(X))


def test_row_sums_of_a_fortran_temporary_in_a_loop_add_in_numpys_order():
    X = np.asfortranarray(RNG.standard_normal((40, 300)))
    _same(ac.compile(row_sums_of_a_temporary)(X, 70), row_sums_of_a_temporary(X, 70))


def test_structured_code_allocates_through_the_layout_rule():
    X = np.asfortranarray(RNG.standard_normal((70, 6)))
    compiled = ac.compile(rebind_in_loop)
    compiled(X, 70)
    code = compiled.entries[0].output_code
    assert "structured_kernel" in code and "empty_following((" in code
    # a pointwise kernel over whole arrays: called on the transposes of F arrays (memory order)
    assert "call_in_memory_order(" in code


@numba.njit
def _called(kernel, a, b, out):
    call_in_memory_order(kernel, (a, b, out))


@numba.njit
def _add_rows_first(a, b, out):  # records the order it writes in
    order = 0
    for i0 in range(a.shape[0]):
        for i1 in range(a.shape[1]):
            out[i0, i1] = a[i0, i1] + b * order
            order += 1


def test_call_in_memory_order_transposes_only_fortran_arrays():
    for layout, flipped in ((np.ascontiguousarray, False), (np.asfortranarray, True)):
        a = layout(np.zeros((3, 4)))
        out = layout(np.empty((3, 4)))
        _called(_add_rows_first, a, 1.0, out)
        walk = np.arange(12.0).reshape(4, 3).T if flipped else np.arange(12.0).reshape(3, 4)
        np.testing.assert_array_equal(out, walk)


def pointwise_pair(X, Y):
    return np.sqrt(np.abs(X)) * Y + X


@pytest.mark.parametrize("x_layout, y_layout", [("C", "C"), ("F", "F"), ("F", "C"),
                                                 ("transposed view", "F")])
def test_a_wrapper_calls_a_pointwise_kernel_on_fortran_arrays_transposed(x_layout, y_layout):
    X = LAYOUTS[x_layout](RNG.standard_normal((70, 9)))
    Y = LAYOUTS[y_layout](RNG.standard_normal((70, 9)))
    compiled = ac.compile(pointwise_pair)
    _same(compiled(X, Y), pointwise_pair(X, Y))
    assert "the kernel on the transposes" in compiled.entries[0].output_code
