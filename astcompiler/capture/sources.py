"""Sources: where a value the capture relied on comes from, for guards and for running.

``name`` uses torch's syntax (``L['x']``, ``G['np']``, ``L['t'][0]``) for messages and for
``config.dynamic_sources``; ``expr`` is the Python expression that fetches the value inside the
generated guard and run functions (whose parameters are the user function's parameters).

A dict key with no faithful literal (a type such as ``np.float32``, an enum member, a function,
any hashable object) is written in ``expr`` as a constant name (``___key_float32``); the object
itself travels in ``constants``, which guard and run code add to their namespace.
"""

from __future__ import annotations

import enum
import math
import re
import threading
from dataclasses import dataclass, field
from typing import Any

_LITERAL_KEYS = (bool, int, str, bytes, type(None))


@dataclass(frozen=True)
class Source:
    name: str
    expr: str
    constants: tuple[tuple[str, Any], ...] = field(default=(), compare=False, repr=False)

    def item(self, key: object) -> "Source":
        literal = key_literal(key)
        if literal is not None:
            return Source(f"{self.name}[{literal}]", f"{self.expr}[{literal}]", self.constants)
        var = key_constant(key)
        return Source(f"{self.name}[{_display(key)}]", f"{self.expr}[{var}]",
                      self.constants + ((var, key),))

    def attr(self, attr: str) -> "Source":
        return Source(f"{self.name}.{attr}", f"{self.expr}.{attr}", self.constants)

    def __str__(self) -> str:
        return self.name


def key_literal(key: object) -> str | None:
    """``repr(key)`` when evaluating it gives back an equal key of the same type, else None."""
    kind = type(key)
    if kind in _LITERAL_KEYS:
        return repr(key)
    if kind is float and math.isfinite(key):
        return repr(key)
    if kind is tuple:
        parts = [key_literal(k) for k in key]
        if all(p is not None for p in parts):
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return None


_KEYS: dict[str, Any] = {}
_KEY_NAMES: dict[int, tuple[Any, str]] = {}
_KEYS_LOCK = threading.Lock()


def key_constant(key: object) -> str:
    """A stable namespace name for ``key`` (``___key_float32``, ``___key_Mode_ADD``): the same
    object always gets the same name in this process, two objects never share one."""
    with _KEYS_LOCK:
        known = _KEY_NAMES.get(id(key))
        if known is not None and known[0] is key:
            return known[1]
        base = "___key_" + (re.sub(r"\W+", "_", _display(key)).strip("_")[:40] or "obj")
        var, n = base, 1
        while var in _KEYS:
            var, n = f"{base}_{n}", n + 1
        _KEYS[var] = key  # kept alive: the id stays unique
        _KEY_NAMES[id(key)] = (key, var)
        return var


def _display(key: object) -> str:
    """How a key reads in a source name: ``np.float32``, ``Mode.ADD``, ``f``, else its repr."""
    if isinstance(key, enum.Enum):
        return f"{type(key).__qualname__}.{key.name}"
    if isinstance(key, type):
        module = getattr(key, "__module__", "")
        return ("np." if module == "numpy" else "") + key.__qualname__
    qualname = getattr(key, "__qualname__", None)
    if isinstance(qualname, str):
        return qualname
    return repr(key)


GLOBALS_VAR = "___G"


def local_source(param: str) -> Source:
    return Source(f"L[{param!r}]", param)


def global_source(name: str, globals_var: str = GLOBALS_VAR, module: str | None = None) -> Source:
    shown = f"G[{name!r}]" if module is None else f"G[{module!r}][{name!r}]"
    return Source(shown, f"{globals_var}[{name!r}]")


def cell_source(name: str, cell_var: str) -> Source:
    return Source(f"C[{name!r}]", f"{cell_var}.cell_contents")
