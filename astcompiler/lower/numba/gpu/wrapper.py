"""The CUDA target's wrapper: a generated Python function that moves arrays between host and
device, launches the kernels and runs the other steps with NumPy on the host.

Per call: a ``Transfers`` object copies each host array that a kernel reads to the device once,
and each device array that a NumPy step reads to the host once. Kernel outputs stay on the device
until something on the host needs them. Results are device arrays when any array argument was
one (fixed per entry: its guard checks each argument's kind), else host arrays. A NumPy step
that writes into an array is followed by ``___t.written(...)``, which copies the written
storages back to the device arrays they were downloaded from (a device input's mutation is
visible to the caller). A view node (the registry's kind ``view``: slicing, ``.T``,
``reshape``) of a device array is ``___t.view(...)``: a device array viewing the same device
memory where NumPy gives a view (no copy; writes through it reach the input). Matrix products
are GPU kernels (``matmul.py``); a loop region is a host loop around its subgraphs' wrappers
(``runtime.RegionLauncher``), which share this call's ``Transfers`` (a keyword
``___transfers``). Every line is tagged with the node and source line.
"""

from __future__ import annotations

from typing import Any

from ....graph import Node
from ....ops.registry import REGISTRY
from ..cpu import Namer
from ..plan import KernelPlan, KernelStep, NodeStep, Plan, write_targets
from .kernels import CudaKernelCode, EpilogueEmitter, fusable_epilogue, gpu_kernel
from .matmul import MatmulCode, gpu_matmul, matmul_code

LOOPS = ("for_range", "while_loop", "cond")  # regions written as host loops around kernels


