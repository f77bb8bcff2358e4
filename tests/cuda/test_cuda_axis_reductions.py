"""Reductions over any axes on the CUDA target (simulator): column reductions, keepdims,
argmax/argmin (NumPy's first occurrence; the first NaN wins), max/min with NaN propagation,
two-pass var/std and mean. Whole arrays and rows are block trees (arg-reductions merge (value,
index) pairs, two-pass reductions merge each pass); columns and the rest are one thread per
kept index (``kernels.SerialEmitter``), accumulating in C order like the CPU kernel."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")


def code(compiled) -> str:
    return "\n".join(e.output_code for e in compiled.entries)


def columns(x):
    return x.sum(axis=0), np.max(x, axis=0), x.min(axis=0, keepdims=True)


def args(x):
    return np.argmax(x, axis=1), np.argmin(x, axis=0), np.argmax(x)


def spreads(x):
    return x.var(axis=0), x.std(axis=1, ddof=1, keepdims=True), (x * 2.0).var(), x.mean(axis=0)


def middle(x):
    return x.sum(axis=1), x.mean(axis=(0, 2), keepdims=True), np.argmax(x, axis=1)


def host(value):
    return value.copy_to_host() if is_device_array(value) else value


def check(fn, x, expect_gpu=True):
    compiled = ac.compile(fn, device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(x)
        for value in (x, cuda.to_device(x)):
            got = compiled(value)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                if is_device_array(value) and np.ndim(w) > 0:
                    assert is_device_array(g)
                g = host(g)
                assert type(g) is type(w) and np.shape(g) == np.shape(w)
                assert np.asarray(g).dtype == np.asarray(w).dtype
                # float32 accumulates in float64 (as the CPU target does): within NumPy's error
                tol = 8 * np.finfo(np.float32).eps if np.asarray(w).dtype == np.float32 else 1e-13
                np.testing.assert_allclose(g, w, rtol=tol, atol=0)
    if expect_gpu:
        assert "NumPy on the host" not in code(compiled), code(compiled)
        assert "CUDA kernel" in code(compiled)
    return compiled


TIES = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 1.0], [0.0, -1.0, 5.0, 5.0]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_column_reductions(dtype):
    check(columns, (np.arange(15) % 7 - 3).reshape(5, 3).astype(dtype))


@pytest.mark.parametrize("nan", [None, (0, 1), (2, 3), (1, 0)])
def test_nan_propagation_and_first_nan_wins(nan):
    x = TIES.copy()
    if nan is not None:
        x[nan] = np.nan
    check(columns, x)
    check(args, x)


def test_arg_ties_take_first_occurrence():
    check(args, TIES)
    check(args, np.array([[4, 4, 1], [1, 4, 4]], dtype=np.int32))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_two_pass_var_std_mean(dtype):
    x = (np.random.default_rng(0).standard_normal((6, 5)) * 10 + 1e3).astype(dtype)
    check(spreads, x)


def test_middle_axis_and_keepdims():
    check(middle, np.random.default_rng(1).standard_normal((3, 4, 5)))


def test_many_columns_exceed_the_grid():
    from astcompiler.lower.numba.gpu.launch import LAUNCH
    cols = LAUNCH.max_blocks * LAUNCH.threads * 2 + 3
    check(columns, np.random.default_rng(2).standard_normal((3, cols)))


def empty_columns(x):
    return x.sum(axis=1), x.max(axis=0)


def test_empty_reduced_axis():
    compiled = ac.compile(empty_columns, device="cuda")
    x = np.zeros((0, 3))
    with pytest.raises(ValueError) as plain:
        empty_columns(x)
    with pytest.raises(ValueError) as got:
        compiled(x)
    assert str(got.value) == str(plain.value)

    def zero_sums(a):
        return a.sum(axis=1), a.sum(axis=0)
    compiled = ac.compile(zero_sums, device="cuda")
    for got, want in zip(compiled(np.zeros((3, 0))), zero_sums(np.zeros((3, 0)))):
        np.testing.assert_array_equal(got, want)
        assert got.shape == want.shape


def whole_args(x):
    return np.argmax(x), np.argmin(x)


def row_stats(x):
    return x.mean(axis=1), x.var(axis=1), np.argmax(x, axis=1)


@pytest.mark.parametrize("case", ["ties", "nan", "two_nans", "all_equal", "nan_first"])
def test_whole_array_arg_reductions_merge_pairs(case):
    from astcompiler.lower.numba.gpu.launch import LAUNCH
    n = LAUNCH.threads * LAUNCH.max_blocks * 3 + 1  # every thread and block holds several
    x = np.zeros(n)
    x[[5, n - 2, 11]] = 3.0, 3.0, -2.0
    x[[2, n - 1]] = -2.0, -2.0
    if case == "nan":
        x[n - 3] = np.nan
    elif case == "two_nans":
        x[[n - 3, 7]] = np.nan
    elif case == "all_equal":
        x[:] = -np.inf
    elif case == "nan_first":
        x[0] = np.nan
    compiled = check(whole_args, x)
    assert "_merge(" in code(compiled)


def test_row_stats_are_block_trees():
    x = np.random.default_rng(3).standard_normal((5, 9))
    x[2, 4] = x[2, 7] = 9.0
    x[3, 6] = np.nan
    compiled = check(row_stats, x)
    assert "one block per row" in code(compiled)


def scalar_work_after(x, t):
    return x.sum() < t, np.argmax(x) + 1, x.max() * 2.0 + t


def test_scalar_work_after_a_whole_array_tree():
    x = np.random.default_rng(6).standard_normal(37)
    compiled = ac.compile(scalar_work_after, device="cuda")
    for value in (x, cuda.to_device(x)):
        got, want = compiled(value, 0.5), scalar_work_after(x, 0.5)
        assert [type(g) for g in got] == [type(w) for w in want]
        assert got == want
    assert "_merge(" in code(compiled) and "NumPy on the host" not in code(compiled)
