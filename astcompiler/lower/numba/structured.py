"""Graphs with control-flow regions: one ``njit`` function with real loops and branches.

Regions (``for_range``, ``while_loop``, ``cond``) become ``for``/``while``/``if`` statements, their
loop-carried values become local variables, and every op becomes one statement written the way a
numba user writes NumPy code (element access, slices, ufuncs on arrays and scalars). Ops numba
cannot compile on its own get small njit helpers here (``np.dot`` of vectors without SciPy, ufunc
``outer``). An op with no lowering makes the whole graph run with NumPy instead: never a wrong
answer. Scalars are cast to their node's dtype after each op, so fixed-width integer arithmetic
wraps as NumPy's does, and Python scalars (loop indices, counters) stay 64-bit ints or floats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ...graph import Graph, Node
from ...ops import REGISTRY
from ..base import CompiledGraph
from .scalar import python_int_bounds


class NotLowerable(Exception):
    """The graph has an op this lowering does not handle (it then runs with NumPy)."""


HELPERS = '''
@numba.njit(cache=True)
def _ac_dot(a, b):
    if a.ndim == 1 and b.ndim == 1:
        total = a[0] * b[0] * 0
        for k in range(a.shape[0]):
            total += a[k] * b[k]
        return total
    raise ValueError("_ac_dot: only vectors")


@numba.njit(cache=True)
def _ac_matvec(a, b):
    out = np.zeros(a.shape[0], np.result_type(a.dtype, b.dtype))
    for i in range(a.shape[0]):
        total = out[i]
        for k in range(a.shape[1]):
            total += a[i, k] * b[k]
        out[i] = total
    return out


@numba.njit(cache=True)
def _ac_matmul(a, b):
    out = np.zeros((a.shape[0], b.shape[1]), np.result_type(a.dtype, b.dtype))
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            aik = a[i, k]
            for j in range(b.shape[1]):
                out[i, j] += aik * b[k, j]
    return out
'''

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

_FITS = '''
@numba.njit(cache=True)
def _ac_fits_{dtype}(v):
    if v < {low} or v > {high}:
        raise OverflowError("a Python int out of bounds for {dtype}")
    return v
'''

_PY_COMPARE = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
               "equal": "==", "not_equal": "!="}
_PY_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
_PY_FLOAT_INFIX = {"add": "+", "subtract": "-", "multiply": "*"}

_CHECKED_INT_OPS = {"add", "subtract", "multiply"}
_UNCHECKED_INT_OPS = {"floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor",
                      "right_shift", "absolute", "less", "less_equal", "greater", "greater_equal",
                      "equal", "not_equal", "logical_not", "logical_and", "logical_or"}

_OUTER = '''
@numba.njit(cache=True)
def _ac_outer_{name}(a, b):
    out = np.empty((a.shape[0], b.shape[0]), np.{dtype})
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = np.{name}(a[i], b[j])
    return out
'''

_NUMBA_REDUCTIONS = {"sum": "np.sum", "prod": "np.prod", "max": "np.max", "min": "np.min",
                     "mean": "np.mean", "any": "np.any", "all": "np.all", "argmax": "np.argmax",
                     "argmin": "np.argmin"}


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

    def index(self, index: Any) -> str:
        items = index if isinstance(index, tuple) else (index,)
        parts = []
        for item in items:
            if item is None or item is Ellipsis or isinstance(item, (list, np.ndarray)):
                raise NotLowerable("advanced or None/Ellipsis indexing")
            if isinstance(item, Node) and item.meta is not None and item.meta.ndim > 0:
                raise NotLowerable("indexing with an array")
            parts.append(self.value(item))
        return ", ".join(parts)

    def emit(self, indent: str, text: str, node: Node | None = None) -> None:
        origin = f"  # {node.origin}" if node is not None and node.origin else ""
        self.lines.append(f"{indent}{text}{origin}")

    # ----- graphs ------------------------------------------------------------------------------
    def body(self, graph: Graph, indent: str) -> list[str]:
        """Emit the graph's call and region nodes; returns the output expressions."""
        inlined, roots = _fusion_trees(graph)
        self.roots |= roots
        for node in graph.nodes:
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
            return f"{self.value(base)}[{self.index(args[1])}]"
        if target == "setitem":
            dst, index, value = args
            src = self.value(value, dst.meta.dtype if isinstance(dst, Node) and dst.meta else None)
            if _may_alias(value):
                src = f"{src}.copy()"  # NumPy reads the right-hand side before writing
            self.emit(self._indent, f"{self.value(dst)}[{self.index(index)}] = {src}", node)
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
            a, b = args[:2]
            if not (isinstance(a, Node) and isinstance(b, Node)):
                raise NotLowerable("dot of constants")
            shapes = (a.meta.ndim, b.meta.ndim)
            helper = {(1, 1): "_ac_dot", (2, 1): "_ac_matvec", (2, 2): "_ac_matmul"}.get(shapes)
            if helper is None:
                raise NotLowerable(f"dot of {shapes}-d arrays")
            return f"{helper}({self.value(a)}, {self.value(b)})"
        if target == "ufunc_outer":
            ufunc_name = args[0] if isinstance(args[0], str) else getattr(args[0], "__name__", "")
            self.helpers.add(_OUTER.format(name=ufunc_name, dtype=_dtype_name(like)))
            return f"_ac_outer_{ufunc_name}({self.value(args[1])}, {self.value(args[2])})"
        if target in ("zeros", "ones", "empty"):
            shape = args[0] if args else kwargs.get("shape")
            return f"np.{target}({self.value(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))}, np.{_dtype_name(like)})"
        if target in ("zeros_like", "ones_like", "empty_like") and not kwargs.get("shape"):
            return f"np.{target[:-5]}({self.value(args[0])}.shape, np.{_dtype_name(like)})"
        if target == "transpose":
            return f"np.transpose({self.value(args[0])}, {self.value(tuple(args[1]))})"
        if target in _NUMBA_REDUCTIONS and op is not None and op.kind == "reduction":
            if kwargs.get("axis") is not None or kwargs.get("keepdims") or kwargs.get("dtype") \
                    or kwargs.get("ddof"):
                raise NotLowerable(f"{target} with axis/keepdims/dtype")
            return f"{_NUMBA_REDUCTIONS[target]}({self.value(args[0])})"
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
        if op is not None and op.kind == "pointwise" and op.extra.get("ufunc") is not None:
            if kwargs:
                raise NotLowerable(f"{target} with keywords")
            operands = ", ".join(self.weak_int(a, like, target) if _weak_int(a) else
                                 self.value(a, like if not _is_compare(target) else _dtype_of(args))
                                 for a in args)
            return f"np.{target}({operands})"
        raise NotLowerable(f"op {target}")

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
            raise NotLowerable(f"{target} on Python complex numbers")
        integral = all(k in (int, bool) for k in kinds)
        self.helpers.add(CHECKED)
        self.helpers.add(PYTHON_SCALARS)
        # bools take part as ints (as in Python); ints meet floats as floats
        plain = [f"int({self.value(a)})" if k in (bool, int) else self.value(a)
                 for a, k in zip(args, kinds)]
        values = plain if integral else [f"float({v})" for v in plain]
        if target in _PY_COMPARE:
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
            if target in ("floor_divide", "remainder", "divide", "right_shift"):
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
        else:
            text = f"np.{node.target}({', '.join(args)})"
        return f"np.{_dtype_name(like)}({text})"

    def region(self, node: Node, indent: str) -> None:
        info = node.extra
        n_controls, n_carried = info["n_controls"], info["n_carried"]
        controls = node.args[:n_controls]
        init = node.args[n_controls:n_controls + n_carried]
        captured = node.args[n_controls + n_carried:]
        names = info.get("names") or [f"c{k}" for k in range(n_carried)]
        carried = [self.fresh(f"{n}_c") for n in names]
        for var, value in zip(carried, init):
            self.emit(indent, f"{var} = {self.value(value)}", node)
        for user in node.users:  # results: getitem(region, k) are the carried variables
            if user.op == "call" and user.target == "getitem" and user.args[0] is node:
                self.names[user] = carried[user.args[1]]
        subgraphs = info["subgraphs"]
        inner = indent + "    "
        if node.target == "for_range":
            start, stop, step, enter = (self.value(c) for c in controls)
            index = self.fresh("i")
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


def _python_kind(value: Any) -> type | None:
    if isinstance(value, Node):
        return value.meta.pytype if value.meta is not None else None
    return type(value)


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
    return op.extra.get("ufunc") is not None or node.target in ("where", "astype")


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
    roots. A tree fuses only when every array it reads has the root's exact shape."""
    inlined: set[Node] = set()
    for node in graph.nodes:
        if _fusable(node) and len(node.users) == 1:
            user = node.users[0]
            if _fusable(user) and user.graph is node.graph and user.meta.shape == node.meta.shape:
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
    return name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")


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
        except OverflowError:
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
            for sub in node.extra["subgraphs"].values():
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
