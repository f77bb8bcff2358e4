"""Device loops: a ``for`` loop region whose body one thread block can run is ONE kernel launch,
the loop inside the kernel, instead of a host loop launching the body's kernels every trip.

The rule (``device_loop`` at compile time, ``DeviceLoopLauncher.fits`` per call):

* compile time: a ``for_range`` region that writes no outer array, whose body's plan is only
  pointwise GPU kernels (no NumPy step on the host, product, reduction, masked store or nested
  region), without ``break`` (its "go on" output is the constant True), whose carried arrays
  are the body's kernel results of the same dtype and rank, or left unchanged; the loop
  variable may be carried (its value after the loop is computed on the host);
* per call: every array the loop reads or makes has at most one block's threads of elements
  (``LAUNCH.threads``), all C-ordered, and ``np.seterr`` does not make errors raise; else the
  host loop runs (``runtime.RegionLauncher``), which is exact for every loop.

The kernel: one block; per trip the body's kernels run as device functions over the block's
threads (a thread-strided loop each), ``cuda.syncthreads()`` between them, then the carried
arrays take the trip's results (a copy; another ``syncthreads``). Carried arrays live in device
buffers allocated per call (the caller's arrays are never written); each body result has its
own buffer, reused every trip. A set FP flag reruns the loop as the host loop, whose kernels
rerun their NumPy versions: NumPy's warnings, per op and trip, in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ....graph import Graph, Node, map_nodes
from ..optable import zero_rerun
from ..plan import KernelStep, NodeStep, Plan, write_targets
from .kernels import CudaEmitter, CudaKernelCode, gpu_kernel
from .launch import LAUNCH
from ...eager import interpret
from .runtime import (DeviceFlag, buffer_spans, c_ordered, errors_matter, kernel_graph,
                      launch_warnings, warn_compile_failure)


class DeviceFunctionEmitter(CudaEmitter):
    """A pointwise kernel as a device function over one block's threads."""

    DECORATOR = "@cuda.jit(device=True)"
    GRID = ("cuda.threadIdx.x", "cuda.blockDim.x")


@dataclass
class DeviceLoopCode:
    """The generated module of one device loop and what its launcher needs."""

    name: str
    source: str
    node: Node  # the region
    body: Plan
    kinds: list[str]  # per carried value: "result" (a kernel result), "same", "index"
    results: list[Node | None]  # per carried value: the body's node it takes ("result")
    # the loop kernel's arguments after (flag, start, stop, step): body placeholders and
    # kernel results, in order
    values: list[Node] = field(default_factory=list)


def _go_is_true(value: Any) -> bool:
    """The body's "go on" output is the constant True (no ``break``): a literal, or a call of
    constants only (no inputs) whose value is True."""
    if not isinstance(value, Node):
        return value is True
    if value.op != "call" or value.all_input_nodes():
        return False
    try:
        result = interpret(kernel_graph([value], [], [value]), ())[0]
    except Exception:  # noqa: BLE001 - not a constant we can evaluate: not a device loop
        return False
    return isinstance(result, (bool, np.bool_)) and bool(result)


def device_loop(node: Node, body: Graph | None, plan: Plan | None,
                codes: dict[int, CudaKernelCode] | None, name: str) -> DeviceLoopCode | None:
    """The device loop of ``node`` (a region), or None where the rule (module docstring)
    excludes it at compile time."""
    if node.target != "for_range" or body is None or plan is None or write_targets(node):
        return None
    info = node.info
    n = info.n_carried
    places = list(body.placeholders)
    outputs = list(body.output_node.args[0])
    if len(places) != 1 + n + info.n_captured or len(outputs) != n + 1 \
            or not _go_is_true(outputs[n]):
        return None
    kernels = []
    for step in plan.steps:
        if isinstance(step, NodeStep) and step.node is outputs[n]:
            continue  # the constant "go on"
        if not isinstance(step, KernelStep):
            return None
        kernel, code = step.kernel, codes.get(step.kernel.index)
        if code is None or not code.source or not gpu_kernel(kernel) or code.returns \
                or kernel.style != "pointwise" or kernel.store_into is not None:
            return None
        kernels.append((kernel, code))
    index, state = places[0], places[1:1 + n]
    made = {b for _, code in kernels for b in code.buffers}
    kinds, results = [], []
    for place, value in zip(state, outputs[:n]):
        if value is place:
            kinds.append("same")
            results.append(None)
        elif value is index:
            kinds.append("index")
            results.append(None)
        elif value in made and place.meta is not None and place.meta.ndim >= 1 \
                and value.meta.ndim == place.meta.ndim \
                and np.dtype(value.meta.dtype) == np.dtype(place.meta.dtype):
            kinds.append("result")
            results.append(value)
        else:
            return None
    moving = {p for p, kind in zip(state, kinds) if kind == "index"}
    for _, code in kernels:  # a carried index read in the body would change per trip
        if any(v in moving for v in code.inputs):
            return None
    return _write(node, name, plan, places, kinds, results, kernels)


