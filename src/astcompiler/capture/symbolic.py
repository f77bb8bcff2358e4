"""Symbolic sizes at capture time: ``SymInt`` and ``SymBool`` over the ``ShapeEnv``.

``x.shape[0]`` of a dynamic dimension is a ``SymInt`` wrapping a sympy expression. Arithmetic
stays symbolic; comparisons give a ``SymBool`` whose truth is decided with the sizes' hints (the
example's values) and recorded as a guard; using a ``SymInt`` where Python needs a plain int
(``__index__``) specializes it: a guard pins the size to its hint. Sizes flow into ops as graph
values (``tracer.sym_value``), so kernels read them at run time.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Callable

import sympy

if TYPE_CHECKING:  # pragma: no cover
    from .tracer import Tracer


def _expr(value: Any) -> sympy.Expr:
    if isinstance(value, SymInt):
        return value.expr
    if isinstance(value, bool):
        return sympy.Integer(int(value))
    if isinstance(value, int):
        return sympy.Integer(value)
    raise TypeError(f"unsupported operand {type(value).__name__}")


def _floordiv(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return sympy.floor(a / b)


class SymInt:
    """A size (or an integer derived from sizes) known only at run time."""

    __slots__ = ("tracer", "expr")

    def __init__(self, tracer: "Tracer", expr: sympy.Expr) -> None:
        self.tracer = tracer
        self.expr = sympy.sympify(expr)

    @property
    def hint(self) -> int:
        return self.tracer.shape_env.size_hint(self.expr)

    def _wrap(self, expr: sympy.Expr) -> Any:
        expr = sympy.simplify(expr) if expr.has(sympy.floor, sympy.Mod) else expr
        return int(expr) if expr.is_Integer else SymInt(self.tracer, expr)

    def _binary(self, other: Any, fn: Callable, reflected: bool = False) -> Any:
        if not isinstance(other, (int, SymInt)):
            return NotImplemented
        a, b = (_expr(other), self.expr) if reflected else (self.expr, _expr(other))
        return self._wrap(fn(a, b))

    def __add__(self, o): return self._binary(o, operator.add)
    def __radd__(self, o): return self._binary(o, operator.add, True)
    def __sub__(self, o): return self._binary(o, operator.sub)
    def __rsub__(self, o): return self._binary(o, operator.sub, True)
    def __mul__(self, o): return self._binary(o, operator.mul)
    def __rmul__(self, o): return self._binary(o, operator.mul, True)
    def __floordiv__(self, o): return self._binary(o, _floordiv)
    def __rfloordiv__(self, o): return self._binary(o, _floordiv, True)
    def __mod__(self, o): return self._binary(o, sympy.Mod)
    def __rmod__(self, o): return self._binary(o, sympy.Mod, True)
    def __neg__(self): return self._wrap(-self.expr)
    def __pos__(self): return self

    def __truediv__(self, other: Any) -> float:
        return self.__index__() / (other.__index__() if isinstance(other, SymInt) else other)

    def __rtruediv__(self, other: Any) -> float:
        return other / self.__index__()

    def _compare(self, other: Any, fn: Callable) -> Any:
        if not isinstance(other, (int, SymInt)):
            return NotImplemented
        relation = fn(self.expr, _expr(other))
        if relation in (sympy.true, sympy.false):
            return bool(relation)
        return SymBool(self.tracer, relation)

    def __lt__(self, o): return self._compare(o, sympy.Lt)
    def __le__(self, o): return self._compare(o, sympy.Le)
    def __gt__(self, o): return self._compare(o, sympy.Gt)
    def __ge__(self, o): return self._compare(o, sympy.Ge)
    def __eq__(self, o): return self._compare(o, sympy.Eq)  # type: ignore[override]
    def __ne__(self, o): return self._compare(o, sympy.Ne)  # type: ignore[override]

    def __hash__(self) -> int:
        return hash(self.expr)

    def __index__(self) -> int:
        """Python needs a plain int here: specialize (guard the size to its hint)."""
        return self.tracer.specialize(self.expr)

    __int__ = __index__

    def __bool__(self) -> bool:
        return bool(SymBool(self.tracer, sympy.Ne(self.expr, 0)))

    def __repr__(self) -> str:
        return f"SymInt({self.expr})"

    __str__ = __repr__


class SymBool:
    """A comparison of sizes: its truth comes from the hints and is recorded as a guard."""

    __slots__ = ("tracer", "relation")

    def __init__(self, tracer: "Tracer", relation: sympy.Basic) -> None:
        self.tracer = tracer
        self.relation = relation

    def __bool__(self) -> bool:
        return self.tracer.evaluate_relation(self.relation)

    def __repr__(self) -> str:
        return f"SymBool({self.relation})"


def is_symbolic(value: Any) -> bool:
    return isinstance(value, (SymInt, SymBool))
