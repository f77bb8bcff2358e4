"""What the numba op table's loop-code rules share (``optable.py``, ``oprules_*.py``).

A loop rule writes one node of a structured function (``structured.py``) as numba source: it
gets the emitter (``LoopEmitter``: operand sources, indices, helper functions, statements) and
the node. Rules raise ``NotLowerable`` for what they cannot write exactly (the region then
becomes a host loop, never a wrong answer) and return ``NOT_MINE`` where the op's own rule does
not apply, so the node is written like any op of its kind (Python numbers, ufuncs).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

import numpy as np

from ...graph import Graph, Node
from ...ops import REGISTRY


class NotLowerable(Exception):
    """The graph has an op the loop lowering does not handle (it then runs piece by piece)."""


class LoopEmitter(Protocol):
    """What a structured function's emitter offers the op table's loop rules."""

    graph: Graph
    helpers: set[str]  # njit helper sources the function's module defines

    def value(self, v: Any, like: np.dtype | None = None) -> str:
        """A node or constant as source; Python scalars typed like ``like`` (NEP 50 weak)."""

    def index(self, base: Any, index: Any) -> str:
        """``base[index]``'s index as source, with bounds proven or checked."""

    def statement(self, text: str, node: Node) -> None:
        """Emit a statement (a store) where the node is written."""

    def may_alias(self, value: Any) -> bool:
        """Whether array ``value`` may share memory with a store's destination."""


NOT_MINE: Any = NotImplemented  # a rule's answer: not this rule's case, lower it by its kind
LoopRule = Callable[[LoopEmitter, Node], Any]  # -> source, None (a statement) or NOT_MINE


def number_source(v: Any) -> str:
    """Source numba types for a Python number: infinities and NaN as ``np.inf``/``np.nan``."""
    if isinstance(v, complex):
        return f"complex({number_source(v.real)}, {number_source(v.imag)})"
    if isinstance(v, float) and not np.isfinite(v):
        return "np.nan" if v != v else ("np.inf" if v > 0 else "(-np.inf)")
    return repr(v)


# -- operands --------------------------------------------------------------------------------


def python_kind(value: Any) -> type | None:
    """The Python type of a value typed as a Python number (a constant: its type)."""
    if isinstance(value, Node):
        return value.meta.pytype if value.meta is not None else None
    return type(value)


def python_number(value: Any) -> bool:
    """A Python number: a graph value typed as one, or a constant bool/int/float/complex."""
    return python_kind(value) in (bool, int, float, complex)


def python_context(node: Node) -> bool:
    """An op on Python numbers giving a Python number: Python's semantics (``oprules_python``)."""
    meta = node.meta
    return meta is not None and meta.pytype is not None and not node.kwargs \
        and all(python_number(a) for a in node.args)


def weak_int(value: Any) -> bool:
    """A graph value typed as a Python int."""
    return isinstance(value, Node) and value.meta is not None and value.meta.pytype is int


def number_kind(value: Any) -> str:
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


def representative(value: Any) -> Any:
    """A value with ``value``'s NumPy promotion behaviour (Python numbers are weak)."""
    if isinstance(value, Node):
        meta = value.meta
        return meta.pytype(0) if meta.pytype is not None else np.dtype(meta.dtype)
    return value


def is_compare(name: str) -> bool:
    """A comparison op (``OpDef.comparison``): operands compared in their own dtype."""
    op = REGISTRY.ops.get(name)
    return op is not None and op.comparison


def dtype_of(args: tuple) -> np.dtype | None:
    """The dtype of the first graph value among ``args``."""
    for a in args:
        if isinstance(a, Node) and a.meta is not None:
            return a.meta.dtype
    return None


# -- the graph around a node ---------------------------------------------------------------------


def all_nodes(graph: Graph) -> list[Node]:
    """The graph's nodes and, after each region, the nodes of its subgraphs (recursively)."""
    nodes = []
    for node in graph.nodes:
        nodes.append(node)
        if node.op == "region":
            for sub in node.info.subgraphs.values():
                nodes += all_nodes(sub)
    return nodes


def mutates(node: Node) -> bool:
    """A call with side effects (``OpDef.side_effects``: writes to memory)."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op is not None and op.side_effects


def reads_index(node: Any) -> bool:
    """``a[index]``: a view op spelled with Python's subscript syntax (``OpDef.subscript``)."""
    op = REGISTRY.ops.get(node.target) if isinstance(node, Node) and node.op == "call" else None
    return op is not None and op.subscript and op.kind == "view"


def stores_index(node: Any) -> bool:
    """``a[index] = value``: a store spelled with Python's subscript syntax (``OpDef.subscript``;
    the other store, ``copy_``, writes all of ``a`` with NumPy's casting rules)."""
    op = REGISTRY.ops.get(node.target) if isinstance(node, Node) and node.op == "call" else None
    return op is not None and op.subscript and op.kind == "mutation"


def region_result(node: Any) -> tuple[Node, int] | None:
    """``(region, k)`` when ``node`` reads result ``k`` of a region (``getitem(region, k)``)."""
    if isinstance(node, Node) and node.op == "call" and node.target == "getitem" \
            and node.args and isinstance(node.args[0], Node) and node.args[0].op == "region":
        return node.args[0], node.args[1]
    return None


