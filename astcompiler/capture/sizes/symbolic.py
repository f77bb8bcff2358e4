"""Symbolic sizes at capture time: ``SymInt`` and ``SymBool`` over the ``ShapeEnv``.

``x.shape[0]`` of a dynamic dimension (or an int argument that became dynamic) is a ``SymInt``
wrapping a sympy expression. It stands for a Python ``int`` and behaves as one, decided here in
one place:

- integer arithmetic (``+ - * // %``, ``**`` by a constant, ``abs``) stays symbolic and exact
  (arbitrary precision, Python's floor semantics); an expression that grows past
  ``MAX_EXPR_OPS`` operations is specialized instead of simplified;
- operations whose result is no longer an int (``/``, ``* 1.5``, ``** -1``, NumPy scalars) are
  computed at run time as graph values;
- comparisons give a ``SymBool`` whose truth is decided with the hints and recorded as a guard;
- everything that needs the concrete value (``str``, ``repr``, ``format``, ``hash``,
  ``__index__``, bit operations, other ``int`` attributes) specializes it: a guard pins the
  expression to its hint, so a new value recompiles.

``isinstance``/``type`` see ``int`` (``capture/runtime/calls.py``); NumPy functions see the value as a
Python int (``__array_ufunc__``).
"""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import sympy

if TYPE_CHECKING:  # pragma: no cover
    from ..tracer import Tracer

# past this many operations an expression is specialized (guarded to its value), so that long
# chains of arithmetic (a loop of ``s = (s * 3 + 1) % 1000``) stay cheap to build and to guard
MAX_EXPR_OPS = 24


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


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, SymInt))


