"""Graphs with control-flow regions: one ``njit`` function with real loops and branches.

Regions (``for_range``, ``while_loop``, ``cond``) become ``for``/``while``/``if`` statements, their
loop-carried values become local variables, and every op becomes one statement written the way a
numba user writes NumPy code (element access, slices, ufuncs on arrays and scalars). Ops numba
does not spell as NumPy computes them get small njit helpers (``region_ops.py``: reductions with
axes, linspace/arange, dot without SciPy's BLAS, outer, roll, scans). An op with no lowering raises
NotLowerable: its region becomes a host loop, never a wrong answer. Scalars are cast to their node's dtype after each op, so fixed-width integer arithmetic
wraps as NumPy's does, and Python scalars (loop indices, counters) stay 64-bit ints or floats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ...graph import Graph, Node
from ...ops import REGISTRY
from ..base import CompiledGraph
from .bounds import (INDEX_HELPERS, ValueRanges, mask_get_source, mask_set_source,
                     proven_inside, whole_mask)
from .region_ops import (CONTRACTIONS, OUTER, arange_source, linspace_source, reduction_source,
                         roll_source, scan_source, scipy_blas)
from .optable import (CHECKED_INT_OPS, INFIX_ARITHMETIC, INFIX_BITWISE, INFIX_COMPARE,
                      REDUCTION_CALLS, TREE_NON_UFUNCS)
from .scalar import python_int_bounds


class NotLowerable(Exception):
    """The graph has an op this lowering does not handle (it then runs with NumPy)."""


HELPERS = ''  # helpers every structured kernel needs (each op adds its own to ``helpers``)

CHECKED = '''
_AC_MAX = 9223372036854775807
_AC_MIN = -9223372036854775808


@numba.njit(cache=True)
def _ac_add_int(a, b):
    # bounds checked before the operation: signed overflow is undefined for the optimizer
    if (b > 0 and a > _AC_MAX - b) or (b < 0 and a < _AC_MIN - b):
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a + b


@numba.njit(cache=True)
def _ac_subtract_int(a, b):
    if (b < 0 and a > _AC_MAX + b) or (b > 0 and a < _AC_MIN + b):
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a - b


@numba.njit(cache=True)
def _ac_multiply_int(a, b):
    if a != 0 and b != 0:
        if a == _AC_MIN or b == _AC_MIN or abs(a) > _AC_MAX // abs(b):
            raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a * b
'''

PYTHON_SCALARS = '''
_AC_EXACT = 9007199254740992  # 2 ** 53: ints up to this convert to float exactly


@numba.njit(cache=True)
def _ac_py_compare_int_float(a, b):
    # Python orders an int and a float exactly; float(a) may round, so a tie is decided on ints.
    # -1: a < b, 0: a == b, 1: a > b, 2: b is NaN (unordered)
    fa = float(a)
    if fa < b:
        return -1
    if fa > b:
        return 1
    if fa != b:
        return 2
    if b >= 9.2233720368547758e18:  # 2 ** 63: above every 64-bit int
        return -1
    ib = int(b)
    return -1 if a < ib else (1 if a > ib else 0)


@numba.njit(cache=True)
def _ac_py_floor_divide_int(a, b):
    if b == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    if b == -1 and a == _AC_MIN:
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a // b


@numba.njit(cache=True)
def _ac_py_remainder_int(a, b):
    if b == 0:
        raise ZeroDivisionError("integer modulo by zero")
    if b == -1:
        return 0
    return a % b


@numba.njit(cache=True)
def _ac_py_divide_int(a, b):
    # int / int: Python rounds the exact quotient once; exact here while both fit in 53 bits
    if b == 0:
        raise ZeroDivisionError("division by zero")
    if abs(a) > _AC_EXACT or abs(b) > _AC_EXACT:
        raise OverflowError("a Python int too large for an exact float division")
    return float(a) / float(b)


@numba.njit(cache=True)
def _ac_py_negative_int(a):
    if a == _AC_MIN:
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return -a


@numba.njit(cache=True)
def _ac_py_absolute_int(a):
    if a == _AC_MIN:
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return abs(a)


@numba.njit(cache=True)
def _ac_py_right_shift_int(a, b):
    if b < 0:
        raise ValueError("negative shift count")
    if b > 63:
        return -1 if a < 0 else 0
    return a >> b


@numba.njit(cache=True)
def _ac_py_left_shift_int(a, b):
    if b < 0:
        raise ValueError("negative shift count")
    if a == 0:
        return 0
    if b > 62 or ((a << b) >> b) != a:  # the bits shifted out must be copies of the sign
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a << b


@numba.njit(cache=True)
def _ac_py_power_int(a, b):
    result = 1
    base = a
    e = b
    while e > 0:
        if e & 1:
            result = _ac_multiply_int(result, base)
        e = e >> 1
        if e > 0:
            base = _ac_multiply_int(base, base)
    return result


@numba.njit(cache=True)
def _ac_py_divide(a, b):
    if b == 0.0:
        raise ZeroDivisionError("float division by zero")
    return a / b


@numba.njit(cache=True)
def _ac_py_floor_divide(a, b):
    # Python's float_divmod (CPython floatobject.c)
    if b == 0.0:
        raise ZeroDivisionError("float floor division by zero")
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0.0 and (b < 0.0) != (mod < 0.0):
        div -= 1.0
    if div != 0.0:
        floordiv = np.floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
        return floordiv
    return np.copysign(0.0, a / b)


@numba.njit(cache=True)
def _ac_py_remainder(a, b):
    if b == 0.0:
        raise ZeroDivisionError("float modulo")
    mod = np.fmod(a, b)
    if mod != 0.0:
        if (b < 0.0) != (mod < 0.0):
            mod += b
        return mod
    return np.copysign(0.0, b)


@numba.njit(cache=True)
def _ac_py_power(a, b):
    if a == 0.0 and b < 0.0:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    if a < 0.0 and np.isfinite(b) and b != np.floor(b):
        raise OverflowError("a negative float to a fractional power is complex in Python")
    r = a ** b
    if np.isinf(r) and np.isfinite(a) and np.isfinite(b):
        raise OverflowError("float power out of range")  # Python raises: the graph reruns
    return r


@numba.njit(cache=True)
def _ac_py_round(a):
    if not np.isfinite(a) or abs(a) >= 9.2e18:
        raise OverflowError("round() of a float outside 64 bits")  # Python decides: rerun
    return int(np.rint(a))
'''

_PY_COMPLEX = '''

@numba.njit(cache=True)
def _ac_py_abs_complex(z):
    r = abs(z)
    if np.isinf(r) and np.isfinite(z.real) and np.isfinite(z.imag):
        raise OverflowError("absolute value too large")  # Python raises: the graph reruns
    return r
'''

_PY_CONVERSIONS = '''

@numba.njit(cache=True)
def _ac_py_int_float(x):
    if x != x:
        raise ValueError("cannot convert float NaN to integer")
    if not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        raise OverflowError("int() of a float outside 64 bits")  # Python decides: rerun
    return int(x)


@numba.njit(cache=True)
def _ac_py_int_uint64(x):
    if x > numba.uint64(9223372036854775807):
        raise OverflowError("int() of a uint64 outside int64")  # Python decides: rerun
    return numba.int64(x)
'''

_FITS = '''
@numba.njit(cache=True)
def _ac_fits_{dtype}(v):
    if v < {low} or v > {high}:
        raise OverflowError("a Python int out of bounds for {dtype}")
    return v
'''

_PY_COMPARE = INFIX_COMPARE
_PY_BITWISE = INFIX_BITWISE
_PY_FLOAT_INFIX = INFIX_ARITHMETIC

_CHECKED_INT_OPS = CHECKED_INT_OPS  # with an overflow-checked helper _ac_<op>_int
# ops whose NumPy spelling on int64 computes Python's result on Python ints (``OpDef.python_int``)
_UNCHECKED_INT_OPS = frozenset(n for n, op in REGISTRY.ops.items() if op.python_int == "exact")

_RESHAPE = '''
@numba.njit(cache=True)
def _ac_reshape(a, shape):
    # NumPy: a view when the layout allows, else a copy; used only where the two cannot differ
    if a.flags.c_contiguous:
        return a.reshape(shape)
    return np.ascontiguousarray(a).reshape(shape)
'''

_ROLL = '''
@numba.njit(cache=True)
def _ac_roll_{ndim}d_axis{axis}(a, shift):
    # np.roll(a, shift, axis={axis}): a copy with the axis rotated
    out = np.empty(a.shape, a.dtype)
    n = a.shape[{axis}]
    if n == 0:
        return out
    s = shift % n
    out[{pre}s:] = a[{pre}:n - s]
    out[{pre}:s] = a[{pre}n - s:]
    return out
'''

_OUTER = '''
@numba.njit(cache=True)
def _ac_outer_{name}(a, b):
    out = np.empty((a.shape[0], b.shape[0]), np.{dtype})
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = np.{name}(a[i], b[j])
    return out
'''

_NUMBA_REDUCTIONS = REDUCTION_CALLS


def _number(v: Any) -> str:
    """Source numba types for a Python number: infinities and NaN as ``np.inf``/``np.nan``."""
    if isinstance(v, complex):
        return f"complex({_number(v.real)}, {_number(v.imag)})"
    if isinstance(v, float) and not np.isfinite(v):
        return "np.nan" if v != v else ("np.inf" if v > 0 else "(-np.inf)")
    return repr(v)


def _dtype_name(dtype: Any) -> str:
    return np.dtype(dtype).name.replace("bool", "bool_")


@dataclass
class _Emitter:
    graph: Graph
    lines: list[str] = field(default_factory=list)
    names: dict[Node, str] = field(default_factory=dict)
    constants: list[Any] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)
    used: set[str] = field(default_factory=set)
    roots: set[Node] = field(default_factory=set)  # roots of fused elementwise trees
    ranges: ValueRanges = field(default_factory=ValueRanges)  # integer ranges for index bounds

    def fresh(self, hint: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
        base = base if not base[0].isdigit() else "v_" + base
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    # ----- values ------------------------------------------------------------------------------
    def value(self, v: Any, like: np.dtype | None = None) -> str:
        """A node or constant as source; Python scalars typed like ``like`` (NEP 50 weak)."""
        if isinstance(v, Node):
            return self.names[v]
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, (int, float, complex)) and like is not None and like.kind in "fc" \
                and not (isinstance(v, complex) and like.kind == "f"):
            return f"np.{_dtype_name(like)}({_number(v)})"
        if isinstance(v, (int, float, complex)):
            return _number(v)
        if isinstance(v, np.generic):
            return f"np.{_dtype_name(v.dtype)}({_number(v.item())})"
        if isinstance(v, slice):
            parts = [self.value(p) if p is not None else "" for p in (v.start, v.stop, v.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if v.step is not None else "")
        if isinstance(v, np.dtype):
            return f"np.{_dtype_name(v)}"
        if isinstance(v, tuple):
            inner = ", ".join(self.value(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, np.ndarray):
            name = f"_ac_const{len(self.constants)}"
            self.constants.append(v)
            return name
        raise NotLowerable(f"constant of type {type(v).__name__}")

    # ----- indexing ----------------------------------------------------------------------------
    # Bounds policy (exactly NumPy's IndexError, never an access out of bounds): an integer index
    # is emitted as it is only when its value range (constants, array sizes, enclosing range()
    # loops; ``bounds.ValueRanges``) is proven inside ``[0, n)`` or ``[-n, 0)`` of its axis at
    # lowering time, symbolic sizes included (``for i in range(1, len(x) - 1): x[i + 1]``);
    # otherwise ``_ac_ix`` checks it in place (inlined: wraps negatives, raises NumPy's "index 10
    # is out of bounds for axis 0 with size 10"). Integer-array indices go through
    # ``_ac_ix_array`` and boolean masks through ``_ac_mask`` (numba's fancy indexing checks
    # neither). Slices clamp as in NumPy. numba takes one advanced index (a 1-D integer array, a
    # list of ints or a 1-D mask) among basic ones; other advanced indexing is not lowered.
    def index(self, base: Any, index: Any) -> str:
        """``base[index]``'s index as numba source, with bounds proven or checked."""
        items = index if isinstance(index, tuple) else (index,)
        ndim = base.meta.ndim if isinstance(base, Node) and base.meta is not None else None
        if ndim is None:
            raise NotLowerable("indexing a value without a known shape")
        consumed = sum(_axes_taken(item) for item in items if item is not Ellipsis)
        advanced = [item for item in items if _axes_taken(item) and not _basic(item)]
        if len(advanced) > 1 or (advanced and any(i is None or i is Ellipsis for i in items)):
            raise NotLowerable("advanced indexing beyond one 1-D index array")
        if consumed > ndim or sum(1 for i in items if i is Ellipsis) > 1:
            raise NotLowerable("an index with too many entries")  # NumPy's IndexError at capture
        parts, axis = [], 0
        for item in items:
            if item is Ellipsis:
                parts.append("...")
                axis += ndim - consumed
            elif item is None:
                parts.append("None")
            else:
                parts.append(self.index_item(base, item, axis))
                axis += _axes_taken(item)
        return ", ".join(parts) if parts else "..."  # x[()] of an array: the whole array

    def index_item(self, base: Node, item: Any, axis: int) -> str:
        """One entry of an index that takes ``axis`` of ``base``."""
        size_src = f"{self.value(base)}.shape[{axis}]"
        if isinstance(item, slice):
            return self.value(item)
        if isinstance(item, Node) and item.meta is None:
            raise NotLowerable("an index without a known type")
        if isinstance(item, (list, np.ndarray)) or (isinstance(item, Node) and item.meta.ndim):
            return self.index_array(base, item, axis)
        if isinstance(item, (bool, np.bool_)) or (isinstance(item, Node) and (
                item.meta.dtype.kind not in "iu" or item.meta.pytype is bool)):
            raise NotLowerable("indexing with a boolean scalar")
        if proven_inside(self.ranges.of(item), base.meta.shape[axis]):
            return self.value(item)
        self.helpers.add(INDEX_HELPERS)
        return f"_ac_ix({self.value(item)}, {size_src}, {axis})"

    def roll(self, a: Node, shift: Any, axis: Any) -> str:
        """``np.roll`` by an int along one axis (of a 1-D array: also ``axis=None``)."""
        ndim = a.meta.ndim
        axis = 0 if axis is None and ndim == 1 else axis
        if not isinstance(axis, int) or isinstance(shift, bool) or not (
                isinstance(shift, int) or (_int_scalar(shift) and shift.meta.pytype is int)):
            raise NotLowerable("roll of several axes, of a flattened array or by an array")
        self.helpers.add(_ROLL.format(ndim=ndim, axis=axis, pre=":, " * axis))
        return f"_ac_roll_{ndim}d_axis{axis}({self.value(a)}, {self.value(shift)})"

    def index_array(self, base: Node, item: Any, axis: int) -> str:
        """A 1-D integer array, a list of ints or a 1-D boolean mask as numba's one advanced
        index, checked against the axis as NumPy checks it."""
        self.helpers.add(INDEX_HELPERS)
        size_src = f"{self.value(base)}.shape[{axis}]"
        if isinstance(item, list):
            if not item or any(isinstance(v, (bool, np.bool_, list)) or not (
                    isinstance(v, (int, np.integer)) or (_int_scalar(v) and v.meta.pytype
                                                         is not bool and v.meta.dtype.kind in "iu"))
                    for v in item):
                raise NotLowerable("a list index that is not a list of ints")
            values = ", ".join(f"np.int64({self.value(v)})" for v in item)
            return f"_ac_ix_array(np.array([{values}]), {size_src}, {axis})"
        dtype = item.dtype if isinstance(item, np.ndarray) else item.meta.dtype
        ndim = item.ndim if isinstance(item, np.ndarray) else item.meta.ndim
        if ndim != 1:
            raise NotLowerable("indexing with a multi-dimensional array")
        if dtype.kind == "b":
            return f"_ac_mask({self.value(item)}, {size_src}, {axis})"
        if dtype.kind not in "iu" or (dtype.kind == "u" and dtype.itemsize == 8):
            raise NotLowerable(f"indexing with a {dtype} array")
        return f"_ac_ix_array({self.value(item)}, {size_src}, {axis})"

    def emit(self, indent: str, text: str, node: Node | None = None) -> None:
        origin = f"  # {node.origin}" if node is not None and node.origin else ""
        self.lines.append(f"{indent}{text}{origin}")

    # ----- graphs ------------------------------------------------------------------------------
    def body(self, graph: Graph, indent: str) -> list[str]:
        """Emit the graph's call and region nodes; returns the output expressions."""
        inlined, roots = _fusion_trees(graph)
        self.roots |= roots
        for node in graph.nodes:
            if node.meta is not None and np.dtype(node.meta.dtype) == np.float16:
                raise NotLowerable("float16 values (numba has no float16 arithmetic)")
            if node in inlined:
                continue  # computed inside its consumer's loop
            if node.op == "call" and node in roots:
                self.fused(node, inlined, indent)
            elif node.op == "call":
                self.call(node, indent)
            elif node.op == "region":
                self.region(node, indent)
            elif node.op == "output":
                return [self.value(v) for v in node.args[0]]
        return []

    def call(self, node: Node, indent: str) -> None:
        if node in self.names:  # a region's result: already bound to its carried variable
            return
        name = self.fresh(node.name)
        self.names[node] = name
        text = self.expression(node)
        if text is None:  # a statement (mutation)
            return
        meta = node.meta
        if meta is not None and meta.ndim == 0:  # scalars: NumPy's dtype (wrap-around) or Python's
            cast = meta.pytype.__name__ if meta.pytype is not None else f"np.{_dtype_name(meta.dtype)}"
            text = f"{cast}({text})"
        self.emit(indent, f"{name} = {text}", node)

    def expression(self, node: Node) -> str | None:
        target, args, kwargs = node.target, node.args, node.kwargs
        op = REGISTRY.ops.get(target)
        meta = node.meta
        like = meta.dtype if meta is not None else None
        if target == "getitem":
            base = args[0]
            if isinstance(base, Node) and base.op == "region":
                raise NotLowerable("region results are bound directly")
            if isinstance(base, Node) and base.meta is None:  # a tuple-valued node
                return f"{self.value(base)}[{args[1]}]"
            if args[1] == () and isinstance(base, Node) and base.meta is not None \
                    and base.meta.ndim == 0:  # x[()] of a scalar: a numba scalar already
                return self.value(base)
            mask = whole_mask(base, args[1])
            if mask is not None and base.meta.ndim > 1:  # numba takes 1-D masks only
                helper, source = mask_get_source(base.meta.ndim)
                self.helpers.add(INDEX_HELPERS)
                self.helpers.add(source)
                return f"{helper}({self.value(base)}, {self.value(mask)})"
            return f"{self.value(base)}[{self.index(base, args[1])}]"
        if target == "setitem":
            dst, index, value = args
            src = self.value(value, dst.meta.dtype if isinstance(dst, Node) and dst.meta else None)
            if _may_alias(value):
                src = f"{src}.copy()"  # NumPy reads the right-hand side before writing
            mask = whole_mask(dst, index)
            if mask is not None:  # NumPy's checks of the mask's shape and the value's length
                helper, source = mask_set_source(dst.meta.ndim)
                self.helpers.add(INDEX_HELPERS)
                self.helpers.add(source)
                self.emit(self._indent, f"{helper}({self.value(dst)}, {self.value(mask)}, {src})",
                          node)
                return None
            self.emit(self._indent, f"{self.value(dst)}[{self.index(dst, index)}] = {src}", node)
            return None
        if target == "copy_":
            dst, src = args[:2]
            ndim = dst.meta.ndim if isinstance(dst, Node) and dst.meta is not None else 0
            if ndim == 0:
                raise NotLowerable("in-place update of a 0-d array")
            value = self.value(src, dst.meta.dtype)
            if _may_alias(src):
                value = f"{value}.copy()"
            self.emit(self._indent, f"{self.value(dst)}[...] = {value}", node)
            return None
        if target == "scalar":
            value = args[0]
            if meta is not None and meta.pytype is not None:
                return _number(meta.pytype(value))
            return self.value(np.asarray(value, meta.dtype)[()] if meta is not None else value)
        if target == "constant":  # a fresh copy: code may write into it
            return f"{self.value(args[0])}.copy()"
        if target == "dim_size":
            return f"{self.value(args[0])}.shape[{args[1]}]"
        if target == "astype":
            if meta is not None and meta.ndim == 0:
                return self.value(args[0])
            return f"{self.value(args[0])}.astype(np.{_dtype_name(args[1])})"
        if target == "copy":
            return f"{self.value(args[0])}.copy()" if meta is not None and meta.ndim else self.value(args[0])
        if target == "where":
            c, x, y = (self.value(a, like) for a in args)
            if meta is not None and meta.ndim == 0:
                return f"({x} if {c} else {y})"
            return f"np.where({c}, {x}, {y})"
        if target in ("dot", "matmul"):
            return self.contraction(node)
        if target in ("linalg_solve", "linalg_inv"):
            return self.linalg(node)
        if target == "linalg_norm":
            return self.norm(node)
        if target == "outer":
            return self.outer(node)
        if target == "clip" and not kwargs:  # NumPy's clip: max with the low bound, then min
            text = self.value(args[0], like)
            for fn, bound in (("np.maximum", args[1]), ("np.minimum", args[2])):
                if bound is not None:
                    text = f"{fn}({text}, {self.value(bound, like)})"
            if meta.ndim and _dtype_of((args[0],)) != np.dtype(like):
                text = f"{text}.astype(np.{_dtype_name(like)})"
            return text
        if target in ("full", "eye", "identity") and kwargs.get("order", "C") == "C":
            return self.filled(node)
        if target in ("cumsum", "cumprod") and kwargs.get("axis") in (None, 0) \
                and isinstance(args[0], Node) and args[0].meta is not None \
                and (args[0].meta.ndim == 1 or kwargs.get("axis") is None):
            name = f"_ac_{target}_{np.dtype(like).name}"
            self.helpers.add(scan_source(name, "+" if target == "cumsum" else "*", np.dtype(like)))
            return f"{name}({self.value(args[0])})"
        if target == "concatenate" and kwargs.get("axis") is not None:
            parts = ", ".join(self.value(a) if _dtype_of((a,)) == np.dtype(like) else
                              f"{self.value(a)}.astype(np.{_dtype_name(like)})" for a in args[0])
            return f"np.concatenate(({parts},), axis={kwargs['axis']})"
        if target == "roll":
            return self.roll(node)
        if target in ("tril", "triu") and isinstance(args[0], Node) and args[0].meta is not None \
                and args[0].meta.ndim == 2 and not kwargs:  # numba's: a fresh C-ordered copy
            return f"np.{target}({self.value(args[0])}, {self.value(args[1])})"
        if target == "ufunc_outer":
            ufunc_name = args[0] if isinstance(args[0], str) else getattr(args[0], "__name__", "")
            self.helpers.add(_OUTER.format(name=ufunc_name, dtype=_dtype_name(like)))
            return f"_ac_outer_{ufunc_name}({self.value(args[1])}, {self.value(args[2])})"
        if target in ("zeros", "ones", "empty"):
            shape = args[0] if args else kwargs.get("shape")
            return f"np.{target}({self.value(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))}, np.{_dtype_name(like)})"
        if target in ("zeros_like", "ones_like", "empty_like") and not kwargs.get("shape"):
            return f"np.{target[:-5]}({self.value(args[0])}.shape, np.{_dtype_name(like)})"
        if target in ("linspace", "arange"):
            return self.spaced_range(node)
        if target in ("real", "imag"):  # views of complex arrays in numba too
            a = args[0]
            kind = np.dtype(a.meta.dtype).kind if isinstance(a, Node) and a.meta else "?"
            if kind == "c" or (meta.pytype is not None and _python_kind(a) is complex):
                return f"{self.value(a)}.{target}"
            if target == "real" and kind in "biuf":
                return self.value(a)
            if target == "imag" and kind in "biuf" and meta.ndim == 0:
                return "0"
            raise NotLowerable(f"{target} of a {kind!r} array")  # NumPy: a read-only array
        if target == "transpose":
            return f"np.transpose({self.value(args[0])}, {self.value(tuple(args[1]))})"
        if target == "reshape" and not kwargs and isinstance(args[0], Node):
            if not _view_or_copy_unobservable(node, self.graph):
                raise NotLowerable("reshape whose view or copy could be observed")
            self.helpers.add(_RESHAPE)
            return f"_ac_reshape({self.value(args[0])}, {self.value(tuple(args[1]))})"
        if target == "roll" and isinstance(args[0], Node) and meta.ndim:
            return self.roll(args[0], args[1], kwargs.get("axis"))
        if target in ("flip", "fliplr", "flipud") and isinstance(args[0], Node) and meta.ndim:
            axes = args[1] if target == "flip" else ((1,) if target == "fliplr" else (0,))
            steps = ", ".join("::-1" if d in axes else ":" for d in range(meta.ndim))
            return f"{self.value(args[0])}[{steps}]"  # a view, as NumPy's
        if op is not None and op.kind == "reduction" and op.reduction is not None:
            return self.reduction(node, op)
        if target in ("py_int", "py_float", "py_complex", "py_bool"):
            return self.conversion(target, args)
        if meta is not None and meta.pytype is not None and not kwargs \
                and all(_python_number(a) for a in args):
            return self.python_scalar(target, args, meta.pytype)
        if target == "py_round" and isinstance(args[0], Node) and args[0].meta is not None:
            dtype = np.dtype(args[0].meta.dtype)  # round() of a NumPy scalar: an int
            kind = dtype.kind
            if kind == "i" or (kind == "u" and dtype.itemsize < 8):
                return f"int({self.value(args[0])})"
            if kind == "f":
                self.helpers.add(CHECKED)
                self.helpers.add(PYTHON_SCALARS)
                return f"_ac_py_round(float({self.value(args[0])}))"
        if meta is not None and meta.pytype is int and all(
                not isinstance(a, Node) or (a.meta is not None and a.meta.pytype in (int, bool))
                for a in args):
            # Python ints: exact as long as they fit in 64 bits, else the graph runs in Python
            if target in _CHECKED_INT_OPS:
                self.helpers.add(CHECKED)
                return f"_ac_{target}_int({', '.join(self.value(a) for a in args)})"
            if target not in _UNCHECKED_INT_OPS:
                raise NotLowerable(f"{target} on Python ints (could outgrow 64 bits)")
        if op is not None and op.kind == "pointwise" and op.ufunc is not None:
            if kwargs:
                return self.ufunc_with_dtype(node)
            if target == "power" and _complex_square(node):  # NumPy squares: z ** 2 is z * z
                base = self.value(args[0], like)
                return f"({base} * {base})"
            operands = ", ".join(self.weak_int(a, like, target) if _weak_int(a) else
                                 self.value(a, like if not _is_compare(target) else _dtype_of(args))
                                 for a in args)
            return f"np.{target}({operands})"
        raise NotLowerable(f"op {target}")

    def spaced_range(self, node: Node) -> str:
        """``np.linspace``/``np.arange`` of scalar bounds, filled as NumPy fills them."""
        args, kwargs, result = node.args, node.kwargs, np.dtype(node.meta.dtype)
        if any(isinstance(a, Node) and (a.meta is None or a.meta.ndim) for a in args) \
                or result.kind not in "iufc":
            raise NotLowerable(f"{node.target} of arrays or of {result.name}")
        bounds = [self.value(a) for a in args]
        if node.target == "arange":
            name = f"_ac_arange_{result.name}"
            self.helpers.add(arange_source(name, result))
            return f"{name}({', '.join(bounds)})"
        work = np.result_type(*(_representative(a) for a in args[:2]), 1.0)
        name = f"_ac_linspace_{work.name}_{result.name}"
        self.helpers.add(linspace_source(name, work, result))
        return f"{name}({', '.join(bounds)}, {bool(kwargs.get('endpoint', True))})"

    def ufunc_with_dtype(self, node: Node) -> str:
        """``np.add(a, b, dtype=d)``: the operands cast to ``d``, then the ``d`` loop."""
        dtype = node.kwargs.get("dtype")
        if set(node.kwargs) != {"dtype"} or _is_compare(node.target) \
                or np.dtype(node.meta.dtype) != dtype:
            raise NotLowerable(f"{node.target} with keywords {sorted(node.kwargs)}")
        cast = f"np.{_dtype_name(dtype)}"
        operands = [f"{self.value(a)}.astype({cast})" if isinstance(a, Node) and a.meta is not None
                    and a.meta.ndim else f"{cast}({self.value(a)})" for a in node.args]
        return f"np.{node.target}({', '.join(operands)})"

    def filled(self, node: Node) -> str:
        """``np.full``, ``np.eye``, ``np.identity`` in the node's dtype."""
        dtype = f"np.{_dtype_name(node.meta.dtype)}"
        args = node.args
        if node.target == "full":
            shape = args[0] if isinstance(args[0], tuple) else (args[0],)
            if isinstance(args[1], Node) and (args[1].meta is None or args[1].meta.ndim):
                raise NotLowerable("full with an array fill value")
            return f"np.full({self.value(tuple(shape))}, {dtype}({self.value(args[1])}), {dtype})"
        if node.target == "eye":
            n, m, k = (self.value(a) for a in args[:3])
            return f"np.eye({n}, {m}, {k}, {dtype})"
        return f"np.identity({self.value(args[0])}, {dtype})"

    def outer(self, node: Node) -> str:
        """``np.outer`` of vectors: ``a[i] * b[j]`` with both cast to NumPy's result dtype."""
        result = np.dtype(node.meta.dtype)
        if node.kwargs or any(not isinstance(v, Node) or v.meta is None or v.meta.ndim != 1
                              for v in node.args) or result.kind not in "biufc":
            raise NotLowerable("outer of other than two vectors")
        x, y = (self.value(v) if _dtype_of((v,)) == result else
                f"{self.value(v)}.astype(np.{_dtype_name(result)})" for v in node.args)
        self.helpers.add(OUTER)
        return (f"_ac_outer({x}, {y}, np.empty(({x}.shape[0], {y}.shape[0]), "
                f"np.{_dtype_name(result)}))")

    def roll(self, node: Node) -> str:
        """``np.roll`` by an int along one axis (or of a vector)."""
        (a, shift), axis = node.args[:2], node.kwargs.get("axis", node.args[2] if len(
            node.args) > 2 else None)
        if not isinstance(a, Node) or a.meta is None or a.meta.ndim == 0 \
                or _number_kind(shift) not in "iu" or not (axis is None and a.meta.ndim == 1
                                                           or isinstance(axis, int)):
            raise NotLowerable("roll by a tuple or of a flattened array")
        axis = 0 if axis is None else axis
        name = f"_ac_roll_{a.meta.ndim}d_axis{axis}"
        self.helpers.add(roll_source(name, a.meta.ndim, axis))
        return f"{name}({self.value(a)}, {self.value(shift)})"

    def contraction(self, node: Node) -> str:
        """``np.dot``/``@`` of vectors and matrices: numba's BLAS-backed ``np.dot`` for float
        and complex results when SciPy is installed, loops of our own otherwise; operands are
        cast to NumPy's result dtype first (as NumPy does)."""
        (a, b), result = node.args[:2], np.dtype(node.meta.dtype)
        ndims = tuple(x.meta.ndim if isinstance(x, Node) and x.meta else np.ndim(x) for x in (a, b))
        helper = {(1, 1): "_ac_dot", (2, 1): "_ac_matvec", (1, 2): "_ac_vecmat",
                  (2, 2): "_ac_matmul"}.get(ndims)
        if helper is None or node.kwargs or result.kind not in "iufc" or result.itemsize < 4:
            raise NotLowerable(f"{node.target} of {ndims}-d arrays of {result.name}")
        x, y = (self.value(v) if _dtype_of((v,)) == result else
                f"{self.value(v)}.astype(np.{_dtype_name(result)})" for v in (a, b))
        if result.kind in "fc" and scipy_blas():
            return f"np.dot(np.ascontiguousarray({x}), np.ascontiguousarray({y}))"
        if ndims == (2, 2) and result.kind in "fc" and not _small_matmul(a, b):
            # our loops run at a third of BLAS's speed there: a host loop calls NumPy instead
            raise NotLowerable("matmul of large or dynamic matrices without SciPy's BLAS")
        self.helpers.add(CONTRACTIONS)
        dtype = f"np.{_dtype_name(result)}"
        out = {(1, 1): f"{dtype}(0)", (2, 1): f"np.zeros({x}.shape[0], {dtype})",
               (1, 2): f"np.zeros({y}.shape[1], {dtype})",
               (2, 2): f"np.zeros(({x}.shape[0], {y}.shape[1]), {dtype})"}[ndims]
        return f"{helper}({x}, {y}, {out})"

    def linalg(self, node: Node) -> str:
        """``np.linalg.solve``/``inv`` through numba's LAPACK bindings (SciPy). Its LinAlgError
        messages differ from NumPy's (and it rejects NaN input NumPy accepts): the graph then
        reruns with NumPy, so only a graph that writes to no array may hold them."""
        target, result = node.target, np.dtype(node.meta.dtype)
        ndims = tuple(a.meta.ndim if isinstance(a, Node) and a.meta else np.ndim(a)
                      for a in node.args)
        if not scipy_blas():
            raise NotLowerable(f"{target} without SciPy's LAPACK")
        if any(_mutates(n) for n in _all_nodes(self.graph)):
            raise NotLowerable(f"{target} in a graph that writes to arrays")
        if ndims[0] != 2 or (len(ndims) == 2 and ndims[1] not in (1, 2)) \
                or result.kind not in "fc" or result.itemsize < 4:
            raise NotLowerable(f"{target} of {ndims}-d arrays of {result.name}")
        operands = ", ".join(
            f"np.ascontiguousarray({self.value(a)})" if _dtype_of((a,)) == result else
            f"np.ascontiguousarray({self.value(a)}).astype(np.{_dtype_name(result)})"
            for a in node.args)
        call = f"np.linalg.{target[len('linalg_'):]}({operands})"
        return f"np.ascontiguousarray({call})" if node.meta.ndim == 2 else call  # LAPACK: F order

    def norm(self, node: Node) -> str:
        """``np.linalg.norm(x)`` (2-norm of the flattened array) as NumPy computes it:
        ``sqrt(dot(x, x))`` with BLAS (SciPy) for float32/float64 arrays."""
        (x,), kwargs = node.args, node.kwargs
        dtype = _dtype_of((x,))
        if not scipy_blas() or kwargs.get("ord") is not None or kwargs.get("axis") is not None \
                or kwargs.get("keepdims") or dtype is None or dtype.kind != "f" \
                or dtype.itemsize < 4 or not isinstance(x, Node) or not x.meta.ndim:
            raise NotLowerable("linalg_norm with ord/axis/keepdims, of ints or without BLAS")
        self.helpers.add(_NORM2)
        return f"_ac_norm2({self.value(x)})"

    def reduction(self, node: Node, op: Any) -> str:
        """``np.sum`` & co. over the whole array as numba spells them; with ``axis``,
        ``keepdims``, ``dtype`` or ``ddof`` (and var/std) a loop helper from the op's
        ``ReductionDef`` with NumPy's result and accumulator dtypes."""
        target, (a,), kwargs = node.target, node.args, node.kwargs
        if kwargs.get("out") is not None or not isinstance(a, Node) or a.meta is None:
            raise NotLowerable(f"{target} with out= or of a constant")
        axis, keepdims, ddof = kwargs.get("axis"), kwargs.get("keepdims"), kwargs.get("ddof", 0)
        if target in _NUMBA_REDUCTIONS and axis is None and not keepdims \
                and kwargs.get("dtype") is None and not ddof:
            return f"{_NUMBA_REDUCTIONS[target]}({self.value(a)})"
        source, result = np.dtype(a.meta.dtype), np.dtype(node.meta.dtype)
        if "c" in (source.kind, result.kind) and (target not in ("sum", "prod", "mean")):
            raise NotLowerable(f"{target} of complex numbers")  # lexicographic order, |z|**2
        if target in ("mean", "var", "std") and result.kind not in "fc":
            raise NotLowerable(f"{target} with an integer dtype")
        ndim = a.meta.ndim
        axes = tuple(range(ndim)) if axis is None else \
            ((axis,) if isinstance(axis, int) else tuple(axis))
        name = (f"_ac_{target}_{ndim}d_axes{''.join(map(str, axes))}{'_keep' if keepdims else ''}"
                f"_{source.name}_{result.name}")
        self.helpers.add("\n\n" + reduction_source(name, op.reduction, ndim, axes, bool(keepdims),
                                                    source, result, op.no_identity))
        return f"{name}({self.value(a)}, {self.value(ddof)})"

    def weak_int(self, value: Node, like: np.dtype | None, target: str) -> str:
        """A Python int meeting a fixed-width integer op: NumPy raises OverflowError when it does
        not fit the dtype (NEP 50); the kernel raises it too, and the graph reruns with NumPy."""
        text = self.value(value)
        if like is None or np.dtype(like).kind not in "iu" or _is_compare(target):
            return text
        dtype = np.dtype(like)
        info = np.iinfo(dtype)
        self.helpers.add(_FITS.format(dtype=dtype.name, low=int(info.min), high=int(info.max)))
        return f"_ac_fits_{dtype.name}({text})"

    def python_scalar(self, target: str, args: tuple, pytype: type) -> str:
        """An operator on Python numbers with Python's semantics (ZeroDivisionError, floor
        division and modulo of negative operands, ``int / int`` a float, exact ints: 64-bit
        with overflow checks, else the graph reruns with Python ints)."""
        kinds = [_python_kind(a) for a in args]
        if complex in kinds or pytype is complex:
            return self.python_complex(target, args, kinds)
        integral = all(k in (int, bool) for k in kinds)
        self.helpers.add(CHECKED)
        self.helpers.add(PYTHON_SCALARS)
        # bools take part as ints (as in Python); ints meet floats as floats
        plain = [f"int({self.value(a)})" if k in (bool, int) else self.value(a)
                 for a, k in zip(args, kinds)]
        values = plain if integral else [f"float({v})" for v in plain]
        if target in _PY_COMPARE:
            if not integral and float in kinds and any(k in (int, bool) for k in kinds):
                return self.int_float_compare(target, plain, kinds)
            return f"({values[0]} {_PY_COMPARE[target]} {values[1]})"
        if target in _PY_BITWISE and integral:
            raw = [self.value(a) for a in args]  # bool & bool stays a bool
            return f"({raw[0]} {_PY_BITWISE[target]} {raw[1]})"
        if target in ("maximum", "minimum"):
            sign = ">" if target == "maximum" else "<"
            return f"({values[1]} if {values[1]} {sign} {values[0]} else {values[0]})"
        if target == "positive":
            return values[0]
        if target == "py_round":
            return values[0] if integral else f"_ac_py_round({values[0]})"
        if integral:
            if target in _CHECKED_INT_OPS:
                return f"_ac_{target}_int({', '.join(values)})"
            if target in ("floor_divide", "remainder", "divide", "right_shift", "left_shift"):
                return f"_ac_py_{target}_int({', '.join(values)})"
            if target in ("negative", "absolute"):
                return f"_ac_py_{target}_int({values[0]})"
            if target == "invert":
                return f"(~{values[0]})"
            if target == "power" and not isinstance(args[1], Node):
                if args[1] >= 0:
                    return f"_ac_py_power_int({', '.join(values)})"
                return f"_ac_py_power(float({self.value(args[0])}), float({args[1]!r}))"
            raise NotLowerable(f"{target} on Python ints")
        if target in _PY_FLOAT_INFIX:
            return f"({values[0]} {_PY_FLOAT_INFIX[target]} {values[1]})"
        if target in ("divide", "floor_divide", "remainder", "power"):
            return f"_ac_py_{target}({', '.join(values)})"
        if target == "negative":
            return f"(-{values[0]})"
        if target == "absolute":
            return f"abs({values[0]})"
        raise NotLowerable(f"{target} on Python floats")

    def int_float_compare(self, target: str, values: list[str], kinds: list) -> str:
        """``int <op> float`` as Python compares them: exactly, also past 2 ** 53."""
        int_first = kinds[0] in (int, bool)
        order = f"_ac_py_compare_int_float({values[0]}, {values[1]})" if int_first else \
            f"_ac_py_compare_int_float({values[1]}, {values[0]})"
        # outcomes of the helper (int op float) that make the comparison true
        true_for = {"less": "(-1,)", "less_equal": "(-1, 0)", "equal": "(0,)",
                    "not_equal": "(-1, 1, 2)", "greater": "(1,)", "greater_equal": "(0, 1)"}
        mirrored = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
                    "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}
        name = target if int_first else mirrored[target]
        return f"({order} in {true_for[name]})"

    def conversion(self, target: str, args: tuple) -> str:
        """``int(x)``, ``float(x)``, ``complex(x[, y])``, ``bool(x)`` of a number as Python
        converts it (an int past 64 bits raises OverflowError: the graph reruns in Python)."""
        kinds = [_number_kind(a) for a in args]
        values = [self.value(a) for a in args]
        if target == "py_bool":
            return f"({values[0]} != 0)" if kinds[0] == "c" else f"bool({values[0]})"
        if "c" in kinds and target != "py_complex" or "?" in kinds:
            raise NotLowerable(f"{target} of {kinds}")
        if target == "py_float":
            return f"float({values[0]})"
        if target == "py_complex":
            if len(args) == 1:
                return f"complex({values[0]})" if kinds[0] == "c" else \
                    f"complex(float({values[0]}), 0.0)"
            return f"complex(float({values[0]}), float({values[1]}))"
        self.helpers.add(_PY_CONVERSIONS)
        if kinds[0] == "f":
            return f"_ac_py_int_float(float({values[0]}))"
        if kinds[0] == "u" and np.dtype(args[0].meta.dtype).itemsize == 8:
            return f"_ac_py_int_uint64({values[0]})"
        return f"int({values[0]})"

    def python_complex(self, target: str, args: tuple, kinds: list) -> str:
        """Python complex arithmetic (Python 3.11: a real operand becomes ``complex(x, 0.0)``
        first; numba's complex division is CPython's and raises its ZeroDivisionError)."""
        values = [self.value(a) if k is complex else f"complex(float({self.value(a)}), 0.0)"
                  for a, k in zip(args, kinds)]
        if target in _PY_FLOAT_INFIX or target == "divide":
            infix = _PY_FLOAT_INFIX.get(target, "/")
            return f"({values[0]} {infix} {values[1]})"
        if target in ("equal", "not_equal"):
            return f"({values[0]} {_PY_COMPARE[target]} {values[1]})"
        if target == "negative":
            return f"(-{values[0]})"
        if target == "positive":
            return values[0]
        if target == "conjugate":
            return f"{values[0]}.conjugate()"
        if target == "absolute":
            self.helpers.add(_PY_COMPLEX)
            return f"_ac_py_abs_complex({values[0]})"
        raise NotLowerable(f"{target} on Python complex numbers")

    def fused(self, root: Node, inlined: set[Node], indent: str) -> None:
        """A tree of elementwise ops as one loop nest into one fresh array (no temporaries)."""
        name = self.fresh(root.name)
        self.names[root] = name
        leaves = _tree_leaves(root, inlined)
        shape_of = next(self.value(leaf) for leaf in leaves
                        if isinstance(leaf, Node) and leaf.meta is not None and leaf.meta.ndim)
        ndim = root.meta.ndim
        index = [self.fresh(f"k{d}") for d in range(ndim)]
        self.emit(indent, f"{name} = np.empty({shape_of}.shape, np.{_dtype_name(root.meta.dtype)})",
                  root)
        inner = indent
        for d in range(ndim):
            self.emit(inner, f"for {index[d]} in range({name}.shape[{d}]):")
            inner += "    "
        expr = self.scalar_expr(root, inlined, ", ".join(index))
        self.emit(inner, f"{name}[{', '.join(index)}] = {expr}", root)

    def scalar_expr(self, node: Any, inlined: set[Node], idx: str) -> str:
        if not (isinstance(node, Node) and (node in inlined or node in self.roots)):
            if isinstance(node, Node) and node.meta is not None and node.meta.ndim:
                return f"{self.value(node)}[{idx}]"
            return self.value(node)
        like = node.meta.dtype
        args = [self.scalar_expr(a, inlined, idx) if isinstance(a, Node) else
                self.value(a, like if not _is_compare(node.target) else _dtype_of(node.args))
                for a in node.args]
        if node.target == "where":
            text = f"({args[1]} if {args[0]} else {args[2]})"
        elif node.target == "astype":
            text = args[0]
        elif node.target == "power" and _complex_square(node):  # NumPy squares: z * z
            text = f"({args[0]} * {args[0]})"
        else:
            text = f"np.{node.target}({', '.join(args)})"
        return f"np.{_dtype_name(like)}({text})"

    def region(self, node: Node, indent: str) -> None:
        info = node.info
        n_carried = info.n_carried
        controls, init, captured = info.split(node.args)
        names = info.names or [f"c{k}" for k in range(n_carried)]
        carried = [self.fresh(f"{n}_c") for n in names]
        for var, value in zip(carried, init):
            self.emit(indent, f"{var} = {self.value(value)}", node)
        for user in node.users:  # results: getitem(region, k) are the carried variables
            if user.op == "call" and user.target == "getitem" and user.args[0] is node:
                self.names[user] = carried[user.args[1]]
        subgraphs = info.subgraphs
        inner = indent + "    "
        if node.target == "for_range":
            start, stop, step, enter = (self.value(c) for c in controls)
            index = self.fresh("i")
            self.ranges.loops[subgraphs["body"].placeholders[0]] = self.ranges.loop_index(controls)
            self.emit(indent, f"if {enter}:", node)
            self.emit(inner, f"for {index} in range({start}, {stop}, {step}):", node)
            outs = self.sub(subgraphs["body"], inner + "    ", [index, *carried], captured)
            self.assign(inner + "    ", carried, outs[:n_carried])
            self.emit(inner + "    ", f"if not {outs[n_carried]}:")
            self.emit(inner + "        ", "break")
        elif node.target == "while_loop":
            self.emit(indent, "while True:", node)
            cond = self.sub(subgraphs["cond"], inner, list(carried), captured)
            self.emit(inner, f"if not {cond[-1]}:")
            self.emit(inner + "    ", "break")
            outs = self.sub(subgraphs["body"], inner, list(carried), captured)
            self.assign(inner, carried, outs)
        elif node.target == "cond":
            self.emit(indent, f"if {self.value(controls[0])}:", node)
            outs = self.sub(subgraphs["true"], inner, list(carried), captured)
            self.assign(inner, carried, outs)
            self.emit(indent, "else:")
            outs = self.sub(subgraphs["false"], inner, list(carried), captured)
            self.assign(inner, carried, outs)
        else:
            raise NotLowerable(f"region {node.target}")
        self.names[node] = "None"

    def sub(self, graph: Graph, indent: str, leading: list[str], captured: tuple) -> list[str]:
        placeholders = graph.placeholders
        for ph, name in zip(placeholders, leading):
            self.names[ph] = name
        for ph, outer in zip(placeholders[len(leading):], captured):
            self.names[ph] = self.value(outer)
            self.ranges.outer[ph] = outer
        saved = self._indent
        self._indent = indent
        before = len(self.lines)
        try:
            outs = self.body(graph, indent)
        finally:
            self._indent = saved
        if len(self.lines) == before:
            self.emit(indent, "pass")
        return outs

    def assign(self, indent: str, targets: list[str], values: list[str]) -> None:
        if targets:
            self.emit(indent, f"{', '.join(targets)} = {', '.join(values)}")

    _indent: str = "    "


