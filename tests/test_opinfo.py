"""The op-info table: every registered op, written the way users write it, run through every
backend and dtype, compiled against plain NumPy.

Each ``OpInfo`` is a small user function (one lambda per line: the rewriter finds a lambda's
source by its line) and a sample generator. For each (backend, dtype) every sample runs through a
fresh ``ac.compile(fn, backend=..., fullgraph=True)`` (a fresh object per sample, so the recompile
limit never turns a case into a silent eager run) and must match NumPy:

* the same exception class when NumPy raises (``fullgraph`` still lets user errors through);
* otherwise the same Python type (NumPy scalar vs 0-d array), dtype and shape, values within
  float rounding, and the same contents of the inputs afterwards (mutations);
* the op must appear in the captured graph (so a case never passes by running eagerly), unless
  the entry says it is a known graph break (``expect_break``): then only results are compared.

The numba backend compiles kernels, so by default it runs a quick subset (dtypes float64/int64,
the first sample marked ``quick``); the full numba matrix is marked ``slow``.
"""

from __future__ import annotations

import operator
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.ops import REGISTRY
from astcompiler.ops.pointwise import UFUNC_NAMES

from .helpers import BACKENDS
from .ops.opcheck import clone, noncontiguous, sample

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(-1), 1/0 in samples

DTYPES = ("float32", "float64", "int32", "int64", "bool")
FLOATS = ("float32", "float64")
NUMERIC = ("float32", "float64", "int32", "int64")
QUICK_NUMBA_DTYPES = ("float64", "int64")


# ================================================================ samples

@dataclass(frozen=True)
class Sample:
    args: tuple
    desc: str
    quick: bool = False  # part of the quick numba subset


def arr(shape: tuple, dtype: Any, seed: int = 0, **kw: Any) -> np.ndarray:
    return sample(shape, np.dtype(dtype).name, seed, **kw)


def s_unary(dt) -> list[Sample]:
    return [Sample((arr((3, 4), dt),), "2-d", quick=True),
            Sample((arr((), dt),), "0-d"),
            Sample((arr((0, 3), dt),), "empty"),
            Sample((noncontiguous(arr((3, 4), dt, 1)),), "non-contiguous", quick=True),
            Sample((arr((2, 3, 4), dt, 2),), "3-d"),
            Sample((arr((5,), dt, 3),), "1-d")]


def s_unary_nd(dt) -> list[Sample]:
    """Inputs of at least one dimension (0-d is tested where NumPy accepts it)."""
    return [s for s in s_unary(dt) if s.desc != "0-d"]


def s_matrix(dt) -> list[Sample]:
    return [Sample((arr((3, 4), dt),), "3x4", quick=True),
            Sample((noncontiguous(arr((4, 3), dt, 1)),), "non-contiguous 4x3"),
            Sample((arr((2, 3, 4), dt, 2),), "batched"),
            Sample((arr((0, 3), dt),), "empty")]


def s_vector(dt) -> list[Sample]:
    return [Sample((arr((7,), dt),), "1-d", quick=True),
            Sample((noncontiguous(arr((6,), dt, 1)),), "non-contiguous"),
            Sample((arr((0,), dt),), "empty")]


def s_binary(dt) -> list[Sample]:
    return [Sample((arr((3, 4), dt), arr((3, 4), dt, 1)), "same shape", quick=True),
            Sample((arr((3, 4), dt), arr((4,), dt, 1)), "broadcast row", quick=True),
            Sample((arr((3, 1), dt), arr((1, 4), dt, 1)), "outer broadcast"),
            Sample((arr((), dt), arr((3,), dt, 1)), "0-d with 1-d"),
            Sample((arr((), dt), arr((), dt, 1)), "0-d with 0-d"),
            Sample((arr((0, 3), dt), arr((3,), dt, 1)), "empty"),
            Sample((noncontiguous(arr((3, 4), dt)), noncontiguous(arr((3, 4), dt, 1))),
                   "non-contiguous")]


def s_same_shape_pair(dt) -> list[Sample]:
    return [Sample((arr((3, 4), dt), arr((3, 4), dt, 1)), "2-d", quick=True),
            Sample((arr((5,), dt), noncontiguous(arr((5,), dt, 1))), "1-d non-contiguous"),
            Sample((arr((), dt), arr((), dt, 1)), "0-d")]


def s_matmul(dt) -> list[Sample]:
    return [Sample((arr((3, 4), dt), arr((4, 2), dt, 1)), "matrix-matrix", quick=True),
            Sample((arr((3, 4), dt), arr((4,), dt, 1)), "matrix-vector"),
            Sample((arr((4,), dt), arr((4,), dt, 1)), "vector-vector"),
            Sample((arr((2, 3, 4), dt), arr((4, 5), dt, 1)), "batched"),
            Sample((noncontiguous(arr((3, 4), dt)), noncontiguous(arr((4, 2), dt, 1))),
                   "non-contiguous"),
            Sample((arr((0, 4), dt), arr((4, 2), dt, 1)), "empty"),
            Sample((arr((3, 4), dt), arr((3, 2), dt, 1)), "mismatched (ValueError)")]


