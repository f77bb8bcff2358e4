"""Loop bodies planned like top-level graphs: the kernels of a structured function.

Every graph a structured function holds (its top level, each loop body, each branch) goes through
the same planner as a graph without regions (``plan.build_plan``): pointwise chains with
broadcasting, reductions with their producers and per-row consumers, ordering barriers at
mutations, stores fused into slices. Each ``KernelStep`` becomes a call of the kernel's serial
function (``cpu.kernel_code``; its module is a real file the structured module imports); its
outputs are allocated in the structured code with ``np.empty`` from the shapes of the arrays in
scope, in the layout NumPy gives them (``loop_layouts.empty_following``: C order for C-ordered
operands, Fortran order for Fortran-ordered ones, NumPy's stride rule at run time for others). A
fused store writes straight into the destination view unless an input may share its memory, as
the wrapper decides at top level (then into a temporary, copied in after). ``NodeStep``s and
regions stay statements of the structured function.

0-d values of a structured function are numbers, never 0-d arrays, so kernels here take and
return them as values; each kernel's serial entry is inlined into the structured function
(``nested``: numba's ``inline="always"``; on a 100x100 Jacobi step 0.26 ms against 0.37 ms for a
call). A Python int operand outside the range the kernel's dtypes can take raises OverflowError,
which ``compile_structured``'s runner turns into a NumPy run (or an error, once an input was
written), as for its own checked Python ints. FP flags: a raised flag that warns reruns the whole
structured function with NumPy (its written inputs saved and put back: ``rebuild.structured_runner``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ContextManager, Protocol

import numpy as np

from ...config import config
from ...graph import Graph, Node, eliminate_dead_carried
from ...ops.registry import REGISTRY
from .bounds import ValueRanges, proven_inside
from .cpu import KernelCode, kernel_code, rule_compiles
from .sum_orders import numpy_sum_order
from .files import load_source
from .flat_sums import c_temporaries_test, exact_sum_test
from .loop_layouts import IMPORT as LAYOUTS_IMPORT
from .loop_layouts import transposable
from .loop_numpy import NUMPY_STEP, layout_sensitive, numpy_step_source
from .masked import OVERLAP_SOURCE
from .oprules_common import region_result
from .optable import stores_index
from .plan import (KernelPlan, KernelStep, NodeStep, Plan, ReductionRule, build_plan,
                   destination_shape, planned_shape_tests, store_may_overlap, store_of)
from .scalar import python_int_bounds

INT64 = (-2 ** 63, 2 ** 63 - 1)


def drop_dead_carried(graph: Graph) -> int:
    """Carried values nothing reads (not after the region, not on the next trip) stop being
    carried, so no kernel stores them (``graph.passes.eliminate_dead_carried``). Only literals
    and region results are erased with them: every other computation, with its errors and
    warnings, stays."""
    return eliminate_dead_carried(graph, _result_slot, _erasable)


def _result_slot(user: Node) -> int | None:
    read = region_result(user)
    return read[1] if read is not None and len(user.args) == 2 and not user.kwargs else None


def _erasable(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target)
    return region_result(node) is not None or (op is not None and op.literal)

MASK_MISMATCH = '''
@numba.njit(cache=True)
def _ac_mask_mismatch(a, mask):
    # NumPy's IndexError for a boolean index whose shape differs from the array's
    for k in range(mask.ndim):
        if a.shape[k] != mask.shape[k]:
            raise IndexError("boolean index did not match indexed array along axis " + str(k)
                             + "; size of axis is " + str(a.shape[k])
                             + " but size of corresponding boolean axis is "
                             + str(mask.shape[k]))
'''

OVERLAP = OVERLAP_SOURCE.format(cache=True)  # masked.py: NumPy's may_share_memory

COPY_SAME_SHAPE = '''
@numba.njit(cache=True, error_model="numpy")
def _ac_copy_same_shape(dst, src):
    # dst[...] = src for two arrays of one shape: numba's ``[...] =`` compiles its broadcast
    # error message (str of ints), 1.6-2.6 s of compile time per structured function
    if dst.shape != src.shape:  # never, by construction (the temporary has the view's shape)
        raise ValueError("astcompiler internal error: a temporary of another shape")
    for idx in np.ndindex(src.shape):
        dst[idx] = src[idx]
'''

SLICE_LEN = '''
@numba.njit(cache=True, inline="always")
def _ac_slice_len(start, has_start, stop, has_stop, step, n):
    # len(range(*slice(start, stop, step).indices(n))); -1 for a zero step (NumPy raises)
    if step == 0:
        return -1
    if step > 0:
        lo = (start + n if start < 0 else start) if has_start else 0
        lo = 0 if lo < 0 else (n if lo > n else lo)
        hi = (stop + n if stop < 0 else stop) if has_stop else n
        hi = 0 if hi < 0 else (n if hi > n else hi)
        return (hi - lo + step - 1) // step if hi > lo else 0
    lo = (start + n if start < 0 else start) if has_start else n - 1
    lo = -1 if lo < 0 else (n - 1 if lo >= n else lo)
    hi = (stop + n if stop < 0 else stop) if has_stop else -1
    if has_stop:
        hi = -1 if hi < 0 else (n - 1 if hi >= n else hi)
    return (lo - hi - 1) // (-step) + 1 if lo > hi else 0
'''


class Emitter(Protocol):
    """What a structured function's emitter offers the kernel calls written into it."""

    names: dict[Node, str]
    helpers: set[str]
    proven: set[Node]  # nodes whose run-time shape is the traced one (``plan.proven_shapes``)
    ranges: ValueRanges  # integer ranges of index values (``bounds.py``)

    def fresh(self, hint: str) -> str: ...

    def value(self, v: Any, like: np.dtype | None = None) -> str: ...

    def index(self, base: Any, index: Any) -> str: ...

    def emit(self, indent: str, text: str, node: Node | None = None) -> None: ...

    def call(self, node: Node, indent: str) -> None: ...

    def block(self, indent: str) -> ContextManager[None]: ...