def _view_or_copy_unobservable(node: Node, graph: Graph) -> bool:
    """Whether ``node`` (a view op that may copy, as reshape) is a view or a copy cannot change
    the program: it is not returned, and every write goes to fresh memory other than its base's."""
    if node in _escaping(graph):
        return False
    outer = _outer_values(graph)
    root = _storage_root(node, outer)
    for other in _all_nodes(graph):
        if _mutates(other):
            dst = _storage_root(other.args[0], outer) if other.args else None
            if dst is None or dst is root or not _fresh(dst):
                return False
    return True


def _outer_values(graph: Graph) -> dict[Node, Any]:
    """Each captured placeholder of every region body, mapped to the outer value it receives."""
    outer: dict[Node, Any] = {}
    for node in _all_nodes(graph):
        if node.op != "region":
            continue
        captured = node.info.split(node.args)[2]
        for sub in node.info.subgraphs.values():
            placeholders = sub.placeholders
            for ph, value in zip(placeholders[len(placeholders) - len(captured):], captured):
                outer[ph] = value
    return outer


def _storage_root(value: Any, outer: dict[Node, Any]) -> Node | None:
    """The node whose memory ``value`` views (through view ops and captured placeholders)."""
    while isinstance(value, Node):
        if value in outer:
            value = outer[value]
            continue
        op = REGISTRY.ops.get(value.target) if value.op == "call" else None
        if op is None or op.kind != "view" or not value.args:
            return value
        value = value.args[0]
    return None


