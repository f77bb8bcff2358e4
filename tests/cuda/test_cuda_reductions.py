"""Whole-array reductions on the CUDA target (simulator): block tree reductions in shared memory
plus a second pass; other reductions (rows, columns, NaN-aware, arg) run as NumPy on the host."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")


def code(compiled) -> str:
    return "\n".join(e.output_code for e in compiled.entries)


def several(x, y):
    return (x * y + 1).sum(), np.max(x.astype(np.int64)), (x > 3).any(), (x >= 0).all()


@pytest.mark.parametrize("n", [1, 7, 37, 101])
def test_fused_whole_array_reductions(n):
    x, y = np.arange(float(n)), np.linspace(0, 1, n)
    compiled = ac.compile(several, device="cuda")
    for inputs in ((x, y), (cuda.to_device(x), cuda.to_device(y))):
        got, want = compiled(*inputs), several(x, y)
        assert [type(g) for g in got] == [type(w) for w in want]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-14)  # a tree, not NumPy's pairwise
        assert got[1:] == want[1:]
    if n > 1:  # (a size-1 array specializes differently)
        assert "cuda.shared.array" in code(compiled) and "_merge(" in code(compiled)


def test_float32_sum_within_pairwise_error():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(203).astype(np.float32)

    def total(a):
        return a.sum()
    compiled = ac.compile(total, device="cuda")
    got, want = compiled(x), total(x)
    assert type(got) is type(want) is np.float32
    exact = np.sum(x.astype(np.float64))
    assert abs(float(got) - exact) <= max(abs(float(want) - exact), 1e-6 * np.abs(x).sum())


def int_sums(x):
    return x.sum(), x.min()


def test_integer_sum_wraps_like_numpy():
    x = np.array([2 ** 62, 2 ** 62, 2 ** 62, -5], dtype=np.int64)
    compiled = ac.compile(int_sums, device="cuda")
    with np.errstate(over="ignore"):
        assert compiled(x) == int_sums(x)


def empty_max(x):
    return (x + 1).max()


def test_empty_reduction_raises_numpy_error():
    x = np.zeros(0, dtype=np.int64)
    compiled = ac.compile(empty_max, device="cuda")
    with pytest.raises(ValueError) as plain:
        empty_max(x)
    with pytest.raises(ValueError) as got:
        compiled(x)
    assert str(got.value) == str(plain.value)


def rows_and_mean(x):
    return x.sum(axis=1) + x.mean(), np.nanmax(x)


def test_other_reductions_run_on_host():
    x = np.arange(12.0).reshape(3, 4)
    compiled = ac.compile(rows_and_mean, device="cuda")
    got, want = compiled(x), rows_and_mean(x)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
    out = compiled(cuda.to_device(x))
    assert is_device_array(out[0])
    np.testing.assert_array_equal(out[0].copy_to_host(), want[0])
    assert "NumPy on the host" in code(compiled)


def nan_extremes(x):
    return x.max(), (x * 2).min()


@pytest.mark.parametrize("where", [None, (1, 2), (4, 8)])
def test_nan_propagating_max_min(where):
    x = np.random.default_rng(2).standard_normal((5, 9))
    if where is not None:
        x[where] = np.nan
    compiled = ac.compile(nan_extremes, device="cuda")
    got, want = compiled(x), nan_extremes(x)
    np.testing.assert_array_equal(np.array(got), np.array(want))
    assert [type(g) for g in got] == [type(w) for w in want]
    assert "_merge(" in code(compiled)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 5), (6, 17), (2, 3, 4)])
def test_softmax_row_kernel(dtype, shape):
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    def rows(a):
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    compiled = ac.compile(rows, device="cuda")
    for value in (x, cuda.to_device(x)):
        got = compiled(value)
        got = got.copy_to_host() if is_device_array(got) else got
        want = rows(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=0)
    assert "one block per row" in code(compiled)


def test_layernorm_matches_numpy():
    x = np.random.default_rng(4).standard_normal((4, 10))
    compiled = ac.compile(layernorm, device="cuda")
    got, want = compiled(x, 1e-5), layernorm(x, 1e-5)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    out = compiled(cuda.to_device(x), 1e-5)
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-12, atol=1e-12)


def test_many_rows_exceed_the_grid():
    from astcompiler.lower.numba.gpu.launch import LAUNCH
    x = np.random.default_rng(5).standard_normal((LAUNCH.max_blocks * 3 + 1, 6))
    compiled = ac.compile(softmax, device="cuda")
    np.testing.assert_allclose(compiled(x), softmax(x), rtol=1e-14)
