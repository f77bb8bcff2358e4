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

import contextlib
import warnings
from typing import Any, Callable, Iterator

import numpy as np

from ....graph import Graph, Node, map_nodes
from ..optable import zero_rerun
from ..plan import ReductionRule
from ....logs import get_logger
from ....source.loading import user_stacklevel
from ...base import error_summary
from ...eager import interpret
from .devices import (array_layout, as_cupy, as_numba_array, c_strides, device_view, is_cupy,
                      is_device_array, to_host, write_back)
from .compat import failure_text, numpy_names_for_numba_cuda, quiet_launches
from .launch import LAUNCH, geometry


# a whole-array reduction the block trees do not run (arg-reductions, var/std, scalar work
# after it) is one GPU thread: up to this many elements; beyond, NumPy on the host is faster
SERIAL_WHOLE_LIMIT = 1 << 16


def c_ordered(value: Any) -> bool:
    """A host or device array laid out in C order (``ndim < 2``: always; size 0 or 1 too)."""
    shape = tuple(getattr(value, "shape", ()))
    if len(shape) < 2:
        return True
    strides = getattr(value, "strides", None)
    if strides is None:  # only ``__cuda_array_interface__`` (its strides None: C-contiguous)
        strides = getattr(value, "__cuda_array_interface__", {}).get("strides")
        if strides is None:
            return True
    expected = np.dtype(value.dtype).itemsize
    for size, stride in zip(reversed(shape), reversed(tuple(strides))):
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


class DeviceFlag:
    """A kernel's device flags: two int32 on the GPU, allocated at the first launch: the FP
    flag, set by a launch whose result NumPy would warn about, then the zero flag, set by a
    float max/min result that is a zero (NumPy's sign of it is its CPU SIMD lane order's);
    cleared when read."""

    def __init__(self) -> None:
        self.array: Any = None

    def device(self) -> Any:
        """The flag array to pass to the kernel (allocated once, zero unless a launch set it)."""
        if self.array is None:
            from numba import cuda
            self.array = cuda.to_device(np.zeros(2, np.int32))
        return self.array

    def taken(self, zeros: bool = False) -> bool:
        """The last launch set the FP flag while NumPy would warn, or (``zeros``: the kernel
        has float max/min results) the zero flag; then both are cleared for the next."""
        if self.array is None or not (zeros or warns()):
            return False
        fp, zero = self.array.copy_to_host()[:2]
        if not ((fp and warns()) or (zeros and zero)):
            return False
        self.array.copy_to_device(np.zeros(2, np.int32))
        return True


