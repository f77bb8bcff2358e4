"""Gathers in fused kernels: ``x[idx]`` with an index array read element by element.

``plan.build_plan(gathers=True)`` (the CPU backend's top level) lets ``getitem`` of a 1-D array at
a 1-D integer index array be a kernel member (``oprules_arrays.GatherRule``): the consumer reads
``x[_ac_gather(idx[i], n)]`` instead of a gathered temporary. Each case compares the compiled
call with the plain one: values bit for bit, NumPy's ``IndexError`` (class and message, the first
index out of bounds), warnings, and the caller's arrays after an error.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome

pytest.importorskip("numba")


def _code(compiled) -> str:
    return compiled.entries[-1].output_code


def _same(compiled, fn, *args) -> None:
    got, want = outcome(compiled, args), outcome(fn, args)
    assert got[1] == want[1] and got[2] == want[2]
    if want[1] is None:
        _bits(got[0], want[0])


def _bits(got, want) -> None:
    assert type(got) is type(want)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _bits(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    assert np.array_equal(g.reshape(-1).view(np.uint8), w.reshape(-1).view(np.uint8))


def scaled_gather(data, x, idx):
    return data * x[idx]


def gather_of_computed(x, idx):
    return (x * 2.0 + 1.0)[idx] - 3.0


def gather_then_sum(x, idx, w):
    return (x[idx] * w).sum()


def gather_and_plain(x, idx):
    return x[idx] + x


def store_gathered(out, x, idx):
    out[:] = x[idx] * 2.0
    return out


def overflow_after_gather(x, idx):
    return x[idx] * np.float64(1e308)


def gather_of_product(A, v, idx):
    y = A @ v
    return y[idx] + 1.0


def lone_gather(x, idx):
    return x[idx], x[idx[::-1]]


def csr_matvec_vectorised(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    rows = np.repeat(np.arange(n), np.diff(indptr))
    return np.bincount(rows, weights=data * x[indices], minlength=n)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_gather_fuses_into_its_consumer_and_matches(rng):
    x, data = rng.standard_normal(50), rng.standard_normal(300)
    idx = rng.integers(-50, 50, 300)  # negative indices count from the end, as in NumPy
    compiled = ac.compile(scaled_gather)
    _same(compiled, scaled_gather, data, x, idx)
    code = _code(compiled)
    assert "_ac_gather(idx[i0], x.shape[0])" in code
    assert "getitem = x[idx]" not in code  # no gathered temporary in the wrapper


@pytest.mark.parametrize("bad", [50, -51, 10**6])
def test_out_of_bounds_raises_numpys_index_error(rng, bad):
    x, data = rng.standard_normal(50), rng.standard_normal(300)
    idx = rng.integers(0, 50, 300)
    compiled = ac.compile(scaled_gather)
    _same(compiled, scaled_gather, data, x, idx)
    idx[40], idx[200] = bad, -10**7  # NumPy names the first one out of bounds
    _same(compiled, scaled_gather, data, x, idx)
    idx[40] = 3
    _same(compiled, scaled_gather, data, x, idx)  # fine again afterwards


def test_empty_table_and_empty_index(rng):
    compiled = ac.compile(scaled_gather)
    for n, m in ((0, 0), (0, 3), (5, 0)):
        x, data = rng.standard_normal(n), rng.standard_normal(m)
        _same(compiled, scaled_gather, data, x, np.zeros(m, np.int64))


@pytest.mark.parametrize("index_dtype, table_dtype", [
    (np.int8, np.float32), (np.int32, np.int16), (np.uint16, np.uint8), (np.uint32, np.bool_)])
def test_index_and_table_dtypes(rng, index_dtype, table_dtype):
    x = (rng.standard_normal(40) * 50).astype(table_dtype)
    idx = rng.integers(0, 40, 120).astype(index_dtype)
    data = rng.standard_normal(120).astype(np.float32)
    compiled = ac.compile(scaled_gather)
    _same(compiled, scaled_gather, data, x, idx)
    assert "_ac_gather(" in _code(compiled)
    idx[5] = 100
    _same(compiled, scaled_gather, data, x, idx)


def test_uint64_and_2d_indices_stay_numpy_steps(rng):
    x, data = rng.standard_normal(30), rng.standard_normal(20)
    compiled = ac.compile(scaled_gather)
    idx = rng.integers(0, 30, 20).astype(np.uint64)
    _same(compiled, scaled_gather, data, x, idx)
    _same(compiled, scaled_gather, data, x, idx.astype(np.uint64) + np.uint64(2**63))
    two = ac.compile(scaled_gather)
    _same(two, scaled_gather, rng.standard_normal((4, 5)), x, rng.integers(0, 30, (4, 5)))


def test_gather_of_a_computed_array_and_into_a_sum(rng):
    x, w = rng.standard_normal(64), rng.standard_normal(500)
    idx = rng.integers(-64, 64, 500)
    _same(ac.compile(gather_of_computed), gather_of_computed, x, idx)
    _same(ac.compile(gather_then_sum), gather_then_sum, x, idx, w)
    idx[77] = 64
    _same(ac.compile(gather_then_sum), gather_then_sum, x, idx, w)


def test_table_also_read_elementwise_keeps_its_shape_checks(rng):
    compiled = ac.compile(gather_and_plain)
    x = rng.standard_normal(40)
    _same(compiled, gather_and_plain, x, rng.permutation(40))
    _same(compiled, gather_and_plain, x, rng.integers(0, 40, 39))  # NumPy's broadcast error


def test_store_of_a_gather_writes_nothing_on_index_error(rng):
    x = rng.standard_normal(16)
    idx = rng.integers(0, 16, 32)
    compiled = ac.compile(store_gathered)
    out_c, out_p = np.zeros(32), np.zeros(32)
    _same(compiled, store_gathered, out_c, x, idx)
    idx[20] = 16
    out_c, out_p = np.full(32, 5.0), np.full(32, 5.0)
    assert outcome(compiled, (out_c, x, idx))[1] == outcome(store_gathered, (out_p, x, idx))[1]
    assert np.array_equal(out_c, out_p)


def test_warnings_and_errors_in_numpys_order(rng):
    x = np.array([1.0, 2e300, 3.0])
    compiled = ac.compile(overflow_after_gather)
    _same(compiled, overflow_after_gather, x, np.array([0, 1, 2, 1]))  # overflow warns
    _same(compiled, overflow_after_gather, x, np.array([1, 1, 7, 1]))  # IndexError only
    _same(compiled, overflow_after_gather, x, np.array([0, 2, 0]))  # no warning left behind


def test_blas_result_gathered_is_not_reused_as_the_output(rng):
    A, v = rng.standard_normal((60, 60)), rng.standard_normal(60)
    idx = rng.permutation(60)
    compiled = ac.compile(gather_of_product)
    for _ in range(2):
        _same(compiled, gather_of_product, A, v, idx)


def test_a_gather_no_kernel_consumes_stays_numpys(rng):
    compiled = ac.compile(lone_gather)
    x, idx = rng.standard_normal(20), rng.integers(-20, 20, 50)
    _same(compiled, lone_gather, x, idx)
    assert "_ac_gather(" not in _code(compiled)
    idx[3] = 20
    _same(compiled, lone_gather, x, idx)


def test_csr_matvec_vectorised(rng):
    n = 400
    per_row = rng.integers(0, 6, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(per_row)
    indices = rng.integers(0, n, int(indptr[-1]))
    data, x = rng.standard_normal(int(indptr[-1])), rng.standard_normal(n)
    compiled = ac.compile(csr_matvec_vectorised)
    _same(compiled, csr_matvec_vectorised, indptr, indices, data, x)
    assert "_ac_gather(indices[i0], x.shape[0])" in _code(compiled)
    indices[3] = n
    _same(compiled, csr_matvec_vectorised, indptr, indices, data, x)


def test_sizes_that_change_between_calls(rng):
    compiled = ac.compile(scaled_gather)
    for n, m in ((30, 100), (31, 90), (45, 130), (12, 7)):  # dynamic sizes after a recompile
        idx = rng.integers(-n, n, m)
        _same(compiled, scaled_gather, rng.standard_normal(m), rng.standard_normal(n), idx)
        idx[m // 2] = n
        _same(compiled, scaled_gather, rng.standard_normal(m), rng.standard_normal(n), idx)
    # operands whose sizes disagree: the kernel's NumPy twin (broadcasting and errors as NumPy)
    _same(compiled, scaled_gather, rng.standard_normal(1), rng.standard_normal(9),
          rng.integers(0, 9, 20))
    _same(compiled, scaled_gather, rng.standard_normal(3), rng.standard_normal(9),
          rng.integers(0, 9, 20))
    _same(compiled, scaled_gather, rng.standard_normal(1), rng.standard_normal(9),
          np.array([1, 9]))
