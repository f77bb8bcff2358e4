"""Vectorized row kernels (issue 11, lever 2) and pooled temporaries (lever 3).

Row reductions accumulate in ``VECTOR_LANES`` lanes merged as a tree (``cpu.py``), float sums in
NumPy's pairwise order (its bits, float32 in float32: ``tests/lower/test_pairwise_sums.py``), integer
results are NumPy's exactly, argmax/argmin return the first occurrence and the first NaN, on any
layout and size, serial or ``prange``.
"""

from __future__ import annotations

import math
import threading
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.config import config
from astcompiler.lower.numba.cpu import VECTOR_LANES

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SHAPES = [(1, 1), (1, 300), (300, 1), (5, 7), (3, VECTOR_LANES), (3, VECTOR_LANES + 1),
          (4, 3 * VECTOR_LANES + 5), (2, 1000)]


def row_sum(x):
    return x.sum(axis=1)


def row_stats(x):
    return x.mean(axis=1), x.var(axis=1), x.std(axis=1, ddof=1), x.max(axis=1), x.min(axis=-1)


def row_args(x):
    return x.argmax(axis=1), x.argmin(axis=-1)


def softmax(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x, weight, bias):
    mean = x.mean(axis=1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=1, keepdims=True)
    return centered / np.sqrt(var + 1e-5) * weight + bias


def _sum_bound(x: np.ndarray, result_dtype: np.dtype) -> np.ndarray:
    """The documented error bound of a lane-tree row sum (``cpu.py``): ``(n / 64 + 70)``
    roundings of the float64 accumulator over ``sum(|x|)``, plus the final rounding to the
    result's dtype."""
    n = x.shape[1]
    acc_eps = np.finfo(np.float64).eps
    mag = np.abs(x.astype(np.float64)).sum(axis=1)
    exact = np.array([math.fsum(map(float, row)) for row in x])
    return (n / VECTOR_LANES + 70) * acc_eps * mag + np.finfo(result_dtype).eps * np.abs(exact)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_float_row_sums_within_the_documented_bound(dtype, shape):
    x = np.random.default_rng(sum(shape)).uniform(-4, 4, shape).astype(dtype)
    compiled = ac.compile(row_sum, backend="numba")
    got = compiled(x)
    assert got.dtype == row_sum(x).dtype and got.shape == (shape[0],)
    assert np.array_equal(got, row_sum(x))  # NumPy's pairwise sum, bit for bit
    if dtype == np.float64:  # which is within the bound of the lanes it replaced
        exact = np.array([math.fsum(map(float, row)) for row in x])
        assert np.all(np.abs(got - exact) <= _sum_bound(x, np.dtype(dtype)))


@pytest.mark.parametrize("shape", SHAPES)
def test_row_statistics_match_a_float64_reference(shape):
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    compiled = ac.compile(row_stats, backend="numba")
    got, want = compiled(x), row_stats(x)
    reference = row_stats(x.astype(np.float64))
    for g, w, r in zip(got, want, reference):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, r, rtol=2e-6, atol=2e-6, equal_nan=True)
    np.testing.assert_array_equal(got[3], want[3])  # max and min are exact
    np.testing.assert_array_equal(got[4], want[4])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("shape", [(1, 1), (3, 130), (2, 1000), (300, 1)])
def test_integer_row_reductions_are_exact(dtype, shape):
    x = np.random.default_rng(3).integers(0, 200, shape).astype(dtype)
    def int_stats(x):
        return x.sum(axis=1), x.max(axis=1), x.min(axis=1), x.argmax(axis=1), x.mean(axis=1)
    compiled = ac.compile(int_stats, backend="numba")
    for g, w in zip(compiled(x), int_stats(x)):
        assert g.dtype == w.dtype
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-12)
        else:
            np.testing.assert_array_equal(g, w)