class Transfers:
    """The copies of one call: host -> device (uploads) and device -> host (downloads)."""

    def __init__(self) -> None:
        self.uploads: dict[int, tuple[Any, Any]] = {}
        self.downloads: dict[int, tuple[Any, Any]] = {}
        # id(device view) -> (view, its host step, the step's inputs, root, byte offset in root)
        self.views: dict[int, tuple[Any, Callable, tuple, Any, int]] = {}

    def device(self, value: Any) -> Any:
        """``value`` as a device array (itself when it is one); 0-d values as scalars."""
        if is_device_array(value):
            return as_numba_array(value)  # interface objects: a numba view (no copy)
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
        """``value`` as a host array (itself unless it is a device array); a device view's is
        its step on its input's host copy (a host view of it: writes reach the same storage)."""
        if not is_device_array(value):
            return value
        known = self.downloads.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        derived = self.views.get(id(value))
        if derived is not None and derived[0] is value:
            copy = derived[1](*(self.host(v) for v in derived[2]))
        else:
            copy = to_host(value)
        self.downloads[id(value)] = (value, copy)
        return copy

    def view(self, step: Callable, *values: Any) -> Any:
        """A view node (``step``: its NumPy on host values): NumPy's view of one device array
        (views of views too) as a device array viewing the same device memory, no copy, where
        NumPy gives a view with non-negative strides of a C-contiguous storage; NumPy's own
        result when it is the array itself; else the node with NumPy on host copies."""
        arrays = [v for v in values if is_device_array(v)]
        if len(arrays) == 1 and not any(isinstance(v, (np.ndarray, list, tuple))
                                        for v in values):
            base = arrays[0]
            root, start = self.root_of(base)
            found = None if root is None else view_geometry(step, values, base)
            if found == "same":
                return base
            if found is not None:
                offset, shape, strides, dtype = found
                view = device_view(root, start + offset, shape, strides, dtype)
                self.views[id(view)] = (view, step, values, root, start + offset)
                return view
        return step(*(self.host(v) for v in values))

    def root_of(self, array: Any) -> tuple[Any, int]:
        """The C-contiguous device storage ``array`` views and its first element's byte offset
        there; (None, 0) for another layout (its host copy may be laid out otherwise)."""
        derived = self.views.get(id(array))
        if derived is not None and derived[0] is array:
            return derived[3], derived[4]
        layout = array_layout(array)
        if layout is None or layout[1] != c_strides(layout[0], layout[2].itemsize):
            return None, 0
        return array, 0

    def scalar(self, value: Any) -> Any:
        """A 0-d operand as a scalar argument of a kernel."""
        if is_device_array(value):
            value = self.host(value)
        return value[()] if isinstance(value, np.ndarray) else value

    def known(self) -> tuple[set[int], set[int], set[int]]:
        """The keys of the copies and device views made so far (``retain`` never drops them)."""
        return set(self.uploads), set(self.downloads), set(self.views)

    def retain(self, values: tuple, before: tuple[set[int], set[int], set[int]]) -> None:
        """Forget the copies and device views made since ``before`` of anything but
        ``values`` (a loop's captured arrays and this trip's results): a long loop does not
        keep every trip's arrays alive. Older copies stay: host views of them may still be
        written (``written``)."""
        keep = {id(v) for v in values}
        for cache, old in zip((self.uploads, self.downloads, self.views), before):
            for key in [k for k in cache if k not in keep and k not in old]:
                del cache[key]

    def written(self, storages: tuple) -> None:
        """A host step wrote into arrays viewing ``storages``: device arrays among them get
        their (written) host copies back; every upload is stale."""
        for storage in storages:
            known = self.downloads.get(id(storage))
            if known is not None and known[0] is storage:
                write_back(storage, known[1])
        self.uploads.clear()


def view_geometry(step: Callable, values: tuple, array: Any) -> Any:
    """Where NumPy's result of the view node ``step(*values)`` lies in the device ``array``'s
    memory: ``(byte offset from its first element, shape, strides, dtype)``; ``"same"`` when
    NumPy returns the array itself; None when NumPy copies, or gives no array, an empty one
    or a negative stride. Found by running the step on a host shadow with the array's layout
    (uninitialised memory: view ops read no data; NumPy decides view or copy from the layout
    alone, so its exceptions are the plain call's)."""
    layout = array_layout(array)
    if layout is None:
        return None
    shape, strides, dtype = layout
    if 0 in shape or any(s < 0 for s in strides):
        return None
    span = dtype.itemsize + sum((n - 1) * s for n, s in zip(shape, strides))
    raw = np.empty(span, np.uint8)
    shadow = np.ndarray(shape, dtype, buffer=raw, strides=strides)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = step(*(shadow if v is array else v for v in values))
    if caught:
        return None  # the host step warns, once, as NumPy does
    if out is shadow:
        return "same"
    if type(out) is not np.ndarray or out.size == 0 or any(s < 0 for s in out.strides):
        return None
    offset = out.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
    end = offset + out.itemsize + sum((n - 1) * s for n, s in zip(out.shape, out.strides))
    if offset < 0 or end > span:
        return None  # a copy: NumPy's memory, not the shadow's
    return offset, out.shape, out.strides, out.dtype


