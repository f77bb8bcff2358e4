"""Host control flow: a region that does not fit in one numba function is Python in the wrapper.

When a graph with regions is not one structured numba function (``structured.py`` raised
``NotLowerable`` for some op), it is lowered piece by piece: the top-level plan treats each region
node as a step, and ``RegionWriter`` (the wrapper's hook for region steps) writes each one as

1. a **structured piece**: the region alone as one njit function (``structured.py``), called from
   the wrapper like a kernel; else
2. a **host loop**: a plain Python ``for`` / ``while`` / ``if`` in the wrapper with the semantics of
   ``eager.run_region``: ``for_range`` runs ``range(start, stop, step)`` when ``enter`` holds,
   passing (index, carried state, captured values) and stopping when the body's ``go`` flag (a
   ``break``) is false; ``while_loop`` runs cond, then body, while cond's last output holds;
   ``cond`` runs the subgraph its predicate picks. Each subgraph is lowered on its own by the same
   backend (``lower``): fused kernels for what fuses, NumPy calls for the rest (the extern calls),
   nested regions the same way. The wrapper calls it once per iteration.

What was chosen, and why, is kept in ``pieces`` for the summary at the top of ``output_code``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ...graph import Graph, Node, map_nodes
from ...ops import REGISTRY
from ..base import CompiledGraph
from .optable import region_result
from .plan import region_writes
from .wrapper import STRICT, TAKES_STRICT, WrapperWriter


@dataclass
class Lowering:
    """A graph lowered by the numba backend, with one line per piece saying what runs where."""

    compiled: CompiledGraph
    summary: list[str] = field(default_factory=list)


@dataclass
class Piece:
    """How one region of a graph runs: a structured piece or a host loop around its subgraphs."""

    label: str  # "for_range at model.py:3"
    kind: str  # "structured piece" | "a host loop" | "a host `if`"
    why: str  # why it is a host loop ("" for a structured piece)
    parts: list[tuple[str, Lowering]] = field(default_factory=list)  # wrapper name, lowering

    @property
    def compiled_anything(self) -> bool:
        """A kernel or a structured function runs somewhere in it."""
        return self.kind == "structured piece" or any(
            part.compiled.prefer_original is None for _, part in self.parts)

    def describe(self) -> list[str]:
        if self.kind == "structured piece":
            return [f"{self.label}: one structured numba function ({self.parts[0][0]})"]
        lines = [f"{self.label}: {self.kind} in this wrapper ({self.why})"]
        for name, part in self.parts:
            first, *rest = part.summary or ["NumPy steps"]
            lines += [f"  {name}: {first}"] + [f"    {line}" for line in rest]
        return lines


# (subgraph, wrapper name, NumPy only) -> its lowering
SubLower = Callable[[Graph, str, bool], Lowering]
# a graph as one njit function, or None and the reason it is not one
Structured = Callable[[Graph], tuple[CompiledGraph | None, str]]


@dataclass
class RegionWriter:
    """The wrapper's hook for region steps (``WrapperWriter(regions=...)``)."""

    lower: SubLower
    structured: Structured
    numpy_only: bool = False  # the enclosing graph runs with NumPy only (layout exactness)
    pieces: list[Piece] = field(default_factory=list)

    def __call__(self, writer: WrapperWriter, node: Node) -> None:
        label = f"{node.target} at {node.origin}" if node.origin else str(node.target)
        note_region_writes(writer, node)
        numpy_only = self.numpy_only or node in writer.plan.numpy_only
        why = "NumPy only: its results feed a layout-dependent view of an array the graph writes to"
        if not numpy_only:
            used = used_results(node)
            compiled, reason = self.structured(region_graph(node, used))
            if compiled is not None:
                self.structured_piece(writer, node, label, compiled, used)
                return
            why = reason
        noun = "a host `if`" if node.target == "cond" else "a host loop"
        piece = Piece(label, noun, why)
        self.pieces.append(piece)
        bodies, strict = {}, set()
        for key, sub in node.info.subgraphs.items():
            name = writer.names(f"{node.target}_{_line(node)}{key}")
            part = self.lower(sub, name, numpy_only)
            bind(writer, name, part.compiled.fn)
            piece.parts.append((name, part))
            bodies[key] = name
            if getattr(part.compiled.fn, TAKES_STRICT, False) and not may_set_errstate(sub):
                strict.add(key)
        writer.emit(f"# {label}: {noun} ({why})", None)
        HostLoop(writer, node, bodies, strict).write()

    def structured_piece(self, writer: WrapperWriter, node: Node, label: str,
                         compiled: CompiledGraph, used: list[int]) -> None:
        """Call the piece; it returns the ``used`` results only (the rest are None here)."""
        name = writer.names(f"{node.name}_structured")
        bind(writer, name, compiled.fn)
        self.pieces.append(Piece(label, "structured piece", "", [(name, Lowering(compiled))]))
        result = writer.var[node] = writer.names(node.name)
        args = ", ".join(writer.value(v) for v in node.all_input_nodes())
        writer.emit(f"{result} = {name}({args})", node.origin)
        if len(used) < node.info.n_carried:
            slots = {k: f"{result}[{i}]" for i, k in enumerate(used)}
            values = [slots.get(k, "None") for k in range(node.info.n_carried)]
            writer.emit(f"{result} = ({', '.join(values)},)", node.origin)


