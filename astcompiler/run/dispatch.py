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

Surplus positional arguments (``*___more``), arguments left out to take a default (the
parameter's dispatch default is ``___UNSET``: the function's own defaults may change after the
compile) and a stance other than the default take the generic method (``___generic``), with the
call rebuilt as its caller made it. A function with ``*args`` keeps the generic method (the
dispatch would build its argument tuple twice). Missing or unexpected arguments fail in the
generated function itself, named as the original's message names them. Without entries (or
for a signature it cannot copy) the class keeps the generic method.
"""

from __future__ import annotations

import types
from typing import Any, Callable, Sequence

from .run_functions import name_like
from .sentinels import MISS
from .stance import CURRENT_STANCE, DEFAULT, EVER_SET

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
            return f"{name}=___UNSET" if name in self.defaulted else name

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


def dispatch_source(fn: types.FunctionType, count: int) -> str | None:
    """The source of the generated ``__call__`` for ``count`` entries, or None."""
    params = Parameters(fn)
    if any(name.startswith("___") for name in params.names()):
        return None
    call = params.call_args()
    name = fn.__name__ if fn.__name__.isidentifier() else "dispatch"
    tests = ([] if params.varargs else ["___more"]) + [f"{n} is ___UNSET" for n in params.defaulted]
    lines = [f"def ___make_dispatch(___ever, ___stance, ___DEFAULT, ___MISS, ___UNSET, ___split, "
             f"___names, ___generic, {', '.join(f'___entry_{i}' for i in range(count))}):",
             f"    def {name}({params.dispatch_params()}):  # dispatch of "
             f"{fn.__qualname__}: {count} entr{'y' if count == 1 else 'ies'}",
             f"        if {' or '.join(tests + ['___ever and ___stance() is not ___DEFAULT'])}:",
             "            # surplus or left-out arguments, or a stance (once one was ever set)",
             f"            ___args, ___kwargs = ___split(___names, {params.split_args()})",
             "            return ___generic(___me, *___args, **___kwargs)"]
    for index in range(count):
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
    if params.varargs or any(getattr(g, "params", None) != params.guard_params() for g in guards):
        return None
    source = dispatch_source(fn, len(guarded))
    if source is None:
        return None
    scope: dict[str, Any] = {}
    exec(compile(source, f"<astcompiler dispatch of {fn.__qualname__}>", "exec"), scope)
    made = scope["___make_dispatch"](EVER_SET, CURRENT_STANCE.get, DEFAULT, MISS, UNSET, split,
                                     tuple(params.posonly + params.positional), generic,
                                     *guarded)
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
