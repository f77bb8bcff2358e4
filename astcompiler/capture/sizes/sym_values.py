"""Size expressions (sympy) as graph values: ``s0 - 1`` becomes ``dim_size(x, 0) - 1``.

Each symbol is read from the input that defines it (``x.shape[0]``, or a dynamic int argument);
the arithmetic is ordinary graph ops on Python ints, so kernels get sizes at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sympy

from ...exc import GraphBreak

if TYPE_CHECKING:  # pragma: no cover
    from ..tracer import Tracer


def _symbol_value(tracer: "Tracer", symbol: sympy.Symbol) -> Any:
    defined = tracer.symbol_nodes.get(symbol)
    info = tracer.shape_env.symbols.get(symbol)
    if defined is None or info is None:
        raise GraphBreak(f"the size {symbol} has no run-time source (from a boolean mask?)")
    proxy, dim = defined
    if not any(proxy.node.graph is scope.graph for scope in tracer.scopes):
        raise GraphBreak(f"the size {symbol} of a value made inside a compiled loop or branch "
                         "is read after it; read it inside, or keep it in NumPy")
    if dim is None:
        return proxy
    return tracer.call_op("dim_size", (proxy, dim), {})


def build_sym_value(tracer: "Tracer", expr: sympy.Expr) -> Any:
    """``expr`` computed with Python int operators on graph values (exact: Python ints)."""
    if expr.is_Integer:
        return int(expr)
    if expr.is_Symbol:
        return _symbol_value(tracer, expr)
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        numerator, denominator = expr.as_numer_denom()
        if denominator != 1:
            raise GraphBreak(f"the size expression {expr} is not an integer")
        parts = [build_sym_value(tracer, t) for t in expr.args]
        total = parts[0]
        for part in parts[1:]:
            total = total + part if isinstance(expr, sympy.Add) else total * part
        return total
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        numerator, denominator = expr.args[0].as_numer_denom()
        a, b = build_sym_value(tracer, numerator), build_sym_value(tracer, denominator)
        if isinstance(expr, sympy.floor):
            return a // b
        return -((-a) // b)
    if isinstance(expr, sympy.Mod):
        a, b = expr.args
        return build_sym_value(tracer, a) % build_sym_value(tracer, b)
    if isinstance(expr, sympy.Abs):
        return abs(build_sym_value(tracer, expr.args[0]))
    if isinstance(expr, (sympy.Max, sympy.Min)):
        name = "maximum" if isinstance(expr, sympy.Max) else "minimum"
        values = [build_sym_value(tracer, a) for a in expr.args]
        result = values[0]
        for value in values[1:]:
            result = tracer.call_op(name, (result, value), {}, python=True)
        return result
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and expr.exp > 0:
        base = build_sym_value(tracer, expr.base)
        result = base
        for _ in range(int(expr.exp) - 1):
            result = result * base
        return result
    raise GraphBreak(f"cannot compute the size expression {expr} at run time")
