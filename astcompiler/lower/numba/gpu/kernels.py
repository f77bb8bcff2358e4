"""CUDA code generation: each ``KernelPlan`` becomes one ``numba.cuda.jit`` kernel.

The element expressions are the CPU target's (``cpu.KernelEmitter``: the op table's scalar
rules, broadcasting as index patterns); only the loops differ:

* pointwise: one thread handles the flat indices ``cuda.grid(1), + cuda.gridsize(1), ...`` of
  the iteration space and unravels each into ``i0, i1, ...`` (C order);
* whole-array reductions: grid-stride partial accumulators, a shared-memory tree per block,
  a second one-block pass (``ReductionEmitter``); arg-reductions merge (value, index) pairs
  (``take_other``);
* rows: one block per row, a tree merge per sweep (softmax, layer norm, row var/argmax);
* other reductions (columns, any axes, ``prod``): one thread per kept index, the CPU kernel's
  sweeps with scalar accumulators (``SerialEmitter``).

Sizes are read from the arguments' ``.shape`` at run time. Kernels reach the CUDA API only
through the module global ``cuda`` (the simulator swaps exactly that). Float ops set a device
FP flag on NaN or infinity from operands that were not (``CudaEmitter.compute``).

``cuda_accepts`` is the target's veto on a node: rules with njit helpers (error flags, integer
division), integer ``//``/``%`` and complex values run as NumPy steps on the host; NumPy's
integer scalar math (its helpers wrap and raise the overflow flag) is the plain ufunc on the GPU
with the device FP flag (``scalar_math``).
The CPU target's vectorized math (``vecmath``: branch-free polynomials for SIMD) is spelled back
as the ufunc (``np.sin``): on the GPU that is libdevice's function (``gpu_rule``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....graph import Node
from ..cpu import KernelEmitter, rule_compiles
from ..optable import zero_rerun
from ..plan import KernelPlan, Plan, ReductionRule, ScalarRule
from ....ops.registry import REGISTRY
from ..scalar import helper_call, type_name
from ..vecmath import PREFIX, call_name


class _Lines:
    """The writer interface ``KernelEmitter`` emits into."""

    def __init__(self, depth: int = 1) -> None:
        self.lines: list[str] = []
        self.depth = depth

    def __call__(self, text: str, origin: str | None = None) -> None:
        self.lines.append("    " * self.depth + text + (f"  # {origin}" if origin else ""))

    def open(self, text: str) -> None:
        self(text)
        self.depth += 1

    def close(self, levels: int = 1) -> None:
        self.depth -= levels


@dataclass
class CudaKernelCode:
    """A generated CUDA kernel module and how the wrapper launches it. ``source`` is empty for a
    kernel this target does not write for the GPU (it runs as NumPy on the host)."""

    name: str
    source: str
    inputs: list[Node]
    buffers: list[Node]  # outputs the launcher allocates on the device, after the inputs
    plan: KernelPlan
    returns: list[Node] = dataclasses.field(default_factory=list)  # 0-d results (host scalars)
    threads: int = 0  # a reduction's block size (its shared arrays' size); 0: any
    merge_name: str = ""  # a reduction's second pass (one block merging the partials)
    rows: bool = False  # a row kernel: one block per row
    serial: bool = False  # one thread per kept index (``SerialEmitter``)
    flagged: bool = False  # the kernel's first parameter is the FP flag array (``raises_fp``)


def gpu_kernel(kernel: KernelPlan) -> bool:
    """Kernels this target writes for the GPU: plain pointwise loops (no masked store),
    whole-array and row tree reductions, and the serial reductions (``serial_reduction``)."""
    if kernel.masked is not None or not kernel.shape:
        return False
    return kernel.style == "pointwise" or whole_reduction(kernel) or row_reduction(kernel) \
        or serial_reduction(kernel)


def whole_reduction(kernel: KernelPlan) -> bool:
    """A reduction over every axis with one sweep, merge-able accumulators (arg-reductions
    merge pairs), NumPy-scalar results, scalar work after it (``x.sum() < 50``; in the second
    pass): block tree reductions in shared memory plus a second pass."""
    if kernel.style != "rows" or kernel.outer != 0 or len(kernel.sweeps) != 1:
        return False
    sweep = kernel.sweeps[0]
    return _tree_reductions(kernel) and all(n.meta.shape == () for n in sweep.after) \
        and all(n.meta.shape == () and n.meta.scalar for n in sweep.reductions)


def row_reduction(kernel: KernelPlan) -> bool:
    """Reductions over the trailing axes (softmax, layer norm): one block per row (a grid-stride
    loop over rows), the block's threads striding over the row in each sweep, a shared-memory
    tree merge after it; stashes only into output buffers (no row temporaries)."""
    return kernel.style == "rows" and kernel.outer > 0 and _tree_reductions(kernel) \
        and all(buffer is not None for buffer in kernel.stash.values())


def scalar_math(node: Node) -> bool:
    """An operator on NumPy integer scalars (``OpDef.scalar_overflow``: NumPy's scalar math
    warns where it wraps; arrays wrap silently): the GPU wraps too, and sets the FP flag where
    NumPy's scalar math would warn (``CudaEmitter.overflow_check``)."""
    meta = node.meta
    return bool(node.operator and meta is not None and meta.scalar and meta.shape == ()
                and np.dtype(meta.dtype).kind in "iu" and node.target in REGISTRY.ops
                and REGISTRY[node.target].scalar_overflow)