def kernel_graph(nodes: list[Node], inputs: list[Node], outputs: list[Node]) -> Graph:
    """``nodes`` (in order) as a graph from ``inputs`` to ``outputs``; each copy keeps how it
    was written (``operator``: NumPy's scalar math on scalars) and where (``place``: NumPy's
    warnings name the user's line), so the host twin warns as the plain call."""
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
        env[node].operator, env[node].place = node.operator, node.place
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
        # per buffer dim: the kernel's dim it spans (None: size 1); rows kernels' per-row
        # outputs are F with 1s, or F's leading (outer) dims; columns kernels' are F with 1s,
        # or F's kept axes
        self.spans = [buffer_spans(n, plan) for n in code.buffers]
        self.serial = code.serial
        self.reduces = bool(plan.reduce_axes) or plan.style != "pointwise"
        self.results = [np.dtype(n.meta.dtype) for n in code.returns]
        # a whole-array reduction's partials: per reduction (the kernel's order), NaN flags,
        # arg-reductions' indices
        reductions = [n for n in plan.nodes if isinstance(plan.rules[n], ReductionRule)]
        self.accs = [np.dtype(plan.rules[n].acc_dtype) for n in reductions]
        self.flags = sum(bool(plan.rules[n].nan_flag) for n in reductions)
        self.args = sum(bool(plan.rules[n].arg) for n in reductions)
        self.rows, self.outer = code.rows, plan.outer
        self.reduce_axes = tuple(plan.reduce_axes) if plan.style == "columns" else \
            tuple(range(plan.outer, len(plan.dims)))
        self.scalars = [n.meta.shape == () for n in code.inputs]
        self.twin = kernel_graph(plan.nodes, code.inputs, code.buffers + code.returns)
        self.failed = kernel is None
        self.flagged, self.flag = code.flagged, DeviceFlag()
        # a float max/min result (an output or not) that is a zero sets the flag's second word
        self.zeros = any(zero_rerun(n) for n in plan.nodes)
        self.ddof = max([plan.rules[n].ddof for n in plan.nodes
                         if getattr(plan.rules[n], "two_pass", False)] or [-1])

    def count(self, shape: tuple[int, ...]) -> int:
        """Elements per kept index (the reduced axes' sizes)."""
        return int(np.prod([shape[d] for d in self.reduce_axes], dtype=np.int64))

    def shape(self, inputs: tuple) -> tuple[int, ...]:
        return tuple(int(d) if not isinstance(d, tuple) else
                     int(inputs[self.position[d[0]]].shape[d[1]]) for d in self.dims)

    def __call__(self, transfers: Transfers, *inputs: Any) -> tuple:
        if self.failed or not all(c_ordered(v) for v in inputs) or errors_matter():
            return self.host(transfers, inputs)  # NumPy's layout, or np.seterr's errors
        shape = self.shape(inputs)
        total = int(np.prod(shape, dtype=np.int64))
        if total == 0 and self.reduces:
            return self.host(transfers, inputs)  # an empty reduction: NumPy's value or error
        if self.serial and total == self.count(shape) and total > SERIAL_WHOLE_LIMIT:
            return self.host(transfers, inputs)  # one GPU thread would be slower than NumPy
        if self.ddof >= 0 and self.count(shape) <= self.ddof:
            return self.host(transfers, inputs)  # var/std without degrees of freedom: NumPy's
        from numba import cuda
        args = [transfers.scalar(v) if s else transfers.device(v)
                for v, s in zip(inputs, self.scalars)]
        outs = [cuda.device_array(tuple(1 if d is None else shape[d] for d in spans), dtype)
                for spans, dtype in zip(self.spans, self.dtypes)]
        if total == 0:
            return tuple(outs)
        if self.flagged:
            args.insert(0, self.flag.device())
        try:
            with launch_warnings():
                outs = self.launch(args, outs, shape, total)
        except Exception as error:  # noqa: BLE001 - kernels raise nothing of the program's:
            self.failed = True  # typing, NVVM/linking or launch failures of this target
            warn_compile_failure(self.name, error, "its nodes run with NumPy on the host")
            return self.host(transfers, inputs)
        if self.flagged and self.flag.taken(self.zeros):
            results = self.host(transfers, inputs)  # NumPy's own warnings, per op and in order
            if self.zeros:  # and NumPy's sign of a zero max/min (its CPU SIMD lane order's)
                return results
        return outs

    def launch(self, args: list, outs: list, shape: tuple, total: int) -> tuple:
        """Launch the kernel (and a reduction's second pass); its outputs and 0-d results."""
        from numba import cuda
        if self.rows:  # one block per row: the grid covers the rows
            rows = int(np.prod(shape[:self.outer], dtype=np.int64))
            self.kernel[geometry(rows * self.threads)[0], self.threads](*args, *outs)
            return tuple(outs)
        if self.serial:  # one thread per kept index; 0-d results in 1-element arrays
            kept = total // max(self.count(shape), 1)
            results = [cuda.device_array(1, dtype) for dtype in self.results]
            blocks, threads = geometry(kept)
            self.kernel[blocks, threads](*args, *outs, *results)
            return tuple(outs) + tuple(dtype.type(r.copy_to_host()[0])
                                       for dtype, r in zip(self.results, results))
        if self.merge is None:
            blocks, threads = geometry(total)
            self.kernel[blocks, threads](*args, *outs)
            return tuple(outs)
        return tuple(outs) + self.reduce(args, outs, total)

    def reduce(self, args: list, outs: list, total: int) -> tuple:
        """First pass (per-block partials), second pass (one block), results to the host."""
        from numba import cuda
        blocks, _ = geometry(total)
        parts = [cuda.device_array(blocks, dtype) for dtype in self.accs] + [
            cuda.device_array(blocks, np.bool_) for _ in range(self.flags)] + [
            cuda.device_array(blocks, np.int64) for _ in range(self.args)]
        self.kernel[blocks, self.threads](*args, *outs, *parts)
        results = [cuda.device_array(1, dtype) for dtype in self.results]
        offset = 1 if self.flagged else 0  # the FP flag, then the scalar inputs (work after)
        head = args[:offset] + [v for v, s in zip(args[offset:], self.scalars) if s]
        self.merge[1, self.threads](*head, *parts, np.int64(total), *results)
        return tuple(dtype.type(r.copy_to_host()[0]) for dtype, r in zip(self.results, results))

    def host(self, transfers: Transfers, inputs: tuple) -> tuple:
        return interpret(self.twin, tuple(transfers.host(v) for v in inputs))


