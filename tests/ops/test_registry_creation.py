"""Creation ops: every calling convention through the registry equals NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from astcompiler.exc import Unsupported
from astcompiler.ops import REGISTRY
from .opcheck import DTYPES, FakeProxy, canonical, check, noncontiguous, sample


@pytest.mark.parametrize("fn", [np.zeros, np.ones, np.empty])
@pytest.mark.parametrize("call", [
    ((3,), {}), ((3, 4), {}), (((2, 3),), {}), (([2, 3],), {}), (((),), {}), ((0,), {}),
    ((np.int64(3),), {}), (((2, 3), np.float32), {}), (((2, 3),), {"dtype": "int32"}),
    ((4,), {"dtype": bool}), (((2, 3), "f8", "F"), {}), (((2, 3),), {"order": "C"}),
    ((3,), {"dtype": None}), ((4,), {"shape": 3}),
])
def test_filled(fn, call):
    args, kwargs = call
    check(fn, *args, values=fn is not np.empty, **kwargs)


@pytest.mark.parametrize("fn", [np.zeros, np.ones, np.empty])
@pytest.mark.parametrize("bad", [(-1,), (2.0,), ((2, "a"),), ((2, 3), "nodtype"),
                                 ((2,), float, "K"), ((2,), float, "X"), ((True,),)])
def test_filled_bad_arguments(fn, bad):
    check(fn, *bad)


def test_filled_canonical_forms_agree():
    assert canonical(np.zeros, 3) == canonical(np.zeros, (3,)) == canonical(np.zeros, [3], float)
    assert canonical(np.zeros, (2, 3), order="C") == canonical(np.zeros, shape=(2, 3))
    assert canonical(np.ones, 3) == ("ones", ((3,), np.dtype("float64")), {})
    assert canonical(np.zeros, 2, order="F")[2] == {"order": "F"}


def test_symbolic_sizes_are_kept():
    n = sympy.Symbol("s0", integer=True, positive=True)
    name, args, kwargs = canonical(np.zeros, (n, 3))
    assert args[0] == (n, 3)


def test_size_from_array_data_is_unsupported():
    with pytest.raises(Unsupported):
        REGISTRY["zeros"].canonical((FakeProxy(np.array(3)),), {})
    with pytest.raises(Unsupported):
        REGISTRY["arange"].canonical((FakeProxy(np.array(3)),), {})


@pytest.mark.parametrize("call", [
    ((3, 2.5), {}), (((2, 3), 7), {}), (((2, 3), True), {}), ((3, 1 + 2j), {}),
    ((3, 2), {"dtype": np.float32}), ((2, np.float32(1.5)), {}), ((2, np.int8(3)), {}),
    (((2, 3), 1.5, "F"), {}), (((2, 3), [1.0, 2.0, 3.0]), {}), ((3, np.inf), {}),
])
def test_full(call):
    check(np.full, *call[0], **call[1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_with_array_fill(dtype):
    check(np.full, (2, 3), sample((3,), dtype))
    check(np.full, (2, 3), sample((), dtype))


@pytest.mark.parametrize("fn", [np.zeros_like, np.ones_like, np.empty_like])
@pytest.mark.parametrize("dtype", DTYPES)
def test_like(fn, dtype):
    values = fn is not np.empty_like
    x = sample((3, 4), dtype)
    check(fn, x, values=values)
    check(fn, x, dtype=np.float32, values=values)
    check(fn, x, np.int64, values=values)
    check(fn, x, shape=(2, 5), values=values)
    check(fn, x, order="F", values=values)
    check(fn, noncontiguous(x), values=values)
    check(fn, np.asfortranarray(x), values=values)
    check(fn, sample((), dtype), values=values)
    check(fn, [[1, 2], [3, 4]], values=values)
    check(fn, x, order="X", values=values)


def test_like_resolves_dtype():
    x = FakeProxy(sample((2,), "int32"))
    assert canonical(np.zeros_like, x) == canonical(np.zeros_like, x, dtype=np.int32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_like(dtype):
    x = sample((3, 4), dtype)
    check(np.full_like, x, 7)
    check(np.full_like, x, 0.5)
    check(np.full_like, x, 2.5, dtype=np.float64)
    check(np.full_like, x, sample((4,), dtype))
    check(np.full_like, x, 1, shape=(5,))


@pytest.mark.parametrize("call", [
    ((5,), {}), ((2, 7), {}), ((2, 11, 3), {}), ((0.0, 1.0, 0.25), {}), ((5,), {"dtype": "f4"}),
    ((10, 0, -2), {}), ((3, 3), {}), ((np.float32(1.0), 4), {}), ((np.int32(4),), {}),
    ((), {"stop": 5}), ((), {"start": 1, "stop": 5}), ((1,), {"stop": 6, "step": 2}),
    ((5,), {"dtype": bool}), ((0, 5, 0), {}), ((), {}), ((0.5,), {}),
    ((1, 2, 3, 4), {}),
])
def test_arange(call):
    check(np.arange, *call[0], **call[1])


def test_arange_canonical():
    assert canonical(np.arange, 5) == canonical(np.arange, 0, 5) == canonical(np.arange, 0, 5, 1)
    assert canonical(np.arange, stop=5) == canonical(np.arange, 5)


@pytest.mark.parametrize("call", [
    ((0, 1), {}), ((0, 1, 5), {}), ((0, 1), {"num": 7, "endpoint": False}), ((1, 0, 4), {}),
    ((0, 10, 5), {"dtype": int}), ((0, 1, 0), {}), ((0, 1, 1), {}), ((0, 1, -1), {}),
    ((0, 1, 2.0), {}), ((0, 1, 3), {"axis": 1}), ((0, 1, 3), {"retstep": False}),
    ((np.zeros(2), np.ones(2), 4), {}), ((np.zeros(2), np.ones(2), 4), {"axis": -1}),
    ((np.zeros(2), 1.0, 3), {"axis": 1}), ((np.float32(0), np.float32(1), 3), {}),
    ((np.zeros((2, 3), "f4"), 2, 3), {"axis": 2}),
])
def test_linspace(call):
    check(np.linspace, *call[0], **call[1])


def test_linspace_retstep_is_unsupported():
    with pytest.raises(Unsupported):
        REGISTRY["linspace"].canonical((0, 1, 5), {"retstep": True})


@pytest.mark.parametrize("fn", [np.logspace, np.geomspace])
@pytest.mark.parametrize("call", [((1, 3), {}), ((1, 3, 4), {}), ((1, 3, 4), {"endpoint": False}),
                                  ((1, 3, 4), {"dtype": np.float32}), ((np.ones(2), 4, 3), {}),
                                  ((np.ones(2), 4, 3), {"axis": 1}), ((1, 3, -2), {})])
def test_log_geomspace(fn, call):
    check(fn, *call[0], **call[1])


def test_logspace_base():
    check(np.logspace, 0, 3, 4, base=2.0)
    check(np.logspace, 0, 3, 4, True, 2)


@pytest.mark.parametrize("call", [
    ((3,), {}), ((3, 4), {}), ((3,), {"k": 1}), ((3, 5, -1), {}), ((3,), {"dtype": int}),
    ((2,), {"dtype": bool}), ((3, None, 0, "f4", "F"), {}), ((0,), {}), ((-1,), {}),
    ((3,), {"k": 1.5}), ((2.0,), {}), ((3,), {"M": 2}), ((3,), {"order": "Z"}),
])
def test_eye(call):
    check(np.eye, *call[0], **call[1])


def test_eye_canonical():
    assert canonical(np.eye, 3) == canonical(np.eye, 3, 3, 0, float)


@pytest.mark.parametrize("call", [((3,), {}), ((2, int), {}), ((2,), {"dtype": "f4"}),
                                  ((0,), {}), ((-2,), {}), ((2.5,), {})])
def test_identity(call):
    check(np.identity, *call[0], **call[1])


@pytest.mark.parametrize("call", [((3,), {}), ((3, 4), {}), ((3, 4, 1), {}), ((3,), {"k": -1}),
                                  ((2,), {"dtype": int}), ((3, None, 0, bool), {})])
def test_tri(call):
    check(np.tri, *call[0], **call[1])


@pytest.mark.parametrize("data", [
    [1, 2, 3], [1.0, 2, 3], [[1, 2], [3, 4]], [True, False], [], [[]], 5, 2.5, [1, 2.5j],
    (1, 2, 3), [(1, 2), [3, 4]], [np.float32(1), np.float32(2)], [np.int8(1), 300],
    [[1, 2], [3]],
])
def test_array_of_constants(data):
    check(np.array, data)
    check(np.asarray, data)


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_of_arrays(dtype):
    x = sample((3,), dtype)
    check(np.array, x)
    check(np.array, x, dtype=np.float64)
    check(np.array, [x, x])
    check(np.array, [x[0], x[1]])
    check(np.array, x, ndmin=3)
    check(np.array, noncontiguous(sample((2, 3), dtype)), order="F")
    check(np.asarray, x)
    check(np.asarray, x, dtype=np.int64)
    check(np.asarray, [x, x], np.float32)
    check(np.ascontiguousarray, noncontiguous(sample((2, 3), dtype)))
    check(np.ascontiguousarray, x, dtype=np.float32)


def test_array_keywords():
    check(np.array, [1, 2], dtype=np.int8)
    check(np.array, [1, 2], ndmin=2)
    check(np.array, [1, 2], None, order="F")
    check(np.array, [[1, 2]], order="X")
    check(np.asarray, [1, 2], copy=True)
    check(np.asarray, [1, 2], "f4", "C")
    with pytest.raises(Unsupported):
        REGISTRY["array"].canonical(([1, 2],), {"copy": False})


def test_array_returns_a_fresh_copy_each_call():
    op = REGISTRY["array"]
    args, kwargs = op.canonical(([1, 2, 3],), {})
    first, second = op.impl(*args, **kwargs), op.impl(*args, **kwargs)
    first[0] = 99
    assert second[0] == 1
    x = np.arange(3)
    assert op.impl(x) is not x and not np.shares_memory(op.impl(x), x)


def test_asarray_aliases_its_input():
    op = REGISTRY["asarray"]
    x = np.arange(3)
    args, kwargs = op.canonical((x,), {})
    assert op.impl(*args, **kwargs) is x
    assert op.kind == "view"


def test_array_canonical_data_is_hashable():
    name, args, kwargs = canonical(np.array, [[1, 2], [3, 4]])
    assert args == (((1, 2), (3, 4)),)
    hash(args)


def test_constant_copies():
    op = REGISTRY["constant"]
    value = np.arange(4.0)
    args, kwargs = op.canonical((value,), {})
    out = op.impl(*args, **kwargs)
    assert out is not value and np.array_equal(out, value) and out.dtype == value.dtype
    out[0] = 5
    assert value[0] == 0
    assert type(op.impl(np.float32(2))) is np.float32


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full", "arange", "linspace", "eye",
                                  "identity", "zeros_like", "ones_like", "empty_like",
                                  "full_like", "array", "constant", "logspace", "geomspace",
                                  "tri"])
def test_creation_kinds(name):
    assert REGISTRY[name].kind == "creation"
    assert not REGISTRY[name].pure


def test_unsupported_keywords():
    with pytest.raises(Unsupported):
        REGISTRY["zeros"].canonical((3,), {"like": np.zeros(1)})
    with pytest.raises(ValueError):
        REGISTRY["zeros"].canonical((3,), {"device": "gpu"})
    check(np.zeros, 3, device="cpu")
