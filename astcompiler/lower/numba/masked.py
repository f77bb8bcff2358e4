"""Masked stores as one kernel: ``dst[mask] = expr(a[mask], b[mask], scalars...)``.

NumPy gathers every ``a[mask]`` into a compact temporary, evaluates ``expr`` on those, then
scatters the result into ``dst``. When every gather uses the very mask node of the store and the
mask has the shape of ``dst`` and of every gathered array, the same values come from one loop
over the mask's shape that touches only the selected elements::

    for i in ...:
        if mask[i]:
            dst[i] = expr(a[i], b[i])

with no temporaries and no compaction. Exactness:

* ``expr`` is evaluated on the selected elements only, as NumPy does (FP flags come from those);
* each ``i`` reads element ``i`` of its operands before it writes element ``i`` of ``dst``, so an
  operand that *is* ``dst`` is fine; when another operand shares memory with ``dst`` at run time
  (``snapshots``: checked by the kernel's entry point), the loop reads copies, as NumPy's gathers
  are copies;
* the stored value has ``dst``'s dtype (an expression) or is a scalar NumPy converts exactly as
  the kernel does (a Python bool into a bool array, a Python int or float into a float or complex
  array, a NumPy scalar or 0-d array of ``dst``'s dtype); anything else stays NumPy's.

``dst[mask] = scalar`` is the same kernel with an empty expression. The members are pointwise
nodes with a rule (``scalar.lower_pointwise``) whose array operands are members or gathers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ...graph import Graph, Node
from ...ops import REGISTRY
from .oprules_common import reads_index, stores_index
from .scalar import ScalarRule, kernel_dtype


@dataclass(eq=False)
class MaskedStore:
    """One ``dst[mask] = value`` the planner turns into a masked kernel."""

    store: Node  # the setitem node
    dst: Node
    mask: Node
    value: Any  # the stored value: a member, a gather, a scalar node or a constant
    members: list[Node] = field(default_factory=list)  # expression nodes, in graph order
    rules: dict[Node, ScalarRule] = field(default_factory=dict)
    gathers: dict[Node, Node] = field(default_factory=dict)  # getitem(x, mask) -> x

    @property
    def claimed(self) -> list[Node]:
        """Every node the kernel computes (members, gathers) or performs (the store)."""
        return self.members + list(self.gathers) + [self.store]

    @property
    def in_order(self) -> list[Node]:
        """The claimed nodes in an order NumPy can run them (the kernel's NumPy twin)."""
        return list(self.gathers) + self.members + [self.store]


# dtypes a Python int converts to exactly as a kernel does (through float64, as NumPy)
_FROM_INT = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex128))


def _storable(dtype: Any) -> bool:
    dt = np.dtype(dtype)
    return kernel_dtype(dt) or (dt.kind == "c" and dt.isnative)


def _barrier_positions(graph: Graph, is_barrier: Callable[[Node], bool]) -> dict[Node, int]:
    """Per node, how many barriers come before it in program order (its segment)."""
    segment, position = 0, {}
    for node in graph.nodes:
        position[node] = segment
        if node.op in ("call", "region") and is_barrier(node):
            segment += 1
    return position


def find_masked_stores(graph: Graph, rule_of: Callable[[Node], Any],
                       is_barrier: Callable[[Node], bool], static: Callable[[Any], bool],
                       accept: Callable[[Node, Any], bool] | None,
                       excluded: set[Node]) -> list[MaskedStore]:
    """The graph's masked stores a kernel computes exactly (see the module docstring).

    ``rule_of(node)``: a member's kernel rule (the planner's, for any sizes); ``static(meta)``:
    sizes a kernel can be planned for; ``accept``: the target's veto; ``excluded``: nodes that
    stay NumPy's."""
    segment = _barrier_positions(graph, is_barrier)
    order = {n: i for i, n in enumerate(graph.nodes)}
    found: list[MaskedStore] = []
    taken: set[Node] = set()
    for node in graph.nodes:
        if stores_index(node) and node not in excluded:
            masked = _match(node, rule_of, static, accept, excluded | taken)
            if masked is not None and _same_segment(masked, segment):
                masked.members.sort(key=order.__getitem__)
                found.append(masked)
                taken |= set(masked.claimed)
    return found


def _match(store: Node, rule_of: Callable[[Node], Any], static: Callable[[Any], bool],
           accept: Callable[[Node, Any], bool] | None, excluded: set[Node]) -> MaskedStore | None:
    if len(store.args) != 3 or store.kwargs:
        return None
    dst, mask, value = store.args
    if not (isinstance(dst, Node) and isinstance(mask, Node)) or dst.meta is None \
            or mask.meta is None or not _storable(dst.meta.dtype):
        return None
    if np.dtype(mask.meta.dtype).kind != "b" or mask.meta.scalar or not mask.meta.shape \
            or tuple(mask.meta.shape) != tuple(dst.meta.shape) or not static(mask.meta):
        return None
    masked = MaskedStore(store, dst, mask, value)
    if not _collect(masked, value, rule_of, accept, excluded):
        return None
    if not _converts(value, dst, masked):
        return None
    return masked