def is_view(node: Node) -> bool:
    """A call of an op whose result may view its input (the registry's kind ``view``) and that
    writes nothing: ``Transfers.view`` makes it a device view when NumPy gives a view."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op is not None and op.kind == "view" and not write_targets(node)


class CudaWrapperWriter:
    """Writes ``make_forward(___rt, ___steps, ___kernels)`` for one plan."""

    def __init__(self, plan: Plan, codes: dict[int, CudaKernelCode], on_device: bool | str,
                 gpu: bool = True):
        """``on_device``: results as device arrays (``"cupy"``: CuPy arrays; ``"keep"``: a
        loop body's, where they are); ``gpu`` False: no GPU kernel at all (a fallback)."""
        self.plan, self.codes, self.on_device, self.gpu = plan, codes, on_device, gpu
        self.names = Namer({"np", "cuda"})
        self.var: dict[Node, str] = {}
        self.steps: list[Node] = []  # host steps, by position in ``___steps``
        # launched kernels, by position in ``___kernels``
        self.kernels: list[CudaKernelCode | MatmulCode] = []
        self.lines: list[str] = []
        self.regions: list[Node] = []  # host loops, by position in ``___regions``

    def emit(self, text: str, origin: str | None = None) -> None:
        self.lines.append("        " + text + (f"  # {origin}" if origin else ""))

    def build(self) -> str:
        graph = self.plan.graph
        params = [self.name(p) for p in graph.placeholders]
        self.emit("___t = ___rt.Transfers() if ___transfers is None else ___transfers"
                  "  # this call's host<->device copies (a loop body: its caller's)")
        where = {"cupy": "CuPy arrays"}.get(self.on_device, "device arrays") if self.on_device \
            else "host arrays"
        self.emit(f"___on_device = {self.on_device!r}  # the guard pins the arguments' kind: "
                  f"{where}")
        steps = self.plan.steps
        fused: set[int] = set()
        for position, step in enumerate(steps):
            if position in fused:
                continue
            after = steps[position + 1] if position + 1 < len(steps) else None
            if isinstance(step, NodeStep) and self.gpu and gpu_matmul(step.node) \
                    and isinstance(after, KernelStep) \
                    and fusable_epilogue(step.node, after.kernel, self.plan):
                self.matmul_step(step.node, after.kernel)
                fused.add(position + 1)
            elif isinstance(step, KernelStep):
                self.kernel_step(step)
            else:
                self.host_step(step.node)
        outputs = [self.output(v) for v in graph.output_node.args[0]]
        self.emit(f"return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})")
        head = ["# numba CUDA target: host<->device transfers, kernel launches, NumPy steps", "",
                "def make_forward(___rt, ___steps, ___kernels, ___regions=()):",
                f"    def forward({', '.join(params + ['___transfers=None'])}):"]
        return "\n".join(head + self.lines + ["    return forward", ""])

    def name(self, node: Node) -> str:
        if node not in self.var:
            self.var[node] = self.names(node.name)
        return self.var[node]

    def host_step(self, node: Node) -> None:
        """A node run with NumPy on host values (a region: its loops on the host); a matrix
        product is a GPU kernel (``matmul.py``)."""
        if self.gpu and gpu_matmul(node):
            self.matmul_step(node)
            return
        if node.op == "region" and node.target in LOOPS and node not in self.plan.numpy_only:
            self.region_step(node)
            return
        index = len(self.steps)
        self.steps.append(node)
        origin = f" ({node.origin})" if node.origin else ""
        if is_view(node):  # a device array's view stays a view on the device (no copy)
            args = ", ".join(self.var[v] for v in node.all_input_nodes())
            self.emit(f"{self.name(node)} = ___t.view(___steps[{index}], {args})",
                      f"a device view of a device array, else NumPy on the host: "
                      f"{node.target}{origin}")
            return
        args = ", ".join(f"___t.host({self.var[v]})" for v in node.all_input_nodes())
        self.emit(f"{self.name(node)} = ___steps[{index}]({args})",
                  f"NumPy on the host: {node.target}{origin}")
        written = [r for t in write_targets(node) for r in self.plan.roots.get(t, {t})]
        storages = [self.var[r] for r in dict.fromkeys(written) if r in self.var]
        if storages:
            self.emit(f"___t.written(({', '.join(storages)},))",
                      "back to the device arrays it wrote through")

    def region_step(self, node: Node) -> None:
        """A loop or branch as a host loop around its subgraphs' CUDA wrappers (``runtime.
        RegionLauncher``), sharing this call's transfers: data stays on the device between
        trips."""
        index = len(self.regions)
        self.regions.append(node)
        args = ", ".join(self.var[v] for v in node.all_input_nodes())
        label = f"host loop around CUDA kernels: {node.target}" + (
            f" ({node.origin})" if node.origin else "")
        self.emit(f"{self.name(node)} = ___regions[{index}](___t, {args})", label)
        written = [r for t in write_targets(node) for r in self.plan.roots.get(t, {t})]
        storages = [self.var[r] for r in dict.fromkeys(written) if r in self.var]
        if storages:
            self.emit(f"___t.written(({', '.join(storages)},))",
                      "back to the device arrays it wrote through")

    def matmul_step(self, node: Node, epilogue: KernelPlan | None = None) -> None:
        """A product kernel; ``epilogue``: the pointwise kernel fused into its store (its
        outputs are this launch's; the product itself is never stored)."""
        index = len(self.kernels)
        name = f"matmul_{len(self.kernels)}_{node.name}"
        a, b = (self.var[v] for v in node.args)
        origin = f" ({node.origin})" if node.origin else ""
        if epilogue is None:
            code = matmul_code(node, name)
            self.kernels.append(code)
            self.emit(f"{self.name(node)}, = ___kernels[{index}](___t, {a}, {b})",
                      f"CUDA kernel {code.name}: tiled {node.target}{origin}")
            return
        alone = self.codes[epilogue.index]
        code = matmul_code(node, name, EpilogueEmitter(epilogue, self.plan, node))
        code.epilogue = alone  # (the fused kernel's FP flag: the product's too)
        code.inputs = [n for n in alone.inputs if n is not node]
        self.kernels.append(code)
        outs = ", ".join(self.name(n) for n in alone.buffers) + ","
        args = ", ".join([a, b] + [self.var[n] for n in code.inputs])
        self.emit(f"{outs} = ___kernels[{index}](___t, {args})",
                  f"CUDA kernel {code.name}: tiled {node.target}{origin} with "
                  + ", ".join(n.target for n in epilogue.nodes) + " in its store")

    def kernel_step(self, step: KernelStep) -> None:
        kernel = step.kernel
        code = self.codes.get(kernel.index)
        if kernel.masked is not None:  # a masked store: its nodes as NumPy steps, in order
            for node in kernel.masked.in_order:
                self.host_step(node)
            return
        if code is None:
            raise AssertionError(f"{kernel.name}: not a kernel of the CUDA target")
        index = len(self.kernels)
        self.kernels.append(code)
        outs = ", ".join(self.name(n) for n in code.buffers + code.returns) + ","
        args = ", ".join(self.var[n] for n in code.inputs)
        where = f"CUDA kernel {code.name}" if gpu_kernel(kernel) else \
            f"{code.name} as NumPy on the host (not a GPU kernel yet)"
        self.emit(f"{outs} = ___kernels[{index}](___t, {args})",
                  f"{where}: " + ", ".join(n.target for n in kernel.nodes))
        if kernel.store_into is not None:  # the fused store: NumPy writes the kernel's result
            self.host_step(kernel.store_into)

    def output(self, value: Any) -> str:
        if not isinstance(value, Node):
            return repr(value)
        return f"___rt.as_output({self.var[value]}, ___on_device, ___t)"