def _fresh(node: Node) -> bool:
    """Memory made by the graph itself (a creation or a computed result), not an input's."""
    if node.op != "call" or node.target == "getitem":
        return False
    op = REGISTRY.ops.get(node.target)
    return op is not None and op.kind not in ("view", "mutation")


def _escaping(graph: Graph) -> set[Node]:
    """Nodes whose memory the graph's outputs may share: the outputs, the bases of views among
    them, and through a region's result the carried values behind it (initial and per body)."""
    seen: set[Node] = set()
    stack = [v for v in graph.output_node.args[0] if isinstance(v, Node)]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        base = node.args[0] if node.op == "call" and node.args else None
        if node.target == "getitem" and isinstance(base, Node) and base.op == "region":
            k = node.args[1]
            stack += [base.info.split(base.args)[1][k]]
            for sub in base.info.subgraphs.values():
                outs = sub.output_node.args[0]
                stack += [outs[k]] if k < len(outs) else []
            stack = [v for v in stack if isinstance(v, Node)]
            continue
        op = REGISTRY.ops.get(node.target) if node.op == "call" else None
        if op is not None and op.kind == "view":
            stack += [a for a in node.args if isinstance(a, Node)]
    return seen


def _basic(item: Any) -> bool:
    """An index entry of basic indexing: an int (constant or scalar value) or a slice."""
    return isinstance(item, (int, np.integer, slice)) or _int_scalar(item)