def raises_fp(node: Node, rule: Any) -> bool:
    """A member whose result may come with an FP error NumPy reports: any float op but a copy
    in the same dtype (a narrowing cast may overflow), casts of floats to integers (NaN,
    infinity, out of range: "invalid value encountered in cast"), and NumPy's integer scalar
    math (``scalar_math``). The test in the kernel is on values, so a false candidate costs
    nothing but it."""
    if not isinstance(rule, ScalarRule) or node.meta is None:
        return False
    if scalar_math(node):
        return True
    kind = np.dtype(node.meta.dtype).kind
    if rule.template != "{0}":
        return kind == "f"
    source = _source_dtype(node)
    if source is None or source.kind != "f":
        return False
    return kind in "iu" or (kind == "f" and np.dtype(node.meta.dtype).itemsize
                            < source.itemsize)


def accumulates(rule: Any) -> bool:
    """A float reduction whose accumulator computes (sums, products, means, variances), so it
    may overflow or make NaN where NumPy warns; not arg-reductions, nor the comparisons that
    track NaN beside the accumulator (``nan_flag``: max, min)."""
    return isinstance(rule, ReductionRule) and not rule.arg and not rule.nan_flag \
        and np.dtype(rule.acc_dtype).kind == "f"


def int_cast(node: Node, rule: Any) -> bool:
    """A cast (``astype``) of a float to an integer dtype."""
    source = _source_dtype(node)
    return isinstance(rule, ScalarRule) and rule.template == "{0}" and source is not None \
        and source.kind == "f" and np.dtype(node.meta.dtype).kind in "iu"


def _source_dtype(node: Node) -> np.dtype | None:
    first = node.args[0] if node.args else None
    return np.dtype(first.meta.dtype) if isinstance(first, Node) and first.meta is not None \
        else None


def serial_reduction(kernel: KernelPlan) -> bool:
    """Reductions the block trees do not run (arg-reductions with NumPy's first-occurrence and
    first-NaN rules, two-pass ``var``/``std``, products, column reductions over any axes, with
    keepdims): one thread per kept index (a row of a rows kernel, a kept index of a columns
    kernel; one thread in all for a whole-array reduction), each accumulating its elements in
    C order, sweep after sweep, as the CPU kernel does. No row temporaries (their size is not
    known at compile time)."""
    if kernel.style not in ("rows", "columns") or kernel.prologue or kernel.masked is not None \
            or kernel.store_into is not None:
        return False
    if any(buffer is None for buffer in kernel.stash.values()):
        return False
    return not any(kernel.rules[n].helpers for n in kernel.nodes)


def _tree_reductions(kernel: KernelPlan) -> bool:
    if kernel.prologue or kernel.store_into is not None or kernel.masked is not None:
        return False
    if any(kernel.stash.get(n, 0) is None for n in kernel.nodes):
        return False
    for node in kernel.nodes:
        rule = kernel.rules[node]
        if isinstance(rule, ReductionRule) and ((rule.merge is None and not rule.arg)
                                                or rule.helpers):
            return False  # (arg-reductions merge (value, index) pairs: ``take_other``)
    return True


def take_other(rule: ReductionRule, value: str, index: str, other: str, other_index: str) -> str:
    """Whether an arg-reduction's partial (``other``, ``other_index``) replaces (``value``,
    ``index``): NumPy's rules over partials of any index order: the first NaN wins, then the
    better value, then, on a tie, the smaller index."""
    better = rule.combine.format(acc=value, v=other)
    tie = f"({other} == {value} and {other_index} < {index})"
    if np.dtype(rule.input_dtype).kind != "f":
        return f"({better}) or {tie}"
    return (f"({value} != {value} and {other} != {other} and {other_index} < {index}) or "
            f"({value} == {value} and ({other} != {other} or ({better}) or {tie}))")


