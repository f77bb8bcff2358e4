"""The graph IR: a small, fx-like list of nodes in program order.

A ``Graph`` holds ``Node``s of four kinds:

* ``placeholder``: a graph input; ``target`` is its source name (``L['x']``).
* ``call``: an op from the registry; ``target`` is the op name, ``args``/``kwargs``
  hold Nodes, Python constants, slices, tuples, dtypes.
* ``output``: the single last node; ``args[0]`` is the flat tuple of returned values.
* ``region``: a structured loop/branch (``for_range``, ``while_loop``, ``cond``) or a
  ``nonstrict_call``; ``info`` (a ``RegionInfo``) holds its subgraphs and how its args split.

Node order is execution order: ops that mutate an array (``setitem``, ``copy_``)
act on the storage their destination views, so readers after them see the write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import numpy as np

Shape = tuple  # tuple[int | sympy.Expr, ...]


@dataclass(frozen=True)
class TensorMeta:
    """Static facts about an array value: shape, dtype and NumPy scalar-ness.

    ``scalar`` is True for 0-d results that NumPy returns as NumPy scalars
    (``x.sum()``, ``a[0]`` on 1-d), False for true 0-d arrays.
    """

    shape: Shape
    dtype: np.dtype
    scalar: bool = False
    pytype: type | None = None  # int/float/bool/complex: a Python scalar (NEP 50 weak), not NumPy's

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def short(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        if self.pytype is not None:
            return self.pytype.__name__
        kind = "scalar " if self.scalar else ""
        return f"{kind}{dtype_abbrev(self.dtype)}[{dims}]"


_ABBREV = {
    "float64": "f64", "float32": "f32", "float16": "f16",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
    "uint64": "u64", "uint32": "u32", "uint16": "u16", "uint8": "u8",
    "bool": "b8", "complex128": "c128", "complex64": "c64",
}


def dtype_abbrev(dtype: np.dtype) -> str:
    return _ABBREV.get(np.dtype(dtype).name, np.dtype(dtype).name)


class Node:
    """One value-producing (or side-effecting) step of a graph."""

    __slots__ = ("graph", "name", "op", "target", "args", "kwargs", "meta", "users",
                 "origin", "info", "operator", "place")

    def __init__(self, graph: "Graph", name: str, op: str, target: Any,
                 args: tuple = (), kwargs: dict | None = None,
                 meta: TensorMeta | None = None, origin: str | None = None):
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.meta = meta
        self.users: list[Node] = []
        self.origin = origin
        self.info: RegionInfo | None = None  # region nodes only
        # written as a Python operator (``a / b``), not a NumPy call: on NumPy scalars that is
        # NumPy's scalar math (its warnings say "in scalar divide")
        self.operator = False
        # (user file, line, the user module's globals[, ndarray method the user called]): where
        # NumPy's FP warnings of this op come from in the plain call (``None``: the op cannot
        # warn, or no user frame); ``lower/places.py`` runs the op there
        self.place: tuple | None = None
        for inp in self.all_input_nodes():
            inp.users.append(self)

    def all_input_nodes(self) -> list["Node"]:
        found: list[Node] = []
        for value in (*self.args, *self.kwargs.values()):
            _collect_nodes(value, found)
        return found

    def replace_input(self, old: "Node", new: "Node") -> None:
        self.args = map_nodes(self.args, lambda n: new if n is old else n)
        self.kwargs = map_nodes(self.kwargs, lambda n: new if n is old else n)
        if self in old.users:
            old.users = [u for u in old.users if u is not self]
        if self not in new.users:
            new.users.append(self)

    def __repr__(self) -> str:
        return f"%{self.name}"


def _collect_nodes(value: Any, found: list[Node]) -> None:
    if isinstance(value, Node):
        if value not in found:
            found.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _collect_nodes(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect_nodes(item, found)
    elif isinstance(value, slice):
        for item in (value.start, value.stop, value.step):
            _collect_nodes(item, found)


def map_leaves(value: Any, kind: type, fn: Callable[[Any], Any]) -> Any:
    """Rebuild ``value`` (nested tuples/lists/dicts/slices) with each instance of ``kind``
    mapped by ``fn``."""
    if isinstance(value, kind):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_leaves(v, kind, fn) for v in value)
    if isinstance(value, list):
        return [map_leaves(v, kind, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_leaves(v, kind, fn) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(map_leaves(value.start, kind, fn), map_leaves(value.stop, kind, fn),
                     map_leaves(value.step, kind, fn))
    return value


def map_nodes(value: Any, fn: Callable[[Node], Any]) -> Any:
    """Rebuild ``value`` (nested tuples/lists/dicts/slices) with each Node mapped by ``fn``."""
    return map_leaves(value, Node, fn)


@dataclass
class Graph:
    """An ordered list of nodes with unique, stable names."""

    nodes: list[Node] = field(default_factory=list)
    _names: dict[str, int] = field(default_factory=dict)

    def _fresh_name(self, hint: str) -> str:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in hint).strip("_") or "v"
        if base[0].isdigit():
            base = "v_" + base
        count = self._names.get(base, 0)
        self._names[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def placeholder(self, source: str, meta: TensorMeta | None, name_hint: str) -> Node:
        node = Node(self, self._fresh_name(name_hint), "placeholder", source, meta=meta)
        # placeholders stay in front, in creation order
        index = sum(1 for n in self.nodes if n.op == "placeholder")
        self.nodes.insert(index, node)
        return node

    def call(self, target: str, args: tuple = (), kwargs: dict | None = None,
             meta: TensorMeta | None = None, origin: str | None = None) -> Node:
        node = Node(self, self._fresh_name(target), "call", target, args, kwargs, meta, origin)
        self.nodes.append(node)
        return node

    def region(self, kind: str, args: tuple, info: "RegionInfo",
               origin: str | None = None) -> Node:
        """A structured loop or branch; its results are read with ``getitem(region, k)``."""
        node = Node(self, self._fresh_name(kind), "region", kind, args, {}, None, origin)
        node.info = info
        self.nodes.append(node)
        return node

    def output(self, values: tuple) -> Node:
        node = Node(self, "output", "output", "output", (tuple(values),))
        self.nodes.append(node)
        return node

    @property
    def placeholders(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "placeholder"]

    @property
    def output_node(self) -> Node:
        return self.nodes[-1]

    def call_nodes(self) -> Iterator[Node]:
        return (n for n in self.nodes if n.op == "call")

    def erase(self, node: Node) -> None:
        assert not node.users, f"cannot erase {node}: still used by {node.users}"
        for inp in node.all_input_nodes():
            inp.users = [u for u in inp.users if u is not node]
        self.nodes.remove(node)

    def rollback(self, keep: set[int]) -> None:
        """Remove the non-placeholder nodes added since ``keep`` (ids of the nodes to keep):
        a loop whose unrolling went over budget is captured as a region instead."""
        for node in reversed(list(self.nodes)):
            if id(node) in keep or node.op == "placeholder":
                continue
            for inp in node.all_input_nodes():
                inp.users = [u for u in inp.users if u is not node]
            self.nodes.remove(node)

    def op_count(self) -> int:
        """Call nodes, including those inside regions' subgraphs, plus one per region."""
        count = 0
        for node in self.nodes:
            if node.op == "call":
                count += 1
            elif node.op == "region":
                count += 1 + sum(g.op_count() for g in node.info.subgraphs.values())
        return count

    def print_readable(self, name: str = "forward", print_output: bool = True) -> str:
        from .printer import graph_to_source

        text = graph_to_source(self, name)
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return self.print_readable(print_output=False)


