"""What the CUDA target's generated wrappers call: transfers, kernel launches, host steps.

``Transfers`` (one per call) copies a host array to the device at most once and a device array
to the host at most once; after a host step writes into an array, ``written`` copies the
written storages back to the device arrays they came from and forgets the uploads (stale).

``KernelLauncher`` runs one kernel: on the GPU when every operand of two or more dims is
C-ordered (its outputs are then C-ordered, as NumPy's are), else as the kernel's nodes with NumPy
on the host (NumPy's own output layout). A kernel numba cannot compile when it first runs is
replaced by that host twin for good (nothing was written yet: its outputs are fresh), with one
warning (GPU kernels raise none of the program's errors: any failure to compile or launch one
is this target's). ``HostStep`` runs one node with NumPy.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ....graph import Graph, Node, map_nodes
from ....logs import get_logger
from ...base import error_summary
from ...eager import interpret
from .devices import is_device_array, to_host, write_back
from .launch import geometry


def c_ordered(value: Any) -> bool:
    """A host or device array laid out in C order (``ndim < 2``: always; size 0 or 1 too)."""
    shape = tuple(getattr(value, "shape", ()))
    if len(shape) < 2:
        return True
    expected = np.dtype(value.dtype).itemsize
    for size, stride in zip(reversed(shape), reversed(tuple(value.strides))):
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


class Transfers:
    """The copies of one call: host -> device (uploads) and device -> host (downloads)."""

    def __init__(self) -> None:
        self.uploads: dict[int, tuple[Any, Any]] = {}
        self.downloads: dict[int, tuple[Any, Any]] = {}

    def device(self, value: Any) -> Any:
        """``value`` as a device array (itself when it is one); 0-d values as scalars."""
        if is_device_array(value):
            return value
        if not isinstance(value, np.ndarray):
            return value.item() if isinstance(value, np.generic) and value.dtype.kind == "b" \
                else value
        if value.ndim == 0:
            return value[()]
        known = self.uploads.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        from numba import cuda
        copy = cuda.to_device(np.ascontiguousarray(value))
        self.uploads[id(value)] = (value, copy)
        return copy

    def host(self, value: Any) -> Any:
        """``value`` as a host array (itself unless it is a device array)."""
        if not is_device_array(value):
            return value
        known = self.downloads.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        copy = to_host(value)
        self.downloads[id(value)] = (value, copy)
        return copy

    def scalar(self, value: Any) -> Any:
        """A 0-d operand as a scalar argument of a kernel."""
        if is_device_array(value):
            value = self.host(value)
        return value[()] if isinstance(value, np.ndarray) else value

    def written(self, storages: tuple) -> None:
        """A host step wrote into arrays viewing ``storages``: device arrays among them get
        their (written) host copies back; every upload is stale."""
        for storage in storages:
            known = self.downloads.get(id(storage))
            if known is not None and known[0] is storage:
                write_back(storage, known[1])
        self.uploads.clear()


def kernel_graph(nodes: list[Node], inputs: list[Node], outputs: list[Node]) -> Graph:
    """``nodes`` (in order) as a graph from ``inputs`` to ``outputs``."""
    graph = Graph()
    env: dict[Node, Any] = {n: graph.placeholder(f"input:{n.name}", n.meta, n.name)
                            for n in inputs}
    for node in nodes:
        args = map_nodes(node.args, env.__getitem__)
        kwargs = map_nodes(node.kwargs, env.__getitem__)
        if node.op == "region":
            env[node] = graph.region(node.target, args, node.info, node.origin)
        else:
            env[node] = graph.call(node.target, args, kwargs, node.meta, node.origin)
    graph.output(tuple(env[n] for n in outputs))
    return graph


class HostStep:
    """One node (a call or a region) run with NumPy on host values."""

    def __init__(self, node: Node):
        self.inputs = node.all_input_nodes()
        self.graph = kernel_graph([node], self.inputs, [node])
        self.name = node.name

    def __call__(self, *values: Any) -> Any:
        return interpret(self.graph, values)[0]


class KernelLauncher:
    """One kernel of a wrapper; ``launcher(transfers, *inputs)`` returns its outputs: arrays
    (device arrays from the GPU, host arrays from the host twin), then 0-d results (NumPy
    scalars). ``kernel`` None: not a GPU kernel, always the host twin. ``merge``: a
    reduction's second pass."""

    def __init__(self, kernel: Callable | None, merge: Callable | None, code: Any):
        plan = code.plan
        self.kernel, self.merge, self.name = kernel, merge, code.name
        self.threads = code.threads
        self.position = {node: i for i, node in enumerate(code.inputs)}
        self.dims = list(plan.dims)
        self.dtypes = [np.dtype(n.meta.dtype) for n in code.buffers]
        # per buffer and dim: True where it spans the kernel's dim (else size 1); rows kernels'
        # per-row outputs are F with 1s, or F's leading (outer) dims
        self.spans = [tuple(size != 1 for size in n.meta.shape) for n in code.buffers]
        self.results = [np.dtype(n.meta.dtype) for n in code.returns]
        self.accs = [np.dtype(plan.rules[n].acc_dtype) for n in code.returns]
        self.flags = sum(bool(plan.rules[n].nan_flag) for n in code.returns)
        self.rows, self.outer = code.rows, plan.outer
        self.scalars = [n.meta.shape == () for n in code.inputs]
        self.twin = kernel_graph(plan.nodes, code.inputs, code.buffers + code.returns)
        self.failed = kernel is None

    def shape(self, inputs: tuple) -> tuple[int, ...]:
        return tuple(int(d) if not isinstance(d, tuple) else
                     int(inputs[self.position[d[0]]].shape[d[1]]) for d in self.dims)

    def __call__(self, transfers: Transfers, *inputs: Any) -> tuple:
        if self.failed or not all(c_ordered(v) for v in inputs) or _errors_matter():
            return self.host(transfers, inputs)  # NumPy's layout, or np.seterr's errors
        shape = self.shape(inputs)
        total = int(np.prod(shape, dtype=np.int64))
        if total == 0 and self.results:
            return self.host(transfers, inputs)  # an empty reduction: NumPy's value or error
        from numba import cuda
        args = [transfers.scalar(v) if s else transfers.device(v)
                for v, s in zip(inputs, self.scalars)]
        outs = [cuda.device_array(tuple(shape[d] if span else 1 for d, span in enumerate(spans)),
                                  dtype) for spans, dtype in zip(self.spans, self.dtypes)]
        if total == 0:
            return tuple(outs)
        try:
            if self.rows:  # one block per row: the grid covers the rows
                rows = int(np.prod(shape[:self.outer], dtype=np.int64))
                self.kernel[geometry(rows * self.threads)[0], self.threads](*args, *outs)
                return tuple(outs)
            if self.merge is None:
                blocks, threads = geometry(total)
                self.kernel[blocks, threads](*args, *outs)
                return tuple(outs)
            return tuple(outs) + self.reduce(args, outs, total)
        except Exception as error:  # noqa: BLE001 - kernels raise nothing of the program's:
            self.failed = True  # typing, NVVM/linking or launch failures of this target
            message = (f"astcompiler: numba could not compile the CUDA kernel {self.name} "
                       f"({type(error).__name__}: {error_summary(error)}); its nodes run with "
                       "NumPy on the host from now on")
            get_logger("graph_breaks").info("%s\n%s", message, error)
            warnings.warn(message, RuntimeWarning, stacklevel=3)
            return self.host(transfers, inputs)

    def reduce(self, args: list, outs: list, total: int) -> tuple:
        """First pass (per-block partials), second pass (one block), results to the host."""
        from numba import cuda
        blocks, _ = geometry(total)
        parts = [cuda.device_array(blocks, dtype) for dtype in self.accs] + [
            cuda.device_array(blocks, np.bool_) for _ in range(self.flags)]
        self.kernel[blocks, self.threads](*args, *outs, *parts)
        results = [cuda.device_array(1, dtype) for dtype in self.results]
        self.merge[1, self.threads](*parts, np.int64(total), *results)
        return tuple(dtype.type(r.copy_to_host()[0]) for dtype, r in zip(self.results, results))

    def host(self, transfers: Transfers, inputs: tuple) -> tuple:
        return interpret(self.twin, tuple(transfers.host(v) for v in inputs))


def _errors_matter() -> bool:
    """``np.seterr`` makes floating-point errors raise or call a handler: kernels (which signal
    nothing) must not run; NumPy does. (Its default warnings are not reproduced on the GPU.)"""
    return any(mode in ("raise", "call", "log") for mode in np.geterr().values())


def as_output(value: Any, on_device: bool, transfers: Transfers) -> Any:
    """A returned value: a device array when the call's arrays are on the device, else a host
    value (0-d results stay host values: NumPy scalars)."""
    if not on_device:
        return transfers.host(value)
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return transfers.device(value)
    return value