class CudaEmitter(KernelEmitter):
    """One grid-stride ``cuda.jit`` kernel for a pointwise ``KernelPlan``; 0-d inputs are passed
    as scalar values. ``DECORATOR`` and ``GRID`` (first flat index, stride): a device loop's
    device functions use one block's threads (``loops.py``)."""

    watches_zeros = False  # no ZEROS counter: a zero max/min sets the flag's second word

    DECORATOR = "@cuda.jit"
    GRID = ("cuda.grid(1)", "cuda.gridsize(1)")

    def __init__(self, kernel: KernelPlan, plan: Plan):
        super().__init__(kernel, plan, True)  # 0-d inputs are scalar values (``nested``)
        # the CPU target's NumPy-order float sums (pairwise blocks) are not this target's: its
        # sums are trees (whole arrays, rows) or serial per thread, in the accumulator rule's
        # dtype (float64 for float32 data)
        self.exact: dict = {}
        self.flag = self.names("fp_flag")
        self.flagged = [n for n in kernel.nodes if raises_fp(n, kernel.rules[n])
                        or accumulates(kernel.rules[n]) or zero_rerun(n)]
        self.flat, self.stride, self.total, self.rest = (
            self.names(hint) for hint in ("flat", "stride", "total", "rest"))

    def params(self) -> list[str]:
        """The FP flag array first (``raises_fp`` members), then the inputs and outputs."""
        return ([self.flag] if self.flagged else []) + super().params()

    def compute(self, w: _Lines, node: Node) -> None:
        """A member's value; for a float op that can raise (``raises_fp``): the device's FP
        flag when its result is NaN from operands that are not, or infinite from finite ones
        (NumPy's invalid, divide-by-zero and overflow warnings; the launcher then runs the
        kernel's NumPy twin, which warns as the plain call does)."""
        super().compute(w, node)
        if node not in self.flagged:
            return
        value = self.value(node)
        ndim = len(node.meta.shape)
        if scalar_math(node):
            self.overflow_check(w, node)
            return
        floats = [self.operand(a, None, ndim) for a in node.args
                  if isinstance(a, Node) and np.dtype(a.meta.dtype).kind == "f"]
        if int_cast(node, self.k.rules[node]):  # NaN, infinite or past the integer's range
            # (NumPy converts through int32 or int64: their range, a superset, decides)
            limit = float(2 ** (8 * max(np.dtype(node.meta.dtype).itemsize, 4) - 1))
            w.open(f"if not (abs({floats[0]}) < {limit!r}):")
            w(f"{self.flag}[0] = 1", "a cast NumPy may report as invalid")
            w.close()
            return
        nan_in = " or ".join(f"{o} != {o}" for o in floats)
        finite_in = " and ".join(f"abs({o}) < np.inf" for o in floats)
        nan = f"({value} != {value}" + (f" and not ({nan_in}))" if floats else ")")
        inf = f"(abs({value}) == np.inf" + (f" and {finite_in})" if floats else ")")
        w.open(f"if {nan} or {inf}:")
        w(f"{self.flag}[0] = 1", "an FP error NumPy would report")
        w.close()

    def overflow_check(self, w: _Lines, node: Node) -> None:
        """The FP flag where NumPy's integer scalar math may wrap: the op in float64 (the
        node's ufunc) lands outside the dtype's range, with a margin for float64's rounding
        (a candidate near the edge costs only the rerun, whose NumPy then warns "overflow
        encountered in scalar add", or not)."""
        dtype = np.dtype(node.meta.dtype)
        dtypes = self.k.rules[node].operand_dtypes
        operands = [f"np.float64({self.operand(v, dtypes[i] if i < len(dtypes) else None, 0)})"
                    for i, v in enumerate(node.args)]
        ufunc = REGISTRY[node.target].ufunc.__name__
        wide = f"np.{ufunc}({', '.join(operands)})"
        info = np.iinfo(dtype)
        high = float(info.max) * (1.0 - 2.0 ** -48)
        low = float(info.min) * (1.0 - 2.0 ** -48) if dtype.kind == "i" else 0.0
        w.open(f"if not ({low!r} <= {wide} <= {high!r}):")
        w(f"{self.flag}[0] = 1", "NumPy's integer scalar math may report an overflow")
        w.close()

    def check_result(self, w: _Lines, node: Node) -> None:
        """After a reduction's result: the FP flag when it is NaN or infinite (an accumulator
        that overflowed, ``inf - inf``; or NaN and infinite elements: the rerun decides); the
        zero flag when a float max/min result is a zero."""
        if node in self.flagged and accumulates(self.rule(node)):
            w.open(f"if not (abs({self.local[node]}) < np.inf):")
            w(f"{self.flag}[0] = 1", "a reduction NumPy may report (overflow, invalid)")
            w.close()
        if zero_rerun(node):  # (the launcher then takes the kernel's NumPy twin on the host)
            w.open(f"if {self.local[node]} == 0:")
            w(f"{self.flag}[1] = 1", "a float max/min that is a zero: NumPy's sign")
            w.close()

    def finish_sweep(self, w: _Lines, sweep: Any, at: str = "") -> None:
        super().finish_sweep(w, sweep, at)
        for node in sweep.reductions:
            if not (self.rule(node).two_pass and sweep.phase[node] == 1):
                self.check_result(w, node)

    def kernel_function(self) -> str:
        w = _Lines()
        self.prelude(w)
        dims = [d for d in range(self.ndim) if self.k.shape[d] != 1]
        w(f"{self.total} = {' * '.join(f'n{d}' for d in dims) if dims else '1'}")
        w(f"{self.flat} = {self.GRID[0]}")
        w(f"{self.stride} = {self.GRID[1]}")
        w.open(f"while {self.flat} < {self.total}:  # grid-stride loop over the elements")
        if dims:
            w(f"{self.rest} = {self.flat}")
        for position, d in enumerate(reversed(dims)):
            if position == len(dims) - 1:
                w(f"i{d} = {self.rest}")
            else:
                w(f"i{d} = {self.rest} % n{d}")
                w(f"{self.rest} = {self.rest} // n{d}")
        self.pointwise_element(w)
        w(f"{self.flat} += {self.stride}")
        w.close()
        head = f"{self.DECORATOR}\ndef {self.k.name}({', '.join(self.params())}):\n"
        return head + "\n".join(w.lines) + "\n"


