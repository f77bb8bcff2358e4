"""The fusion plan: which nodes become which kernel, in which order. Target independent.

A plan is a list of steps in execution order: ``KernelStep`` (a fused loop nest) or
``NodeStep`` (a node the wrapper evaluates with NumPy: views, extern and creation ops,
mutations, and anything a kernel cannot compute; a control-flow region, which ``host.py``
writes as a structured piece or a host loop). Regions are barriers. Targets (``cpu.py`` now,
CUDA later) turn a ``KernelPlan`` into code; they share the grouping, the sweep schedule and the
stash decisions.

Kernel styles, all over one iteration space ``shape`` (F):

* ``pointwise``: every node has shape F; one loop nest, each node a local value per element.
* ``rows``: reductions over the trailing axes ``F[outer:]``. For each index of the leading
  ``outer`` axes (the parallel loop) the kernel runs *sweeps* over the trailing axes: each sweep
  accumulates the reductions whose inputs are ready, then the per-row (outer) nodes that depend on
  them are computed, then the next sweep may use them. Row softmax and layer norm are one kernel.
* ``columns``: reductions over other axis sets (``x.sum(axis=0)``): one C-order sweep over F with
  array accumulators indexed by the kept axes; producers are fused, consumers are not.

Ordering: a mutation (``setitem``/``copy_``, or any op with side effects) is a barrier; nodes on
either side are never fused together, so reads before it see old data and reads after it see the
write. A mutation whose value is computed by a kernel may be fused into it (``store_into``): the
kernel then writes straight into the destination view when the wrapper finds no overlap at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Union

import numpy as np

from ...graph import Graph, Node
from ...lazy import sympy
from ...ops import REGISTRY, Store
from .masked import MaskedStore, find_masked_stores
from .optable import element_rule, gather_rule, reads_index, region_result, stores_index
from .oprules_arrays import GatherRule
from .oprules_common import c_ordered
from .scalar import ReductionRule, ScalarRule, cheap, lower_reduction

Rule = Union[ScalarRule, ReductionRule]


@dataclass(eq=False)
class Sweep:
    """One pass over the reduced axes (rows: per outer index; columns: over all of F)."""

    index: int
    reductions: list[Node] = field(default_factory=list)
    phase: dict[Node, int] = field(default_factory=dict)  # two-pass reductions: 1 mean, 2 spread
    compute: list[Node] = field(default_factory=list)  # inner nodes evaluated here
    load: list[Node] = field(default_factory=list)  # inner nodes read back (output buffer/stash)
    store: list[Node] = field(default_factory=list)  # inner outputs written here
    stash: list[Node] = field(default_factory=list)  # inner nodes kept for a later sweep
    after: list[Node] = field(default_factory=list)  # outer nodes computed after this sweep


@dataclass(eq=False)
class KernelPlan:
    """One fused kernel: its nodes, inputs, outputs, and loop structure."""

    index: int
    style: str  # "pointwise" | "rows" | "columns"
    shape: tuple[int, ...]
    outer: int
    reduce_axes: tuple[int, ...]
    nodes: list[Node]
    rules: dict[Node, Rule]
    inner: set[Node] = field(default_factory=set)
    inputs: list[Node] = field(default_factory=list)
    outputs: list[Node] = field(default_factory=list)
    prologue: list[Node] = field(default_factory=list)
    sweeps: list[Sweep] = field(default_factory=list)
    stash: dict[Node, Node | None] = field(default_factory=dict)  # -> output buffer, or a temp
    dims: list[Any] = field(default_factory=list)  # per dim of F: (input node, axis) or an int
    parallel_dim: int | None = None
    store_into: Node | None = None  # fused setitem/copy_ node
    masked: MaskedStore | None = None  # a masked store: ``if mask[i]: dst[i] = ...`` (masked.py)
    stored: Node | None = None  # the output it writes into the mutation's destination
    gathered: list[Node] = field(default_factory=list)  # inputs read whole at index values
    name: str = ""

    @property
    def kept_axes(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(self.shape)) if d not in self.reduce_axes)

    def uses(self, node: Node) -> Iterator[tuple[Node, int]]:
        """(member, axis offset) pairs for each member reading ``node`` as an operand."""
        for member in self.nodes:
            if node in operands(member, self.rules[member]):
                yield member, len(operand_shape(member, self.rules[member]))


@dataclass(eq=False)
class KernelStep:
    kernel: KernelPlan


@dataclass(eq=False)
class NodeStep:
    node: Node


@dataclass
class Plan:
    graph: Graph
    steps: list[Any] = field(default_factory=list)
    kernels: list[KernelPlan] = field(default_factory=list)
    weak: dict[Node, type] = field(default_factory=dict)
    roots: dict[Node, frozenset] = field(default_factory=dict)
    # nodes kept out of kernels for exactness (layout-dependent views of written arrays read
    # them); region nodes here run as host loops of NumPy steps
    numpy_only: set[Node] = field(default_factory=set)


# -- small queries ------------------------------------------------------------------------------


def operands(node: Node, rule: Rule) -> list[Node]:
    """The Node operands a kernel reads for ``node`` (in argument order, without repeats)."""
    if isinstance(rule, ReductionRule):
        return [node.args[0]]
    picks = rule.operands if rule.operands is not None else range(len(node.args))
    found: list[Node] = []
    for i in picks:
        value = node.args[i]
        if isinstance(value, Node) and value not in found:
            found.append(value)
    return found


def operand_shape(node: Node, rule: Rule) -> tuple:
    """The shape a member's operands are broadcast against (a reduction's: its input's)."""
    if isinstance(rule, ReductionRule):
        return tuple(node.args[0].meta.shape)
    return tuple(node.meta.shape)


def reduced_axes(node: Node) -> tuple[int, ...]:
    ndim = len(node.args[0].meta.shape)
    axis = node.kwargs.get("axis")
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % max(ndim, 1) for a in axis))
    return (int(axis) % max(ndim, 1),)


def _static_shape(meta: Any) -> bool:
    """Sizes a kernel can be planned for: ints, or expressions of dynamic sizes (``s0``,
    ``s1 - 1``, an unbacked ``u0``). A kernel reads each size from an operand of that very size
    (``KernelPlan.dims``); sizes that are not proven equal are tested at run time."""
    return meta is not None and hasattr(meta, "shape") and all(
        isinstance(d, (int, np.integer)) or _symbolic(d) for d in meta.shape)


