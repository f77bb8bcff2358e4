"""``signature_of``: a function's signature, cached (light: dispatch and warm starts use it
without loading the capture machinery)."""

from __future__ import annotations

import inspect
import threading
import types
from typing import Any, Callable

_SIGNATURES: dict[Any, list[tuple[Any, tuple, inspect.Signature]]] = {}
_SIG_LOCK = threading.Lock()
_SIG_VERSIONS = 8  # signatures kept per code object (one per set of defaults seen)


def signature_of(fn: Callable) -> inspect.Signature:
    """``inspect.signature(fn)``, cached per code object *and* defaults: functions that share
    code (``[lambda x, k=k: ... for k in ...]``) or whose ``__defaults__``/``__kwdefaults__``
    changed get their own defaults, never the first function's."""
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None:
        return inspect.signature(fn, follow_wrapped=False)
    defaults = fn.__defaults__
    kwdefaults = tuple((fn.__kwdefaults__ or {}).items())
    with _SIG_LOCK:
        for known_defaults, known_kw, sig in _SIGNATURES.get(code, ()):
            if known_defaults is defaults and _same_items(known_kw, kwdefaults):
                return sig
    sig = inspect.signature(fn, follow_wrapped=False)
    with _SIG_LOCK:
        versions = _SIGNATURES.setdefault(code, [])
        versions.insert(0, (defaults, kwdefaults, sig))
        del versions[_SIG_VERSIONS:]
    return sig


def _same_items(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a, b))