def view_or_copy_unobservable(node: Node, graph: Graph) -> bool:
    """Whether ``node`` (a view op that may copy, as reshape) is a view or a copy cannot change
    the program: every write goes to fresh memory other than its base's, and it is not returned,
    or returned as the one holder of a fresh C-ordered array (``returned_view_of_fresh``)."""
    outer = _outer_values(graph)
    if node in _escaping(graph) and not returned_view_of_fresh(node, graph, outer):
        return False
    root = _storage_root(node, outer)
    for other in all_nodes(graph):
        if mutates(other):
            dst = _storage_root(other.args[0], outer) if other.args else None
            if dst is None or dst is root or not _fresh(dst):
                return False
    return True


def returned_view_of_fresh(node: Node, graph: Graph, outer: dict[Node, Any]) -> bool:
    """``node`` views its operand directly, a fresh array that NumPy makes C-ordered
    (``c_ordered``) and that nothing but ``node`` returns.

    A reshape of a C-ordered array is a view in NumPy and in loop code alike, both C-contiguous
    and not owning their data (``flags`` equal); a copy would hold the same values, and with no
    other holder of the operand and no write to it nobody can tell the two apart. Only ``.base``
    differs: NumPy's is the operand, an array returned by numba has numba's ``MemInfo`` (as every
    array a structured function returns)."""
    operand = node.args[0] if node.args else None
    if not isinstance(operand, Node) or operand is not _storage_root(node, outer) \
            or not _fresh(operand) or not c_ordered(operand):
        return False
    return operand not in _escaping(graph, skip=node)


def c_ordered(value: Any, seen: dict[Node, bool] | None = None) -> bool:
    """NumPy computes ``value`` as a C-contiguous array whatever its inputs' layouts: a creation
    from sizes alone (no array argument, no ``order=``), a pointwise op whose operands with two
    or more non-unit dimensions are all ``c_ordered`` (NumPy's K order ignores broadcast and
    length-1 axes, and picks C when nothing decides), or any fresh array with at most one
    non-unit dimension (``value`` a constant: its own layout; anything else: False)."""
    if isinstance(value, np.ndarray):
        return _at_most_one_axis(value.shape) or value.flags.c_contiguous
    if not isinstance(value, Node) or value.meta is None:
        return False
    seen = {} if seen is None else seen
    if value not in seen:
        seen[value] = False  # (no cycles in a graph; a guard against deep recursion only)
        seen[value] = _c_ordered_node(value, seen)
    return seen[value]


def _c_ordered_node(node: Node, seen: dict[Node, bool]) -> bool:
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    if op is None or op.kind in ("view", "mutation") or op.returns_input is not None:
        return False  # (an op that may return its input may return a strided view)
    if _at_most_one_axis(node.meta.shape):
        return True
    if op.kind == "creation":
        return "order" not in node.kwargs and not any(
            isinstance(a, (Node, np.ndarray)) for a in node.args)
    if op.kind == "pointwise":
        operands = [a for a in (*node.args, *node.kwargs.values())
                    if isinstance(a, (Node, np.ndarray))]
        return "order" not in node.kwargs and all(
            _at_most_one_axis(_shape_of(a)) or c_ordered(a, seen) for a in operands)
    return False


def _shape_of(value: Any) -> tuple:
    meta = value.meta if isinstance(value, Node) else None
    return value.shape if meta is None and isinstance(value, np.ndarray) else (
        meta.shape if meta is not None else (None, None))


def _at_most_one_axis(shape: tuple) -> bool:
    """At most one dimension that may be longer than 1 (symbolic sizes may be)."""
    return sum(1 for d in shape if not (isinstance(d, int) and d == 1)) <= 1


def _outer_values(graph: Graph) -> dict[Node, Any]:
    """Each captured placeholder of every region body, mapped to the outer value it receives."""
    outer: dict[Node, Any] = {}
    for node in all_nodes(graph):
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
    if node.op != "call":
        return False
    op = REGISTRY.ops.get(node.target)  # (views, as getitem, and mutations are not fresh)
    return op is not None and op.kind not in ("view", "mutation")


def _escaping(graph: Graph, skip: Node | None = None) -> set[Node]:
    """Nodes whose memory the graph's outputs may share: the outputs, the bases of views among
    them, and through a region's result the carried values behind it (initial and per body).
    ``skip``: a node whose own operands are not followed (what else returns them)."""
    seen: set[Node] = set()
    stack = [v for v in graph.output_node.args[0] if isinstance(v, Node)]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        result = region_result(node)
        if result is not None:
            base, k = result
            stack += [base.info.split(base.args)[1][k]]
            for sub in base.info.subgraphs.values():
                outs = sub.output_node.args[0]
                stack += [outs[k]] if k < len(outs) else []
            stack = [v for v in stack if isinstance(v, Node)]
            continue
        op = REGISTRY.ops.get(node.target) if node.op == "call" else None
        if op is not None and op.kind == "view" and node is not skip:
            stack += [a for a in node.args if isinstance(a, Node)]
    return seen