def _symbolic(dim: Any) -> bool:
    symbols = getattr(dim, "free_symbols", None)
    return bool(symbols) and all(s.name[:1] in ("s", "u") for s in symbols)


def _backed(dim: Any) -> bool:
    """A size computed from backed symbols alone (``s0``, ``s0 - 2``, ``Min(s1, s2)``): the
    guards bind every symbol, so the size is exact at run time and the broadcasting pattern
    (decided and guarded at capture) holds."""
    symbols = getattr(dim, "free_symbols", None)
    return bool(symbols) and all(s.name.startswith("s") for s in symbols)


def same_size(a: Any, b: Any) -> bool:
    """Sizes proven equal: the same number, or expressions whose difference simplifies to 0."""
    if a == b:
        return True
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return False
    try:
        diff = sympy.sympify(a) - sympy.sympify(b)
        return diff.is_number and diff == 0 or sympy.simplify(diff) == 0
    except (TypeError, ValueError, sympy.SympifyError):
        return False


def may_equal(a: Any, b: Any) -> bool:
    """Sizes that may be equal at run time: proven equal, or a dynamic size and another size
    (not 1) whose difference is not a nonzero number (``s0`` and ``s1`` when a guard proves them
    equal; the unbacked ``u3`` and ``u5`` of ``a[1:n] * b[1:n]``). A kernel planned on such a
    pair tests them at run time and runs NumPy's broadcasting where they differ."""
    if same_size(a, b):
        return True
    kinds = [_symbolic(x) or (isinstance(x, (int, np.integer)) and x != 1) for x in (a, b)]
    if not all(kinds) or not (_symbolic(a) or _symbolic(b)):
        return False
    return not (sympy.sympify(a) - sympy.sympify(b)).is_number


def shapes_fit(a: tuple, b: tuple, maybe: bool) -> bool:
    """Equal shapes: proven (``same_size``), or possibly at run time when ``maybe``."""
    test = may_equal if maybe else same_size
    return len(a) == len(b) and all(test(x, y) for x, y in zip(a, b))


def is_barrier(node: Node) -> bool:
    """Mutations and side effects order everything around them."""
    if node.op != "call":
        return node.op == "region"
    op = REGISTRY[node.target] if node.target in REGISTRY else None
    if op is None or op.kind == "mutation" or op.side_effects:
        return True
    out = node.kwargs.get("out")
    return isinstance(out, Node) or (isinstance(out, tuple) and any(isinstance(o, Node) for o in out))


def weak_scalars(graph: Graph, example_inputs: list) -> dict[Node, type]:
    """Placeholders holding Python scalars (NEP 50 'weak' in NumPy's type promotion)."""
    weak: dict[Node, type] = {}
    for node, value in zip(graph.placeholders, example_inputs):
        pytype = getattr(node.meta, "pytype", None) if node.meta is not None else None
        if pytype is None and type(value) in (int, float):
            pytype = type(value)
        if pytype in (int, float):  # (a Python bool promotes like np.bool_: not weak)
            weak[node] = pytype
    for node in graph.nodes:  # computed Python numbers (``i + 1``, ``float(s)``) are weak too
        pytype = getattr(node.meta, "pytype", None) if node.op == "call" else None
        if pytype in (int, float) and node.meta.shape == ():
            weak[node] = pytype
    return weak


def lower_node(node: Node, weak: dict[Node, type], planned_shapes: bool = True,
               gathers: bool = False) -> Rule | None:
    """The kernel rule of a call node, or None when the wrapper runs it with NumPy.
    ``planned_shapes=False``: any sizes (a masked store's members, sized by its mask);
    ``gathers``: ``x[idx]`` with an index array may be a member (``GatherRule``)."""
    if node.op != "call" or node.target not in REGISTRY or (
            planned_shapes and not _static_shape(node.meta)):
        return None
    kind = REGISTRY[node.target].kind
    rule: Rule | None = None
    if kind == "pointwise":
        rule = element_rule(node, weak)  # the numba op table's element rule
    elif kind == "reduction":
        rule = lower_reduction(node)
    elif gathers:
        rule = gather_rule(node)
    if rule is None:
        return None
    if planned_shapes and not all(_static_shape(value.meta) for value in operands(node, rule)):
        return None
    return rule


# -- storage roots: which inputs or buffers a value may share memory with ----------------------------


def storage_roots(graph: Graph) -> dict[Node, frozenset]:
    """For each value node, the set of storages it may view: placeholders or fresh results."""
    roots: dict[Node, frozenset] = {}
    for node in graph.nodes:
        if node.op == "placeholder":
            roots[node] = frozenset({node})
        elif node.op in ("call", "region"):
            op = REGISTRY[node.target] if node.op == "call" and node.target in REGISTRY else None
            inputs = frozenset().union(*(roots.get(n, frozenset({n})) for n in node.all_input_nodes()))
            if op is not None and op.kind == "view":
                roots[node] = inputs
            elif op is not None and op.kind in ("pointwise", "reduction", "creation") and not (
                    op.returns_input is not None and op.returns_input(node.args, node.kwargs)):
                roots[node] = frozenset({node})
            else:
                roots[node] = inputs | {node}
    return roots


def region_writes(node: Node) -> list[Node]:
    """The arguments of region ``node`` its subgraphs may write to (through their placeholders).

    Subgraph placeholders end with one per region argument after the controls (a loop body's
    index comes first), so placeholder ``j`` of ``p`` stands for argument ``len(args) - p + j``."""
    if node.target == "nonstrict_call":
        return node.all_input_nodes()  # the user's function: anything it was given
    written: list[Node] = []
    for sub in node.info.subgraphs.values():
        placeholders = sub.placeholders
        for j in written_placeholders(sub):
            k = len(node.args) - len(placeholders) + j
            value = node.args[k] if 0 <= k < len(node.args) else None
            if isinstance(value, Node) and value not in written:
                written.append(value)
    return written