def bind(writer: WrapperWriter, name: str, value: Any) -> None:
    """Bind ``value`` as a ``make_forward`` parameter called ``name`` (a fresh name)."""
    writer.consts.append(value)
    writer.const_names.append(name)


def may_set_errstate(graph: Graph) -> bool:
    """Whether running ``graph`` may change ``np.errstate``: only through user code it calls
    (a ``nonstrict_call`` region, an op with side effects); NumPy ops never do."""
    for node in graph.nodes:
        if node.op == "region" and (node.target == "nonstrict_call" or any(
                may_set_errstate(sub) for sub in node.info.subgraphs.values())):
            return True
        if node.op == "call" and node.target in REGISTRY.ops \
                and REGISTRY[node.target].side_effects and REGISTRY[node.target].kind != "mutation":
            return True
    return False


def note_region_writes(writer: WrapperWriter, node: Node) -> None:
    """Inputs a region writes to (through its subgraphs) are effects, like a top-level write."""
    for dst in region_writes(node):
        inputs = {r for r in writer.plan.roots.get(dst, {dst}) if r.op == "placeholder"}
        if inputs and writer.first_effect is None:
            writer.first_effect = len(writer.lines)
        writer.mutated |= inputs


def used_results(node: Node) -> list[int]:
    """The results of region ``node`` that the enclosing graph reads (``getitem(node, k)``;
    all of them when it uses the region's tuple otherwise)."""
    reads = [user for user in node.users if region_result(user) is not None
             and len(user.args) == 2 and user.args[0] is node and type(user.args[1]) is int]
    if len(reads) < len(node.users):
        return list(range(node.info.n_carried))
    return sorted({user.args[1] for user in reads})


def region_graph(node: Node, used: list[int] | None = None) -> Graph:
    """A graph holding only region ``node``: a placeholder per Node argument, the region, and
    its ``used`` results (``getitem(region, k)``; default all). A carried value nobody reads
    after the loop is no output: whether it is a view or a copy is then unobservable."""
    graph = Graph()
    mapping = {value: graph.placeholder(f"arg:{value.name}", value.meta, value.name)
               for value in node.all_input_nodes()}
    copy = graph.region(node.target, map_nodes(node.args, mapping.__getitem__),
                        replace(node.info), node.origin)
    metas = result_metas(node)
    keep = range(len(metas)) if used is None else used
    results = tuple(graph.call("getitem", (copy, k), {}, metas[k], node.origin) for k in keep)
    graph.output(results)
    return graph


def result_metas(node: Node) -> list[Any]:
    """The meta of each result of a region: its ``getitem`` user's, else the carried value's."""
    n = node.info.n_carried
    metas: list[Any] = [None] * n
    for user in node.users:
        if region_result(user) is not None and user.args[0] is node:
            metas[user.args[1]] = user.meta
    subgraphs = node.info.subgraphs
    first = subgraphs.get("body") or next(iter(subgraphs.values()))
    offset = 1 if node.target == "for_range" else 0  # a loop body's index comes first
    for k in range(n):
        if metas[k] is None:
            metas[k] = first.placeholders[offset + k].meta
    return metas


