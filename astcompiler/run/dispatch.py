"""The generated ``__call__`` of a compiled function: one Python frame from the user's call to the
first entry's guarded run.

``CompiledFunction(...)`` gets a class of its own; ``install_dispatch`` sets that class's
``__call__`` to a function generated for the current entries, with the user function's own
parameters (no ``*args`` tuple, no ``**kwargs`` dict and no second frame per call)::

    def tiny(___me, x, y, *___more):  # dispatch of tiny: 1 entry
        if ___more or ___ever and ___stance() is not ___DEFAULT:
            # surplus or left-out arguments, or a stance (once one was ever set)
            ___args, ___kwargs = ___split(___names, (x, y,), ___more, {}, None)
            return ___generic(___me, *___args, **___kwargs)
        ___r = ___entry_0(x, y)  # entry 0: its guard, its run
        if ___r is not ___MISS:
            return ___r
        return ___me._slow_call((x, y,), {})  # no entry holds

Where an entry's guarded run is the run module's ``guarded`` twin (``replay.build_run``), its
body is pasted into the dispatch instead of called (``inline_entry``): its guard sets ``___ok``
and its constants are renamed ``<name>_e<index>`` (one frame less per call, about 0.1 us)::

        try:  # entry 0 inline: its guard (run_0230e78fad1d.py:19)
            ___ok = ((type(x) is ___ndarray_e0 and ...))
        except Exception:
            ___ok = False
        if ___ok:  # entry 0: its run
            ___out = ___compiled_e0(x, y)
            ...
            return ___out[0]

Where the run calls the numba wrapper's ``forward``, its body is pasted there too
(``forward_body``), from the typed template the wrapper writer made (``forward.paste``, a
``lower.base.PasteTemplate``: body lines, parameters, each return's value; nothing is read back
from the wrapper's file): inside ``while True:``, each ``return v`` as ``___out = v`` and
``break``, its names renamed ``<name>_f<index>`` (``PASTE_FORWARD`` switches this off). Where the
run only returns ``___out[0]``, the one output is returned bare (the final return's only item;
no ``(out,)`` built and indexed).

Surplus positional arguments (``*___more``), arguments left out to take a default (the
parameter's dispatch default is ``___UNSET``: the function's own defaults may change after the
compile) and a stance other than the default take the generic method (``___generic``), with the
call rebuilt as its caller made it. A function with ``*args`` (a compiled module call:
``module_call(module, *args, **kwargs)``) gets a dispatch only where every entry is pasted in
(a call of an entry would build its argument tuple again). Missing or unexpected arguments
fail in the generated function itself, named as the original's message names them. Without
entries (or for a signature it cannot copy) the class keeps the generic method.
"""

from __future__ import annotations

import ast
import builtins
import io
import os
import re
import tokenize
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..lower.base import PasteTemplate
from ..source.loading import verified_source
from .run_functions import name_like
from .sentinels import MISS
from .stance import CURRENT_STANCE, DEFAULT, EVER_SET
from ..source.python_ast import parse as parse_python

OWN_CLASS = "_ac_own_class"  # marks a CompiledFunction's own class (set in its namespace)
_VARARGS, _VARKEYWORDS = 0x04, 0x08