def written_placeholders(graph: Graph) -> set[int]:
    """Positions of the placeholders ``graph`` (or a region inside it) may write to."""
    roots = storage_roots(graph)
    position = {node: i for i, node in enumerate(graph.placeholders)}
    found: set[int] = set()
    for node in graph.nodes:
        for dst in write_targets(node):
            found |= {position[r] for r in roots.get(dst, ()) if r in position}
    return found


def write_targets(node: Node) -> list[Node]:
    """The values ``node`` writes to: a mutation's destination, ``out=`` arrays, what a region's
    subgraphs write."""
    if node.op == "region":
        return region_writes(node)
    if node.op != "call" or not is_barrier(node):
        return []
    targets = [node.args[0]] if node.args and node.target in REGISTRY \
        and REGISTRY[node.target].kind == "mutation" else []
    out = node.kwargs.get("out")
    targets += list(out) if isinstance(out, tuple) else [out]
    return [t for t in targets if isinstance(t, Node)]


def layout_hazards(graph: Graph, roots: dict[Node, frozenset]) -> set[Node]:
    """Nodes NumPy computes so that layout-dependent views see NumPy's memory layout.

    Kernels allocate C-ordered buffers where NumPy may produce Fortran-ordered ones, so whether a
    reshape of a computed array is a view or a copy could differ from NumPy's, and a write through
    it could be lost. When the graph writes to a computed array, the arrays such views read and
    everything they are computed from stay NumPy steps (a region among them: a host loop of NumPy
    steps); the rest of the graph still fuses. A view of an array NumPy makes C-ordered whatever
    the inputs (``c_ordered``) sees the same layout in a kernel's C buffer: no hazard.
    """
    if not any(r.op != "placeholder" for node in graph.nodes for dst in write_targets(node)
               for r in roots.get(dst, ())):
        return set()
    hazards: set[Node] = set()
    for node in graph.nodes:
        if node.op == "call" and node.target in REGISTRY and REGISTRY[node.target].kind == "view" \
                and not REGISTRY[node.target].layout_free \
                and any(r.op != "placeholder" for r in roots.get(node, ())) \
                and not (node.args and c_ordered(node.args[0])):
            stack = list(node.all_input_nodes())
            while stack:
                value = stack.pop()
                if value in hazards or value.op == "placeholder":
                    continue
                hazards.add(value)
                stack.extend(value.all_input_nodes())
    return hazards


# -- grouping -----------------------------------------------------------------------------------


@dataclass(eq=False)
class _Group:
    style: str
    shape: tuple
    outer: int
    reduce_axes: tuple
    segment: int
    nodes: list[Node] = field(default_factory=list)


class _Grouper:
    """Greedy fusion in program order, within segments delimited by barriers."""

    def __init__(self, graph: Graph, rules: dict[Node, Rule]):
        self.graph = graph
        self.rules = rules
        self.group_of: dict[Node, _Group] = {}
        self.groups: list[_Group] = []
        self.segment_of: dict[Node, int] = {}

    def run(self) -> None:
        segment = 0
        for node in self.graph.nodes:
            if node.op not in ("call", "region"):
                continue
            self.segment_of[node] = segment
            if is_barrier(node):
                segment += 1
            elif node in self.rules:
                self._place(node, segment)

    # a new member's place: a producer's group, else a compatible group of the segment, else new
    def _place(self, node: Node, segment: int) -> None:
        rule = self.rules[node]
        if isinstance(rule, GatherRule):  # its IndexError comes before the values of later
            self._start(node, segment)  # nodes (their members), as in NumPy, none before it
            return
        producers: list[_Group] = []
        for value in operands(node, rule):
            group = self.group_of.get(value)
            if group is not None and group.segment == segment and group not in producers:
                producers.append(group)
        for group in reversed(producers):
            if self._try_join(group, node):
                return
        for group in reversed(self.groups):
            if group.segment == segment and group not in producers \
                    and not self._feeds_past(node, group) and self._try_join(
                    group, node, horizontal=True):
                return
        self._start(node, segment)

    def _feeds_past(self, node: Node, group: _Group) -> bool:
        """A user of ``node`` also reads what a NumPy step computes from ``group``: that user
        cannot join ``group``, so ``node`` there would be stored and loaded again; on its own it
        fuses into that user (``beta * D`` in ``alpha * A @ B + beta * D``)."""
        stack = [v for user in node.users for v in user.all_input_nodes()
                 if v is not node and self.group_of.get(v) is not group]
        seen: set[int] = set()
        while stack:
            value = stack.pop()
            if id(value) in seen or value.op == "placeholder":
                continue
            seen.add(id(value))
            if self.group_of.get(value) is group:
                return True
            stack.extend(value.all_input_nodes())
        return False

    def _try_join(self, group: _Group, node: Node, horizontal: bool = False) -> bool:
        change = self._fits(group, node, maybe=not horizontal)
        if change is None or (horizontal and change[0] != group.style):
            return False
        if self._depends_on(node, group):
            return False
        group.style, group.outer, group.reduce_axes = change
        group.nodes.append(node)
        self.group_of[node] = group
        return True

    def _start(self, node: Node, segment: int) -> None:
        rule = self.rules[node]
        if isinstance(rule, ReductionRule):
            shape = tuple(node.args[0].meta.shape)
            axes = reduced_axes(node)
            if not axes or not shape:
                self.rules.pop(node)  # axis=() or a 0-d input: NumPy does it
                return
            style, outer = _reduction_style(shape, axes)
            group = _Group(style, shape, outer, axes, segment)
        else:
            shape = tuple(node.meta.shape)
            group = _Group("pointwise", shape, len(shape), (), segment)
        group.nodes.append(node)
        self.group_of[node] = group
        self.groups.append(group)

    def _fits(self, group: _Group, node: Node, maybe: bool = False) -> tuple | None:
        """(style, outer, reduce_axes) of ``group`` once ``node`` joins, or None. ``maybe``
        (a consumer of the group): dynamic sizes that may be equal fit (tested at run time)."""
        rule = self.rules[node]
        members = [v for v in operands(node, rule) if self.group_of.get(v) is group]
        shape_f = group.shape
        if isinstance(rule, ReductionRule):
            source = node.args[0]
            axes = reduced_axes(node)
            if not shapes_fit(tuple(source.meta.shape), shape_f, maybe) or not axes:
                return None
            if source in self.group_of and self.group_of[source] is group and \
                    isinstance(self.rules[source], ReductionRule):
                return None
            if group.style == "pointwise":
                style, outer = _reduction_style(shape_f, axes)
                return style, outer, axes
            if axes == group.reduce_axes:
                return group.style, group.outer, axes
            return None
        shape = tuple(node.meta.shape)
        if group.style in ("pointwise", "columns"):
            if not shapes_fit(shape, shape_f, maybe):
                return None
            if any(isinstance(self.rules[v], ReductionRule) for v in members):
                return None
            return group.style, group.outer, group.reduce_axes
        k = group.outer
        keep = shape_f[:k] + (1,) * (len(shape_f) - k)
        compact = shape_f[:k]
        # members of shape () only exist when k == 0: per-kernel values, they broadcast anywhere
        if shape == shape_f:
            ok = all(tuple(v.meta.shape) in (shape_f, keep, ()) for v in members)
        elif shape == keep:
            ok = all(tuple(v.meta.shape) in (keep, ()) for v in members)
        elif shape == compact and len(compact) < len(shape_f):
            ok = all(tuple(v.meta.shape) == compact for v in members)
        else:
            ok = False
        return (group.style, group.outer, group.reduce_axes) if ok else None

    def _depends_on(self, node: Node, group: _Group) -> bool:
        """Would ``node``'s inputs, through other groups or NumPy steps, wait for ``group``?"""
        segment = self.segment_of[node]
        stack = [v for v in node.all_input_nodes() if self.group_of.get(v) is not group]
        seen: set[int] = set()
        while stack:
            value = stack.pop()
            if id(value) in seen or value.op == "placeholder":
                continue
            seen.add(id(value))
            if self.segment_of.get(value, segment) < segment:
                continue
            owner = self.group_of.get(value)
            if owner is group:
                return True
            if owner is not None:
                for member in owner.nodes:
                    stack.extend(member.all_input_nodes())
            else:
                stack.extend(value.all_input_nodes())
        return False


