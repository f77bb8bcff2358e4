"""Transposed twins: NumPy's order for float sums of 2-D kernels on F-ordered operands.

NumPy's reductions follow memory order. ``a.sum(axis=1)`` of an F-ordered (or transposed,
``x.T``) ``a`` adds column after column, each row's total in order, exactly as ``a.T.sum(axis=0)``
adds the rows of the C-ordered ``a.T``; a kernel's rows loop adds pairwise, so until now such a
kernel handed the layout to NumPy (``flat_sums.exact_sum_test`` fails): slower than the plain
call at small sizes. A 2-D reduction kernel (a row sum, or a column sum, with its producers and
consumers) gets a *transposed twin*: the same nodes on the transposed operands (``x.T``; a 1-D
operand broadcast along the last axis as a column ``w[:, None]``), each reduction over the other
axis, lowered like any graph (``lower_graph``: its own layout tests and NumPy steps, so exact by
construction), built on the first call that meets an F-ordered layout. The wrapper calls it where
every 2-D operand is F-ordered (``f_ordered_test``) and reads its 2-D results back transposed:
F-ordered, as NumPy's results of F-ordered operands are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...graph import Graph, Node, TensorMeta, map_nodes
from .cpu import KernelCode
from .plan import KernelPlan
from .scalar import ReductionRule, ScalarRule

__all__ = ["TransposedTwin", "transposed_twin", "f_ordered_test", "twin_arguments", "SUFFIX"]

SUFFIX = "_transposed"  # a twin's function name: the kernel's, then this (a twin has no twin)

COLUMN = "col"  # a 1-D operand broadcast along the last axis: ``w[:, None]`` in the twin
TRANSPOSE = "T"  # a 2-D operand: ``x.T`` in the twin


@dataclass
class TransposedTwin:
    """The kernel's nodes over transposed operands, and how the wrapper passes and reads them."""

    graph: Graph  # placeholders in the kernel's input order; outputs: buffers then returns
    views: list[str]  # per input: TRANSPOSE, COLUMN or "" (passed as it is)
    flipped: list[bool]  # per output: a 2-D result, read back transposed


def _two_d_reduction(kernel: KernelPlan) -> bool:
    if len(kernel.shape) != 2 or kernel.masked is not None or kernel.store_into is not None \
            or kernel.gathered:
        return False
    return (kernel.style == "rows" and kernel.outer == 1) or \
        (kernel.style == "columns" and tuple(kernel.reduce_axes) == (0,))


def _flipped_axis(node: Node) -> int | None:
    """The other axis of a reduction over one axis of a 2-D value, or None."""
    axis = node.kwargs.get("axis")
    if isinstance(axis, (tuple, list)) and len(axis) == 1:
        axis = axis[0]
    if isinstance(axis, bool) or not isinstance(axis, int):
        return None
    return 1 - (axis % 2)


def transposed_twin(code: KernelCode) -> TransposedTwin | None:
    """The transposed twin of a 2-D kernel reducing one axis, or None (another kind of kernel,
    an op that is not elementwise, a 1-D operand read on both sides of the reduction)."""
    kernel = code.plan
    if kernel is None or not _two_d_reduction(kernel):
        return None
    before = _before_reduction(kernel)
    graph = Graph()
    env: dict[Node, Node] = {}
    views: list[str] = []
    for node in code.inputs:
        view = _input_view(node, kernel, before)
        if view is None:
            return None
        views.append(view)
        env[node] = graph.placeholder(f"input:{node.name}", _viewed_meta(node.meta, view),
                                      node.name)
    for node in kernel.nodes:
        made = _member(graph, node, kernel, env, before)
        if made is None:
            return None
        env[node] = made
    outputs = code.buffers + code.returns
    graph.output(tuple(env[n] for n in outputs))
    return TransposedTwin(graph, views, [n.meta is not None and n.meta.ndim == 2
                                         for n in outputs])


