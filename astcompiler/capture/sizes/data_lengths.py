"""Lengths of slices whose bounds are read from array data (``data[indptr[i]:indptr[i + 1]]``).

Such a length is an unbacked size (``ops.sizes.slice_length`` asks ``data_length`` for it: one
symbol per dimension and pair of bound values, kept in ``Tracer.data_lengths``), and the slice
that has it is its run-time source: where the program reads the length (``len(vals)``,
``vals.shape[0]``, ``vals.shape[0] > 0``, ``range(len(vals))``) it is a graph value read from
the slice, inside the loop or branch that made it (after it, a graph break).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...graph import Node

if TYPE_CHECKING:  # pragma: no cover
    from ..proxy import ArrayProxy
    from ..tracer import Tracer


def has_data_bounds(tracer: "Tracer", node_args: tuple) -> bool:
    """A slice of a subscript's index has a bound read from array data (not a size)."""
    index = node_args[1] if len(node_args) > 1 else None
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(item, slice) and any(
        isinstance(bound, Node) and bound not in tracer.node_exprs
        for bound in (item.start, item.stop)) for item in items)


def define_lengths(tracer: "Tracer", proxy: "ArrayProxy") -> None:
    """``proxy``'s sizes that are data lengths without a source get it as their source."""
    if not tracer.data_lengths or proxy.node.meta is None:
        return
    lengths = set(tracer.data_lengths.values())
    for dim, size in enumerate(proxy.node.meta.shape):
        if size in lengths and size not in tracer.symbol_nodes:
            tracer.define_symbol(size, proxy, dim)


def readable_length(tracer: "Tracer", symbol: Any) -> bool:
    """``symbol`` is a data length whose source is a value of a scope open now."""
    defined = tracer.symbol_nodes.get(symbol)
    return symbol in set(tracer.data_lengths.values()) and defined is not None \
        and any(defined[0].node.graph is scope.graph for scope in tracer.scopes)


def read_at_run_time(tracer: "Tracer", expr: Any) -> bool:
    """``expr`` (a size expression or relation) involves data lengths, each readable here: it
    is computed at run time rather than decided by a guard."""
    if not tracer.data_lengths:
        return False
    lengths = set(tracer.data_lengths.values())
    symbols = [s for s in expr.free_symbols if s in lengths]
    return bool(symbols) and all(readable_length(tracer, s) for s in symbols)