def _reduction_style(shape: tuple, axes: tuple) -> tuple[str, int]:
    ndim = len(shape)
    if axes == tuple(range(ndim - len(axes), ndim)):
        return "rows", ndim - len(axes)
    return "columns", 0


# -- kernel plans ---------------------------------------------------------------------------------


def _finish_kernel(group: _Group, index: int, rules: dict[Node, Rule],
                   group_of: dict[Node, _Group]) -> KernelPlan:
    kernel = KernelPlan(index=index, style=group.style, shape=group.shape, outer=group.outer,
                        reduce_axes=group.reduce_axes, nodes=list(group.nodes),
                        rules={n: rules[n] for n in group.nodes})
    members = set(group.nodes)
    for node in kernel.nodes:
        for value in operands(node, rules[node]):
            if value not in members and value not in kernel.inputs:
                kernel.inputs.append(value)
        if any(user not in members for user in node.users):
            kernel.outputs.append(node)
        if isinstance(rules[node], GatherRule):  # the table: a whole array, not an operand
            table = node.args[rules[node].table]
            if table not in kernel.inputs:
                kernel.inputs.append(table)
            kernel.gathered.append(table)
    if kernel.style == "pointwise":
        kernel.prologue = list(kernel.nodes)
    else:
        _classify_levels(kernel)
        _schedule_sweeps(kernel)
    kernel.dims = _dim_sources(kernel)
    kernel.parallel_dim = _parallel_dim(kernel)
    kernel.name = _kernel_name(kernel)
    return kernel


def _classify_levels(kernel: KernelPlan) -> None:
    """Which members are computed per element of F (inner) rather than per outer index."""
    k, ndim = kernel.outer, len(kernel.shape)
    forced = {n.args[0] for n in kernel.nodes if isinstance(kernel.rules[n], ReductionRule)}
    for node in kernel.nodes:
        rule = kernel.rules[node]
        if isinstance(rule, ReductionRule):
            continue
        if kernel.style == "columns" or node in forced:
            kernel.inner.add(node)
            continue
        shape = tuple(node.meta.shape)
        varies = len(shape) == ndim and any(shape[d] != 1 for d in range(k, ndim))
        if varies or any(v in kernel.inner for v in operands(node, rule)):
            kernel.inner.add(node)


def _expensive(node: Node) -> bool:
    return not cheap(node)


def _schedule_sweeps(kernel: KernelPlan) -> None:
    """Assign reductions and inner outputs to sweeps; decide loads, stashes and outer order."""
    ready: dict[Node, int] = {}  # outer node -> sweeps needed before it is known
    avail: dict[Node, int] = {}  # inner node -> sweeps needed before it can be computed
    first: dict[Node, int] = {}
    outputs = set(kernel.outputs)
    for node in kernel.nodes:
        rule = kernel.rules[node]
        deps = [v for v in operands(node, rule) if v in kernel.rules]
        if isinstance(rule, ReductionRule):
            source = node.args[0]
            first[node] = avail.get(source, 0) + 1
            ready[node] = first[node] + (1 if rule.two_pass else 0)
        elif node in kernel.inner:
            avail[node] = max([ready.get(v, 0) for v in deps if v not in kernel.inner]
                              + [avail[v] for v in deps if v in kernel.inner] + [0])
        else:
            ready[node] = max([ready[v] for v in deps] + [0])
    store_at = {n: avail[n] + 1 for n in kernel.inner if n in outputs}
    count = max(list(ready.values()) + list(store_at.values()) + [0])
    kernel.sweeps = [Sweep(i + 1) for i in range(count)]
    for node in kernel.nodes:
        if isinstance(kernel.rules[node], ReductionRule):
            kernel.sweeps[first[node] - 1].reductions.append(node)
            kernel.sweeps[first[node] - 1].phase[node] = 1
            if kernel.rules[node].two_pass:
                kernel.sweeps[first[node]].reductions.append(node)
                kernel.sweeps[first[node]].phase[node] = 2
    for node, at in store_at.items():
        kernel.sweeps[at - 1].store.append(node)
    _plan_sweep_bodies(kernel, store_at)
    for node in kernel.nodes:
        if node not in kernel.inner:
            at = ready[node]
            (kernel.prologue if at == 0 else kernel.sweeps[at - 1].after).append(node)


