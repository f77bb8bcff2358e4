"""Index bounds in loop kernels: proofs at lowering time and NumPy's checks where none exists.

NumPy raises ``IndexError`` for an integer index outside ``[-n, n)`` of its axis and wraps
negative ones; numba (without ``boundscheck``) reads and writes out of bounds, and its fancy
indexing neither checks integer arrays nor boolean masks against the axis. The structured
lowering therefore proves an integer index in bounds from its *value range* (constants, array
sizes, symbolic ones included, and the enclosing ``range`` loops) or checks it where it is used
with the helpers below, which raise NumPy's exact messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import sympy

from ...graph import Node

# inline='always': numba inlines the check at its IR level, so LLVM sees the comparison next to
# the access and hoists or folds it (hand-written numba: a 1-D stencil 2% slower checked, a
# gather 35%); an out-of-line check with this message made the same stencil 6x slower. Proofs
# still matter: a 2-D Jacobi loop nest with every access checked ran 25-40% slower.
# No `x if c else y` in it: numba's SSA pass costs (variables defined twice) x (blocks), so a
# ternary in the inlined body (one more twice-defined variable per checked access) made compile
# time grow with the square of the checked accesses (fft_loops: 2x faster to compile without it).
INDEX_HELPERS = '''
@numba.njit(inline='always')
def _ac_ix(i, n, axis):
    j = i + n * (i < 0)
    if j < 0 or j >= n:
        raise IndexError("index " + str(i) + " is out of bounds for axis " + str(axis)
                         + " with size " + str(n))
    return j


@numba.njit(cache=True)
def _ac_ix_array(ix, n, axis):
    wrap = False
    for k in range(ix.shape[0]):
        i = ix[k]
        if i < -n or i >= n:
            raise IndexError("index " + str(i) + " is out of bounds for axis " + str(axis)
                             + " with size " + str(n))
        if i < 0:
            wrap = True
    out = np.empty(ix.shape[0], np.int64)
    for k in range(ix.shape[0]):
        out[k] = ix[k] + n if wrap and ix[k] < 0 else ix[k]
    return out


@numba.njit(cache=True)
def _ac_mask(mask, n, axis):
    if mask.shape[0] != n:
        raise IndexError("boolean index did not match indexed array along axis " + str(axis)
                         + "; size of axis is " + str(n)
                         + " but size of corresponding boolean axis is " + str(mask.shape[0]))
    return mask


@numba.njit(cache=True)
def _ac_mask_check(x, mask):
    for d in range(x.ndim):
        if mask.shape[d] != x.shape[d]:
            raise IndexError("boolean index did not match indexed array along axis " + str(d)
                             + "; size of axis is " + str(x.shape[d])
                             + " but size of corresponding boolean axis is " + str(mask.shape[d]))
'''

Bound = Any  # an int or a sympy expression over size symbols
Interval = tuple[Bound, Bound]


@dataclass
class ValueRanges:
    """Known ranges of integer values: loop indices of enclosing ``range`` loops, and the
    outer value each captured placeholder of a region body stands for. ``rule``: a call node's
    range from its op's rule (``optable.value_range``; None: calls have no known range)."""

    loops: dict[Node, Interval] = field(default_factory=dict)
    outer: dict[Node, Any] = field(default_factory=dict)
    rule: Callable[["ValueRanges", Node], Interval | None] | None = None

    def of(self, value: Any) -> Interval | None:
        """``[lo, hi]`` of an integer value, or None when nothing is known."""
        if isinstance(value, (bool, np.bool_)):
            return None
        if isinstance(value, (int, np.integer)):
            return int(value), int(value)
        if not isinstance(value, Node) or value.meta is None or value.meta.ndim:
            return None
        if value in self.loops:
            return self.loops[value]
        if value in self.outer:
            return self.of(self.outer[value])
        if value.op != "call" or self.rule is None:
            return None
        return self.rule(self, value)

    def python_int_operands(self, node: Node) -> tuple[Interval, Interval] | None:
        """The ranges of a binary op's two operands when its result is a Python int (exact, so
        interval arithmetic holds; fixed-width integers may wrap: None)."""
        if node.meta is None or node.meta.pytype is not int or len(node.args) != 2:
            return None
        a, b = self.of(node.args[0]), self.of(node.args[1])
        return None if a is None or b is None else (a, b)

    def loop_index(self, controls: tuple) -> Interval | None:
        """The range of ``i`` inside ``for i in range(start, stop, step)``."""
        start, stop, step = (self.of(c) for c in controls[:3])
        if start is None or stop is None or step is None or step[0] != step[1]:
            return None
        if isinstance(step[0], int) and step[0] > 0:
            return start[0], stop[1] - 1
        if isinstance(step[0], int) and step[0] < 0:
            return stop[0] + 1, start[1]
        return None


