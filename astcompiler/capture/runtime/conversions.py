"""Python's number builtins on traced scalars: ``int``, ``float``, ``complex``, ``bool``, ``max``
and ``min`` (``__ac.call(int, x[i])``).

``int(x[i])`` inside a loop is a node (``py_int``, ``ops/python_scalars.py``) whose result is a
Python int in the graph, exactly what the builtin returns: truncated toward zero, of any size,
ValueError for NaN and OverflowError for infinities, raised when the value is seen. Only the
conversions that are exact and silent are captured (``int``/``float`` of a complex value warns
with ComplexWarning: that stays the proxy's graph break).

``max(a, b, ...)``/``min(a, b, ...)`` compare as Python does, left to right, keeping the first
extreme item (``if item > best: best = item``), so ``max(nan, 1.0)`` is nan and
``max(1.0, nan)`` is 1.0. Two NumPy scalars of one dtype become ``where(item > best, item,
best)``; two Python numbers of one type Python's own ``maximum``/``minimum``; items of different
types a branch on the comparison (``runtime.ifexp``), since the result's type is the item chosen;
a Python number and a NumPy scalar of its default dtype (``max(best, x[i])`` after ``best = 0.0``)
a ``where`` whose result carries a flag saying which was picked (``capture/type_tags.py``).
A ``key=`` function, or an item that is not a number, leaves the call to the builtin.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...ops.python_scalars import PYTHON_CONVERSIONS
from ..proxy import ArrayProxy
from ..sizes.symbolic import SymInt
from ..type_tags import default_dtype, mixed_python_type, numpy_typed

if TYPE_CHECKING:  # pragma: no cover
    from .api import Runtime

# dtype kinds a conversion takes exactly and silently
_CONVERTIBLE = {int: "biuf", float: "biuf", complex: "biufc", bool: "biufc"}
_REAL_PYTHON = (bool, int, float)


def _pytype(value: ArrayProxy) -> type | None:
    meta = value.node.meta
    return meta.pytype if meta is not None else None


def _convertible(value: ArrayProxy, kind: type) -> bool:
    """A traced number ``kind()`` converts exactly: a 0-d value of a kind it accepts."""
    if value.ndim != 0:
        return False
    pytype = _pytype(value)
    if pytype is not None:
        return pytype is not complex or kind in (complex, bool)
    return value.dtype.kind in _CONVERTIBLE[kind]


def _real_operand(value: Any) -> bool:
    """An operand of ``complex(re, im)`` that is a real number (traced or constant)."""
    if isinstance(value, ArrayProxy):
        return _convertible(value, float)
    return type(value) in _REAL_PYTHON or isinstance(value, SymInt) \
        or (isinstance(value, np.generic) and value.dtype.kind in "biuf")


def convert(runtime: "Runtime", kind: type, args: tuple, kwargs: dict) -> Any:
    """``kind(*args, **kwargs)`` for ``kind`` in int, float, complex, bool."""
    traced = any(isinstance(a, ArrayProxy) for a in args)
    if kind is complex and traced and len(args) == 2 and not kwargs \
            and all(_real_operand(a) for a in args):
        return runtime.tracer.call_op("py_complex", args, {})
    if not traced or kwargs or len(args) != 1 or not _convertible(args[0], kind):
        return kind(*args, **kwargs)  # plain values, or the proxy's own conversion (a break)
    value = args[0]
    if _pytype(value) is kind:
        return value  # int(i) of an int is i itself
    return runtime.tracer.call_op(PYTHON_CONVERSIONS[kind], (value,), {})


def _number_type(value: Any) -> Any:
    """What decides the type of ``max``'s result when ``value`` is chosen: a Python type, a
    NumPy dtype, or None for a value that is not a real number."""
    if isinstance(value, ArrayProxy):
        if value.ndim != 0 or not value.is_scalar:
            return None  # a 0-d array is returned as itself: its identity
        pytype = _pytype(value)
        if pytype is not None:
            return pytype if pytype is not complex else None
        return value.dtype if value.dtype.kind in "biuf" else None
    if isinstance(value, SymInt):
        return int
    if type(value) in _REAL_PYTHON:
        return type(value)
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.dtype
    return None


def _items(args: tuple, kwargs: dict) -> list | None:
    """The items ``max``/``min`` compare, when this module captures the call; else None."""
    if any(k != "default" for k in kwargs) or (kwargs and len(args) != 1):
        return None
    if len(args) == 1:
        iterable = args[0]
        if isinstance(iterable, ArrayProxy) and iterable.ndim == 1:
            items = list(iterable)  # unrolled, under the unroll limit
        elif type(iterable) in (tuple, list):
            items = list(iterable)
        else:
            return None
    else:
        items = list(args)
    if not any(isinstance(i, ArrayProxy) for i in items):
        return None
    if any(_number_type(i) is None for i in items):
        return None
    return items


def _pick(runtime: "Runtime", largest: bool, item: Any, best: Any) -> Any:
    """``item if item > best else best`` (``<`` for min), as the builtin decides it."""
    better = (lambda: item > best) if largest else (lambda: item < best)
    if not isinstance(item, ArrayProxy) and not isinstance(best, ArrayProxy):
        return item if better() else best
    tracer = runtime.tracer
    twin = _twin_type(tracer.tags, item, best)
    if twin is not None:
        return _pick_twin(tracer, better(), item, best, twin)
    kinds = _number_type(item), _number_type(best)
    if kinds[0] == kinds[1] and isinstance(kinds[0], np.dtype):
        chosen = tracer.call_op("where", (better(), item, best), {})
        return chosen if chosen.is_scalar else chosen[()]
    if kinds[0] is kinds[1] and kinds[0] in _REAL_PYTHON:
        return tracer.call_op("maximum" if largest else "minimum", (best, item), {}, python=True)
    return runtime.ifexp(better(), lambda: item, lambda: best)


def _twin_type(tags: dict, item: Any, best: Any) -> type | None:
    """The Python type ``P`` when the two items are a Python ``P`` and a NumPy scalar of its
    default dtype (``0.0`` and ``np.float64``), either of them possibly tagged (``type_tags``):
    the value chosen has one dtype and a type the data decides."""
    pytype = mixed_python_type(tags, (item, best))
    if pytype is None:
        return None
    default = default_dtype(pytype)
    dtypes = {v.dtype if isinstance(v, (ArrayProxy, np.generic)) else default for v in (item, best)}
    return pytype if dtypes == {default} else None


def _pick_twin(tracer: Any, better: Any, item: Any, best: Any, pytype: type) -> Any:
    """``item if better else best`` as a NumPy scalar, tagged with whether it is NumPy's."""
    chosen = tracer.call_op("where", (better, item, best), {})
    chosen = chosen if chosen.is_scalar else chosen[()]
    numpy = tracer.call_op("where", (better, numpy_typed(tracer.tags, item),
                                     numpy_typed(tracer.tags, best)), {})
    numpy = numpy if numpy.is_scalar else numpy[()]
    tracer.tag_value(chosen, numpy, pytype,
                     f"max/min of a Python {pytype.__name__} and a NumPy scalar returns the item "
                     "it picks, so the type depends on the data; this use of it runs in Python")
    return chosen