def _plan_sweep_bodies(kernel: KernelPlan, store_at: dict[Node, int]) -> None:
    computed_in: dict[Node, int] = {}
    order = {n: i for i, n in enumerate(kernel.nodes)}
    may_stash = kernel.style == "rows"
    for sweep in kernel.sweeps:
        roots = [n.args[0] for n in sweep.reductions if n.args[0] in kernel.inner] + sweep.store
        compute: set[Node] = set()
        load: set[Node] = set()

        def visit(node: Node) -> None:
            if node in compute or node in load:
                return
            earlier = computed_in.get(node)
            if earlier is not None and earlier < sweep.index:
                stored = store_at.get(node)
                if stored is not None and stored < sweep.index:
                    load.add(node)
                    return
                if node in kernel.stash or (may_stash and _expensive(node)):
                    if node not in kernel.stash:
                        kernel.stash[node] = None
                        kernel.sweeps[earlier - 1].stash.append(node)
                    load.add(node)
                    return
            compute.add(node)
            for value in operands(node, kernel.rules[node]):
                if value in kernel.inner:
                    visit(value)

        for root in roots:
            visit(root)
        for node in compute:
            computed_in.setdefault(node, sweep.index)
        sweep.compute = sorted(compute, key=order.__getitem__)
        sweep.load = sorted(load, key=order.__getitem__)
    _choose_stash_buffers(kernel, store_at)


def _choose_stash_buffers(kernel: KernelPlan, store_at: dict[Node, int]) -> None:
    """Keep a stashed value in an output buffer written later (softmax's exp in its result)."""
    taken: set[Node] = set()
    for node in kernel.stash:
        made = next(s.index for s in kernel.sweeps if node in s.stash)
        last = max(s.index for s in kernel.sweeps if node in s.load)
        for out, at in store_at.items():
            if out in taken or at <= made or at < last:
                continue
            if np.dtype(out.meta.dtype) != np.dtype(node.meta.dtype):
                continue
            kernel.stash[node] = out
            taken.add(out)
            break


def _dim_sources(kernel: KernelPlan) -> list[Any]:
    """For each dim of F, an input (node, axis) whose size it is, or a static 1."""
    dims: list[Any] = []
    ndim = len(kernel.shape)
    for d, size in enumerate(kernel.shape):
        if size == 1:
            dims.append(1)
            continue
        found = None
        for test in (same_size, may_equal):  # an operand of this size, else one that may be
            for value in kernel.inputs:
                if value.meta.shape == () or found is not None:
                    continue
                for _, offset in kernel.uses(value):
                    axis = d - (offset - len(value.meta.shape))
                    if 0 <= axis < len(value.meta.shape) and test(value.meta.shape[axis], size) \
                            and offset in (ndim, kernel.outer):
                        if offset == kernel.outer and offset != ndim and d >= kernel.outer:
                            continue
                        found = (value, axis)
                        break
        if found is None:
            found = int(size) if getattr(size, "is_Integer", True) else size
        dims.append(found)
    return dims


def _parallel_dim(kernel: KernelPlan) -> int | None:
    """The dim a parallel twin splits: the first outer dim; for a whole-array reduction, the
    first axis in slices (when every reduction can merge partial results)."""
    if kernel.gathered:  # serial: NumPy's IndexError names the first index out of bounds
        return None
    if kernel.style == "rows" and kernel.outer == 0:
        mergeable = all(r.merge for r in kernel.rules.values() if isinstance(r, ReductionRule))
        return 0 if mergeable and kernel.shape and kernel.shape[0] != 1 else None
    limit = {"pointwise": len(kernel.shape), "rows": kernel.outer, "columns": 1}[kernel.style]
    for d in range(limit):
        if kernel.style == "columns" and d in kernel.reduce_axes:
            return _column_blocks_dim(kernel)
        if kernel.shape[d] != 1:
            return d
    return None


def _column_blocks_dim(kernel: KernelPlan) -> int | None:
    """A columns kernel reducing its first axis (``x.sum(axis=0)``): the last axis, when kept,
    split into spans of columns (``cpu.column_blocks``); each span adds its rows in order, so
    every output element sees the serial kernel's (NumPy's) order."""
    last = len(kernel.shape) - 1
    if last < 1 or last in kernel.reduce_axes or kernel.shape[last] == 1:
        return None
    return last


def _kernel_name(kernel: KernelPlan) -> str:
    names: list[str] = []
    for node in kernel.nodes:
        if node.target not in names:
            names.append(node.target)
    text = "_".join(names[:4]) + ("_etc" if len(names) > 4 else "")
    return f"kernel_{kernel.index}_{text}"


# -- fused stores ---------------------------------------------------------------------------------


def _basic_index(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        if item is None or item is Ellipsis or (isinstance(item, (int, np.integer))
                                                and not isinstance(item, bool)):
            continue
        if isinstance(item, slice) and all(
                p is None or (isinstance(p, (int, np.integer)) and not isinstance(p, bool))
                for p in (item.start, item.stop, item.step)):
            continue
        return False
    return True


def destination_shape(dst: Node, index: Any) -> tuple | None:
    """Shape of ``dst[index]`` when it is a view (basic indexing), else None."""
    if not all(isinstance(d, (int, np.integer)) for d in getattr(dst.meta, "shape", (None,))) \
            or not _basic_index(index):
        return None
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), tuple(dst.meta.shape),
                                            (0,) * len(dst.meta.shape))
    try:
        view = probe[index]
    except (IndexError, TypeError, ValueError):
        return None
    return tuple(view.shape) if isinstance(view, np.ndarray) and view.ndim > 0 else None


def static_sizes(node: Node) -> bool:
    """Whether ``node``'s traced shape is all numbers (else a fused store into it tests the
    destination view's sizes at run time)."""
    return all(isinstance(d, (int, np.integer)) for d in getattr(node.meta, "shape", (None,)))


