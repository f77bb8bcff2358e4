"""Contractions (dot, matmul, einsum, ...): registry vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from astcompiler.exc import Unsupported
from astcompiler.ops import REGISTRY
from .opcheck import DTYPES, FakeProxy, canonical, check, method, noncontiguous, sample

SHAPE_PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
               ((5, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((2, 3), (2, 3)), ((), (3,)),
               ((0, 3), (3, 2)), ((2, 0), (0, 3))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPE_PAIRS)
def test_dot_matmul(dtype, shapes):
    a, b = sample(shapes[0], dtype), noncontiguous(sample(shapes[1], dtype, 1))
    check(np.dot, a, b)
    check(method("dot"), a, b)
    check(np.matmul, a, b)
    check(np.inner, a, b)
    check(np.outer, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mixed_dtypes_and_scalars(dtype):
    a = sample((2, 3), dtype)
    check(np.dot, a, 2.5)
    check(np.dot, a, sample((3,), "float32"))
    check(np.matmul, a, sample((3, 2), "int8"))
    check(np.matmul, a, sample((3, 2), "float64"), dtype=np.float64)
    check(np.matmul, [[1, 2]], a[:, :2].T if a.shape[1] >= 2 else a)


def test_matmul_is_the_at_operator_op():
    op = REGISTRY["matmul"]
    assert REGISTRY.lookup_callable(np.matmul) is op
    a, b = sample((2, 3)), sample((3, 4))
    args, kwargs = op.canonical((a, b), {})
    np.testing.assert_array_equal(op.impl(*args, **kwargs), a @ b)
    with pytest.raises(ValueError):
        op.canonical((FakeProxy(np.float64(1.0)), FakeProxy(b)), {})
    with pytest.raises(Unsupported):
        op.canonical((a, b), {"axes": [(0, 1), (0, 1), (0, 1)]})


def test_linalg_matmul_alias():
    if np.linalg.matmul is not np.matmul:
        assert REGISTRY.lookup_callable(np.linalg.matmul) is REGISTRY["matmul"]
        check(np.linalg.matmul, sample((2, 3)), sample((3, 2)))


@pytest.mark.parametrize("dtype", DTYPES + ("complex128",))
def test_vdot(dtype):
    check(np.vdot, sample((2, 3), dtype), sample((2, 3), dtype, 1))
    check(np.vdot, sample((6,), dtype), sample((2, 3), dtype, 1))
    check(np.vdot, sample((2,), dtype), sample((3,), dtype))


def test_out_is_unsupported():
    a = FakeProxy(sample((2, 2)))
    for name in ("dot", "outer"):
        with pytest.raises(Unsupported):
            REGISTRY[name].canonical((a, a), {"out": np.empty((2, 2))})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axes", [2, 1, 0, ((1,), (0,)), ([1, 2], [0, 1]), (1, 0), (-1, 0),
                                  ((2, 1), (1, 0)), 3, ((0,), (0,))])
def test_tensordot(dtype, axes):
    a, b = sample((2, 3, 4), dtype), sample((3, 4, 5), dtype, 1)
    check(np.tensordot, a, b, axes)
    check(np.tensordot, a, b, axes=axes)


def test_tensordot_canonical():
    a, b = FakeProxy(sample((2, 3))), FakeProxy(sample((3, 2)))
    assert canonical(np.tensordot, a, b, (1, 0)) == canonical(np.tensordot, a, b, ([1], [0]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]), ("...ij,...jk", [(2, 2, 3), (3, 1)]),
    ("ij->", [(2, 3)]), (" i j , j k -> i k ", [(2, 3), (3, 4)]), ("ij,jk->ik", [(2, 3), (4, 4)]),
    ("ijk", [(2, 3)]),
])
def test_einsum(dtype, spec):
    subscripts, shapes = spec
    ops = [sample(s, dtype, i) for i, s in enumerate(shapes)]
    check(np.einsum, subscripts, *ops)
    if dtype != "bool":
        check(np.einsum, subscripts, *ops, optimize=True)
        check(np.einsum, subscripts, *ops, dtype=np.float64, casting="unsafe")


def test_einsum_unsupported_forms():
    a = sample((2, 3))
    with pytest.raises(Unsupported):
        REGISTRY["einsum"].canonical((a, [0, 1]), {})
    check(np.einsum, "ij", a, bogus=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_kron(dtype):
    check(np.kron, sample((2, 3), dtype), sample((2, 2), dtype, 1))
    check(np.kron, sample((2,), dtype), sample((3,), dtype, 1))
    check(np.kron, sample((), dtype), sample((3,), dtype, 1))


@pytest.mark.parametrize("dtype", ("float32", "float64", "int32", "int64"))
def test_cross(dtype):
    a, b = sample((4, 3), dtype), sample((4, 3), dtype, 1)
    check(np.cross, a, b)
    check(np.cross, a.T, b.T, axisa=0, axisb=0, axisc=0)
    check(np.cross, a.T, b.T, axis=0)
    check(np.cross, a, b[0])
    check(np.cross, a, b, axisa=2)
    check(np.cross, sample((), dtype), b)


@pytest.mark.parametrize("name", ["vecdot", "matvec", "vecmat"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_new_gufuncs(name, dtype):
    fn = getattr(np, name, None)
    if not isinstance(fn, np.ufunc):
        pytest.skip(f"np.{name} needs a newer NumPy")
    m, v = sample((2, 3, 4), dtype), sample((3 if name == "vecmat" else 4,), dtype, 1)
    if name == "vecdot":
        check(fn, m, sample((4,), dtype, 1))
    elif name == "matvec":
        check(fn, m, v)
    else:
        check(fn, v, m)
    check(fn, m, sample((5,), dtype))