class EpilogueEmitter(CudaEmitter):
    """A pointwise kernel fused into a matrix product's store (``matmul.py``): its element code
    for ``i0 = row, i1 = col``, the product's element being the local ``acc``."""

    # the product kernel's own names (``matmul.py``): the fused code must not reuse them
    TAKEN = frozenset({"a", "b", "out", "sa", "sb", "tx", "ty", "batch", "m", "n", "depth",
                       "tiles", "z", "za", "zb", "by", "bx", "row", "col", "acc", "t", "k", "q",
                       "TILE"})

    def __init__(self, kernel: KernelPlan, plan: Plan, product: Node):
        super().__init__(kernel, plan)
        self.product = product
        for names in (self.param, self.out, self.local):
            for node, name in list(names.items()):
                if name in self.TAKEN:
                    names[node] = self.names(f"e_{name}")
        if self.flag in self.TAKEN:
            self.flag = self.names("e_fp_flag")

    def params(self) -> list[str]:
        """The FP flag always (the product's own non-finite results set it), then the
        epilogue's inputs but the product, and its outputs."""
        rest = [p for p in super().params() if p not in (self.param[self.product], self.flag)]
        return [self.flag] + rest

    def leaf(self, node: Node, consumer_ndim: int) -> str:
        return "acc" if node is self.product else super().leaf(node, consumer_ndim)

    def store_lines(self, depth: int) -> list[str]:
        """The element code at ``(row, col)`` of the product (``(z, row, col)`` of a batch)."""
        w = _Lines(depth)
        for d, name in enumerate(("z", "row", "col")[3 - len(self.k.shape):]):
            w(f"i{d} = {name}")
        self.pointwise_element(w)
        return w.lines


def fusable_epilogue(node: Node, kernel: KernelPlan, plan: Plan) -> bool:
    """Whether pointwise ``kernel`` can run in the store of product ``node`` (2-D @ 2-D, or a
    batch: ``matmul`` with a 3-D result of 2-D/3-D operands): it reads the product over its
    whole iteration space (no size-1 dim), nothing else reads the product, and the kernel
    writes no destination (a plain pointwise GPU kernel)."""
    if not (gpu_kernel(kernel) and kernel.style == "pointwise" and kernel.store_into is None):
        return False
    ndim = len(kernel.shape)  # (a 3-D result is a batched matmul: ``gpu_matmul``)
    if ndim == 3 and any(a.meta.ndim not in (2, 3) for a in node.args):
        return False
    if ndim == 2 and any(a.meta.ndim != 2 for a in node.args) or ndim not in (2, 3):
        return False
    if tuple(kernel.shape) != tuple(node.meta.shape) or 1 in tuple(kernel.shape):
        return False
    outputs = [v for v in plan.graph.output_node.args[0] if isinstance(v, Node)]
    return node in kernel.inputs and node not in outputs and all(
        user in kernel.nodes for user in node.users)


