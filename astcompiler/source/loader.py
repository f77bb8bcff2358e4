"""Find a function's source: file, first line, and the libcst node of its definition.

Works for module functions, methods, nested functions and closures, lambdas, functions wrapped
with ``functools.wraps`` (the wrapper's own code is used, never ``__wrapped__``), and functions
defined in IPython/Jupyter (their cells are in ``linecache``). Source positions are kept so every
node maps back to the user's file and line.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import threading
import types
from dataclasses import dataclass
from typing import Callable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..exc import Unsupported
from .names import display_name, register_synthetic, synthetic_source  # noqa: F401 - re-exported


class NoSourceError(Unsupported):
    """The function has no readable source (built by ``exec``, defined in a plain REPL, C code)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, hint="what to do: define the function in a .py file or a "
                                      "notebook cell, or call it without astcompiler.compile")


@dataclass(frozen=True)
class FunctionSource:
    """The parsed definition of one function and where it lives."""

    filename: str          # as in the code object (a path, or "<ipython-input-...>")
    display_name: str      # short name used in origin tags: "model.py"
    qualname: str
    node: cst.FunctionDef | cst.Lambda
    positions: dict        # libcst node -> CodePosition, lines are the file's lines
    module_text: str       # the whole file's text (for quoting lines)
    digest: str            # hash of the function's own source text

    def line_text(self, lineno: int) -> str:
        lines = self.module_text.splitlines()
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""

    def line_of(self, node: cst.CSTNode) -> int | None:
        pos = self.positions.get(node)
        return pos.start.line if pos is not None else None


_PARSED: dict[tuple[str, str], tuple[cst.Module, dict]] = {}
_PARSED_LOCK = threading.Lock()


def _file_text(filename: str, module_globals: dict | None) -> str:
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        linecache.checkcache(filename)
        lines = linecache.getlines(filename, module_globals)
    return "".join(lines)


def _parse(filename: str, text: str) -> tuple[cst.Module, dict]:
    key = (filename, hashlib.sha1(text.encode()).hexdigest())
    with _PARSED_LOCK:
        hit = _PARSED.get(key)
    if hit is not None:
        return hit
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = dict(wrapper.resolve(PositionProvider))
    result = (wrapper.module, positions)
    with _PARSED_LOCK:
        _PARSED[key] = result
    return result


def _params_of(code: types.CodeType) -> list[str]:
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    return list(code.co_varnames[:count])


def _lambda_params(node: cst.Lambda) -> list[str]:
    params = node.params
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        star = params.star_arg
    else:
        star = None
    names += [p.name.value for p in params.kwonly_params]
    if star is not None:
        names.insert(len(params.posonly_params) + len(params.params), star.name.value)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


def _first_column(code: types.CodeType) -> tuple[int, int] | None:
    """(line, column) where the body of a lambda starts (Python 3.11+ keeps columns)."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return None
    found = [(line, col) for line, _, col, _ in positions()
             if line is not None and col]  # column 0: set-up instructions, not the body
    return min(found) if found else None


def _find_definition(code: types.CodeType, positions: dict) -> cst.FunctionDef | cst.Lambda:
    first = code.co_firstlineno
    if code.co_name == "<lambda>":
        wanted = _params_of(code)
        candidates = [n for n, p in positions.items()
                      if isinstance(n, cst.Lambda) and p.start.line == first]
        matching = [n for n in candidates if _lambda_params(n) == wanted]
        if len(matching) > 1:  # several lambdas on one line: tell them apart by column
            start = _first_column(code)
            by_column = [n for n in matching if start is not None and n.body in positions
                         and (positions[n.body].start.line, positions[n.body].start.column) == start]
            matching = by_column or matching
        if len(matching) >= 1:
            return matching[0]
        raise NoSourceError(f"cannot find the source of the lambda at line {first}")
    # co_firstlineno is the first decorator's line; the def keyword comes at or after it
    best, best_line = None, None
    for node, pos in positions.items():
        if not isinstance(node, cst.FunctionDef) or node.name.value != code.co_name:
            continue
        if pos.start.line >= first and (best_line is None or pos.start.line < best_line):
            best, best_line = node, pos.start.line
    if best is None:
        raise NoSourceError(f"cannot find the definition of {code.co_name!r} near line {first}")
    return best


def function_source(fn: Callable) -> FunctionSource:
    """The source of ``fn`` (a Python function); raises ``NoSourceError`` if there is none."""
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise NoSourceError(f"{fn!r} is not a Python function with source code")
    synthetic = synthetic_source(code)
    if synthetic is not None:
        return synthetic
    filename = code.co_filename
    text = _file_text(filename, getattr(fn, "__globals__", None))
    if not text:
        raise NoSourceError(
            f"no source code for {getattr(fn, '__qualname__', fn)!r} (defined in {filename}): "
            "functions built with exec() or typed into a plain REPL cannot be compiled; "
            "define it in a file or a notebook cell")
    module, positions = _parse(filename, text)
    node = _find_definition(code, positions)
    own_text = module.code_for_node(node)
    return FunctionSource(
        filename=filename,
        display_name=display_name(filename),
        qualname=getattr(fn, "__qualname__", code.co_name),
        node=node,
        positions=positions,
        module_text=text,
        digest=hashlib.sha1(own_text.encode()).hexdigest()[:16],
    )