class HostLoop:
    """Writes one region as Python control flow around calls of its lowered subgraphs."""

    def __init__(self, writer: WrapperWriter, node: Node, bodies: dict[str, str],
                 strict: set[str] | None = None):
        self.w = writer
        self.node = node
        self.bodies = bodies
        self.strict = strict or set()  # bodies that take the errstate read before the loop
        self.strict_name = writer.names("strict") if self.strict else ""
        controls, init, captured = node.info.split(node.args)
        self.controls = list(controls)
        self.captured = [writer.value(v) for v in captured]
        names = node.info.names or [f"c{k}" for k in range(len(init))]
        self.state = [writer.names(f"{name}_c") for name in names]
        self.init = [writer.value(v) for v in init]

    def emit(self, text: str, depth: int) -> None:
        self.w.emit(text, self.node.origin, depth)

    def write(self) -> None:
        if self.strict:  # np.errstate, once for every iteration (no body can change it)
            self.emit(f"{self.strict_name} = ___rt.strict()", 2)
        if self.state:
            self.emit(f"{', '.join(self.state)} = {', '.join(self.init)}", 2)
        kind = self.node.target
        if kind == "for_range":
            self.for_range()
        elif kind == "while_loop":
            self.while_loop()
        elif kind == "cond":
            self.cond()
            return
        else:
            raise AssertionError(f"no host loop for region kind {kind!r}")
        result = self.w.names(self.node.name)
        self.w.var[self.node] = result
        self.emit(f"{result} = {_tuple(self.state)}", 2)

    def call(self, key: str, leading: list[str]) -> str:
        strict = [f"{STRICT}={self.strict_name}"] if key in self.strict else []
        return f"{self.bodies[key]}({', '.join(leading + self.captured + strict)})"

    def for_range(self) -> None:
        bounds = [self.int_value(c) for c in self.controls[:3]]
        enter = self.controls[3]
        depth = 2
        if enter is not True:
            self.emit(f"if {self.w.value(enter)}:", depth)
            depth += 1
        index = self.w.names("i")
        self.emit(f"for {index} in range({', '.join(bounds)}):", depth)
        body = self.node.info.subgraphs["body"]
        go = body.output_node.args[0][len(self.state)]
        flag = self.w.names("go")
        self.emit(f"{_targets(self.state + [flag])} = {self.call('body', [index] + self.state)}",
                  depth + 1)
        if not _always_true(go):
            self.emit(f"if not {flag}:", depth + 1)
            self.emit("break", depth + 2)

    def while_loop(self) -> None:
        self.emit(f"while {self.call('cond', list(self.state))}[-1]:", 2)
        call = self.call("body", list(self.state))
        self.emit(f"{_targets(self.state)} = {call}" if self.state else call, 3)

    def cond(self) -> None:
        result = self.w.names(self.node.name)
        self.w.var[self.node] = result
        self.emit(f"if {self.w.value(self.controls[0])}:", 2)
        self.emit(f"{result} = {self.call('true', list(self.state))}", 3)
        self.emit("else:", 2)
        self.emit(f"{result} = {self.call('false', list(self.state))}", 3)

    def int_value(self, value: Any) -> str:
        """``range`` bounds as ``eager.run_region`` passes them: ``int(...)`` of non-ints."""
        text = self.w.value(value)
        if type(value) is int or (isinstance(value, Node) and value.meta is not None
                                  and value.meta.pytype is int):
            return text
        return f"int({text})"


def _line(node: Node) -> str:
    """``97_`` for a node from ``file.py:97`` (names nested bodies apart), else nothing."""
    line = (node.origin or "").rpartition(":")[2]
    return f"{line}_" if line.isdigit() else ""


def _targets(names: list[str]) -> str:
    return ", ".join(names) + ("," if len(names) == 1 else "")


def _tuple(names: list[str]) -> str:
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"


def _always_true(value: Any) -> bool:
    """The ``go`` flag of a loop body without ``break``: the constant True."""
    if value is True:
        return True
    op = REGISTRY.ops.get(value.target) if isinstance(value, Node) and value.op == "call" else None
    return op is not None and op.literal and bool(value.args) and value.args[0] is True
