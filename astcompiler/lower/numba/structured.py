"""Graphs with control-flow regions: one ``njit`` function with real loops and branches.

Regions (``for_range``, ``while_loop``, ``cond``) become ``for``/``while``/``if`` statements and
their loop-carried values become local variables. Every graph of the function (its top level, each
loop body and branch) is planned like a graph without regions (``plan.build_plan``, through
``loop_kernels.py``): its fused kernels (the top level's ``cpu.py`` kernels, inlined) are called
from the loop code, in the plan's order, barriers at mutations included; every other op becomes
one statement written the way a numba user writes NumPy code (element access, slices, ufuncs on arrays and scalars). How each op
is written is its loop rule in the numba op table (``optable.py``); ops numba does not spell as
NumPy computes them get small njit helpers (``region_ops.py``: reductions with axes,
linspace/arange, dot without SciPy's BLAS, outer, roll, scans). An op with no lowering raises
NotLowerable: its region becomes a host loop, never a wrong answer. Scalars are cast to their
node's dtype after each op, so fixed-width integer arithmetic wraps as NumPy's does, and Python
scalars (loop indices, counters) stay 64-bit ints or floats.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from ...config import config
from ...graph import Graph, Node
from ...ops import REGISTRY
from ..base import CompiledGraph
from .bounds import INDEX_HELPERS, CheckedIndices, ValueRanges, proven_inside
from .optable import (NotLowerable, empty_rerun, loop_source, numpy_rerun, region_result,
                      value_range, zero_rerun)
from .oprules_common import all_nodes, mutates, number_source
from .loop_kernels import LoopKernels
from .loop_numpy import NUMPY_STEP, numpy_sum_source, whole_1d_sum
from .pairwise import SUM_1D_IMPORT
from .plan import KernelStep, Plan, proven_shapes, written_placeholders
from .rebuild import StructuredRebuild, fix_spec
from .scalar import python_int_bounds, type_name

HELPERS = ''  # helpers every structured kernel needs (each op adds its own to ``helpers``)
# a float max/min of loop code reports a zero result (its sign: NumPy's, by a NumPy run)
ZERO_WATCH = "\nfrom astcompiler.lower.numba.runtime import zero_watch, zero_watch_array\n"
# a mean/var/std of loop code reports an empty slice (NumPy's Python warning, by a NumPy run)
EMPTY_WATCH = "\nfrom astcompiler.lower.numba.runtime import empty_watch\n"


@dataclass
class _Emitter:
    graph: Graph
    lines: list[str] = field(default_factory=list)
    names: dict[Node, str] = field(default_factory=dict)
    constants: list[Any] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)
    used: set[str] = field(default_factory=set)
    kernels: LoopKernels = field(default_factory=LoopKernels)  # fused kernels it calls
    plan: Plan | None = None  # the plan of the graph being emitted (``body``)
    ranges: ValueRanges = field(  # integer ranges for index bounds, by the ops' rules
        default_factory=lambda: ValueRanges(rule=value_range))
    checked: CheckedIndices = field(default_factory=CheckedIndices)  # index checks per block
    proven: set[Node] = field(default_factory=set)  # shapes that hold at run time (guards)

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
            return f"{type_name(like)}({number_source(v)})"
        if isinstance(v, (int, float, complex)):
            return number_source(v)
        if isinstance(v, np.generic):
            return f"{type_name(v.dtype)}({number_source(v.item())})"
        if isinstance(v, slice):
            parts = [self.value(p) if p is not None else "" for p in (v.start, v.stop, v.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if v.step is not None else "")
        if isinstance(v, np.dtype):
            return type_name(v)
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
    # lowering time, on an array whose shape is proven (``plan.proven_shapes``), symbolic sizes
    # included (``for i in range(1, len(x) - 1): x[i + 1]``);
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
        if base in self.proven and proven_inside(self.ranges.of(item), base.meta.shape[axis]):
            return self.value(item)  # a traced size only holds for a proven shape (a window
            # ``u[i:i + 3]`` may be shorter on a later trip)
        self.helpers.add(INDEX_HELPERS)
        size = base.meta.shape[axis]
        known = self.checked.get(item, size)
        if known is None:  # once per index value and axis size in this block (bounds.py)
            known = self.fresh(f"ix_{self.value(item)}")
            self.emit(self._indent, f"{known} = _ac_ix({self.value(item)}, {size_src}, {axis})"
                      "  # NumPy's IndexError; reused below")
            self.checked.add(item, size, known)
        return known

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
        """Emit the graph's steps as the top-level planner orders them (``plan.build_plan``:
        fused kernels, called here; every other node a statement; regions as loops); returns
        the output expressions."""
        for node in graph.nodes:
            if node.meta is not None and np.dtype(node.meta.dtype) == np.float16:
                raise NotLowerable("float16 values (numba has no float16 arithmetic)")
        plan = self.kernels.plan(graph)
        saved, self.plan = self.plan, plan
        try:
            for step in plan.steps:
                if isinstance(step, KernelStep):
                    self.kernels.call(self, step.kernel, plan, indent)
                elif step.node.op == "region":
                    self.region(step.node, indent)
                else:
                    self.call(step.node, indent)
        finally:
            self.plan = saved
        return [self.value(v) for v in graph.output_node.args[0]]

    def call(self, node: Node, indent: str) -> None:
        if node in self.names:  # a region's result: already bound to its carried variable
            return
        name = self.fresh(node.name)
        self.names[node] = name
        if self.numpy_sum(node, name, indent):
            return
        text = self.expression(node)
        if text is None:  # a statement (mutation)
            return
        meta = node.meta
        if meta is not None and meta.ndim == 0:  # scalars: NumPy's dtype (wrap-around) or Python's
            cast = meta.pytype.__name__ if meta.pytype is not None else type_name(meta.dtype)
            text = f"{cast}({text})"
        self.emit(indent, f"{name} = {text}", node)

    def numpy_sum(self, node: Node, name: str, indent: str) -> bool:
        """A float sum as a statement (not in a kernel): NumPy computes it in an ``objmode``
        block (``loop_numpy.numpy_sum_source``), in its pairwise order on any layout."""
        if not config.pairwise_sums:
            return False
        made = numpy_sum_source(f"_ac_numpy_{name}", node)
        if made is None:
            return False
        source, inputs = made
        self.helpers.update({NUMPY_STEP, source})
        args = ", ".join(self.value(v) for v in inputs)
        call = f"_ac_numpy_{name}({args})"
        if whole_1d_sum(node):  # NumPy's order, in numba (a positive stride: NumPy's iteration)
            self.helpers.add(SUM_1D_IMPORT)
            operand = self.value(node.args[0])
            call = f"_ac_sum_1d({operand}) if {operand}.strides[0] > 0 else {call}"
        self.emit(indent, f"{name} = {call}  # NumPy's order of this sum", node)
        return True

    def expression(self, node: Node) -> str | None:
        """The node's value as source (None: the op emitted a statement), by the op table's
        loop rule (``optable.loop_source``). A float max/min's value is watched for a zero
        (``runtime.zero_watch``: the runner then runs the graph with NumPy, whose sign it is)."""
        text = loop_source(self, node)
        if text is not None and empty_rerun(node):
            return self.empty_watched(text, node)
        if text is None or not zero_rerun(node):
            return text
        self.helpers.add(ZERO_WATCH)
        return f"zero_watch({text})" if node.meta.ndim == 0 else f"zero_watch_array({text})"

    def empty_watched(self, text: str, node: Node) -> str:
        """A mean/var/std's value, its degrees of freedom reported (``runtime.empty_check``:
        NumPy's Python warning on an empty slice reruns the call with NumPy)."""
        operand = self.value(node.args[0])
        axis = node.kwargs.get("axis")
        axes = range(node.args[0].meta.ndim) if axis is None else \
            ((axis,) if isinstance(axis, int) else axis)
        count = " * ".join(f"{operand}.shape[{a}]" for a in axes) or "1"
        ddof = node.kwargs.get("ddof", 0)
        self.helpers.add(EMPTY_WATCH)
        return f"empty_watch({text}, {count} - {self.value(ddof)})"

    def statement(self, text: str, node: Node) -> None:
        """A statement (a store) where ``node`` is written."""
        self.emit(self._indent, text, node)

    def may_alias(self, value: Any) -> bool:
        """Whether array ``value`` may share memory with a store's destination: anything but a
        fresh result of a computation (``plan.storage_roots`` of the graph being emitted)."""
        if not isinstance(value, Node) or value.meta is None or value.meta.ndim == 0:
            return False
        op = REGISTRY.ops.get(value.target) if value.op == "call" else None
        if op is None or op.literal:  # an input, a region's result, a constant's own array
            return True
        roots = self.plan.roots.get(value) if self.plan is not None else None
        return roots != frozenset({value})

    def region(self, node: Node, indent: str) -> None:
        info = node.info
        n_carried = info.n_carried
        controls, init, captured = info.split(node.args)
        names = info.names or [f"c{k}" for k in range(n_carried)]
        carried = [self.fresh(f"{n}_c") for n in names]
        for var, value in zip(carried, init):
            self.emit(indent, f"{var} = {self.value(value)}", node)
        for user in node.users:  # results: getitem(region, k) are the carried variables
            if region_result(user) is not None and user.args[0] is node:
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
        before = len(self.lines)
        with self.block(indent):
            outs = self.body(graph, indent)
        if len(self.lines) == before:
            self.emit(indent, "pass")
        return outs

    @contextmanager
    def block(self, indent: str) -> Iterator[None]:
        """Statements emitted inside go to a new block at ``indent`` (index checks made there
        are not reused after it)."""
        saved = self._indent
        self._indent = indent
        self.checked.enter()
        try:
            yield
        finally:
            self._indent = saved
            self.checked.leave()

    def assign(self, indent: str, targets: list[str], values: list[str]) -> None:
        if targets:
            self.emit(indent, f"{', '.join(targets)} = {', '.join(values)}")

    _indent: str = "    "