class SymInt:
    """A size (or an integer derived from sizes and int arguments) known only at run time."""

    __slots__ = ("tracer", "expr")

    def __init__(self, tracer: "Tracer", expr: sympy.Expr) -> None:
        self.tracer = tracer
        self.expr = sympy.sympify(expr)

    @property
    def hint(self) -> int:
        return self.tracer.shape_env.size_hint(self.expr)

    def describe(self) -> str:
        """The symbolic expression, for messages (``str()`` is the value, as for an int)."""
        return f"SymInt({self.expr})"

    # ----- exact integer arithmetic ---------------------------------------------------------
    def _wrap(self, expr: sympy.Expr) -> Any:
        if expr.is_Integer:
            return int(expr)
        if sympy.count_ops(expr) > MAX_EXPR_OPS:  # too big to carry around: use its value
            return self.tracer.specialize(expr)
        return SymInt(self.tracer, expr)

    def _binary(self, other: Any, fn: Callable, python: Callable, reflected: bool = False) -> Any:
        if not _is_int(other):
            return self._runtime(other, python, reflected)
        a, b = (_expr(other), self.expr) if reflected else (self.expr, _expr(other))
        return self._wrap(fn(a, b))

    def _divisor(self, other: Any, reflected: bool) -> None:
        """Python raises for a zero divisor: decide it (a guard) before dividing."""
        divisor = self if reflected else other
        if isinstance(divisor, SymInt):
            if not bool(divisor != 0):
                raise ZeroDivisionError("integer division or modulo by zero")
        elif isinstance(divisor, int) and divisor == 0:
            raise ZeroDivisionError("integer division or modulo by zero")

    def _division(self, other: Any, fn: Callable, python: Callable, reflected: bool,
                  message: str) -> Any:
        if not _is_int(other):
            return self._runtime(other, python, reflected)
        try:
            self._divisor(other, reflected)
        except ZeroDivisionError:
            raise ZeroDivisionError(message) from None
        return self._binary(other, fn, python, reflected)

    def _runtime(self, other: Any, python: Callable, reflected: bool = False) -> Any:
        """A float/complex/NumPy operand: the result is a graph value computed at run time."""
        from ..proxy import ArrayProxy
        if isinstance(other, (ArrayProxy, np.ndarray)) or not isinstance(
                other, (float, complex, np.generic)):
            return NotImplemented
        value = self.value()
        return python(other, value) if reflected else python(value, other)

    def value(self) -> Any:
        """This size as a graph value (a Python int read at run time)."""
        return self.tracer.sym_value(self.expr)

    def __add__(self, o): return self._binary(o, operator.add, operator.add)
    def __radd__(self, o): return self._binary(o, operator.add, operator.add, True)
    def __sub__(self, o): return self._binary(o, operator.sub, operator.sub)
    def __rsub__(self, o): return self._binary(o, operator.sub, operator.sub, True)
    def __mul__(self, o): return self._binary(o, operator.mul, operator.mul)
    def __rmul__(self, o): return self._binary(o, operator.mul, operator.mul, True)

    def __floordiv__(self, o):
        return self._division(o, _floordiv, operator.floordiv, False,
                              "integer division or modulo by zero")

    def __rfloordiv__(self, o):
        return self._division(o, _floordiv, operator.floordiv, True,
                              "integer division or modulo by zero")

    def __mod__(self, o):
        return self._division(o, sympy.Mod, operator.mod, False, "integer modulo by zero")

    def __rmod__(self, o):
        return self._division(o, sympy.Mod, operator.mod, True, "integer modulo by zero")

    def __divmod__(self, o):
        if not _is_int(o):
            return self._runtime(o, divmod)
        return (self // o, self % o)

    def __rdivmod__(self, o):
        if not _is_int(o):
            return self._runtime(o, divmod, True)
        return (o // self, o % self)

    def __neg__(self): return self._wrap(-self.expr)
    def __pos__(self): return self
    def __abs__(self): return self._wrap(sympy.Abs(self.expr))

    def __truediv__(self, other: Any) -> Any:
        """int / int is a float: computed at run time (Python's correctly rounded division)."""
        if isinstance(other, SymInt):
            return self.value() / other.value()
        if isinstance(other, int):
            if other == 0:
                raise ZeroDivisionError("division by zero")
            return self.value() / other
        return self._runtime(other, operator.truediv)

    def __rtruediv__(self, other: Any) -> Any:
        if isinstance(other, int):
            return other / self.value()
        return self._runtime(other, operator.truediv, True)

    def __pow__(self, other: Any, modulo: Any = None) -> Any:
        if modulo is not None:
            return pow(int(self), other, modulo)
        if isinstance(other, SymInt):  # the result's type depends on the exponent's sign
            other = int(other)
        if isinstance(other, int):
            if other >= 0:
                return self._wrap(sympy.Pow(self.expr, other)) if other else 1
            return self.value() ** other  # a float, computed at run time
        return self._runtime(other, operator.pow)

    def __rpow__(self, other: Any) -> Any:
        if isinstance(other, int):
            return other ** int(self)
        return self._runtime(other, operator.pow, True)

    # ----- comparisons: guarded decisions ----------------------------------------------------
    def _compare(self, other: Any, fn: Callable, python: Callable) -> Any:
        if type(other) is float:  # exact, as Python compares an int with a float
            return _compare_float(self, other, fn)
        if not _is_int(other):
            return self._runtime(other, python)
        relation = fn(self.expr, _expr(other))
        if relation in (sympy.true, sympy.false):
            return bool(relation)
        if self.tracer.read_at_run_time(relation):  # a length the data decides: a traced bool
            right = other.value() if isinstance(other, SymInt) else other
            return python(self.value(), right)
        return SymBool(self.tracer, relation)

    def __lt__(self, o): return self._compare(o, sympy.Lt, operator.lt)
    def __le__(self, o): return self._compare(o, sympy.Le, operator.le)
    def __gt__(self, o): return self._compare(o, sympy.Gt, operator.gt)
    def __ge__(self, o): return self._compare(o, sympy.Ge, operator.ge)
    def __eq__(self, o): return self._compare(o, sympy.Eq, operator.eq)  # type: ignore[override]
    def __ne__(self, o): return self._compare(o, sympy.Ne, operator.ne)  # type: ignore[override]

    # ----- the concrete value: specialize ---------------------------------------------------
    def __index__(self) -> int:
        """Python needs a plain int here: specialize (guard the expression to its hint)."""
        return self.tracer.specialize(self.expr)

    __int__ = __index__

    def __float__(self) -> float:
        return float(int(self))

    def __complex__(self) -> complex:
        return complex(int(self))

    def __hash__(self) -> int:
        return hash(int(self))

    def __repr__(self) -> str:
        return repr(int(self))

    def __str__(self) -> str:
        return str(int(self))

    def __format__(self, spec: str) -> str:
        return format(int(self), spec)

    def __bool__(self) -> bool:
        return bool(SymBool(self.tracer, sympy.Ne(self.expr, 0)))

    def __round__(self, ndigits: Any = None) -> Any:
        return self if ndigits is None else round(int(self), ndigits)

    def __trunc__(self) -> "SymInt":
        return self

    __floor__ = __ceil__ = __trunc__

    def __getattr__(self, name: str) -> Any:
        """Any other ``int`` attribute (``bit_length``, ``to_bytes``...): on the value."""
        if name.startswith("__") or not hasattr(0, name):
            raise AttributeError(f"'int' object has no attribute {name!r}")
        return getattr(int(self), name)

    def _specialized(self, other: Any, fn: Callable, reflected: bool = False) -> Any:
        if isinstance(other, SymInt):
            other = int(other)
        if not isinstance(other, int):
            return NotImplemented
        return fn(other, int(self)) if reflected else fn(int(self), other)

    def __and__(self, o): return self._specialized(o, operator.and_)
    def __rand__(self, o): return self._specialized(o, operator.and_, True)
    def __or__(self, o): return self._specialized(o, operator.or_)
    def __ror__(self, o): return self._specialized(o, operator.or_, True)
    def __xor__(self, o): return self._specialized(o, operator.xor)
    def __rxor__(self, o): return self._specialized(o, operator.xor, True)
    def __lshift__(self, o): return self._specialized(o, operator.lshift)
    def __rlshift__(self, o): return self._specialized(o, operator.lshift, True)
    def __rshift__(self, o): return self._specialized(o, operator.rshift)
    def __rrshift__(self, o): return self._specialized(o, operator.rshift, True)
    def __invert__(self): return self._wrap(-self.expr - 1)

    # ----- NumPy: a Python int operand, read at run time -------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs = tuple(i.value() if isinstance(i, SymInt) else i for i in inputs)
        return self.tracer.trace_ufunc(ufunc, method, inputs, kwargs)


def _compare_float(value: SymInt, other: float, fn: Callable) -> Any:
    """``n < 2.5`` is ``n < 3``; NaN compares false; infinities decide by their sign."""
    if math.isnan(other):
        return fn is sympy.Ne
    if math.isinf(other):
        big = other > 0
        return {sympy.Lt: big, sympy.Le: big, sympy.Gt: not big, sympy.Ge: not big,
                sympy.Eq: False, sympy.Ne: True}[fn]
    if other.is_integer():
        return value._compare(int(other), fn, fn)
    if fn in (sympy.Eq, sympy.Ne):
        return fn is sympy.Ne
    low, high = math.floor(other), math.ceil(other)
    bound = {sympy.Lt: high, sympy.Le: low, sympy.Gt: low, sympy.Ge: high}[fn]
    return value._compare(bound, fn, fn)


class SymBool:
    """A comparison of sizes: its truth comes from the hints and is recorded as a guard."""

    __slots__ = ("tracer", "relation")

    def __init__(self, tracer: "Tracer", relation: sympy.Basic) -> None:
        self.tracer = tracer
        self.relation = relation

    def __bool__(self) -> bool:
        return self.tracer.evaluate_relation(self.relation)

    def __repr__(self) -> str:
        return repr(bool(self))

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(bool(self), spec)

    def __hash__(self) -> int:
        return hash(bool(self))

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return bool(self) == other

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return bool(self) != other

    def __int__(self) -> int:
        return int(bool(self))

    __index__ = __int__

    def __getattr__(self, name: str) -> Any:
        """The other ``bool`` attributes: on the decided value (operators: ``_bool_operator``)."""
        if name.startswith("__") or not hasattr(True, name):
            raise AttributeError(f"'bool' object has no attribute {name!r}")
        return getattr(bool(self), name)

    def describe(self) -> str:
        return f"SymBool({self.relation})"


def _bool_operator(name: str) -> Callable:
    def operator_(self: SymBool, *args: Any) -> Any:
        return getattr(bool(self), name)(*args)
    operator_.__name__ = name
    return operator_


for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "floordiv", "rfloordiv", "truediv",
              "rtruediv", "mod", "rmod", "and", "rand", "or", "ror", "xor", "rxor", "neg",
              "pos", "abs", "invert", "lt", "le", "gt", "ge", "float", "round"):
    setattr(SymBool, f"__{_name}__", _bool_operator(f"__{_name}__"))


def is_symbolic(value: Any) -> bool:
    return isinstance(value, (SymInt, SymBool))


def python_stand_in(value: Any) -> Any:
    """A plain value of the Python type a symbolic value stands for (for ``isinstance``)."""
    if isinstance(value, SymInt):
        return 0
    if isinstance(value, SymBool):
        return False
    return value
