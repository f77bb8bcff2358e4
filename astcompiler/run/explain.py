"""``ac.explain(fn)(*args)``: what compiling this call produces, without leaving cache entries."""

from __future__ import annotations

import types

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from ..graph import Graph


@dataclass
class BreakReason:
    reason: str
    user_stack: list[tuple[str, int, str]] = field(default_factory=list)

    def __str__(self) -> str:
        where = ""
        if self.user_stack:
            filename, lineno, text = self.user_stack[-1]
            where = f"\n    {filename}:{lineno}: {text.strip()}"
        return f"{self.reason}{where}"


@dataclass
class ExplainOutput:
    graphs: list[Graph]
    graph_count: int
    graph_break_count: int
    break_reasons: list[BreakReason]
    op_count: int
    ops_per_graph: list[list[str]]
    out_guards: list[str]
    compile_times: str

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            for index, reason in enumerate(self.break_reasons, 1):
                lines.append(f"  Break Reason {index}: {reason}")
        if self.ops_per_graph:
            lines.append("Ops per Graph:")
            for index, ops in enumerate(self.ops_per_graph, 1):
                lines.append(f"  Graph {index}: {', '.join(ops)}")
        if self.out_guards:
            lines.append("Out Guards:")
            lines.extend(f"  {guard}" for guard in self.out_guards)
        lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"


def explain(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``explain(fn)(*args, **kwargs)`` -> ExplainOutput. (``explain(fn, *args)`` still works,
    with a FutureWarning.)"""
    if args or kwargs:
        warnings.warn("astcompiler.explain(fn, *args) is deprecated: use explain(fn)(*args)",
                      FutureWarning, stacklevel=2)
        return explain(fn)(*args, **kwargs)

    def run(*call_args: Any, **call_kwargs: Any) -> ExplainOutput:
        from .compiled import CompiledFunction, forget, validate_function
        target = fn
        from ..nn.modules.module import Module
        module = getattr(fn, "_orig_mod", None)
        if module is None and isinstance(fn, Module):
            module = fn
        if module is not None:  # a module: explain its call (hooks and forward)
            from ..nn.compile_support import module_call
            call_args = (module, *call_args)
            target = module_call
        if isinstance(target, types.MethodType):  # a bound method: self is the first argument
            call_args = (target.__self__, *call_args)
            target = target.__func__
        original = validate_function(getattr(target, "_ac_original", target))
        probe = CompiledFunction(original, backend="eager")
        forget(probe)
        probe(*call_args, **call_kwargs)
        return _summarize(probe.entries)

    return run


def all_entries(entries: list) -> list:
    """Entries, and those of the pieces a graph break split them into, depth first."""
    found = []
    for entry in entries:
        found.append(entry)
        for piece in entry.pieces:
            found.extend(all_entries(piece.entries))
    return found


def _summarize(entries: list) -> ExplainOutput:
    entries = all_entries(entries)
    graphs = [e.graph for e in entries if e.graph is not None and e.graph.op_count() > 0]
    reasons = [BreakReason(e.break_reason.reason, list(e.break_reason.user_stack))
               for e in entries if e.break_reason is not None]
    ops_per_graph = [[n.target for n in g.call_nodes()] for g in graphs]
    guards = [f.source.name + f" ({f.kind})" for e in entries for f in e.guard.facts]
    times = ", ".join(f"{e.compile_time * 1e3:.1f} ms" for e in entries)
    return ExplainOutput(graphs=graphs, graph_count=len(graphs), graph_break_count=len(reasons),
                         break_reasons=reasons, op_count=sum(len(o) for o in ops_per_graph),
                         ops_per_graph=ops_per_graph, out_guards=guards,
                         compile_times=f"entries: {times}" if times else "none")
