"""``ac.show(fn)``: print every cache entry's generated source."""

from __future__ import annotations

import sys
import types
from typing import Any, TextIO

SECTIONS = ("rewritten_code", "guards", "graph_code", "backward_code", "output_code")


def _section(entry: Any, section: str) -> str:
    """An entry's generated source; ``backward_code``: the backward part of its graph (the
    nodes ``ac.grad`` emitted), empty when it has none."""
    if section == "backward_code":
        from ..autodiff.reverse import backward_source
        graph = getattr(entry, "graph", None)
        return backward_source(graph) if graph is not None else ""
    return getattr(entry, section)


def format_entries(compiled: Any, depth: int = 0) -> str:
    entries = compiled.entries
    lines = [f"=== {compiled.title}: {len(entries)} cache entr{'y' if len(entries) == 1 else 'ies'}"]
    if not entries:
        lines.append("(not compiled yet: call the function once)")
    for index, entry in enumerate(entries):
        lines.append("")
        status = ("split at a graph break" if entry.pieces else "eager fallback" if entry.is_eager
                  else "loaded from the persistent cache" if entry.graph is None
                  else f"{entry.graph.op_count()} ops")
        lines.append(f"--- entry {index} ({status}, compiled in {entry.compile_time * 1e3:.1f} ms)")
        if entry.break_reason is not None:
            lines.append(f"graph break: {entry.break_reason.reason}")
            for filename, lineno, text in entry.break_reason.user_stack[-1:]:
                lines.append(f"  at {filename}:{lineno}: {text.strip()}")
        for section in SECTIONS:
            text = _section(entry, section)
            if text:
                lines.append(f"\n# ----- {section} -----")
                lines.append(text.rstrip("\n"))
        for piece in entry.pieces:
            lines.append("")
            lines.append(format_entries(piece, depth + 1).rstrip("\n"))
    return "\n".join(lines) + "\n"


def show(fn: Any, file: TextIO | None = None) -> None:
    """Print the generated source of every cache entry of a compiled function:
    rewritten code, guards, graph and output (kernel) code."""
    from .compiled import CompiledFunction
    if isinstance(fn, types.MethodType):  # a compiled bound method: its compiled function
        fn = fn.__func__
    compiled = getattr(fn, "_compiled_call", None) or getattr(fn, "_ac_compiled", fn)
    if not isinstance(compiled, CompiledFunction):
        raise TypeError(f"astcompiler.show expects a function returned by astcompiler.compile, "
                        f"got {type(fn).__name__}")
    (file or sys.stdout).write(format_entries(compiled))