def _int_scalar(item: Any) -> bool:
    return isinstance(item, Node) and item.meta is not None and item.meta.ndim == 0


def _axes_taken(item: Any) -> int:
    """How many axes of the indexed array an index entry takes (a mask: its ndim)."""
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, np.ndarray) and item.dtype.kind == "b":
        return item.ndim
    if isinstance(item, Node) and item.meta is not None and item.meta.ndim \
            and item.meta.dtype.kind == "b":
        return item.meta.ndim
    return 1


_NORM2 = '''
@numba.njit(cache=True)
def _ac_norm2(x):
    # NumPy's norm(x): sqrt(dot(x, x)) of the flattened array
    v = np.ascontiguousarray(x).ravel()
    return np.sqrt(np.dot(v, v))
'''


def _complex_square(node: Node) -> bool:
    """``z ** 2`` of a complex array with a Python 2: NumPy's fast path multiplies (numba's
    general complex power is slower and rounds differently)."""
    base, exponent = node.args[0], node.args[1]
    return isinstance(base, Node) and base.meta is not None and base.meta.ndim > 0 \
        and np.dtype(base.meta.dtype).kind == "c" and type(exponent) in (int, float) \
        and exponent == 2


def _python_kind(value: Any) -> type | None:
    if isinstance(value, Node):
        return value.meta.pytype if value.meta is not None else None
    return type(value)


