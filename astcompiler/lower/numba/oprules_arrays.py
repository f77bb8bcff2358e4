"""Numba loop rules of indexing, stores, creation, views and array manipulation.

Each rule writes its op in a structured function as a numba user writes NumPy, where numba's
function computes what NumPy's does (``np.zeros``, ``np.transpose``, slices), or calls a helper
of ``region_ops`` where it does not (ranges, rolls, scans, masks). Indices go through the
emitter's ``index`` (bounds proven or checked, ``bounds.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...graph import Node
from .bounds import (INDEX_HELPERS, Interval, ValueRanges, mask_get_source, mask_set_source,
                     whole_mask)
from .loop_layouts import IMPORT as LAYOUTS_IMPORT
from .oprules_common import (NOT_MINE, LoopEmitter, LoopRule, NotLowerable, dtype_of,
                             number_kind, number_source, python_kind, representative,
                             view_or_copy_unobservable)
from .region_ops import RESHAPE, arange_source, linspace_source, roll_source, scan_source
from .scalar import ScalarRule, kernel_dtype, type_name

# -- indexing and stores ---------------------------------------------------------------------------


def getitem_loop(emitter: LoopEmitter, node: Node) -> str:
    """``a[index]``: basic and one advanced index as numba takes them; a whole boolean mask of
    a multi-dimensional array through ``_ac_mask_get``; an item of a tuple-valued node."""
    base, index = node.args[0], node.args[1]
    if isinstance(base, Node) and base.op == "region":
        raise NotLowerable("region results are bound directly")
    if isinstance(base, Node) and base.meta is None:  # a tuple-valued node
        return f"{emitter.value(base)}[{index}]"
    if index == () and isinstance(base, Node) and base.meta is not None \
            and base.meta.ndim == 0:  # x[()] of a scalar: a numba scalar already
        return emitter.value(base)
    mask = whole_mask(base, index)
    if mask is not None and base.meta.ndim > 1:  # numba takes 1-D masks only
        helper, source = mask_get_source(base.meta.ndim)
        emitter.helpers.add(INDEX_HELPERS)
        emitter.helpers.add(source)
        return f"{helper}({emitter.value(base)}, {emitter.value(mask)})"
    return f"{emitter.value(base)}[{emitter.index(base, index)}]"


@dataclass(frozen=True)
class GatherRule(ScalarRule):
    """``x[idx]`` element by element in a fused kernel: argument ``table`` (``x``, a 1-D array
    the kernel is handed whole) read at the element of the integer index array ``idx``, which
    is the kernel's operand and has the result's shape (``plan.build_plan(gathers=True)``).
    The index is checked as NumPy checks it (``_ac_gather``: negative ones wrap, others out of
    bounds raise NumPy's ``IndexError``), so no gathered temporary is written and read again."""

    table: int = 0


def gather_rule(node: Node) -> GatherRule | None:
    """The gather rule of ``x[idx]`` (``NumbaRule.gather``): ``x`` a computed or input 1-D
    array, ``idx`` a 1-D array of signed integers (or unsigned ones narrower than 64 bits, which
    int64 holds), no keywords; None otherwise (NumPy gathers)."""
    if len(node.args) != 2 or node.kwargs:
        return None
    base, index = node.args
    if not (isinstance(base, Node) and base.op != "region" and base.meta is not None
            and base.meta.ndim == 1 and not base.meta.scalar and kernel_dtype(base.meta.dtype)
            and node.meta is not None and np.dtype(node.meta.dtype) == np.dtype(base.meta.dtype)):
        return None
    if not (isinstance(index, Node) and index.meta is not None and index.meta.ndim == 1
            and not index.meta.scalar and kernel_dtype(index.meta.dtype)):
        return None
    kind, size = np.dtype(index.meta.dtype).kind, np.dtype(index.meta.dtype).itemsize
    if not (kind == "i" or (kind == "u" and size < 8)) or index is base:
        return None
    return GatherRule((None, np.dtype(np.int64)), "{0}[_ac_gather({1}, {0}.shape[0])]",
                      np.dtype(base.meta.dtype), ("gather",), operands=(1,), table=0)


ASSIGN_CHECK = '''
@numba.njit(cache=True)
def _ac_shape_text(shape):
    text = "("
    for k in range(len(shape)):
        text += ("," if k else "") + str(shape[k])
    return text + ("," if len(shape) == 1 else "") + ")"


@numba.njit(cache=True)
def _ac_assign_check(view, value):
    # NumPy's ValueError for a value that does not broadcast into the view it is stored in
    nv, nd = value.ndim, view.ndim
    for k in range(nv):
        size = value.shape[nv - 1 - k]
        if size != 1 and (k >= nd or size != view.shape[nd - 1 - k]):
            raise ValueError("could not broadcast input array from shape "
                             + _ac_shape_text(value.shape) + " into shape "
                             + _ac_shape_text(view.shape))
'''


def setitem_loop(emitter: LoopEmitter, node: Node) -> None:
    """``a[index] = value``: the value read before the write when it may share memory; an
    array value into a view is checked first (NumPy's ValueError, not numba's)."""
    dst, index, value = node.args
    raw = emitter.value(value, dst.meta.dtype if isinstance(dst, Node) and dst.meta else None)
    src = f"{raw}.copy()" if emitter.may_alias(value) else raw  # NumPy reads it before writing
    mask = whole_mask(dst, index)
    if mask is not None:  # NumPy's checks of the mask's shape and the value's length
        helper, source = mask_set_source(dst.meta.ndim)
        emitter.helpers.add(INDEX_HELPERS)
        emitter.helpers.add(source)
        emitter.statement(f"{helper}({emitter.value(dst)}, {emitter.value(mask)}, {src})", node)
        return None
    checked = store_check(dst, value)
    if checked is not None:  # NumPy's scalar store: in the destination's bounds, or an error
        emitter.helpers.add(checked[1])
        src = f"{checked[0]}({src})"
    where = emitter.index(dst, index)
    if _array_into_view(dst, index, value):
        emitter.helpers.add(ASSIGN_CHECK)
        emitter.statement(f"_ac_assign_check({emitter.value(dst)}[{where}], {raw})", node)
    emitter.statement(f"{emitter.value(dst)}[{where}] = {src}", node)
    return None


STORE_CHECK = """
from astcompiler.lower.numba.runtime import StoreNaN, StoreOverflow


@numba.njit(cache=True)
def _ac_store_{dst}_{src}(v):
    # NumPy's store of a scalar into a {dst} array: in its bounds, or NumPy's error
{body}    return v
"""

_FLOAT_STORE = """    if v != v:
        raise StoreNaN("cannot convert float NaN to integer")
    if v == np.inf or v == -np.inf:
        raise StoreOverflow("cannot convert float infinity to integer")
    t = np.trunc(v)
    if t < {low} or t > {high}:
        raise StoreOverflow("Python integer " + str(np.int64(t)) + " out of bounds for {dst}")
"""

_INT_STORE = """    if v < {low} or v > {high}:
        raise StoreOverflow("Python integer " + str(v) + " out of bounds for {dst}")
"""


_HUGE_STORE = """    if v > 9223372036854775807:
        raise StoreOverflow("Python int too large to convert to C long")
"""


def store_check(dst: Any, value: Any) -> tuple[str, str] | None:
    """``a[i] = v`` of a scalar ``v`` into an integer array whose range may not hold it: NumPy 2
    converts a Python int (a loop index), and any scalar stored into a signed array (a wider
    integer, a float, truncated), through a Python int and raises OverflowError out of bounds
    (a NaN: ValueError), never wraps; a NumPy scalar into an unsigned array is cast (it wraps).
    The checking helper's name and source, or None where every value fits."""
    if not (isinstance(dst, Node) and dst.meta is not None
            and np.dtype(dst.meta.dtype).kind in "iu"):
        return None
    target = np.dtype(dst.meta.dtype)
    if isinstance(value, Node):
        meta = value.meta
        if meta is None or meta.ndim != 0:
            return None
        source = np.dtype(np.int64) if meta.pytype is int else (
            np.dtype(np.float64) if meta.pytype is float else np.dtype(meta.dtype))
    elif isinstance(value, (bool, np.bool_)):
        return None
    elif isinstance(value, (int, np.integer)):
        info = np.iinfo(target)
        if info.min <= int(value) <= info.max:
            return None
        source = np.dtype(np.int64)
    elif isinstance(value, (float, np.floating)):
        source = np.dtype(np.float64)
    else:
        return None
    python_int = isinstance(value, (int, np.integer)) and not isinstance(value, Node) or (
        isinstance(value, Node) and value.meta.pytype is int)
    if source.kind not in "iuf" or (source.kind in "iu" and np.can_cast(source, target, "safe")):
        return None
    if target.kind == "u" and not python_int:
        return None  # NumPy casts a NumPy scalar into an unsigned array (it wraps)
    info = np.iinfo(target)
    body = (_FLOAT_STORE if source.kind == "f" else _INT_STORE).format(
        low=int(info.min), high=int(info.max), dst=target.name)
    if source == np.dtype(np.uint64):  # (numba compares uint64 with a negative bound as floats)
        body = _HUGE_STORE + body.replace(f"v < {int(info.min)} or ", "")
    name = f"_ac_store_{target.name}_{source.name}"
    return name, STORE_CHECK.format(dst=target.name, src=source.name, body=body)


def _array_into_view(dst: Any, index: Any, value: Any) -> bool:
    """An array value stored into a basic-index view with at least one axis."""
    if not (isinstance(value, Node) and value.meta is not None and value.meta.ndim > 0
            and isinstance(dst, Node) and dst.meta is not None):
        return False
    items = index if isinstance(index, tuple) else (index,)
    ints = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, slice):
            continue
        if isinstance(item, (list, np.ndarray)) or (isinstance(item, Node) and (
                item.meta is None or item.meta.ndim > 0)):
            return False  # advanced indexing: numba's own rules
        ints += 1
    return dst.meta.ndim - ints + sum(1 for item in items if item is None) > 0


