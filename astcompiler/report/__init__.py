"""``astcompiler report TRACE_DIR -o report.html``: one self-contained HTML page (inline CSS
and JavaScript, no network) of the compiles recorded under ``ASTCOMPILER_TRACE_DIR``
(``run/trace.py``).

The page: an index of the compiled functions with their counts, a timeline of the compile
phases, then per function its entries and recompile history and per compile its inputs, stance,
timings, graph break (linked to the user's line in the embedded source), a drawing of the graph
and every artefact with syntax highlighting. Its script records ``window.onerror`` errors and a
self-check of the page's elements into the DOM (``#js-errors``, ``#selfcheck``).
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from typing import Any

from ..run.trace import load_limit_hits, load_trace
from .graphsvg import graph_svg
from .highlight import CSS as CODE_CSS, code_block, pygments_available
from .page import PAGE_CSS, PAGE_SCRIPT

PHASES = ("setup", "capture", "guards", "lower", "run_code", "numba_jit")
PHASE_COLOURS = {"setup": "#b0bec5", "capture": "#42a5f5", "guards": "#ffa726",
                 "lower": "#ab47bc", "run_code": "#26a69a", "numba_jit": "#ef5350"}
ROW_H = 18  # pixels of one timeline row
ARTEFACT_TITLES = (("guards", "guards"), ("graph_code", "graph"),
                   ("output_code", "wrapper + kernels (output_code)"), ("run_code", "run code"),
                   ("rewritten_code", "rewritten source"),
                   ("split_code", "split at the graph break"))


@dataclass
class Function:
    """One compiled function of the trace and its compiles, in order."""

    key: str
    title: str
    file: str
    line: int
    compiles: list[dict[str, Any]] = field(default_factory=list)
    limit_hits: list[dict[str, Any]] = field(default_factory=list)  # run/trace.record_limit_hit

    @property
    def recompiles(self) -> int:
        return sum(1 for c in self.compiles if c.get("recompile_reasons"))

    @property
    def breaks(self) -> int:
        return sum(1 for c in self.compiles if c.get("graph_break"))

    @property
    def compile_time(self) -> float:
        return sum(c.get("compile_time", 0.0) for c in self.compiles)


def group(records: list[dict[str, Any]],
          limit_hits: list[dict[str, Any]] | None = None) -> list[Function]:
    """The records (and recompile-limit hits) by function (file, first line, qualified name), in
    order of first compile."""
    functions: dict[str, Function] = {}
    for record in [*records, *(limit_hits or [])]:
        key = f'{record["file"]}:{record["line"]}:{record["function"]}'
        if key not in functions:
            functions[key] = Function(key, record["title"], record["file"], record["line"])
        if "limit" in record:
            functions[key].limit_hits.append(record)
        else:
            functions[key].compiles.append(record)
    return list(functions.values())


def limit_text(hit: dict[str, Any]) -> str:
    """A recompile-limit hit in words: the limit, and what the call did instead."""
    then = ("raised FailOnRecompileLimitHit (config.fail_on_recompile_limit_hit)"
            if hit.get("outcome") == "raised" else
            "ran the plain function (eager); so do later calls that no entry's guard passes")
    return (f'hit config.recompile_limit ({hit.get("limit")}) with {hit.get("entries")} entries: '
            f"the call {then}")


def dynamic_text(described: dict[str, Any]) -> str:
    """``dim 0 (s0)`` for each dynamic dim of an input, else ``static``."""
    symbolic = described.get("shape_symbolic", [])
    dims = [f"dim {d} ({symbolic[d] if d < len(symbolic) else '?'})"
            for d in described.get("dynamic_dims", [])]
    return ", ".join(dims) or "static"


def _read(record: dict[str, Any], name: str) -> str:
    try:
        with open(os.path.join(record["folder"], name), encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return ""


def _e(text: Any) -> str:
    return html.escape(str(text))


def table(cls: str, headers: list[str], rows: list[list[str]],
          row_attrs: list[str] | None = None) -> str:
    """A ``<table>``: cells are HTML already (escape text with ``_e``); ``num:`` ones are
    numbers (right-aligned); ``row_attrs``: each row's attributes (`` data-fn="fn-0"``)."""
    def cell(value: str) -> str:
        if value.startswith("num:"):
            return f'<td class="num">{value[4:]}</td>'
        return f"<td>{value}</td>"
    attrs = row_attrs or [""] * len(rows)
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(f"<tr{a}>" + "".join(cell(v) for v in row) + "</tr>"
                   for a, row in zip(attrs, rows))
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


