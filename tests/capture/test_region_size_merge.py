"""A loop whose carried array changes symbolic size on the first trip (``v = A @ v``: ``(s2,)``
then ``(s0,)``) keeps one dynamic entry with the loop as a region, under the guard that the two
sizes are equal; a call where they differ recompiles, and sizes that differ never merge."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter


def power_iteration(A, v0, iters):
    v = v0 / np.linalg.norm(v0)
    lam = 0.0
    for _ in range(iters):
        w = A @ v
        lam = v @ w
        v = w / np.linalg.norm(w)
    return lam, v


def grow_then_keep(x, n):
    y = x
    for _ in range(n):
        y = np.concatenate([x, x])  # (s0,) -> (2*s0,): never the same size
    return y


def _inputs(n, m=None):
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, m or n)), rng.standard_normal(m or n)


def _same(got, want):
    assert type(got) is type(want)
    for g, w in zip(got, want):
        assert type(g) is type(w)
        assert np.array_equal(g, w) and np.asarray(g).dtype == np.asarray(w).dtype


@pytest.fixture(scope="module", params=["aot_eager", "numba"])
def compiled(request):
    return ac.compile(power_iteration, backend=request.param, dynamic=True)


def test_second_size_keeps_one_region_entry(compiled):
    for n in (6, 9, 12):
        A, v0 = _inputs(n)
        _same(compiled(A, v0, 7), power_iteration(A, v0, 7))
        assert len(compiled.entries) == 1
    entry = compiled.entries[0]
    assert "region.for_range" in entry.graph_code
    assert "np.matmul(A, divide)" not in entry.graph_code  # not unrolled


def test_sizes_that_differ_recompile_with_numpys_error(compiled):
    A, v0 = _inputs(4, 5)  # A @ v is (4,), then A @ w needs 5: NumPy raises on the 2nd trip
    with pytest.raises(ValueError) as want:
        power_iteration(A, v0, 3)
    with pytest.raises(ValueError) as got:
        compiled(A, v0, 3)
    assert str(got.value) == str(want.value)
    A, v0 = _inputs(5)
    _same(compiled(A, v0, 3), power_iteration(A, v0, 3))


def test_automatic_dynamic_after_a_second_size():
    counter = CompileCounter()
    fn = ac.compile(power_iteration, backend=counter)
    for n in (6, 9, 12, 7):
        A, v0 = _inputs(n)
        _same(fn(A, v0, 20), power_iteration(A, v0, 20))
    assert counter.frame_count == 2  # the static entry, then one dynamic one for every size
    assert len(fn.entries) == 2
    assert "region.for_range" in fn.entries[-1].graph_code


def test_sizes_that_never_agree_do_not_merge():
    fn = ac.compile(grow_then_keep, backend="aot_eager", dynamic=True)
    for n in (3, 4):
        x = np.arange(float(n))
        np.testing.assert_array_equal(fn(x, 2), grow_then_keep(x, 2))
    assert "region.for_range" not in fn.entries[0].graph_code


# -- row reductions in loop regions: run-time row counts, NumPy's bits ----------------------------


def window_row_sums(X, n):
    out = np.zeros(X.shape[0])
    for i in range(n):
        blk = X[i:i + 2]  # 2 rows, then 1 at the end of X
        out[i:i + 2] += blk.sum(axis=1)
    return out


def interior_row_sums(X, n):
    t = np.zeros(X.shape[0] - 2)
    for i in range(n):
        t = t + X[1:-1, :].sum(axis=1) * i  # ``t`` is read along the rows (F's first axis)
    return t


@pytest.mark.parametrize("fn", [window_row_sums, interior_row_sums])
def test_row_kernels_in_loops_serve_any_row_count(fn):
    compiled = ac.compile(fn, backend="numba")
    X = np.random.default_rng(1).standard_normal((40, 7))
    for n in (40, 25):  # 40: the last window has one row
        got, want = compiled(X, n), fn(X, n)
        assert got.dtype == want.dtype and np.array_equal(got, want)  # bits, not allclose
    code = compiled.entries[0].output_code
    assert "structured_kernel" in code and "rows kernel" in code
    assert ".shape[0] == 2" not in code and ".shape[0] == 38" not in code  # no traced row count
    assert ".shape[1] == 7" in code or fn is interior_row_sums  # row lengths stay planned
    assert ".shape[0] == getitem.shape[1]" not in code  # rows are F's first axis
