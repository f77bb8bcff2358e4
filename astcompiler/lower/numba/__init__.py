"""The ``numba`` CPU backend: fused loop-nest kernels, a generated wrapper, real files.

``numba_backend(graph, example_inputs)``:

1. ``plan.build_plan``: a target-independent fusion plan (pointwise chains, reductions with their
   producers and per-row consumers, ordering barriers at mutations; views, extern, creation ops and
   anything a kernel cannot compute are evaluated with NumPy by the wrapper);
2. ``cpu.kernel_code``: one numba module per kernel (a serial function and a ``prange`` twin);
3. ``wrapper.WrapperWriter``: the ``output_code`` wrapper that allocates, calls and returns;
4. ``files``: every module is written to ``<cache_dir>/kernels`` under a content-addressed name
   and imported from there (numba's disk cache needs real files).

Graphs with control-flow regions are one ``structured.py`` njit function when every op in them
has a loop lowering; otherwise they are lowered piece by piece (``host.py``): each region is a
structured piece on its own or a host loop in the wrapper whose subgraphs are lowered by
``lower_graph`` again. A graph of which nothing compiles (no kernel, no compiled loop) says so in
``CompiledGraph.prefer_original``: the entry then runs the user's function. ``output_code`` starts
with a summary of what runs where.

numba types and compiles a kernel at its first call, so a typing or lowering error surfaces when
the graph first runs: ``RunFallback`` then restores the inputs it had written to on that first
call and runs the call again with that kernel replaced by its NumPy twin (``numpy_twins.py``; one
warning, one ``graph_breaks`` log record), or, where that cannot be done (a structured function),
runs the graph with NumPy for good. The
kernels' own run-time errors (``ZeroDivisionError``, ``OverflowError``) are the program's and
propagate as in eager.

Nothing here is imported by ``import astcompiler``; numba is imported on first use.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from ...config import config
from ...graph import Graph
from ...ops import REGISTRY
from ..base import CompiledGraph, RunFallback
from .rebuild import WrapperRebuild

if TYPE_CHECKING:
    from .host import Lowering
    from .plan import Plan

__all__ = ["numba_backend", "lower_graph", "build_plan", "Plan"]


def __getattr__(name: str) -> Any:
    """``build_plan`` and ``Plan`` load ``plan`` (and the op registry, sympy) on first use:
    generated wrappers import ``runtime`` from here, also on a warm start that compiles nothing."""
    if name in ("build_plan", "Plan"):
        from . import plan
        return getattr(plan, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_log = logging.getLogger("astcompiler.lower.numba")


def numba_backend(graph: Graph, example_inputs: list) -> CompiledGraph:
    """Lower ``graph`` to numba kernels plus a NumPy wrapper; returns a ``CompiledGraph``."""
    from ..inline import inline_nonstrict_calls
    from .loop_kernels import drop_dead_carried

    inline_nonstrict_calls(graph)  # nonstrict_trace calls fuse with what surrounds them
    drop_dead_carried(graph)  # loop state nothing reads is not stored every trip
    return _guarded_lowering(graph, list(example_inputs), "forward", False).compiled


def lower_graph(graph: Graph, example_inputs: list, name: str = "forward",
                numpy_only: bool = False, structured: bool = True) -> Lowering:
    """One graph (the top level or a region's subgraph) as numba code, best piece first.

    No regions: the plan's kernels and NumPy steps in a wrapper. Regions: one structured njit
    function when every op has a loop lowering, else piece by piece (``host.py``): the plan
    treats regions as steps, each one a structured piece or a host loop whose subgraphs are
    lowered here again. ``numpy_only``: no kernels at all (layout exactness, see
    ``plan.layout_hazards``). ``structured=False``: no structured functions (the lowering that
    replaces one numba could not compile).
    """
    from .host import Lowering, RegionWriter
    from .plan import NodeStep, build_plan
    from .scans import scan_key

    has_regions = any(n.op == "region" for n in graph.nodes)
    why = ""
    if has_regions and not numpy_only and structured:
        whole, why = structured_function(graph, example_inputs, guarded=name == "forward")
        if whole is not None:
            summary = ["one structured numba function (loops and branches inside the kernel)"]
            whole.output_code = _header(summary) + whole.output_code
            return Lowering(whole, summary)
    accept = _never if numpy_only else _kernel_accepts
    plan = build_plan(graph, list(example_inputs), accept=accept, gathers=True)
    def lower_sub(sub: Graph, sub_name: str, sub_numpy_only: bool) -> Lowering:
        return _sub_lowering(sub, sub_name, sub_numpy_only, structured)

    regions = RegionWriter(lower_sub, structured_function if structured else _not_structured,
                           numpy_only) if has_regions else None
    compiled = _compile(plan, name, regions)
    summary = _summary(plan, regions, why)
    nothing = not plan.kernels and (regions is None or not any(
        p.compiled_anything for p in regions.pieces)) and not any(
        isinstance(s, NodeStep) and scan_key(s.node) is not None for s in plan.steps)
    if nothing:
        compiled.prefer_original = "no kernel and no compiled loop: every op runs with NumPy"
    compiled.output_code = _header(summary) + compiled.output_code
    return Lowering(compiled, summary)


def _header(summary: list[str]) -> str:
    return "# numba backend, what runs where:\n" + "".join(f"#   {line}\n" for line in summary)


def _sub_lowering(graph: Graph, name: str, numpy_only: bool, structured: bool) -> Lowering:
    """A region's subgraph (its placeholders' metas say which are Python scalars)."""
    from ..inline import inline_nonstrict_calls

    inline_nonstrict_calls(graph)
    return _guarded_lowering(graph, [None] * len(graph.placeholders), name, numpy_only,
                             structured)


def _guarded_lowering(graph: Graph, example_inputs: list, name: str,
                      numpy_only: bool, structured: bool = True) -> Lowering:
    from .host import Lowering
    try:
        return lower_graph(graph, example_inputs, name, numpy_only, structured)
    except Exception as err:  # a backend bug must not break the user's program
        _log.warning("numba backend failed (%s: %s); the graph runs with NumPy",
                     type(err).__name__, err, exc_info=True)
        reason = f"the numba backend failed: {type(err).__name__}: {err}"
        return Lowering(_unlowered(graph, reason), [f"NumPy op by op ({reason})"])


def _numpy_lowering(graph: Graph, name: str) -> Any:
    """A kernel's NumPy twin: its nodes as NumPy steps in a generated function."""
    return _guarded_lowering(graph, [None] * len(graph.placeholders), name, True).compiled.fn