def s_square(dt) -> list[Sample]:
    def spd(shape, seed):
        m = sample(shape, "float64", seed)
        n = shape[-1]
        a = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
        return np.round(a).astype(dt) if np.dtype(dt).kind in "iu" else a.astype(dt)
    return [Sample((spd((3, 3), 0),), "3x3", quick=True),
            Sample((spd((2, 4, 4), 1),), "batched"),
            Sample((noncontiguous(spd((3, 3), 2)),), "non-contiguous")]


def s_square_rhs(dt) -> list[Sample]:
    return [Sample(s.args + (arr(s.args[0].shape[:-1], dt, 5),), s.desc + " with vector rhs",
                   s.quick) for s in s_square(dt)[:1]] + \
        [Sample(s.args + (arr(s.args[0].shape[:-1] + (2,), dt, 5),), s.desc + " with matrix rhs")
         for s in s_square(dt)]


def s_sorted_and_values(dt) -> list[Sample]:
    return [Sample((np.sort(arr((8,), dt)), arr((3, 2), dt, 1)), "values 2-d", quick=True),
            Sample((np.sort(arr((8,), dt)), arr((), dt, 1)), "value 0-d")]


def s_shape(dt) -> list[Sample]:
    return [Sample((arr((3, 4), dt),), "2-d", quick=True),
            Sample((noncontiguous(arr((3, 4), dt, 1)),), "non-contiguous")]


def s_cond(dt) -> list[Sample]:
    return [Sample((arr((3, 4), "bool"), arr((3, 4), dt), arr((4,), dt, 1)), "broadcast",
                   quick=True),
            Sample((arr((), "bool"), arr((), dt), arr((), dt, 1)), "0-d")]


def s_bool_mask(dt) -> list[Sample]:
    return [Sample((arr((3, 4), dt), arr((3, 4), "bool", 1)), "2-d mask", quick=True),
            Sample((noncontiguous(arr((3, 4), dt)), arr((3, 4), "bool", 2)), "non-contiguous")]


def s_indices(dt) -> list[Sample]:
    return [Sample((arr((3, 4), dt), np.array([[0, 2], [1, 3]])), "2-d index", quick=True),
            Sample((noncontiguous(arr((3, 4), dt)), np.array([0, 3, 1])), "non-contiguous")]


def s_sequence(dt) -> list[Sample]:
    return [Sample((arr((2, 3), dt), arr((2, 3), dt, 1)), "2-d pair", quick=True),
            Sample((arr((3,), dt), noncontiguous(arr((3,), dt, 1))), "1-d pair"),
            Sample((arr((0, 3), dt), arr((0, 3), dt, 1)), "empty")]


def s_scalar_arg(dt) -> list[Sample]:
    """A Python int argument next to an array (sizes, offsets)."""
    return [Sample((arr((3, 4), dt), 3), "n=3", quick=True),
            Sample((noncontiguous(arr((3, 4), dt)), 0), "n=0")]


def s_none(dt) -> list[Sample]:
    """Creation ops whose only input is a size."""
    return [Sample((4,), "n=4", quick=True), Sample((0,), "n=0")]


# ================================================================ the table

@dataclass
class OpInfo:
    name: str                          # test id; also the op expected in the graph
    fn: Callable
    samples: Callable[[Any], list[Sample]] = s_unary
    dtypes: tuple = DTYPES
    op: str | None = None              # op name in the graph when it differs from ``name``
    expect_break: str | None = None    # why capture breaks the graph (results still compared)
    xfail: str | None = None           # a known gap outside the registry (not strict)
    rtol: float | None = None
    values: bool = True                # False: compare type/dtype/shape only (np.empty)
    numba: bool = True                 # part of the quick numba subset

    @property
    def graph_op(self) -> str:
        return self.op or self.name


def _unary(ufunc: np.ufunc) -> Callable:
    def fn(x):
        return ufunc(x)
    return fn


def _binary(ufunc: np.ufunc) -> Callable:
    def fn(x, y):
        return ufunc(x, y)
    return fn


def set_first(x):
    x[0] = 1
    return x


def set_negative_to_zero(x):
    x[x < 0] = 0
    return x


def sort_in_place(x):
    x.sort(axis=0)
    return x


def eigh_unpacked(a):
    w, v = np.linalg.eigh(a)
    return w, np.abs(v)


def ufunc_infos() -> list[OpInfo]:
    infos = []
    for name in UFUNC_NAMES:
        ufunc = getattr(np, name)
        if ufunc.nin == 1:
            infos.append(OpInfo(name, _unary(ufunc), s_unary))
        else:
            infos.append(OpInfo(name, _binary(ufunc), s_binary))
    return infos


