"""Dropping the wrapper's references to temporaries after their last use, as NumPy's refcounts do.

A generated wrapper binds every intermediate array to a local name, so without this all of them
stay alive until the call returns: the call's peak memory is the sum of its temporaries, and when
they are all freed at once glibc gives the top of the heap back to the system, so the next call
takes fresh pages again (a page fault per 4 KiB, about 1 us each: 0.5 ms a call for a chain of
three 300x300 matmuls). NumPy's own evaluation frees each temporary once its last reader ran, and
the next one reuses that memory. ``release_dead`` does the same to the wrapper's lines: after the
base-level statement holding the last textual reference to a name, ``name = None``.

Only base-level statements of the function body get such a line (never inside a loop or a
branch), so no later execution can read the name again; rebinding to None (not ``del``) is safe
even where the name was bound in one branch only.
"""

from __future__ import annotations

import re

_CONTINUATIONS = ("else:", "elif ", "except", "finally:")


def release_dead(lines: list[str], names: list[str], base: int) -> tuple[list[str], list[int]]:
    """``lines`` (indented by ``base`` spaces at the top level) with ``name = None`` after the
    last use of each of ``names``; also where each old line went (old index -> new index)."""
    after: dict[int, list[tuple[str, int]]] = {}
    tail = _epilogue(lines, base)
    for name in names:
        last = _last_reference(lines, name)
        if last is None:
            continue
        found = _statement_end(lines, last, base)
        if found is not None and found[0] + 1 < tail:
            after.setdefault(found[0], []).append((name, found[1]))
    out: list[str] = []
    where: list[int] = []
    for index, line in enumerate(lines):
        where.append(len(out))
        out.append(line)
        for name, indent in after.get(index, ()):
            out.append(" " * indent + f"{name} = None  # its last use: its memory serves the next one")
    return out, where


def _epilogue(lines: list[str], base: int) -> int:
    """Where the closing run of base-level ``___pool.give`` lines and the ``return`` starts."""
    start = len(lines)
    for k in range(len(lines) - 1, -1, -1):
        stripped = lines[k].strip()
        if lines[k].startswith(" " * base) and not lines[k].startswith(" " * (base + 1)) \
                and (stripped.startswith("return") or stripped.startswith("___pool.give(")):
            start = k
        else:
            break
    return start


def _last_reference(lines: list[str], name: str) -> int | None:
    pattern = re.compile(rf"(?<![\w.']){re.escape(name)}\b")
    for index in range(len(lines) - 1, -1, -1):
        if pattern.search(lines[index]):
            return index
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _sequential_level(lines: list[str], index: int, base: int) -> int:
    """The deepest indentation around line ``index`` whose statements run once each, in order:
    the function body and the bodies of ``try:`` blocks in it (never a loop's or a branch's)."""
    headers: list[tuple[int, str]] = []  # enclosing block headers, innermost first
    level = _indent(lines[index])
    for k in range(index - 1, -1, -1):
        stripped = lines[k].strip()
        if stripped and not stripped.startswith("#") and _indent(lines[k]) < level:
            level = _indent(lines[k])
            headers.append((level, stripped))
            if level <= base:
                break
    sequential = base
    for indent, header in reversed(headers):
        if indent != sequential or header.partition("#")[0].strip() != "try:":
            break
        sequential = indent + 4
    return sequential


def _statement_end(lines: list[str], index: int, base: int) -> tuple[int, int] | None:
    """The last line of the statement holding line ``index`` in its sequential block (see
    ``_sequential_level``) and that block's indentation; None when the function returns
    within it or the statement is its block's last before a return."""
    level = _sequential_level(lines, index, base)
    for k in range(index + 1, len(lines)):
        line = lines[k]
        indent = _indent(line)
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or indent > level:
            continue
        if indent == level and stripped.startswith(_CONTINUATIONS):
            continue
        if indent == level and stripped.startswith("return"):
            return None
        return k - 1, level
    return None