_MASK_SET = '''
@numba.njit(cache=True)
def _ac_mask_set_{ndim}d(x, mask, v):
    # x[mask] = v with a mask of x's shape: v a scalar or one value per selected element
    _ac_mask_check(x, mask)
    vals = np.asarray(v).ravel()
    count = 0
{count_loops}
    if vals.shape[0] != count and vals.shape[0] != 1:
        raise ValueError("NumPy boolean array indexing assignment cannot assign "
                         + str(vals.shape[0]) + " input values to the " + str(count)
                         + " output values where the mask is true")
    step = 1 if vals.shape[0] != 1 else 0
    k = 0
{store_loops}
'''


_MASK_GET = '''
@numba.njit(cache=True)
def _ac_mask_get_{ndim}d(x, mask):
    # x[mask] with a mask of x's shape: the selected elements in C order (a copy, as NumPy's)
    _ac_mask_check(x, mask)
    count = 0
{count_loops}
    out = np.empty(count, x.dtype)
    k = 0
{take_loops}
    return out
'''


def mask_get_source(ndim: int) -> tuple[str, str]:
    """The name and source of the helper for ``x[mask]`` on ``ndim``-D arrays (numba's own
    ``x.ravel()[mask.ravel()]`` took 6x NumPy's time on 300x300)."""
    at = ", ".join(f"i{d}" for d in range(ndim))
    count = _nest(ndim, [f"if mask[{at}]:", "    count += 1"])
    take = _nest(ndim, [f"if mask[{at}]:", f"    out[k] = x[{at}]", "    k += 1"])
    return f"_ac_mask_get_{ndim}d", _MASK_GET.format(ndim=ndim, count_loops=count,
                                                    take_loops=take)


def _nest(ndim: int, body: list[str]) -> str:
    """``body`` inside one loop per axis of ``x`` (indices i0, i1, ...), in C order."""
    lines, pad = [], "    "
    for d in range(ndim):
        lines.append(f"{pad}for i{d} in range(x.shape[{d}]):")
        pad += "    "
    return "\n".join(lines + [pad + b for b in body])


def mask_set_source(ndim: int) -> tuple[str, str]:
    """The name and source of the helper for ``x[mask] = v`` on ``ndim``-D arrays (loops
    written out: ``np.ndindex`` in numba made a 60x60 assignment 10x slower)."""
    at = ", ".join(f"i{d}" for d in range(ndim))
    count = _nest(ndim, [f"if mask[{at}]:", "    count += 1"])
    store = _nest(ndim, [f"if mask[{at}]:", f"    x[{at}] = vals[k]", "    k += step"])
    return f"_ac_mask_set_{ndim}d", _MASK_SET.format(ndim=ndim, count_loops=count,
                                                    store_loops=store)


def whole_mask(base: Any, index: Any) -> Any:
    """The boolean array when ``index`` is one mask of ``base``'s own number of dimensions."""
    if isinstance(index, tuple):
        if len(index) != 1:
            return None
        index = index[0]
    meta = base.meta if isinstance(base, Node) else None
    if meta is None or not meta.ndim:
        return None
    if isinstance(index, np.ndarray):
        return index if index.dtype.kind == "b" and index.ndim == meta.ndim else None
    if isinstance(index, Node) and index.meta is not None and index.meta.dtype.kind == "b" \
            and index.meta.ndim == meta.ndim:
        return index
    return None


def nonnegative(value: Bound) -> bool:
    """True only when ``value >= 0`` is certain (size symbols carry their lower bounds)."""
    if isinstance(value, int):
        return value >= 0
    return bool(sympy.sympify(value).is_nonnegative)


def proven_inside(interval: Interval | None, size: Bound) -> bool:
    """Every value of ``interval`` indexes an axis of ``size`` without wrapping around or with a
    negative index that stays in bounds (``[0, n)`` or ``[-n, 0)``)."""
    if interval is None:
        return False
    lo, hi = interval
    return (nonnegative(lo) and nonnegative(size - 1 - hi)) or \
        (nonnegative(-1 - hi) and nonnegative(size + lo))


@dataclass
class CheckedIndices:
    """Index checks already emitted, per block of the structured function: an index value
    checked against an axis size once (``ix = _ac_ix(i, n, axis)``) is reused by every later
    access in that block and the blocks nested in it, so a loop body checks each index
    expression once per iteration, not once per use. Same value and same size give the same
    result, and the first check raises NumPy's IndexError before any later access runs."""

    scopes: list[dict[tuple, str]] = field(default_factory=lambda: [{}])

    def get(self, value: Any, size: Bound) -> str | None:
        for scope in reversed(self.scopes):
            if (value, size) in scope:
                return scope[(value, size)]
        return None

    def add(self, value: Any, size: Bound, name: str) -> None:
        self.scopes[-1][(value, size)] = name

    def enter(self) -> None:
        """A nested block starts (a loop body, a branch): its checks stay inside it."""
        self.scopes.append({})

    def leave(self) -> None:
        self.scopes.pop()
