"""A drawing of a graph (the records of ``run/trace.py``'s ``graph_record``) as inline SVG.

Graphviz ``dot`` when it is installed (``layout="auto"``), else a layered layout of our own:
each node's layer is its longest path from an input, nodes in a layer side by side, edges as
straight arrows between them.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from typing import Any

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 150, 38, 24, 34, 10
_COLOURS = {"placeholder": "#e3f2fd", "call": "#fff8e1", "region": "#f3e5f5", "output": "#e8f5e9"}


def node_label(node: dict[str, Any]) -> tuple[str, str]:
    """The two text lines of a node's box: its name or op, and its value's dtype and shape."""
    if node["op"] == "placeholder":
        return node["target"], node.get("meta", "")
    if node["op"] == "output":
        return "output", ""
    if node["name"] == node["target"]:
        return node["target"], node.get("meta", "")
    return node["target"], f'{node["name"]}: {node.get("meta", "")}'.rstrip(": ")


def layers(nodes: list[dict[str, Any]]) -> dict[str, int]:
    """Each node's layer: 0 for inputs, else one more than its deepest input."""
    layer: dict[str, int] = {}
    for node in nodes:  # graph order is topological
        layer[node["name"]] = 1 + max((layer.get(i, 0) for i in node["inputs"]), default=-1)
    return layer


def own_svg(nodes: list[dict[str, Any]]) -> str:
    """The layered layout, as an ``<svg class="graph">``."""
    layer = layers(nodes)
    rows: dict[int, list[dict[str, Any]]] = {}
    for node in nodes:
        rows.setdefault(layer[node["name"]], []).append(node)
    width = PAD * 2 + max((len(r) for r in rows.values()), default=1) * (BOX_W + GAP_X)
    height = PAD * 2 + max(len(rows), 1) * (BOX_H + GAP_Y)
    place: dict[str, tuple[float, float]] = {}
    for depth, row in rows.items():
        offset = (width - len(row) * (BOX_W + GAP_X) + GAP_X) / 2
        for i, node in enumerate(row):
            place[node["name"]] = (offset + i * (BOX_W + GAP_X), PAD + depth * (BOX_H + GAP_Y))
    parts = [f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
             f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#555"/>'
             "</marker></defs>"]
    for node in nodes:
        x2, y2 = place[node["name"]]
        for source in node["inputs"]:
            if source in place:
                x1, y1 = place[source]
                parts.append(f'<line class="edge" x1="{x1 + BOX_W / 2:.0f}" y1="{y1 + BOX_H:.0f}" '
                             f'x2="{x2 + BOX_W / 2:.0f}" y2="{y2:.0f}" stroke="#555" '
                             'marker-end="url(#arrow)"/>')
    for node in nodes:
        x, y = place[node["name"]]
        top, bottom = (html.escape(_clip(t)) for t in node_label(node))
        title = html.escape(f'{node["name"]} = {node["target"]}  {node.get("origin", "")}')
        parts.append(f'<g class="node" data-op="{html.escape(node["op"])}"><title>{title}</title>'
                     f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="5" '
                     f'fill="{_COLOURS.get(node["op"], "#eee")}" stroke="#777"/>'
                     f'<text x="{x + BOX_W / 2:.0f}" y="{y + 15:.0f}" text-anchor="middle" '
                     f'font-size="12" font-weight="600">{top}</text>'
                     f'<text x="{x + BOX_W / 2:.0f}" y="{y + 30:.0f}" text-anchor="middle" '
                     f'font-size="10" fill="#444">{bottom}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _clip(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def dot_source(nodes: list[dict[str, Any]]) -> str:
    """The graph in Graphviz's language."""
    def quote(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = ["digraph G {", '  node [shape=box, style="rounded,filled", fontsize=11, '
             'fontname="sans-serif"];']
    for node in nodes:
        top, bottom = node_label(node)
        label = top + (f"\\n{bottom}" if bottom else "")
        lines.append(f'  {quote(node["name"])} [label={quote(label)}, '
                     f'fillcolor="{_COLOURS.get(node["op"], "#eeeeee")}"];')
        lines.extend(f"  {quote(s)} -> {quote(node['name'])};" for s in node["inputs"])
    lines.append("}")
    return "\n".join(lines)


def dot_svg(nodes: list[dict[str, Any]]) -> str | None:
    """Graphviz's drawing, or None when ``dot`` is missing or fails."""
    dot = shutil.which("dot")
    if dot is None:
        return None
    try:
        done = subprocess.run([dot, "-Tsvg"], input=dot_source(nodes), capture_output=True,
                              text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    svg = done.stdout[done.stdout.find("<svg"):]
    return re.sub(r"^<svg", '<svg class="graph"', svg, count=1) if svg else None


def graph_svg(nodes: list[dict[str, Any]], layout: str = "auto") -> str:
    """``layout``: ``auto`` (Graphviz when installed), ``dot`` or ``own``."""
    if not nodes:
        return '<p class="muted">no graph (this entry runs eagerly or is split)</p>'
    if layout in ("auto", "dot"):
        drawn = dot_svg(nodes)
        if drawn is not None:
            return drawn
    return own_svg(nodes)
