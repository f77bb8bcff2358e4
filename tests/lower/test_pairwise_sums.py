"""Fused float sums give NumPy's bits: its pairwise order and its dtype (``lower/numba/pairwise.py``).

NumPy adds a contiguous row (a reduction over the last axis, or a whole 1-D array) pairwise in
blocks of 128 with eight accumulators, in the input's float (float32 in float32); the rows of a
C-ordered array over axis 0 one after another; mean is the sum divided, var/std the pairwise sum
of the squared deviations from that mean. Every comparison here is ``np.array_equal`` on the
float bits (and the dtype), never ``allclose``. Compiled functions are module-level and see
many lengths: after the second length a dim is dynamic, so each compiles about twice.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import astcompiler as ac

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # mean/var of empty rows


def _data(rng, shape, dtype):
    """Values over 40 binades, a few signed zeros: sums whose order shows in the last bits."""
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)
    x = x.astype(dtype)
    if x.size:
        x.flat[rng.integers(0, x.size, 3)] = -0.0
    return x


def _same(expected, actual) -> bool:
    if isinstance(expected, tuple):
        return len(expected) == len(actual) and all(map(_same, expected, actual))
    expected, actual = np.asarray(expected), np.asarray(actual)
    return expected.dtype == actual.dtype and expected.shape == actual.shape \
        and np.array_equal(expected, actual, equal_nan=True)


def row_stats(x):
    return (x.sum(axis=1), x.mean(axis=1), x.var(axis=1), x.std(axis=1),
            x.sum(axis=-1, keepdims=True))


def whole_stats(x):
    return x.sum(), x.mean(), x.var()


def dot(a, b):
    return (a * b).sum()


def row_distance(a, b):
    return ((a - b) ** 2).sum(axis=1)


def column_stats(x):
    return x.sum(axis=0), x.mean(axis=0, keepdims=True), x.var(axis=0)


def shifted_exp(x):
    return np.exp(x - x.max(axis=1, keepdims=True))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x, weight, bias):
    mean = x.mean(axis=1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=1, keepdims=True)
    return centered / np.sqrt(var + 1e-5) * weight + bias


def stats_and_argmax(x):
    return x.mean(axis=1), x.var(axis=1), x.argmax(axis=1)


_COMPILED: dict = {}


def compiled(fn, dtype):
    key = (fn.__name__, np.dtype(dtype).name)
    if key not in _COMPILED:
        _COMPILED[key] = ac.compile(fn, backend="numba")
    return _COMPILED[key]


LENGTHS = list(range(1, 301)) + [1000, 2048, 2049, 4097]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_means_variances_are_numpys_bits(dtype):
    rng = np.random.default_rng(1)
    fn = compiled(row_stats, dtype)
    for n in LENGTHS:
        x = _data(rng, (3, n), dtype)
        assert _same(row_stats(x), fn(x)), n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_whole_array_sums_are_numpys_bits(dtype):
    rng = np.random.default_rng(2)
    fn = compiled(whole_stats, dtype)
    for n in [1, 2, 7, 8, 9, 127, 128, 129, 255, 256, 300, 1000, 4097, 10**5, 300_001]:
        x = _data(rng, n, dtype)  # from 65536 elements: the prange twin's subtrees
        assert _same(whole_stats(x), fn(x)), n
    assert _same(np.sum(np.zeros(0, dtype)), fn(np.zeros(0, dtype))[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_producers_sum_numpys_temporaries_bits(dtype):
    rng = np.random.default_rng(3)
    fused, rows = compiled(dot, dtype), compiled(row_distance, dtype)
    for n in [5, 100, 1000, 4097, 200_000]:
        a, b = _data(rng, n, dtype), _data(rng, n, dtype)
        assert _same(dot(a, b), fused(a, b)), n
    for n in [3, 100, 129, 1000, 3000]:
        a, b = _data(rng, (4, n), dtype), _data(rng, (4, n), dtype)
        assert _same(row_distance(a, b), rows(a, b)), n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axis0_sums_add_rows_in_order_like_numpy(dtype):
    rng = np.random.default_rng(4)
    fn = compiled(column_stats, dtype)
    for shape in [(7, 5), (300, 40), (1000, 3)]:
        x = _data(rng, shape, dtype)
        assert _same(column_stats(x), fn(x)), shape


def test_softmax_divides_by_numpys_sum_of_its_exponentials():
    rng = np.random.default_rng(5)
    x = rng.uniform(-4, 4, (64, 1000)).astype(np.float32)
    e = compiled(shifted_exp, np.float32)(x)  # the kernels' exp (vecmath): NumPy sums it here
    assert _same(e / e.sum(axis=1, keepdims=True), compiled(softmax, np.float32)(x))


def test_layernorm_is_numpys_bits():
    rng = np.random.default_rng(6)
    x = rng.uniform(-4, 4, (64, 1000)).astype(np.float32)
    w, b = rng.uniform(0.5, 1.5, 1000).astype(np.float32), rng.uniform(-1, 1, 1000).astype(np.float32)
    assert _same(layernorm(x, w, b), compiled(layernorm, np.float32)(x, w, b))


@pytest.mark.parametrize("shape", [(5, 100), (4, 1000), (2, 5000)])
def test_static_row_lengths(shape):
    """Each static length takes its own path: NumPy's eight lanes unrolled (<= 128), the tree
    written out (<= 4096), a plan made at run time (longer rows)."""
    rng = np.random.default_rng(7)
    x = _data(rng, shape, np.float32)
    fn = ac.compile(stats_and_argmax, backend="numba", dynamic=False)
    assert _same(stats_and_argmax(x), fn(x))
    assert _same(stats_and_argmax(2 * x), fn(2 * x))


def test_strided_and_broadcast_rows():
    """A row of stride 2 is buffered (NumPy adds it pairwise with its stride); a row broadcast
    from a 1-D array is a direct row of every outer index."""
    rng = np.random.default_rng(8)
    fn = compiled(row_stats, np.float64)
    x = _data(rng, (6, 2000), np.float64)
    assert _same(row_stats(x[:, ::2]), fn(x[:, ::2]))
    assert _same(row_stats(x[::2, 1:]), fn(x[::2, 1:]))


def test_loop_body_kernels_sum_like_numpy():
    def walk(x):
        total = np.zeros(x.shape[1], x.dtype)
        for i in range(x.shape[0]):
            total = total + x[i] * x[i].sum()
        return total

    rng = np.random.default_rng(9)
    x = _data(rng, (20, 300), np.float32)
    assert _same(walk(x), ac.compile(walk, backend="numba")(x))


def test_the_old_order_stays_available():
    rng = np.random.default_rng(10)
    x = _data(rng, (3, 1000), np.float32)
    with ac.config.patch(pairwise_sums=False):
        fn = ac.compile(row_stats, backend="numba")
        got = fn(x)
    exact = np.array([math.fsum(map(float, row)) for row in x])
    bound = (1000 / 64 + 70) * np.finfo(np.float64).eps * np.abs(x.astype(np.float64)).sum(1)
    rounding = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)  # to float32
    assert np.all(np.abs(got[0].astype(np.float64) - exact) <= bound + rounding)
    assert "pairwise_sum(" not in fn.entries[0].output_code


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 5000), seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_any_length(n, seed, dtype):
    rng = np.random.default_rng(seed)
    x = _data(rng, (2, n), dtype)
    assert _same(row_stats(x)[0], compiled(row_stats, dtype)(x)[0])
    assert _same(whole_stats(x[0])[0], compiled(whole_stats, dtype)(x[0])[0])


def test_kernel_constants_mirror_the_runtime_module():
    from astcompiler.lower.numba import cpu, pairwise

    assert (cpu.PAIRWISE_CHUNK, cpu.PAIRWISE_STACK, cpu.PAIRWISE_PLAN, cpu.PAIRWISE_VALUES,
            cpu.PAIRWISE_LEAF) == (pairwise.CHUNK, pairwise.STACK, pairwise.PLAN, pairwise.VALUES,
                                   pairwise.LEAF)
    leaves, tree = cpu.pairwise_tree(1000)  # the recursion's leaves, as NumPy splits 1000
    assert leaves == [(0, 120), (120, 128), (248, 120), (368, 128), (496, 120), (616, 128),
                      (744, 128), (872, 128)]
    assert tree == (((0, 1), (2, 3)), ((4, 5), (6, 7)))