def _rows_with_ties_and_nans() -> np.ndarray:
    n = 3 * VECTOR_LANES + 9
    x = np.zeros((8, n), np.float64)
    x[0, [70, 6, 134, n - 1]] = 5.0  # ties in different lanes: the first one
    x[1, [3, 3 + VECTOR_LANES, 3 + 2 * VECTOR_LANES]] = 5.0  # ties in one lane
    x[2, [n - 1, n - 3]] = 9.0  # ties in the tail
    x[3, [100, 40, 150]] = np.nan  # the first NaN wins
    x[3, 7] = 99.0
    x[4, :] = -np.inf  # nothing beats the initial value: index 0
    x[5, n - 1] = np.nan
    x[6, :] = np.nan
    x[7, 1::2] = -1.0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_argmax_argmin_first_occurrence_and_first_nan(dtype):
    x = _rows_with_ties_and_nans().astype(dtype)
    compiled = ac.compile(row_args, backend="numba")
    for args in ((x,), (-x,), (x[:, ::-1],), (np.asfortranarray(x),)):
        got, want = compiled(*args), row_args(*args)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_integer_argmax_with_the_lowest_value_everywhere():
    x = np.full((3, 2 * VECTOR_LANES + 3), np.iinfo(np.int16).min, np.int16)
    x[1, [9, 9 + VECTOR_LANES]] = 4
    compiled = ac.compile(row_args, backend="numba")
    for g, w in zip(compiled(x), row_args(x)):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("layout", ["strided", "fortran", "reversed", "transposed"])
def test_non_contiguous_inputs(layout):
    base = np.random.default_rng(11).uniform(-3, 3, (20, 2 * VECTOR_LANES + 7)).astype(np.float32)
    x = {"strided": base[:, ::2], "fortran": np.asfortranarray(base), "reversed": base[::-1, ::-1],
         "transposed": base.T}[layout]
    for fn in (row_stats, row_args, softmax):
        compiled = ac.compile(fn, backend="numba")
        got, want = compiled(x), fn(x)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape and g.strides == w.strides
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("shape", [(1, 5), (7, 1), (6, 2 * VECTOR_LANES + 3)])
def test_softmax_and_layernorm_serial_and_parallel(shape):
    rng = np.random.default_rng(5)
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    w, b = rng.uniform(0.5, 1.5, shape[1]).astype(np.float32), rng.standard_normal(
        shape[1]).astype(np.float32)
    for threshold in (1 << 30, 1):  # the serial kernel, then the prange twin
        with config.patch(parallel_threshold=threshold):
            soft = ac.compile(softmax, backend="numba")
            norm = ac.compile(layernorm, backend="numba")
            got_s, got_n = soft(x), norm(x, w, b)
        np.testing.assert_allclose(got_s, softmax(x.astype(np.float64)), rtol=3e-6, atol=1e-7)
        np.testing.assert_allclose(got_n, layernorm(x.astype(np.float64), w, b), rtol=1e-4,
                                   atol=2e-5)
        assert got_s.dtype == softmax(x).dtype and got_n.dtype == layernorm(x, w, b).dtype


def test_row_kernel_accumulates_in_vector_lanes():
    x = np.random.default_rng(2).uniform(-1, 1, (4, 300)).astype(np.float32)
    compiled = ac.compile(row_stats, backend="numba")
    compiled(x)
    code = "\n".join(entry.output_code for entry in compiled.entries)
    assert "acc_max_v[u]" in code and f"for u in range({VECTOR_LANES}):" in code
    assert f"np.empty({VECTOR_LANES}, np.float32)" in code  # once per call, not per row
    assert "NumPy's pairwise tree of 300" in code  # float sums: NumPy's order (pairwise.py)


def test_parallel_rows_allocate_lane_arrays_per_slice():
    x = np.random.default_rng(4).uniform(-1, 1, (257, 70)).astype(np.float64)
    with config.patch(parallel_threshold=1):
        compiled = ac.compile(row_args, backend="numba")
        got = compiled(x)
    for g, w in zip(got, row_args(x)):
        np.testing.assert_array_equal(g, w)
    code = "\n".join(entry.output_code for entry in compiled.entries)
    assert "for c in numba.prange(chunks):" in code