def _write(node: Node, name: str, plan: Plan, places: list[Node], kinds: list[str],
           results: list[Node | None], kernels: list) -> DeviceLoopCode:
    index, n = places[0], len(kinds)
    names: dict[Node, str] = {index: "it"}
    values: list[Node] = []
    for position, place in enumerate(places[1:]):
        names[place] = f"s{position}" if position < n else f"c{position - n}"
        values.append(place)
    for _, code in kernels:
        for buffer in code.buffers:
            names[buffer] = f"t{len(values) - len(places) + 1}"
            values.append(buffer)
    functions, calls = [], []
    for kernel, code in kernels:
        emitter = DeviceFunctionEmitter(kernel, plan)
        functions.append(emitter.kernel_function())
        args = (["fp_flag"] if emitter.flagged else []) + [names[v] for v in code.inputs] + [
            names[b] for b in code.buffers]
        calls.append(f"        {kernel.name}({', '.join(args)})  # "
                     + ", ".join(m.target for m in kernel.nodes))
        calls.append("        cuda.syncthreads()")
    for position, (kind, result) in enumerate(zip(kinds, results)):
        if kind == "result":
            calls += _copy_lines(f"s{position}", names[result], result.meta.ndim)
    if any(kind == "result" for kind in kinds):
        calls.append("        cuda.syncthreads()  # the next trip reads the carried arrays")
    params = ["fp_flag", "start", "stop", "step"] + [names[v] for v in values]
    origin = f" ({node.origin})" if node.origin else ""
    source = "\n".join([
        f'"""{name}: CUDA device loop{origin}: the whole for loop in one kernel (one block).',
        "", "Generated by astcompiler's numba CUDA target. Body kernels: "
        + ", ".join(k.name for k, _ in kernels) + ".", '"""', "", "import numpy as np",
        "from numba import cuda", "", ""] + [f + "\n" for f in functions] + [
        "@cuda.jit", f"def {name}({', '.join(params)}):", "    it = start",
        "    while (step > 0 and it < stop) or (step < 0 and it > stop):  # the trips"]
        + calls + ["        it += step", ""])
    return DeviceLoopCode(name, source, node, plan, kinds, results, values)


def _copy_lines(state: str, result: str, ndim: int) -> list[str]:
    """``state[...] = result[...]`` over the block's threads (C order, same shapes)."""
    sizes = [f"{state}.shape[{d}]" for d in range(ndim)]
    lines = ["        f = cuda.threadIdx.x", f"        total = {' * '.join(sizes)}",
             f"        while f < total:  # {state} takes this trip's {result}", "            r = f"]
    for d in reversed(range(ndim)):
        if d == 0:
            lines.append("            j0 = r")
        else:
            lines += [f"            j{d} = r % {sizes[d]}", f"            r = r // {sizes[d]}"]
    at = ", ".join(f"j{d}" for d in range(ndim))
    lines += [f"            {state}[{at}] = {result}[{at}]",
              "            f += cuda.blockDim.x"]
    return lines