class ReductionEmitter(CudaEmitter):
    """Reductions with shared-memory tree merges (``row_function``: one block per row). A
    whole-array reduction: each thread accumulates a grid-stride share of the elements
    (producers fused), each block merges its threads' accumulators in a shared-memory tree into
    ``part_*[blockIdx.x]``; the second pass (one block) merges the partials the same way and
    finalizes. Summation order is a tree, not NumPy's pairwise blocks: float results agree
    within a pairwise sum's error (float32 sums accumulate in float64, as NumPy's
    ``accumulator`` rule does here)."""

    def __init__(self, kernel: KernelPlan, plan: Plan, threads: int):
        super().__init__(kernel, plan)
        self.threads = threads
        self.tid, self.step = self.names("tid"), self.names("step")
        self.part = {n: self.names(f"part_{n.name}") for n in self.reductions}
        self.shared = {n: self.names(f"shared_{n.name}") for n in self.reductions}
        self.result = {n: self.names(f"res_{n.name}")
                       for n in dict.fromkeys(self.reductions + self.returns)}

    def sizes(self, w: _Lines) -> list[int]:
        for d, source in enumerate(self.k.dims):
            if self.k.shape[d] != 1:
                node, axis = source if isinstance(source, tuple) else (None, None)
                w(f"n{d} = {self.param[node]}.shape[{axis}]" if node is not None
                  else f"n{d} = {int(source)}")
        return [d for d in range(self.ndim) if self.k.shape[d] != 1]

    def tree(self, w: _Lines, nodes: list[Node]) -> None:
        """Each thread's accumulators (and NaN flags) into shared memory, then the block's tree
        merge into ``shared[0]``."""
        w(f"{self.tid} = cuda.threadIdx.x")
        for node in nodes:
            dtype = type_name(np.dtype(self.rule(node).acc_dtype))
            w(f"{self.shared[node]} = cuda.shared.array({self.threads}, {dtype})")
            w(f"{self.shared[node]}[{self.tid}] = {self.acc_name(node)}")
            if self.rule(node).arg:
                w(f"idx_{self.shared[node]} = cuda.shared.array({self.threads}, np.int64)")
                w(f"idx_{self.shared[node]}[{self.tid}] = {self.acc_name(node, 'idx')}")
            if self.rule(node).nan_flag:
                w(f"nan_{self.shared[node]} = cuda.shared.array({self.threads}, np.bool_)")
                w(f"nan_{self.shared[node]}[{self.tid}] = {self.acc_name(node, 'nan')}")
        w("cuda.syncthreads()")
        w(f"{self.step} = {self.threads // 2}")
        w.open(f"while {self.step} > 0:  # tree merge in shared memory")
        w.open(f"if {self.tid} < {self.step}:")
        for node in nodes:
            sh = self.shared[node]
            if self.rule(node).arg:
                mine, theirs = f"[{self.tid}]", f"[{self.tid} + {self.step}]"
                test = take_other(self.rule(node), sh + mine, f"idx_{sh}{mine}", sh + theirs,
                                  f"idx_{sh}{theirs}")
                w.open(f"if {test}:")
                w(f"{sh}{mine} = {sh}{theirs}")
                w(f"idx_{sh}{mine} = idx_{sh}{theirs}")
                w.close()
                continue
            merged = self.merged(self.rule(node), f"{sh}[{self.tid}]",
                                 f"{sh}[{self.tid} + {self.step}]")
            w(f"{sh}[{self.tid}] = {merged}")
            if self.rule(node).nan_flag:
                w(f"nan_{sh}[{self.tid}] = nan_{sh}[{self.tid}] | nan_{sh}[{self.tid} + "
                  f"{self.step}]")
        w.close()
        w("cuda.syncthreads()")
        w(f"{self.step} //= 2")
        w.close()

    def take_merged(self, w: _Lines, nodes: list[Node]) -> None:
        """Every thread reads the block's merged accumulators."""
        for node in nodes:
            w(f"{self.acc_name(node)} = {self.shared[node]}[0]")
            if self.rule(node).arg:
                w(f"{self.acc_name(node, 'idx')} = idx_{self.shared[node]}[0]")
            if self.rule(node).nan_flag:
                w(f"{self.acc_name(node, 'nan')} = nan_{self.shared[node]}[0]")

    def unravel(self, w: _Lines, dims: list[int], flat: str) -> None:
        """``i<d>`` for ``dims`` (C order) from the flat index ``flat``."""
        if dims:
            w(f"{self.rest} = {flat}")
        for position, d in enumerate(reversed(dims)):
            if position == len(dims) - 1:
                w(f"i{d} = {self.rest}")
            else:
                w(f"i{d} = {self.rest} % n{d}")
                w(f"{self.rest} = {self.rest} // n{d}")

    def row_function(self) -> str:
        """One block per row (grid-stride over rows); per sweep: the threads stride over the
        row's elements, the block merges, every thread finishes the sweep and the per-row nodes
        after it (outputs written with the same value by every thread)."""
        w = _Lines()
        dims = self.sizes(w)
        outer = [d for d in dims if d < self.k.outer]
        inner = [d for d in dims if d >= self.k.outer]
        row, rows = self.names("row"), self.names("rows")
        w(f"{rows} = {' * '.join(f'n{d}' for d in outer) if outer else '1'}")
        w(f"{self.total} = {' * '.join(f'n{d}' for d in inner) if inner else '1'}")
        w(f"count = {self.total}")
        w(f"{row} = cuda.blockIdx.x")
        w.open(f"while {row} < {rows}:  # one block per row")
        self.unravel(w, outer, row)
        for sweep in self.k.sweeps:
            for node in sweep.reductions:
                self.init_acc(w, node, sweep.phase[node])
            w(f"{self.flat} = cuda.threadIdx.x")
            w.open(f"while {self.flat} < {self.total}:  # this thread's share of the row")
            self.unravel(w, inner, self.flat)
            self.sweep_body(w, sweep)
            w(f"{self.flat} += {self.threads}")
            w.close()
            if sweep.reductions:
                self.tree(w, sweep.reductions)
                self.take_merged(w, sweep.reductions)
                w("cuda.syncthreads()  # shared memory is reused by the next merge")
                self.finish_sweep(w, sweep)
            self.outer_nodes(w, sweep.after)
        w(f"{row} += cuda.gridDim.x")
        w.close()
        return f"@cuda.jit\ndef {self.k.name}({', '.join(self.params())}):\n" + "\n".join(
            w.lines) + "\n"

    def kernel_function(self) -> str:
        w = _Lines()
        dims = self.sizes(w)
        w(f"{self.total} = {' * '.join(f'n{d}' for d in dims) if dims else '1'}")
        w(f"count = {self.total}")
        for node in self.reductions:
            self.init_acc(w, node, 0)
        w(f"{self.flat} = cuda.grid(1)")
        w(f"{self.stride} = cuda.gridsize(1)")
        w.open(f"while {self.flat} < {self.total}:  # this thread's share of the elements")
        self.unravel(w, dims, self.flat)
        self.sweep_body(w, self.k.sweeps[0])
        w(f"{self.flat} += {self.stride}")
        w.close()
        self.tree(w, self.reductions)
        w.open(f"if {self.tid} == 0:")
        for node in self.reductions:
            w(f"{self.part[node]}[cuda.blockIdx.x] = {self.shared[node]}[0]")
            if self.rule(node).arg:
                w(f"idx_{self.part[node]}[cuda.blockIdx.x] = idx_{self.shared[node]}[0]")
            if self.rule(node).nan_flag:
                w(f"nan_{self.part[node]}[cuda.blockIdx.x] = nan_{self.shared[node]}[0]")
        w.close()
        params = self.params() + self.part_params()
        return f"@cuda.jit\ndef {self.k.name}({', '.join(params)}):\n" + "\n".join(w.lines) + "\n"

    def part_params(self) -> list[str]:
        """Per-block partial accumulators, their NaN flags, then arg-reductions' indices."""
        return [self.part[n] for n in self.reductions] + [
            f"nan_{self.part[n]}" for n in self.reductions if self.rule(n).nan_flag] + [
            f"idx_{self.part[n]}" for n in self.reductions if self.rule(n).arg]

    def merge_function(self) -> str:
        w = _Lines()
        first = self.part[self.reductions[0]]
        for node in self.reductions:
            self.init_acc(w, node, 0)
        w(f"{self.flat} = cuda.threadIdx.x")
        w.open(f"while {self.flat} < {first}.shape[0]:")
        for node in self.reductions:
            acc = self.acc_name(node)
            part = f"{self.part[node]}[{self.flat}]"
            if self.rule(node).arg:
                idx, part_idx = self.acc_name(node, "idx"), f"idx_{part}"
                w.open(f"if {take_other(self.rule(node), acc, idx, part, part_idx)}:")
                w(f"{acc} = {part}")
                w(f"{idx} = {part_idx}")
                w.close()
                continue
            w(f"{acc} = {self.merged(self.rule(node), acc, part)}")
            if self.rule(node).nan_flag:
                flag = self.acc_name(node, "nan")
                w(f"{flag} = {flag} | nan_{self.part[node]}[{self.flat}]")
        w(f"{self.flat} += {self.threads}")
        w.close()
        self.tree(w, self.reductions)
        w.open(f"if {self.tid} == 0:  # the results, and the scalar work after them")
        self.take_merged(w, self.reductions)
        for node in self.reductions:
            w(f"{self.local[node]} = {self.finalize(node)}", node.origin)
            self.check_result(w, node)
        self.outer_nodes(w, [n for n in self.k.sweeps[0].after if n not in self.reductions])
        for node in self.returns:
            w(f"{self.result[node]}[0] = {self.local[node]}")
        w.close()
        head = ([self.flag] if self.flagged else []) + [
            self.param[n] for n in self.k.inputs if n.meta.shape == ()]
        params = head + self.part_params() + ["count"] + [self.result[n] for n in self.returns]
        return (f"@cuda.jit\ndef {self.k.name}_merge({', '.join(params)}):\n"
                + "\n".join(w.lines) + "\n")


