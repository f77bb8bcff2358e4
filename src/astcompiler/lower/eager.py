"""The ``eager`` backend: run the graph node by node with each op's NumPy reference."""

from __future__ import annotations

from typing import Any

from ..graph import Graph, Node, map_nodes
from ..ops import REGISTRY
from .base import CompiledGraph


def interpret(graph: Graph, inputs: tuple) -> tuple:
    """Evaluate ``graph`` on concrete inputs; the reference semantics of every backend."""
    env: dict[Node, Any] = {}
    for node, value in zip(graph.placeholders, inputs):
        env[node] = value
    lookup = env.__getitem__
    for node in graph.nodes:
        if node.op == "call":
            args = map_nodes(node.args, lookup)
            kwargs = map_nodes(node.kwargs, lookup)
            env[node] = REGISTRY[node.target].impl(*args, **kwargs)
        elif node.op == "region":
            env[node] = node.extra["interpret"](node, env)
        elif node.op == "output":
            return tuple(map_nodes(node.args[0], lookup))
    raise AssertionError("graph has no output node")


def eager_backend(graph: Graph, example_inputs: list) -> CompiledGraph:
    def run(*inputs: Any) -> tuple:
        return interpret(graph, inputs)

    code = "# eager backend: the graph runs op by op on NumPy\n" + graph.print_readable(
        "eager_forward", print_output=False)
    return CompiledGraph(run, output_code=code)