def _small_matmul(a: Any, b: Any, limit: int = 32 ** 3) -> bool:
    """Static shapes with at most ``limit`` multiply-adds: loops beat a NumPy call there."""
    shapes = [x.meta.shape if isinstance(x, Node) else np.shape(x) for x in (a, b)]
    dims = (shapes[0][0], shapes[0][1], shapes[1][1])
    return all(isinstance(d, int) for d in dims) and dims[0] * dims[1] * dims[2] <= limit


def _number_kind(value: Any) -> str:
    """The dtype kind of a number (Python numbers by their type), ``?`` for anything else."""
    if isinstance(value, Node):
        meta = value.meta
        if meta is None or meta.ndim:
            return "?"
        if meta.pytype is not None:
            return {bool: "b", int: "i", float: "f", complex: "c"}.get(meta.pytype, "?")
        return np.dtype(meta.dtype).kind
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return np.asarray(value).dtype.kind if not isinstance(value, int) or isinstance(
            value, bool) else "i"
    return "?"


def _representative(value: Any) -> Any:
    """A value with ``value``'s NumPy promotion behaviour (Python numbers are weak)."""
    if isinstance(value, Node):
        meta = value.meta
        return meta.pytype(0) if meta.pytype is not None else np.dtype(meta.dtype)
    return value


