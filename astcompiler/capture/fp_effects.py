"""Which graph ops may set a floating-point flag: NumPy reports it as a warning (or a
``FloatingPointError``, or an ``np.errstate(call=...)`` handler call) per ufunc call, so such an
op is an effect as well as a value. Common-subexpression elimination must not merge two of them
(the plain call warns twice) and dead-code elimination must not drop one (the plain call warns).

The rule is conservative: an op may warn unless it provably cannot, whatever its values are:
views, creations, literals, comparisons, selections (``np.where``), widening copies and casts,
NaN-propagating or arg reductions, boolean reductions, and the ufuncs below that never compute
a new float value (sign changes, rounding to integers, max/min, classification). Integer floor
division, remainder and power warn (or raise) on zero divisors and negative exponents; NumPy
integer scalars warn on overflow.
"""

from __future__ import annotations

import sys
from typing import Any, Iterator

import numpy as np

from ..graph import Node
from ..ops import REGISTRY
from ..source.origins import user_location

# ufuncs that never raise an FP flag on real (not complex) operands of their own dtype
QUIET_UFUNCS = frozenset({
    np.negative, np.positive, np.absolute, np.fabs, np.conjugate, np.copysign, np.signbit,
    np.isnan, np.isinf, np.isfinite, np.sign, np.maximum, np.minimum, np.fmax, np.fmin,
    np.floor, np.ceil, np.trunc, np.rint, np.logical_and, np.logical_or, np.logical_xor,
    np.logical_not,
})
# integer ufuncs that warn on a zero divisor (or raise on a negative exponent)
INTEGER_DIVISIONS = frozenset({np.floor_divide, np.remainder, np.divmod, np.fmod, np.power})


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
    if op.kind in ("view", "creation") or op.comparison or op.literal or op.impl is np.where:
        return False
    if op.scalar == "{0}":
        return not _widening_copy(node)
    reduction: Any = op.reduction
    if reduction is not None and (reduction.propagate_nan or reduction.arg or (
            node.meta is not None and np.dtype(node.meta.dtype).kind == "b")):
        return False
    if op.ufunc in INTEGER_DIVISIONS:
        return True
    kinds = _kinds(node)
    if kinds is None:
        return True
    if kinds & {"f", "c"}:
        return not (op.ufunc in QUIET_UFUNCS and "c" not in kinds)
    if reduction is not None or op.kind != "pointwise":
        return False
    meta = node.meta  # NumPy integer scalars warn on overflow ("overflow encountered in scalar add")
    return meta is not None and meta.scalar and meta.pytype is None \
        and np.dtype(meta.dtype).kind in "iu"


def user_place() -> tuple[str, int, dict] | None:
    """(file, line, module globals) of the innermost user line running on this thread: where
    the plain call's NumPy warnings come from (its module's ``__warningregistry__`` and
    ``__name__`` decide Python's once-per-location filter and ``filterwarnings(module=...)``)."""
    frame = sys._getframe(1)
    while frame is not None:
        location = user_location(frame)
        if location is not None:
            return location[0], location[1], frame.f_globals
        frame = frame.f_back
    return None


__all__ = ["may_set_fp_flags", "user_place", "QUIET_UFUNCS", "INTEGER_DIVISIONS"]
