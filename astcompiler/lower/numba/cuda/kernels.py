"""CUDA code generation: a pointwise ``KernelPlan`` becomes a ``numba.cuda.jit`` grid-stride kernel.

The element expressions are the CPU target's (``cpu.KernelEmitter.pointwise``: the op table's
scalar rules, broadcasting as index patterns); only the loop differs. One thread handles the flat
indices ``cuda.grid(1), + cuda.gridsize(1), ...`` of the iteration space and unravels each into
``i0, i1, ...`` (C order). Sizes are read from the arguments' ``.shape`` at run time. Kernels reach
the CUDA API only through the module global ``cuda`` (the simulator swaps exactly that).

``cuda_accepts`` is the target's veto on a node: rules with njit helpers (error flags, integer
division), integer ``//``/``%``, complex values and reductions run as NumPy steps on the host.
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
from ..plan import KernelPlan, Plan, ReductionRule, ScalarRule
from ..scalar import type_name
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


def gpu_kernel(kernel: KernelPlan) -> bool:
    """Kernels this target writes for the GPU: plain pointwise loops (no masked store) and
    whole-array reductions (``whole_reduction``)."""
    if kernel.masked is not None or not kernel.shape:
        return False
    return kernel.style == "pointwise" or whole_reduction(kernel) or row_reduction(kernel)


def whole_reduction(kernel: KernelPlan) -> bool:
    """A reduction over every axis with one sweep, merge-able accumulators (no arg-reductions,
    no two-pass), NumPy-scalar results and no per-row work after it: block tree reductions in
    shared memory plus a second pass."""
    if kernel.style != "rows" or kernel.outer != 0 or len(kernel.sweeps) != 1:
        return False
    sweep = kernel.sweeps[0]
    return _tree_reductions(kernel) and not any(n not in sweep.reductions for n in sweep.after) \
        and all(n.meta.shape == () and n.meta.scalar for n in sweep.reductions)


def row_reduction(kernel: KernelPlan) -> bool:
    """Reductions over the trailing axes (softmax, layer norm): one block per row (a grid-stride
    loop over rows), the block's threads striding over the row in each sweep, a shared-memory
    tree merge after it; stashes only into output buffers (no row temporaries)."""
    return kernel.style == "rows" and kernel.outer > 0 and _tree_reductions(kernel) \
        and all(buffer is not None for buffer in kernel.stash.values())


def _tree_reductions(kernel: KernelPlan) -> bool:
    if kernel.prologue or kernel.store_into is not None or kernel.masked is not None:
        return False
    if any(kernel.stash.get(n, 0) is None for n in kernel.nodes):
        return False
    for node in kernel.nodes:
        rule = kernel.rules[node]
        if isinstance(rule, ReductionRule) and (rule.merge is None or rule.arg or rule.two_pass
                                                or rule.helpers):
            return False
    return True


class CudaEmitter(KernelEmitter):
    """One grid-stride ``cuda.jit`` kernel for a pointwise ``KernelPlan``; 0-d inputs are passed
    as scalar values."""

    def __init__(self, kernel: KernelPlan, plan: Plan):
        super().__init__(kernel, plan, True)  # 0-d inputs are scalar values (``nested``)
        self.flat, self.stride, self.total, self.rest = (
            self.names(hint) for hint in ("flat", "stride", "total", "rest"))

    def kernel_function(self) -> str:
        w = _Lines()
        self.prelude(w)
        dims = [d for d in range(self.ndim) if self.k.shape[d] != 1]
        w(f"{self.total} = {' * '.join(f'n{d}' for d in dims) if dims else '1'}")
        w(f"{self.flat} = cuda.grid(1)")
        w(f"{self.stride} = cuda.gridsize(1)")
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
        head = f"@cuda.jit\ndef {self.k.name}({', '.join(self.params())}):\n"
        return head + "\n".join(w.lines) + "\n"


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
        self.result = {n: self.names(f"res_{n.name}") for n in self.reductions}

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
            if self.rule(node).nan_flag:
                w(f"nan_{self.shared[node]} = cuda.shared.array({self.threads}, np.bool_)")
                w(f"nan_{self.shared[node]}[{self.tid}] = {self.acc_name(node, 'nan')}")
        w("cuda.syncthreads()")
        w(f"{self.step} = {self.threads // 2}")
        w.open(f"while {self.step} > 0:  # tree merge in shared memory")
        w.open(f"if {self.tid} < {self.step}:")
        for node in nodes:
            sh = self.shared[node]
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
                self.init_acc(w, node, 0)
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
            if self.rule(node).nan_flag:
                w(f"nan_{self.part[node]}[cuda.blockIdx.x] = nan_{self.shared[node]}[0]")
        w.close()
        params = self.params() + self.part_params()
        return f"@cuda.jit\ndef {self.k.name}({', '.join(params)}):\n" + "\n".join(w.lines) + "\n"

    def part_params(self) -> list[str]:
        """Per-block partial accumulators, then their NaN flags (``flags`` order)."""
        return [self.part[n] for n in self.reductions] + [
            f"nan_{self.part[n]}" for n in self.reductions if self.rule(n).nan_flag]

    def merge_function(self) -> str:
        w = _Lines()
        first = self.part[self.reductions[0]]
        for node in self.reductions:
            self.init_acc(w, node, 0)
        w(f"{self.flat} = cuda.threadIdx.x")
        w.open(f"while {self.flat} < {first}.shape[0]:")
        for node in self.reductions:
            acc = self.acc_name(node)
            w(f"{acc} = {self.merged(self.rule(node), acc, f'{self.part[node]}[{self.flat}]')}")
            if self.rule(node).nan_flag:
                flag = self.acc_name(node, "nan")
                w(f"{flag} = {flag} | nan_{self.part[node]}[{self.flat}]")
        w(f"{self.flat} += {self.threads}")
        w.close()
        self.tree(w, self.reductions)
        w.open(f"if {self.tid} == 0:")
        self.take_merged(w, self.reductions)
        for node in self.reductions:
            w(f"{self.result[node]}[0] = {self.finalize(node)}", node.origin)
        w.close()
        params = self.part_params() + ["count"] + [self.result[n] for n in self.reductions]
        return (f"@cuda.jit\ndef {self.k.name}_merge({', '.join(params)}):\n"
                + "\n".join(w.lines) + "\n")


def cuda_kernel_code(kernel: KernelPlan, plan: Plan, threads: int = 0) -> CudaKernelCode:
    """The source of one kernel module (``from numba import cuda``; one kernel per file);
    ``threads``: a reduction's block size (a power of two)."""
    if not gpu_kernel(kernel):
        return CudaKernelCode(kernel.name, "", list(kernel.inputs),
                              [n for n in kernel.outputs if n.meta.shape != ()], kernel,
                              [n for n in kernel.outputs if n.meta.shape == ()])
    for node, rule in list(kernel.rules.items()):
        kernel.rules[node] = gpu_rule(rule) or rule
    if kernel.style == "rows" and kernel.outer == 0:
        reduction = ReductionEmitter(kernel, plan, threads)
        source = _module(kernel, "whole-array reduction (block tree + second pass)",
                         reduction.kernel_function() + "\n\n" + reduction.merge_function())
        return CudaKernelCode(kernel.name, source, list(kernel.inputs), list(reduction.buffers),
                              kernel, list(reduction.returns), threads, f"{kernel.name}_merge")
    if kernel.style == "rows":
        rows = ReductionEmitter(kernel, plan, threads)
        source = _module(kernel, "row kernel (one block per row, shared-memory merges)",
                         rows.row_function())
        return CudaKernelCode(kernel.name, source, list(kernel.inputs), list(rows.buffers),
                              kernel, list(rows.returns), threads, rows=True)
    emitter = CudaEmitter(kernel, plan)
    return CudaKernelCode(kernel.name, _module(kernel, "pointwise kernel (grid-stride loop)",
                                               emitter.kernel_function()),
                          list(kernel.inputs), list(emitter.buffers), kernel)


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
        if not key.startswith(PREFIX + ":"):
            return None
        template = template.replace(call_name(key) + "(", f"np.{key.split(':')[1]}(")
    return dataclasses.replace(rule, template=template, helpers=()) if rule.helpers else rule
