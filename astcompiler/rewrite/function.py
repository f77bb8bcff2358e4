"""Rewrite one function into graph-building source, write it to a file and load it.

The generated module holds a factory ``__ac_make(__ac)`` whose body defines the rewritten
function. The factory is re-bound to the original function's ``__globals__``, and the free names
the function reads are loaded through the runtime in a prologue (``np, K = __ac.load_globals('np',
'K')``), so every outside value has a source the guards can check.
"""

from __future__ import annotations

import re
import threading
import types
from dataclasses import dataclass, field
from typing import Callable, Sequence

import libcst as cst

from ..source import FunctionSource, function_source, load_generated_module, write_generated_file
from ..source.origins import TAG, build_line_map, register_source_map
from .boolean import RewriteBoolean
from .calls import ExplicitSuper, RewriteCalls
from .comprehensions import RewriteComprehensions
from .frame import RunEagerlyIfFrameIsUsed
from .identity import RewriteIdentity
from .names import free_names
from .structured import RewriteStructuredControlFlow
from .tagging import TagOrigins, origin_comment
from .templates import RUNTIME, assign, body_start, runtime_call, string
from .unsupported import MarkUnsupported

# Construct rewrites, applied in this order after origin tagging.
RULES: tuple[type[cst.CSTTransformer], ...] = (
    RunEagerlyIfFrameIsUsed, ExplicitSuper, MarkUnsupported, RewriteStructuredControlFlow, RewriteCalls, RewriteBoolean, RewriteIdentity,
    RewriteComprehensions)

TAG_COLUMN = 80


@dataclass
class RewrittenFunction:
    """Graph-building code for one user function."""

    name: str
    source: str                      # the whole generated module
    path: str | None = None          # the file it was written to
    factory: Callable | None = None  # factory(runtime) -> rewritten function
    origin: FunctionSource | None = None
    global_names: list[str] = field(default_factory=list)
    closure_names: list[str] = field(default_factory=list)


def _strip_signature(params: cst.Parameters) -> cst.Parameters:
    """Drop defaults and annotations: the runtime binds arguments with the original signature."""
    def plain(param: cst.Param) -> cst.Param:
        return param.with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT, annotation=None)

    star = params.star_arg
    return params.with_changes(
        params=[plain(p) for p in params.params],
        posonly_params=[plain(p) for p in params.posonly_params],
        kwonly_params=[plain(p) for p in params.kwonly_params],
        star_arg=plain(star) if isinstance(star, cst.Param) else star,
        star_kwarg=plain(params.star_kwarg) if params.star_kwarg is not None else None,
    )


def _as_function(node: cst.FunctionDef | cst.Lambda, name: str, display: str,
                 line: int) -> cst.FunctionDef:
    if isinstance(node, cst.FunctionDef):
        if isinstance(node.body, cst.SimpleStatementSuite):  # `def f(x): return x`
            small = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in node.body.body]
            line_stmt = cst.SimpleStatementLine(body=small,
                                                trailing_whitespace=origin_comment(display, line))
            node = node.with_changes(body=cst.IndentedBlock(
                body=[line_stmt], header=origin_comment(display, line)))
        return node.with_changes(decorators=[], returns=None, asynchronous=None,
                                 params=_strip_signature(node.params),
                                 leading_lines=[], lines_after_decorators=[])
    ret = cst.SimpleStatementLine(body=[cst.Return(node.body)],
                                  trailing_whitespace=origin_comment(display, line))
    return cst.FunctionDef(name=cst.Name(name), params=_strip_signature(node.params),
                           body=cst.IndentedBlock(body=[ret], header=origin_comment(display, line)))


def _prologue(global_names: list[str], closure_names: list[str], display: str,
              line: int) -> list[cst.SimpleStatementLine]:
    tag = origin_comment(display, line)
    lines = []
    if global_names:
        call = runtime_call("load_globals", [string(n) for n in global_names])
        lines.append(assign(global_names, call).with_changes(trailing_whitespace=tag))
    if closure_names:
        call = runtime_call("load_closure", [string(n) for n in closure_names])
        lines.append(assign(closure_names, call).with_changes(trailing_whitespace=tag))
    return lines


def align_tags(text: str, column: int = TAG_COLUMN) -> str:
    """Line origin tags up in one column so the code reads cleanly."""
    out = []
    for line in text.splitlines():
        match = TAG.search(line)
        if match is None:
            out.append(line)
            continue
        code = line[:match.start()].rstrip()
        tag = line[match.start():].strip()
        out.append(f"{code.ljust(column - 2)}  {tag}" if len(code) < column - 2 else f"{code}  {tag}")
    return "\n".join(out) + "\n"


