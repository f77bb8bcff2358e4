"""The bridge from modules to the compiler: ``ac.compile(module)`` and ``module.compile()``.

A compiled module call is one compiled function, ``module_call(module, *args, **kwargs)``, that
runs ``module._call_impl``: forward pre-hooks, ``forward`` and forward hooks are inlined into one
graph. Its cache is shared by the modules of one class compiled with the same options (one cache
per class, as torch keeps one per ``forward``), and modules are guarded by type (not identity),
so two instances of a class with same-shaped parameters share an entry;
parameters and buffers are graph inputs, never baked constants.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["run_compiled_module", "OptimizedModule", "module_call", "compiled_module_call"]

# module class -> options key -> CompiledFunction (the entries' guards hold the class anyway)
_CALLS: dict[type, dict[tuple, Any]] = {}
_LOCK = threading.Lock()


def module_call(module: Any, *args: Any, **kwargs: Any) -> Any:
    """What a compiled module call captures: hooks and forward, as ``Module.__call__`` does."""
    return module._call_impl(*args, **kwargs)


def module_title(module: Any, *args: Any, **kwargs: Any) -> str:
    """How the compile log and the slow-compile notice name a compiled module call: the class's
    ``forward`` and where it is defined (``Net.forward (model.py:12)``)."""
    from ..run.compiled import location
    forward = getattr(type(module), "forward", None)
    where = location(forward) if forward is not None else "?"
    return f"{type(module).__qualname__}.forward ({where})"


module_call.__ac_title__ = module_title  # type: ignore[attr-defined]


def compiled_module_call(options: dict[str, Any], module_class: type) -> Any:
    """The CompiledFunction for calls of ``module_class`` modules compiled with ``options``:
    one per class, as torch.compile keeps one cache per ``forward`` code, so
    ``config.recompile_limit`` counts one class's entries, not those of every module class in
    the program (instances of one class share it)."""
    import astcompiler
    key = tuple(sorted((k, repr(v)) for k, v in options.items()))
    with _LOCK:
        per_class = _CALLS.get(module_class)
        if per_class is None:
            per_class = _CALLS[module_class] = {}
        compiled = per_class.get(key)
        if compiled is None:
            compiled = per_class[key] = astcompiler.compile(module_call, **options)
    return compiled


def run_compiled_module(module: Any, *args: Any, **kwargs: Any) -> Any:
    """``module(...)`` after ``module.compile(**options)``."""
    return compiled_module_call(module._compile_kwargs or {}, type(module))(module, *args,
                                                                            **kwargs)


class OptimizedModule:
    """What ``ac.compile(module)`` returns: calls go through the compiler; everything else
    (parameters, state_dict, submodules, train/eval) is the original module's (``_orig_mod``)."""

    def __init__(self, module: Any, options: dict[str, Any]) -> None:
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled_call", compiled_module_call(options, type(module)))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled_call(self._orig_mod, *args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._orig_mod, name, value)

    def __repr__(self) -> str:
        return f"OptimizedModule({self._orig_mod!r})"