def _weak_int(value: Any) -> bool:
    return isinstance(value, Node) and value.meta is not None and value.meta.pytype is int


def _python_number(value: Any) -> bool:
    """A Python number: a graph value typed as one, or a constant bool/int/float/complex."""
    return _python_kind(value) in (bool, int, float, complex)


def _fusable(node: Any) -> bool:
    if not isinstance(node, Node) or node.op != "call" or node.kwargs or node.meta is None:
        return False
    meta = node.meta
    if meta.ndim == 0 or meta.pytype is not None:
        return False
    op = REGISTRY.ops.get(node.target)
    if op is None or op.kind != "pointwise":
        return False
    return op.ufunc is not None or node.target in TREE_NON_UFUNCS


def _tree_leaves(root: Node, inlined: set[Node]) -> list[Any]:
    leaves: list[Any] = []
    for arg in root.args:
        if isinstance(arg, Node) and arg in inlined:
            leaves += _tree_leaves(arg, inlined)
        else:
            leaves.append(arg)
    return leaves


def _fusion_trees(graph: Graph) -> tuple[set[Node], set[Node]]:
    """Elementwise producers to inline into their single elementwise consumer; records the trees'
    roots. A tree fuses only when every array it reads has the root's exact shape, and never
    across a write (a mutation, or a region that writes): the inlined producer would read the
    memory after the write (``first = d[0] / b[0]``, a loop writing ``d``, ``first * 2``)."""
    inlined: set[Node] = set()
    writes = _writes_before(graph)
    for node in graph.nodes:
        if _fusable(node) and len(node.users) == 1:
            user = node.users[0]
            if _fusable(user) and user.graph is node.graph and user.meta.shape == node.meta.shape \
                    and writes[user] == writes[node]:
                inlined.add(node)
    roots = set()
    for node in graph.nodes:
        if not _fusable(node) or node in inlined:
            continue
        leaves = _tree_leaves(node, inlined)
        arrays = [l for l in leaves if isinstance(l, Node) and l.meta is not None and l.meta.ndim]
        if arrays and all(l.meta.shape == node.meta.shape for l in arrays) \
                and any(n in inlined for n in node.args if isinstance(n, Node)):
            roots.add(node)
        else:  # not worth it, or shapes that broadcast: op by op
            _uninline(node, inlined)
    return inlined, roots


