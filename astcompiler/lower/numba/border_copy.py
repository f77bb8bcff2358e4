"""Copies whose output is overwritten in a region before anything reads it: copy the border only.

``out = u.copy(); out[1:-1, 1:-1] = f(u[:-2, 1:-1], ...)`` (a Jacobi step) is planned as a copy
kernel over all of ``out`` and a kernel storing into the view ``out[1:-1, 1:-1]``: every interior
element is written twice, and a memory-bound step moves twice the bytes it needs. When

* the copy kernel computes one node, a copy (``OpDef.scalar == "{0}"`` in its own dtype: no
  arithmetic, no floating-point flag, no error), into a fresh buffer,
* the next write to that buffer is a store fused into a kernel (``KernelPlan.store_into``) that
  writes every element of a view given by step-1 slices and integers, and
* nothing reads the buffer before that store, and the storing kernel reads no memory of it,

the wrapper allocates the buffer as before, copies only the part outside the view (at most two
NumPy slice assignments per indexed axis, spelled with the store's own bounds, so negative and
run-time bounds normalise as NumPy normalises them), and lets the storing kernel write the rest.
The values, dtype and layout of the result are the plain copy-then-store's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...graph import Node
from ...ops import REGISTRY
from .plan import KernelPlan, KernelStep, Plan, store_of


@dataclass(frozen=True)
class BorderCopy:
    """The copy kernel's source and the index of the view the later store overwrites."""

    source: Any
    index: tuple


def border_copies(plan: Plan) -> dict[KernelPlan, BorderCopy]:
    """Copy kernels of ``plan`` whose output is overwritten in a region before it is read."""
    order = {node: i for i, node in enumerate(plan.graph.nodes)}
    storing = {k.store_into: k for k in plan.kernels if k.store_into is not None}
    found: dict[KernelPlan, BorderCopy] = {}
    for step in plan.steps:
        if isinstance(step, KernelStep):
            border = _border_copy(plan, step.kernel, storing, order)
            if border is not None:
                found[step.kernel] = border
    return found


def _border_copy(plan: Plan, kernel: KernelPlan, storing: dict[Node, KernelPlan],
                 order: dict[Node, int]) -> BorderCopy | None:
    if kernel.style != "pointwise" or kernel.store_into is not None or kernel.masked is not None \
            or len(kernel.nodes) != 1 or kernel.outputs != kernel.nodes:
        return None
    (copy,) = kernel.nodes
    source = _copied_value(copy)
    if source is None:
        return None
    readers = sorted((u for u in copy.users if u.op != "output"), key=order.__getitem__)
    if not readers or readers[0] not in storing:
        return None
    mutation = readers[0]
    store = store_of(mutation)
    index = _region_index(store.index, len(copy.meta.shape)) if store.dst is copy else None
    if index is None or _reads(plan, storing[mutation], copy):
        return None
    return BorderCopy(source, index)


def _copied_value(node: Node) -> Any:
    """The array ``node`` copies element for element in its own dtype, else None."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    if op is None or op.kind != "pointwise" or op.scalar != "{0}" or not node.args:
        return None
    if op.returns_input is not None and op.returns_input(node.args, node.kwargs):
        return None
    source = node.args[0]
    meta = source.meta if isinstance(source, Node) else None
    if meta is None or node.meta is None or meta.scalar or not meta.shape:
        return None
    if np.dtype(meta.dtype) != np.dtype(node.meta.dtype) \
            or tuple(meta.shape) != tuple(node.meta.shape):
        return None
    return source


def _region_index(index: Any, ndim: int) -> tuple | None:
    """``index`` as a tuple of step-1 slices (literal or run-time int bounds) and literal ints,
    at most one per axis; None for any other index."""
    items = index if isinstance(index, tuple) else (index,)
    if len(items) > ndim:
        return None
    for item in items:
        if isinstance(item, slice):
            if item.step not in (None, 1) or not all(
                    p is None or type(p) is int or isinstance(p, Node)
                    for p in (item.start, item.stop)):
                return None
        elif type(item) is not int:
            return None
    return tuple(items)


def _reads(plan: Plan, kernel: KernelPlan, buffer: Node) -> bool:
    """Whether ``kernel`` reads any memory of ``buffer`` (an input sharing its storage)."""
    for node in kernel.inputs:
        if node is buffer or buffer in plan.roots.get(node, frozenset()):
            return True
    return False


def border_parts(writer: Any, index: tuple) -> list[str]:
    """Subscripts (wrapper source) of the parts of an array outside ``array[index]``: per
    indexed axis, the elements before and after its range, within the ranges of earlier axes."""
    parts = []
    for axis, item in enumerate(index):
        before = [writer.index(i) if isinstance(i, slice) else writer.value(i)
                  for i in index[:axis]]
        if isinstance(item, slice):
            start, stop = item.start, item.stop
            pieces = ([] if start is None else [f":{writer.value(start)}"]) \
                + ([] if stop is None else [f"{writer.value(stop)}:"])
        else:
            pieces = [f":{item}"] + ([f"{item + 1}:"] if item != -1 else [])
        parts += [", ".join(before + [piece]) for piece in pieces]
    return parts


def emit_border_copy(writer: Any, kernel: KernelPlan, border: BorderCopy,
                     origin: str | None) -> bool:
    """The wrapper lines that copy ``border.source`` into the kernel's output outside the view
    the later store overwrites (``writer``: the ``WrapperWriter``). False, and nothing emitted,
    when a run-time bound of the view is computed only after this step: the copy kernel runs."""
    bounds = [p for item in border.index if isinstance(item, slice)
              for p in (item.start, item.stop) if isinstance(p, Node)]
    if any(p not in writer.var for p in bounds + [border.source]):
        return False
    dst, src = writer.var[kernel.outputs[0]], writer.value(border.source)
    writer.emit(f"# {dst}[{writer.index(border.index)}] is overwritten before it is read: "
                "only the rest is copied", origin)
    for part in border_parts(writer, border.index):
        writer.emit(f"{dst}[{part}] = {src}[{part}]", origin)
    return True