class Page:
    """Builds the HTML; ids: ``fn-<i>`` functions, ``c-<i>`` compiles, ``src-<i>-L<n>`` lines."""

    def __init__(self, records: list[dict[str, Any]], trace_dir: str, layout: str = "auto",
                 use_pygments: bool | None = None,
                 limit_hits: list[dict[str, Any]] | None = None) -> None:
        self.records = records
        self.functions = group(records, limit_hits)
        self.trace_dir = trace_dir
        self.layout = layout
        self.use_pygments = pygments_available() if use_pygments is None else use_pygments
        self.sources: dict[str, int] = {}  # user file -> its number in the page
        self.source_text: dict[str, str] = {}
        for record in records:
            if record["file"] not in self.sources:
                self.sources[record["file"]] = len(self.sources)
                self.source_text[record["file"]] = _read(record, "source.py")
        self.compile_ids = {id(r): f"c-{i}" for i, r in enumerate(records)}

    def line_link(self, filename: str, line: int, text: str | None = None) -> str:
        """A link to ``filename:line`` in the embedded sources (plain text when not embedded)."""
        label = _e(text or f"{os.path.basename(filename)}:{line}")
        number = self.sources.get(filename)
        if number is None or not self.source_text.get(filename):
            return f'<span class="loc">{label}</span>'
        return f'<a class="line-link" href="#src-{number}-L{line}">{label}</a>'

    def render(self) -> str:
        body = [self.header(), self.index(), self.timeline()]
        body += [self.function(i, f) for i, f in enumerate(self.functions)]
        body.append(self.source_section())
        return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                '<meta name="viewport" content="width=device-width">'
                "<title>astcompiler compile report</title>"
                f"<style>{PAGE_CSS}{CODE_CSS}</style><script>{PAGE_SCRIPT}</script></head><body>"
                + "\n".join(body)
                + '<pre id="js-errors"></pre><div id="selfcheck" data-status="pending"></div>'
                "</body></html>\n")

    def header(self) -> str:
        total = sum(f.compile_time for f in self.functions)
        highlighter = "Pygments" if self.use_pygments else "built in"
        return (f'<header><h1>astcompiler compile report</h1><p class="muted">'
                f'{_e(self.trace_dir)}: <b id="n-functions">{len(self.functions)}</b> functions, '
                f'<b id="n-compiles">{len(self.records)}</b> compiles, {total:.2f} s compiling; '
                f"highlighting: {highlighter}</p></header>")

    def index(self) -> str:
        rows = [[f'<a href="#fn-{i}">{_e(fn.title)}</a>', self.line_link(fn.file, fn.line),
                 f"num:{len(fn.compiles)}", f"num:{fn.recompiles}", f"num:{fn.breaks}",
                 f"num:{len(fn.limit_hits)}", f"num:{fn.compile_time:.3f}"]
                for i, fn in enumerate(self.functions)]
        headers = ["function", "defined at", "compiles", "recompiles", "graph breaks",
                   "recompile limit hits", "compile s"]
        listing = table("index", headers, rows,
                        [f' data-fn="fn-{i}"' for i in range(len(self.functions))])
        return ('<section id="index"><h2>Compiled functions</h2>'
                '<input id="filter" type="search" placeholder="filter functions">'
                f"{listing}</section>")

    def timeline(self) -> str:
        """One row per compile, its phases laid end to end from its start (wall clock)."""
        if not self.records:
            return '<section id="timeline"><h2>Timeline</h2><p>no compiles recorded</p></section>'
        start = min(r.get("started", 0.0) for r in self.records)
        span = max(max(r.get("started", 0.0) + sum(r.get("phases", {}).values())
                       for r in self.records) - start, 1e-6)
        label_w, width = 260, 900
        rows = [self.timeline_row(i, r, (r.get("started", 0.0) - start) / span * width + label_w,
                                  width / span) for i, r in enumerate(self.records)]
        legend = "".join(f'<span class="key"><i style="background:{c}"></i>{p}</span>'
                         for p, c in PHASE_COLOURS.items())
        return (f'<section id="timeline"><h2>Timeline of compile phases</h2>'
                f'<div class="legend">{legend}</div>'
                f'<svg id="timeline-svg" xmlns="http://www.w3.org/2000/svg" '
                f'width="{label_w + width + 20}" height="{30 + ROW_H * len(self.records)}">'
                + "".join(rows)
                + f'<text x="{label_w}" y="12" font-size="11">0 s</text>'
                f'<text x="{label_w + width}" y="12" font-size="11" text-anchor="end">'
                f"{span:.2f} s</text></svg></section>")

    def timeline_row(self, number: int, record: dict[str, Any], x: float, scale: float) -> str:
        """A compile's label and its phases as bars from ``x`` (``scale``: pixels a second)."""
        y = 20 + number * ROW_H
        phases = record.get("phases", {})
        parts = [f'<text x="4" y="{y + 12}" font-size="11">'
                 f'<a href="#{self.compile_ids[id(record)]}">{_e(record["title"][:40])} '
                 f'#{record.get("index", 0)}</a></text>']
        for phase in PHASES + tuple(p for p in phases if p not in PHASES):
            seconds = phases.get(phase, 0.0)
            if seconds <= 0:
                continue
            w = max(seconds * scale, 1.0)
            parts.append(f'<rect class="phase" data-phase="{_e(phase)}" x="{x:.1f}" y="{y}" '
                         f'width="{w:.1f}" height="{ROW_H - 4}" '
                         f'fill="{PHASE_COLOURS.get(phase, "#999")}">'
                         f"<title>{_e(phase)}: {ms(seconds)} ms</title></rect>")
            x += w
        return "".join(parts)

    def function(self, number: int, fn: Function) -> str:
        history = []
        for record in fn.compiles:
            reasons = record.get("recompile_reasons") or []
            what = "recompile: " + "; ".join(reasons) if reasons else "first compile"
            history.append(f'<li class="{"recompile" if reasons else "first"}">'
                           f'<a href="#{self.compile_ids[id(record)]}">entry '
                           f'{record.get("index", 0)}</a> ({_e(record["kind"])}, stance '
                           f'{_e(record["stance"])}): {_e(what)}</li>')
        where = self.line_link(fn.file, fn.line, f"{fn.file}:{fn.line}")
        return (f'<section class="function" id="fn-{number}"><h2>{_e(fn.title)}</h2>'
                f"<p>defined at {where}; {len(fn.compiles)} compiles, {fn.recompiles} "
                f"recompiles, {fn.breaks} graph breaks</p>"
                f'<h3>Entries and recompile history</h3><ol class="history">{"".join(history)}'
                "</ol>" + "".join(self.limit_hit(h) for h in fn.limit_hits)
                + "".join(self.compile(r) for r in fn.compiles) + "</section>")

    def limit_hit(self, hit: dict[str, Any]) -> str:
        """A recompile-limit hit: what happened next, the guard each entry failed, the inputs."""
        failed = "".join(f"<li>{_e(r)}</li>" for r in hit.get("failed_guards", []))
        inputs = [[_e(i["name"]), _e(i["type"]), _e(i.get("dtype", "")),
                   _e(i.get("shape", i.get("value", "")))] for i in hit.get("inputs", [])]
        return (f'<div class="limit-hit"><b>recompile limit</b>: {_e(limit_text(hit))}'
                f"<p>the guard each entry failed:</p><ul>{failed}</ul>"
                + table("inputs", ["input", "type", "dtype", "shape / value"], inputs) + "</div>")

    def compile(self, record: dict[str, Any]) -> str:
        summary = (f'entry {record.get("index", 0)}: {_e(record["kind"])}, '
                   f'{record.get("op_count", 0)} ops, {ms(record.get("compile_time", 0.0))} ms')
        return (f'<details class="compile" id="{self.compile_ids[id(record)]}" open>'
                f"<summary>{summary}</summary>{self.facts(record)}{self.notes(record)}"
                f'<div class="graph-box"><h4>graph</h4>'
                f'{graph_svg(record.get("graph", []), self.layout)}</div>'
                f"{self.artefacts(record)}</details>")

    def facts(self, record: dict[str, Any]) -> str:
        """The stance, the first call's time, the inputs and the phases of one compile."""
        loaded = record.get("loaded_from")
        where = f"; loaded from <code>{_e(loaded)}</code>" if loaded else ""
        inputs = [[_e(i["name"]), _e(i["type"]), _e(i.get("dtype", "")),
                   _e(i.get("shape", i.get("value", ""))), _e(dynamic_text(i))]
                  for i in record.get("inputs", [])]
        phases = [[_e(p), f"num:{ms(s)}"] for p, s in record.get("phases", {}).items()]
        return (f'<p>stance <code>{_e(record["stance"])}</code>; first call '
                f'{ms(record.get("first_call_time", 0.0))} ms{where}</p>'
                + table("inputs", ["input", "type", "dtype", "shape / value", "dynamic"], inputs)
                + table("phases", ["phase", "ms"], phases))

    def notes(self, record: dict[str, Any]) -> str:
        """Why it recompiled, where the graph broke, the pieces of a split."""
        parts = []
        if record.get("recompile_reasons"):
            reasons = "".join(f"<li>{_e(r)}</li>" for r in record["recompile_reasons"])
            parts.append(f'<div class="recompile-reason"><b>recompiled because</b>'
                         f"<ul>{reasons}</ul></div>")
        if record.get("graph_break"):
            parts.append(self.graph_break(record["graph_break"]))
        if record.get("pieces"):
            parts.append("<p>pieces compiled on their own: "
                         + ", ".join(_e(p) for p in record["pieces"]) + "</p>")
        return "".join(parts)

    def artefacts(self, record: dict[str, Any]) -> str:
        files = record.get("artefacts", {})
        parts = [self.artefact(title, _read(record, files[attribute]))
                 for attribute, title in ARTEFACT_TITLES if attribute in files]
        parts += [self.artefact(f"file {k}", _read(record, k)) for k in record.get("kernels", [])]
        return "".join(parts)

    def graph_break(self, brk: dict[str, Any]) -> str:
        frames = "".join(f'<li>{self.line_link(f["file"], f["line"])} <code>{_e(f["text"])}'
                         "</code></li>" for f in brk.get("user_stack", []))
        hint = f'<p>{_e(brk["hint"])}</p>' if brk.get("hint") else ""
        return (f'<div class="graph-break"><b>graph break</b>: {_e(brk["reason"])}{hint}'
                f"<ul>{frames}</ul></div>")

    def artefact(self, title: str, text: str) -> str:
        return (f'<details class="artefact"><summary>{_e(title)}</summary>'
                f"{code_block(text, use_pygments=self.use_pygments)}</details>")

    def source_section(self) -> str:
        blocks = []
        for filename, number in self.sources.items():
            text = self.source_text.get(filename, "")
            if text:
                code = code_block(text, f"src-{number}", use_pygments=self.use_pygments)
                blocks.append(f'<div class="source" id="src-{number}"><h3>{_e(filename)}</h3>'
                              f"{code}</div>")
        return '<section id="sources"><h2>User sources</h2>' + "".join(blocks) + "</section>"


def build_report(trace_dir: str, *, layout: str = "auto", use_pygments: bool | None = None) -> str:
    """The HTML page of every compile recorded under ``trace_dir``."""
    return Page(load_trace(trace_dir), trace_dir, layout, use_pygments,
                load_limit_hits(trace_dir)).render()


def write_report(trace_dir: str, output: str, **options: Any) -> int:
    """Write the page to ``output``; returns the number of compiles in it."""
    records = load_trace(trace_dir)
    text = Page(records, trace_dir, limit_hits=load_limit_hits(trace_dir), **options).render()
    with open(output, "w", encoding="utf-8") as handle:
        handle.write(text)
    return len(records)


__all__ = ["build_report", "write_report", "group", "Function", "dynamic_text", "limit_text"]
