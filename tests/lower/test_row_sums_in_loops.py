"""Float sums of 1-D values in loop code: NumPy's pairwise order, in numba.

A loop over the rows of a CSR matrix sums ``data[lo:hi]``, whose length changes from row to
row. The kernel planned for the traced row's length served the rows of that length only; the
others summed in an ``objmode`` block calling NumPy (exact, but about 2 us a row: the compiled
``csr_row_norms`` ran at 0.35x of the plain function). The slice's length is now the data's
(``tests/capture/test_data_bounded_slices.py``), so one row kernel serves every row, and a
whole 1-D float sum left as a statement of loop code runs ``pairwise.sum_1d``, NumPy's pairwise
sum bit for bit, in numba.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.pairwise import sum_1d

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sum_1d_is_numpys_sum_bit_for_bit(dtype):
    for n in [*range(0, 140), 255, 256, 1000, 2047, 2048, 2049, 4100, 30001]:
        a = (RNG.standard_normal(n) * 10.0 ** RNG.uniform(-3, 3, n)).astype(dtype)
        for view in (a, a[::2], a[1::3]):
            assert np.asarray(sum_1d(view), dtype).tobytes() == np.sum(view).tobytes(), (n, view.strides)
    for n in (1, 7, 8, 9, 200):  # sums of negative zeros are +0.0, as NumPy's initial 0 makes them
        zeros = np.full(n, -0.0, dtype)
        assert np.asarray(sum_1d(zeros), dtype).tobytes() == np.sum(zeros).tobytes()


def row_norms(indptr, data):
    out = np.empty(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        lo, hi = indptr[i], indptr[i + 1]
        vals = data[lo:hi]
        out[i] = np.sqrt((vals * vals).sum()) if hi > lo else 0.0
    return out


def reversed_row_sums(indptr, data):
    out = np.empty(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        lo, hi = indptr[i], indptr[i + 1]
        out[i] = data[lo:hi][::-1].sum()
    return out


def _csr(rows: int, longest: int, dtype=np.float64):
    indptr = np.zeros(rows + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(RNG.integers(0, longest, rows))
    return indptr, RNG.standard_normal(int(indptr[-1])).astype(dtype)


@pytest.mark.parametrize("fn", [row_norms, reversed_row_sums])
def test_rows_of_every_length_sum_as_numpy_does(fn):
    compiled = ac.compile(fn, backend="numba")
    for args in (_csr(100, 300), _csr(120, 12), _csr(90, 40)):  # rows of 0..299 elements, ...
        assert compiled(*args).tobytes() == fn(*args).tobytes()
    assert len(compiled.entries) == 2  # the second call's sizes make them dynamic


def test_one_row_kernel_serves_rows_of_every_length():
    compiled = ac.compile(row_norms, backend="numba")
    compiled(*_csr(100, 30))
    code = compiled.entries[0].output_code
    kernel = code[code.index("def structured_kernel"):]
    assert "kernel_0_multiply_sum_sqrt(" in kernel  # the fused row kernel, for every row:
    assert ".shape[0] ==" not in kernel  # no test of the traced row's length before it


def row_moments(indptr, data):
    out = np.zeros((indptr.shape[0] - 1, 3), dtype=data.dtype)
    for i in range(indptr.shape[0] - 1):
        vals = data[indptr[i]:indptr[i + 1]]
        if vals.shape[0] > 1:
            out[i, 0] = vals.sum()
            out[i, 1] = vals.mean()
            out[i, 2] = vals.var()
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_short_and_long_rows_sum_mean_and_var_as_numpy_does(dtype):
    compiled = ac.compile(row_moments, backend="numba")
    for args in (_csr(150, 12, dtype), _csr(150, 40, dtype)):  # rows below 8 skip the scratch
        with np.errstate(all="ignore"):
            assert compiled(*args).tobytes() == row_moments(*args).tobytes()