def store_of(node: Node) -> Store | None:
    """The one value a mutation node writes into a view of its destination (``OpDef.store``)."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op.store(node.args, node.kwargs) if op is not None and op.store is not None else None


def runtime_index(index: Any) -> bool:
    """A basic index with run-time entries: ints, slices whose bounds and steps are ints or
    integer scalar values (``ey[t, :]``, ``u[i:i + k]``), ``None`` and ``...``."""
    items = index if isinstance(index, tuple) else (index,)
    if sum(1 for item in items if item is Ellipsis) > 1:
        return False
    for item in items:
        parts = (item.start, item.stop, item.step) if isinstance(item, slice) else (item,)
        if isinstance(item, slice) or not (item is None or item is Ellipsis):
            if not all((p is None and isinstance(item, slice)) or _int_entry(p) for p in parts):
                return False
    return True


def _int_entry(value: Any) -> bool:
    if isinstance(value, Node):
        meta = value.meta
        dtype = np.dtype(meta.dtype) if meta is not None else None
        return meta is not None and meta.ndim == 0 and meta.pytype is not bool \
            and (dtype.kind == "i" or (dtype.kind == "u" and dtype.itemsize < 8))
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def view_ndim(dst: Node, index: Any) -> int | None:
    """How many axes ``dst[index]`` has for a ``runtime_index`` (None: too many entries)."""
    items = index if isinstance(index, tuple) else (index,)
    ndim = dst.meta.ndim
    taken = sum(1 for item in items if item is not None and item is not Ellipsis)
    if taken > ndim:
        return None
    ints = sum(1 for item in items if item is not None and item is not Ellipsis
               and not isinstance(item, slice))
    news = sum(1 for item in items if item is None)
    return ndim - ints + news


def _fuse_store(mutation: Node, kernel: KernelPlan, order: dict[Node, int],
                dynamic: bool = False) -> bool:
    store = store_of(mutation)
    if store is None:
        return False
    dst, index, value = store.dst, store.index, store.value
    if not isinstance(dst, Node) or not isinstance(value, Node) or kernel.stored is not None \
            or kernel.gathered:  # (a gather's IndexError after some stores: NumPy stores none)
        return False
    if value not in kernel.outputs or value.users != [mutation]:
        return False
    if kernel.style != "pointwise" and value not in kernel.inner:
        return False
    if tuple(value.meta.shape) != kernel.shape or dst.meta is None:
        return False
    if np.dtype(dst.meta.dtype) != np.dtype(value.meta.dtype):
        return False
    shape = destination_shape(dst, index)
    if shape is None and (dynamic or not static_sizes(dst)) and runtime_index(index):
        if view_ndim(dst, index) != value.meta.ndim:  # the kernel tests the view's sizes
            return False
    elif shape != tuple(value.meta.shape):
        return False
    for out in kernel.outputs:
        if out is not value and any(u.op != "output" and order[u] < order[mutation]
                                    for u in out.users):
            return False
    kernel.store_into, kernel.stored = mutation, value
    return True


# -- the plan -------------------------------------------------------------------------------------


def build_plan(graph: Graph, example_inputs: list,
               accept: Callable[[Node, Rule], bool] | None = None,
               dynamic_stores: bool = False, gathers: bool = False) -> Plan:
    """Group the graph's nodes into kernels and order every step.

    ``accept(node, rule)`` may veto a rule (the target could not compile it): the node then
    runs with NumPy. ``dynamic_stores``: stores with run-time indices (``ey[t, :] = ...``) are
    fused too; the caller tests the destination view's sizes on each run (loop code).
    ``gathers``: ``x[idx]`` of index arrays join the kernels that consume them (a target that
    emits ``GatherRule``: the CPU one at the top level).
    """
    plan = Plan(graph)
    plan.roots = storage_roots(graph)
    plan.numpy_only = layout_hazards(graph, plan.roots)
    plan.weak = weak_scalars(graph, example_inputs)
    masked = find_masked_stores(graph, lambda n: lower_node(n, plan.weak, False), is_barrier,
                                _static_shape, accept, plan.numpy_only)
    claimed = {n for m in masked for n in m.claimed}
    rules: dict[Node, Rule] = {}
    for node in graph.nodes:
        if node.op == "call" and node not in plan.numpy_only and node not in claimed:
            rule = lower_node(node, plan.weak, gathers=gathers)
            if rule is not None and (accept is None or accept(node, rule)):
                rules[node] = rule
    grouper = _Grouper(graph, rules)
    grouper.run()
    order = {n: i for i, n in enumerate(graph.nodes)}
    kernel_of: dict[Node, KernelPlan] = {}
    for group in grouper.groups:
        if group.style == "pointwise" and group.shape == ():
            continue  # scalar arithmetic: NumPy in the wrapper is as fast and exact
        if all(isinstance(rules[n], GatherRule) for n in group.nodes):
            continue  # a gather nothing consumes in the kernel: NumPy's is as fast
        kernel = _finish_kernel(group, len(plan.kernels), rules, grouper.group_of)
        if not all(isinstance(src, (tuple, int, np.integer)) for src in kernel.dims):
            continue  # a symbolic size no operand carries (the loop bound is unknown): NumPy
        plan.kernels.append(kernel)
        for node in kernel.nodes:
            kernel_of[node] = kernel
    for store in masked:
        kernel = masked_kernel(store, len(plan.kernels))
        plan.kernels.append(kernel)
        for node in store.claimed:
            kernel_of[node] = kernel
    fused: set[Node] = set()
    for node in graph.nodes:
        store = store_of(node)
        if store is not None and node not in claimed:
            value = store.value
            kernel = kernel_of.get(value) if isinstance(value, Node) else None
            if kernel is not None and grouper.segment_of.get(value) == grouper.segment_of[node] \
                    and _fuse_store(node, kernel, order, dynamic_stores):
                fused.add(node)
    plan.steps = _order_steps(graph, kernel_of, grouper.segment_of, fused, order)
    return plan


def masked_kernel(masked: MaskedStore, index: int) -> KernelPlan:
    """The kernel of a masked store: a pointwise loop over the mask's shape whose members run
    where the mask holds; inputs: the mask, the gathered arrays, scalars, then ``dst``."""
    shape = tuple(masked.mask.meta.shape)
    kernel = KernelPlan(index=index, style="pointwise", shape=shape, outer=len(shape),
                        reduce_axes=(), nodes=list(masked.members), rules=dict(masked.rules),
                        masked=masked)
    values = [v for n in masked.members for v in operands(n, masked.rules[n])
              if v not in masked.rules] + [masked.value, masked.dst]
    kernel.inputs = [masked.mask]
    for value in values:
        value = masked.gathers.get(value, value) if isinstance(value, Node) else None
        if value is not None and value not in masked.rules and value not in kernel.inputs:
            kernel.inputs.append(value)
    kernel.prologue = list(kernel.nodes)
    kernel.dims = [1 if size == 1 else (masked.mask, d) for d, size in enumerate(shape)]
    kernel.parallel_dim = _parallel_dim(kernel)
    targets = list(dict.fromkeys(n.target for n in masked.members))[:3] or ["fill"]
    kernel.name = f"kernel_{index}_masked_{'_'.join(targets)}"
    return kernel


def _order_steps(graph: Graph, kernel_of: dict[Node, KernelPlan], segment_of: dict[Node, int],
                 fused: set[Node], order: dict[Node, int]) -> list[Any]:
    """Steps per segment in a topological order close to program order; the barrier last."""
    steps: list[Any] = []
    by_segment: dict[int, list[Node]] = {}
    for node in graph.nodes:
        if node.op in ("call", "region"):
            by_segment.setdefault(segment_of[node], []).append(node)
    for segment in sorted(by_segment):
        item_of: dict[Node, Any] = {}
        kernel_items: dict[int, KernelStep] = {}
        final: Any = None  # the barrier, or the kernel a mutation was fused into
        for node in by_segment[segment]:
            kernel = kernel_of.get(node)
            if node in fused:
                kernel = kernel_of[store_of(node).value]
            if kernel is not None:
                item = kernel_items.setdefault(id(kernel), KernelStep(kernel))
                if kernel.store_into is not None or kernel.masked is not None:
                    final = item
            else:
                item = NodeStep(node)
                if is_barrier(node):
                    final = item
            item_of[node] = item
        steps.extend(_toposort(item_of, order, final))
    return steps


def _toposort(item_of: dict[Node, Any], order: dict[Node, int], final: Any) -> list[Any]:
    """Kahn's algorithm, earliest program position first; ``final`` goes last."""
    first: dict[int, int] = {}
    items: dict[int, Any] = {}
    deps: dict[int, set[int]] = {}
    for node, item in item_of.items():
        key = id(item)
        items[key] = item
        first[key] = min(first.get(key, order[node]), order[node])
        deps.setdefault(key, set())
        for value in node.all_input_nodes():
            other = item_of.get(value)
            if other is not None and other is not item:
                deps[key].add(id(other))
    done: set[int] = set()
    result: list[Any] = []
    while len(result) < len(items):
        ready = [k for k in items if k not in done and deps[k] <= done
                 and (items[k] is not final or len(done) == len(items) - 1)]
        if not ready:
            raise AssertionError("cyclic kernel dependencies")  # the grouper prevents this
        key = min(ready, key=first.__getitem__)
        result.append(items[key])
        done.add(key)
    return result


