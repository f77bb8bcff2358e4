"""The ``numba`` CPU backend: fused loop-nest kernels, a generated wrapper, real files.

``numba_backend(graph, example_inputs)``:

1. ``plan.build_plan``: a target-independent fusion plan (pointwise chains, reductions with their
   producers and per-row consumers, ordering barriers at mutations; views, extern, creation ops and
   anything a kernel cannot compute are evaluated with NumPy by the wrapper);
2. ``cpu.kernel_code``: one numba module per kernel (a serial function and a ``prange`` twin);
3. ``wrapper.WrapperWriter``: the ``output_code`` wrapper that allocates, calls and returns;
4. ``files``: every module is written to ``<cache_dir>/kernels`` under a content-addressed name
   and imported from there (numba's disk cache needs real files).

numba types and compiles a kernel at its first call, so a typing or lowering error surfaces when
the graph first runs: ``RunFallback`` then runs the graph with NumPy for good (one warning, one
``graph_breaks`` log record), restoring the inputs it had written to on that first call. The
kernels' own run-time errors (``ZeroDivisionError``, ``OverflowError``) are the program's and
propagate as in eager.

Nothing here is imported by ``import astcompiler``; numba is imported on first use.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ...config import config
from ...graph import Graph
from ..base import CompiledGraph, RunFallback
from .plan import Plan, build_plan

__all__ = ["numba_backend", "build_plan", "Plan"]

_log = logging.getLogger("astcompiler.lower.numba")


def numba_backend(graph: Graph, example_inputs: list) -> CompiledGraph:
    """Lower ``graph`` to numba kernels plus a NumPy wrapper; returns a ``CompiledGraph``."""
    from ..inline import inline_nonstrict_calls
    from .cpu import rule_compiles

    inline_nonstrict_calls(graph)  # nonstrict_trace calls fuse with what surrounds them
    plan = build_plan(graph, list(example_inputs), accept=rule_compiles)
    if plan.regions:
        return _structured(graph, list(example_inputs))
    if plan.eager is not None:
        return _eager(graph, plan.eager)
    try:
        return _compile(plan)
    except Exception as err:  # a backend bug must not break the user's program
        _log.warning("numba backend failed (%s: %s); the graph runs with NumPy",
                     type(err).__name__, err, exc_info=True)
        return _eager(graph, f"the numba backend failed: {type(err).__name__}: {err}")


def _compile(plan: Plan) -> CompiledGraph:
    from .cpu import kernel_code
    from .files import load_source
    from .wrapper import WrapperWriter

    codes, modules, files, kernels = {}, {}, [], {}
    for kernel in plan.kernels:
        code = kernel_code(kernel, plan, cache=bool(config.numba_cache))
        _, stem, path = load_source(kernel.name, code.source)
        codes[kernel.index] = code
        modules[kernel.index] = stem
        files.append(path)
        kernels[kernel.name] = code.source
    writer = WrapperWriter(plan, codes, modules, int(config.parallel_threshold))
    source = writer.build()
    module, _, path = load_source("forward", source)
    placeholders = plan.graph.placeholders
    fallback = RunFallback(
        _interpreter(plan.graph), is_numba_compile_error, title="the numba kernels of a graph",
        mutated=tuple(i for i, node in enumerate(placeholders) if node in writer.mutated),
        effects_from=None if writer.effect_line is None else (path, writer.effect_line))
    forward = module.make_forward(*writer.consts, fallback)
    output_code = _readable(source, codes, files)
    return CompiledGraph(forward, output_code=output_code, files=[path] + files, kernels=kernels)


def _readable(wrapper: str, codes: dict[int, Any], files: list[str]) -> str:
    parts = [wrapper]
    for (index, code), path in zip(sorted(codes.items()), files):
        parts.append(f"\n# ---- {code.name}  ({path}) ----\n{code.source}")
    return "\n".join(parts)


def _structured(graph: Graph, example_inputs: list) -> CompiledGraph:
    """Graphs with control-flow regions: one njit function with real loops (``structured.py``)."""
    from .files import load_source
    from .structured import NotLowerable, compile_structured

    try:
        compiled = compile_structured(graph, example_inputs,
                                      lambda prefix, source: load_source(prefix, source)[0])
    except NotLowerable as err:
        return _eager(graph, f"a region holds an op without a structured lowering: {err}")
    except Exception as err:  # a backend bug must not break the user's program
        _log.warning("structured lowering failed (%s: %s); the graph runs with NumPy",
                     type(err).__name__, err, exc_info=True)
        return _eager(graph, f"the structured lowering failed: {type(err).__name__}: {err}")
    # one njit function: numba types all of it before it runs, so re-running eagerly is exact
    fallback = RunFallback(_interpreter(graph), is_numba_compile_error,
                           title="the structured numba kernel of a graph")
    compiled.fn = fallback.wrap(compiled.fn)
    return compiled


def _interpreter(graph: Graph) -> Any:
    from ..eager import interpret

    def run(*inputs: Any) -> tuple:
        return interpret(graph, inputs)
    return run


def is_numba_compile_error(error: BaseException) -> bool:
    """numba could not type or lower a kernel (at its first call with these types). The kernels'
    own run-time errors (``ZeroDivisionError``, ``OverflowError``, ...) are not: they are raised
    by compiled code, never from numba's compiler frames."""
    from numba.core.errors import NumbaError
    if isinstance(error, NumbaError):
        return True
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "_compile_for_args" and f"{os.sep}numba{os.sep}" in code.co_filename:
            return True
        tb = tb.tb_next
    return False


def _eager(graph: Graph, reason: str) -> CompiledGraph:
    from ..eager import interpret

    def run(*inputs: Any) -> tuple:
        return interpret(graph, inputs)

    code = (f"# numba backend: this graph runs op by op with NumPy ({reason})\n"
            + graph.print_readable("forward", print_output=False))
    return CompiledGraph(run, output_code=code)