class SerialEmitter(ReductionEmitter):
    """``serial_reduction`` kernels: a grid-stride loop over the kept indices (``cuda.grid(1)``),
    each thread running the CPU kernel's sweeps for its index with scalar accumulators (the op
    table's combine/finalize templates: NumPy's NaN and first-occurrence rules, two-pass
    means). 0-d results are written to one-element result arrays by the thread of index 0."""

    def kept_dims(self, dims: list[int]) -> tuple[list[int], list[int]]:
        if self.k.style == "rows":
            return [d for d in dims if d < self.k.outer], [d for d in dims if d >= self.k.outer]
        kept = set(self.k.kept_axes)
        return [d for d in dims if d in kept], [d for d in dims if d not in kept]

    def mean_ref(self, node: Node) -> str:
        return self.acc_name(node, "mean")  # a scalar per thread, also in columns kernels

    def serial_function(self) -> str:
        w = _Lines()
        dims = self.sizes(w)
        outer, inner = self.kept_dims(dims)
        row, rows = self.names("row"), self.names("rows")
        w(f"{rows} = {' * '.join(f'n{d}' for d in outer) if outer else '1'}")
        reduced = [d for d in dims if d in self.k.reduce_axes]
        w(f"count = {' * '.join(f'n{d}' for d in reduced) if reduced else '1'}")
        w(f"{row} = cuda.grid(1)")
        w.open(f"while {row} < {rows}:  # one thread per kept index")
        self.unravel(w, outer, row)
        for sweep in self.k.sweeps:
            for node in sweep.reductions:
                self.init_acc(w, node, sweep.phase[node])
            self.nest(w, inner, lambda sweep=sweep: self.sweep_body(w, sweep), 1)
            self.finish_sweep(w, sweep)
            if self.k.style == "columns":
                for node in sweep.reductions:
                    last = not (self.rule(node).two_pass and sweep.phase[node] == 1)
                    if last and node in self.k.outputs:
                        self.store(w, node)
            else:
                self.outer_nodes(w, sweep.after)
        for node in self.returns:
            w(f"{self.result[node]}[0] = {self.local[node]}", node.origin)
        w(f"{row} += cuda.gridsize(1)")
        w.close()
        params = self.params() + [self.result[n] for n in self.returns]
        return f"@cuda.jit\ndef {self.k.name}({', '.join(params)}):\n" + "\n".join(
            w.lines) + "\n"


