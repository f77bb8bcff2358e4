"""Values whose Python type the data decides, with a traced bool that tells it at run time.

After ``best = 0.0`` and a loop whose body may run ``best = abs(x[i])`` (or ``best = max(best,
x[i])``, or a loop that may run zero times), Python leaves ``best`` a ``float`` on some inputs and
an ``np.float64`` on others, with the same value. The graph carries the NumPy type and, beside
it, a bool that is true when the value really is NumPy's (``TypeTag``): the regions carry it as
one more state variable (``__ac_isnp_best``), branches and ``max``/``min`` choose it with the
value, and the entry returns ``value if tag else float(value)``.

Such a value is in ``Tracer.ambiguous`` too, so any use this module does not model exactly stays
a graph break. Modeled: storing it into an array, returning it, any op with a NumPy operand
(NumPy's promotion makes that result NumPy's whatever the tagged value's type), comparisons, and
Python's float operators that give NumPy's float64 value on every special value of the tagged
operand (and the program's number constants) without raising (``+``, ``-``, ``*``, ``abs``,
``-v``, ``v / 2.0``, ``v / 100``; not ``v / w``, ``v % w`` of a traced ``w``, ``v ** w``, which raise on a zero
or on overflow in Python): their result is tagged in turn. One difference stays: a float ``+``/``*``
that overflows to infinity warns in NumPy, and would warn here where the value was Python's.
Python ints are modeled in comparisons only (their arithmetic does not wrap at 64 bits).
"""

from __future__ import annotations

import functools
import itertools
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exc import GraphBreak
from ..ops import REGISTRY, OpDef
from .proxy import ArrayProxy

_PY = (bool, int, float, complex)


@dataclass(frozen=True)
class TypeTag:
    """``numpy``: a traced NumPy bool, true when the value has its NumPy type at run time;
    otherwise it is ``pytype(value)`` (the same number: ``0.0`` for ``np.float64(0.0)``)."""

    numpy: ArrayProxy
    pytype: type


def numpy_typed(tags: dict, value: Any) -> Any:
    """Whether ``value`` has a NumPy type when the program runs: True, False (a Python number),
    a traced bool (a tagged value), or None (not a number)."""
    if isinstance(value, ArrayProxy):
        tag = tags.get(value.node)
        if tag is not None:
            return tag.numpy
        meta = value.node.meta
        if meta is None or meta.shape != ():
            return None
        return meta.pytype is None
    if type(value) in _PY:
        return False
    if isinstance(value, np.generic):
        return True
    return None


def python_type_of(tags: dict, value: Any) -> type | None:
    """The Python type ``value`` has when it is not NumPy's (its tag false), if it can be one."""
    if isinstance(value, ArrayProxy):
        tag = tags.get(value.node)
        if tag is not None:
            return tag.pytype
        meta = value.node.meta
        return meta.pytype if meta is not None else None
    return type(value) if type(value) in _PY else None


def mixed_python_type(tags: dict, values: tuple) -> type | None:
    """The one Python type among ``values`` (int or float) when they mix a Python number (or
    a tagged value) with NumPy-typed ones, so which one Python keeps decides the type; else
    None (all NumPy's, all Python's, or not numbers)."""
    numpy = [numpy_typed(tags, v) for v in values]
    if any(n is None for n in numpy) or all(n is True for n in numpy) \
            or all(n is False for n in numpy):
        return None
    pytypes = {python_type_of(tags, v) for v in values} - {None}
    pytype = pytypes.pop() if len(pytypes) == 1 else None
    return pytype if pytype in (int, float) else None


def default_dtype(pytype: type) -> np.dtype:
    """NumPy's dtype for a Python number type (its twin: float64 for float, int64 for int)."""
    return np.asarray(pytype(0)).dtype


def result_tag(op: OpDef, python: bool, args: tuple, tags: dict) -> tuple[list[TypeTag], type] | None:
    """How the result of ``op`` on ``args`` (some of them tagged) is typed: None when it is
    NumPy's whatever the tagged operands are (a NumPy operand, a NumPy function); else the
    tags it depends on and the Python type it has when they are all false. A GraphBreak when
    Python and NumPy could differ in more than the type (arithmetic that warns or overflows)."""
    from ..ops.python_scalars import python_result_type

    tagged = [tags[a.node] for a in args if isinstance(a, ArrayProxy) and a.node in tags]
    others = [a for a in args if not (isinstance(a, ArrayProxy) and a.node in tags)]
    if not python or any(numpy_typed(tags, a) is not False for a in others):
        return None  # NumPy's function, or NumPy's promotion with a NumPy operand
    kinds = tuple(python_type_of(tags, a) for a in args)
    constants = tuple(a if type(a) in (int, float) else None for a in args)
    traced_kinds = {k for k, c in zip(kinds, constants) if c is None}
    modeled = op.comparison or (op.kind == "pointwise" and traced_kinds == {float}
                                and float_operator_agrees(op.name, constants))
    result = python_result_type(op.name, kinds, tuple(None for _ in args)) if modeled else None
    if result is None:
        raise GraphBreak(f"{op.name} of a value that is a Python {tagged[0].pytype.__name__} or a "
                         "NumPy scalar depending on the data (a compiled loop or branch assigns "
                         "it); Python's result could differ from NumPy's, so this runs in Python")
    return tagged, result


_SPECIAL = (0.0, -0.0, 1.5, -2.0, 1e308, float("inf"), float("-inf"), float("nan"))


@functools.lru_cache(maxsize=1024)
def float_operator_agrees(name: str, constants: tuple) -> bool:
    """Python's operator ``op.python`` on floats gives NumPy's float64 result (value and sign of
    zero, NaN for NaN) and never raises (``1.0 / x`` does for a zero ``x``), for every special
    value of each traced operand (``None`` in ``constants``) and the program's constants."""
    op = REGISTRY.ops.get(name)
    if op is None or op.python is None:
        return False
    choices = [_SPECIAL if c is None else (c,) for c in constants]
    for values in itertools.product(*choices):
        try:
            python = op.python(*values)
        except Exception:  # noqa: BLE001 - Python raises where NumPy gives inf or nan
            return False
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            numpy = op.impl(*(np.float64(v) for v in values))
        if type(python) is not float or not _same_float(python, float(numpy)):
            return False
    return True


def _same_float(a: float, b: float) -> bool:
    if a != a or b != b:
        return a != a and b != b
    return a == b and np.signbit(a) == np.signbit(b)