def copy_into_loop(emitter: LoopEmitter, node: Node) -> None:
    """``dst[...] = src`` of an in-place operator or ``out=``."""
    dst, src = node.args[:2]
    ndim = dst.meta.ndim if isinstance(dst, Node) and dst.meta is not None else 0
    if ndim == 0:
        raise NotLowerable("in-place update of a 0-d array")
    value = emitter.value(src, dst.meta.dtype)
    if emitter.may_alias(src):
        value = f"{value}.copy()"
    emitter.statement(f"{emitter.value(dst)}[...] = {value}", node)
    return None


def dim_size_loop(emitter: LoopEmitter, node: Node) -> str:
    """``a.shape[d]``."""
    return f"{emitter.value(node.args[0])}.shape[{node.args[1]}]"


# -- creation --------------------------------------------------------------------------------------


def scalar_loop(emitter: LoopEmitter, node: Node) -> str:
    """A scalar constant: a Python number, or a NumPy scalar of the node's dtype."""
    value, meta = node.args[0], node.meta
    if meta is not None and meta.pytype is not None:
        return number_source(meta.pytype(value))
    return emitter.value(np.asarray(value, meta.dtype)[()] if meta is not None else value)


def constant_loop(emitter: LoopEmitter, node: Node) -> str:
    """An array constant: a fresh copy, since code may write into it."""
    return f"{emitter.value(node.args[0])}.copy()"