def cuda_kernel_code(kernel: KernelPlan, plan: Plan, threads: int = 0) -> CudaKernelCode:
    """The source of one kernel module (``from numba import cuda``; one kernel per file);
    ``threads``: a reduction's block size (a power of two)."""
    if not gpu_kernel(kernel):
        return CudaKernelCode(kernel.name, "", list(kernel.inputs),
                              [n for n in kernel.outputs if n.meta.shape != ()], kernel,
                              [n for n in kernel.outputs if n.meta.shape == ()])
    for node, rule in list(kernel.rules.items()):
        kernel.rules[node] = gpu_rule(rule) or rule
    if whole_reduction(kernel):
        reduction = ReductionEmitter(kernel, plan, threads)
        source = _module(kernel, "whole-array reduction (block tree + second pass)",
                         reduction.kernel_function() + "\n\n" + reduction.merge_function())
        return CudaKernelCode(kernel.name, source, list(kernel.inputs), list(reduction.buffers),
                              kernel, list(reduction.returns), threads, f"{kernel.name}_merge",
                              flagged=bool(reduction.flagged))
    if row_reduction(kernel):
        rows = ReductionEmitter(kernel, plan, threads)
        source = _module(kernel, "row kernel (one block per row, shared-memory merges)",
                         rows.row_function())
        return CudaKernelCode(kernel.name, source, list(kernel.inputs), list(rows.buffers),
                              kernel, list(rows.returns), threads, rows=True,
                              flagged=bool(rows.flagged))
    if kernel.style != "pointwise":
        serial = SerialEmitter(kernel, plan, threads)
        source = _module(kernel, "reduction (one thread per kept index, serial sweeps)",
                         serial.serial_function())
        return CudaKernelCode(kernel.name, source, list(kernel.inputs), list(serial.buffers),
                              kernel, list(serial.returns), serial=True,
                              flagged=bool(serial.flagged))
    emitter = CudaEmitter(kernel, plan)
    return CudaKernelCode(kernel.name, _module(kernel, "pointwise kernel (grid-stride loop)",
                                               emitter.kernel_function()),
                          list(kernel.inputs), list(emitter.buffers), kernel,
                          flagged=bool(emitter.flagged))