OPERATORS = [
    OpInfo("op +", lambda x, y: x + y, s_binary, op="add"),
    OpInfo("op -", lambda x, y: x - y, s_binary, op="subtract"),
    OpInfo("op *", lambda x, y: x * y, s_binary, op="multiply"),
    OpInfo("op /", lambda x, y: x / y, s_binary, op="divide"),
    OpInfo("op //", lambda x, y: x // y, s_binary, op="floor_divide"),
    OpInfo("op %", lambda x, y: x % y, s_binary, op="remainder"),
    OpInfo("op **", lambda x, y: x ** y, s_binary, op="power"),
    OpInfo("op &", lambda x, y: x & y, s_binary, op="bitwise_and"),
    OpInfo("op <", lambda x, y: x < y, s_binary, op="less"),
    OpInfo("op ==", lambda x, y: x == y, s_binary, op="equal"),
    OpInfo("op unary -", lambda x: -x, s_unary, op="negative"),
    OpInfo("op ~", lambda x: ~x, s_unary, op="invert"),
    OpInfo("op abs()", lambda x: abs(x), s_unary, op="absolute"),
    OpInfo("op scalar *", lambda x: 2.5 * x + 1, s_unary, op="multiply"),
    OpInfo("op @", lambda x, y: x @ y, s_matmul, op="matmul"),
    OpInfo("op +=", lambda x, y: operator.iadd(x.copy(), y), s_binary, op="add"),
]

POINTWISE_EXTRAS = [
    OpInfo("where", lambda c, x, y: np.where(c, x, y), s_cond),
    OpInfo("clip", lambda x: np.clip(x, -1, 2), s_unary),
    OpInfo("clip method", lambda x: x.clip(min=0), s_unary, op="clip"),
    OpInfo("round", lambda x: np.round(x, 1), s_unary, dtypes=NUMERIC),
    OpInfo("astype", lambda x: x.astype(np.float32), s_unary, op="astype"),
    OpInfo("copy", lambda x: np.copy(x), s_unary),
    OpInfo("copy method", lambda x: x.copy(), s_unary, op="copy"),
]

REDUCTIONS = [
    OpInfo("sum", lambda x: np.sum(x), s_unary),
    OpInfo("sum axis", lambda x: x.sum(axis=-1, keepdims=True), s_unary_nd, op="sum"),
    OpInfo("sum dtype", lambda x: np.sum(x, axis=0, dtype=np.float64), s_unary_nd, op="sum"),
    OpInfo("prod", lambda x: np.prod(x, axis=0), s_unary_nd),
    OpInfo("mean", lambda x: x.mean(), s_unary),
    OpInfo("mean axis", lambda x: np.mean(x, axis=(0, -1)), s_matrix, op="mean"),
    OpInfo("max", lambda x: np.max(x, axis=0), s_unary_nd),
    OpInfo("min", lambda x: x.min(), s_unary_nd),
    OpInfo("argmax", lambda x: np.argmax(x, axis=-1), s_unary_nd),
    OpInfo("argmin", lambda x: x.argmin(), s_unary_nd),
    OpInfo("any", lambda x: np.any(x, axis=0), s_unary_nd),
    OpInfo("all", lambda x: x.all(), s_unary),
    OpInfo("var", lambda x: np.var(x, axis=0, ddof=1), s_unary_nd, dtypes=NUMERIC),
    OpInfo("std", lambda x: x.std(), s_unary, dtypes=NUMERIC),
]

INDEXING = [
    OpInfo("getitem basic", lambda x: x[1:, ::2], s_matrix, op="getitem"),
    OpInfo("getitem int", lambda x: x[0], s_unary_nd, op="getitem"),
    OpInfo("getitem mask", lambda x, m: x[m], s_bool_mask, op="getitem"),
    OpInfo("getitem fancy", lambda x, i: x[i], s_indices, op="getitem"),
    OpInfo("setitem", set_first, s_unary_nd),
    OpInfo("setitem mask", set_negative_to_zero, s_unary, op="setitem"),
    OpInfo("reshape", lambda x: x.reshape(-1), s_unary),
    OpInfo("reshape np", lambda x: np.reshape(x, (x.shape[0], -1)), s_unary_nd, op="reshape"),
    OpInfo("transpose", lambda x: x.T, s_unary),
    OpInfo("transpose np", lambda x: np.transpose(x), s_unary, op="transpose"),
    OpInfo("take", lambda x, i: np.take(x, i), s_indices),
    OpInfo("take axis", lambda x, i: x.take(i, axis=-1), s_indices, op="take"),
    OpInfo("take_along_axis", lambda x: np.take_along_axis(x, np.argsort(x, axis=0), axis=0),
           s_unary_nd),
]

CREATION = [
    OpInfo("zeros", lambda x: np.zeros(x.shape) + x, s_unary, numba=True),
    OpInfo("zeros n", lambda n: np.zeros((n, 3), np.int32), s_none, dtypes=("int64",),
           op="zeros"),
    OpInfo("ones", lambda x: np.ones((2,) + x.shape, dtype=x.dtype), s_unary),
    OpInfo("empty", lambda x: np.empty(x.shape, x.dtype), s_unary, values=False),
    OpInfo("full", lambda x: np.full(x.shape, 7, dtype=x.dtype), s_unary),
    OpInfo("full array fill", lambda x: np.full((2,) + x.shape, x), s_unary, op="full"),
    OpInfo("zeros_like", lambda x: np.zeros_like(x), s_unary),
    OpInfo("ones_like", lambda x: np.ones_like(x, dtype=np.float32), s_unary),
    OpInfo("empty_like", lambda x: np.empty_like(x), s_unary, values=False),
    OpInfo("full_like", lambda x: np.full_like(x, 2), s_unary),
    OpInfo("arange", lambda x: np.arange(x.shape[0]) * x[0], s_unary_nd),
    OpInfo("arange float", lambda x: x + np.arange(0.0, 1.0, 0.25)[0], s_unary, op="arange"),
    OpInfo("linspace", lambda x: np.linspace(0, 1, x.shape[-1]) * x, s_unary_nd),
    OpInfo("logspace", lambda x: np.logspace(0, 2, x.shape[-1]) + x, s_unary_nd),
    OpInfo("geomspace", lambda x: np.geomspace(1, 8, x.shape[-1]) + x, s_unary_nd),
    OpInfo("eye", lambda x: np.eye(x.shape[-1], dtype=x.dtype) * x, s_matrix),
    OpInfo("identity", lambda x: np.identity(x.shape[-1]) + x, s_matrix),
    OpInfo("tri", lambda x: np.tri(x.shape[-2], x.shape[-1]) * x, s_matrix),
    OpInfo("array", lambda x: np.array([1.0, 2.0, 3.0, 4.0]) * x, s_matrix),
    OpInfo("array of arrays", lambda x: np.array([x, x + x]), s_unary, op="array"),
    # (a conversion: np.asarray of the same dtype is x itself, no node)
    OpInfo("asarray", lambda x: np.asarray(x, dtype=np.complex128) + 1, s_unary),
    OpInfo("ascontiguousarray", lambda x: np.ascontiguousarray(x), s_unary),
    OpInfo("constant", lambda x: np.asarray([1.0, 2.0, 3.0, 4.0]) * x, s_matrix),
]

MANIPULATION = [
    OpInfo("ravel", lambda x: np.ravel(x), s_unary),
    OpInfo("ravel method F", lambda x: x.ravel(order="F"), s_unary, op="ravel"),
    OpInfo("flatten", lambda x: x.flatten(), s_unary),
    OpInfo("swapaxes", lambda x: np.swapaxes(x, 0, -1), s_unary_nd),
    OpInfo("swapaxes method", lambda x: x.swapaxes(-1, 0), s_unary_nd, op="swapaxes"),
    OpInfo("moveaxis", lambda x: np.moveaxis(x, 0, -1), s_unary_nd),
    OpInfo("expand_dims", lambda x: np.expand_dims(x, (0, -1)), s_unary),
    OpInfo("squeeze", lambda x: np.squeeze(np.expand_dims(x, 1), axis=1), s_unary_nd),
    OpInfo("squeeze method", lambda x: x[:1].squeeze(), s_unary_nd, op="squeeze"),
    OpInfo("broadcast_to", lambda x: np.broadcast_to(x, (2,) + x.shape), s_unary),
    OpInfo("broadcast_arrays", lambda x, y: np.broadcast_arrays(x, y), s_binary),
    OpInfo("atleast_1d", lambda x: np.atleast_1d(x), s_unary),
    OpInfo("atleast_2d", lambda x: np.atleast_2d(x), s_unary),
    OpInfo("atleast_3d", lambda x: np.atleast_3d(x), s_unary),
    OpInfo("flip", lambda x: np.flip(x), s_unary),
    OpInfo("flip axis", lambda x: np.flip(x, axis=-1), s_unary_nd, op="flip"),
    OpInfo("fliplr", lambda x: np.fliplr(x), s_matrix),
    OpInfo("flipud", lambda x: np.flipud(x), s_unary_nd),
    OpInfo("rot90", lambda x: np.rot90(x), s_matrix),
    OpInfo("roll", lambda x: np.roll(x, 2, axis=-1), s_unary_nd),
    OpInfo("roll flat", lambda x: np.roll(x, -1), s_unary, op="roll"),
    OpInfo("sliding_window_view",
           lambda x: np.lib.stride_tricks.sliding_window_view(x, 2, axis=-1), s_unary_nd),
    OpInfo("triu", lambda x: np.triu(x, 1), s_matrix),
    OpInfo("tril", lambda x: np.tril(x), s_matrix),
    OpInfo("repeat", lambda x: np.repeat(x, 2, axis=0), s_unary_nd),
    OpInfo("repeat method", lambda x: x.repeat(3), s_unary, op="repeat"),
    OpInfo("tile", lambda x: np.tile(x, (2, 1)), s_unary),
    OpInfo("pad", lambda x: np.pad(x, 1), s_unary_nd),
    OpInfo("pad edge", lambda x: np.pad(x, ((1, 0), (0, 2)), mode="edge"), s_matrix, op="pad"),
    OpInfo("concatenate", lambda x, y: np.concatenate([x, y]), s_sequence),
    OpInfo("concatenate axis", lambda x, y: np.concatenate((x, y), axis=-1), s_sequence,
           op="concatenate"),
    OpInfo("concatenate flat", lambda x, y: np.concatenate([x, y], axis=None), s_binary,
           op="concatenate"),
    OpInfo("stack", lambda x, y: np.stack([x, y], axis=-1), s_sequence),
    OpInfo("hstack", lambda x, y: np.hstack([x, y]), s_sequence),
    OpInfo("vstack", lambda x, y: np.vstack((x, y)), s_sequence),
    OpInfo("dstack", lambda x, y: np.dstack([x, y]), s_sequence),
    OpInfo("column_stack", lambda x, y: np.column_stack([x, y]), s_sequence),
    OpInfo("real", lambda x: np.real(x), s_unary),
    OpInfo("real attribute", lambda x: x.real + 0, s_unary, op="real"),
    OpInfo("imag", lambda x: np.imag(x) + x, s_unary),
    OpInfo("diagonal", lambda x: np.diagonal(x), s_matrix),
    OpInfo("diagonal method", lambda x: x.diagonal(1), s_matrix, op="diagonal"),
    OpInfo("diag", lambda x: np.diag(x), s_vector),
    OpInfo("diag of matrix", lambda x: np.diag(x[0], k=-1), s_matrix, op="diag"),
    OpInfo("trace", lambda x: np.trace(x), s_matrix),
    OpInfo("trace method", lambda x: x.trace(offset=1), s_matrix, op="trace"),
    OpInfo("meshgrid", lambda x, y: np.meshgrid(x, y), s_sequence),
    OpInfo("meshgrid ij", lambda x, y: np.meshgrid(x, y, indexing="ij", sparse=True), s_sequence,
           op="meshgrid"),
]

SORTING_SCANS = [
    OpInfo("sort", lambda x: np.sort(x), s_unary_nd),
    OpInfo("sort flat", lambda x: np.sort(x, axis=None), s_unary, op="sort"),
    OpInfo("sort in place", sort_in_place, s_unary_nd, op="sort_"),
    OpInfo("argsort", lambda x: np.argsort(x, axis=0, kind="stable"), s_unary_nd),
    OpInfo("argsort method", lambda x: x.argsort(), s_unary_nd, op="argsort"),
    OpInfo("partition", lambda x: np.partition(x, 0, axis=-1), s_unary_nd),
    OpInfo("argpartition", lambda x: x.argpartition(0), s_unary_nd),
    OpInfo("searchsorted", lambda a, v: np.searchsorted(a, v), s_sorted_and_values,
           dtypes=NUMERIC),
    OpInfo("searchsorted method", lambda a, v: a.searchsorted(v, side="right"),
           s_sorted_and_values, dtypes=NUMERIC, op="searchsorted"),
    OpInfo("cumsum", lambda x: np.cumsum(x), s_unary),
    OpInfo("cumsum axis", lambda x: x.cumsum(axis=-1), s_unary_nd, op="cumsum"),
    OpInfo("cumprod", lambda x: np.cumprod(x, axis=0, dtype=np.float64), s_unary_nd),
    OpInfo("nancumsum", lambda x: np.nancumsum(x, axis=0), s_unary_nd),
    OpInfo("nancumprod", lambda x: np.nancumprod(x), s_unary),
    OpInfo("cumulative_sum", lambda x: np.cumulative_sum(x, axis=0, include_initial=True),
           s_unary_nd),
    OpInfo("cumulative_prod", lambda x: np.cumulative_prod(x.ravel()), s_unary),
    OpInfo("diff", lambda x: np.diff(x), s_unary_nd),
    OpInfo("diff n axis", lambda x: np.diff(x, n=2, axis=0, prepend=0), s_unary_nd, op="diff"),
]

CONTRACTIONS = [
    OpInfo("dot", lambda x, y: np.dot(x, y), s_matmul),
    OpInfo("dot method", lambda x, y: x.dot(y), s_matmul, op="dot"),
    OpInfo("matmul", lambda x, y: np.matmul(x, y), s_matmul),
    OpInfo("vdot", lambda x, y: np.vdot(x, y), s_same_shape_pair),
    OpInfo("inner", lambda x, y: np.inner(x, y), s_binary),
    OpInfo("outer", lambda x, y: np.outer(x, y), s_binary),
    OpInfo("tensordot", lambda x, y: np.tensordot(x, y, axes=([1], [0])), s_matmul),
    OpInfo("einsum", lambda x, y: np.einsum("ij,jk->ik", x, y), s_matmul),
    OpInfo("einsum trace", lambda x: np.einsum("ii", x), s_square, op="einsum"),
    OpInfo("kron", lambda x, y: np.kron(x, y), s_same_shape_pair),
    OpInfo("cross", lambda x, y: np.cross(x[..., :3], y[..., :3]), s_same_shape_pair),
    OpInfo("vecdot", lambda x, y: np.vecdot(x, y), s_binary),
    OpInfo("matvec", lambda x, y: np.matvec(x, y), s_matmul),
    OpInfo("vecmat", lambda x, y: np.vecmat(y.T, x.T), s_matmul),
]

LINALG = [
    OpInfo("linalg_norm", lambda x: np.linalg.norm(x), s_unary),
    OpInfo("linalg_norm axis", lambda x: np.linalg.norm(x, ord=1, axis=-1), s_unary_nd,
           op="linalg_norm"),
    OpInfo("linalg_norm matrix", lambda x: np.linalg.norm(x, "fro", axis=(-2, -1)), s_matrix,
           op="linalg_norm"),
    OpInfo("linalg_solve", lambda a, b: np.linalg.solve(a, b), s_square_rhs),
    OpInfo("linalg_inv", lambda a: np.linalg.inv(a), s_square),
    OpInfo("linalg_cholesky", lambda a: np.linalg.cholesky(a), s_square),
    OpInfo("linalg_det", lambda a: np.linalg.det(a), s_square),
    OpInfo("linalg_slogdet", lambda a: np.linalg.slogdet(a), s_square),
    OpInfo("linalg_slogdet unpacked", lambda a: np.linalg.slogdet(a)[1], s_square,
           op="linalg_slogdet"),
    OpInfo("linalg_eigh", lambda a: np.linalg.eigh(a), s_square),
    OpInfo("linalg_eigh unpacked", eigh_unpacked, s_square, op="linalg_eigh"),
    OpInfo("linalg_eig", lambda a: np.linalg.eig(a)[0], s_square),
    OpInfo("linalg_eigvalsh", lambda a: np.linalg.eigvalsh(a), s_square),
    OpInfo("linalg_eigvals", lambda a: np.linalg.eigvals(a), s_square),
    OpInfo("linalg_qr", lambda a: np.linalg.qr(a), s_matrix),
    OpInfo("linalg_qr r", lambda a: np.linalg.qr(a, mode="r"), s_matrix, op="linalg_qr"),
    OpInfo("linalg_svd", lambda a: np.linalg.svd(a, compute_uv=False), s_matrix),
    OpInfo("linalg_pinv", lambda a: np.linalg.pinv(a), s_matrix),
    OpInfo("linalg_lstsq", lambda a, b: np.linalg.lstsq(a, b)[0], s_square_rhs),
    OpInfo("linalg_matrix_power", lambda a: np.linalg.matrix_power(a, 3), s_square),
    OpInfo("linalg_matrix_rank", lambda a: np.linalg.matrix_rank(a), s_square),
    OpInfo("linalg_multi_dot", lambda a: np.linalg.multi_dot([a[0], a[0], a[0]]), s_square),
    OpInfo("linalg_cond", lambda a: np.linalg.cond(a), s_square),
]

UFUNC_METHODS = [
    OpInfo("ufunc_outer", lambda x, y: np.add.outer(x, y), s_binary),
    OpInfo("ufunc_outer multiply", lambda x, y: np.multiply.outer(x, y), s_binary,
           op="ufunc_outer"),
    OpInfo("ufunc_reduce", lambda x: np.add.reduce(x), s_unary_nd),
    OpInfo("ufunc_reduce maximum", lambda x: np.maximum.reduce(x, axis=None), s_unary_nd,
           op="ufunc_reduce"),
    OpInfo("ufunc_accumulate", lambda x: np.add.accumulate(x, axis=-1), s_unary_nd),
    OpInfo("ufunc_accumulate maximum", lambda x: np.maximum.accumulate(x), s_unary_nd,
           op="ufunc_accumulate"),
    OpInfo("ufunc_reduceat", lambda x: np.add.reduceat(x, [0, 1], axis=-1), s_matrix),
]

NUMERIC_FUNCS = [
    OpInfo("median", lambda x: np.median(x, axis=0), s_unary_nd),
    OpInfo("percentile", lambda x: np.percentile(x, [25, 75], axis=-1), s_unary_nd),
    OpInfo("quantile", lambda x: np.quantile(x, 0.5), s_unary_nd),
    OpInfo("nanmedian", lambda x: np.nanmedian(x), s_unary_nd),
    OpInfo("nanpercentile", lambda x: np.nanpercentile(x, 90, axis=0), s_unary_nd),
    OpInfo("nanquantile", lambda x: np.nanquantile(x, 0.1), s_unary_nd),
    OpInfo("average", lambda x: np.average(x, axis=0), s_unary_nd),
    OpInfo("ptp", lambda x: np.ptp(x, axis=-1), s_unary_nd, dtypes=NUMERIC),
    OpInfo("nansum", lambda x: np.nansum(x, axis=0), s_unary),
    OpInfo("nanprod", lambda x: np.nanprod(x), s_unary),
    OpInfo("nanmean", lambda x: np.nanmean(x, axis=-1), s_unary_nd),
    OpInfo("nanmax", lambda x: np.nanmax(x, axis=0), s_unary_nd),
    OpInfo("nanmin", lambda x: np.nanmin(x), s_unary_nd),
    OpInfo("nanstd", lambda x: np.nanstd(x, ddof=1), s_unary_nd),
    OpInfo("nanvar", lambda x: np.nanvar(x, axis=0), s_unary_nd),
    OpInfo("nanargmax", lambda x: np.nanargmax(x, axis=0), s_unary_nd),
    OpInfo("nanargmin", lambda x: np.nanargmin(x), s_unary_nd),
    OpInfo("count_nonzero", lambda x: np.count_nonzero(x, axis=0), s_unary_nd),
    OpInfo("count_nonzero total", lambda x: np.count_nonzero(x), s_unary, op="count_nonzero",
           expect_break="returns a Python int (data-dependent Python value)"),
    OpInfo("cov", lambda x: np.cov(x), s_matrix),
    OpInfo("corrcoef", lambda x: np.corrcoef(x), s_matrix),
    OpInfo("isclose", lambda x, y: np.isclose(x, y), s_binary),
    OpInfo("allclose", lambda x, y: np.allclose(x, y), s_binary,
           expect_break="returns a Python bool (data-dependent Python value)"),
    OpInfo("array_equal", lambda x, y: np.array_equal(x, y), s_binary,
           expect_break="returns a Python bool (data-dependent Python value)"),
    OpInfo("interp", lambda x, v: np.interp(v, x, x * 2), s_sorted_and_values, dtypes=NUMERIC),
    OpInfo("convolve", lambda x: np.convolve(x, x[:3]), s_vector),
    OpInfo("correlate", lambda x: np.correlate(x, x[:2], mode="same"), s_vector),
    OpInfo("polyval", lambda x: np.polyval(x[:3], x), s_vector),
    OpInfo("digitize", lambda x, v: np.digitize(v, x), s_sorted_and_values, dtypes=NUMERIC),
    OpInfo("trapezoid", lambda x: np.trapezoid(x, axis=-1), s_unary_nd),
    OpInfo("nan_to_num", lambda x: np.nan_to_num(x / 0.0, posinf=1.0), s_unary),
    OpInfo("select", lambda x: np.select([x < 0, x > 1], [x, x * 2], 0), s_unary),
    OpInfo("histogram", lambda x: np.histogram(x, bins=4, range=(-2, 2)), s_unary,
           dtypes=NUMERIC),
    OpInfo("bincount", lambda x: np.bincount(np.abs(x).astype(np.int64) % 5, weights=x * 1.0,
                                             minlength=3), s_vector, dtypes=NUMERIC),
    OpInfo("repeat_counts", lambda x: np.repeat(x, np.abs(x).astype(np.int64) % 3), s_vector,
           op="repeat", dtypes=NUMERIC),
    OpInfo("fft_fft", lambda x: np.fft.fft(x), s_unary_nd, dtypes=NUMERIC),
    OpInfo("fft_ifft", lambda x: np.fft.ifft(x, axis=0), s_unary_nd, dtypes=NUMERIC),
    OpInfo("fft_rfft", lambda x: np.fft.rfft(x), s_unary_nd, dtypes=NUMERIC),
    OpInfo("fft_irfft", lambda x: np.fft.irfft(x, n=6), s_unary_nd, dtypes=NUMERIC),
    OpInfo("fft_fft2", lambda x: np.fft.fft2(x), s_matrix, dtypes=NUMERIC),
    OpInfo("fft_ifft2", lambda x: np.fft.ifft2(x), s_matrix, dtypes=NUMERIC),
    OpInfo("fft_fftn", lambda x: np.fft.fftn(x), s_matrix, dtypes=NUMERIC),
    OpInfo("fft_ifftn", lambda x: np.fft.ifftn(x), s_matrix, dtypes=NUMERIC),
    OpInfo("fft_rfftn", lambda x: np.fft.rfftn(x), s_matrix, dtypes=NUMERIC),
    OpInfo("fft_irfftn", lambda x: np.fft.irfftn(x), s_matrix, dtypes=NUMERIC),
    OpInfo("fft_fftshift", lambda x: np.fft.fftshift(x), s_unary),
    OpInfo("fft_ifftshift", lambda x: np.fft.ifftshift(x, axes=0), s_unary_nd),
]

OP_INFOS: list[OpInfo] = (ufunc_infos() + OPERATORS + POINTWISE_EXTRAS + REDUCTIONS + INDEXING
                          + CREATION + MANIPULATION + SORTING_SCANS + CONTRACTIONS + LINALG
                          + UFUNC_METHODS + NUMERIC_FUNCS)


# ================================================================ comparing

def _tolerance(info: OpInfo, dtype: np.dtype) -> float:
    if info.rtol is not None:
        return info.rtol
    return 2e-5 if dtype in (np.float32, np.complex64) else 1e-9


def assert_matches(actual: Any, expected: Any, info: OpInfo, path: str = "result") -> None:
    """Same Python type, dtype and shape; values within the dtype's rounding."""
    assert type(actual) is type(expected), \
        f"{path}: compiled returned {type(actual).__name__}, NumPy {type(expected).__name__}"
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), f"{path}: length differs"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_matches(a, e, info, f"{path}[{i}]")
        return
    if not isinstance(expected, (np.ndarray, np.generic)):
        assert actual == expected or (actual != actual and expected != expected), path
        return
    assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype} != {expected.dtype}"
    assert np.shape(actual) == np.shape(expected), \
        f"{path}: shape {np.shape(actual)} != {np.shape(expected)}"
    if not info.values:
        return
    if expected.dtype.kind in "fc":
        tol = _tolerance(info, expected.dtype)
        scale = float(np.nanmax(np.abs(expected), initial=1.0))
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale, equal_nan=True,
                                   err_msg=path)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=path)