def filled(function: str) -> LoopRule:
    """``np.zeros``/``np.ones``/``np.empty`` (``function``) of a shape in the node's dtype."""
    def rule(emitter: LoopEmitter, node: Node) -> str:
        args, kwargs = node.args, node.kwargs
        shape = args[0] if args else kwargs.get("shape")
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        return f"{function}({emitter.value(shape)}, {type_name(node.meta.dtype)})"
    return rule


def filled_like(function: str, fill: str | None) -> LoopRule:
    """``np.zeros_like`` & co.: ``function`` of the argument's shape in the node's dtype; an
    argument of two or more dims gives its layout (``order="K"``: ``loop_layouts``), filled
    with ``fill`` (None: ``np.empty_like``)."""
    def rule(emitter: LoopEmitter, node: Node) -> Any:
        order = node.kwargs.get("order", "K")
        if node.kwargs.get("shape") or order not in ("K", "C"):
            return NOT_MINE
        arg, dtype = node.args[0], type_name(node.meta.dtype)
        if isinstance(arg, Node) and arg.meta is not None and arg.meta.ndim == 0:
            return f"{function}((), {dtype})"  # a scalar has no .shape
        value = emitter.value(arg)
        if order == "C" or not isinstance(arg, Node) or arg.meta is None or arg.meta.ndim < 2:
            return f"{function}({value}.shape, {dtype})"
        emitter.helpers.add(LAYOUTS_IMPORT)
        if fill is None:
            return f"empty_following({value}.shape, {dtype}, ({value},))"
        return f"filled_following({value}.shape, {dtype}, ({value},), {fill})"
    return rule


