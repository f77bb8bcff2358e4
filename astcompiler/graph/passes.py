"""Graph clean-ups: dead-code elimination, common-subexpression elimination, dead carried values."""

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


def output_unused(graph: Graph, observable: Callable[[Node], bool]) -> int:
    """Make the unused calls ``observable`` names (an FP warning is their only effect) extra
    outputs of ``graph``, after the ones the caller reads: every backend then computes them
    (a compiler would drop an unused value, and its warning with it). Returns how many."""
    kept = [n for n in graph.nodes if n.op == "call" and not n.users and observable(n)]
    if kept:
        out = graph.output_node
        _set_args(out, ((*out.args[0], *kept),))
    return len(kept)


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




# ---- dead carried values --------------------------------------------------------------------
NodePredicate = Callable[[Node], bool]
_LEADING = {"for_range": 1}  # placeholders before the carried ones (a loop body's index)
_CARRYING = ("for_range", "while_loop", "cond")


def eliminate_dead_carried(graph: Graph, result_index: Callable[[Node], int | None],
                           erasable: NodePredicate) -> int:
    """Drop the carried values of regions that nothing reads: not the enclosing graph after the
    region (no ``result_index`` user reads that slot) and no subgraph on the next trip (its
    placeholder for the slot has no users). Returns how many slots were dropped.

    Only values whose computation stays are dropped: a slot goes only when each subgraph's
    value for it is a placeholder, a node other nodes still read, or a node ``erasable`` says
    can go without losing an effect, an error or a warning (a literal). Likewise its initial
    value. So every exception, warning and side effect of the program still happens; only the
    stores of the dead values (a kernel's output buffers, a loop's state copies) go.
    ``result_index(user)``: the slot a user of a region reads, ``None`` for any other use."""
    dropped = 0
    changed = True
    while changed:
        changed = False
        for region in _regions(graph):
            for k in reversed(range(region.info.n_carried)):
                if _dead_slot(region, k, result_index, erasable):
                    _drop_slot(region, k, result_index, erasable)
                    dropped += 1
                    changed = True
    return dropped


def _regions(graph: Graph) -> list[Node]:
    """Region nodes of ``graph`` and of its regions' subgraphs, innermost first."""
    found: list[Node] = []
    for node in graph.nodes:
        if node.op == "region":
            for sub in node.info.subgraphs.values():
                found.extend(_regions(sub))
            if node.target in _CARRYING:
                found.append(node)
    return found


def _read_slot(region: Node, user: Node, result_index: Callable[[Node], int | None]) -> int | None:
    """The slot ``user`` reads from ``region``; ``None`` for any other use of it."""
    if user.op != "call" or not user.args or user.args[0] is not region \
            or sum(1 for n in user.all_input_nodes() if n is region) != 1:
        return None
    index = result_index(user)
    return index if type(index) is int else None


def _slot_placeholder(region: Node, sub: Graph, k: int) -> Node:
    return sub.placeholders[_LEADING.get(region.target, 0) + k]


def _dead_slot(region: Node, k: int, result_index: Callable[[Node], int | None],
               erasable: NodePredicate) -> bool:
    for user in region.users:
        index = _read_slot(region, user, result_index)
        if index is None or index == k:
            return False
    _, init, _ = region.info.split(region.args)
    if not _goes_cleanly(init[k], region, erasable):
        return False
    for sub in region.info.subgraphs.values():
        out = sub.output_node
        values = out.args[0]
        placeholder = _slot_placeholder(region, sub, k)
        if any(u is not out for u in placeholder.users) or any(
                v is placeholder for j, v in enumerate(values) if j != k):
            return False  # the next trip (or the loop test) reads it
        if not _goes_cleanly(values[k], out, erasable):
            return False
    return True


def _goes_cleanly(value: Any, user: Node, erasable: NodePredicate) -> bool:
    """Whether ``user`` can stop reading ``value`` with nothing lost: it is no node, a
    placeholder, read by another node (or twice by ``user``), or an erasable node."""
    if not isinstance(value, Node) or value.op == "placeholder":
        return True
    if any(u is not user for u in value.users):
        return True
    if user.op == "region" and sum(1 for a in user.args if a is value) > 1:
        return True
    elif user.op == "output" and sum(1 for a in user.args[0] if a is value) > 1:
        return True
    return value.op == "call" and erasable(value)


def _drop_slot(region: Node, k: int, result_index: Callable[[Node], int | None],
               erasable: NodePredicate) -> None:
    info = region.info
    position = info.n_controls + k
    initial = region.args[position]
    _set_args(region, region.args[:position] + region.args[position + 1:])
    _erase_if_unused(region.graph, initial, erasable)
    for sub in info.subgraphs.values():
        sub.nodes.remove(_slot_placeholder(region, sub, k))
        out = sub.output_node
        values = out.args[0]
        _set_args(out, (values[:k] + values[k + 1:],))
        _erase_if_unused(sub, values[k], erasable)
    info.n_carried -= 1
    if info.names:
        info.names = info.names[:k] + info.names[k + 1:]
    for user in region.users:
        index = _read_slot(region, user, result_index)
        if index is not None and index > k:
            user.args = (user.args[0], index - 1, *user.args[2:])


def _set_args(node: Node, args: tuple) -> None:
    """Replace ``node.args``, keeping every input's ``users`` list exact."""
    for inp in node.all_input_nodes():
        inp.users = [u for u in inp.users if u is not node]
    node.args = tuple(args)
    for inp in node.all_input_nodes():
        inp.users.append(node)


def _erase_if_unused(graph: Graph, value: Any, erasable: NodePredicate) -> None:
    if isinstance(value, Node) and value.op == "call" and not value.users and erasable(value):
        graph.erase(value)


__all__ = ["eliminate_dead_code", "eliminate_common_subexpressions", "eliminate_dead_carried",
           "output_unused", "replace_all_uses", "map_nodes"]
