"""Python's own semantics for Python scalars in the graph (loop indices, counters, dynamic ints).

An operator (``a / b``, ``a // b``, ``a ** b``, ``round(a)``) whose operands are all Python
numbers computes what Python computes: arbitrary-precision ints, ``int / int`` is a float,
``1.0 / 0`` raises ZeroDivisionError, ``round(2.5)`` is the int 2. The capture types such a node
with ``python_result_type`` and the interpreters evaluate it with ``PYTHON_OPS``; NumPy functions
(``np.sqrt(n)``) keep NumPy's semantics and are not in this table.
"""

from __future__ import annotations

from typing import Any, Callable

from .registry import REGISTRY, register

register("py_round", round, kind="extern", python=round,
         doc="Python's round(x) of a Python float: an int, half to even")

# op name -> its ``OpDef.python`` (every op family is registered before this module)
PYTHON_OPS: dict[str, Callable[..., Any]] = {
    name: op.python for name, op in REGISTRY.ops.items() if op.python is not None}

_PYTHON_NUMBERS = (bool, int, float, complex)


def _representative(kind: type) -> Any:
    return kind(1)


def python_result_type(name: str, kinds: tuple[type, ...], constants: tuple[Any, ...]) -> type | None:
    """The Python type of ``name`` applied to operands of types ``kinds`` when the type does not
    depend on the values; None when it does (``float ** float`` may be complex) or Python has no
    such operation for these types. ``constants`` holds each operand's value when it is a
    constant of the program (else None)."""
    fn = PYTHON_OPS.get(name)
    if fn is None or not all(k in _PYTHON_NUMBERS for k in kinds):
        return None
    if name == "power":
        return _power_type(kinds, constants)
    if name in ("maximum", "minimum") and len(set(kinds)) > 1:
        return None  # max(1, 2.0) is a float, max(1, 0.5) an int: one operand itself, by value
    try:
        return type(fn(*(_representative(k) for k in kinds)))
    except (TypeError, ValueError, ArithmeticError):
        return None


def _power_type(kinds: tuple[type, ...], constants: tuple[Any, ...]) -> type | None:
    base, exponent = kinds
    base_value, exponent_value = constants
    if complex in kinds:
        return complex
    if base in (bool, int) and exponent in (bool, int):
        if exponent_value is None:
            return None  # int ** n: an int for n >= 0, a float for n < 0
        return int if exponent_value >= 0 else float
    # a float is involved: a negative base with a non-integral exponent gives a complex
    if exponent in (bool, int):
        return float
    if exponent_value is not None and float(exponent_value).is_integer():
        return float
    if base_value is not None and base_value >= 0:
        return float
    return None


def is_python_number(value: Any) -> bool:
    return type(value) in _PYTHON_NUMBERS


# int(x), float(x), complex(x[, y]), bool(x) of a number in the graph (a traced NumPy scalar or
# Python number): a Python number, exactly what the builtin returns (int() truncates toward zero
# and raises ValueError for NaN, OverflowError for infinities; complex(a, b) puts the two reals
# side by side, with no arithmetic). The capture makes these nodes (capture/runtime/conversions.py).
register("py_int", int, kind="extern",
         doc="Python's int(x) of a real number: truncated toward zero, an int of any size")
register("py_float", float, kind="extern", doc="Python's float(x) of a real number")
register("py_complex", complex, kind="extern",
         doc="Python's complex(x) or complex(re, im) of real numbers")
register("py_bool", bool, kind="extern", doc="Python's bool(x) of a number: x != 0 (NaN is true)")

PYTHON_CONVERSIONS: dict[type, str] = {int: "py_int", float: "py_float", complex: "py_complex",
                                       bool: "py_bool"}