def _writes_before(graph: Graph) -> dict[Node, int]:
    """For each node, how many nodes before it write memory (mutations, regions holding one)."""
    counts, seen = {}, 0
    for node in graph.nodes:
        counts[node] = seen
        if _mutates(node) or (node.op == "region" and any(
                _mutates(n) for sub in node.info.subgraphs.values() for n in _all_nodes(sub))):
            seen += 1
    return counts


def _uninline(node: Node, inlined: set[Node]) -> None:
    for arg in node.args:
        if isinstance(arg, Node) and arg in inlined:
            inlined.discard(arg)
            _uninline(arg, inlined)


def _may_alias(value: Any) -> bool:
    """An array value that may share memory with the destination: a view or an input. Fresh
    results of computations (ufuncs, reductions, creations) never do."""
    if not isinstance(value, Node) or value.meta is None or value.meta.ndim == 0:
        return False
    if value.op != "call":
        return True
    op = REGISTRY.ops.get(value.target)
    return op is None or op.kind in ("view", "mutation") or value.target in ("getitem", "constant")


def _is_compare(name: str) -> bool:
    op = REGISTRY.ops.get(name)
    return op is not None and op.comparison


def _dtype_of(args: tuple) -> np.dtype | None:
    for a in args:
        if isinstance(a, Node) and a.meta is not None:
            return a.meta.dtype
    return None


