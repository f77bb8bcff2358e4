"""Helpers for users' tests: ``CompileCounter`` counts frames and ops and runs graphs eagerly."""

from __future__ import annotations

from typing import Any

from .graph import Graph


class CompileCounter:
    """A backend that counts what it is given: ``frame_count`` graphs with ``op_count`` ops."""

    def __init__(self) -> None:
        self.frame_count = 0
        self.op_count = 0
        self.graphs: list[Graph] = []

    def __call__(self, graph: Graph, example_inputs: list) -> Any:
        from .lower.eager import eager_backend
        self.frame_count += 1
        self.op_count += graph.op_count()
        self.graphs.append(graph)
        return eager_backend(graph, example_inputs)

    def clear(self) -> None:
        self.frame_count = 0
        self.op_count = 0
        self.graphs.clear()


__all__ = ["CompileCounter"]