@dataclass
class LoopKernels:
    """The kernels of one structured function: planned per graph, loaded, imported by alias."""

    cache: bool = field(default_factory=lambda: bool(config.numba_cache))
    imports: list[str] = field(default_factory=list)
    codes: list[tuple[str, KernelCode, str]] = field(default_factory=list)  # alias, code, path
    aliases: dict[str, str] = field(default_factory=dict)  # module name -> alias

    def plan(self, graph: Graph) -> Plan:
        """The top-level planner on one graph of the structured function. Python numbers stay
        statements of the structured function (Python's semantics: exact ints, ZeroDivisionError)."""
        return build_plan(graph, [None] * len(graph.placeholders), accept=_in_kernel,
                          dynamic_stores=True)

    def call(self, emitter: Emitter, kernel: KernelPlan, plan: Plan, indent: str) -> None:
        """Allocate a kernel's outputs, check its Python-int operands and call it."""
        code = kernel_code(kernel, plan, cache=self.cache, nested=True)
        _, stem, path = load_source(kernel.name, code.source)
        alias = self.aliases.get(stem)
        if alias is None:  # one import per module (the same kernel may be called at many places)
            alias = self.aliases[stem] = emitter.fresh(kernel.name)
            self.imports.append(f"from {stem} import {code.name} as {alias}")
            self.codes.append((alias, code, path))
        origin = _first_origin(kernel)
        for node in code.inputs:
            self.check_python_int(emitter, node, indent)
        dims = [_dim(emitter, kernel, d) for d in range(len(kernel.shape))]
        for node in code.buffers + code.returns:
            emitter.names[node] = emitter.fresh(node.name)
        masked = kernel.masked
        if masked is not None:  # any size serves, if mask, gathered arrays and destination agree
            emitter.helpers.add(MASK_MISMATCH)
            mask = emitter.value(masked.mask)
            for source in [*masked.gathers.values(), masked.dst]:  # NumPy gathers, then stores
                emitter.emit(indent, f"_ac_mask_mismatch({emitter.value(source)}, {mask})", origin)
        checks = [] if masked is not None else planned_shape_tests(kernel, code.inputs, dims,
                                                                     emitter.value, emitter.proven)
        checks += self.view_tests(emitter, kernel, dims)
        if checks:  # shapes traced on one trip may change on the next (``u[i:i + 3]`` near the end)
            emitter.emit(indent, f"if not ({' and '.join(checks)}):", origin)
            self.unplanned(emitter, kernel, indent + "    ")
            emitter.emit(indent, "else:")
            indent += "    "
        args = [emitter.value(n) for n in code.inputs]
        if kernel.store_into is not None:
            self.allocate(emitter, kernel, code, dims, indent)
            self.fused_store(emitter, kernel, plan, code, args, alias, dims, indent)
            return
        indent = self.numpy_order(emitter, kernel, plan, code, alias, args, dims, indent)
        self.allocate(emitter, kernel, code, dims, indent)
        args += [emitter.names[n] for n in code.buffers]
        returns = ", ".join(emitter.names[n] for n in code.returns)
        target = f"{returns} = " if returns else ""
        if transposable(kernel, code):
            emitter.helpers.add(LAYOUTS_IMPORT)  # Fortran-ordered arrays: called transposed
            emitter.emit(indent, f"call_in_memory_order({alias}, ({', '.join(args)},))", origin)
            return
        emitter.emit(indent, f"{target}{alias}({', '.join(args)})", origin)

    def allocate(self, emitter: Emitter, kernel: KernelPlan, code: KernelCode, dims: list[str],
                 indent: str) -> None:
        """``np.empty`` the kernel's output buffers; those of the iteration space's rank (two
        or more dims) in the layout NumPy gives them from the kernel's operands
        (``loop_layouts.empty_following``: Fortran-ordered operands, a Fortran-ordered result)."""
        operands = [emitter.value(n) for n in code.inputs if n.meta is not None and n.meta.ndim]
        for node in code.buffers:
            if node is kernel.stored:
                continue
            following = len(kernel.shape) >= 2 and node.meta.ndim == len(kernel.shape)
            if following and operands:
                emitter.helpers.add(LAYOUTS_IMPORT)
            empty = _empty(kernel, node, dims, operands if following else ())
            emitter.emit(indent, f"{emitter.names[node]} = {empty}", node)

    def numpy_order(self, emitter: Emitter, kernel: KernelPlan, plan: Plan, code: KernelCode,
                    alias: str, args: list[str], dims: list[str], indent: str) -> str:
        """Float sums in NumPy's order (``loop_numpy.py``): on operand layouts whose NumPy order
        the kernel does not add (``flat_sums.exact_sum_test``, as at top level), or where an
        output feeds a float sum NumPy adds (a statement: ``structured._Emitter.numpy_sum``)
        and NumPy's temporary would not be C-contiguous like the kernel's buffer
        (``flat_sums.c_temporaries_test``), the kernel's nodes run with NumPy in an
        ``objmode`` block: it fills the buffers, or in the second case returns NumPy's arrays
        (their layout is the sum's order). Returns the indent of the kernel's call."""
        found = [exact_sum_test(kernel, code.inputs, emitter.value)]
        arrays = bool(config.pairwise_sums) and self.feeds_numpy_sum(kernel, plan, code)
        if arrays:
            found.append(c_temporaries_test(kernel, code.inputs, emitter.value))
        tests = [f"({t})" for t in found if t is not None]
        step = f"_ac_numpy_{alias}{'_arrays' if arrays else ''}"
        source = numpy_step_source(step, code, arrays) if tests else None
        if source is None:
            return indent
        emitter.helpers.update({NUMPY_STEP, source})
        origin = _first_origin(kernel)
        emitter.emit(indent, f"if not ({' and '.join(tests)}):  # NumPy adds these float sums "
                     "in another order", origin)
        inner = indent + "    "
        if not arrays:
            self.allocate(emitter, kernel, code, dims, inner)
        outputs = (code.buffers if arrays else []) + code.returns
        given = args if arrays else args + [emitter.names[n] for n in code.buffers]
        target = f"{', '.join(emitter.names[n] for n in outputs)} = " if outputs else ""
        emitter.emit(inner, f"{target}{step}({', '.join(given)})", origin)
        emitter.emit(indent, "else:")
        return inner

    @staticmethod
    def feeds_numpy_sum(kernel: KernelPlan, plan: Plan, code: KernelCode) -> bool:
        """Does an output buffer of the kernel feed a float sum or BLAS call of another step
        (``loop_numpy.layout_sensitive``: a statement, or another kernel's node; NumPy adds
        in the order of NumPy's temporary), itself or through a view of it
        (``(a * i).T.sum(axis=1)``: the transpose of an F-ordered temporary is C-ordered in
        NumPy, not in loop code)?"""
        buffers = set(code.buffers)
        readers = [node for step in plan.steps for node in (
            [step.node] if isinstance(step, NodeStep) else
            step.kernel.nodes if isinstance(step, KernelStep) and step.kernel is not kernel
            else [])]
        return any(layout_sensitive(node) and any(plan.roots.get(a, frozenset({a})) & buffers
                                           for a in node.all_input_nodes())
                   for node in readers)

    def view_tests(self, emitter: Emitter, kernel: KernelPlan, dims: list[str]) -> list[str]:
        """For a fused store whose destination view may differ from the planned one on this
        run (run-time indices ``ey[t, :]``, ``u[i:i + k]``, or a destination of unproven
        shape): tests that each integer index is inside its axis and each view axis has the
        kernel's size (NumPy's slice clipping, negative indices and steps). A run that fails
        them takes the kernel's array code, whose store raises NumPy's errors."""
        mutation = kernel.store_into
        if mutation is None or not stores_index(mutation):
            return []
        store = store_of(mutation)
        dst, index = store.dst, store.index
        if dst in emitter.proven and destination_shape(dst, index) is not None:
            return []
        items = list(index) if isinstance(index, tuple) else [index]
        rest = dst.meta.ndim - sum(1 for item in items if item is not None and item is not Ellipsis)
        at = next((k for k, item in enumerate(items) if item is Ellipsis), len(items))
        items[at:at + 1] = [slice(None)] * rest  # ``...`` and the axes after the last entry
        known = dst in emitter.proven and all(
            not isinstance(src, tuple) or src[0] in emitter.proven for src in kernel.dims)
        return self._axis_tests(emitter, dst, items, dims, kernel.shape if known else None)

    def _axis_tests(self, emitter: Emitter, dst: Node, items: list[Any], dims: list[str],
                    proven: tuple | None) -> list[str]:
        """``proven``: the kernel's shape when it and ``dst``'s shape hold at run time (then an
        untouched axis of equal static size needs no test)."""
        base = emitter.value(dst)
        tests, axis, d = [], 0, 0
        for item in items:
            if item is None:  # a new axis of size 1
                tests.append(f"{dims[d]} == 1")
                d += 1
                continue
            size = f"{base}.shape[{axis}]"
            axis += 1
            if not isinstance(item, slice):
                if proven is None or not proven_inside(emitter.ranges.of(item),
                                                       dst.meta.shape[axis - 1]):
                    value = emitter.value(item)
                    tests.append(f"-{size} <= {value} < {size}")
                continue
            if item == slice(None):
                static = dst.meta.shape[axis - 1]
                if proven is None or not isinstance(static, (int, np.integer)) \
                        or proven[d] != static:
                    tests.append(f"{size} == {dims[d]}")
            else:
                emitter.helpers.add(SLICE_LEN)
                start = "0, False" if item.start is None else f"{emitter.value(item.start)}, True"
                stop = "0, False" if item.stop is None else f"{emitter.value(item.stop)}, True"
                step = "1" if item.step is None else emitter.value(item.step)
                tests.append(f"_ac_slice_len({start}, {stop}, {step}, {size}) == {dims[d]}")
            d += 1
        return tests

    def fused_store(self, emitter: Emitter, kernel: KernelPlan, plan: Plan, code: KernelCode,
                    args: list[str], alias: str, dims: list[str], indent: str) -> None:
        """The kernel writes its stored output into the destination view in place, unless an
        input may share memory with it (then into a temporary, copied in after the call)."""
        mutation, stored = kernel.store_into, kernel.stored
        dst = mutation.args[0]
        with emitter.block(indent):  # index checks of run-time indices go where the view is
            where = emitter.index(dst, mutation.args[1]) if stores_index(mutation) else "..."
        if where == "...":  # the whole destination (numba has no ``a[...]`` view)
            view = emitter.value(dst)
        else:
            view = emitter.fresh(f"view_{stored.name}")
            emitter.emit(indent, f"{view} = {emitter.value(dst)}[{where}]", mutation)
        buffers = [view if n is stored else emitter.names[n] for n in code.buffers]
        returns = ", ".join(emitter.names[n] for n in code.returns)
        target = f"{returns} = " if returns else ""
        risky = [n for n in code.inputs if store_may_overlap(plan, kernel, n, dst, mutation)]
        inner = indent
        if risky:
            emitter.helpers.add(OVERLAP)
            tests = " or ".join(f"_ac_may_share_memory({view}, {emitter.value(n)})"
                              for n in risky)
            temp = emitter.fresh(f"tmp_{stored.name}")
            emitter.emit(indent, f"if {tests}:", mutation)
            emitter.emit(indent + "    ", f"{temp} = {_empty(kernel, stored, dims)}", stored)
            temps = [temp if n is stored else b for n, b in zip(code.buffers, buffers)]
            emitter.emit(indent + "    ", f"{target}{alias}({', '.join(args + temps)})",
                         _first_origin(kernel))
            if len(stored.meta.shape):  # same shape as the view: no broadcast to compile
                emitter.helpers.add(COPY_SAME_SHAPE)
                emitter.emit(indent + "    ", f"_ac_copy_same_shape({view}, {temp})", mutation)
            else:
                emitter.emit(indent + "    ", f"{view}[...] = {temp}", mutation)
            emitter.emit(indent, "else:")
            inner = indent + "    "
        emitter.emit(inner, f"{target}{alias}({', '.join(args + buffers)})",
                     _first_origin(kernel))

    def unplanned(self, emitter: Emitter, kernel: KernelPlan, indent: str) -> None:
        """The kernel's nodes one by one as numba array code, for a trip whose operand shapes
        differ from the traced ones: numba broadcasts (or raises) at run time as NumPy does."""
        planned = {n: emitter.names.pop(n) for n in kernel.nodes if n in emitter.names}
        nodes = list(kernel.nodes)
        if kernel.store_into is not None and kernel.store_into not in nodes:
            nodes.append(kernel.store_into)
        with emitter.block(indent):
            for node in nodes:
                emitter.call(node, indent)
        for node in kernel.outputs:  # bind the names the code after the kernel reads
            if node in planned and node in emitter.names:
                emitter.emit(indent, f"{planned[node]} = {emitter.names[node]}", node)
        for node in kernel.nodes:
            emitter.names.pop(node, None)
        emitter.names.update(planned)

    def check_python_int(self, emitter: Emitter, node: Node, indent: str) -> None:
        """A Python int operand the kernel's integer dtypes cannot take: NumPy decides."""
        if node.meta is None or node.meta.pytype is not int:
            return
        low, high = python_int_bounds(node)
        if (low, high) == INT64:
            return
        emitter.emit(indent, f"if not {low} <= {emitter.value(node)} <= {high}:", node)
        emitter.emit(indent + "    ", 'raise OverflowError("a Python int out of bounds for the '
                     'dtype of a kernel")')

    def readable(self) -> str:
        """The kernels' sources, for ``output_code`` after the structured function."""
        return "".join(f"\n# ---- {alias}: {code.name}  ({path}) ----\n{code.source}"
                       for alias, code, path in self.codes)


