"""Print a Graph as readable Python source (``graph_code``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .ir import Graph, Node


def format_value(value: Any) -> str:
    """Python source for a node argument (Nodes by name, constants by repr)."""
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, slice):
        parts = [format_value(p) if p is not None else "" for p in (value.start, value.stop)]
        text = ":".join(parts)
        if value.step is not None:
            text += ":" + format_value(value.step)
        return text
    if value is Ellipsis:
        return "..."
    if isinstance(value, np.dtype):
        return f"np.{value.name}"
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"np.{value.__name__}"
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({value.item()!r})"
    if isinstance(value, float):
        return repr(value) if np.isfinite(value) else f"float({str(value)!r})"
    return repr(value)


def format_index(index: Any) -> str:
    items = index if isinstance(index, tuple) else (index,)
    text = ", ".join(format_value(i) for i in items)
    if isinstance(index, tuple) and len(index) == 1:
        text += ","
    return text or "()"


def format_call(node: Node) -> str:
    args = [format_value(a) for a in node.args]
    args += [f"{k}={format_value(v)}" for k, v in node.kwargs.items()]
    if node.target == "getitem":
        return f"{format_value(node.args[0])}[{format_index(node.args[1])}]"
    prefix = "np." if hasattr(np, node.target) else "ops."
    return f"{prefix}{node.target}({', '.join(args)})"


def _annotation(node: Node) -> str:
    return f': "{node.meta.short()}"' if node.meta is not None else ""


def format_region(node: Node, indent: str = "", note: str = "") -> list[str]:
    """A region node as source lines: its call, args and carries, then each subgraph's body
    (``note`` follows the origin comment on the first line)."""
    origin = f"  # {node.origin}{note}" if node.origin else ""
    if node.target == "nonstrict_call":  # one opaque call: one line
        args = ", ".join(format_value(a) for a in node.args)
        fn = node.info.names[0] if node.info.names else "fn"
        ops = node.info.subgraphs["body"].op_count()
        return [f"{indent}{node.name} = nonstrict_trace.{fn}({args}){origin}  (traced: {ops} ops)"]
    args = ", ".join(format_value(a) for a in node.args)
    lines = [f"{indent}{node.name} = region.{node.target}({args}){origin}",
             f"{indent}# args: {node.info.header()}"]
    if node.info.names:
        lines.append(f"{indent}# carries: {', '.join(node.info.names)}")
    for label, sub in node.info.subgraphs.items():
        lines.append(graph_to_source(sub, label, indent + "    ").rstrip("\n"))
    return lines


def graph_to_source(graph: Graph, name: str = "forward", indent: str = "") -> str:
    params = ", ".join(f"{n.name}{_annotation(n)}" for n in graph.placeholders)
    lines = [f"{indent}def {name}(self, {params}):" if params else f"{indent}def {name}(self):"]
    body = indent + "    "
    for node in graph.placeholders:
        lines.append(f"{body}# {node.name} = {node.target}")
    for node in graph.nodes:
        if node.op == "call":
            origin = f"  # {node.origin}" if node.origin else ""
            if node.target == "setitem":
                dst, index, value = node.args
                lines.append(f"{body}{format_value(dst)}[{format_index(index)}] = "
                             f"{format_value(value)}{origin}")
            elif node.target == "copy_":
                dst, src = node.args[:2]
                lines.append(f"{body}{format_value(dst)}[...] = {format_value(src)}{origin}")
            else:
                lines.append(f"{body}{node.name}{_annotation(node)} = {format_call(node)}{origin}")
        elif node.op == "region":
            lines.extend(format_region(node, body))
        elif node.op == "output":
            lines.append(f"{body}return {format_value(node.args[0])}")
    return "\n".join(lines) + "\n"