class DeviceLoopLauncher:
    """Runs a device loop (``DeviceLoopCode``) when it fits one block, else ``host`` (the host
    loop around the body's kernels); ``launches`` counts this launcher's kernel launches."""

    def __init__(self, kernel: Callable, code: DeviceLoopCode, host: Callable):
        self.kernel, self.code, self.host, self.name = kernel, code, host, code.name
        self.inputs = code.node.all_input_nodes()
        self.failed, self.flag = False, DeviceFlag()
        self.kernels = [s.kernel for s in code.body.steps if isinstance(s, KernelStep)]
        self.zeros = any(zero_rerun(n) for k in self.kernels for n in k.nodes)  # (the zero flag)

    def __call__(self, transfers: Any, *inputs: Any) -> tuple:
        info = self.code.node.info
        values = dict(zip(self.inputs, inputs))
        args = map_nodes(self.code.node.args, values.__getitem__)
        controls, state, captured = info.split(tuple(args))
        start, stop, step, enter = controls
        trips = range(int(start), int(stop), int(step))
        arrays = [v for v in (*state, *captured) if hasattr(v, "shape") and len(v.shape)]
        if self.failed or not enter or not len(trips) or errors_matter() \
                or not all(c_ordered(v) for v in arrays) \
                or any(_size(v) > LAUNCH.threads for v in arrays):
            return self.host(transfers, *inputs)
        made = self.buffers(transfers, state, captured)
        if made is None:
            return self.host(transfers, *inputs)
        carried, args = made
        try:
            self.launch([self.flag.device(), trips.start, trips.stop, trips.step] + args)
        except Exception as error:  # noqa: BLE001 - this target's compile/launch failure
            self.failed = True
            warn_compile_failure(self.name, error, "the loop runs as a host loop")
            return self.host(transfers, *inputs)
        if self.flag.taken(self.zeros):  # NumPy's warnings (or sign of a zero max/min): the
            # host loop reruns its kernels' NumPy twins
            return self.host(transfers, *inputs)
        last = trips[-1]
        return tuple(last if kind == "index" else value
                     for kind, value in zip(self.code.kinds, carried))

    def buffers(self, transfers: Any, state: tuple, captured: tuple) -> tuple | None:
        """(the carried values after the loop, the kernel's arguments): device copies of the
        carried arrays, the captured values, a buffer per body result; None when a size
        does not fit one block or a carried array's shape is not its result's."""
        from numba import cuda
        code, n = self.code, len(self.code.kinds)
        env: dict[Node, Any] = {}
        places = list(code.values[:n + len(captured)])
        carried = []
        for place, value, kind in zip(places, state, code.kinds):
            if kind == "result":
                source = transfers.device(value)
                copy = cuda.device_array(tuple(source.shape), source.dtype)
                copy.copy_to_device(source)
                env[place] = copy
            else:
                env[place] = value if kind == "index" else _operand(transfers, value)
            carried.append(env[place] if kind == "result" else value)
        for place, value in zip(places[n:], captured):
            env[place] = _operand(transfers, value)
        for kernel in self.kernels:
            shape = tuple(int(d) if not isinstance(d, tuple) else int(env[d[0]].shape[d[1]])
                          for d in kernel.dims)
            for buffer in kernel.outputs:
                dims = tuple(1 if d is None else shape[d] for d in buffer_spans(buffer, kernel))
                if int(np.prod(dims, dtype=np.int64)) > LAUNCH.threads:
                    return None
                env[buffer] = cuda.device_array(dims, np.dtype(buffer.meta.dtype))
        for place, kind, result in zip(places, code.kinds, code.results):
            if kind == "result" and tuple(env[place].shape) != tuple(env[result].shape):
                return None
        return carried, [env[v] for v in code.values]

    def launch(self, args: list) -> None:
        """One launch: one block of ``LAUNCH.threads`` threads runs every trip."""
        with launch_warnings():
            self.kernel[1, LAUNCH.threads](*args)



def _operand(transfers: Any, value: Any) -> Any:
    """A kernel argument: a device array, or a 0-d value as a scalar."""
    if hasattr(value, "shape") and len(value.shape):
        return transfers.device(value)
    return transfers.scalar(value)


def _size(value: Any) -> int:
    return int(np.prod(tuple(value.shape), dtype=np.int64))