class RegionLauncher:
    """A ``for_range`` / ``while_loop`` / ``cond`` region as a host loop (``eager.run_region``'s
    semantics) around its subgraphs' CUDA wrappers, which share the caller's ``Transfers``:
    kernel results stay on the device from trip to trip, captured host arrays are copied up
    once, writes go back as at the top level."""

    def __init__(self, node: Node, bodies: dict[str, Callable]):
        self.node, self.bodies = node, bodies
        self.inputs = node.all_input_nodes()

    def __call__(self, transfers: Transfers, *inputs: Any) -> tuple:
        info = self.node.info
        n = info.n_carried
        values = dict(zip(self.inputs, inputs))
        args = map_nodes(self.node.args, values.__getitem__)
        controls, state, captured = info.split(tuple(args))
        keep, before = tuple(captured), transfers.known()

        def run(key: str, *values: Any) -> tuple:
            results = self.bodies[key](*values, ___transfers=transfers)
            transfers.retain(keep + tuple(results), before)
            return results
        if self.node.target == "for_range":
            start, stop, step, enter = controls
            if not enter:
                return tuple(state)
            for index in range(int(start), int(stop), int(step)):
                results = run("body", index, *state, *captured)
                state, go = results[:n], results[n]
                if not go:
                    break
            return tuple(state)
        if self.node.target == "while_loop":
            while run("cond", *state, *captured)[-1]:
                state = run("body", *state, *captured)
            return tuple(state)
        key = "true" if controls[0] else "false"
        return tuple(run(key, *state, *captured))


