"""The numba CUDA target: the numba backend's plan and op table, ``numba.cuda.jit`` kernels.

``cuda_backend(graph, example_inputs)``:

1. ``plan.build_plan`` with ``kernels.cuda_accepts`` (the target's veto): the CPU target's
   target-independent fusion plan; nodes the GPU does not run are NumPy steps on the host;
2. ``kernels.cuda_kernel_code``: each kernel of the plan as one ``cuda.jit`` kernel (pointwise
   grid-stride loops, block-tree reductions, one block per row, one thread per kept index),
   element expressions from the op table's scalar rules (shared with the CPU target), one
   content-addressed source file per kernel (``files.py``); ``matmul.py``: matrix products as
   a tiled shared-memory kernel;
3. ``wrapper.CudaWrapperWriter``: the ``output_code`` wrapper (transfers, launches, host steps,
   host loops around the kernels of loop regions, whose subgraphs are lowered here again);
   ``loops.py``: a loop whose body is pointwise kernels also as ONE kernel (a device loop),
   chosen per call when its arrays fit one block; ``runtime.py`` is what the wrapper calls;
   ``launch.py`` the geometry from run-time sizes.

``devices.py`` selects the target (``device="cuda"``, or device arrays among the inputs), raises
the error that says how to enable one, and makes the host stand-ins capture works on.
What the GPU does not run is a NumPy step on the host, copies included (``output_code`` says
what runs where). See docs/cuda.md.
"""

from __future__ import annotations

import logging
from typing import Any

from ....graph import Graph
from ...base import CompiledGraph

__all__ = ["cuda_backend"]

_log = logging.getLogger("astcompiler.lower.numba.gpu")


def cuda_backend(graph: Graph, example_inputs: list, on_device: bool | str = False
                 ) -> CompiledGraph:
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


def _lower(graph: Graph, example_inputs: list, on_device: bool | str, host_only: bool,
           why: str = "", keep: dict | None = None) -> CompiledGraph:
    """``keep``: receives the plan and kernel codes (a loop body's, for ``loops.device_loop``)."""
    from ...inline import inline_nonstrict_calls
    from ..files import load_source
    from ..plan import NodeStep, build_plan
    from . import runtime
    from .kernels import cuda_accepts, cuda_kernel_code, gpu_kernel
    from .launch import LAUNCH
    from .loops import DeviceLoopLauncher, device_loop
    from .matmul import MatmulCode, gpu_matmul
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
    writer = CudaWrapperWriter(plan, codes, on_device, gpu=not host_only)
    source = writer.build()
    module, _, path = load_source("forward_cuda", source)
    launchers: list = []
    for code in writer.kernels:
        if isinstance(code, MatmulCode):
            module_of, _, path = load_source(code.name + "_cuda", code.source)
            alone = None
            if code.epilogue is not None:  # the fused kernel by itself: the fallback
                alone = runtime.KernelLauncher(
                    getattr(modules[code.epilogue.name], code.epilogue.name), None,
                    code.epilogue)
            launchers.append(runtime.MatmulLauncher(getattr(module_of, code.name), code, alone))
            files.append(path)
            kernels[code.name] = code.source
            continue
        module_of = modules.get(code.name)
        launchers.append(runtime.KernelLauncher(
            None if module_of is None else getattr(module_of, code.name),
            None if module_of is None or not code.merge_name else getattr(module_of,
                                                                          code.merge_name),
            code))
    regions, parts, loops = [], [], []
    for node in writer.regions:
        bodies, kept = {}, {}
        for key, sub in node.info.subgraphs.items():
            inline_nonstrict_calls(sub)
            lowered = _lower(sub, [None] * len(sub.placeholders), "keep", host_only,
                             keep=kept.setdefault(key, {}))
            bodies[key] = lowered.fn
            parts.append(f"\n# ---- {node.target} ({node.origin}): subgraph {key!r} ----\n"
                         + lowered.output_code)
            files += lowered.files
        host = runtime.RegionLauncher(node, bodies)
        body = kept.get("body", {})
        loop = None if host_only else device_loop(
            node, node.info.subgraphs.get("body"), body.get("plan"), body.get("codes"),
            f"device_loop_{len(loops)}_{node.name}")
        if loop is None:
            regions.append(host)
            continue
        module_of, _, loop_path = load_source(loop.name + "_cuda", loop.source)
        regions.append(DeviceLoopLauncher(getattr(module_of, loop.name), loop, host))
        loops.append(f"{node.target} ({node.origin})")
        files.append(loop_path)
        kernels[loop.name] = loop.source
        parts.append(f"\n# ---- {loop.name}  ({loop_path}) ----\n{loop.source}")
    forward = module.make_forward(runtime, [runtime.HostStep(n) for n in writer.steps],
                                  launchers, regions)
    numpy = sorted({s.node.target for s in plan.steps if isinstance(s, NodeStep)
                    and s.node.op == "call" and (host_only or not gpu_matmul(s.node))})
    summary = [why] if why else []
    epilogues = {c.epilogue.name for c in writer.kernels
                 if isinstance(c, MatmulCode) and c.epilogue is not None}
    gpu = [k.name for k in plan.kernels if gpu_kernel(k) and k.name not in epilogues] + [
        c.name for c in writer.kernels if isinstance(c, MatmulCode)]
    if gpu:
        summary.append("CUDA kernels (cuda.jit, grid-stride): " + ", ".join(gpu))
    if epilogues:
        summary.append("pointwise kernels fused into matrix products' stores (their own "
                       "kernel is the fallback): " + ", ".join(sorted(epilogues)))
    host = [k.name for k in plan.kernels if not gpu_kernel(k)]
    if host:
        summary.append("fused groups the GPU does not run yet (column, two-pass or arg "
                       "reductions, masked stores): NumPy on the host: " + ", ".join(host))
    if numpy:
        summary.append("NumPy on the host (inputs copied back, results copied up when a kernel "
                       "reads them): " + ", ".join(numpy))
    if writer.regions:
        summary.append("control-flow regions: host loops around CUDA kernels (data stays on "
                       "the device between trips): "
                       + ", ".join(f"{n.target} ({n.origin})" for n in writer.regions))
    if loops:
        summary.append("device loops (the whole loop in one kernel when its arrays fit one "
                       "block, else the host loop): " + ", ".join(loops))
    if any(s.node.op == "region" and s.node not in writer.regions for s in plan.steps
           if isinstance(s, NodeStep)):
        summary.append("control-flow regions: host loops of NumPy steps")
    header = "# numba CUDA target, what runs where:\n" + "".join(
        f"#   {line}\n" for line in summary)
    shown = [c for c in codes.values() if c.source] + [
        c for c in writer.kernels if isinstance(c, MatmulCode)]
    output_code = header + "\n".join(
        [source] + [f"\n# ---- {c.name}  ({p}) ----\n{c.source}" for c, p in zip(shown, files)]
        + parts)
    if keep is not None:
        keep.update(plan=plan, codes=codes)
    return CompiledGraph(forward, output_code=output_code, files=[path] + files, kernels=kernels)
