"""The wrapper (``output_code``): generated Python that runs a plan's steps.

It takes the graph's placeholders, allocates kernel outputs with ``np.empty`` (NumPy's
allocator: huge pages for big arrays, no page faults inside the kernel's hot loop), calls the
kernels (the ``prange`` twin when the iteration space has at least
``config.parallel_threshold`` elements, ``config.blas_parallel_threshold`` in a graph that calls
BLAS), and evaluates views, extern, creation and mutation
nodes with their NumPy reference implementations. Objects that have no literal form are bound
through ``make_forward``'s parameters.
"""

from __future__ import annotations

import ast
import builtins
from typing import Any, Callable

import numpy as np

from ...capture.fp_effects import may_set_fp_flags
from ...config import config
from ...graph import Graph, Node
from ...ops import REGISTRY
from ...ops.python_scalars import PYTHON_OPS
from ..base import PasteTemplate
from ..places import literal_place
from .cpu import KernelCode, Namer
from .flat_sums import exact_sum_test
from .loop_layouts import transposable
from .transposed import SUFFIX as TWIN_SUFFIX
from .transposed import TransposedTwin, f_ordered_test, transposed_twin, twin_arguments
from .oprules_common import reads_index, stores_index
from .optable import numba_rule, numpy_rerun
from .scalar import python_int_bounds, raises_flags, type_name
from .scans import scan_key
from .border_copy import border_copies, emit_border_copy
from .lifetimes import release_dead
from .plan import (KernelPlan, KernelStep, NodeStep, Plan, ReductionRule, operands, reduced_axes,
                   planned_shape_tests, static_sizes, store_may_overlap)
from ...source.python_ast import parse as parse_python

_WRAPPER_RESERVED = set(dir(builtins)) | {"np", "REGISTRY", "make_forward", "forward", "___empty",
                                           "___fallback", "___error", "___rt", "___strict",
                                           "___fp_token", "___zeros"}
# a wrapper whose writes cannot be rerun reads ``np.errstate`` up front (``runtime.strict``), or
# takes it as the keyword ``STRICT`` (then it has the attribute ``TAKES_STRICT``): a host loop
# around it reads the errstate once instead of once per iteration
STRICT = "___strict"
FP_TOKEN = "___fp_token"  # ``runtime.fp_defer``'s token while NumPy steps' warnings wait
ZERO_COUNT = "___zeros"  # ``runtime.ZEROS.value`` before a kernel with float max/min results
TAKES_STRICT = "takes_strict"


def _op_key(node: Node) -> str:
    """Which implementation evaluates ``node``: Python's operator for an op on Python numbers
    typed as a Python number (exact ints, ZeroDivisionError), a numba scan (``scans.py``), else
    the op's NumPy reference."""
    scan = scan_key(node)
    if scan is not None:
        return f"numba:{scan}"
    meta = node.meta
    if meta is not None and meta.pytype is not None and not node.kwargs \
            and node.target in PYTHON_OPS and all(
                isinstance(a, Node) and a.meta is not None and a.meta.pytype is not None
                or type(a) in (bool, int, float, complex) for a in node.args):
        return f"python:{node.target}"
    if node.operator and meta is not None and meta.scalar and not node.kwargs \
            and REGISTRY.ops[node.target].python is not None:
        return f"operator:{node.target}"  # NumPy's scalar math: "in scalar divide", as written
    return node.target