def _collect(masked: MaskedStore, value: Any, rule_of: Callable[[Node], Any],
             accept: Callable[[Node, Any], bool] | None, excluded: set[Node]) -> bool:
    """Gather the expression below ``value``: members (pointwise with a rule) and gathers."""
    allowed_users = {masked.store}
    stack = [value] if isinstance(value, Node) and not _scalar(value) else []
    seen: list[Node] = []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.append(node)
        if node in excluded:
            return False
        if _gather_of(node, masked.mask):
            masked.gathers[node] = node.args[0]
            continue
        if node.op != "call" or node.target not in REGISTRY \
                or REGISTRY[node.target].kind != "pointwise":
            return False
        rule = rule_of(node)
        if not isinstance(rule, ScalarRule) or (accept is not None and not accept(node, rule)):
            return False
        masked.rules[node] = rule
        masked.members.append(node)
        picks = rule.operands if rule.operands is not None else range(len(node.args))
        arrays = 0
        for i in picks:
            operand = node.args[i]
            if not isinstance(operand, Node) or _scalar(operand):
                continue
            arrays += 1
            stack.append(operand)
        if arrays == 0:
            return False  # a scalar computation: the wrapper's, before the kernel
    inside = set(seen) | allowed_users
    return all(u in inside for n in seen for u in n.users)


def _scalar(node: Node) -> bool:
    return node.meta is not None and tuple(node.meta.shape) == ()


def _gather_of(node: Node, mask: Node) -> bool:
    """``x[mask]`` with the store's mask node, ``x`` of the mask's shape and a kernel dtype."""
    if not reads_index(node) or len(node.args) != 2 or node.kwargs:
        return False
    source, index = node.args
    return index is mask and isinstance(source, Node) and source.meta is not None \
        and tuple(source.meta.shape) == tuple(mask.meta.shape) and _storable(source.meta.dtype) \
        and not source.meta.scalar


def _converts(value: Any, dst: Node, masked: MaskedStore) -> bool:
    """Whether the kernel stores ``value`` into ``dst`` exactly as NumPy's setitem converts it."""
    target = np.dtype(dst.meta.dtype)
    if isinstance(value, Node) and (value in masked.rules or value in masked.gathers):
        return np.dtype(value.meta.dtype) == target
    if isinstance(value, Node):
        pytype = value.meta.pytype if value.meta is not None else None
        if pytype in (int, float):  # (a Python int reaches the kernel as int64; float64 rounds it)
            return target.kind in "fc" if pytype is float else target in _FROM_INT
        return value.meta is not None and _scalar(value) and value.meta.pytype is None \
            and np.dtype(value.meta.dtype) == target
    if isinstance(value, bool):
        return target.kind == "b"
    if isinstance(value, float):
        return target.kind in "fc"
    if isinstance(value, int):
        return target in _FROM_INT and abs(value) <= 2 ** 24
    if isinstance(value, np.generic):
        return np.dtype(value.dtype) == target
    return False


def _same_segment(masked: MaskedStore, segment: dict[Node, int]) -> bool:
    """No mutation between the gathers, the expression and the store."""
    where = segment[masked.store]
    return all(segment[n] == where for n in masked.members + list(masked.gathers))


# emitted into masked kernels' modules and structured functions (``cache`` formatted in):
# NumPy's ``may_share_memory`` (byte ranges intersect)
OVERLAP_SOURCE = '''
@numba.njit(cache={cache}, error_model="numpy")
def _ac_byte_span(a):
    """The first and one-past-last byte address ``a``'s elements occupy."""
    lo = a.ctypes.data
    hi = lo + a.itemsize
    for d in range(a.ndim):
        extent = a.strides[d] * (a.shape[d] - 1)
        if extent < 0:
            lo += extent
        else:
            hi += extent
    return lo, hi


@numba.njit(cache={cache}, error_model="numpy")
def _ac_may_share_memory(a, b):
    """Whether ``a`` and ``b`` may share memory (NumPy's ``np.may_share_memory``)."""
    if a.size == 0 or b.size == 0:
        return False
    a_lo, a_hi = _ac_byte_span(a)
    b_lo, b_hi = _ac_byte_span(b)
    return a_lo < b_hi and b_lo < a_hi
'''


def snapshots(inputs: list[Node], dst: Node, roots: dict[Node, frozenset]) -> list[Node]:
    """Kernel inputs other than ``dst`` that may share memory with it at run time (the kernel
    reads copies of them when one does)."""
    theirs = roots.get(dst, frozenset({dst}))
    found = []
    for node in inputs:
        if node is dst or node.meta is None or node.meta.scalar or node.meta.shape == () \
                and node.meta.pytype is not None:
            continue
        mine = roots.get(node, frozenset({node}))
        placeholders = any(r.op == "placeholder" for r in mine) and any(
            r.op == "placeholder" for r in theirs)
        if mine & theirs or placeholders:
            found.append(node)
    return found


__all__ = ["MaskedStore", "find_masked_stores", "snapshots", "OVERLAP_SOURCE"]
