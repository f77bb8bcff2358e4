"""What derivative rules (``OpDef.vjp``) are written with.

A rule is ``vjp(ctx, g) -> tuple``: ``g`` is the cotangent of the op's result, ``ctx`` a
``VjpContext`` with the op's arguments and result; it returns one cotangent per positional
argument (None where no gradient flows, a tuple for a tuple argument such as ``concatenate``'s).
Rules are plain NumPy code: at capture the values are traced arrays, so each NumPy call in a
rule becomes a registry op of the backward graph (lowered and fused like any other); on
concrete arrays the same rule computes the cotangent directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class VjpContext:
    """One op application being differentiated."""

    name: str
    args: tuple  # the positional arguments (traced arrays, constants)
    kwargs: dict
    out: Any  # the op's result
    wants: tuple  # per positional argument: does a gradient flow to it?

    def want(self, i: int) -> bool:
        return i < len(self.wants) and bool(self.wants[i])


def is_one(size: Any) -> bool:
    """A size known to be 1 (static; a symbolic size is never 1)."""
    return isinstance(size, (int, np.integer)) and int(size) == 1


def shape_of(value: Any) -> tuple:
    return tuple(value.shape) if hasattr(value, "shape") else ()


def sum_to(g: Any, like: Any) -> Any:
    """``g`` summed over the axes broadcasting added to ``like`` (the cotangent of a broadcast
    operand has the operand's shape)."""
    shape = shape_of(like)
    gshape = shape_of(g)
    lead = len(gshape) - len(shape)
    if lead > 0:
        g = np.sum(g, axis=tuple(range(lead)))
        gshape = gshape[lead:]
    ones = tuple(i for i, d in enumerate(shape) if is_one(d) and not is_one(gshape[i]))
    if ones:
        g = np.sum(g, axis=ones, keepdims=True)
    return g


def expand_reduced(g: Any, x: Any, axis: tuple | None, keepdims: bool) -> Any:
    """A reduction's cotangent broadcast back to the shape of its input ``x``."""
    if axis is not None and not keepdims and axis:
        g = np.expand_dims(g, axis)
    shape = shape_of(x)
    if all(isinstance(d, (int, np.integer)) for d in shape):
        return np.broadcast_to(g, shape)  # a view: free
    return np.zeros_like(x, dtype=g.dtype) + g  # symbolic sizes: a broadcast that needs no
    # size values (a boolean mask's count has none at run time)


def reduced_count(x: Any, axis: tuple | None) -> Any:
    """How many elements each result of a reduction over ``axis`` combines (a size expression
    for dynamic shapes)."""
    shape = shape_of(x)
    count: Any = 1
    for i in range(len(shape)) if axis is None else axis:
        count = count * shape[i]
    return count


def unary(derivative: Any) -> Any:
    """A rule for a one-argument pointwise op: ``g * derivative(x, out)``."""
    def rule(ctx: VjpContext, g: Any) -> tuple:
        return (g * derivative(ctx.args[0], ctx.out),)
    rule.__name__ = f"vjp_{getattr(derivative, '__name__', 'unary')}"
    return rule


def binary(dx: Any, dy: Any, symmetric: bool = False) -> Any:
    """A rule for a two-argument pointwise op: partials ``dx(g, x, y, out)``, ``dy(...)`` summed
    back to each operand's shape (broadcasting). ``symmetric``: ``f(x, y) == f(y, x)``, so
    when both operands are one value (``x * x``) its two partials are equal: computed once."""
    def rule(ctx: VjpContext, g: Any) -> tuple:
        x, y = ctx.args
        gx = sum_to(dx(g, x, y, ctx.out), x) if ctx.want(0) else None
        if symmetric and x is y and gx is not None:
            return gx, gx  # one backward node instead of two equal ones
        gy = sum_to(dy(g, x, y, ctx.out), y) if ctx.want(1) else None
        return gx, gy
    return rule


def zero_rule(ctx: VjpContext, g: Any) -> tuple:
    """Piecewise-constant ops (floor, sign, round, ...): no gradient flows."""
    return (None,) * len(ctx.args)


__all__ = ["VjpContext", "is_one", "shape_of", "sum_to", "expand_reduced", "reduced_count",
           "unary", "binary", "zero_rule"]