def _kernel_lowering(graph: Graph, name: str) -> Any:
    """A kernel's transposed twin (``transposed.py``): its graph lowered with kernels."""
    return _guarded_lowering(graph, [None] * len(graph.placeholders), name, False).compiled.fn


def _never(node: Any, rule: Any) -> bool:
    return False


def _kernel_accepts(node: Any, rule: Any) -> bool:
    """A kernel holds the node: NumPy's loop is not faster (``numpy_simd``) and it compiles."""
    from .cpu import rule_compiles
    from .numpy_simd import keeps_numpy_loop
    from .sum_orders import numpy_faster_sum, numpy_sum_order

    return not keeps_numpy_loop(node, rule) and not numpy_sum_order(node, rule) \
        and not numpy_faster_sum(node, rule) and not _may_outgrow_int64(node) \
        and rule_compiles(node, rule)


def _may_outgrow_int64(node: Any) -> bool:
    """A Python int result (``n ** 5`` of a dynamic int) of an op whose 64-bit arithmetic is
    not Python's (``OpDef.python_int``): the wrapper computes it with Python's ints."""
    meta = node.meta
    if meta is None or meta.pytype is not int:
        return False
    op = REGISTRY.ops.get(node.target)
    return op is None or op.python_int != "exact"


def _not_structured(graph: Graph) -> tuple[None, str]:
    return None, "a structured numba function did not compile"


def _summary(plan: Plan, regions: Any, why: str) -> list[str]:
    """What runs where, for the top of ``output_code``."""
    from .oprules_common import reads_index, stores_index
    from .plan import NodeStep
    from .scans import scan_key
    lines = []
    if why:
        lines.append(f"piece by piece: not one structured numba function ({why})")
    if plan.kernels:
        names = [k.name for k in plan.kernels]
        more = f", ... ({len(names)} kernels)" if len(names) > 6 else ""
        lines.append("kernels: " + ", ".join(names[:6]) + more)
    numpy = sorted({s.node.target for s in plan.steps if isinstance(s, NodeStep)
                    and s.node.op == "call" and not reads_index(s.node)
                    and not stores_index(s.node) and scan_key(s.node) is None})
    if numpy:
        lines.append("NumPy calls in the wrapper: " + ", ".join(numpy))
    scans = sorted({s.node.target for s in plan.steps
                    if isinstance(s, NodeStep) and scan_key(s.node) is not None})
    if scans:
        lines.append("numba scans in the wrapper (scans.py): " + ", ".join(scans))
    for piece in regions.pieces if regions is not None else ():
        lines += piece.describe()
    if not lines:
        lines.append("views and indexing in the wrapper")
    return lines


