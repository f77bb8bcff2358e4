"""Warnings from the user's line: where the plain call's NumPy warnings come from.

NumPy warns from the Python frame that calls the ufunc; Python's filters read that frame's file,
line, module name and ``__warningregistry__`` (the default action shows a warning once per
location). A compiled call computes the op elsewhere, so a node that may warn carries its
``place`` (``Node.place``: the user's file, line and module globals), and the backends warn
from there: ``at_place`` runs a NumPy call in a frame at the user's line (the eager backend),
``warn_at`` re-emits a warning there (a numba kernel's FP flags, reported as NumPy words them).

Light: no op registry (the numba runtime imports it).
"""

from __future__ import annotations

import sys
import types
import warnings
from typing import Any, Callable

# a call whose frame has the user's file, line and module globals: NumPy warns "from" there
_CALL = "def call(impl, /, *args, **kwargs): return impl(*args, **kwargs)"
# the ndarray method the user called (``x.astype(t)``), called from that frame: NumPy's C method
# warns from the user's line, not from the op's Python reference (``ops/pointwise.py``)
_METHOD_CALL = "def call(impl, /, *args, **kwargs): return args[0].{method}(*args[1:], **kwargs)"
_CODES: dict[str | None, types.CodeType] = {}
_CALLS: dict[tuple[str, int, int, str | None], Callable[..., Any]] = {}
_REGISTRIES: dict[str, dict] = {}  # module name -> registry, for modules no longer imported
_GLOBALS: dict[str, dict] = {}  # module name -> stand-in globals, for modules not imported


def _code(method: str | None) -> types.CodeType:
    code = _CODES.get(method)
    if code is None:
        if method is not None and not method.isidentifier():
            raise ValueError(f"not a method name: {method!r}")
        source = _CALL if method is None else _METHOD_CALL.format(method=method)
        module = compile(source, "<place>", "exec")
        code = _CODES[method] = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    return code


def at_place(place: tuple) -> Callable[..., Any]:
    """``call(impl, *args, **kwargs)`` running in a frame at ``place`` (file, line, module
    globals[, method]): the warnings NumPy raises in it have the user's location, module and
    registry. With ``method`` (the user called the op as that ndarray method and its ``impl`` is
    a Python function), the call is ``args[0].method(*args[1:], **kwargs)``, as written."""
    filename, lineno, module_globals = place[:3]
    method = place[3] if len(place) > 3 else None
    key = (filename, lineno, id(module_globals), method)
    call = _CALLS.get(key)
    if call is None:
        code = _code(method).replace(co_filename=filename, co_firstlineno=lineno)
        call = _CALLS[key] = types.FunctionType(code, module_globals, "call")
    return call


def literal_place(place: tuple | None) -> tuple | None:
    """``place`` as literals generated code can hold: (file, line, module name[, method])."""
    if place is None:
        return None
    return (place[0], place[1], str(place[2].get("__name__", "<string>")), *place[3:])


def warn_at(message: str, category: type[Warning], place: tuple) -> None:
    """``warnings.warn`` as if from ``place`` (file, line, module name), with that module's
    ``__warningregistry__`` (a warnings filter set to "error" raises it, as NumPy's would)."""
    filename, lineno, module = place[:3]
    found = sys.modules.get(module)
    module_globals = getattr(found, "__dict__", None)
    if module_globals is not None:
        registry = module_globals.setdefault("__warningregistry__", {})
    else:
        registry = _REGISTRIES.setdefault(module, {})
    warnings.warn_explicit(message, category, filename, lineno, module=module,
                           registry=registry, module_globals=module_globals)


def at_line(place: tuple) -> Callable[..., Any]:
    """``at_place`` for a literal ``place`` (file, line, module name[, method]) of generated
    code: the module's globals are found by its name (a dict of that name when not imported)."""
    filename, lineno, module = place[:3]
    found = sys.modules.get(module)
    module_globals = getattr(found, "__dict__", None)
    if module_globals is None:
        module_globals = _GLOBALS.setdefault(module, {"__name__": module})
    return at_place((filename, lineno, module_globals, *place[3:]))


__all__ = ["at_line", "at_place", "literal_place", "warn_at"]
