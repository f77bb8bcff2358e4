"""Python syntax highlighting to HTML, one ``<span class="ln">`` per line.

Pygments when it is importable (it comes with pytest); else a small highlighter of our own
(comments, strings, keywords, builtins, numbers, decorators). Both emit CSS classes styled by
``CSS`` (``<style>`` in the page: no network, no inline style per token).
"""

from __future__ import annotations

import builtins
import functools
import html
import keyword
import re

CSS = """
.code .k{color:#0033b3;font-weight:600}.code .s{color:#067d17}.code .c{color:#8c8c8c;font-style:italic}
.code .n{color:#1750eb}.code .b{color:#7a3e9d}.code .d{color:#9e880d}.code .f{color:#00627a}
"""

# Pygments token types (by their name's first letters) -> our classes
_PYGMENTS_CLASSES = (("Keyword", "k"), ("Literal.String", "s"), ("Comment", "c"),
                     ("Literal.Number", "n"), ("Name.Builtin", "b"), ("Name.Decorator", "d"),
                     ("Name.Function", "f"), ("Name.Class", "f"), ("Operator.Word", "k"))

_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
_KEYWORDS = frozenset(keyword.kwlist + keyword.softkwlist)
_TOKEN = re.compile(r"""
    (?P<c>\#.*)
  | (?P<s>[rbuRBUfF]{0,2}(?:'''|\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))
  | (?P<d>^\s*@[\w.]+)
  | (?P<n>\b(?:0[xob][\da-fA-F_]+|\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?j?)\b)
  | (?P<w>[A-Za-z_]\w*)
""", re.VERBOSE)


def pygments_available() -> bool:
    try:
        import pygments  # noqa: F401
    except ImportError:
        return False
    return True


def highlight_lines(text: str, *, use_pygments: bool | None = None) -> list[str]:
    """The HTML of each line of ``text`` (escaped, tokens wrapped in classed spans)."""
    if use_pygments is None:
        use_pygments = pygments_available()
    return list(_highlighted(text, use_pygments))


@functools.lru_cache(maxsize=256)  # a trace repeats its sources, guards and kernels
def _highlighted(text: str, use_pygments: bool) -> tuple[str, ...]:
    return tuple(_highlight(text, use_pygments))


def _highlight(text: str, use_pygments: bool) -> list[str]:
    if use_pygments:
        try:
            return _pygments_lines(text)
        except Exception:  # noqa: BLE001 - a Pygments problem: the plain highlighter instead
            pass
    return own_highlight_lines(text)


def _pygments_lines(text: str) -> list[str]:
    from pygments.lexers import PythonLexer

    lines: list[str] = [""]
    for token, value in PythonLexer(stripnl=False, ensurenl=False).get_tokens(text):
        kind = str(token).removeprefix("Token.")
        cls = next((c for prefix, c in _PYGMENTS_CLASSES if kind.startswith(prefix)), None)
        for i, piece in enumerate(value.split("\n")):
            if i:
                lines.append("")
            if piece:
                escaped = html.escape(piece)
                lines[-1] += f'<span class="{cls}">{escaped}</span>' if cls else escaped
    expected = text.split("\n")
    return lines[:len(expected)] + [""] * (len(expected) - len(lines))


def own_highlight_lines(text: str) -> list[str]:
    """The fallback highlighter: a regular expression per line, triple-quoted strings tracked."""
    out: list[str] = []
    open_quote = ""  # inside a triple-quoted string that began on an earlier line
    for line in text.split("\n"):
        parts: list[str] = []
        pos = 0
        if open_quote:
            end = line.find(open_quote)
            if end < 0:
                out.append(_span("s", line))
                continue
            parts.append(_span("s", line[:end + 3]))
            pos = end + 3
            open_quote = ""
        previous = ""
        while (match := _TOKEN.search(line, pos)) is not None:
            parts.append(html.escape(line[pos:match.start()]))
            kind, value = match.lastgroup, match.group()
            pos = match.end()
            if kind == "s" and value.lstrip("rbuRBUfF") in ("'''", '"""'):
                quote = value.lstrip("rbuRBUfF")
                end = line.find(quote, pos)
                if end < 0:
                    open_quote = quote
                    parts.append(_span("s", value + line[pos:]))
                    pos = len(line)
                    break
                value, pos = value + line[pos:end + 3], end + 3
            if kind == "w":
                kind = ("k" if value in _KEYWORDS else "f" if previous in ("def", "class")
                        else "b" if value in _BUILTINS else "")
                previous = value
            parts.append(_span(kind, value) if kind else html.escape(value))
        parts.append(html.escape(line[pos:]))
        out.append("".join(parts))
    return out


def _span(cls: str, text: str) -> str:
    return f'<span class="{cls}">{html.escape(text)}</span>'


def code_block(text: str, anchor: str = "", *, use_pygments: bool | None = None) -> str:
    """A ``<pre class="code">`` of ``text``, one numbered line each (``id=anchor-L<n>``)."""
    rows = []
    for number, line in enumerate(highlight_lines(text, use_pygments=use_pygments), 1):
        ident = f' id="{anchor}-L{number}"' if anchor else ""
        rows.append(f'<span class="ln"{ident}><span class="no">{number}</span>{line}</span>')
    return '<pre class="code">' + "\n".join(rows) + "</pre>"