def test_empty_rows_raise_like_numpy():
    x = np.zeros((3, 0), np.float32)
    compiled = ac.compile(row_args, backend="numba")
    with pytest.raises(ValueError) as want:
        row_args(x)
    with pytest.raises(ValueError) as got:
        compiled(x)
    assert str(got.value) == str(want.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ac.compile(row_sum, backend="numba")
        np.testing.assert_array_equal(s(x), row_sum(x))


# -- pooled temporaries --------------------------------------------------------------------------


def centered(x):
    s = x.sum(axis=0)  # a columns kernel's result, read only by the next kernel: a temporary
    return x - s * 0.5


def centered_and_sums(x):
    s = x.sum(axis=0)
    return x - s * 0.5, s  # s is returned: never pooled


def _wide(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (3, 150_000))  # s: 1.2 MB


def _code(compiled) -> str:
    return "\n".join(entry.output_code for entry in compiled.entries)


def test_a_temporary_between_kernels_is_pooled():
    compiled = ac.compile(centered, backend="numba")
    x = _wide(0)
    np.testing.assert_allclose(compiled(x), centered(x), rtol=1e-12)
    code = _code(compiled)
    assert "___pool = ___rt.BufferPool()" in code
    assert "___pool.take(0, " in code and "___pool.give(0, " in code


def test_returned_arrays_are_never_reused():
    compiled = ac.compile(centered_and_sums, backend="numba")
    x, y = _wide(1), _wide(2)
    first = compiled(x)
    kept = [a.copy() for a in first]
    second = compiled(y)
    for a, b, k in zip(first, second, kept):
        assert not np.shares_memory(a, b)
        np.testing.assert_array_equal(a, k)  # the first call's results are unchanged
    for got, want in zip(second, centered_and_sums(y)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    # s is a result: allocated fresh on every call (only s * 0.5 is a pooled temporary)
    lines = _code(compiled).splitlines()
    pooled = {line.split("=")[0].strip() for line in lines if "= ___pool.take(" in line}
    returned = next(line for line in lines if line.strip().startswith("return (")).strip()
    returned = {name.strip() for name in returned[len("return ("):-1].split(",") if name.strip()}
    assert len(pooled) == 1 and not pooled & returned
    pooled = ac.compile(centered, backend="numba")
    a = pooled(x)
    b = pooled(y)
    assert not np.shares_memory(a, b)
    np.testing.assert_allclose(a, centered(x), rtol=1e-12)


def test_pooled_results_are_right_under_four_threads():
    compiled = ac.compile(centered, backend="numba")
    inputs = [_wide(10 + i) for i in range(4)]
    expected = [centered(x) for x in inputs]
    compiled(inputs[0])  # compiled before the threads start
    failures: list[str] = []

    def work(i: int) -> None:
        for _ in range(15):
            got = compiled(inputs[i])
            if not np.allclose(got, expected[i], rtol=1e-12, atol=0):
                failures.append(f"thread {i}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_buffer_pool_checks_out_and_keeps_only_big_c_buffers():
    from astcompiler.lower.numba.runtime import POOL_MIN_BYTES, BufferPool

    pool = BufferPool()
    n = POOL_MIN_BYTES // 8
    a = pool.take(0, (n,), np.float64)
    pool.give(0, a)
    b = pool.take(0, (n,), np.float64)
    assert b is a  # reused
    c = pool.take(0, (n,), np.float64)
    assert c is not b  # checked out: a second taker (a thread, a nested call) gets its own
    pool.give(0, b)
    assert pool.take(0, (n + 1,), np.float64) is not b  # another shape: a fresh buffer
    small = pool.take(1, (4,), np.float64)
    pool.give(1, small)
    assert pool.take(1, (4,), np.float64) is not small  # small buffers are not kept


def test_a_static_row_length_compiles_one_row_function():
    """Rows of a static length need one row function: vector lanes from 128 elements, scalar
    accumulators below; a dynamic length keeps both and picks per call."""
    short = np.random.default_rng(7).uniform(-1, 1, (4, 100))
    long = np.random.default_rng(7).uniform(-1, 1, (4, 300))
    for x, present, absent in ((short, "_row(", "_row_long("), (long, "_row_long(", "_row(")):
        compiled = ac.compile(row_stats, backend="numba")
        for g, w in zip(compiled(x), row_stats(x)):
            np.testing.assert_allclose(g, w, rtol=1e-12)
        code = "\n".join(entry.output_code for entry in compiled.entries)
        assert present in code and absent not in code
    compiled = ac.compile(row_stats, backend="numba", dynamic=True)
    compiled(long)
    code = "\n".join(entry.output_code for entry in compiled.entries)
    assert "_row(" in code and "_row_long(" in code
