"""FP flags of the CUDA target that issue 12 left open (simulator): casts of floats to integers
(NaN, infinity, out of range), narrowing float casts, reduction accumulators that overflow or
make NaN, and matrix products (alone and with a fused epilogue): the user gets NumPy's own
warnings (the flagged kernel's NumPy version reruns on the host), and nothing when NumPy warns
nothing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac

cuda = pytest.importorskip("numba.cuda")


def caught(fn, *args):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        value = fn(*args)
    return value, [(w.category, str(w.message)) for w in got]


def same_warnings(compiled, fn, *args):
    value, got = caught(compiled, *args)
    want_value, want = caught(fn, *args)
    assert got == want
    np.testing.assert_array_equal(value, want_value)
    return want


def to_int32(x):
    return (x * 1.0).astype(np.int32)


def to_float32(x):
    return (x + 0.0).astype(np.float32)


def total(x):
    return (x * 1.0).sum()


def row_totals(x):
    return (x * 1.0).sum(axis=1)


@pytest.fixture(scope="module")
def compiled():
    return {fn.__name__: ac.compile(fn, device="cuda", dynamic=True)
            for fn in (to_int32, to_float32, total, row_totals)}


def test_casts_to_integers(compiled):
    fn = compiled["to_int32"]
    assert same_warnings(fn, to_int32, np.array([1.5, -2.7, np.nan])) == [
        (RuntimeWarning, "invalid value encountered in cast")]
    assert same_warnings(fn, to_int32, np.array([3e9, 1.0, 2.0]))  # out of range: NumPy warns
    assert same_warnings(fn, to_int32, np.array([-2.5, 7.9, 1e9])) == []


def test_narrowing_cast_overflow(compiled):
    fn = compiled["to_float32"]
    assert same_warnings(fn, to_float32, np.array([1e300, 1.0])) == [
        (RuntimeWarning, "overflow encountered in cast")]
    assert same_warnings(fn, to_float32, np.array([1e30, 1.0])) == []


def test_reduction_accumulator_overflow(compiled):
    big = np.array([1e308, 1e308, 1.0, 2.0])
    want = same_warnings(compiled["total"], total, big)
    assert want == [(RuntimeWarning, "overflow encountered in reduce")]
    assert same_warnings(compiled["total"], total, np.array([1.0, 2.0, 3.0])) == []
    rows = np.array([[1e308, 1e308], [1.0, 2.0]])
    assert same_warnings(compiled["row_totals"], row_totals, rows) == want


def product(a, b):
    return a @ b


def layer(a, b):
    return np.maximum(a @ b + 1.0, 0.0)


INF_A = np.array([[np.inf, 1.0], [0.0, 2.0]])
NAN_B = np.array([[0.0, 1.0], [1.0, np.nan]])


@pytest.mark.parametrize("fn", [product, layer])
def test_products_warn_as_numpys_matmul(fn):
    compiled = ac.compile(fn, device="cuda")
    want = same_warnings(compiled, fn, INF_A, NAN_B)
    assert want and all("matmul" in message for _, message in want)
    ad, bd = cuda.to_device(INF_A), cuda.to_device(NAN_B)
    assert caught(compiled, ad, bd)[1] == want
    finite = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert caught(compiled, cuda.to_device(finite), bd)[1] == caught(fn, finite, NAN_B)[1]


def scalar_math(x, big):
    """NumPy's integer scalar math after GPU reductions (it warns where it wraps)."""
    return np.argmax(x) + big, -x.min(), x.max() * 3, abs(x.min()), x.sum() - big


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.uint64])
def test_integer_scalar_math_after_reductions(dtype):
    info = np.iinfo(dtype)
    compiled = ac.compile(scalar_math, device="cuda")
    quiet = np.arange(1, 6, dtype=dtype)
    wrapping = np.array([info.min, 3, info.max // 2, 7], dtype=dtype)
    top = min(int(info.max), int(np.iinfo(np.int64).max)) - 1  # argmax is an int64
    for x, big in ((quiet, 1), (wrapping, top), (quiet, top)):
        for value in (x, cuda.to_device(x)):
            got, warned = caught(compiled, value, big)
            want, want_warned = caught(scalar_math, x, big)
            assert [type(g) for g in got] == [type(w) for w in want] and got == want
            assert warned == want_warned
    assert any(caught(scalar_math, wrapping, top)[1])  # the case warns
    text = "\n".join(e.output_code for e in compiled.entries)
    assert "NumPy on the host" not in text and "integer scalar math" in text