# -- stores that may overlap their inputs -----------------------------------------------------------


def store_may_overlap(plan: "Plan", kernel: KernelPlan, node: Node, dst: Node,
                      mutation: Node) -> bool:
    """Could kernel input ``node`` share memory with the destination of the fused store
    ``mutation`` at run time? Two inputs may be one array; the destination view itself, read
    element for element by a pointwise kernel, is safe."""
    if node.meta is None or node.meta.shape == () or node.meta.scalar:
        return False
    mine, theirs = plan.roots.get(node, frozenset()), plan.roots.get(dst, frozenset())
    inputs = any(r.op == "placeholder" for r in mine) and any(
        r.op == "placeholder" for r in theirs)
    if not (mine & theirs) and not inputs:
        return False
    return not _reads_destination_in_place(kernel, node, dst, mutation)


def _reads_destination_in_place(kernel: KernelPlan, node: Node, dst: Node,
                                mutation: Node) -> bool:
    if kernel.style != "pointwise" or tuple(node.meta.shape) != kernel.shape:
        return False
    if not stores_index(mutation):  # copy_: all of dst
        return node is dst
    index = mutation.args[1]
    if node is dst:
        return any(same_index(index, w) for w in (Ellipsis, (Ellipsis,), slice(None)))
    return (reads_index(node) and len(node.args) == 2
            and node.args[0] is dst and same_index(node.args[1], index))


def same_index(a: Any, b: Any) -> bool:
    """Two index expressions are the same: the same nodes, equal constants and slices."""
    if isinstance(a, Node) or isinstance(b, Node):
        return a is b
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_index(x, y) for x, y in zip(a, b))
    if isinstance(a, slice) and isinstance(b, slice):
        return all(same_index(x, y) for x, y in ((a.start, b.start), (a.stop, b.stop),
                                                 (a.step, b.step)))
    return type(a) is type(b) and a == b


def planned_shape_tests(kernel: KernelPlan, inputs: list[Node], dims: list[str],
                        name: Callable[[Node], str],
                        proven: frozenset[Node] | set[Node] = frozenset()) -> list[str]:
    """Run-time tests (source) that each array operand of ``kernel`` has the shape it was
    planned for: its traced sizes where they are numbers, the iteration space's sizes where
    they are symbols. A pointwise kernel reads its loop bounds at run time, so it serves any
    sizes on which its operands agree: an operand is tested against the kernel's run-time
    sizes (its broadcast axes, traced as 1, against 1); so does a rows kernel on its leading
    (row) axes, its row lengths stay the traced numbers. In a loop body a shape traced on one trip may differ on the next
    (``u[i:i + 3]`` near the end of ``u``). An operand whose shape is ``proven`` (see
    ``proven_shapes``) needs no test when the sizes it is compared with are proven too."""
    tests = []
    ndim = len(kernel.shape)
    dims_proven = all(not isinstance(src, tuple) or src[0] in proven for src in kernel.dims)
    for node in inputs:
        meta = node.meta
        if meta is None or meta.scalar or not meta.shape \
                or (node in kernel.gathered and not any(kernel.uses(node))):
            continue  # (a gather's table: any size, its indices are checked)
        unproven = _unproven_axes(kernel, node)
        tests += [f"{name(node)}.shape[{j}] == {dims[d]}" for j, d in unproven]
        if unproven:
            continue
        generic = kernel.style == "pointwise" and kernel.masked is None
        if node in proven and (dims_proven or not generic and all(
                isinstance(size, (int, np.integer)) for size in meta.shape)):
            continue  # (a generic kernel's sizes are its dims', not the traced ones)
        for j, d in _aligned_axes(kernel, node):  # broadcasting aligns the trailing axes
            size = meta.shape[j]
            # a rows kernel reads its row count at run time too (only row lengths are planned)
            free = generic or (kernel.style == "rows" and kernel.masked is None and d < kernel.outer)
            if free and size != 1 and 0 <= d < ndim and kernel.shape[d] != 1:
                if kernel.dims[d] != (node, j):  # any size, if the operands agree
                    tests.append(f"{name(node)}.shape[{j}] == {dims[d]}")
            elif isinstance(size, (int, np.integer)) or getattr(size, "is_Integer", False):
                tests.append(f"{name(node)}.shape[{j}] == {int(size)}")
            elif 0 <= d < ndim and kernel.shape[d] == size and kernel.dims[d] != (node, j):
                tests.append(f"{name(node)}.shape[{j}] == {dims[d]}")
    return tests


