"""Which graph ops may set a floating-point flag: NumPy reports it as a warning (or a
``FloatingPointError``, or an ``np.errstate(call=...)`` handler call) per ufunc call, so such an
op is an effect as well as a value. Common-subexpression elimination must not merge two of them
(the plain call warns twice) and dead-code elimination must not drop one (the plain call warns).

The rule is conservative: an op may warn unless it provably cannot, whatever its values are:
views, creations, literals, comparisons, selections (``np.where``: ``OpDef.fp_quiet`` "fc"),
widening copies and casts, NaN-propagating or arg reductions, boolean reductions, and the ufuncs
that never compute a new float value (``fp_quiet`` "f": sign changes, rounding to integers,
max/min, classification). Integer floor division, remainder and power warn (or raise) on zero
divisors and negative exponents (``OpDef.integer_division``); NumPy integer scalars warn on
overflow. Every fact about an op is a field of its ``OpDef`` (``ops/*.py``): this module names
no op.
"""

from __future__ import annotations

import sys
from types import BuiltinFunctionType, CodeType, FrameType
from typing import Any, Iterator

import numpy as np

from ..graph import Node
from ..ops import REGISTRY
from ..source.origins import user_location
from .proxy import ArrayProxy

def _operand_dtypes(node: Node) -> Iterator[np.dtype | None]:
    """The dtypes of the node's operands (``None``: not known at capture)."""
    for value in (*node.args, *node.kwargs.values()):
        if isinstance(value, Node):
            yield None if value.meta is None else np.dtype(value.meta.dtype)
        elif isinstance(value, (np.ndarray, np.generic)):
            yield value.dtype
        elif isinstance(value, (bool, int)):
            continue  # a weak Python operand: the array's dtype decides
        elif isinstance(value, (float, complex)):
            yield np.dtype(type(value))


def _kinds(node: Node) -> set[str] | None:
    """Dtype kinds of the node's result and operands; ``None`` when some is not known."""
    kinds: set[str] = set()
    if node.meta is not None:
        kinds.add(np.dtype(node.meta.dtype).kind)
    for dtype in _operand_dtypes(node):
        if dtype is None:
            return None
        kinds.add(dtype.kind)
    return kinds


def _widening_copy(node: Node) -> bool:
    """A copy or cast (template ``{0}``) of an operand that casts safely to the result."""
    source = node.args[0] if node.args else None
    if node.meta is None or not isinstance(source, Node) or source.meta is None:
        return False
    return bool(np.can_cast(source.meta.dtype, node.meta.dtype, "safe"))


def may_set_fp_flags(node: Node) -> bool:
    """Whether running ``node`` may make NumPy warn (or raise) about a floating-point flag."""
    if node.op != "call":
        return False
    op = REGISTRY.ops.get(node.target)
    if op is None:
        return True
    if op.kind in ("view", "creation") or op.comparison or op.literal or op.fp_quiet == "fc":
        return False
    if op.scalar == "{0}":
        return not _widening_copy(node)
    reduction: Any = op.reduction
    if reduction is not None and (reduction.propagate_nan or reduction.arg or (
            node.meta is not None and np.dtype(node.meta.dtype).kind == "b")):
        return False
    if op.integer_division:
        return True
    kinds = _kinds(node)
    if kinds is None:
        return True
    if kinds & {"f", "c"}:
        return bool(kinds & {"f", "c"} - set(op.fp_quiet))
    if reduction is not None or op.kind != "pointwise":
        return False
    meta = node.meta  # NumPy integer scalars warn on overflow ("... encountered in scalar add")
    return meta is not None and meta.scalar and meta.pytype is None \
        and np.dtype(meta.dtype).kind in "iu"


def may_raise(node: Node) -> bool:
    """Whether running ``node`` may raise an error that is not a floating-point one on some
    run-time values (``OpDef.may_raise``: an index out of bounds): the plain call raises even
    when the value is unused, so dead-code elimination keeps it."""
    if node.op != "call":
        return False
    op = REGISTRY.ops.get(node.target)
    return op is not None and op.may_raise is not None and op.may_raise(node.args, node.kwargs)


def _method_code() -> CodeType:
    """The code of the traced ndarray method (``ArrayProxy.__getattr__``'s ``method``)."""
    return next(c for c in ArrayProxy.__getattr__.__code__.co_consts
                if isinstance(c, CodeType) and c.co_name == "method")


_METHOD = _method_code()


def _called_method(frames: list[FrameType]) -> str | None:
    """The ndarray method the user called, when ``frames`` (the tracer's, innermost first, up
    to the user's) hold the traced method's frame of the op being recorded and its NumPy
    reference is a Python function: NumPy's warnings come from where that method runs (the
    user's line for ``x.astype``, NumPy's ``_methods.py`` for ``x.sum``), so a backend calls
    the method itself there (``lower/places.py``). Ufuncs warn from the user's line anyway."""
    methods = [f for f in frames if f.f_code is _METHOD]
    if not frames or not methods:
        return None
    op = methods[0].f_locals.get("op")
    if op is None or frames[0].f_locals.get("op") is not op or not op.methods \
            or isinstance(op.impl, (np.ufunc, BuiltinFunctionType)):
        return None
    return op.methods[0]


def user_place() -> tuple | None:
    """(file, line, module globals[, method]) of the innermost user line running on this
    thread: where the plain call's NumPy warnings come from (its module's
    ``__warningregistry__`` and ``__name__`` decide Python's once-per-location filter and
    ``filterwarnings(module=...)``); ``method``: the op was called as that ndarray method."""
    frame, inner = sys._getframe(1), []
    while frame is not None:
        location = user_location(frame)
        if location is not None:
            method = _called_method(inner)
            place = location[0], location[1], frame.f_globals
            return place if method is None else (*place, method)
        inner.append(frame)
        frame = frame.f_back
    return None


__all__ = ["may_raise", "may_set_fp_flags", "user_place"]