def extremum(runtime: "Runtime", largest: bool, args: tuple, kwargs: dict) -> Any:
    """``max(*args, **kwargs)`` (``largest``) or ``min(...)``. A size only the run knows (a
    data-bounded slice's or a mask's length) is compared as the graph value it is read as."""
    tracer = runtime.tracer
    args = tuple(tracer.sym_value(a.expr) if isinstance(a, SymInt)
                 and tracer.read_at_run_time(a.expr) else a for a in args)
    items = _items(args, kwargs)
    builtin = builtins.max if largest else builtins.min
    if not items:
        return builtin(*args, **kwargs)
    best = items[0]
    for item in items[1:]:
        best = _pick(runtime, largest, item, best)
    return best


def _converter(kind: type) -> Callable[..., Any]:
    def handler(runtime: "Runtime", *args: Any, **kwargs: Any) -> Any:
        return convert(runtime, kind, args, kwargs)
    handler.__name__ = f"capture_{kind.__name__}"
    return handler


def _extremum(largest: bool) -> Callable[..., Any]:
    def handler(runtime: "Runtime", *args: Any, **kwargs: Any) -> Any:
        return extremum(runtime, largest, args, kwargs)
    handler.__name__ = "capture_max" if largest else "capture_min"
    return handler


# builtin -> handler(runtime, *args, **kwargs), for capture/state.HANDLERS
CONVERSION_HANDLERS: dict[Any, Callable[..., Any]] = {
    **{kind: _converter(kind) for kind in (int, float, complex, bool)},
    builtins.max: _extremum(True), builtins.min: _extremum(False),
}
