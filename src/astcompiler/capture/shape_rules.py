"""Symbolic shape rules: the output shape of an op when input sizes are sympy expressions.

The example run gives every result's dtype and its shape *for the hints*; these rules give the
shape as expressions of the symbols (broadcasting, reductions, indexing, reshape, transpose,
matmul, concatenation, creation). An op without a rule whose inputs are symbolic gets fresh
unbacked sizes: correct (kernels read sizes at run time) but opaque to later decisions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import sympy

from ..graph import Node

if TYPE_CHECKING:  # pragma: no cover
    from .tracer import Tracer

Shape = tuple
Rule = Callable[["Tracer", tuple, dict, Shape], "Shape | None"]
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn
    return register


def is_static(shape: Shape) -> bool:
    return all(isinstance(d, (int, np.integer)) for d in shape)


def shape_of(value: Any) -> Shape:
    if isinstance(value, Node):
        return value.meta.shape if value.meta is not None else ()
    return np.shape(value)


def value_expr(tracer: "Tracer", value: Any) -> Any:
    """The sympy value of an int argument (a constant, or a size computed in the graph)."""
    if isinstance(value, Node):
        return tracer.node_exprs.get(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return sympy.Integer(int(value))
    return None


# ----- broadcasting and reductions ---------------------------------------------------------------
def broadcast(tracer: "Tracer", shapes: list[Shape]) -> Shape:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        dims = [s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0]
        out.append(_broadcast_dim(tracer, dims))
    return tuple(out)


def _broadcast_dim(tracer: "Tracer", dims: list[Any]) -> Any:
    static = [int(d) for d in dims if isinstance(d, (int, np.integer)) and d != 1]
    symbolic = [d for d in dims if not isinstance(d, (int, np.integer))]
    env = tracer.shape_env
    if any(env.symbols.get(s) is not None and env.symbols[s].hint is None
           for d in symbolic for s in sympy.sympify(d).free_symbols):
        return env.create_unbacked("broadcast") if len(set(symbolic)) > 1 or static else symbolic[0]
    if static:
        for d in symbolic:  # NumPy needs them equal: the code specializes this size
            tracer.evaluate_relation(sympy.Eq(d, static[0]))
        return static[0]
    if not symbolic:
        return 1
    first = symbolic[0]
    for d in symbolic[1:]:
        if d != first:
            tracer.evaluate_relation(sympy.Eq(first, d))
    return first


def reduced(shape: Shape, axis: Any, keepdims: bool) -> Shape:
    if axis is None:
        return tuple(1 for _ in shape) if keepdims else ()
    axes = {axis} if isinstance(axis, int) else set(axis)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


# ----- indexing ------------------------------------------------------------------------------------
def _slice_length(tracer: "Tracer", dim: Any, s: slice) -> Any:
    """Length of ``dim`` sliced by ``s`` (Python semantics, symbolic where needed)."""
    step = 1 if s.step is None else s.step
    if not isinstance(step, (int, np.integer)) or step == 0:
        return None
    start = value_expr(tracer, s.start) if s.start is not None else None
    stop = value_expr(tracer, s.stop) if s.stop is not None else None
    if (s.start is not None and start is None) or (s.stop is not None and stop is None):
        return None
    dim = sympy.sympify(dim)

    def clamp(bound: Any, default: Any) -> Any:
        if bound is None:
            return default
        if bound.is_number and bound < 0:
            return sympy.Max(dim + bound, 0 if step > 0 else -1)
        if bound.is_number:
            return sympy.Min(bound, dim) if step > 0 else sympy.Min(bound, dim - 1)
        return sympy.Min(bound, dim)  # a run-time bound (loop index): assumed non-negative

    if step > 0:
        lo, hi = clamp(start, sympy.Integer(0)), clamp(stop, dim)
        length = sympy.ceiling((hi - lo) / step)
    else:
        lo, hi = clamp(start, dim - 1), clamp(stop, sympy.Integer(-1))
        length = sympy.ceiling((lo - hi) / -step)
    length = sympy.Max(length, 0)
    return _simplify_size(tracer, length)


def _simplify_size(tracer: "Tracer", expr: Any) -> Any:
    """Simplify with the symbols' lower bounds (backed sizes are >= 2): each symbol s becomes
    ``t + min`` with ``t >= 0`` while simplifying, then back."""
    subs, back = {}, {}
    for symbol in expr.free_symbols:
        info = tracer.shape_env.symbols.get(symbol)
        if info is not None and info.min >= 1:
            shifted = sympy.Symbol(f"{symbol.name}_shifted", integer=True, nonnegative=True)
            subs[symbol] = shifted + info.min
            back[shifted] = symbol - info.min
    simplified = sympy.simplify(sympy.simplify(expr.subs(subs)).subs(back))
    return int(simplified) if simplified.is_Integer else simplified


@rule("getitem")
def _getitem(tracer: "Tracer", args: tuple, kwargs: dict, example: Shape) -> Shape | None:
    base, index = args
    shape = shape_of(base)
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, (list, np.ndarray)) or (isinstance(i, Node) and i.meta is not None
                                                   and i.meta.ndim > 0) for i in items):
        return None  # advanced indexing
    explicit = sum(1 for i in items if i is not None and i is not Ellipsis)
    out: list[Any] = []
    dim = 0
    for item in items:
        if item is Ellipsis:
            for _ in range(len(shape) - explicit):
                out.append(shape[dim])
                dim += 1
        elif item is None:
            out.append(1)
        elif isinstance(item, slice):
            if dim >= len(shape):
                return None
            length = _slice_length(tracer, shape[dim], item)
            if length is None:
                return None
            out.append(length)
            dim += 1
        else:  # an integer (constant or run-time): drops the dimension
            dim += 1
    out.extend(shape[dim:])
    return tuple(out)


# ----- views and shape manipulation ---------------------------------------------------------------
@rule("transpose")
def _transpose(tracer: "Tracer", args: tuple, kwargs: dict, example: Shape) -> Shape | None:
    shape = shape_of(args[0])
    axes = args[1] if len(args) > 1 else tuple(reversed(range(len(shape))))
    return tuple(shape[a] for a in axes)


@rule("reshape")
def _reshape(tracer: "Tracer", args: tuple, kwargs: dict, example: Shape) -> Shape | None:
    total = sympy.Integer(1)
    for d in shape_of(args[0]):
        total *= d
    wanted = [value_expr(tracer, d) for d in args[1]]
    if any(w is None for w in wanted):
        return None
    if any(w == -1 for w in wanted):
        known = sympy.Integer(1)
        for w in wanted:
            if w != -1:
                known *= w
        wanted = [_simplify_size(tracer, total / known) if w == -1 else w for w in wanted]
    return tuple(int(w) if getattr(w, "is_Integer", False) else w for w in wanted)


@rule("ravel", "flatten")
def _ravel(tracer: "Tracer", args: tuple, kwargs: dict, example: Shape) -> Shape | None:
    total = sympy.Integer(1)
    for d in shape_of(args[0]):
        total *= d
    return (int(total) if total.is_Integer else total,)


@rule("matmul", "dot")
def _matmul(tracer: "Tracer", args: tuple, kwargs: dict, example: Shape) -> Shape | None:
    a, b = shape_of(args[0]), shape_of(args[1])
    if len(a) == 0 or len(b) == 0 or len(a) > 2 or len(b) > 2:
        return None
    if len(a) == 2 and len(b) == 2:
        return (a[0], b[1])
    if len(a) == 2:
        return (a[0],)
    if len(b) == 2:
        return (b[1],)
    return ()


@rule("concatenate")
def _concatenate(tracer: "Tracer", args: tuple, kwargs: dict, example: Shape) -> Shape | None:
    arrays = args[0]
    axis = kwargs.get("axis", args[1] if len(args) > 1 else 0)
    if axis is None or not isinstance(arrays, (tuple, list)):
        return None
    shapes = [shape_of(a) for a in arrays]
    axis = axis % len(shapes[0])
    total = sum((sympy.sympify(s[axis]) for s in shapes), sympy.Integer(0))
    out = list(shapes[0])
    out[axis] = int(total) if total.is_Integer else total
    return tuple(out)


# ----- creation ------------------------------------------------------------------------------------
@rule("zeros", "ones", "empty", "full")
def _creation(tracer: "Tracer", args: tuple, kwargs: dict, example: Shape) -> Shape | None:
    shape = args[0] if args else kwargs.get("shape")
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    exprs = [value_expr(tracer, d) for d in dims]
    if any(e is None for e in exprs):
        return None
    return tuple(int(e) if e.is_Integer else e for e in exprs)


@rule("zeros_like", "ones_like", "empty_like", "full_like")
def _like(tracer: "Tracer", args: tuple, kwargs: dict, example: Shape) -> Shape | None:
    if kwargs.get("shape") is not None:
        return None
    return shape_of(args[0])


def symbolic_shape(tracer: "Tracer", name: str, kind: str, args: tuple, kwargs: dict,
                   example: Shape) -> Shape | None:
    """The op's output shape over symbols, or None when no rule applies."""
    if kind == "pointwise":
        shapes = [shape_of(a) for a in _array_args(args, kwargs)]
        return broadcast(tracer, shapes)
    if kind == "reduction":
        axis = kwargs.get("axis")
        return reduced(shape_of(args[0]), axis, kwargs.get("keepdims", False))
    fn = RULES.get(name)
    return fn(tracer, args, kwargs, example) if fn is not None else None


def _array_args(args: tuple, kwargs: dict) -> list[Any]:
    found = [a for a in (*args, *kwargs.values()) if isinstance(a, Node) and a.meta is not None]
    return found
