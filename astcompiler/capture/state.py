"""Per-thread capture state and the table of specially handled callables (cheap to import)."""

from __future__ import annotations

import threading
from typing import Any, Callable

_STATE = threading.local()

# callable -> handler(runtime, *args, **kwargs): what a call to it becomes during capture
HANDLERS: dict[Any, Callable[..., Any]] = {}


def is_compiling() -> bool:
    """True while astcompiler is capturing a graph on this thread."""
    return getattr(_STATE, "depth", 0) > 0


class compiling_scope:
    """Marks the current thread as capturing for the duration of a ``with`` block."""

    def __enter__(self) -> None:
        _STATE.depth = getattr(_STATE, "depth", 0) + 1

    def __exit__(self, *exc: Any) -> None:
        _STATE.depth -= 1