def _first_line(node: cst.FunctionDef | cst.Lambda, positions: dict) -> int:
    """The definition's line; for a synthetic definition (pieces of a user function), the line
    of its first statement that has a position."""
    if node in positions:
        return positions[node].start.line
    body = getattr(getattr(node, "body", None), "body", ())
    for statement in body:
        if statement in positions:
            return positions[statement].start.line
    return 1


def rewrite_definition(node: cst.FunctionDef | cst.Lambda, positions: dict, display: str,
                       closure_vars: Sequence[str] = (), name: str | None = None,
                       qualname: str | None = None) -> RewrittenFunction:
    """Graph-building module source for one parsed definition (no file written)."""
    line = _first_line(node, positions)
    tagged = node.visit(TagOrigins(positions, display))
    fn_name = name or (node.name.value if isinstance(node, cst.FunctionDef) else f"lambda_{line}")
    definition = _as_function(tagged, fn_name, display, line)
    for rule in RULES:
        definition = definition.visit(rule())
    names = free_names(definition)
    closure = [n for n in names if n in closure_vars]
    globals_ = [n for n in names if n not in closure_vars and n != RUNTIME]
    body = list(definition.body.body)
    start = body_start(body)
    body[start:start] = _prologue(globals_, closure, display, line)
    definition = definition.with_changes(body=definition.body.with_changes(body=body))
    factory = cst.FunctionDef(
        name=cst.Name("__ac_make"),
        params=cst.Parameters(params=[cst.Param(cst.Name(RUNTIME))]),
        body=cst.IndentedBlock(body=[definition, cst.SimpleStatementLine(
            body=[cst.Return(cst.Name(fn_name))])]))
    header = (f"# Graph-building code generated by astcompiler from {display}:{line} "
              f"({qualname or fn_name}).\n"
              "# Each line ends with the user line it came from. Regenerated when the source changes.\n\n")
    text = align_tags(header + cst.Module(body=[factory]).code)
    return RewrittenFunction(name=fn_name, source=text, global_names=globals_,
                             closure_names=closure)


# keyed by the code object and its file: code objects compare equal across files (CPython leaves
# co_filename out of code equality), and two files may define the same function at the same line
_CACHE: dict[tuple[types.CodeType, str], RewrittenFunction] = {}
_CACHE_LOCK = threading.Lock()


def cached_rewrite(code: types.CodeType) -> "RewrittenFunction | None":
    """The rewrite already made for ``code`` (None: not rewritten yet)."""
    return _CACHE.get((code, code.co_filename))


def rewrite_function(fn: types.FunctionType, cache_dir: str) -> RewrittenFunction:
    """Rewrite ``fn`` (cached per code object), write the module and load its factory."""
    code = fn.__code__
    with _CACHE_LOCK:
        hit = _CACHE.get((code, code.co_filename))
    if hit is not None and hit.path is not None and hit.path.startswith(cache_dir):
        return hit
    origin = function_source(fn)
    rewritten = rewrite_definition(origin.node, origin.positions, origin.display_name,
                                   closure_vars=code.co_freevars,
                                   name=code.co_name if code.co_name != "<lambda>" else None,
                                   qualname=origin.qualname)
    stem = re.sub(r"\W", "_", f"{origin.display_name.rsplit('.', 1)[0]}_{rewritten.name}")
    path = write_generated_file(f"{cache_dir}/rewritten", stem, rewritten.source)
    register_source_map(path, build_line_map(rewritten.source,
                                              {origin.display_name: origin.filename}))
    module = load_generated_module(path)
    maker = module.__ac_make
    rewritten.factory = types.FunctionType(maker.__code__, fn.__globals__, "__ac_make")
    rewritten.path = path
    rewritten.origin = origin
    with _CACHE_LOCK:
        _CACHE[code, code.co_filename] = rewritten
    return rewritten


def is_generated(fn: object) -> bool:
    """True for functions whose code lives in a generated (already rewritten) module."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    from ..source.origins import SOURCE_MAPS
    return code.co_filename in SOURCE_MAPS


def _is_compile_decorator(decorator: cst.Decorator) -> bool:
    expr = decorator.decorator
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Name):
        return expr.value == "compile"
    return isinstance(expr, cst.Attribute) and expr.attr.value == "compile"


def rewrite_module_source(source: str, filename: str) -> str:
    """The graph-building source of every ``@compile``-decorated function in a file's text."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from ..source.loader import display_name

    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    positions = dict(wrapper.resolve(PositionProvider))
    display = display_name(filename)
    parts = []
    for node in positions:
        if isinstance(node, cst.FunctionDef) and any(map(_is_compile_decorator, node.decorators)):
            parts.append(rewrite_definition(node, positions, display).source)
    if not parts:
        return f"# no @compile-decorated functions in {display}\n"
    return "\n\n".join(parts)
