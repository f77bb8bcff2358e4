"""Graph clean-ups: dead-code elimination and common-subexpression elimination."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .ir import Graph, Node, map_nodes

# ops whose effect is not their value: never removed, and they end a CSE window
SideEffectPredicate = Callable[[Node], bool]


def eliminate_dead_code(graph: Graph, has_side_effects: SideEffectPredicate) -> int:
    """Remove call nodes whose values are never used. Returns how many were removed."""
    removed = 0
    for node in reversed(list(graph.nodes)):
        if node.op == "call" and not node.users and not has_side_effects(node):
            graph.erase(node)
            removed += 1
    return removed


def _key(value: Any) -> Any:
    if isinstance(value, Node):
        return ("node", id(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _key(v)) for k, v in value.items()))
    if isinstance(value, slice):
        return ("slice", _key(value.start), _key(value.stop), _key(value.step))
    if isinstance(value, np.ndarray):
        return ("array", id(value))
    if isinstance(value, float) and value != value:
        return ("nan",)
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value).__name__, value)


def _storage_root(node: Node, is_view: Callable[[Node], bool]) -> Node:
    while node.op == "call" and is_view(node) and node.args and isinstance(node.args[0], Node):
        node = node.args[0]
    return node


def _protected(graph: Graph, has_side_effects: SideEffectPredicate,
               is_view: Callable[[Node], bool]) -> set[Node]:
    """Arrays that must stay distinct objects: storage some op writes to (merging two equal
    values would let the write show through the other), and the graph's outputs."""
    protected: set[Node] = set()
    for node in graph.nodes:
        if node.op == "call" and has_side_effects(node) and node.args \
                and isinstance(node.args[0], Node):
            protected.add(_storage_root(node.args[0], is_view))
        elif node.op == "region":
            protected.update(_storage_root(n, is_view) for n in node.all_input_nodes())
        elif node.op == "output":
            protected.update(n for n in node.all_input_nodes()
                             if n.meta is None or not n.meta.scalar)
    return protected


def eliminate_common_subexpressions(graph: Graph, has_side_effects: SideEffectPredicate,
                                    is_pure: Callable[[Node], bool],
                                    is_view: Callable[[Node], bool] = lambda n: False) -> int:
    """Merge identical pure calls. A side-effecting node clears the table, since reads after a
    mutation may see different data; arrays that are written to or returned are never merged."""
    seen: dict[Any, Node] = {}
    merged = 0
    protected = _protected(graph, has_side_effects, is_view)
    for node in list(graph.nodes):
        if node.op != "call":
            if node.op == "region":
                seen.clear()
            continue
        if has_side_effects(node):
            seen.clear()
            continue
        if not is_pure(node) or _storage_root(node, is_view) in protected:
            continue
        key = (node.target, _key(node.args), _key(node.kwargs))
        previous = seen.get(key)
        if previous is None:
            seen[key] = node
            continue
        if _storage_root(previous, is_view) in protected:
            continue
        for user in list(node.users):
            user.replace_input(node, previous)
        graph.erase(node)
        merged += 1
    return merged


def replace_all_uses(graph: Graph, old: Node, new: Node) -> None:
    for user in list(old.users):
        user.replace_input(old, new)


__all__ = ["eliminate_dead_code", "eliminate_common_subexpressions", "replace_all_uses", "map_nodes"]
