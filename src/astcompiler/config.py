"""``ac.config``: settings read at compile and dispatch time, with ``patch()``.

Settings are per thread when patched (``config.patch`` is thread-local), so two users of the
library in one process never see each other's temporary changes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator


def _default_cache_dir() -> str:
    env = os.environ.get("ASTCOMPILER_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return os.path.join(base, "astcompiler")


def _env_list(name: str) -> str:
    return os.environ.get(name, "")


@dataclass
class _Settings:
    dynamic_sources: str = field(default_factory=lambda: _env_list("ASTCOMPILER_DYNAMIC_SOURCES"))
    unbacked_sources: str = ""
    static_sources: str = ""
    automatic_dynamic_shapes: bool = True
    assume_static_by_default: bool = True
    specialize_int: bool = False
    specialize_float: bool = True
    recompile_limit: int = 8
    fail_on_recompile_limit_hit: bool = False
    error_on_recompile: bool = False
    skip_nnmodule_hook_guards: bool = True
    force_parameter_static_shapes: bool = True
    force_nn_module_property_static_shapes: bool = True
    cache_dir: str = field(default_factory=_default_cache_dir)
    unroll_limit: int = 64
    unroll_node_budget: int = 256
    inline_depth_limit: int = 16
    parallel_threshold: int = 1 << 16
    numba_cache: bool = True
    pgo: bool = False
    verbose: bool = False


_FIELDS = {f.name for f in fields(_Settings)}


class Config:
    """Attribute access to settings; ``patch`` overrides them for the current thread."""

    def __init__(self) -> None:
        object.__setattr__(self, "_base", _Settings())
        object.__setattr__(self, "_local", threading.local())

    def _overrides(self) -> list[dict[str, Any]]:
        local = self._local
        if not hasattr(local, "stack"):
            local.stack = []
        return local.stack

    def __getattr__(self, name: str) -> Any:
        if name not in _FIELDS:
            raise AttributeError(f"astcompiler.config has no setting {name!r}; "
                                 f"known settings: {', '.join(sorted(_FIELDS))}")
        for layer in reversed(self._overrides()):
            if name in layer:
                return layer[name]
        return getattr(self._base, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _FIELDS:
            raise AttributeError(f"astcompiler.config has no setting {name!r}")
        setattr(self._base, name, value)

    def __dir__(self) -> list[str]:
        return sorted(_FIELDS)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in sorted(_FIELDS)}

    @contextlib.contextmanager
    def _patched(self, changes: dict[str, Any]) -> Iterator[None]:
        stack = self._overrides()
        stack.append(changes)
        try:
            yield
        finally:
            stack.remove(changes)

    def patch(self, arg: dict[str, Any] | None = None, **changes: Any) -> "_Patch":
        """Override settings inside a ``with`` block or a decorated function."""
        if arg:
            changes = {**arg, **changes}
        unknown = set(changes) - _FIELDS
        if unknown:
            raise AttributeError(f"astcompiler.config has no setting(s) {sorted(unknown)}")
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, config: Config, changes: dict[str, Any]) -> None:
        self._config = config
        self._changes = changes
        self._contexts: list[Any] = []

    def __enter__(self) -> "_Patch":
        ctx = self._config._patched(dict(self._changes))
        self._contexts.append(ctx)
        ctx.__enter__()
        return self

    def __exit__(self, *exc: Any) -> bool:
        self._contexts.pop().__exit__(*exc)
        return False

    def __call__(self, fn):  # decorator
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._config._patched(dict(self._changes)):
                return fn(*args, **kwargs)
        return wrapper


config = Config()
