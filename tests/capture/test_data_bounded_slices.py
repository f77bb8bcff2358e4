"""Slices whose bounds are read from array data: ``data[indptr[i]:indptr[i + 1]]``.

The capture gave such a slice the length it had on the traced values (the first row's, or the
first call's), a static size: ``len(vals)``, ``vals.shape[0]`` and ``vals.size`` were that
constant for every row and every later call (a silent wrong answer: a loop storing
``len(data[indptr[i]:indptr[i + 1]])`` wrote the first row's length everywhere), and kernels
planned for it served only rows of that length. The length is now an unbacked size, one symbol
per (dimension, bounds), read from the slice at run time where Python reads it.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import counted, outcome

RNG = np.random.default_rng(5)


def _csr(rows: int, longest: int):
    indptr = np.zeros(rows + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(RNG.integers(0, longest, rows))
    nnz = int(indptr[-1])
    return indptr, RNG.standard_normal(nnz), RNG.integers(0, rows, nnz)


def row_lengths(indptr, data, indices):
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        vals = data[indptr[i]:indptr[i + 1]]
        out[i] = len(vals) + 10 * vals.shape[0] + 100 * vals.size
    return out


def row_dots(indptr, data, indices):
    x = np.arange(indptr.shape[0] - 1, dtype=np.float64)
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        lo, hi = indptr[i], indptr[i + 1]
        out[i] = (data[lo:hi] * x[indices[lo:hi]]).sum()
    return out


def scale_rows(indptr, data, indices):
    data = data.copy()
    for i in range(indptr.shape[0] - 1):
        lo, hi = indptr[i], indptr[i + 1]
        data[lo:hi] = data[lo:hi] * (i + 1)
    return data


def strided_row_maxima(indptr, data, indices):
    out = np.full(indptr.shape[0] - 1, -1.0)
    for i in range(indptr.shape[0] - 1):
        vals = data[indptr[i]:indptr[i + 1]:2]
        if vals.shape[0] > 0:
            out[i] = vals.max()
    return out


def inner_loop_over_row(indptr, data, indices):
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        vals = data[indptr[i]:indptr[i + 1]]
        acc = 0.0
        for j in range(len(vals)):
            acc += vals[j] * j
        out[i] = acc
    return out


def top_level(indptr, data, indices):
    vals = data[indptr[1]:indptr[3]]
    return len(vals), vals.shape, np.zeros(vals.shape[0]).shape, (vals * 2).sum()


def block_rows(indptr, data, indices):
    a = data[: (data.shape[0] // 4) * 4].reshape(-1, 4)
    block = a[indptr[1]:indptr[2], :]
    return block.shape, block.sum(axis=0)


def mismatched_lengths(indptr, data, indices):
    return data[indptr[0]:indptr[1]] + data[indptr[1]:indptr[3]]


FUNCTIONS = [row_lengths, row_dots, scale_rows, strided_row_maxima, inner_loop_over_row,
             top_level, block_rows]


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_lengths_from_the_data_on_every_row_and_call(fn, backend):
    counter, counting = counted(backend)
    compiled = ac.compile(fn, backend=counting)
    for args in (_csr(80, 9), _csr(80, 30), _csr(80, 3)):  # the same sizes of indptr, new data
        got = outcome(compiled, copy.deepcopy(args))
        want = outcome(fn, copy.deepcopy(args))
        assert repr(got) == repr(want)
    assert counter.frame_count <= 2  # no recompile per data (the nnz may turn dynamic once)
    assert [e.break_reason for e in compiled.entries if e.break_reason is not None] == []


def test_negative_and_clipped_bounds_follow_python():
    def window(x, bounds):
        v = x[bounds[0]:bounds[1]]
        return v.shape[0], v.sum()
    compiled = ac.compile(window, backend="numba")
    x = np.arange(10.0)
    for bounds in ([2, 7], [-4, -1], [5, 50], [7, 2], [-50, 3]):
        b = np.array(bounds)
        assert repr(outcome(compiled, (x, b))) == repr(outcome(window, (x, b)))


def test_slices_of_different_lengths_raise_numpys_error():
    indptr = np.array([0, 2, 3, 6])
    args = (indptr, np.arange(6.0), np.zeros(6, np.int64))
    compiled = ac.compile(mismatched_lengths, backend="numba")
    want = outcome(mismatched_lengths, args)
    assert want[1][0] is ValueError
    assert outcome(compiled, args)[1][0] is ValueError
    ok = (np.array([0, 2, 3, 5]), np.arange(6.0), np.zeros(6, np.int64))  # lengths 2 and 2
    assert repr(outcome(compiled, ok)) == repr(outcome(mismatched_lengths, ok))


def test_an_empty_traced_row_types_the_loop_over_it_with_a_stand_in():
    indptr, data, indices = _csr(40, 6)
    indptr = np.concatenate([[0], indptr])  # the first row (the traced one) is empty
    args = (indptr, data, indices)
    counter, counting = counted("numba")
    compiled = ac.compile(inner_loop_over_row, backend=counting)
    assert repr(outcome(compiled, args)) == repr(outcome(inner_loop_over_row, args))
    assert [e.break_reason for e in compiled.entries if e.break_reason is not None] == []
