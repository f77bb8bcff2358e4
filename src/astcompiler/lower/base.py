"""What every backend returns, and how backends are looked up by name.

A backend is ``backend(graph, example_inputs) -> callable``: the callable takes the graph's
placeholder values in order and returns the tuple of the output node's values.
Built-in backends return a ``CompiledGraph`` that also carries its generated source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..graph import Graph

Backend = Callable[[Graph, list], Callable[..., tuple]]


@dataclass
class CompiledGraph:
    """A runnable lowering of one graph, with the source a user can read."""

    fn: Callable[..., tuple]
    output_code: str = ""
    files: list[str] = field(default_factory=list)
    kernels: dict[str, str] = field(default_factory=dict)  # kernel name -> source

    def __call__(self, *args: Any) -> tuple:
        return self.fn(*args)


_BACKENDS: dict[str, Callable[[], Backend]] = {}


def register_backend(name: str, loader: Callable[[], Backend]) -> None:
    """Register a backend by name; ``loader`` imports it lazily (``import astcompiler`` stays cheap)."""
    _BACKENDS[name] = loader


def list_backends() -> list[str]:
    return sorted(_BACKENDS)


def check_backend(backend: str | Backend) -> None:
    """Fail early (and cheaply: nothing is imported) on an unknown backend name."""
    if callable(backend):
        return
    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {list_backends()} "
                         f"or pass a callable backend(graph, example_inputs)")


def lookup_backend(backend: str | Backend) -> Backend:
    if callable(backend):
        return backend
    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {list_backends()} "
                         f"or pass a callable backend(graph, example_inputs)")
    return _BACKENDS[backend]()
