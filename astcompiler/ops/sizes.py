"""Symbolic shape rules: helpers the op families use to declare their output shapes over sizes
that are sympy expressions (dynamic dimensions).

A rule is ``rule(ctx, args, kwargs) -> shape | None`` on the op's canonical arguments, where arrays
are graph values. ``ctx`` (provided by the capture) answers:

* ``ctx.shape_of(arg)``: the (possibly symbolic) shape of an array argument;
* ``ctx.value_expr(arg)``: the sympy value of an int argument (a constant or a run-time size), or None;
* ``ctx.evaluate(relation)``: decide a relation between sizes (recorded as a guard);
* ``ctx.simplify(expr)``: simplify a size knowing that backed sizes are >= 2;
* ``ctx.unbacked(name)``: a fresh size known only at run time.

Returning None means "no rule for these arguments": the capture then gives the result fresh
unbacked sizes (correct, since kernels read sizes at run time, but opaque to later decisions).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

import numpy as np
from ..lazy import sympy  # imported at the first shape rule that needs it


class RuleContext(Protocol):  # pragma: no cover - an interface
    def shape_of(self, value: Any) -> tuple: ...
    def value_expr(self, value: Any) -> Any: ...
    def evaluate(self, relation: Any) -> bool: ...
    def simplify(self, expr: Any) -> Any: ...
    def unbacked(self, name: str) -> Any: ...
    def data_length(self, key: tuple) -> Any: ...
    def is_unbacked(self, expr: Any) -> bool: ...


ShapeRule = Callable[[RuleContext, tuple, dict], "tuple | None"]


def is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def as_size(expr: Any) -> Any:
    """An int for constant expressions, the sympy expression otherwise."""
    expr = sympy.sympify(expr)
    return int(expr) if expr.is_Integer else expr


def product(shape: Sequence[Any]) -> Any:
    total = sympy.Integer(1)
    for dim in shape:
        total *= dim
    return as_size(total)


def broadcast(ctx: RuleContext, shapes: Sequence[tuple]) -> tuple:
    """NumPy broadcasting over symbolic sizes (equal sizes are decided and guarded)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        dims = [s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0]
        out.append(_broadcast_dim(ctx, dims))
    return tuple(out)


def _broadcast_dim(ctx: RuleContext, dims: list[Any]) -> Any:
    static = [int(d) for d in dims if is_int(d) and d != 1]
    symbolic = [d for d in dims if not is_int(d)]
    if any(ctx.is_unbacked(d) for d in symbolic):
        distinct = set(symbolic)
        return symbolic[0] if len(distinct) == 1 and not static else ctx.unbacked("broadcast")
    if static:
        for d in symbolic:  # NumPy needs them equal: the code specializes this size
            ctx.evaluate(sympy.Eq(d, static[0]))
        return static[0]
    if not symbolic:
        return 1
    first = symbolic[0]
    for d in symbolic[1:]:
        if d != first:
            ctx.evaluate(sympy.Eq(first, d))
    return first


def reduced(shape: tuple, axis: Any, keepdims: bool) -> tuple:
    if axis is None:
        return tuple(1 for _ in shape) if keepdims else ()
    axes = {axis} if isinstance(axis, int) else set(axis)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def slice_length(ctx: RuleContext, dim: Any, s: slice) -> Any:
    """Length of ``dim`` sliced by ``s`` (Python semantics; symbolic where needed)."""
    step = 1 if s.step is None else s.step
    if not is_int(step) or step == 0:
        return None
    start = ctx.value_expr(s.start) if s.start is not None else None
    stop = ctx.value_expr(s.stop) if s.stop is not None else None
    if (s.start is not None and start is None) or (s.stop is not None and stop is None):
        # a bound read from array data (``data[indptr[i]:indptr[i + 1]]``): a length only the
        # run knows, one symbol for one (dimension, bounds) pair
        return ctx.data_length((dim, s.start, s.stop, step))
    dim = sympy.sympify(dim)

    def clamp(bound: Any, default: Any) -> Any:
        if bound is None:
            return default
        if bound.is_number and bound < 0:
            return sympy.Max(dim + bound, 0 if step > 0 else -1)
        if bound.is_number:
            return sympy.Min(bound, dim) if step > 0 else sympy.Min(bound, dim - 1)
        if ctx.is_unbacked(bound):
            return sympy.Min(bound, dim)
        if ctx.evaluate(sympy.Lt(bound, 0)):  # an int argument may be negative: a guard
            return sympy.Max(dim + bound, 0 if step > 0 else -1)
        return sympy.Min(bound, dim) if step > 0 else sympy.Min(bound, dim - 1)

    if step > 0:
        length = sympy.ceiling((clamp(stop, dim) - clamp(start, sympy.Integer(0))) / step)
    else:
        length = sympy.ceiling((clamp(start, dim - 1) - clamp(stop, sympy.Integer(-1))) / -step)
    return ctx.simplify(sympy.Max(length, 0))


# ----- rules shared by several families -----------------------------------------------------------
def same_as_first(ctx: RuleContext, args: tuple, kwargs: dict) -> tuple | None:
    """``*_like`` creation: the shape of the first argument (unless ``shape=`` overrides it)."""
    if kwargs.get("shape") is not None:
        return None
    return ctx.shape_of(args[0])


def shape_argument(ctx: RuleContext, args: tuple, kwargs: dict) -> tuple | None:
    """``zeros(shape, ...)``-style creation: the shape argument's sizes."""
    shape = args[0] if args else kwargs.get("shape")
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    exprs = [ctx.value_expr(d) for d in dims]
    if any(e is None for e in exprs):
        return None
    return tuple(as_size(e) for e in exprs)
