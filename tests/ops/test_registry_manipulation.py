"""Manipulation ops: every calling convention through the registry equals NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from astcompiler.exc import Unsupported
from astcompiler.ops import REGISTRY
from .opcheck import DTYPES, FakeProxy, canonical, check, method, noncontiguous, sample

LAYOUTS = ["contiguous", "noncontiguous", "fortran"]


def make(shape, dtype, layout="contiguous", seed=0):
    x = sample(shape, dtype, seed)
    if layout == "noncontiguous":
        return noncontiguous(x)
    if layout == "fortran":
        return np.asfortranarray(x)
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_ravel_flatten(dtype, layout):
    x = make((3, 4), dtype, layout)
    for order in ("C", "F", "A", "K", "c", None):
        check(np.ravel, x, order) if order is not None else check(np.ravel, x)
        check(method("ravel"), x, order=order) if order else check(method("ravel"), x)
        check(method("flatten"), x, order) if order else check(method("flatten"), x)
    check(np.ravel, x, "Q")
    check(method("flatten"), x, order="Q")
    check(np.ravel, sample((), dtype))
    check(np.ravel, [[1, 2], [3, 4]])


def test_ravel_is_a_view_flatten_a_copy():
    x = np.arange(6.0).reshape(2, 3)
    assert np.shares_memory(REGISTRY["ravel"].impl(x), x)
    assert not np.shares_memory(REGISTRY["flatten"].impl(x), x)
    assert REGISTRY["ravel"].kind == "view" and REGISTRY["flatten"].kind == "extern"


@pytest.mark.parametrize("dtype", DTYPES)
def test_swapaxes(dtype):
    x = make((2, 3, 4), dtype, "noncontiguous")
    for fn in (np.swapaxes, method("swapaxes")):
        check(fn, x, 0, 2)
        check(fn, x, -1, 0)
        check(fn, x, 1, 1)
        check(fn, x, 0, 3)
        check(fn, x, 0, 1.0)
    check(np.swapaxes, x, axis1=0, axis2=1)
    assert canonical(np.swapaxes, x, -1, 0) == canonical(method("swapaxes"), x, 2, 0)


@pytest.mark.parametrize("call", [
    (0, 2), (-1, 0), ((0, 1), (2, 0)), ([0, 1], [1, 2]), (0, 3), ((0, 1), 0), ((0, 0), (1, 2)),
    ((), ()), (1.0, 0),
])
def test_moveaxis(call):
    x = sample((2, 3, 4))
    check(np.moveaxis, x, *call)
    check(np.moveaxis, x, source=call[0], destination=call[1])


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3, (0, 1), (0, -1), [1, 0], (0, 0), 3, -4, ()])
def test_expand_dims(axis):
    check(np.expand_dims, sample((2, 3)), axis)
    check(np.expand_dims, sample((), "int32"), 0)
    assert canonical(np.expand_dims, sample((2, 3)), -1)[1][1] == (2,)


@pytest.mark.parametrize("dtype", DTYPES)
def test_squeeze(dtype):
    x = make((1, 3, 1), dtype)
    for fn in (np.squeeze, method("squeeze")):
        for axis in (None, 0, 2, -1, (0, 2), (2, 0), 1, (0, 0), 3):
            check(fn, x, axis)
            check(fn, x, axis=axis)
        check(fn, x)
    check(np.squeeze, sample((), dtype))
    check(np.squeeze, sample((1, 1), dtype))


def test_squeeze_canonical():
    x = FakeProxy(sample((1, 3, 1)))
    assert canonical(np.squeeze, x, (2, 0)) == canonical(method("squeeze"), x, axis=(0, -1))
    assert canonical(np.squeeze, x) == canonical(method("squeeze"), x, None)


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_to(dtype):
    x = make((3, 1), dtype, "noncontiguous")
    check(np.broadcast_to, x, (2, 3, 4))
    check(np.broadcast_to, x, [3, 5])
    check(np.broadcast_to, x, shape=(3, 1))
    check(np.broadcast_to, x, (4,))
    check(np.broadcast_to, sample((), dtype), 5)
    check(np.broadcast_to, x, (-1, 1))
    out = REGISTRY["broadcast_to"].impl(x, (2, 3, 4))
    assert not out.flags.writeable


def test_broadcast_arrays():
    check(np.broadcast_arrays, sample((3, 1)), sample((4,), "int32"))
    check(np.broadcast_arrays, sample((3, 1)), 1.0)
    check(np.broadcast_arrays, sample((3,)), sample((4,)))
    assert REGISTRY["broadcast_arrays"].tuple_output


@pytest.mark.parametrize("fn", [np.atleast_1d, np.atleast_2d, np.atleast_3d])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast(fn, shape):
    check(fn, sample(shape))
    check(fn, 5)
    with pytest.raises(Unsupported):
        REGISTRY[fn.__name__].canonical((sample(shape), sample(shape)), {})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1), (1, 0), 2, (0, 0)])
def test_flip(dtype, axis):
    x = make((3, 4), dtype, "noncontiguous")
    check(np.flip, x, axis)
    check(np.flip, x, axis=axis)


def test_flip_edge_cases():
    check(np.flip, sample(()))
    check(np.flip, sample((0, 3)), 0)
    check(np.flip, [1, 2, 3])
    x = FakeProxy(sample((2, 3)))
    assert canonical(np.flip, x) == canonical(np.flip, x, (1, 0))


@pytest.mark.parametrize("fn", [np.fliplr, np.flipud])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_fliplr_flipud(fn, shape):
    check(fn, sample(shape, "int64"))


@pytest.mark.parametrize("call", [(), (1,), (2,), (3,), (-1,), (5,), (1, (1, 2)), (1, (0, 0)),
                                  (1, (0, 3)), (1, (0, 1, 2)), (1.5,), (0, (2, 0))])
def test_rot90(call):
    check(np.rot90, sample((2, 3, 4), "int32"), *call)


def test_rot90_keyword():
    check(np.rot90, sample((2, 3)), k=3, axes=[1, 0])
    assert canonical(np.rot90, sample((2, 3)), 5)[1][1:] == (1, (0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("call", [(1,), (-2,), (1, 0), (2, 1), (1, -1), ((1, 2), (0, 1)),
                                  ([1, -1], [1, 0]), (1, 2), (1, (0, 0)), (7,)])
def test_roll(dtype, call):
    check(np.roll, make((3, 4), dtype, "noncontiguous"), *call)


def test_roll_keyword_and_array_shift():
    check(np.roll, sample((5,)), shift=2, axis=0)
    check(np.roll, sample((5,)), np.int64(3))
    check(np.roll, sample((5,)), np.array(3))


@pytest.mark.parametrize("fn", [np.triu, np.tril])
@pytest.mark.parametrize("dtype", DTYPES)
def test_triu_tril(fn, dtype):
    x = make((4, 5), dtype, "noncontiguous")
    for k in (0, 1, -1, 10):
        check(fn, x, k)
        check(fn, x, k=k)
    check(fn, sample((2, 3, 3), dtype))
    check(fn, sample((3,), dtype))
    check(fn, x, 1.5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat(dtype):
    x = make((2, 3), dtype, "noncontiguous")
    for fn in (np.repeat, method("repeat")):
        check(fn, x, 2)
        check(fn, x, 2, 0)
        check(fn, x, 2, axis=-1)
        check(fn, x, [1, 2], axis=0)
        check(fn, x, (1, 0, 3), 1)
        check(fn, x, -1)
        check(fn, x, [1, 2])
        check(fn, x, 2, axis=2)
    check(np.repeat, 3, 4)


def test_repeat_with_array_counts_keeps_them_as_an_argument():
    counts = FakeProxy(np.ones(3, int))  # computed in the graph: a data-dependent length
    args, kwargs = REGISTRY["repeat"].canonical((FakeProxy(sample((3,))), counts), {})
    assert args[1] is counts and kwargs == {"axis": None}


@pytest.mark.parametrize("reps", [2, (2,), (2, 1), [1, 3], (2, 1, 2), 0, (), -1])
def test_tile(reps):
    check(np.tile, make((2, 3), "int32", "noncontiguous"), reps)
    check(np.tile, sample(()), reps)
    x = sample((2,))
    assert canonical(np.tile, x, 2) == canonical(np.tile, x, (2,)) == canonical(np.tile, x, [2])


@pytest.mark.parametrize("call", [
    ((1,), {}), ((((1, 2), (0, 1)),), {}), ((2,), {"mode": "edge"}), ((1,), {"mode": "reflect"}),
    ((1,), {"constant_values": 7}), ((1, "wrap"), {}), (([[1, 1], [2, 0]],), {"mode": "symmetric"}),
    ((1,), {"mode": "mean"}), ((1,), {"mode": "maximum", "stat_length": 2}),
    ((1,), {"mode": "linear_ramp", "end_values": (1, 2)}), ((-1,), {}), ((1,), {"mode": "bad"}),
])
def test_pad(call):
    check(np.pad, sample((3, 4), "float32"), *call[0], **call[1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_concatenate(dtype):
    a, b = make((2, 3), dtype, "noncontiguous"), sample((4, 3), dtype, 1)
    check(np.concatenate, [a, b])
    check(np.concatenate, (a, b), 0)
    check(np.concatenate, [a, b], axis=None)
    check(np.concatenate, [a, a.T], axis=-1)
    check(np.concatenate, [a, b], axis=1)
    check(np.concatenate, [a, b], axis=2)
    check(np.concatenate, [a, b], dtype=np.float64)
    check(np.concatenate, [a, b.astype(np.int8)])
    check(np.concatenate, [a])
    check(np.concatenate, [])
    check(np.concatenate, [sample((), dtype), sample((), dtype)])
    check(np.concatenate, [[1, 2], a[0]])


def test_concatenate_canonical():
    a, b = FakeProxy(sample((2, 3))), FakeProxy(sample((4, 3)))
    assert canonical(np.concatenate, [a, b]) == canonical(np.concatenate, (a, b), axis=-2)
    with pytest.raises(Unsupported):
        canonical(np.concatenate, [a, b], casting="unsafe")
    with pytest.raises(Unsupported):
        canonical(np.concatenate, [a, b], out=np.empty((6, 3)))
    with pytest.raises(TypeError):
        REGISTRY["concatenate"].canonical((), {"arrays": [a, b]})


@pytest.mark.parametrize("dtype", DTYPES)
def test_stack(dtype):
    a, b = make((2, 3), dtype, "noncontiguous"), sample((2, 3), dtype, 1)
    for axis in (0, 1, 2, -1, -3, 3):
        check(np.stack, [a, b], axis)
    check(np.stack, (a, b), axis=1, dtype=np.float32)
    check(np.stack, [a, sample((3, 2), dtype)])
    check(np.stack, [])
    check(np.stack, [sample((), dtype), sample((), dtype)])


@pytest.mark.parametrize("fn", [np.hstack, np.vstack, np.dstack, np.column_stack])
@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(2, 3), (2, 3)], [(), ()], [(2,), (3,)],
                                    [(2, 3, 1), (2, 3, 2)], [(2, 1), (2, 3)]])
def test_hvstack(fn, shapes):
    check(fn, [sample(s, "int64", i) for i, s in enumerate(shapes)])
    check(fn, tuple(sample(s, "float32", i) for i, s in enumerate(shapes)))
    check(fn, [])


def test_hvstack_dtype():
    check(np.hstack, [sample((2,)), sample((3,))], dtype=np.float32)
    check(np.vstack, [sample((2,)), sample((2,))], dtype=np.float32)
    with pytest.raises(Unsupported):
        REGISTRY["vstack"].canonical(([sample((2,))],), {"casting": "unsafe"})


@pytest.mark.parametrize("fn", [np.real, np.imag])
@pytest.mark.parametrize("dtype", DTYPES + ("complex128", "complex64"))
def test_real_imag(fn, dtype):
    check(fn, make((2, 3), dtype, "noncontiguous"))
    check(fn, sample((), dtype))
    check(fn, 1 + 2j)
    check(fn, [1.0, 2.0])


def test_real_imag_are_views():
    z = sample((3,), "complex128")
    assert np.shares_memory(REGISTRY["real"].impl(z), z)
    assert REGISTRY["real"].attribute == "real"


@pytest.mark.parametrize("dtype", DTYPES)
def test_diagonal(dtype):
    x = make((3, 4, 5), dtype, "noncontiguous")
    for fn in (np.diagonal, method("diagonal")):
        check(fn, x)
        check(fn, x, 1)
        check(fn, x, -1, 1, 2)
        check(fn, x, offset=2, axis1=2, axis2=0)
        check(fn, x, 0, 1, 1)
        check(fn, x, 0, 0, 3)
        check(fn, sample((3,), dtype))
        check(fn, x, 1.5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_diag(dtype):
    for shape in ((3,), (3, 4), (), (2, 2, 2), (0,)):
        for k in (0, 1, -2):
            check(np.diag, sample(shape, dtype), k)
    check(np.diag, [1, 2, 3])
    check(np.diag, sample((3,), dtype), k=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_trace(dtype):
    x = make((3, 4, 5), dtype, "noncontiguous")
    for fn in (np.trace, method("trace")):
        check(fn, x)
        check(fn, x, 1, 1, 2)
        check(fn, x, axis1=-1, axis2=0, dtype=np.float32)
        check(fn, sample((3, 3), dtype))
        check(fn, sample((3,), dtype))
        check(fn, x, 0, 0, 0)
    with pytest.raises(Unsupported):
        REGISTRY["trace"].canonical((FakeProxy(x),), {"out": np.empty(5)})


@pytest.mark.parametrize("indexing", ["xy", "ij", "zz"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    x, y, z = sample((3,)), sample((4,), "int32"), sample((2,), "float32")
    check(np.meshgrid, x, y, indexing=indexing, sparse=sparse)
    check(np.meshgrid, x, y, z, indexing=indexing, sparse=sparse)
    check(np.meshgrid, x, indexing=indexing)
    check(np.meshgrid, x, y, copy=False, indexing=indexing)
    check(np.meshgrid)