def structured_function(graph: Graph, example_inputs: list | None = None,
                        guarded: bool = False) -> tuple[CompiledGraph | None, str]:
    """Graphs with control-flow regions as one njit function with real loops (``structured.py``),
    or None and why not. If numba cannot compile it when it first runs, the graph is lowered
    piece by piece without structured functions (host loops around kernels) and runs so.
    ``guarded``: the graph is the call's own (its inputs' shapes are guarded)."""
    from .files import load_source
    from .structured import NotLowerable, compile_structured

    try:
        compiled = compile_structured(graph, [],
                                      lambda prefix, source: load_source(prefix, source)[0],
                                      guarded)
    except NotLowerable as err:
        return None, f"no loop lowering for {err}"
    except Exception as err:  # a bug of the structured lowering: the pieces may still lower
        _log.warning("structured lowering failed (%s: %s); lowering piece by piece",
                     type(err).__name__, err, exc_info=True)
        return None, f"the structured lowering failed ({type(err).__name__}: {err})"
    # one njit function: numba types all of it before it runs, so re-running is exact
    inputs = list(example_inputs) if example_inputs is not None else [None] * len(
        graph.placeholders)
    fallback = RunFallback(_LazyPieces(graph, inputs), is_numba_compile_error,
                           title="the structured numba kernel of a graph",
                           instead="piece by piece (host loops around kernels)")
    compiled.fn = fallback.wrap(compiled.fn)
    if compiled.rebuild is not None:
        compiled.rebuild.fallback = fallback
    return compiled, ""


def _compile(plan: Plan, name: str = "forward", regions: Any = None) -> CompiledGraph:
    from .cpu import kernel_code
    from .files import load_source
    from .numpy_twins import KernelTwins
    from .wrapper import WrapperWriter, checks_fp

    codes, modules, files, kernels = {}, {}, [], {}
    for kernel in plan.kernels:
        code = kernel_code(kernel, plan, cache=bool(config.numba_cache),
                           clears_fp=checks_fp(kernel))  # (the wrapper tests its flags after)
        _, stem, path = load_source(kernel.name, code.source)
        codes[kernel.index] = code
        modules[kernel.index] = stem
        files.append(path)
        kernels[kernel.name] = code.source
    writer = WrapperWriter(plan, codes, modules, int(config.parallel_threshold), name=name,
                           regions=regions)
    source = writer.build()
    module, _, path = load_source(name, source)
    placeholders = plan.graph.placeholders
    reference = _interpreter(plan.graph)
    fallback = RunFallback(
        lambda *inputs: forward(*inputs) if fallback.take_retry() else reference(*inputs),
        is_numba_compile_error, title="the numba kernels of a graph",
        mutated=tuple(i for i, node in enumerate(placeholders) if node in writer.mutated),
        effects_from=None if writer.effect_line is None else (path, writer.effect_line))
    forward = module.make_forward(*writer.consts, fallback)
    if writer.paste is not None:  # its body, for run/dispatch.py to paste where it is called
        forward.paste = writer.paste
    fallback.localize = KernelTwins(forward.__globals__, list(codes.values()), _numpy_lowering,
                                    _kernel_lowering)
    output_code = _readable(source, codes, files)
    files = [path] + files
    for piece in regions.pieces if regions is not None else ():
        for part_name, part in piece.parts:
            output_code += (f"\n# ==== {part_name}: {piece.label} ({piece.kind}) ====\n"
                            + part.compiled.output_code)
            files += part.compiled.files
            kernels.update(part.compiled.kernels)
    rebuild = None if regions is not None else WrapperRebuild(
        path, files[1:], list(writer.consts), fallback.mutated, fallback.effects_from,
        fallback.title, fallback, writer.paste)
    return CompiledGraph(forward, output_code=output_code, files=files, kernels=kernels,
                         rebuild=rebuild)


class _LazyPieces:
    """The graph lowered without structured functions, built at its first call."""

    def __init__(self, graph: Graph, example_inputs: list):
        self.graph, self.example_inputs = graph, example_inputs
        self.fn: Any = None

    def __call__(self, *inputs: Any) -> tuple:
        if self.fn is None:
            self.fn = _guarded_lowering(self.graph, self.example_inputs, "forward", False,
                                        structured=False).compiled.fn
        return self.fn(*inputs)


def _readable(wrapper: str, codes: dict[int, Any], files: list[str]) -> str:
    parts = [wrapper]
    for (index, code), path in zip(sorted(codes.items()), files):
        parts.append(f"\n# ---- {code.name}  ({path}) ----\n{code.source}")
    return "\n".join(parts)


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


def _unlowered(graph: Graph, reason: str) -> CompiledGraph:
    """A graph the backend could not lower at all: op by op (for callers of the backend), and
    ``prefer_original`` tells the entry to run the user's function instead."""
    code = (f"# numba backend: nothing compiled, the user's function runs ({reason})\n"
            + graph.print_readable("forward", print_output=False))
    return CompiledGraph(_interpreter(graph), output_code=code, prefer_original=reason)
