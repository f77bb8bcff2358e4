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


def eliminate_common_subexpressions(graph: Graph, has_side_effects: SideEffectPredicate,
                                    is_pure: Callable[[Node], bool]) -> int:
    """Merge identical pure calls. A side-effecting node clears the table, since reads
    after a mutation may see different data."""
    seen: dict[Any, Node] = {}
    merged = 0
    for node in list(graph.nodes):
        if node.op != "call":
            if node.op == "region":
                seen.clear()
            continue
        if has_side_effects(node):
            seen.clear()
            continue
        if not is_pure(node):
            continue
        key = (node.target, _key(node.args), _key(node.kwargs))
        previous = seen.get(key)
        if previous is None:
            seen[key] = node
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
