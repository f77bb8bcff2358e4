"""Numba rules of ops on Python numbers in loop code (structured functions).

Loop indices, counters and other Python scalars keep Python's semantics: ``ZeroDivisionError``,
floor division and modulo of negative operands, ``int / int`` a float, an int compared with a
float exactly, ints exact while they fit 64 bits (overflow-checked helpers raise OverflowError
past them, and the graph reruns with Python ints). How each op is spelled is its
``PythonRule`` in the op table (``optable.py``); the helpers are ``region_ops``' sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...graph import Node
from ...ops import REGISTRY
from .bounds import Interval, ValueRanges, nonnegative
from .oprules_common import (NOT_MINE, LoopEmitter, NotLowerable, number_kind, python_context,
                             python_kind)
from .region_ops import CHECKED, PY_CONVERSIONS, PYTHON_SCALARS

# ``PythonRule.int`` as a function: (emitter, node, operands) -> source
IntSpelling = Callable[[LoopEmitter, Node, list[str]], str]


@dataclass(frozen=True)
class PythonRule:
    """An op on Python numbers: templates over the operands ``{0}``, ``{1}``, None where the op
    has no lowering for that kind.

    ``int``: on ints and bools, each operand ``int(x)`` (``raw_int``: as it is, so that
    ``bool & bool`` stays a bool), or a function for what a template cannot say; ``float``: on
    floats (ints meeting floats become floats); ``complex``: on complex numbers (real operands
    become ``complex(x, 0.0)``), with ``complex_helpers``. Comparisons of an int with a float
    compare exactly (``_ac_py_compare_int_float``): ``int_float`` lists the helper's outcomes
    (-1 <, 0 ==, 1 >, 2 unordered) for which ``int <op> float`` holds, ``float_int`` those for
    which ``float <op> int`` holds (the helper still gets the int first).
    """

    int: str | IntSpelling | None = None
    float: str | None = None
    complex: str | None = None
    raw_int: bool = False
    int_float: tuple[int, ...] | None = None
    float_int: tuple[int, ...] | None = None
    complex_helpers: tuple[str, ...] = ()


def python_numbers(emitter: LoopEmitter, node: Node, rule: PythonRule | None,
                   checked_int: bool) -> Any:
    """The op on Python numbers (``python_context``) with Python's semantics; else, for a
    Python int result of ints, the op's Python-int policy (``OpDef.python_int``): its
    overflow-checked helper (``checked_int``), or NumPy's int64 op where that is Python's
    (``"exact"``, written by the ufunc rule: ``NOT_MINE``)."""
    target, args, meta = node.target, node.args, node.meta
    if python_context(node):
        return _python_scalar(emitter, node, rule or PythonRule())
    if meta is not None and meta.pytype is int and all(
            not isinstance(a, Node) or (a.meta is not None and a.meta.pytype in (int, bool))
            for a in args):
        # Python ints: exact as long as they fit in 64 bits, else the graph runs in Python
        if checked_int and rule is not None and isinstance(rule.int, str):
            emitter.helpers.add(CHECKED)
            return rule.int.format(*(emitter.value(a) for a in args))
        op = REGISTRY.ops.get(target)
        if op is None or op.python_int != "exact":
            raise NotLowerable(f"{target} on Python ints (could outgrow 64 bits)")
    return NOT_MINE


def _python_scalar(emitter: LoopEmitter, node: Node, rule: PythonRule) -> str:
    target, args = node.target, node.args
    kinds = [python_kind(a) for a in args]
    if complex in kinds or node.meta.pytype is complex:
        return _python_complex(emitter, target, args, kinds, rule)
    integral = all(k in (int, bool) for k in kinds)
    emitter.helpers.add(CHECKED)
    emitter.helpers.add(PYTHON_SCALARS)
    # bools take part as ints (as in Python); ints meet floats as floats
    plain = [f"int({emitter.value(a)})" if k in (bool, int) else emitter.value(a)
             for a, k in zip(args, kinds)]
    values = plain if integral else [f"float({v})" for v in plain]
    if rule.int_float is not None and not integral and float in kinds \
            and any(k in (int, bool) for k in kinds):
        return _int_float_compare(rule, plain, kinds)
    if integral:
        if rule.int is None:
            raise NotLowerable(f"{target} on Python ints")
        if callable(rule.int):
            return rule.int(emitter, node, values)
        if rule.raw_int:  # bool & bool stays a bool
            return rule.int.format(*(emitter.value(a) for a in args))
        return rule.int.format(*values)
    if rule.float is None:
        raise NotLowerable(f"{target} on Python floats")
    return rule.float.format(*values)


def _int_float_compare(rule: PythonRule, values: list[str], kinds: list) -> str:
    """``int <op> float`` as Python compares them: exactly, also past 2 ** 53."""
    if kinds[0] in (int, bool):
        return f"(_ac_py_compare_int_float({values[0]}, {values[1]}) in {rule.int_float!r})"
    return f"(_ac_py_compare_int_float({values[1]}, {values[0]}) in {rule.float_int!r})"


def _python_complex(emitter: LoopEmitter, target: str, args: tuple, kinds: list,
                    rule: PythonRule) -> str:
    """Python complex arithmetic (Python 3.11: a real operand becomes ``complex(x, 0.0)``
    first; numba's complex division is CPython's and raises its ZeroDivisionError)."""
    values = [emitter.value(a) if k is complex else f"complex(float({emitter.value(a)}), 0.0)"
              for a, k in zip(args, kinds)]
    if rule.complex is None:
        raise NotLowerable(f"{target} on Python complex numbers")
    emitter.helpers.update(rule.complex_helpers)
    return rule.complex.format(*values)


def power_int(emitter: LoopEmitter, node: Node, values: list[str]) -> str:
    """``int ** int`` by a constant exponent: an int (checked) for ``>= 0``, else a float."""
    base, exponent = node.args[:2]
    if isinstance(exponent, Node):
        raise NotLowerable(f"{node.target} on Python ints")
    if exponent >= 0:
        return f"_ac_py_power_int({', '.join(values)})"
    return f"_ac_py_power(float({emitter.value(base)}), float({exponent!r}))"


# -- conversions and round() ---------------------------------------------------------------------


def py_bool_loop(emitter: LoopEmitter, node: Node) -> str:
    """``bool(x)`` of a number."""
    kinds, values = _kinds_and_values(emitter, node)
    return f"({values[0]} != 0)" if kinds[0] == "c" else f"bool({values[0]})"


def py_float_loop(emitter: LoopEmitter, node: Node) -> str:
    """``float(x)`` of a real number."""
    kinds, values = _real_kinds_and_values(emitter, node)
    return f"float({values[0]})"


def py_complex_loop(emitter: LoopEmitter, node: Node) -> str:
    """``complex(x[, y])`` of numbers."""
    kinds, values = _kinds_and_values(emitter, node)
    if "?" in kinds:
        raise NotLowerable(f"{node.target} of {kinds}")
    if len(node.args) == 1:
        return f"complex({values[0]})" if kinds[0] == "c" else \
            f"complex(float({values[0]}), 0.0)"
    return f"complex(float({values[0]}), float({values[1]}))"


def py_int_loop(emitter: LoopEmitter, node: Node) -> str:
    """``int(x)`` of a real number as Python converts it (a float past 64 bits, NaN, a uint64
    past int64 raise: the graph reruns in Python)."""
    kinds, values = _real_kinds_and_values(emitter, node)
    emitter.helpers.add(PY_CONVERSIONS)
    if kinds[0] == "f":
        return f"_ac_py_int_float(float({values[0]}))"
    if kinds[0] == "u" and np.dtype(node.args[0].meta.dtype).itemsize == 8:
        return f"_ac_py_int_uint64({values[0]})"
    return f"int({values[0]})"


def _kinds_and_values(emitter: LoopEmitter, node: Node) -> tuple[list[str], list[str]]:
    return [number_kind(a) for a in node.args], [emitter.value(a) for a in node.args]


def _real_kinds_and_values(emitter: LoopEmitter, node: Node) -> tuple[list[str], list[str]]:
    kinds, values = _kinds_and_values(emitter, node)
    if "c" in kinds or "?" in kinds:
        raise NotLowerable(f"{node.target} of {kinds}")
    return kinds, values


def py_round_loop(emitter: LoopEmitter, node: Node) -> Any:
    """``round(x)`` of a NumPy scalar: an int (of a Python number: its ``PythonRule``)."""
    a = node.args[0]
    if python_context(node) or not isinstance(a, Node) or a.meta is None:
        return NOT_MINE
    dtype = np.dtype(a.meta.dtype)
    kind = dtype.kind
    if kind == "i" or (kind == "u" and dtype.itemsize < 8):
        return f"int({emitter.value(a)})"
    if kind == "f":
        emitter.helpers.add(CHECKED)
        emitter.helpers.add(PYTHON_SCALARS)
        return f"_ac_py_round(float({emitter.value(a)}))"
    return NOT_MINE



# -- value ranges of Python ints (``NumbaRule.value_range``: index-bound proofs) ------------------


def add_range(ranges: ValueRanges, node: Node) -> Interval | None:
    """``a + b`` of Python ints: ``[a.lo + b.lo, a.hi + b.hi]``."""
    known = ranges.python_int_operands(node)
    if known is None:
        return None
    (alo, ahi), (blo, bhi) = known
    return alo + blo, ahi + bhi


def subtract_range(ranges: ValueRanges, node: Node) -> Interval | None:
    """``a - b`` of Python ints: ``[a.lo - b.hi, a.hi - b.lo]``."""
    known = ranges.python_int_operands(node)
    if known is None:
        return None
    (alo, ahi), (blo, bhi) = known
    return alo - bhi, ahi - blo


def multiply_range(ranges: ValueRanges, node: Node) -> Interval | None:
    """``a * k`` of Python ints, ``k`` one known non-negative value."""
    known = ranges.python_int_operands(node)
    if known is None or known[1][0] != known[1][1] or not nonnegative(known[1][0]):
        return None
    (alo, ahi), (k, _) = known
    return alo * k, ahi * k