def _before_reduction(kernel: KernelPlan) -> set[Node]:
    """The members computed per element of the 2-D space (a reduction's operand and what it
    is computed from), whatever their own rank."""
    found: set[Node] = set()
    stack = [n.args[0] for n in kernel.nodes if isinstance(kernel.rules[n], ReductionRule)]
    stack += [n for n in kernel.nodes if n.meta is not None and n.meta.ndim == 2]
    members = set(kernel.nodes)
    while stack:
        node = stack.pop()
        if not isinstance(node, Node) or node in found or node not in members:
            continue
        found.add(node)
        if not isinstance(kernel.rules[node], ReductionRule):
            stack.extend(node.all_input_nodes())
    return found


def _readers(node: Node, kernel: KernelPlan) -> list[Node]:
    return [m for m in kernel.nodes if node in m.all_input_nodes()]


def _input_view(node: Node, kernel: KernelPlan, before: set[Node]) -> str | None:
    meta = node.meta
    if meta is None:
        return None
    if meta.ndim == 0:
        return ""
    if meta.ndim == 2:
        return TRANSPOSE
    if meta.ndim != 1:
        return None
    sides = {m in before for m in _readers(node, kernel)}
    if sides == {True}:
        return COLUMN
    return "" if sides == {False} else None


def _viewed_meta(meta: TensorMeta, view: str) -> TensorMeta:
    if view == TRANSPOSE:
        return TensorMeta(tuple(reversed(meta.shape)), meta.dtype, meta.scalar, meta.pytype)
    if view == COLUMN:
        return TensorMeta((meta.shape[0], 1), meta.dtype, meta.scalar, meta.pytype)
    return meta


def _member(graph: Graph, node: Node, kernel: KernelPlan, env: dict[Node, Node],
            before: set[Node]) -> Node | None:
    """The member's node in the twin: the same op on the twin's operands (a reduction over the
    other axis), its shape transposed; None where that would not be the same value."""
    rule, meta = kernel.rules[node], node.meta
    if meta is None or "out" in node.kwargs or any(v not in env for v in node.all_input_nodes()):
        return None
    kwargs = dict(node.kwargs)
    if isinstance(rule, ReductionRule):
        axis = _flipped_axis(node)
        if axis is None or len(node.args) != 1:
            return None
        kwargs["axis"] = (axis,) if isinstance(node.kwargs["axis"], (tuple, list)) else axis
        shape = tuple(reversed(meta.shape)) if meta.ndim == 2 else meta.shape
    elif isinstance(rule, ScalarRule):
        if meta.ndim == 2:
            if any(v.meta is not None and v.meta.ndim == 1 and v in kernel.rules
                   for v in node.all_input_nodes()):
                return None  # a row total broadcast along the last axis: another value here
            shape = tuple(reversed(meta.shape))
        elif meta.ndim == 0 or node not in before:
            shape = meta.shape
        else:
            return None  # a 1-D value broadcast over the 2-D space: not an operand of ours
    else:
        return None
    made = graph.call(node.target, map_nodes(node.args, env.__getitem__),
                      map_nodes(kwargs, env.__getitem__),
                      TensorMeta(shape, meta.dtype, meta.scalar, meta.pytype), node.origin)
    made.operator, made.place = node.operator, node.place  # NumPy's warnings, as the node's
    return made


def f_ordered_test(code: KernelCode, twin: TransposedTwin, name: Callable[[Node], str]) -> str:
    """A run-time test (source) that each 2-D operand's transpose is C-ordered with a positive
    last stride: the twin's kernels then add in NumPy's order (their own tests confirm it)."""
    tests = [f"{x}.strides[1] >= {x}.shape[0] * {x}.strides[0] and {x}.strides[0] > 0"
             for x in (name(n) for n, view in zip(code.inputs, twin.views) if view == TRANSPOSE)]
    return " and ".join(f"({t})" for t in tests) if tests else "False"


def twin_arguments(code: KernelCode, twin: TransposedTwin, name: Callable[[Node], str]) -> str:
    """The twin's arguments: the kernel's inputs viewed as its placeholders are."""
    suffix = {TRANSPOSE: ".T", COLUMN: "[:, None]", "": ""}
    return ", ".join(name(n) + suffix[view] for n, view in zip(code.inputs, twin.views))