def _in_kernel(node: Node, rule: Any) -> bool:
    meta = node.meta
    if meta is None or meta.pytype is not None or np.dtype(meta.dtype) == np.float16 \
            or numpy_sum_order(node, rule):  # NumPy's order of a cast or reordered sum
        return False
    return rule_compiles(node, rule)


def _first_origin(kernel: KernelPlan) -> Node | None:
    return next((n for n in kernel.nodes if n.origin), None)


def _dim(emitter: Emitter, kernel: KernelPlan, d: int) -> str:
    source = kernel.dims[d]
    if isinstance(source, tuple):
        node, axis = source
        return f"{emitter.value(node)}.shape[{axis}]"
    return str(int(source))


def _empty(kernel: KernelPlan, node: Node, dims: list[str], operands: list[str] = ()) -> str:
    """``np.empty`` of an output buffer: its dims are dims of the iteration space (or 1); in
    the layout NumPy gives a result of ``operands`` where there are any (``empty_following``)."""
    ndim = len(kernel.shape)
    columns = isinstance(kernel.rules[node], ReductionRule) and kernel.style == "columns"
    parts = []
    for j, size in enumerate(node.meta.shape):
        if columns and len(node.meta.shape) != ndim:
            kept = kernel.kept_axes
            d = kept[j] if j < len(kept) else None
        else:
            d = j if j < ndim else None
        parts.append("1" if size == 1 or d is None else dims[d])
    shape = f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
    dtype = np.dtype(node.meta.dtype)
    dtype_source = f"np.{'bool_' if dtype.kind == 'b' else dtype.name}"
    if operands:
        return f"empty_following({shape}, {dtype_source}, ({', '.join(operands)},))"
    return f"np.empty({shape}, {dtype_source})"


__all__ = ["LoopKernels", "OVERLAP"]