def full_loop(emitter: LoopEmitter, node: Node) -> Any:
    """``np.full(shape, value)`` (C order) of a scalar fill value."""
    if node.kwargs.get("order", "C") != "C":
        return NOT_MINE
    dtype, args = type_name(node.meta.dtype), node.args
    shape = args[0] if isinstance(args[0], tuple) else (args[0],)
    if isinstance(args[1], Node) and (args[1].meta is None or args[1].meta.ndim):
        raise NotLowerable("full with an array fill value")
    return f"np.full({emitter.value(tuple(shape))}, {dtype}({emitter.value(args[1])}), {dtype})"


def eye_loop(emitter: LoopEmitter, node: Node) -> Any:
    """``np.eye(n, m, k)`` (C order)."""
    if node.kwargs.get("order", "C") != "C":
        return NOT_MINE
    n, m, k = (emitter.value(a) for a in node.args[:3])
    return f"np.eye({n}, {m}, {k}, {type_name(node.meta.dtype)})"


def identity_loop(emitter: LoopEmitter, node: Node) -> Any:
    """``np.identity(n)``."""
    if node.kwargs.get("order", "C") != "C":
        return NOT_MINE
    return f"np.identity({emitter.value(node.args[0])}, {type_name(node.meta.dtype)})"


def _scalar_bounds(emitter: LoopEmitter, node: Node) -> tuple[list[str], np.dtype]:
    result = np.dtype(node.meta.dtype)
    if any(isinstance(a, Node) and (a.meta is None or a.meta.ndim) for a in node.args) \
            or result.kind not in "iufc":
        raise NotLowerable(f"{node.target} of arrays or of {result.name}")
    return [emitter.value(a) for a in node.args], result


def arange_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.arange`` of scalar bounds, filled as NumPy fills it (``region_ops.arange_source``)."""
    bounds, result = _scalar_bounds(emitter, node)
    name = f"_ac_arange_{result.name}"
    emitter.helpers.add(arange_source(name, result))
    return f"{name}({', '.join(bounds)})"


def linspace_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.linspace`` of scalar bounds, in NumPy's working dtype (``linspace_source``)."""
    bounds, result = _scalar_bounds(emitter, node)
    work = np.result_type(*(representative(a) for a in node.args[:2]), 1.0)
    name = f"_ac_linspace_{work.name}_{result.name}"
    emitter.helpers.add(linspace_source(name, work, result))
    return f"{name}({', '.join(bounds)}, {bool(node.kwargs.get('endpoint', True))})"


# -- views -----------------------------------------------------------------------------------------


def part(attribute: str) -> LoopRule:
    """``a.real`` / ``a.imag`` (``attribute``): views of complex arrays in numba too; the real
    part of a real value is the value, its imaginary part of a scalar 0."""
    def rule(emitter: LoopEmitter, node: Node) -> str:
        a, meta = node.args[0], node.meta
        kind = np.dtype(a.meta.dtype).kind if isinstance(a, Node) and a.meta else "?"
        if kind == "c" or (meta.pytype is not None and python_kind(a) is complex):
            return f"{emitter.value(a)}.{attribute}"
        if attribute == "real" and kind in "biuf":
            return emitter.value(a)
        if attribute == "imag" and kind in "biuf" and meta.ndim == 0:
            return "0"
        raise NotLowerable(f"{node.target} of a {kind!r} array")  # NumPy: a read-only array
    return rule


def transpose_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.transpose(a, axes)``: a view, as NumPy's."""
    return f"np.transpose({emitter.value(node.args[0])}, {emitter.value(tuple(node.args[1]))})"


