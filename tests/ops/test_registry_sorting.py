"""Sorting, searching and scans (cumsum, cumprod, diff): registry vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from astcompiler.exc import Unsupported
from astcompiler.ops import REGISTRY
from .opcheck import DTYPES, FakeProxy, canonical, check, method, noncontiguous, sample


def with_ties(shape, dtype, seed=0):
    """Values with many ties (and NaNs for floats), where algorithms could differ."""
    x = sample(shape, dtype, seed, low=-2, high=3)
    if x.dtype.kind == "f":
        x = np.round(x)
        x.flat[::5] = np.nan
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [-1, 0, 1, None, 2, -3])
def test_sort_argsort(dtype, axis):
    x = noncontiguous(with_ties((4, 5), dtype))
    check(np.sort, x, axis)
    check(np.sort, x, axis=axis, kind="stable")
    check(np.argsort, x, axis)
    check(np.argsort, x, axis=axis, stable=True)
    check(method("argsort"), x, axis)
    check(method("argsort"), x, axis=axis, kind="mergesort")


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_edge_cases(dtype):
    check(np.sort, sample((), dtype))
    check(np.argsort, sample((), dtype))
    check(np.sort, sample((0, 3), dtype))
    check(np.sort, [3, 1, 2])
    check(np.sort, sample((5,), dtype), kind="bad")
    check(np.sort, sample((5,), dtype), kind="stable", stable=True)
    check(np.argsort, sample((5,), dtype), -1, "heapsort")


def test_sort_canonical():
    x = FakeProxy(sample((3, 4)))
    assert canonical(np.sort, x) == canonical(np.sort, x, 1) == canonical(np.sort, x, axis=-1)
    assert canonical(np.argsort, x, 0) == canonical(method("argsort"), x, axis=-2)
    with pytest.raises(Unsupported):
        REGISTRY["sort"].canonical((x,), {"order": "f0"})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_inplace_sort_method(dtype, axis):
    x = noncontiguous(with_ties((4, 5), dtype))
    check(method("sort"), x, axis)
    check(method("sort"), x, axis=axis, kind="stable")
    check(method("sort"), x, None)


def test_inplace_sort_is_a_mutation():
    op = REGISTRY.lookup_method("sort")
    assert op.name == "sort_" and op.kind == "mutation" and op.side_effects
    assert REGISTRY.lookup_callable(np.sort).name == "sort"


@pytest.mark.parametrize("dtype", DTYPES)
def test_partition(dtype):
    x = with_ties((4, 6), dtype)
    for kth in (0, 2, -1, (1, 3), [0, 5]):
        check(np.partition, x, kth)
        check(np.argpartition, x, kth, axis=0)
        check(method("argpartition"), x, kth)
    check(np.partition, x, 2, None)
    check(np.partition, x, 10)
    check(np.partition, x, 1, kind="bad")


@pytest.mark.parametrize("dtype", ("float32", "float64", "int32", "int64"))
def test_searchsorted(dtype):
    a = np.sort(sample((8,), dtype))
    v = sample((3, 2), dtype, 1)
    for fn in (np.searchsorted, method("searchsorted")):
        check(fn, a, v)
        check(fn, a, v, "right")
        check(fn, a, v, side="left")
        check(fn, a, 0)
        check(fn, a, [0, 1])
        check(fn, a, v, side="middle")
    check(np.searchsorted, sample((8,), dtype), v, sorter=np.argsort(sample((8,), dtype)))


@pytest.mark.parametrize("fn", [np.cumsum, np.cumprod, np.nancumsum, np.nancumprod])
@pytest.mark.parametrize("dtype", DTYPES)
def test_scans(fn, dtype):
    x = noncontiguous(sample((3, 4), dtype))
    if fn in (np.nancumsum, np.nancumprod) and x.dtype.kind == "f":
        x[0, 1] = np.nan
    for axis in (None, 0, 1, -1, 2):
        check(fn, x, axis)
        check(fn, x, axis=axis, dtype=np.float64)
    check(fn, x, None, np.int32)
    check(fn, sample((), dtype))
    check(fn, sample((0,), dtype))
    check(fn, [1, 2, 3])


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scan_methods(name):
    x = sample((3, 4), "int32")
    check(method(name), x)
    check(method(name), x, 1)
    check(method(name), x, axis=0, dtype="f4")
    assert canonical(method(name), x, 1) == canonical(getattr(np, name), x, axis=-1)
    with pytest.raises(Unsupported):
        REGISTRY[name].canonical((FakeProxy(x),), {"out": np.empty((3, 4))})


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cumulative(name, dtype):
    fn = getattr(np, name, None)
    if fn is None:
        pytest.skip(f"np.{name} needs NumPy >= 2.1")
    x = sample((3, 4), dtype)
    check(fn, x, axis=0)
    check(fn, x, axis=-1, include_initial=True)
    check(fn, x, axis=1, dtype=np.float64)
    check(fn, x)
    check(fn, sample((5,), dtype))
    check(fn, sample((), dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_diff(dtype):
    x = noncontiguous(sample((4, 5), dtype))
    check(np.diff, x)
    check(np.diff, x, 2)
    check(np.diff, x, 1, 0)
    check(np.diff, x, n=0)
    check(np.diff, x, axis=-2)
    check(np.diff, x, 1, 2)
    check(np.diff, x, -1)
    check(np.diff, x, prepend=0)
    check(np.diff, x, append=sample((4, 1), dtype))
    check(np.diff, x, prepend=x[:, :1], append=0, axis=1)
    check(np.diff, sample((), dtype))
    check(np.diff, [1, 4, 9])