class Parameters:
    """The parameter kinds of a function, read from its code object (Python's own binding)."""

    def __init__(self, fn: types.FunctionType) -> None:
        code = fn.__code__
        names = code.co_varnames
        count, posonly, kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
        self.posonly = list(names[:posonly])
        self.positional = list(names[posonly:count])
        self.kwonly = list(names[count:count + kwonly])
        rest = count + kwonly
        self.varargs = names[rest] if code.co_flags & _VARARGS else None
        rest += 1 if self.varargs else 0
        self.varkw = names[rest] if code.co_flags & _VARKEYWORDS else None
        # parameters with a default now: ``___UNSET`` in the dispatch (the default is read again
        # at each call, by the generic method's guard, since ``fn.__defaults__`` may change)
        defaults = len(fn.__defaults__ or ())
        self.defaulted = list((self.posonly + self.positional)[count - defaults:]) \
            + [n for n in self.kwonly if n in (fn.__kwdefaults__ or {})]
        # and required keyword-only ones: left out, the generic method raises Python's error
        # (which names a surplus positional argument first, as Python checks it first)
        self.unset = self.defaulted + [n for n in self.kwonly if n not in self.defaulted]

    def names(self) -> list[str]:
        return [*self.posonly, *self.positional, *self.kwonly,
                *(n for n in (self.varargs, self.varkw) if n)]

    def guard_params(self) -> str:
        """The parameter list as ``guards.codegen.parameter_list`` writes it for the guard."""
        parts = list(self.posonly) + (["/"] if self.posonly else []) + list(self.positional)
        if self.varargs:
            parts.append(f"*{self.varargs}")
        elif self.kwonly:
            parts.append("*")
        parts += self.kwonly
        if self.varkw:
            parts.append(f"**{self.varkw}")
        return ", ".join(parts)

    def dispatch_params(self) -> str:
        """``___me`` and the user's parameters, with ``*___more`` where there is no ``*args``;
        a parameter with a default defaults to ``___UNSET``."""
        def param(name: str) -> str:
            return f"{name}=___UNSET" if name in self.unset else name

        parts = ["___me", *map(param, self.posonly)] + (["/"] if self.posonly else [])
        parts += [*map(param, self.positional), f"*{self.extra}", *map(param, self.kwonly)]
        if self.varkw:
            parts.append(f"**{self.varkw}")
        return ", ".join(parts)

    @property
    def extra(self) -> str:
        return self.varargs or "___more"

    def call_args(self) -> str:
        """Arguments that pass every parameter on, as bound."""
        parts = [*self.posonly, *self.positional]
        if self.varargs:
            parts.append(f"*{self.varargs}")
        parts += [f"{n}={n}" for n in self.kwonly]
        if self.varkw:
            parts.append(f"**{self.varkw}")
        return ", ".join(parts)

    def slow_args(self) -> str:
        """``args, kwargs`` for ``_slow_call`` when every parameter was passed (none unset):
        positional parameters as positional arguments."""
        listed = [*self.posonly, *self.positional] + ([f"*{self.varargs}"] if self.varargs else [])
        keywords = ", ".join(f"{n!r}: {n}" for n in self.kwonly)
        if self.varkw:
            keywords = f"{keywords}, **{self.varkw}" if keywords else f"**{self.varkw}"
        return f"({', '.join(listed)}{',' if listed else ''}), {{{keywords}}}"

    def split_args(self) -> str:
        """``___split``'s arguments: the call as made, unset parameters left out."""
        listed = [*self.posonly, *self.positional]
        values = f"({', '.join(listed)}{',' if listed else ''})"
        keywords = "{" + ", ".join(f"{n!r}: {n}" for n in self.kwonly) + "}"
        return f"{values}, {self.extra}, {keywords}, {self.varkw or 'None'}"


class _Unset:
    """The dispatch's default for a parameter that has one: the argument was left out."""

    def __repr__(self) -> str:
        return "<argument not passed>"


UNSET = _Unset()