@dataclass(kw_only=True)
class RegionInfo:
    """What a region node holds besides its args: its subgraphs, and how its args split.

    ``args`` are ``(*controls, *carried, *captured)``: ``n_controls`` control values (a loop's
    start, stop, step and entry test; a branch's condition), the ``n_carried`` initial values
    of the state the region updates (``names``: the variables), and ``n_captured`` values of
    enclosing graphs its subgraphs read. Subgraph labels: ``body`` (``for_range``), ``cond`` and
    ``body`` (``while_loop``), ``true`` and ``false`` (``cond``), ``body`` (``nonstrict_call``).
    """

    subgraphs: dict[str, Graph]
    n_controls: int = 0
    n_carried: int = 0
    n_captured: int = 0
    names: tuple[str, ...] = ()

    def split(self, args: tuple) -> tuple[tuple, tuple, tuple]:
        """``args`` of the region node as (controls, carried, captured)."""
        carried_end = self.n_controls + self.n_carried
        return tuple(args[:self.n_controls]), tuple(args[self.n_controls:carried_end]), \
            tuple(args[carried_end:])

    def header(self) -> str:
        """How printed graphs show the arg split: ``controls=4, carried=2, captured=1``."""
        return f"controls={self.n_controls}, carried={self.n_carried}, captured={self.n_captured}"


@dataclass(kw_only=True)
class NonstrictCallInfo(RegionInfo):
    """A ``nonstrict_trace`` call: the user's function and how its arguments and results map
    onto the region's args and outputs. ``names`` is the function's one name; ``leaves`` the
    flattened call arguments (``array_positions``: where the first ``n_inputs`` region args go,
    ``n_module_inputs`` args after them are module arrays), ``in_spec``/``out_spec`` their
    pytree specs, ``out_leaves`` the traced results, ``array_out`` which results are outputs."""

    fn: Callable[..., Any]
    in_spec: Any
    leaves: list[Any]
    array_positions: list[int]
    out_spec: Any
    out_leaves: list[Any]
    array_out: list[int]
    n_inputs: int
    n_module_inputs: int = 0


def iter_constants(values: Iterable[Any]) -> Iterator[Any]:
    for value in values:
        if isinstance(value, (tuple, list)):
            yield from iter_constants(value)
        elif not isinstance(value, Node):
            yield value