def _unproven_axes(kernel: KernelPlan, node: Node) -> list[tuple[int, int]]:
    """(axis of ``node``, dim of F) pairs whose sizes were planned as possibly equal
    (``may_equal``), not proven: the kernel tests them at run time, wherever it runs."""
    ndim, shape = len(kernel.shape), tuple(node.meta.shape)
    pairs = []
    for j, d in _aligned_axes(kernel, node):
        size = shape[j]
        if 0 <= d < ndim and size != 1 and kernel.dims[d] != (node, j) \
                and not same_size(size, kernel.shape[d]):
            pairs.append((j, d))
    return pairs


def _aligned_axes(kernel: KernelPlan, node: Node) -> list[tuple[int, int]]:
    """(axis of ``node``, dim of F) pairs, as the kernel reads ``node``: aligned with the trailing
    axes of each member reading it (a rows kernel's per-row consumer, of the leading ``outer``
    dims, reads ``t`` of ``t + x.sum(axis=1)`` along F's dim 0, not its last)."""
    ndim, rank = len(kernel.shape), len(node.meta.shape)
    widths = sorted({width for _, width in kernel.uses(node)}) or [ndim]
    return sorted({(j, width - rank + j) for width in widths for j in range(rank)})


_STATE_REGIONS = {"for_range": 1, "while_loop": 0, "cond": 0}  # kind -> leading placeholders


def proven_shapes(graph: Graph, inputs: set[Node]) -> set[Node]:
    """The nodes of ``graph`` (and of its regions' subgraphs) whose run-time shape is the traced
    one whenever the ``inputs``' shapes are (guarded inputs, say). An op's result qualifies when
    its shape follows from its array operands' shapes and constants alone: every array operand
    is proven, no scalar value other than a pointwise operand (a run-time bound ``u[i:i+3]``)
    and no data-dependent size (a mask). A region's carried value qualifies by induction: its
    initial value and every subgraph's value for it qualify, assuming it does."""
    return _ShapeProof().graph(graph, inputs)


@dataclass
class _ShapeProof:
    slots: set[tuple[Node, int]] = field(default_factory=set)  # (region, carried slot) proven

    def graph(self, graph: Graph, inputs: set[Node]) -> set[Node]:
        proven = set(inputs)
        for node in graph.nodes:
            if node.op == "region":
                proven |= self.region(node, proven)
                continue
            if node.op != "call":
                continue
            read = region_result(node)
            if read is not None:
                if (read[0], read[1]) in self.slots:
                    proven.add(node)
            elif _follows_operands(node, proven):
                proven.add(node)
        return proven

    def region(self, region: Node, outer: set[Node]) -> set[Node]:
        """Proven nodes of ``region``'s subgraphs, and its proven slots (``self.slots``): the
        greatest set of slots that holds by induction."""
        lead = _STATE_REGIONS.get(region.target)
        if lead is None:
            return set()
        _, init, captured = region.info.split(region.args)
        n = len(init)
        slots = {k for k, value in enumerate(init) if _array_proven(value, outer)}
        subgraphs = list(region.info.subgraphs.values())
        while True:
            found: set[Node] = set()
            for sub in subgraphs:
                placeholders = sub.placeholders
                inputs = set(placeholders[:lead])
                inputs |= {placeholders[lead + k] for k in slots}
                inputs |= {ph for ph, value in zip(placeholders[lead + n:], captured)
                           if _array_proven(value, outer)}
                found |= self.graph(sub, inputs)
            kept = {k for k in slots if all(_array_proven(sub.output_node.args[0][k], found)
                                            for sub in subgraphs)}
            if kept == slots:
                break
            slots = kept
        self.slots.update((region, k) for k in slots)
        return found


def _follows_operands(node: Node, proven: set[Node]) -> bool:
    """Whether ``node``'s shape follows from its operands' shapes and constants alone."""
    op = REGISTRY.ops.get(node.target)
    if op is None or op.side_effects or node.meta is None:
        return False
    if op.data_dependent_shape is not None and op.data_dependent_shape(node.args, node.kwargs):
        return False
    free = _integer_entries(node) if op.subscript and op.kind == "view" else set()
    for value in node.all_input_nodes():
        if value.meta is None:
            return False
        if value.meta.ndim == 0:
            if op.kind != "pointwise" and value not in free:
                return False
        elif value not in proven:
            return False
    return True


def _integer_entries(node: Node) -> set[Node]:
    """Scalar values used as whole integer entries of ``a[index]``: they drop their axis (or
    raise IndexError), so the view's shape does not depend on them (slice bounds do)."""
    if len(node.args) < 2:
        return set()
    index = node.args[1]
    items = index if isinstance(index, tuple) else (index,)
    return {item for item in items if isinstance(item, Node) and _int_entry(item)}


def _array_proven(value: Any, proven: set[Node]) -> bool:
    """A value whose shape is its traced one: a constant, a scalar, or a proven node."""
    if not isinstance(value, Node):
        return True
    return value.meta is not None and (value.meta.ndim == 0 or value in proven)
