"""Symbolic output shapes during capture: the rule context the ops' shape rules run against.

Each op declares its rule in its own family module (``OpDef.shape_rule``, helpers in
``ops/sizes.py``); pointwise ops broadcast and reductions drop axes, by kind. This module answers
the rules' questions from the tracer (shapes of graph values, values of run-time sizes, decisions
recorded as guards).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from ...graph import Node
from ...ops import REGISTRY, OpDef
from ...ops.sizes import broadcast, is_int, reduced

if TYPE_CHECKING:  # pragma: no cover
    from ..tracer import Tracer


def _bound_key(bound: Any) -> Any:
    """A slice bound as the value it computes: ``k + 1`` written twice (two nodes) is one key,
    so ``LU[k + 1:, k + 1:] -= np.outer(LU[k + 1:, k], LU[k, k + 1:])`` has one length. Only
    pure pointwise arithmetic is looked through; a read of array data (``indptr[i]``, which a
    write may change between two reads) stays its own node."""
    if isinstance(bound, Node) and bound.op == "call" and isinstance(bound.target, str) \
            and not bound.kwargs:
        op = REGISTRY.ops.get(bound.target)
        if op is not None and op.kind == "pointwise" and op.pure:
            return (bound.target, tuple(_bound_key(a) for a in bound.args))
    return bound


class CaptureRuleContext:
    """``ops.sizes.RuleContext`` for one capture."""

    def __init__(self, tracer: "Tracer") -> None:
        self.tracer = tracer

    def shape_of(self, value: Any) -> tuple:
        if isinstance(value, Node):
            return value.meta.shape if value.meta is not None else ()
        return np.shape(value)

    def value_expr(self, value: Any) -> Any:
        if isinstance(value, Node):
            return self.tracer.node_exprs.get(value)
        if is_int(value):
            return sympy.Integer(int(value))
        return None

    def evaluate(self, relation: Any) -> bool:
        return self.tracer.evaluate_relation(relation)

    def unbacked(self, name: str) -> Any:
        return self.tracer.shape_env.create_unbacked(name)

    def data_length(self, key: tuple) -> Any:
        """An unbacked size for a length the data decides, the same one for the same ``key``
        (``data[lo:hi]`` and ``indices[lo:hi]`` of one nnz: one length)."""
        dim, start, stop, step = key
        key = (dim, _bound_key(start), _bound_key(stop), step)
        lengths = self.tracer.data_lengths
        if key not in lengths:
            lengths[key] = self.unbacked("slice")
        return lengths[key]

    def is_unbacked(self, expr: Any) -> bool:
        symbols = self.tracer.shape_env.symbols
        return any(symbols.get(s) is not None and symbols[s].hint is None
                   for s in sympy.sympify(expr).free_symbols)

    def simplify(self, expr: Any) -> Any:
        """Simplify knowing each symbol's lower bound (backed sizes are >= 2): each symbol s
        becomes ``t + min`` with ``t >= 0`` while simplifying, then back."""
        subs, back = {}, {}
        for symbol in sympy.sympify(expr).free_symbols:
            info = self.tracer.shape_env.symbols.get(symbol)
            if info is not None and info.min is not None and info.min >= 1:
                shifted = sympy.Symbol(f"{symbol.name}_shifted", integer=True, nonnegative=True)
                subs[symbol] = shifted + info.min
                back[shifted] = symbol - info.min
        simplified = _simplify(sympy.sympify(expr).subs(subs), tuple(back.items()))
        return int(simplified) if simplified.is_Integer else simplified


@functools.lru_cache(maxsize=4096)
def _simplify(shifted: Any, back: tuple) -> Any:
    """sympy.simplify is milliseconds: each shape expression is simplified once per process."""
    return sympy.simplify(sympy.simplify(shifted).subs(dict(back)))


def symbolic_shape(tracer: "Tracer", op: OpDef, args: tuple, kwargs: dict) -> tuple | None:
    """The op's output shape over symbols, or None when it has no rule for these arguments."""
    ctx = CaptureRuleContext(tracer)
    if op.shape_rule is not None:
        return op.shape_rule(ctx, args, kwargs)
    if op.kind == "pointwise":
        arrays = [a for a in (*args, *kwargs.values()) if isinstance(a, Node) and a.meta is not None]
        return broadcast(ctx, [ctx.shape_of(a) for a in arrays])
    if op.kind == "reduction":
        return reduced(ctx.shape_of(args[0]), kwargs.get("axis"), kwargs.get("keepdims", False))
    return None
