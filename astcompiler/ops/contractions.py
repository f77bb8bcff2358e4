"""Contractions: dot, vdot, inner, outer, matmul (and ``@``), tensordot, einsum, kron, cross,
and the NumPy 2 gufuncs vecdot/matvec/vecmat.

All ``extern``: the numba backend calls NumPy (BLAS) from its wrapper, since numba's own ``np.dot``
needs SciPy. Capture looks up the op ``"matmul"`` for the ``@`` operator.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..exc import Unsupported
from ._args import axis_index, dtype_kw, freeze, ndim_of, reject_out
from .registry import register


def _matmul_shape(ctx, args: tuple, kwargs: dict) -> tuple | None:
    """(n, k) @ (k, m) -> (n, m), and the 1-d cases; batched products have no rule yet."""
    a, b = ctx.shape_of(args[0]), ctx.shape_of(args[1])
    if not 1 <= len(a) <= 2 or not 1 <= len(b) <= 2:
        return None
    return tuple(a[:-1]) + tuple(b[1:] if len(b) == 2 else ())


def _outer_shape(ctx, args: tuple, kwargs: dict) -> tuple:
    """np.outer flattens both operands: (a.size, b.size)."""
    return tuple(math.prod(ctx.shape_of(arg)) for arg in args[:2])


def _pair_normalizer(fname: str, *, with_out: bool):
    if with_out:
        def normalize(a, b, out=None):
            reject_out(out, fname)
            return (freeze(a), freeze(b)), {}
    else:
        def normalize(a, b, /):
            return (freeze(a), freeze(b)), {}
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _dot(a: Any, b: Any) -> Any:
    return np.dot(a, b)


def _outer(a: Any, b: Any) -> np.ndarray:
    return np.outer(a, b)


register("dot", _dot, kind="extern", threaded=True, shape_rule=_matmul_shape,
         normalize=_pair_normalizer("dot", with_out=True),
         aliases=(np.dot,), methods=("dot",), doc="np.dot(a, b) / a.dot(b)")
register("vdot", np.vdot, kind="extern", threaded=True,
         normalize=_pair_normalizer("vdot", with_out=False),
         aliases=(np.vdot,), doc="np.vdot(a, b): flattened, conjugating a; a NumPy scalar")
register("inner", np.inner, kind="extern", threaded=True,
         normalize=_pair_normalizer("inner", with_out=False),
         aliases=(np.inner,), doc="np.inner(a, b)")
register("outer", _outer, kind="extern", shape_rule=_outer_shape,
         normalize=_pair_normalizer("outer", with_out=True),
         aliases=(np.outer,), doc="np.outer(a, b): flattened inputs")
register("kron", np.kron, kind="extern", normalize=_pair_normalizer("kron", with_out=False),
         aliases=(np.kron,), doc="np.kron(a, b)")


_GUFUNC_KWARGS = {"dtype", "casting", "out"}


def _check_core_dims(fname: str, operands: tuple) -> None:
    for i, x in enumerate(operands):
        if ndim_of(x) == 0:
            raise ValueError(f"{fname}: Input operand {i} does not have enough dimensions "
                             f"(has 0, gufunc core requires 1)")


def _gufunc_normalizer(fname: str):
    def normalize(x1, x2, /, **kwargs):
        unknown = set(kwargs) - _GUFUNC_KWARGS
        if unknown:
            raise Unsupported(f"np.{fname} with keyword(s) {sorted(unknown)} is not supported")
        reject_out(kwargs.get("out"), fname)
        if kwargs.get("casting", "same_kind") != "same_kind":
            raise Unsupported(f"np.{fname} with casting other than 'same_kind'")
        _check_core_dims(fname, (x1, x2))
        return (freeze(x1), freeze(x2)), dtype_kw(kwargs.get("dtype"))
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _gufunc_impl(ufunc: np.ufunc):
    def impl(x1: Any, x2: Any, dtype: np.dtype | None = None) -> Any:
        return ufunc(x1, x2, dtype=dtype)
    impl.__name__ = f"_{ufunc.__name__}"
    return impl


def _gufunc_aliases(name: str) -> tuple:
    found = [getattr(np, name)]
    linalg_fn = getattr(np.linalg, name, None)
    if name == "matmul" and linalg_fn is not None and linalg_fn is not found[0]:
        found.append(linalg_fn)  # np.linalg.matmul: same semantics, another object
    return tuple(found)


for _name in ("matmul", "vecdot", "matvec", "vecmat"):
    if isinstance(getattr(np, _name, None), np.ufunc):
        register(_name, _gufunc_impl(getattr(np, _name)), kind="extern",
                 shape_rule=_matmul_shape if _name == "matmul" else None,
                 threaded=_name == "matmul",
                 normalize=_gufunc_normalizer(_name), aliases=_gufunc_aliases(_name),
                 doc=f"np.{_name}(x1, x2, dtype)" + (" and the @ operator"
                                                     if _name == "matmul" else ""))


def _tensordot_axes(axes: Any) -> Any:
    if isinstance(axes, (int, np.integer)):
        return int(axes)
    try:
        a_axes, b_axes = axes
    except (TypeError, ValueError):
        raise TypeError("tensordot axes must be an int or a pair of axis sequences") from None
    as_tuple = (lambda v: tuple(int(i) for i in v) if isinstance(v, (list, tuple))
                else (int(v),))
    return (as_tuple(a_axes), as_tuple(b_axes))


def _tensordot_normalize(a, b, axes=2):
    return (freeze(a), freeze(b), _tensordot_axes(axes)), {}


def _tensordot(a: Any, b: Any, axes: Any) -> np.ndarray:
    return np.tensordot(a, b, axes)


register("tensordot", _tensordot, kind="extern", threaded=True, normalize=_tensordot_normalize,
         aliases=(np.tensordot,), doc="np.tensordot(a, b, axes): axes an int or two tuples")


_EINSUM_KWARGS = {"dtype", "order", "casting"}


def _einsum_normalize(*operands, out=None, optimize=False, **kwargs):
    reject_out(out, "einsum")
    if not operands or not isinstance(operands[0], str):
        raise Unsupported("np.einsum is supported with a subscripts string only "
                          "(not the interleaved operand/sublist form)")
    unknown = set(kwargs) - _EINSUM_KWARGS
    if unknown:
        raise TypeError(f"Did not understand the following kwargs: {sorted(unknown)}")
    canon: dict[str, Any] = {"optimize": freeze(optimize)}
    if kwargs.get("dtype") is not None:
        canon["dtype"] = np.dtype(kwargs["dtype"])
    for key in ("order", "casting"):
        if key in kwargs:
            canon[key] = kwargs[key]
    subscripts = operands[0].replace(" ", "")
    return (subscripts, *(freeze(x) for x in operands[1:])), canon


def _einsum(subscripts: str, *operands: Any, **kwargs: Any) -> Any:
    return np.einsum(subscripts, *operands, **kwargs)


register("einsum", _einsum, kind="extern", normalize=_einsum_normalize, aliases=(np.einsum,),
         doc="np.einsum(subscripts, *operands, optimize, dtype, order, casting)")


def _cross_normalize(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    for x in (a, b):
        if ndim_of(x) == 0:
            raise ValueError("At least one array has zero dimension")
    ax_a = axis_index(axisa, ndim_of(a), "axisa")
    ax_b = axis_index(axisb, ndim_of(b), "axisb")
    return (freeze(a), freeze(b)), {"axisa": ax_a, "axisb": ax_b, "axisc": int(axisc)}


def _cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1) -> np.ndarray:
    return np.cross(a, b, axisa=axisa, axisb=axisb, axisc=axisc)


register("cross", _cross, kind="extern", normalize=_cross_normalize, aliases=(np.cross,),
         doc="np.cross(a, b, axisa, axisb, axisc) of 3-vectors (2-vectors are deprecated)")

__all__: list[str] = []


# ---------------------------------------------------------------- derivatives (autodiff/)
def _define_contraction_vjps() -> None:
    from .derivatives import sum_to
    from .registry import define_vjp

    def product_vjp(ctx, g):
        """matmul/dot of 1-d and 2-d operands (and batched matmul, batch dims summed back)."""
        a, b = ctx.args[:2]
        if ctx.name == "dot" and (a.ndim > 2 or b.ndim > 2):
            raise NotImplementedError("the gradient of np.dot of arrays with more than 2 dims "
                                      "is not implemented; use np.matmul (@)")
        if a.ndim == 1 and b.ndim == 1:
            return (g * b if ctx.want(0) else None), (g * a if ctx.want(1) else None)
        if a.ndim == 1:  # (k) @ (..., k, m) -> (..., m)
            ga = sum_to(np.matmul(b, g[..., None])[..., 0], a) if ctx.want(0) else None
            gb = sum_to(a[:, None] * g[..., None, :], b) if ctx.want(1) else None
            return ga, gb
        if b.ndim == 1:  # (..., n, k) @ (k) -> (..., n)
            ga = sum_to(g[..., :, None] * b, a) if ctx.want(0) else None
            gb = sum_to(np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0], b) \
                if ctx.want(1) else None
            return ga, gb
        ga = sum_to(np.matmul(g, np.swapaxes(b, -1, -2)), a) if ctx.want(0) else None
        gb = sum_to(np.matmul(np.swapaxes(a, -1, -2), g), b) if ctx.want(1) else None
        return ga, gb

    define_vjp("matmul", product_vjp)
    define_vjp("dot", product_vjp)


_define_contraction_vjps()