class MatmulLauncher:
    """A matrix product on the GPU (``matmul.py``): ``launcher(transfers, a, b)`` returns
    ``(result,)``, a device array; CuPy's BLAS when CuPy is importable on a real GPU. Operand
    sizes NumPy rejects or broadcasts differently, a layout other than C order, or
    ``np.seterr`` modes that raise run the node with NumPy on the host. A NaN or infinite
    result element sets the kernel's FP flag: the product (and a fused epilogue) then reruns
    with NumPy on the host, which warns as the plain call does."""

    def __init__(self, kernel: Callable, code: Any, alone: KernelLauncher | None = None):
        """``alone``: the launcher of the fused epilogue kernel by itself (the fallback)."""
        self.kernel, self.code, self.name = kernel, code, code.name
        self.target = code.node.target
        self.dtype = np.dtype(code.node.meta.dtype)
        self.step = HostStep(code.node)
        self.failed = False
        self.alone, self.flag = alone, DeviceFlag()
        if alone is not None:
            self.scalars = [n.meta.shape == () for n in code.inputs]
            self.out_dtypes = [np.dtype(n.meta.dtype) for n in code.epilogue.buffers]
            self.positions = [None if n is code.node else code.inputs.index(n)
                              for n in code.epilogue.inputs]

    def __call__(self, transfers: Transfers, a: Any, b: Any, *rest: Any) -> tuple:
        if self.alone is not None:
            return self.fused(transfers, a, b, rest)
        return self.product(transfers, a, b)

    def alone_inputs(self, product: Any, rest: tuple) -> list:
        return [product if p is None else rest[p] for p in self.positions]

    def fused(self, transfers: Transfers, a: Any, b: Any, rest: tuple) -> tuple:
        """The product with the epilogue in its store; else the product, then the epilogue."""
        from .matmul import operand_shapes
        shapes = operand_shapes(self.target, tuple(a.shape), tuple(b.shape))
        if self.failed or shapes is None or len(shapes[3]) != len(self.code.node.meta.shape) \
                or errors_matter() \
                or not all(c_ordered(v) for v in (a, b, *rest)):
            return self.alone(transfers, *self.alone_inputs(self.product(transfers, a, b)[0],
                                                              rest))
        a3, b3, shape, result = shapes
        from numba import cuda
        args = [transfers.scalar(v) if s else transfers.device(v)
                for v, s in zip(rest, self.scalars)]
        outs = [cuda.device_array(result, dtype) for dtype in self.out_dtypes]
        args.insert(0, self.flag.device())
        try:
            if 0 not in shape:
                with launch_warnings():
                    self.kernel[self.grid(shape), (self.code.tile, self.code.tile)](
                        transfers.device(a).reshape(a3), transfers.device(b).reshape(b3),
                        *args, *outs)
        except Exception as error:  # noqa: BLE001 - this target's compile/launch failure
            self.failed = True
            warn_compile_failure(self.name, error, "the product and its epilogue run apart")
            return self.fused(transfers, a, b, rest)
        if self.flag.taken():
            product = self.step(transfers.host(a), transfers.host(b))  # NumPy's matmul warns,
            self.alone.host(transfers, tuple(self.alone_inputs(product, rest)))  # then these
        return tuple(outs)

    def grid(self, shape: tuple) -> tuple:
        tile = self.code.tile
        return tuple(min(max((size + tile - 1) // tile, 1), LAUNCH.max_blocks)
                     for size in (shape[2], shape[1])) + (min(shape[0], LAUNCH.max_blocks),)

    def product(self, transfers: Transfers, a: Any, b: Any) -> tuple:
        """The product alone (as ``(result,)``)."""
        from .matmul import cupy_module, operand_shapes
        if self.alone is not None:  # a fused product's own kernel has no plain store
            return (self.step(transfers.host(a), transfers.host(b)),)
        shapes = operand_shapes(self.target, tuple(a.shape), tuple(b.shape))
        if self.failed or shapes is None or not (c_ordered(a) and c_ordered(b)) \
                or errors_matter():
            return (self.step(transfers.host(a), transfers.host(b)),)
        a3, b3, shape, result = shapes
        cupy = cupy_module()
        if cupy is not None:  # CuPy's BLAS on the device arrays (their interface), no copies
            out = cupy.matmul(cupy.asarray(transfers.device(a)), cupy.asarray(transfers.device(b)))
            if warns() and out.size and not bool(cupy.isfinite(out).all()):  # BLAS sets no
                self.step(transfers.host(a), transfers.host(b))  # flag: NumPy's warnings
            # a numba view of CuPy's result (as_output makes it CuPy's again for CuPy inputs):
            # numba device arrays in gave a CuPy array out (seen on an H200)
            return (as_numba_array(out) if is_device_array(out) else out,)
        from numba import cuda
        da, db = transfers.device(a), transfers.device(b)
        out = cuda.device_array(shape, self.dtype)
        try:
            if 0 not in shape:
                tile = self.code.tile
                with launch_warnings():
                    self.kernel[self.grid(shape), (tile, tile)](da.reshape(a3), db.reshape(b3),
                                                                self.flag.device(), out)
        except Exception as error:  # noqa: BLE001 - this target's compile/launch failure
            self.failed = True
            warn_compile_failure(self.name, error, "the product runs with NumPy on the host")
            return (self.step(transfers.host(a), transfers.host(b)),)
        if 0 not in shape and self.flag.taken():
            self.step(transfers.host(a), transfers.host(b))  # NumPy's own warnings (or none)
        return (out.reshape(result),)


def buffer_spans(node: Node, kernel: Any) -> tuple[int | None, ...]:
    """Per dim of an output buffer: the kernel dim whose run-time size it has (None: 1)."""
    shape = tuple(node.meta.shape)
    ndim = len(kernel.dims)
    if len(shape) == ndim:
        return tuple(None if size == 1 else d for d, size in enumerate(shape))
    dims = list(kernel.kept_axes) if kernel.style == "columns" else list(range(ndim))
    return tuple(None if size == 1 else d for d, size in zip(dims, shape))


def errors_matter() -> bool:
    """``np.seterr`` makes floating-point errors raise or call a handler, or underflow warn:
    kernels (whose flags tell NaN and infinity only, after the fact) must not run; NumPy does.
    (Default warnings come from the device flag: ``KernelLauncher``.)"""
    modes = np.geterr()
    return modes["under"] != "ignore" or any(mode in ("raise", "call", "log")
                                             for mode in modes.values())


def warns() -> bool:
    """Some FP error NumPy reports by default warns (``np.errstate`` may silence all)."""
    modes = np.geterr()
    return any(modes[c] == "warn" for c in ("divide", "over", "invalid"))


def warn_compile_failure(kernel: str, error: BaseException, then: str) -> None:
    """The warning (and ``graph_breaks`` log line) of a kernel that numba could not compile or
    launch: ``then`` says what runs instead from now on."""
    message = (f"astcompiler: numba could not compile the CUDA kernel {kernel} "
               f"({failure_text(error, error_summary(error))}); {then} from now on")
    get_logger("graph_breaks").info("%s\n%s", message, error)
    warnings.warn(message, RuntimeWarning, stacklevel=user_stacklevel())


@contextlib.contextmanager
def launch_warnings() -> Iterator[None]:
    """Around this target's launches: no warning of numba's own. Under the simulator, kernels
    are Python on NumPy scalars, which warn themselves ("in scalar divide"): silenced, since
    the device flag decides (a GPU never warns). On a GPU, numba-cuda's low-occupancy
    ``NumbaPerformanceWarning`` for a grid the compiler chose (``compat.quiet_launches``), and
    the NumPy names numba-cuda expects at its first compile (``compat.py``)."""
    from .devices import simulator_enabled
    if not simulator_enabled():
        with quiet_launches(), numpy_names_for_numba_cuda():
            yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def as_output(value: Any, on_device: bool | str, transfers: Transfers) -> Any:
    """A returned value: a device array when the call's arrays are on the device, else a host
    value (0-d results stay host values: NumPy scalars)."""
    if on_device == "keep":  # a loop body's result: where it is (kernels' stay on the device)
        return value
    if not on_device:
        return transfers.host(value)
    if isinstance(value, np.ndarray) and value.ndim > 0:
        value = transfers.device(value)
    if on_device == "cupy" and is_device_array(value) and not is_cupy(type(value)):
        return as_cupy(value)  # CuPy arrays in, CuPy arrays out (a view, no copy)
    return value