def compile_structured(graph: Graph, example_inputs: list,
                       load: Callable[[str, str], Any]) -> CompiledGraph:
    """One njit function for the whole graph (raises NotLowerable when an op has no lowering)."""
    emitter = _Emitter(graph)
    params = []
    for ph in graph.placeholders:
        name = emitter.fresh(ph.name)
        emitter.names[ph] = name
        params.append(name)
    outs = emitter.body(graph, "    ")
    consts = [f"_ac_const{i}" for i in range(len(emitter.constants))]
    signature = ", ".join(params + consts)
    body = "\n".join(emitter.lines) or "    pass"
    ret = ", ".join(outs) + ("," if len(outs) == 1 else "")
    source = ("# Generated by astcompiler (numba backend, structured control flow).\n"
              "import numpy as np\nimport numba\n" + HELPERS + "".join(sorted(emitter.helpers))
              + "\n\n@numba.njit(cache=True, error_model='numpy')\n"
              f"def structured_kernel({signature}):\n{body}\n    return ({ret})\n")
    module = load("structured", source)
    kernel = module.structured_kernel
    constants = tuple(emitter.constants)
    output_nodes = list(graph.output_node.args[0])
    placeholders = graph.placeholders
    fix = [_output_fixer(n, placeholders) for n in output_nodes]

    mutates = any(_mutates(n) for n in _all_nodes(graph))

    python_ints = [(i, *python_int_bounds(ph)) for i, ph in enumerate(placeholders)
                   if ph.meta is not None and ph.meta.pytype is int]

    def run(*inputs: Any) -> tuple:
        for i, low, high in python_ints:  # a Python int argument the kernel cannot represent
            if not low <= inputs[i] <= high:
                from ..eager import interpret
                return interpret(graph, inputs)
        try:
            results = kernel(*inputs, *constants)
        except (OverflowError, np.linalg.LinAlgError):  # LinAlgError: only where nothing mutates
            if mutates:  # inputs may be half-updated: running again would be wrong
                raise OverflowError("a Python int in a compiled loop outgrew 64 bits after the "
                                    "loop had written to its inputs; run this function eagerly "
                                    "(astcompiler.disable) or use NumPy integers") from None
            from ..eager import interpret
            return interpret(graph, inputs)  # Python's arbitrary-precision ints
        return tuple(f(r, inputs) for f, r in zip(fix, results))

    return CompiledGraph(run, output_code=source, kernels={"structured_kernel": source})


def _all_nodes(graph: Graph) -> list[Node]:
    nodes = []
    for node in graph.nodes:
        nodes.append(node)
        if node.op == "region":
            for sub in node.info.subgraphs.values():
                nodes += _all_nodes(sub)
    return nodes


def _mutates(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op is not None and op.side_effects


def _output_fixer(node: Any, placeholders: list[Node]) -> Callable[[Any, tuple], Any]:
    """numba returns Python floats for NumPy scalars and new objects for inputs: restore both."""
    if isinstance(node, Node) and node in placeholders:
        position = placeholders.index(node)
        return lambda value, inputs: inputs[position]
    meta = node.meta if isinstance(node, Node) else None
    if meta is not None and meta.pytype is not None:
        return lambda value, inputs: meta.pytype(value)
    if meta is not None and meta.scalar:
        kind = meta.dtype.type
        return lambda value, inputs: kind(value)
    if meta is not None and meta.ndim == 0:
        return lambda value, inputs: np.asarray(value, meta.dtype)
    return lambda value, inputs: value