def split(names: Sequence[str], values: tuple, extra: tuple, kwonly: dict,
          varkw: dict | None) -> tuple[tuple, dict]:
    """``(args, kwargs)`` of the call as its caller made it (parameters it left out, to take
    their defaults, are left out): positional values up to the first one left out, later ones
    by keyword."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True
    for name, value in zip(names, values):
        if value is UNSET:
            positional = False
        elif positional:
            args.append(value)
        else:
            kwargs[name] = value
    args.extend(extra)
    kwargs.update((k, v) for k, v in kwonly.items() if v is not UNSET)
    if varkw:
        kwargs.update(varkw)
    return tuple(args), kwargs


@dataclass(frozen=True)
class InlineEntry:
    """An entry's guarded run as lines of the dispatch's body (indented for it) and the
    constants those lines name."""

    lines: tuple[str, ...]
    constants: dict[str, Any]
    run_at: int = 0  # the line ``if ___ok:`` (lines[0] is the guard's ``try:``)
    where: str = ""  # the twin's file and line


_INLINED: "weakref.WeakKeyDictionary[Callable, InlineEntry | None]" = weakref.WeakKeyDictionary()
_GUARD_TAIL = ("except Exception:", "    return ___MISS", "if not ___ok:", "    return ___MISS")


def _guarded_body(guarded: types.FunctionType) -> list[str] | None:
    """The body of the run module's ``guarded`` twin (dedented to 0), or None when ``guarded``
    is some other function or its file is not the text that was loaded (hash in the name)."""
    code = guarded.__code__
    if set(guarded.__globals__) - {"___make_run"} - {n for n in guarded.__globals__
                                                     if n.startswith("__") and n.endswith("__")}:
        return None  # the body may name module globals: not portable
    try:
        text = verified_source(code.co_filename)
    except (OSError, ValueError, TypeError):
        return None
    lines = text.splitlines()
    first = code.co_firstlineno - 1
    if not 0 <= first < len(lines) or not lines[first].startswith("    def guarded("):
        return None
    for node in ast.walk(parse_python(text)):
        if isinstance(node, ast.FunctionDef) and node.name == "guarded" \
                and node.lineno == code.co_firstlineno and node.end_lineno is not None:
            body = lines[first + 1:node.end_lineno]
            if all(not line.strip() or line.startswith(" " * 8) for line in body):
                return [line[8:] for line in body]
    return None


def _renamed(lines: list[str], names: set[str], suffix: str) -> list[str] | None:
    """``lines`` with every name token in ``names`` followed by ``suffix`` (strings and
    comments untouched), or None if they do not tokenize."""
    edits: dict[int, list[tuple[int, int]]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if token.type == tokenize.NAME and token.string in names:
                edits.setdefault(token.start[0] - 1, []).append(token.end)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    out = list(lines)
    for row, ends in edits.items():
        line = out[row]
        for _, col in sorted(ends, reverse=True):
            line = line[:col] + suffix + line[col:]
        out[row] = line
    return out


def inline_entry(guarded: Callable, index: int) -> InlineEntry | None:
    """``guarded`` (``replay.build_run``'s twin: ``try: ___ok = (guard) except: return MISS;
    if not ___ok: return MISS; run``) as dispatch lines for entry ``index``, or None (then
    the dispatch calls it)."""
    if not isinstance(guarded, types.FunctionType) or guarded.__closure__ is None:
        return None
    if guarded not in _INLINED:
        _INLINED[guarded] = _inline_body(guarded)
    made = _INLINED[guarded]
    if made is None:
        return None
    suffix = f"_e{index}"
    cells = dict(zip(guarded.__code__.co_freevars, guarded.__closure__))
    lines = _renamed(list(made.lines), set(cells), suffix)
    if lines is None:
        return None
    lines[0] += f"  # entry {index} inline: its guard ({made.where})"
    lines[made.run_at] += f"  # entry {index}: its run"
    constants = {name + suffix: cell.cell_contents for name, cell in cells.items()}
    lines = _paste_forward(lines, cells, suffix, index, constants)
    return InlineEntry(tuple(lines), constants, made.run_at, made.where)


PASTE_FORWARD = True  # paste the wrapper's ``forward`` body at the run's call of it
_FORWARDS: "weakref.WeakKeyDictionary[Callable, ForwardBody | None]" = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class ForwardBody:
    """A forward function's ``PasteTemplate`` (``forward.paste``, made by the backend's wrapper
    writer) with what its lines read from its closure and module: their values now, constants
    of the dispatch."""

    template: PasteTemplate
    renamed: frozenset[str]  # its locals and constants: suffixed ``_f<entry>`` when pasted
    constants: dict[str, Any]
    where: str

    def body(self, bare: bool) -> list[str]:
        """The lines with each ``return v`` as ``___out = v`` and ``break`` (out of the
        ``while True:`` around them); ``bare``: ``___out`` is the one output itself (the final
        return's only item, other returns' ``v[0]``)."""
        out = list(self.template.lines)
        for row, value, items in reversed(self.template.returns):
            line = out[row]
            lead = line[:len(line) - len(line.lstrip())]
            rest = line.lstrip()[len(f"return {value}"):]  # its comment
            if bare:
                value = items[0] if items is not None and len(items) == 1 else f"({value})[0]"
            out[row:row + 1] = [f"{lead}___out = {value}{rest}", f"{lead}break"]
        return out


def forward_body(forward: Any) -> ForwardBody | None:
    """``forward`` (a function with a ``paste`` template) ready to paste, or None where it has
    none or pasting could change what it does (defaults, a fallback that reads its traceback's
    lines, a name the pasted code could not read the same)."""
    if not PASTE_FORWARD or not isinstance(forward, types.FunctionType):
        return None
    if forward not in _FORWARDS:
        _FORWARDS[forward] = _forward_template(forward)
    return _FORWARDS[forward]


def _forward_template(fn: types.FunctionType) -> ForwardBody | None:
    template = getattr(fn, "paste", None)
    code = fn.__code__
    if not isinstance(template, PasteTemplate) or fn.__defaults__ or fn.__kwdefaults__ \
            or code.co_cellvars or template.params != code.co_varnames[:code.co_argcount]:
        return None
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    fallback = cells.get("___fallback")
    if fallback is None or getattr(fallback.cell_contents, "effects_from", None) is not None:
        return None  # ``recover`` reads the forward file's lines in the traceback
    local = set(code.co_varnames)
    constants = {name: cell.cell_contents for name, cell in cells.items()}
    for name in template.names - local - set(cells):
        if name in fn.__globals__:
            constants[name] = fn.__globals__[name]
        elif not hasattr(builtins, name):  # the dispatch reads the same builtins
            return None
    names = local | set(constants)
    if any(re.search(r"_[ef]\d+$", name) or name == "___out" for name in names):
        return None
    where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    return ForwardBody(template, frozenset(names), constants, where)


def _renamed_names(lines: list[str], names: dict[str, str]) -> list[str] | None:
    """``lines`` with each name in ``names`` replaced by its new name where it is a variable (not
    an attribute after ``.``, not a keyword argument's name), or None if they do not tokenize."""
    edits: dict[int, list[tuple[int, int, str]]] = {}
    depth, previous, pending = 0, None, None
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if pending is not None:
                if not (token.type == tokenize.OP and token.string == "=" and depth > 0):
                    edits.setdefault(pending.start[0] - 1, []).append(
                        (pending.start[1], pending.end[1], names[pending.string]))
                pending = None
            if token.type == tokenize.OP:
                depth += token.string in "([{"
                depth -= token.string in ")]}"
            if token.type == tokenize.NAME and token.string in names \
                    and not (previous is not None and previous.type == tokenize.OP
                             and previous.string == "."):
                pending = token
            if token.type not in (tokenize.NL, tokenize.COMMENT):
                previous = token
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    out = list(lines)
    for row, spans in edits.items():
        line = out[row]
        for start, end, new in sorted(spans, reverse=True):
            line = line[:start] + new + line[end:]
        out[row] = line
    return out


def _paste_forward(lines: list[str], cells: dict[str, Any], suffix: str, index: int,
                   constants: dict[str, Any]) -> list[str]:
    """``lines`` (an entry's run, renamed) with its one ``___out = ___compiled(...)`` replaced
    by the forward's body (``forward_body``), its constants added to ``constants``; ``lines``
    unchanged where that does not apply."""
    cell = cells.get("___compiled")
    template = None if cell is None else forward_body(cell.cell_contents)
    call = f"___out = ___compiled{suffix}("
    rows = [i for i, line in enumerate(lines) if line.strip().startswith(call)]
    if template is None or len(rows) != 1:
        return lines
    row = rows[0]
    line = lines[row]
    try:
        expr = parse_python(line.strip()[len("___out = "):], mode="eval").body
    except SyntaxError:
        return lines
    if not isinstance(expr, ast.Call) or expr.keywords \
            or len(expr.args) != len(template.template.params) \
            or any(isinstance(a, ast.Starred) for a in expr.args):
        return lines
    fsuffix = f"_f{index}"
    names = {name: name + fsuffix for name in template.renamed}
    binds = []
    lead = line[:len(line) - len(line.lstrip())]
    for param, arg in zip(template.template.params, expr.args):
        if isinstance(arg, ast.Name) and param not in template.template.stored:
            names[param] = arg.id  # the dispatch's own variable: no copy
        else:
            binds.append(f"{lead}{param}{fsuffix} = {ast.unparse(arg)}")
    uses = [i for i, text in enumerate(lines) if i != row and "___out" in text]
    bare = len(uses) == 1 and lines[uses[0]].strip() == "return ___out[0]"
    body = _renamed_names(template.body(bare), names)
    if body is None:
        return lines
    pasted = [*binds, f"{lead}while True:  # entry {index}: the wrapper pasted ({template.where})"
              + ("; its one output bare" if bare else ""),
              *(f"{lead}    {b}" if b.strip() else "" for b in body)]
    constants.update({name + fsuffix: value for name, value in template.constants.items()})
    out = lines[:row] + pasted + lines[row + 1:]
    if bare:
        at = uses[0] + len(pasted) - 1
        out[at] = out[at].replace("return ___out[0]", "return ___out")
    return out


def _inline_body(guarded: types.FunctionType) -> InlineEntry | None:
    """The template check of ``inline_entry`` (names not yet renamed), cached per function."""
    body = _guarded_body(guarded)
    if body is None or len(body) < 7 or body[0] != "try:" or not body[1].startswith("    ___ok = ("):
        return None
    for tail in range(2, len(body) - 4):
        if tuple(body[tail:tail + 4]) == _GUARD_TAIL:
            break
    else:
        return None
    code = guarded.__code__
    if any(re.search(r"_e\d+$", name) for name in code.co_freevars + code.co_varnames):
        return None  # a name the renaming of another entry's constants could produce
    where = f"{os.path.basename(guarded.__code__.co_filename)}:{guarded.__code__.co_firstlineno}"
    lines = ["try:", *body[1:tail], "except Exception:", "    ___ok = False", "if ___ok:",
             *("    " + line if line.strip() else line for line in body[tail + 4:])]
    return InlineEntry(tuple(lines), {}, tail + 2, where)


def dispatch_source(fn: types.FunctionType, count: int,
                    inline: Sequence[InlineEntry | None] = ()) -> str | None:
    """The source of the generated ``__call__`` for ``count`` entries, or None; ``inline``:
    the entries whose guarded run is pasted in (None: called)."""
    params = Parameters(fn)
    if any(name.startswith("___") for name in params.names()):
        return None
    call = params.call_args()
    name = fn.__name__ if fn.__name__.isidentifier() else "dispatch"
    tests = ([] if params.varargs else ["___more"]) + [f"{n} is ___UNSET" for n in params.unset]
    inline = list(inline) + [None] * (count - len(inline))
    constants = [c for entry in inline if entry is not None for c in entry.constants]
    lines = [f"def ___make_dispatch(___ever, ___stance, ___DEFAULT, ___MISS, ___UNSET, ___split, "
             f"___names, ___generic, {', '.join(f'___entry_{i}' for i in range(count))}"
             f"{', ___k' if constants else ''}):",
             *(f"    {c} = ___k[{c!r}]" for c in constants),
             f"    def {name}({params.dispatch_params()}):  # dispatch of "
             f"{fn.__qualname__}: {count} entr{'y' if count == 1 else 'ies'}",
             f"        if {' or '.join(tests + ['___ever and ___stance() is not ___DEFAULT'])}:",
             "            # surplus or left-out arguments, or a stance (once one was ever set)",
             f"            ___args, ___kwargs = ___split(___names, {params.split_args()})",
             "            return ___generic(___me, *___args, **___kwargs)"]
    for index, entry in enumerate(inline):
        if entry is not None:
            lines += [f"        {line}" if line.strip() else "" for line in entry.lines]
            continue
        lines += [f"        ___r = ___entry_{index}({call})  # entry {index}: its guard, its run",
                  "        if ___r is not ___MISS:",
                  "            return ___r"]
    lines += [f"        return ___me._slow_call({params.slow_args()})  # no entry holds",
              f"    return {name}", ""]
    return "\n".join(lines)


def make_dispatch(fn: types.FunctionType, guarded: Sequence[Callable], guards: Sequence[Any],
                  generic: Callable) -> Callable | None:
    """The generated ``__call__`` trying ``guarded`` in order, or None where the generic method
    must serve (no entries, ``*args``, a parameter name it needs, a guard with other
    parameters)."""
    if not guarded or not isinstance(fn, types.FunctionType):
        return None
    params = Parameters(fn)
    if any(getattr(g, "params", None) != params.guard_params() for g in guards):
        return None
    inline = [inline_entry(g, i) for i, g in enumerate(guarded)]
    if params.varargs and None in inline:  # a call would build the argument tuple again
        return None
    source = dispatch_source(fn, len(guarded), inline)
    if source is None:
        return None
    constants = {k: v for entry in inline if entry is not None for k, v in entry.constants.items()}
    scope: dict[str, Any] = {}
    exec(compile(source, f"<astcompiler dispatch of {fn.__qualname__}>", "exec"), scope)
    made = scope["___make_dispatch"](EVER_SET, CURRENT_STANCE.get, DEFAULT, MISS, UNSET, split,
                                     tuple(params.posonly + params.positional), generic,
                                     *guarded, *([constants] if constants else []))
    name_like(made, fn)
    made.source = source  # type: ignore[attr-defined]
    return made


def install_dispatch(compiled: Any, fn: Any, guarded: Sequence[Callable],
                     guards: Sequence[Any], generic: Callable) -> None:
    """Set the ``__call__`` of ``compiled``'s own class for ``guarded`` (its entries' guarded
    runs; empty: disabled, eager or no entry yet), or remove it (the generic method serves)."""
    own = type(compiled)
    if not own.__dict__.get(OWN_CLASS):
        return
    made = make_dispatch(fn, guarded, guards, generic)
    if made is not None:
        own.__call__ = made
    elif "__call__" in own.__dict__:
        del own.__call__
