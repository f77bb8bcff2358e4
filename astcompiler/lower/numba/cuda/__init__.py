"""The numba CUDA target: the numba backend's plan and op table, ``numba.cuda.jit`` kernels.

``cuda_backend(graph, example_inputs)``:

1. ``plan.build_plan`` with ``kernels.cuda_accepts`` (the target's veto): the CPU target's
   target-independent fusion plan; nodes the GPU does not run are NumPy steps on the host;
2. ``kernels.cuda_kernel_code``: each pointwise kernel as one grid-stride ``cuda.jit`` kernel,
   element expressions from the op table's scalar rules (shared with the CPU target), one
   content-addressed source file per kernel (``files.py``);
3. ``wrapper.CudaWrapperWriter``: the ``output_code`` wrapper (transfers, launches, host steps);
   ``runtime.py`` is what it calls; ``launch.py`` the geometry from run-time sizes.

``devices.py`` selects the target (``device="cuda"``, or device arrays among the inputs), raises
the error that says how to enable one, and makes the host stand-ins capture works on.
Not yet on the GPU: reductions, row kernels, matmul, loop regions (they run with NumPy on the
host, copies included; ``output_code`` says what runs where). See docs/cuda.md.
"""

from __future__ import annotations

import logging
from typing import Any

from ....graph import Graph
from ...base import CompiledGraph

__all__ = ["cuda_backend"]

_log = logging.getLogger("astcompiler.lower.numba.cuda")


def cuda_backend(graph: Graph, example_inputs: list, on_device: bool = False) -> CompiledGraph:
    """Lower ``graph`` for the CUDA target; a failure of this target gives the same wrapper
    with every node a NumPy step on the host (exact, slower). ``on_device``: the call's arrays
    are device arrays (the entry's guard pins each argument's kind), so results are too."""
    from ...inline import inline_nonstrict_calls
    from .devices import require_cuda

    require_cuda()
    inline_nonstrict_calls(graph)
    try:
        return _lower(graph, list(example_inputs), on_device, host_only=False)
    except Exception as err:  # noqa: BLE001 - a bug of the target must not break the program
        _log.warning("the CUDA target failed (%s: %s); the graph runs with NumPy on the host",
                     type(err).__name__, err, exc_info=True)
        return _lower(graph, list(example_inputs), on_device, host_only=True,
                      why=f"the CUDA target failed: {type(err).__name__}: {err}")


def _never(node: Any, rule: Any) -> bool:
    return False


def _lower(graph: Graph, example_inputs: list, on_device: bool, host_only: bool,
           why: str = "") -> CompiledGraph:
    from ..files import load_source
    from ..plan import NodeStep, build_plan
    from . import runtime
    from .kernels import cuda_accepts, cuda_kernel_code, gpu_kernel
    from .launch import LAUNCH
    from .wrapper import CudaWrapperWriter

    accept = _never if host_only else cuda_accepts
    plan = build_plan(graph, example_inputs, accept=accept)
    codes, kernels, files, modules = {}, {}, [], {}
    for kernel in plan.kernels:
        code = cuda_kernel_code(kernel, plan, LAUNCH.threads)
        codes[kernel.index] = code
        if code.source:
            modules[kernel.name], _, path = load_source(kernel.name + "_cuda", code.source)
            kernels[kernel.name] = code.source
            files.append(path)
    writer = CudaWrapperWriter(plan, codes, on_device)
    source = writer.build()
    module, _, path = load_source("forward_cuda", source)
    launchers = []
    for code in writer.kernels:
        module_of = modules.get(code.name)
        launchers.append(runtime.KernelLauncher(
            None if module_of is None else getattr(module_of, code.name),
            None if module_of is None or not code.merge_name else getattr(module_of,
                                                                          code.merge_name),
            code))
    forward = module.make_forward(runtime, [runtime.HostStep(n) for n in writer.steps],
                                  launchers)
    numpy = sorted({s.node.target for s in plan.steps if isinstance(s, NodeStep)
                    and s.node.op == "call"})
    summary = [why] if why else []
    gpu = [k.name for k in plan.kernels if gpu_kernel(k)]
    if gpu:
        summary.append("CUDA kernels (cuda.jit, grid-stride): " + ", ".join(gpu))
    host = [k.name for k in plan.kernels if not gpu_kernel(k)]
    if host:
        summary.append("fused groups the GPU does not run yet (column, two-pass or arg "
                       "reductions, masked stores): NumPy on the host: " + ", ".join(host))
    if numpy:
        summary.append("NumPy on the host (inputs copied back, results copied up when a kernel "
                       "reads them): " + ", ".join(numpy))
    if any(s.node.op == "region" for s in plan.steps if isinstance(s, NodeStep)):
        summary.append("control-flow regions: host loops of NumPy steps")
    header = "# numba CUDA target, what runs where:\n" + "".join(
        f"#   {line}\n" for line in summary)
    output_code = header + "\n".join(
        [source] + [f"\n# ---- {c.name}  ({p}) ----\n{c.source}"
                    for c, p in zip([c for c in codes.values() if c.source], files)])
    return CompiledGraph(forward, output_code=output_code, files=[path] + files, kernels=kernels)