def expression_source(graph: Graph, node: Node) -> tuple[str | None, list[str], set[str]]:
    """How loop code writes call ``node`` of ``graph`` (the nodes it reads named by their node
    names): the source of its value (None: a statement), the statements it emitted and the
    helper sources it needs. Raises NotLowerable like the structured lowering."""
    emitter = _Emitter(graph)
    for other in graph.nodes:
        if other is node:
            break
        emitter.names[other] = other.name
    return emitter.expression(node), emitter.lines, emitter.helpers


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


def compile_structured(graph: Graph, example_inputs: list,
                       load: Callable[[str, str], Any], guarded: bool = False) -> CompiledGraph:
    """One njit function for the whole graph (raises NotLowerable when an op has no lowering).
    ``guarded``: the inputs' shapes are the traced ones (the call's guards checked them), so
    kernels whose operands' shapes follow from them need no run-time shape tests."""
    emitter = _Emitter(graph)
    if guarded:
        emitter.proven = proven_shapes(graph, set(graph.placeholders))
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
    imports = "".join(f"{line}\n" for line in emitter.kernels.imports)
    source = ("# Generated by astcompiler (numba backend, structured control flow).\n"
              "import numpy as np\nimport numba\n" + imports + HELPERS
              + "".join(sorted(emitter.helpers))
              + "\n\n@numba.njit(cache=True, error_model='numpy')\n"
              f"def structured_kernel({signature}):\n{body}\n    return ({ret})\n")
    module = load("structured", source)
    kernel = module.structured_kernel
    placeholders = graph.placeholders
    python_ints = [(i, *python_int_bounds(ph)) for i, ph in enumerate(placeholders)
                   if ph.meta is not None and ph.meta.pytype is int]
    # the run function (``rebuild.py``), which the persistent entry cache builds again from files
    rebuild = StructuredRebuild(
        module.__file__, [path for _, _, path in emitter.kernels.codes], list(emitter.constants),
        python_ints, [fix_spec(n, placeholders) for n in graph.output_node.args[0]],
        any(mutates(n) for n in all_nodes(graph)),
        mutated=tuple(sorted(written_placeholders(graph))),  # saved for NumPy's FP warnings
        # and signed zeros of max/min, empty means (``optable.numpy_rerun``)
        watches_zeros=any(numpy_rerun(n) for n in all_nodes(graph)),
        overflows=any(n.op == "call" and n.meta is not None and n.meta.pytype is int
                      for n in all_nodes(graph)))  # Python ints: saved inputs for a rerun

    def eager(inputs: tuple) -> tuple:
        from ..eager import interpret
        return interpret(graph, inputs)

    kernels = {"structured_kernel": source}
    kernels.update((alias, code.source) for alias, code, _ in emitter.kernels.codes)
    return CompiledGraph(rebuild.runner(kernel, eager),
                         output_code=source + emitter.kernels.readable(), kernels=kernels,
                         files=[path for _, _, path in emitter.kernels.codes], rebuild=rebuild)