class WrapperWriter:
    """Builds the wrapper module source for a plan."""

    def __init__(self, plan: Plan, codes: dict[int, KernelCode], modules: dict[int, str],
                 threshold: int, name: str = "forward",
                 regions: Callable[["WrapperWriter", Node], None] | None = None):
        self.plan = plan
        self.regions = regions  # writes a region step (host.py: structured piece or host loop)
        self.codes = codes
        self.modules = modules
        self.beside_blas = calls_threaded(plan.graph)  # see kernel_threshold
        self.threshold = kernel_threshold(plan.graph, threshold)
        self.serial_below = threshold  # a static kernel smaller than this: no size test at all
        self.fn_name = name
        reserved = set(_WRAPPER_RESERVED)
        for code in codes.values():
            reserved.add(code.name)
            if code.parallel_name:
                reserved.add(code.parallel_name)
        self.ops: dict[str, str] = {}
        for step in plan.steps:
            if isinstance(step, NodeStep) and step.node.op == "call" \
                    and not (reads_index(step.node) or stores_index(step.node)):
                key = _op_key(step.node)
                self.ops[key] = f"op_{key.replace(':', '_')}"
            elif isinstance(step, KernelStep) and step.kernel.store_into is not None \
                    and not stores_index(step.kernel.store_into):  # copy_: NumPy's casting
                key = _op_key(step.kernel.store_into)
                self.ops[key] = f"op_{key.replace(':', '_')}"
        reserved |= set(self.ops.values())
        self.names = Namer(reserved)
        self.var: dict[Node, str] = {}
        self.consts: list[Any] = []
        self.const_names: list[str] = []
        self.places: dict[tuple, str] = {}  # (user file, line, module) -> its call at that line
        self.lines: list[str] = []
        self.first_effect: int | None = None  # index in ``lines`` of the first write to an input
        self.effect_line: int | None = None  # its line number in the module (after ``build``)
        self.mutated: set[Node] = set()  # placeholders the graph writes to
        self.fp_dirty = True  # NumPy steps may have left FP flags set since the last clear
        self.opaque = False  # a region or an op with side effects ran: rerunning would repeat it
        self.fp_reported = False  # some kernel's FP flags are reported in place (no rerun)
        self.fp_deferring = False  # NumPy steps run with their warnings deferred (fp_defer)
        self.replays_warnings = False  # a NumPy step that may have warned ran undeferred
        self.reuse: dict[int, dict[Node, Node]] = {}  # kernel index -> buffers reused in place
        self.nesting = 0  # extra indentation (a kernel call inside its shape test)
        self.pooled = pooled_buffers(plan, codes)  # temporaries reused across calls: slot
        self.border_copies = border_copies(plan)  # copies overwritten but for a border
        self.pool_taken: list[Node] = []  # pooled buffers allocated so far (given back at return)
        self.snapshots = 0  # pooled copies of memory a kernel overwrites (slots -1, -2, ...)
        self.dtypes: dict[str, str] = {}  # module-level dtype constants: name -> dtype name
        self.paste: PasteTemplate | None = None  # the forward's body to paste (after ``build``)
        for node in plan.graph.placeholders:
            self.var[node] = self.names(node.name)

    # -- values ---------------------------------------------------------------------------

    def const(self, value: Any) -> str:
        for i, known in enumerate(self.consts):
            if known is value:
                return self.const_names[i]
        name = self.names(f"const_{len(self.consts)}")
        self.consts.append(value)
        self.const_names.append(name)
        return name

    def value(self, value: Any) -> str:
        """Source for a node argument."""
        if isinstance(value, Node):
            return self.var[value]
        if value is None or value is Ellipsis or isinstance(value, bool):
            return "..." if value is Ellipsis else repr(value)
        if type(value) is int and -256 <= value <= 256:
            return repr(value)
        if type(value) is str:
            return repr(value)
        if isinstance(value, tuple):
            inner = ", ".join(self.value(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if type(value) is list and _holds_node(value):  # x[[i, j]]: the ints of this call
            return "[" + ", ".join(self.value(v) for v in value) + "]"
        if isinstance(value, slice):
            return f"slice({self.value(value.start)}, {self.value(value.stop)}, {self.value(value.step)})"
        if isinstance(value, np.dtype):
            return f"np.dtype({value.str!r})" if value.isbuiltin else self.const(value)
        return self.const(value)

    def index(self, index: Any) -> str:
        """Subscript source (``1:, None``) for an indexing argument."""
        items = index if isinstance(index, tuple) else (index,)
        parts = []
        for item in items:
            if isinstance(item, slice) and all(
                    p is None or (type(p) is int) or isinstance(p, Node)
                    for p in (item.start, item.stop, item.step)):
                text = ":".join("" if p is None else self.value(p) for p in (item.start, item.stop))
                if item.step is not None:
                    text += ":" + self.value(item.step)
                parts.append(text)
            else:
                parts.append(self.value(item))
        if not isinstance(index, tuple):
            return parts[0]
        if len(parts) == 1:
            return parts[0] + ","
        return ", ".join(parts) if parts else "()"

    def emit(self, text: str, origin: str | None = None, depth: int = 2) -> None:
        suffix = f"  # {origin}" if origin else ""
        self.lines.append("    " * (depth + self.nesting) + text + suffix)

    # -- steps ----------------------------------------------------------------------------

    def note_effect(self, node: Node) -> None:
        """``node`` is about to be emitted: record it when it writes to an input."""
        targets = [node.args[0]] if node.args and node.target in REGISTRY \
            and REGISTRY[node.target].kind == "mutation" else []
        out = node.kwargs.get("out")
        targets += list(out) if isinstance(out, tuple) else [out]
        for dst in targets:
            if not isinstance(dst, Node):
                continue
            inputs = {r for r in self.plan.roots.get(dst, {dst}) if r.op == "placeholder"}
            if inputs and self.first_effect is None:
                self.first_effect = len(self.lines)
            self.mutated |= inputs

    def node_step(self, node: Node) -> None:
        self.fp_dirty = True
        if node.op == "region":
            if self.regions is None:
                raise AssertionError("a region step needs a region writer (host.py)")
            self.opaque = True  # (kernels in a host loop run after the loop's earlier effects)
            self.regions(self, node)
            return
        self.note_effect(node)
        op = REGISTRY.ops.get(node.target)
        if op is not None and op.side_effects and op.kind != "mutation":
            self.opaque = True
        if reads_index(node) and len(node.args) == 2 and not node.kwargs:
            self.var[node] = self.names(node.name)
            self.emit(f"{self.var[node]} = {self.value(node.args[0])}[{self.index(node.args[1])}]",
                      node.origin)
            return
        if stores_index(node) and len(node.args) == 3 and not node.kwargs:
            dst, index, value = node.args
            self.emit(f"{self.value(dst)}[{self.index(index)}] = {self.value(value)}", node.origin)
            return
        args = [self.value(a) for a in node.args]
        args += [f"{k}={self.value(v)}" for k, v in node.kwargs.items()]
        call = f"{self.ops[_op_key(node)]}({', '.join(args)})"
        if node.place is not None:  # NumPy's warnings come from the user's line
            call = self.placed_call(node, args)
        if node.meta is None and REGISTRY[node.target].kind == "mutation":
            self.emit(call, node.origin)
            return
        self.var[node] = self.names(node.name)
        self.emit(f"{self.var[node]} = {call}", node.origin)

    def placed_call(self, node: Node, args: list[str]) -> str:
        """``node``'s NumPy call in a frame at its user line (``lower/places.py``): its warnings
        have the plain call's location, module and once-per-location registry."""
        at = self.places.setdefault(literal_place(node.place), f"___at_{len(self.places)}")
        return f"{at}({', '.join([self.ops[_op_key(node)], *args])})"

    def kernel_step(self, kernel: KernelPlan) -> None:
        code = self.codes[kernel.index]
        origin = _origins(kernel)
        for node in code.buffers + code.returns:
            self.var[node] = self.names(node.name)
        dims = [self.dim_expr(kernel, d) for d in range(len(kernel.shape))]
        checks = self.planned_shapes(kernel, code, dims)
        shapes = list(checks)
        layouts = exact_sum_test(kernel, code.inputs, lambda n: self.var[n])
        if layouts is not None:  # float sums: NumPy's order on these layouts only
            checks.append(f"({layouts})")
        if checks:  # a loop body: shapes traced on one trip may change on the next
            self.emit(f"if not ({' and '.join(checks)}):  # not the traced shapes or sum "
                      "layouts: NumPy", origin)
            twin = transposed_twin(code) if layouts is not None \
                and not self.fn_name.endswith(TWIN_SUFFIX) \
                and not self.twin_may_reorder(kernel) else None
            if twin is not None:
                self.transposed_call(code, twin, shapes, origin)
            self.nesting += twin is not None
            self.unplanned(kernel, code, origin)
            self.nesting -= twin is not None
            self.emit("else:", origin)
            self.nesting += 1
        try:
            self.planned_call(kernel, code, dims, origin)
        finally:
            self.nesting -= 1 if checks else 0
        for node in code.returns:
            name = self.var[node]
            self.emit(f"{name} = {type_name(node.meta.dtype)}({name})", node.origin)

    def transposed_call(self, code: KernelCode, twin: TransposedTwin, shapes: list[str],
                        origin: str | None) -> None:
        """F-ordered operands: the kernel's transposed twin (``transposed.py``), its 2-D results
        read back transposed; the ``else:`` of this branch is the kernel's NumPy step."""
        test = " and ".join([*shapes, f"({f_ordered_test(code, twin, lambda n: self.var[n])})"])
        self.emit(f"if {test}:  # F-ordered: the transposed twin adds in NumPy's order", origin, 3)
        outputs = [self.var[n] for n in code.buffers + code.returns]
        self.emit(f"{', '.join(outputs)}, = ___fallback.localize.transposed_kernel("
                  f"{code.name!r})({twin_arguments(code, twin, lambda n: self.var[n])})",
                  origin, 4)
        for name, flipped in zip(outputs, twin.flipped):
            if flipped:
                self.emit(f"{name} = {name}.T", origin, 4)
        self.emit("else:", origin, 3)

    def planned_shapes(self, kernel: KernelPlan, code: KernelCode, dims: list[str]) -> list[str]:
        """In a loop body's wrapper (its inputs are not guarded): tests that the kernel's
        operands have the shapes it was planned for. A masked store checks its mask instead
        (any size serves where mask, gathered arrays and destination agree)."""
        if self.fn_name == "forward":  # guarded inputs: only sizes planned as possibly equal
            return [] if kernel.masked is not None else planned_shape_tests(
                kernel, code.inputs, dims, lambda n: self.var[n], set(code.inputs))
        if kernel.masked is not None:
            mask = self.value(kernel.masked.mask)
            for source in [*kernel.masked.gathers.values(), kernel.masked.dst]:
                self.emit(f"___rt.mask_mismatch({self.value(source)}, {mask})",
                          kernel.masked.store.origin)
            return []
        return planned_shape_tests(kernel, code.inputs, dims, lambda n: self.var[n])

    def unplanned(self, kernel: KernelPlan, code: KernelCode, origin: str | None) -> None:
        """The kernel's nodes with NumPy (broadcasting and errors as eager), then its store."""
        outputs = [self.var[n] for n in code.buffers + code.returns]
        inputs = ", ".join(self.var[n] for n in code.inputs)
        if self.twin_may_reorder(kernel) or self.twin_warns_in_python(kernel):
            token = f", {FP_TOKEN}" if self.fp_deferring else ""
            self.emit(f"___twin, ___warned = ___rt.twin_warned(___fallback.localize.numpy_kernel("
                      f"{code.name!r}), ({inputs},){token})", origin, 3)
            self.emit("if ___warned:", origin, 3)
            self.rerun(origin, 4, "  # the twin warns: NumPy's order from the start")
            self.emit(f"{', '.join(outputs)}, = ___twin", origin, 3)
        else:
            self.emit(f"{', '.join(outputs)}, = ___fallback.localize.numpy_kernel("
                      f"{code.name!r})({inputs})", origin, 3)
        if kernel.store_into is not None:
            self.store_mutation(kernel, self.var[kernel.stored], 3)

    def store_mutation(self, kernel: KernelPlan, value: str, depth: int) -> None:
        """The kernel's store of ``value`` into its destination, as NumPy does it."""
        mutation = kernel.store_into
        dst = self.value(mutation.args[0])
        if stores_index(mutation):
            self.emit(f"{dst}[{self.index(mutation.args[1])}] = {value}", mutation.origin, depth)
        else:
            self.emit(f"{self.ops[_op_key(mutation)]}({dst}, {value})", mutation.origin, depth)

    def twin_warns_in_python(self, kernel: KernelPlan) -> bool:
        """Whether the kernel's NumPy twin may call ``warnings.warn`` ("Mean of empty slice")
        while the call can still rerun: held (``runtime.twin_warned``), since an error the twin
        raises after it would send the call to the original function, which warns again."""
        return self.fp_can_rerun and kernel.store_into is None and kernel.masked is None \
            and any(n.op == "call" and n.target in REGISTRY.ops and REGISTRY.ops[n.target].may_warn
                    for n in kernel.nodes)

    def twin_may_reorder(self, kernel: KernelPlan) -> bool:
        """Whether the kernel's NumPy twin would warn out of the plain call's order: one of its
        nodes that may warn comes, in the program, after a NumPy step that may warn and that
        the plan runs after the kernel (``plan.py`` groups across it). Then, while the call can
        still rerun, the twin runs with its warnings held (``runtime.twin_warned``)."""
        if not self.fp_can_rerun or kernel.store_into is not None \
                or kernel.masked is not None or not checks_fp(kernel):
            return False
        order = {node: i for i, node in enumerate(self.plan.graph.nodes)}
        last = max((order.get(n, -1) for n in kernel.nodes if may_set_fp_flags(n)), default=-1)
        index = next((i for i, step in enumerate(self.plan.steps)
                      if isinstance(step, KernelStep) and step.kernel is kernel), None)
        return index is not None and any(
            isinstance(step, NodeStep) and fp_step_kind(step.node) != "none"
            and order.get(step.node, last) < last for step in self.plan.steps[index + 1:])

    def planned_call(self, kernel: KernelPlan, code: KernelCode, dims: list[str],
                     origin: str | None) -> None:
        self.allocations(kernel, code, dims, origin)
        if kernel in self.border_copies and emit_border_copy(  # a later store overwrites the
                self, kernel, self.border_copies[kernel], origin):  # rest (border_copy.py)
            return
        checked = checks_fp(kernel)
        if not checked and _floating(kernel):  # NumPy never warns about it: flags left behind
            self.fp_dirty = True
        # a checked kernel's entry clears the SSE flags first (``cpu.kernel_code`` clears_fp):
        # stale ones from the caller or NumPy steps cost no rerun. Stale x87 flags (long double)
        # stay: harmless where a flag reruns the call, cleared here where it is reported
        reported = not self.fp_can_rerun or kernel.store_into is not None \
            or kernel.masked is not None  # (a store or masked kernel writes first: no rerun)
        if checked and self.fp_dirty and reported:
            self.emit("___rt.fp_clear()  # NumPy warns about the FP flags a kernel raises", origin)
        if kernel.store_into is not None:  # (checks the flags in each of its branches)
            self.fused_store(kernel, code, dims, origin, checked)
            return
        snapshot = None
        if kernel.masked is not None:  # dst[mask] = ... (masked.py): the kernel writes dst
            self.note_effect(kernel.masked.store)
            if checked and not self.fp_can_rerun and single_ufunc(kernel) is None:
                snapshot = self.masked_snapshot(kernel, origin)
        zeros = kernel.masked is None and watches_zeros(kernel)  # (masked: pointwise only)
        if zeros:
            self.emit(f"{ZERO_COUNT} = ___rt.ZEROS.value", origin)
        self.call(kernel, code, dims, origin, 2)
        if checked:
            self.check_fp(kernel, code, origin, snapshot=snapshot)
            self.give_snapshot(snapshot, origin)
        if zeros:
            self.zero_check(kernel, code, origin, 2)

    def zero_check(self, kernel: KernelPlan, code: KernelCode, origin: str | None, depth: int,
                   temp: str | None = None, saved: tuple[str, str] | None = None) -> None:
        """After a kernel with float max/min results: one that was a zero (``runtime.zero_watch``;
        NumPy's sign of it is its SIMD lane order's) reruns the call with NumPy, or, where the
        call cannot rerun, takes the kernel's outputs from its NumPy twin (``runtime.zero_twin``;
        ``saved``: memory the kernel overwrote although it read it, and its copy from before,
        put back first). ``temp``: the temporary a store kernel wrote, stored after this."""
        self.emit(f"if ___rt.ZEROS.value != {ZERO_COUNT}:", origin, depth)
        if self.fp_can_rerun:
            self.rerun(origin, depth + 1, "  # a float max/min is a zero: NumPy's sign")
            return
        if saved is not None:
            self.emit(f"np.copyto({saved[0]}, {saved[1]})  # as it was before the kernel", origin,
                      depth + 1)
        inputs = "".join(f"{self.var[n]}, " for n in code.inputs).rstrip(" ")
        self.emit(f"___twin = ___rt.zero_twin(___fallback.localize, {code.name!r}, ({inputs}))"
                  "  # a float max/min is a zero: NumPy's sign, from the kernel's NumPy twin",
                  origin, depth + 1)
        for i, node in enumerate(code.buffers + code.returns):
            if node is kernel.stored and kernel.store_into is not None:
                if temp is not None:
                    self.emit(f"{temp} = ___twin[{i}]", origin, depth + 1)
                else:  # stored in place: NumPy's store of the twin's value
                    self.store_mutation(kernel, f"___twin[{i}]", depth + 1)
            elif node in code.returns:
                self.emit(f"{self.var[node]} = ___twin[{i}]", node.origin, depth + 1)
            else:
                self.emit(f"np.copyto({self.var[node]}, ___twin[{i}])", node.origin, depth + 1)

    def allocations(self, kernel: KernelPlan, code: KernelCode, dims: list[str],
                    origin: str | None) -> None:
        """The kernel's output buffers, in the memory layout NumPy gives them: C order when
        every input of two or more dims is C-contiguous, else NumPy's ``order="K"`` rule
        (``runtime.k_order``: Fortran-ordered in, Fortran-ordered out)."""
        buffers = [n for n in code.buffers if n is not kernel.stored]
        wide = [n for n in code.inputs if len(n.meta.shape) >= 2 and not n.meta.scalar]
        reuse = self.reused_buffers(kernel, code)
        if not wide or not any(len(n.meta.shape) >= 2 for n in buffers):
            for node in buffers:
                self.allocate(kernel, node, dims, self.var[node], node.origin, reuse=reuse)
            return
        self.emit("if " + " and ".join(f"{self.var[n]}.flags.c_contiguous" for n in wide) + ":",
                  origin)
        for node in buffers:
            self.allocate(kernel, node, dims, self.var[node], node.origin, 3, reuse)
        self.emit("else:  # NumPy's output layout follows its inputs' (order='K')", origin)
        layouts = self.layouts(kernel, [n for n in buffers if len(n.meta.shape) >= 2], dims)
        for node in buffers:
            if node not in layouts:
                self.allocate(kernel, node, dims, self.var[node], node.origin, 3)
                continue
            shape = self.shape_expr(kernel, node, dims)
            self.emit(f"{self.var[node]} = ___rt.empty({shape}, {type_name(node.meta.dtype)}, "
                      f"{layouts[node]})", node.origin, 3)

    def layouts(self, kernel: KernelPlan, wanted: list[Node], dims: list[str]) -> dict[Node, str]:
        """Emit the layouts of the members ``wanted`` needs, as NumPy would allocate each."""
        needed: set[Node] = set()
        stack = list(wanted)
        while stack:
            node = stack.pop()
            if node in needed:
                continue
            needed.add(node)
            stack.extend(v for v in operands(node, kernel.rules[node]) if v in kernel.rules)
        names: dict[Node, str] = {}

        def ref(value: Node) -> str:
            return names[value] if value in names else self.var[value]

        for node in kernel.nodes:
            if node not in needed:
                continue
            shape = self.shape_expr(kernel, node, dims)
            rule = kernel.rules[node]
            args = [ref(v) for v in operands(node, rule)]
            if isinstance(rule, ReductionRule):
                keep = bool(node.kwargs.get("keepdims", False))
                text = f"___rt.reduced({args[0]}, {shape}, {reduced_axes(node)!r}, {keep})"
            elif _order_arg(node) and node.kwargs.get("order", "K") != "K":
                text = f"___rt.copied({shape}, {args[0]}, {node.kwargs['order']!r})"
            else:
                text = f"___rt.k_order({shape}, ({', '.join(args)}{',' if len(args) == 1 else ''}))"
            names[node] = self.names(f"layout_{node.name}")
            self.emit(f"{names[node]} = {text}", node.origin, 3)
        return {n: names[n] for n in wanted}

    @property
    def can_rerun(self) -> bool:
        """Whether the code emitted so far may be rerun with NumPy from the start (no write to an
        input, no region or side effect ran before this point)."""
        return self.first_effect is None and not self.opaque

    @property
    def fp_can_rerun(self) -> bool:
        """Whether a kernel's FP flag may rerun the whole call with NumPy: ``can_rerun``, and
        no NumPy step ran whose warnings that run would repeat (those of steps run under
        ``fp_defer`` wait; a step whose flag warns reruns the call at once)."""
        return self.can_rerun and not self.replays_warnings

    def reused_buffers(self, kernel: KernelPlan, code: KernelCode) -> dict[Node, Node]:
        """``in_place_buffers``, except where the kernel's flags could only be reported as
        flags (no twin on its inputs, no rerun) while one of its ops compares floats: a NaN
        lane's compare raises *invalid*, which is NumPy's only if another op raised it. Decided
        once per kernel (at its allocations; its FP check reads the same answer)."""
        if kernel.index in self.reuse:
            return self.reuse[kernel.index]
        reuse = in_place_buffers(kernel, code)
        self.reuse[kernel.index] = reuse
        if reuse and not self.fp_can_rerun and single_ufunc(kernel) is None \
                and checks_fp(kernel) and any(_compares_floats(n) for n in kernel.nodes):
            self.reuse[kernel.index] = {}  # a fresh output: the twin runs on the BLAS result
        if reuse and not self.fp_can_rerun and watches_zeros(kernel):
            self.reuse[kernel.index] = {}  # a zero max/min: the twin reads the BLAS result
        return self.reuse[kernel.index]

    def fp_raised_test(self) -> str:
        """The wrapper's test that the flags warn (under ``fp_defer``: the caller's modes)."""
        return f"___rt.fp_raised_under({FP_TOKEN})" if self.fp_deferring else "___rt.fp_raised()"

    # -- NumPy steps' warnings deferred while the call may still rerun with NumPy --------

    def defer_numpy_warnings(self, index: int, step: Any) -> None:
        """Before step ``index``: end the deferred stretch at a step after which the call
        cannot rerun; start one at a NumPy ufunc step that may warn when a kernel that checks
        its flags follows before any effect (X9, X13: the step's warnings would come again,
        or before the kernel's, when that kernel's flag reruns the whole call)."""
        if self.fp_deferring and _ends_deferral(step):
            self.end_deferral()
        if self.fp_deferring or self.fn_name != "forward" or not self.fp_can_rerun \
                or not isinstance(step, NodeStep) or fp_step_kind(step.node) != "flags" \
                or _ends_deferral(step) or not _rerun_follows(self.plan.steps[index + 1:]):
            return
        self.emit(f"{FP_TOKEN} = ___rt.fp_defer()  # NumPy steps warn only if the call "
                  "does not rerun with NumPy", step.node.origin)
        self.emit("try:", step.node.origin)
        self.nesting += 1
        self.fp_deferring = True

    def rerun(self, origin: str | None, depth: int, why: str = "") -> None:
        """``return ___fallback.eager(...)``; under ``fp_defer`` the caller's errstate first
        (the return value is computed before ``finally`` runs)."""
        if self.fp_deferring:
            self.emit(f"{FP_TOKEN} = ___rt.fp_undefer({FP_TOKEN})", origin, depth)
        params = ", ".join(self.var[n] for n in self.plan.graph.placeholders)
        self.emit(f"return ___fallback.eager({params}){why}", origin, depth)

    def end_deferral(self) -> None:
        """The caller's errstate again (after the deferred stretch, or before ``return``)."""
        self.nesting -= 1
        self.emit("finally:")
        self.emit(f"___rt.fp_undefer({FP_TOKEN})", None, 3)
        self.fp_deferring = False

    def after_numpy_step(self, node: Node) -> None:
        """After a NumPy step that may warn: under ``fp_defer`` a flag that warns reruns the
        call with NumPy now; else a later rerun would repeat its warnings."""
        kind = fp_step_kind(node)
        if kind == "none":
            return
        if kind == "flags" and self.fp_deferring:
            self.emit(f"if ___rt.fp_any() and {self.fp_raised_test()}:", node.origin)
            self.rerun(node.origin, 3, "  # NumPy warns in the plain call's order")
            return
        self.replays_warnings = True

    def check_fp(self, kernel: KernelPlan, code: KernelCode, origin: str | None, depth: int = 2,
                 snapshot: tuple[str, str, int] | None = None) -> None:
        """After a kernel: a floating-point flag NumPy would warn or raise about (``np.seterr``)
        reruns the call with NumPy, which warns and raises as the plain call does. After a
        write to an input it cannot: the kernel's NumPy twin runs on the kernel's operands
        (``runtime.fp_rerun``; ``snapshot``: the written memory and its copy from before, where
        the kernel overwrote operands it read), so NumPy warns per op as the plain call."""
        self.fp_dirty = False
        self.emit(f"if ___rt.fp_any() and {self.fp_raised_test()}:", origin, depth)
        if self.fp_can_rerun:
            self.rerun(origin, depth + 1)
            return
        self.fp_reported = True
        ops = list(dict.fromkeys(n.target for n in kernel.nodes))
        single = single_ufunc(kernel)
        place = next((literal_place(n.place) for n in kernel.nodes if n.place is not None), None)
        where = "" if place is None else f", {place!r}"  # the user's line warns (X3)
        if single is not None:  # one ufunc: its flags are that call's, reported as NumPy does
            self.emit(f"___rt.fp_report([{single!r}]{where})  # one ufunc: NumPy's warnings",
                      origin, depth + 1)
            return
        if code.plan is None or self.reused_buffers(kernel, code):  # no twin, or inputs gone
            self.emit(f"___rt.fp_report({ops!r}{where})", origin, depth + 1)
            return
        inputs = "".join(f"{self.var[n]}, " for n in code.inputs)
        tail = f", {snapshot[0]}, {snapshot[1]}" if snapshot else ""
        self.emit(f"___rt.fp_rerun(___fallback.localize, {code.name!r}, ({inputs.rstrip(' ')}), "
                  f"{ops!r}{tail})", origin, depth + 1)

    def overwrites_operand(self, code: KernelCode, dst: Node, safe: set[Node]) -> bool:
        """Whether a kernel storing into ``dst`` reads memory of ``dst`` (an operand sharing its
        storage root, other than those in ``safe``), which its store then overwrites."""
        theirs = self.plan.roots.get(dst, frozenset({dst}))
        return any(n not in safe and (n is dst or self.plan.roots.get(n, frozenset()) & theirs)
                   for n in code.inputs
                   if n.meta is not None and n.meta.shape != () and not n.meta.scalar)

    def masked_snapshot(self, kernel: KernelPlan,
                        origin: str | None) -> tuple[str, str, int] | None:
        """Before a masked store that may overwrite its own operands (it gathers ``dst``, or an
        operand may share memory with ``dst``): a copy of ``dst`` while some FP mode warns."""
        masked = kernel.masked
        code = self.codes[kernel.index]
        dst = masked.dst
        gathered = set(masked.gathers.values())
        static = dst in gathered or self.overwrites_operand(code, dst, {dst})
        runtime = [n for n in code.inputs if n is not dst and not static
                   and n.op == "placeholder" and dst.op == "placeholder"
                   and n.meta is not None and n.meta.shape != () and not n.meta.scalar]
        if not static and not runtime:
            return None
        name = self.value(dst)
        tests = " or ".join(f"np.may_share_memory({name}, {self.var[n]})" for n in runtime)
        when = f"({tests}) and " if len(runtime) > 1 else f"{tests} and " if runtime else ""
        return self.snapshot(name, when, dst.name, origin, 2)

    def snapshot(self, array: str, when: str, hint: str, origin: str | None,
                 depth: int, always: bool = False) -> tuple[str, str, int]:
        """Emit a pooled copy of ``array``, taken while some FP mode warns (else the name holds
        None; ``always``: taken on every call); returns (array, copy, pool slot)."""
        self.snapshots += 1
        saved, slot = self.names(f"saved_{hint}"), -self.snapshots
        if always:
            self.emit(f"{saved} = ___rt.snapshot(___pool, {slot}, {array})  # what the kernel "
                      "overwrites, for NumPy's warnings and signed zeros", origin, depth)
            return array, saved, slot
        self.emit(f"{saved} = ___rt.snapshot(___pool, {slot}, {array}) if {when}"
                  "___rt.fp_watch() else None  # what the kernel overwrites, for NumPy's "
                  "warnings", origin, depth)
        return array, saved, slot

    def give_snapshot(self, snapshot: tuple[str, str, int] | None, origin: str | None,
                      depth: int = 2) -> None:
        """The snapshot's buffer back to the pool (after the FP check)."""
        if snapshot is not None:
            _, saved, slot = snapshot
            self.emit(f"if {saved} is not None:", origin, depth)
            self.emit(f"___pool.give({slot}, {saved})", origin, depth + 1)

    def allocate(self, kernel: KernelPlan, node: Node, dims: list[str], name: str,
                 origin: str | None, depth: int = 2, reuse: dict | None = None) -> None:
        if reuse and node in reuse:  # C order: the BLAS result's own layout
            self.emit(f"{name} = {self.var[reuse[node]]}  # in place: a BLAS result read only "
                      "here, element by element", origin, depth)
            return
        shape = self.shape_expr(kernel, node, dims)
        order = ', order="F"' if _order_arg(node) and node.kwargs.get("order") == "F" else ""
        if node in self.pooled and not order and name == self.var.get(node):
            if node not in self.pool_taken:
                self.pool_taken.append(node)
            self.emit(f"{name} = ___pool.take({self.pooled[node]}, {shape}, "
                      f"{type_name(node.meta.dtype)})  # a temporary: reused across calls",
                      origin, depth)
            return
        self.emit(f"{name} = ___empty({empty_shape(shape, len(node.meta.shape))}, "
                  f"{self.dtype_const(node.meta.dtype)}{order})", origin, depth)

    def dtype_const(self, dtype: Any) -> str:
        """A module-level ``np.dtype`` constant for ``dtype`` (``np.empty`` converts a scalar
        type to its dtype on every call), or the scalar type where the name is taken."""
        dt = np.dtype(dtype)
        name = f"___dtype_{dt.name}"
        if not dt.isbuiltin or not name.isidentifier() or (
                name not in self.dtypes and name in self.names.used):
            return type_name(dt)
        self.names.used.add(name)
        self.dtypes[name] = dt.name
        return name

    def check_python_ints(self, code: KernelCode, origin: str | None, depth: int) -> None:
        """A Python int operand reaches the kernel as int64 and is cast to the dtype of the ops
        it meets: outside those ranges NumPy decides (an OverflowError, a float for float
        arrays), so the graph runs with NumPy, or raises when an input was already written."""
        for node in code.inputs:
            if node.meta is None or node.meta.pytype is not int:
                continue
            name = self.var[node]
            low, high = python_int_bounds(node)
            self.emit(f"if not {low} <= {name} <= {high}:", origin, depth)
            if self.can_rerun:
                self.rerun(origin, depth + 1)
            else:
                self.emit('raise OverflowError("a Python int outside 64 bits reached a compiled '
                          'kernel after the graph had written to its inputs")', origin, depth + 1)

    def call(self, kernel: KernelPlan, code: KernelCode, dims: list[str], origin: str | None,
             depth: int, stored_as: str | None = None) -> None:
        self.check_python_ints(code, origin, depth)
        args = [self.var[n] for n in code.inputs]
        args += [stored_as if (n is kernel.stored and stored_as) else self.var[n]
                 for n in code.buffers]
        if stored_as is None and transposable(kernel, code):
            wide = [self.var[n] for n in [*code.inputs, *code.buffers]
                    if n.meta is not None and n.meta.ndim]
            test = " and ".join(f"not {a}.flags.c_contiguous and {a}.flags.f_contiguous"
                                for a in wide)
            self.emit(f"if {test}:  # Fortran-ordered: the kernel on the transposes, in memory "
                      "order", origin, depth)
            self.kernel_call(kernel, code, dims, origin, depth + 1,
                             [f"{a}.T" if a in wide else a for a in args])
            self.emit("else:", origin, depth)
            depth += 1
        self.kernel_call(kernel, code, dims, origin, depth, args, stored_as)

    def kernel_call(self, kernel: KernelPlan, code: KernelCode, dims: list[str],
                    origin: str | None, depth: int, args: list[str],
                    stored_as: str | None = None) -> None:
        """The kernel's call on ``args``: its ``prange`` twin above the size threshold."""
        arglist = ", ".join(args)
        target = ", ".join(self.var[n] for n in code.returns)
        assign = f"{target} = " if target else ""
        if code.parallel_name is None or self.static_serial(kernel):
            self.emit(f"{assign}{code.name}({arglist})", origin, depth)
            return
        why = "  # serial below this size beside BLAS" if self.beside_blas else ""
        self.emit(f"if {self.size_expr(kernel, code, dims, stored_as)} >= {self.threshold}:{why}",
                  origin, depth)
        threads = checks_fp(kernel)  # FP flags are per thread: the workers' are gathered
        if threads:
            self.emit("___rt.fp_clear_threads()", origin, depth + 1)
        self.emit("try:", None, depth + 1)
        self.emit(f"{assign}{code.parallel_name}({arglist})", origin, depth + 2)
        self.emit("except Exception as ___error:  # prange twin not compilable: the serial one",
                  None, depth + 1)
        self.emit(f"if not ___fallback.use_twin(___error, globals(), {code.parallel_name!r}, "
                  f"{code.name!r}):", None, depth + 2)
        self.emit("raise", None, depth + 3)
        self.emit(f"{assign}{code.name}({arglist})", origin, depth + 2)
        if threads:
            self.emit("___rt.fp_gather_threads()", origin, depth + 1)
        self.emit("else:", origin, depth)
        self.emit(f"{assign}{code.name}({arglist})", origin, depth + 1)

    def fused_store(self, kernel: KernelPlan, code: KernelCode, dims: list[str],
                    origin: str | None, checked: bool) -> None:
        mutation = kernel.store_into
        dst = mutation.args[0]
        self.note_effect(mutation)
        view = self.names(f"view_{kernel.stored.name}")
        if stores_index(mutation):
            self.emit(f"{view} = {self.value(dst)}[{self.index(mutation.args[1])}]", mutation.origin)
        else:
            self.emit(f"{view} = {self.value(dst)}", mutation.origin)
        checks = [f"{view}.flags.writeable"]
        if not static_sizes(dst):  # symbolic sizes: the view must have the kernel's shape
            checks.append(f"{view}.shape == ({''.join(d + ', ' for d in dims)})")
        distinct = set()  # operands the direct store is tested not to overlap
        for node in code.inputs:
            if self.may_overlap(kernel, node, dst, mutation):
                checks.append(f"not np.may_share_memory({view}, {self.var[node]})")
                distinct.add(node)
        zeros = watches_zeros(kernel)
        if zeros:
            self.emit(f"{ZERO_COUNT} = ___rt.ZEROS.value", origin)
        self.emit(f"if {' and '.join(checks)}:", mutation.origin)
        snapshot = None
        overwrites = self.overwrites_operand(code, dst, distinct)
        if zeros and overwrites:  # a zero max/min: the twin needs what the kernel overwrote
            snapshot = self.snapshot(view, "", kernel.stored.name, mutation.origin, 3, True)
        elif checked and not self.fp_can_rerun and single_ufunc(kernel) is None and overwrites:
            snapshot = self.snapshot(view, "", kernel.stored.name, mutation.origin, 3)
        self.call(kernel, code, dims, origin, 3, stored_as=view)
        if checked:
            self.check_fp(kernel, code, origin, 3, snapshot)
        if zeros:
            self.zero_check(kernel, code, origin, 3, saved=snapshot[:2] if snapshot else None)
        self.give_snapshot(snapshot, mutation.origin, 3)
        self.emit("else:", mutation.origin)
        temp = self.names(f"tmp_{kernel.stored.name}")
        self.allocate(kernel, kernel.stored, dims, temp, kernel.stored.origin, 3)
        self.call(kernel, code, dims, origin, 3, stored_as=temp)
        if checked:  # before the store, as NumPy: the operands are still intact
            self.check_fp(kernel, code, origin, 3)
        if zeros:
            self.zero_check(kernel, code, origin, 3, temp=temp)
        if stores_index(mutation):
            self.emit(f"{self.value(dst)}[{self.index(mutation.args[1])}] = {temp}",
                      mutation.origin, 3)
        else:
            self.emit(f"{self.ops[_op_key(mutation)]}({self.value(dst)}, {temp})", mutation.origin,
                      3)

    def may_overlap(self, kernel: KernelPlan, node: Node, dst: Node, mutation: Node) -> bool:
        """Could input ``node`` share memory with the mutation's destination at run time?"""
        return store_may_overlap(self.plan, kernel, node, dst, mutation)

    # -- shapes ---------------------------------------------------------------------------

    def dim_expr(self, kernel: KernelPlan, d: int) -> str:
        source = kernel.dims[d]
        if isinstance(source, tuple):
            node, axis = source
            return f"{self.var[node]}.shape[{axis}]"
        return str(int(source))

    def shape_expr(self, kernel: KernelPlan, node: Node, dims: list[str]) -> str:
        shape = tuple(node.meta.shape)
        for value in kernel.inputs:
            if value.meta.shape == shape and shape == kernel.shape and value.meta.shape != ():
                return f"{self.var[value]}.shape"
        parts = []
        for j, size in enumerate(shape):
            d = _output_dim(kernel, node, j)
            parts.append("1" if size == 1 or d is None else dims[d])
        return f"({', '.join(parts)},)" if len(parts) == 1 else f"({', '.join(parts)})"

    def static_serial(self, kernel: KernelPlan) -> bool:
        """A static top-level kernel below ``config.parallel_threshold``: no size test per call
        (the guard checked the sizes; the kernel still reads them at run time, so other sizes, which
        only ``skip_guard_eval_unsafe`` lets in, run serially and right)."""
        shape = tuple(kernel.shape)
        if self.fn_name != "forward" or not all(type(d) is int for d in shape):
            return False
        size = 1
        for d in shape:
            size *= d
        return size < self.serial_below

    def size_expr(self, kernel: KernelPlan, code: KernelCode, dims: list[str],
                  stored_as: str | None) -> str:
        for node in code.buffers:
            if tuple(node.meta.shape) == kernel.shape:
                return f"{stored_as if node is kernel.stored and stored_as else self.var[node]}.size"
        for node in code.inputs:
            if tuple(node.meta.shape) == kernel.shape:
                return f"{self.var[node]}.size"
        parts = [dims[d] for d in range(len(kernel.shape)) if kernel.shape[d] != 1]
        return " * ".join(parts) if parts else "1"

    # -- the module -----------------------------------------------------------------------

    def build(self) -> str:
        graph = self.plan.graph
        for index, step in enumerate(self.plan.steps):
            self.defer_numpy_warnings(index, step)
            if isinstance(step, KernelStep):
                self.kernel_step(step.kernel)
            else:
                self.node_step(step.node)
                self.after_numpy_step(step.node)
        if self.fp_deferring:
            self.end_deferral()
        if self.fp_reported:  # np.errstate(...="raise"): NumPy raises before the writes
            params = ", ".join(self.var[n] for n in graph.placeholders)
            self.lines[:0] = [f"        if ___rt.strict() if {STRICT} is None else {STRICT}:",
                              f"            return ___fallback.eager({params})"]
            if self.first_effect is not None:
                self.first_effect += 2
        outputs = graph.output_node.args[0]
        values = [self.value(v) for v in outputs]
        for node in self.pool_taken:  # after its last use; a call that raises drops it
            self.emit(f"___pool.give({self.pooled[node]}, {self.var[node]})", node.origin)
        self.emit(f"return ({', '.join(values)}{',' if len(values) == 1 else ''})")
        temporaries = [self.var[n] for n in self.var if n.op != "placeholder"
                       and n in self.plan.roots.get(n, {n})]  # may own memory: not a view
        self.lines, moved = release_dead(self.lines, temporaries, 8)  # memory as NumPy reuses it
        if self.first_effect is not None:
            self.first_effect = moved[self.first_effect]
        return self.module_source()

    def module_source(self) -> str:
        params = ", ".join(self.var[n] for n in self.plan.graph.placeholders)
        head = ['"""output_code: the wrapper that runs one graph (astcompiler numba backend).',
                "", "Generated; every line names the source line it comes from.", '"""', "",
                "import numpy as np", ""]
        if self.pool_taken or any("___rt." in line for line in self.lines):
            head.insert(-1, "import astcompiler.lower.numba.runtime as ___rt")
        if self.ops:
            head.insert(-1, "from astcompiler.ops import REGISTRY")
        for index, code in sorted(self.codes.items()):
            names = ", ".join(n for n in (code.name, code.parallel_name) if n)
            head.append(f"from {self.modules[index]} import {names}")
        if self.ops:
            head.append("")
            for target, name in self.ops.items():
                if target.startswith("python:"):  # Python's operator on Python numbers
                    head.append(f"{name} = PYTHON_OPS[{target[7:]!r}]")
                elif target.startswith("numba:"):  # a numba loop with NumPy's bits
                    head.append(f"{name} = SCANS[{target[6:]!r}]")
                elif target.startswith("operator:"):  # the Python operator the user wrote
                    head.append(f"{name} = REGISTRY.ops[{target[9:]!r}].python")
                else:
                    head.append(f"{name} = REGISTRY.ops[{target!r}].impl")
            if any(t.startswith("python:") for t in self.ops):
                head.insert(head.index("from astcompiler.ops import REGISTRY") + 1,
                            "from astcompiler.ops.python_scalars import PYTHON_OPS")
            if any(t.startswith("numba:") for t in self.ops):
                head.insert(head.index("from astcompiler.ops import REGISTRY") + 1,
                            "from astcompiler.lower.numba.scans import SCANS")
        if self.places:  # NumPy steps that may warn run in frames at the user's lines
            head += ["", "from astcompiler.lower.places import at_line as ___at_line"]
            head += [f"{name} = ___at_line({place!r})" for place, name in self.places.items()]
        if any("___empty(" in line for line in self.lines):  # bound once: cheaper per call
            head += ["", "___empty = np.empty"]
            head += [f"{name} = np.dtype({dtype!r})" for name, dtype in self.dtypes.items()]
        consts = ", ".join(self.const_names + ["___fallback"])
        # np.errstate read once per call; a host loop reads it once for all its iterations
        strict = f"{', ' if params else ''}{STRICT}=None" if self.fp_reported else ""
        hoisted = [f"    {self.fn_name}.{TAKES_STRICT} = True  # host loops pass {STRICT}"
                   ] if self.fp_reported else []
        call = f"({params},)" if len(self.plan.graph.placeholders) == 1 else f"({params})"
        body = ["", "", f"def make_forward({consts}):",
                f'    """Bind {len(self.consts)} constant(s) of the graph and the eager fallback; '
                'returns the forward function."""',
                f"    def {self.fn_name}({params}{strict}):",
                "        if ___fallback.slow:  # the first call saves the inputs it writes to; "
                "after a numba failure: eager",
                f"            return ___fallback.slow_call({self.fn_name}, {call})",
                "        try:"]
        if self.pool_taken or self.snapshots:  # the pool lives as long as this forward function
            body.insert(4, "    ___pool = ___rt.BufferPool()  # temporaries between kernels")
        lines = ["    " + line for line in self.lines]
        if self.first_effect is not None:  # its 1-based line number in the module
            self.effect_line = "\n".join(head + body + lines[:self.first_effect]).count("\n") + 2
        tail = ["        except Exception as ___error:  # numba types each kernel at its first call",
                "            if not ___fallback.recover(___error):",
                "                raise",
                f"        return ___fallback.eager({params})"]
        # its body for run/dispatch.py to paste where the run calls it (``forward.paste``)
        self.paste = None if self.fp_reported or self.first_effect is not None \
            else paste_template([self.var[n] for n in self.plan.graph.placeholders],
                                [line[8:] for line in body[-3:] + lines + tail])
        tail += [*hoisted, f"    return {self.fn_name}", ""]
        return "\n".join(head + body + lines + tail)


_UNPASTABLE = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
               ast.Lambda, ast.ClassDef, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom,
               ast.Await, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
_FRAME_CALLS = ("globals", "locals", "vars", "eval", "exec")


def paste_template(params: list[str], lines: list[str]) -> PasteTemplate | None:
    """The forward body ``lines`` (dedented to 0) as a ``PasteTemplate``, or None where pasting
    it into a caller could change what it does: loops, nested functions, frame introspection, a
    ``fp_report`` without its place (its warning is counted in frames), a return over several
    lines, or a body that could end without ``return`` (``while True:`` around it would loop)."""
    try:
        tree = parse_python("\n".join(lines))
    except SyntaxError:
        return None
    walked = list(ast.walk(tree))
    if not tree.body or not isinstance(tree.body[-1], ast.Return) \
            or any(isinstance(n, _UNPASTABLE) for n in walked):
        return None
    for node in walked:
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Name) and func.id in _FRAME_CALLS or isinstance(
                func, ast.Attribute) and func.attr == "fp_report" \
                and len(node.args) + len(node.keywords) < 2:
            return None
    returns = []
    for node in walked:
        if not isinstance(node, ast.Return):
            continue
        row = node.lineno - 1
        if node.end_lineno != node.lineno or not lines[row].lstrip().startswith("return ") \
                or node.value is None:
            return None
        value = ast.get_source_segment(lines[row], _on_line_one(node.value))
        items = tuple(ast.unparse(e) for e in node.value.elts) \
            if isinstance(node.value, ast.Tuple) else None
        if value is None or not lines[row].lstrip().startswith(f"return {value}"):
            return None
        returns.append((row, value, items))
    names = {n.id for n in walked if isinstance(n, ast.Name)}
    names |= {n.name for n in walked if isinstance(n, ast.ExceptHandler) and n.name}
    stored = {n.id for n in walked if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return PasteTemplate(tuple(params), tuple(lines), tuple(sorted(returns)), frozenset(names),
                         frozenset(stored & set(params)))


def _on_line_one(node: ast.expr) -> ast.expr:
    """``node`` moved to line 1 (its source segment read from its own line)."""
    moved = ast.Constant(None)
    moved.lineno = moved.end_lineno = 1
    moved.col_offset, moved.end_col_offset = node.col_offset, node.end_col_offset
    return moved


def empty_shape(shape: str, ndim: int) -> str:
    """``np.empty``'s first argument for the shape expression ``shape`` of ``ndim`` dims: a
    1-d shape as an int (``len(x)`` for ``x.shape``, about 40 ns less per call than a tuple)."""
    if ndim != 1:
        return shape
    if shape.endswith(".shape") and shape[:-6].isidentifier():
        return f"len({shape[:-6]})"
    if shape.startswith("(") and shape.endswith(",)"):
        return shape[1:-2]
    return shape


def in_place_buffers(kernel: KernelPlan, code: KernelCode) -> dict[Node, Node]:
    """Output buffers of a pointwise kernel that may be the memory of one of its inputs: a
    BLAS/LAPACK result (a fresh C-ordered array; ``OpDef.threaded``) of the buffer's shape and
    dtype that nothing but this kernel reads. Each element is then read in its own iteration
    before that iteration stores it, so no allocation (and no page faults) for the buffer."""
    if kernel.style != "pointwise" or kernel.store_into is not None or kernel.masked is not None:
        return {}
    members = set(kernel.nodes)
    candidates = [n for n in code.inputs if n.op == "call" and n.target in REGISTRY.ops
                  and REGISTRY[n.target].threaded and n.meta is not None and not n.meta.scalar
                  and REGISTRY[n.target].returns_input is None
                  and n.meta.ndim >= 1 and tuple(n.meta.shape) == tuple(kernel.shape)
                  and n.users and all(u in members for u in n.users)
                  and n not in kernel.gathered]  # (a gather reads any element at any time)
    reuse: dict[Node, Node] = {}
    for node in code.buffers:
        if node is kernel.stored or node.meta is None or node.meta.scalar:
            continue
        for src in candidates:
            if src not in reuse.values() and tuple(src.meta.shape) == tuple(node.meta.shape) \
                    and np.dtype(src.meta.dtype) == np.dtype(node.meta.dtype):
                reuse[node] = src
                break
    return reuse


def pooled_buffers(plan: Plan, codes: dict[int, KernelCode]) -> dict[Node, int]:
    """Kernel output buffers that never leave a call, each with a pool slot: not a graph
    output nor viewed by one, read only by kernels and by NumPy ops whose results are fresh
    arrays (pointwise and reduction ops without ``out=``), never written after the kernel. Such a
    buffer is dead when the call returns, so the next call may reuse it (``runtime.BufferPool``)."""
    graph = plan.graph
    outputs = [v for v in graph.output_node.args[0] if isinstance(v, Node)]
    escaping: set[Node] = set()
    for value in outputs:
        escaping |= set(plan.roots.get(value, frozenset({value})))
    pooled: dict[Node, int] = {}
    for kernel in plan.kernels:
        code = codes.get(kernel.index)
        if code is None or kernel.masked is not None:
            continue
        for node in code.buffers:
            if node is kernel.stored or node in escaping or not node.users \
                    or node.meta is None or node.meta.scalar or not node.meta.shape:
                continue
            if all(_fresh_reader(user, plan, kernel) for user in node.users):
                pooled[node] = len(pooled)
    return pooled


def _fresh_reader(user: Node, plan: Plan, producer: KernelPlan) -> bool:
    """``user`` reads a value without keeping it: another kernel's member, or a pure NumPy op
    whose result is a fresh array."""
    if user.op != "call" or user.target not in REGISTRY.ops:
        return False
    if any(user in k.rules for k in plan.kernels if k is not producer):
        return True
    op = REGISTRY[user.target]
    if op.threaded and op.returns_input is None and not op.side_effects and not user.kwargs:
        return True  # a BLAS/LAPACK call: its results are fresh arrays (see in_place_buffers)
    return op.kind in ("pointwise", "reduction") and not op.side_effects \
        and op.returns_input is None and "out" not in user.kwargs \
        and plan.roots.get(user) == frozenset({user})


def calls_threaded(graph: Graph) -> bool:
    """``graph`` (or a region's subgraph in it) calls an op with a thread pool of its own."""
    for node in graph.nodes:
        if node.op == "call" and node.target in REGISTRY.ops and REGISTRY[node.target].threaded:
            return True
        if node.op == "region" and any(calls_threaded(g) for g in node.info.subgraphs.values()):
            return True
    return False


def kernel_threshold(graph: Graph, threshold: int) -> int:
    """Iteration-space size from which a kernel runs its ``prange`` twin. Beside BLAS/LAPACK
    calls (``OpDef.threaded``) a 2-core machine has no core to spare: numba's OpenMP workers
    would compete with BLAS's threads (and spin after their region), so only kernels big enough
    to amortize that (``config.blas_parallel_threshold``) run in parallel there."""
    if calls_threaded(graph):
        return max(threshold, int(config.blas_parallel_threshold))
    return threshold


def _origins(kernel: KernelPlan) -> str | None:
    seen: list[str] = []
    for node in kernel.nodes:
        if node.origin and node.origin not in seen:
            seen.append(node.origin)
    return ", ".join(seen) if seen else None


def _output_dim(kernel: KernelPlan, node: Node, j: int) -> int | None:
    """Which dim of F the ``j``-th dim of an output buffer spans."""
    ndim = len(kernel.shape)
    if isinstance(kernel.rules[node], ReductionRule) and kernel.style == "columns":
        kept = kernel.kept_axes
        if len(node.meta.shape) == ndim:
            return j
        return kept[j] if j < len(kept) else None
    return j if j < ndim else None


def _holds_node(value: Any) -> bool:
    if isinstance(value, Node):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_node(v) for v in value)


def single_ufunc(kernel: KernelPlan) -> str | None:
    """The NumPy name of a kernel's only op when that op is one plain ufunc call (then every FP
    flag the kernel raises is that call's, and NumPy's warnings follow from the flags alone:
    the kernel needs no copy of the operands it overwrites), else None."""
    if len(kernel.nodes) != 1 or kernel.nodes[0].kwargs:
        return None
    op = REGISTRY.ops.get(kernel.nodes[0].target)
    impl = getattr(op, "impl", None)
    return impl.__name__ if isinstance(impl, np.ufunc) else None


def watches_zeros(kernel: KernelPlan) -> bool:
    """Whether a kernel computes a float max/min reduction whose zero result reruns the call
    with NumPy (the op table's ``zero_rerun``; the kernel counts it: ``runtime.zero_watch``),
    or a mean/var/std whose empty slices do (``empty_rerun``: ``runtime.empty_check``)."""
    return any(numpy_rerun(node) for node in kernel.nodes)


def checks_fp(kernel: KernelPlan) -> bool:
    """Whether the wrapper tests a kernel's FP flags: it may raise some (``_floating``) and
    one of its ops, or its store, is one NumPy may warn about (``may_set_fp_flags``). A kernel
    of comparisons, max/min, selections and the like is not tested: vectorized ordered
    compares raise the invalid flag on NaN lanes, while NumPy's comparisons never warn (X8)."""
    if not _floating(kernel):
        return False
    if kernel.store_into is not None or kernel.masked is not None:
        return True  # (a store may cast: "overflow encountered in cast")
    return any(may_set_fp_flags(node) for node in kernel.nodes)


_COMPARING = frozenset({np.maximum, np.minimum, np.fmax, np.fmin, np.sign})


def _compares_floats(node: Node) -> bool:
    """An op whose kernel code compares floats (a comparison, max/min, clip, sign, arg/max
    reductions), which raises the invalid flag on a NaN where NumPy's never warns."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    if op is None:
        return False
    reduction = op.reduction
    return bool(op.comparison or op.ufunc in _COMPARING or op.aliases and np.clip in op.aliases
                or reduction is not None and (reduction.arg or reduction.propagate_nan))


def fp_step_kind(node: Node) -> str:
    """How a NumPy step of the wrapper may warn: "none"; "flags" (only as NumPy reports the FP
    flags after a ufunc loop or a NumPy scalar op, which ``fp_defer`` defers); "other" (a
    NumPy function or numba scan that may also warn by itself, e.g. "Mean of empty slice")."""
    if node.op != "call" or not may_set_fp_flags(node):
        return "none"
    key = _op_key(node)
    if key.startswith("python:"):  # Python numbers raise instead
        return "none"
    if key.startswith("operator:"):
        return "flags"
    op = REGISTRY.ops.get(node.target)
    if key == node.target and op is not None and (
            isinstance(op.impl, np.ufunc) or numba_rule(node.target).flags_only):
        return "flags"
    return "other"


def _ends_deferral(step: Any) -> bool:
    """A step after which the call cannot rerun from the start: it writes memory, runs a region,
    or has side effects (or is a NumPy step that may warn by itself)."""
    if isinstance(step, KernelStep):
        return step.kernel.store_into is not None or step.kernel.masked is not None
    node = step.node
    if node.op == "region" or "out" in node.kwargs or stores_index(node):
        return True
    if node.op != "call":
        return False
    op = REGISTRY.ops.get(node.target)
    return op is None or op.side_effects or op.kind == "mutation" or fp_step_kind(node) == "other"


def _rerun_follows(steps: list) -> bool:
    """Whether a kernel that checks its flags comes before the next step that ends deferral."""
    for step in steps:
        if _ends_deferral(step):
            return False
        if isinstance(step, KernelStep) and checks_fp(step.kernel):
            return True
    return False


def _floating(kernel: KernelPlan) -> bool:
    """Whether a kernel may raise the floating-point flags NumPy warns about: it computes with
    floats, or divides integers (NumPy raises the flags for ``x // 0`` and ``MIN // -1``)."""
    values = list(kernel.nodes) + list(kernel.inputs)
    return any(v.meta is not None and np.dtype(v.meta.dtype).kind in "fc" for v in values) \
        or any(raises_flags(key) for rule in kernel.rules.values() for key in rule.helpers)


def _order_arg(node: Node) -> bool:
    """An op whose ``order=`` picks its result's layout (``OpDef.order_arg``)."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op is not None and op.order_arg