def _graph_ops(compiled: Any) -> set[str]:
    ops: set[str] = set()
    for entry in compiled.entries:
        graph = getattr(entry, "graph", None)
        if graph is not None:
            ops.update(str(n.target) for n in graph.call_nodes())
    return ops


def run_sample(info: OpInfo, backend: str, sample_: Sample) -> None:
    """One case: compiled vs NumPy on separate copies of the sample's inputs."""
    eager_args, compiled_args = clone(sample_.args), clone(sample_.args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = info.fn(*eager_args)
    except Exception as error:  # noqa: BLE001 - NumPy rejects this case: so must we
        compiled = ac.compile(info.fn, backend=backend, fullgraph=info.expect_break is None)
        with pytest.raises(type(error)):
            compiled(*compiled_args)
        return
    compiled = ac.compile(info.fn, backend=backend, fullgraph=info.expect_break is None)
    actual = compiled(*compiled_args)
    assert_matches(actual, expected, info)
    assert_matches(compiled_args, eager_args, info, "inputs after the call")
    if info.expect_break is None:
        assert info.graph_op in _graph_ops(compiled), \
            f"op {info.graph_op!r} not in the graph: {sorted(_graph_ops(compiled))}"


def run_info(info: OpInfo, backend: str, dtype: str, *, quick_only: bool = False) -> None:
    samples = info.samples(np.dtype(dtype))
    if quick_only:  # the numba quick subset: one representative sample
        samples = ([s for s in samples if s.quick] or samples)[:1]
    for sample_ in samples:
        try:
            run_sample(info, backend, sample_)
        except AssertionError as error:
            raise AssertionError(f"{info.name} [{backend}, {dtype}, {sample_.desc}]: {error}") \
                from None


def _cases(backends: list[str], *, quick_numba: bool) -> list[Any]:
    cases = []
    for info in OP_INFOS:
        for backend in backends:
            for dtype in info.dtypes:
                if backend == "numba":
                    in_quick = info.numba and dtype in QUICK_NUMBA_DTYPES
                    if quick_numba != in_quick:
                        continue
                elif not quick_numba:
                    continue
                marks = [] if quick_numba else [pytest.mark.slow]
                if info.xfail:
                    marks.append(pytest.mark.xfail(reason=info.xfail, strict=False))
                cases.append(pytest.param(info, backend, dtype, marks=marks,
                                          id=f"{backend}-{info.name}-{dtype}"))
    return cases


@pytest.mark.parametrize("info,backend,dtype", _cases(BACKENDS, quick_numba=True))
def test_opinfo(info: OpInfo, backend: str, dtype: str) -> None:
    run_info(info, backend, dtype, quick_only=backend == "numba")


@pytest.mark.parametrize("info,backend,dtype", _cases(BACKENDS, quick_numba=False))
def test_opinfo_numba_full(info: OpInfo, backend: str, dtype: str) -> None:
    run_info(info, backend, dtype)


def _user_reachable(op: Any) -> bool:
    """Ops user code reaches directly: by a NumPy callable, a method or an attribute (ops that
    only capture emits, such as ``copy_`` or ``scalar``, are exercised through other entries)."""
    return bool(op.aliases or op.methods or op.attribute)


def test_table_covers_the_registry() -> None:
    """Every op user code can reach has an entry in the table."""
    covered = {i.graph_op for i in OP_INFOS}
    reachable = {op.name for op in REGISTRY.ops.values() if _user_reachable(op)}
    missing = sorted(reachable - covered)
    assert not missing, f"ops without an OpInfo entry: {missing}"