def reshape_loop(emitter: LoopEmitter, node: Node) -> Any:
    """``a.reshape(shape)`` where whether it is a view or a copy cannot be observed."""
    if node.kwargs or not isinstance(node.args[0], Node):
        return NOT_MINE
    if not view_or_copy_unobservable(node, emitter.graph):
        raise NotLowerable("reshape whose view or copy could be observed")
    emitter.helpers.add(RESHAPE)
    return f"_ac_reshape({emitter.value(node.args[0])}, {emitter.value(tuple(node.args[1]))})"


def flipped(axes: tuple[int, ...] | None) -> LoopRule:
    """``np.flip`` (``axes`` None: the node's axes argument), ``fliplr``, ``flipud``: a view
    with negative strides, as NumPy's."""
    def rule(emitter: LoopEmitter, node: Node) -> Any:
        meta = node.meta
        if not isinstance(node.args[0], Node) or not meta.ndim:
            return NOT_MINE
        flip = node.args[1] if axes is None else axes
        steps = ", ".join("::-1" if d in flip else ":" for d in range(meta.ndim))
        return f"{emitter.value(node.args[0])}[{steps}]"
    return rule


# -- manipulation ----------------------------------------------------------------------------------


def concatenate_loop(emitter: LoopEmitter, node: Node) -> Any:
    """``np.concatenate`` along an axis, each part cast to the result dtype."""
    axis = node.kwargs.get("axis")
    if axis is None:
        return NOT_MINE
    like = np.dtype(node.meta.dtype)
    parts = ", ".join(emitter.value(a) if dtype_of((a,)) == like else
                      f"{emitter.value(a)}.astype({type_name(like)})" for a in node.args[0])
    return f"np.concatenate(({parts},), axis={axis})"


def roll_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.roll`` by an int along one axis (or of a vector)."""
    (a, shift), axis = node.args[:2], node.kwargs.get("axis", node.args[2] if len(
        node.args) > 2 else None)
    if not isinstance(a, Node) or a.meta is None or a.meta.ndim == 0 \
            or number_kind(shift) not in "iu" or not (axis is None and a.meta.ndim == 1
                                                      or isinstance(axis, int)):
        raise NotLowerable("roll by a tuple or of a flattened array")
    axis = 0 if axis is None else axis
    name = f"_ac_roll_{a.meta.ndim}d_axis{axis}"
    emitter.helpers.add(roll_source(name, a.meta.ndim, axis))
    return f"{name}({emitter.value(a)}, {emitter.value(shift)})"


def triangle(function: str) -> LoopRule:
    """``np.tril``/``np.triu`` (``function``) of a matrix: numba's, a fresh C-ordered copy."""
    def rule(emitter: LoopEmitter, node: Node) -> Any:
        a = node.args[0]
        if not isinstance(a, Node) or a.meta is None or a.meta.ndim != 2 or node.kwargs:
            return NOT_MINE
        return f"{function}({emitter.value(a)}, {emitter.value(node.args[1])})"
    return rule


def scan(combine: str) -> LoopRule:
    """``np.cumsum`` (``combine`` ``+``) / ``np.cumprod`` (``*``) of a vector or flattened."""
    def rule(emitter: LoopEmitter, node: Node) -> Any:
        a, axis = node.args[0], node.kwargs.get("axis")
        if axis not in (None, 0) or not isinstance(a, Node) or a.meta is None \
                or not (a.meta.ndim == 1 or axis is None):
            return NOT_MINE
        result = np.dtype(node.meta.dtype)
        name = f"_ac_{node.target}_{result.name}"
        emitter.helpers.add(scan_source(name, combine, result))
        return f"{name}({emitter.value(a)})"
    return rule


# -- value ranges (``NumbaRule.value_range``: index-bound proofs) ----------------------------------


def scalar_range(ranges: ValueRanges, node: Node) -> Interval | None:
    """A literal's (or a wrapped value's) range: its argument's."""
    return ranges.of(node.args[0]) if node.args else None


def dim_size_range(ranges: ValueRanges, node: Node) -> Interval | None:
    """``x.shape[k]``: the traced size (a symbol for a dynamic one)."""
    array = node.args[0] if node.args else None
    if not isinstance(array, Node) or array.meta is None:
        return None
    size = array.meta.shape[node.args[1]]
    return size, size
