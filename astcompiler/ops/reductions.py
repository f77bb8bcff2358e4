"""Reductions: sum, prod, mean, max, min, argmax, argmin, any, all, var, std.

Canonical form: ``op(x, axis=<tuple of non-negative ints> | None, keepdims=bool,
dtype=<np.dtype> | None)`` (``ddof`` too for var/std; argmax/argmin keep an int axis).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exc import Unsupported
from .registry import ReductionDef, register


def normalize_axis(axis: Any, ndim: int, *, single: bool = False) -> tuple[int, ...] | int | None:
    if axis is None:
        return None
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise np.exceptions.AxisError(a, ndim)
        a = a % max(ndim, 1)
        if a in out:
            raise ValueError("duplicate value in 'axis'")
        out.append(a)
    if single:
        if len(out) != 1:
            raise TypeError("an integer is required for the axis")
        return out[0]
    return tuple(sorted(out))


def _ndim(x: Any) -> int:
    return int(x.ndim) if hasattr(x, "ndim") else int(np.ndim(x))


def _reduction_normalizer(name: str, *, with_dtype: bool, with_ddof: bool = False):
    def normalize(a, axis=None, dtype=None, out=None, keepdims=False, *rest, **kwargs):
        ddof = kwargs.pop("ddof", rest[0] if rest and with_ddof else 0)
        for unsupported in ("where", "initial"):
            if kwargs.get(unsupported, None) is not None:
                raise Unsupported(f"np.{name}({unsupported}=...) is not supported")
            kwargs.pop(unsupported, None)
        if kwargs.pop("mean", None) is not None or kwargs.pop("correction", None) is not None:
            raise Unsupported(f"np.{name} with mean=/correction= is not supported")
        if kwargs:
            raise TypeError(f"{name}() got unexpected keyword argument(s) {sorted(kwargs)}")
        canon: dict[str, Any] = {"axis": normalize_axis(axis, _ndim(a)), "keepdims": bool(keepdims)}
        if with_dtype:
            canon["dtype"] = None if dtype is None else np.dtype(dtype)
        elif dtype is not None:
            raise TypeError(f"{name}() got an unexpected keyword argument 'dtype'")
        if with_ddof:
            canon["ddof"] = ddof
        if out is not None:
            canon["out"] = out
        return (a,), canon
    return normalize


def _minmax_normalizer(name: str):
    def normalize(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        if initial is not None or where is not None:
            raise Unsupported(f"np.{name}(initial=/where=) is not supported")
        canon: dict[str, Any] = {"axis": normalize_axis(axis, _ndim(a)), "keepdims": bool(keepdims)}
        if out is not None:
            canon["out"] = out
        return (a,), canon
    return normalize


def _arg_normalizer(name: str):
    def normalize(a, axis=None, out=None, *, keepdims=False):
        canon: dict[str, Any] = {"axis": normalize_axis(axis, _ndim(a), single=True),
                                 "keepdims": bool(keepdims)}
        if out is not None:
            canon["out"] = out
        return (a,), canon
    return normalize


def _impl(fn):
    def impl(a, axis=None, keepdims=False, out=None, **kwargs):
        return fn(a, axis=axis, keepdims=keepdims, out=out, **kwargs)
    impl.__name__ = fn.__name__
    return impl


_ADD = "{a} + {b}"
_SUM = ReductionDef(init="0", combine="{acc} + {v}", merge=_ADD, accumulate="wide")
_PROD = ReductionDef(init="1", combine="{acc} * {v}")
_MEAN = ReductionDef(init="0", combine="{acc} + {v}", finalize="{acc} / {n}", merge=_ADD,
                     accumulate="float64")
# ties go to the later element, as in NumPy's scalar loop (max of [0.0, -0.0] is -0.0)
_MAX = ReductionDef(init="lowest", combine="({v} if {v} >= {acc} else {acc})",
                    merge="({b} if {b} >= {a} else {a})", propagate_nan=True, accumulate="input")
_MIN = ReductionDef(init="highest", combine="({v} if {v} <= {acc} else {acc})",
                    merge="({b} if {b} <= {a} else {a})", propagate_nan=True, accumulate="input")
_ANY = ReductionDef(init="False", combine="({acc} | {v})", merge="({a} | {b})", accumulate="bool")
_ALL = ReductionDef(init="True", combine="({acc} & {v})", merge="({a} & {b})", accumulate="bool")
_ARGMAX = ReductionDef(init="lowest", combine="{v} > {acc}", arg=True, accumulate="input")
_ARGMIN = ReductionDef(init="highest", combine="{v} < {acc}", arg=True, accumulate="input")
_SPREAD = "{acc} + ({v} - {mean}) * ({v} - {mean})"
_VAR = ReductionDef(init="0", combine=_SPREAD, finalize="{acc} / max({n} - {ddof}, 0)",
                    merge=_ADD, accumulate="float64", two_pass=True)
_STD = ReductionDef(init="0", combine=_SPREAD, finalize="np.sqrt({acc} / max({n} - {ddof}, 0))",
                    merge=_ADD, accumulate="float64", two_pass=True)

register("sum", _impl(np.sum), kind="reduction", python_warnings=False, reduction=_SUM,
         normalize=_reduction_normalizer("sum", with_dtype=True), aliases=(np.sum,),
         methods=("sum",), doc="np.sum / ndarray.sum")
register("prod", _impl(np.prod), kind="reduction", python_warnings=False, reduction=_PROD,
         normalize=_reduction_normalizer("prod", with_dtype=True), aliases=(np.prod,),
         methods=("prod",))
register("mean", _impl(np.mean), kind="reduction", reduction=_MEAN,
         normalize=_reduction_normalizer("mean", with_dtype=True), aliases=(np.mean,),
         methods=("mean",))
register("max", _impl(np.max), kind="reduction", python_warnings=False, reduction=_MAX,
         normalize=_minmax_normalizer("max"), aliases=(np.max, np.amax), methods=("max",),
         no_identity="zero-size array to reduction operation maximum which has no identity")
register("min", _impl(np.min), kind="reduction", python_warnings=False, reduction=_MIN,
         normalize=_minmax_normalizer("min"), aliases=(np.min, np.amin), methods=("min",),
         no_identity="zero-size array to reduction operation minimum which has no identity")
register("argmax", _impl(np.argmax), kind="reduction", python_warnings=False, reduction=_ARGMAX,
         normalize=_arg_normalizer("argmax"), aliases=(np.argmax,), methods=("argmax",),
         no_identity="attempt to get argmax of an empty sequence")
register("argmin", _impl(np.argmin), kind="reduction", python_warnings=False, reduction=_ARGMIN,
         normalize=_arg_normalizer("argmin"), aliases=(np.argmin,), methods=("argmin",),
         no_identity="attempt to get argmin of an empty sequence")
register("any", _impl(np.any), kind="reduction", python_warnings=False, reduction=_ANY,
         normalize=_minmax_normalizer("any"), aliases=(np.any,), methods=("any",))
register("all", _impl(np.all), kind="reduction", python_warnings=False, reduction=_ALL,
         normalize=_minmax_normalizer("all"), aliases=(np.all,), methods=("all",))
register("var", _impl(np.var), kind="reduction", reduction=_VAR,
         normalize=_reduction_normalizer("var", with_dtype=True, with_ddof=True),
         aliases=(np.var,), methods=("var",))
register("std", _impl(np.std), kind="reduction", reduction=_STD,
         normalize=_reduction_normalizer("std", with_dtype=True, with_ddof=True),
         aliases=(np.std,), methods=("std",))


# ---------------------------------------------------------------- derivatives (autodiff/)
def _define_reduction_vjps() -> None:
    from .derivatives import expand_reduced, reduced_count
    from .registry import define_vjp

    def sum_vjp(ctx, g):
        x, (axis, keepdims) = ctx.args[0], (ctx.kwargs.get("axis"), ctx.kwargs.get("keepdims"))
        return (expand_reduced(g, x, axis, keepdims),)

    def mean_vjp(ctx, g):
        x, axis, keepdims = ctx.args[0], ctx.kwargs.get("axis"), ctx.kwargs.get("keepdims")
        return (expand_reduced(g / reduced_count(x, axis), x, axis, keepdims),)

    def extremum_vjp(ctx, g):  # ties share the gradient equally (as JAX)
        x, axis, keepdims = ctx.args[0], ctx.kwargs.get("axis"), ctx.kwargs.get("keepdims")
        hits = (x == expand_reduced(ctx.out, x, axis, keepdims)).astype(g.dtype)
        share = np.sum(hits, axis=axis, keepdims=True)
        return (expand_reduced(g, x, axis, keepdims) * hits / share,)

    def spread_vjp(std: bool):
        def rule(ctx, g):
            x, axis, keepdims = ctx.args[0], ctx.kwargs.get("axis"), ctx.kwargs.get("keepdims")
            ddof = ctx.kwargs.get("ddof", 0)
            centered = x - np.mean(x, axis=axis, keepdims=True)
            scale = (g / ctx.out) if std else (2.0 * g)
            return (expand_reduced(scale, x, axis, keepdims) * centered
                    / (reduced_count(x, axis) - ddof),)
        return rule

    define_vjp("sum", sum_vjp)
    define_vjp("mean", mean_vjp)
    define_vjp("max", extremum_vjp)
    define_vjp("min", extremum_vjp)
    define_vjp("var", spread_vjp(False))
    define_vjp("std", spread_vjp(True))


_define_reduction_vjps()