def _module(kernel: KernelPlan, what: str, functions: str) -> str:
    origins = list(dict.fromkeys(n.origin for n in kernel.nodes if n.origin))
    dims = ", ".join("1" if s == 1 else f"n{d}" for d, s in enumerate(kernel.shape))
    header = [f'"""{kernel.name}: CUDA {what} over [{dims}].',
              "",
              "Generated by astcompiler's numba CUDA target. Nodes: "
              + ", ".join(n.name for n in kernel.nodes) + ".",
              *(["Source lines: " + ", ".join(origins) + "."] if origins else []),
              '"""', "", "import numpy as np", "from numba import cuda", "", ""]
    return "\n".join(header) + functions


def cuda_accepts(node: Node, rule: Any) -> bool:
    """Whether this target puts ``node`` in a GPU kernel (else it is a NumPy step on the host)."""
    if isinstance(rule, ReductionRule):  # kernels that are not GPU kernels run as host NumPy
        return not rule.helpers and np.dtype(rule.acc_dtype).kind in "biuf"
    if not isinstance(rule, ScalarRule):
        return False
    rule = gpu_rule(rule)
    if rule is None or not rule_compiles(node, rule):
        return False
    values = [node] + [v for v in node.args if isinstance(v, Node)]
    if any(v.meta is None or np.dtype(v.meta.dtype).kind not in "biuf" for v in values):
        return False
    if np.dtype(node.meta.dtype).kind in "iu" or any(
            np.dtype(v.meta.dtype).kind in "iu" for v in values[1:]):
        if "//" in rule.template or "%" in rule.template:
            return False
    return True


def gpu_rule(rule: Any) -> ScalarRule | None:
    """``rule`` as GPU code: vecmath calls spelled as their ufunc (libdevice on the GPU); None
    when it needs another helper (an njit function)."""
    if not isinstance(rule, ScalarRule):
        return None
    template = rule.template
    for key in rule.helpers:
        name = key.partition(":")[0]
        if key.startswith(PREFIX + ":"):
            template = template.replace(call_name(key) + "(", f"np.{key.split(':')[1]}(")
        elif name.startswith("scalar_") and isinstance(getattr(np, name.split("_")[1], None),
                                                        np.ufunc):
            # NumPy's integer scalar math (``scalar_<ufunc>_...``): it wraps as the GPU does
            # (the FP flag where NumPy would warn: ``scalar_math``)
            template = template.replace(helper_call(key) + "(", f"np.{name.split('_')[1]}(")
        else:
            return None
    return dataclasses.replace(rule, template=template, helpers=()) if rule.helpers else rule
