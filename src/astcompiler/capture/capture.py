"""Capture one function call: lift the arguments, run the graph-building code, build the output.

Returns a ``Capture``: the graph (with DCE/CSE applied), the guard facts, how to rebuild the
return value from the graph's outputs, and the namespace (globals dicts, cells) that guard and
run code refer to.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

from ..exc import GraphBreak
from ..rewrite import is_generated
from ..graph import Graph, Node, eliminate_common_subexpressions, eliminate_dead_code
from ..ops import REGISTRY
from .guard_facts import GuardSet
from .lifting import GuardedDict, GuardedList, ObjectProxy, lift
from .proxy import ArrayProxy
from .runtime import Runtime, signature_of
from .sources import Source, local_source
from .symbolic import SymBool, SymInt
from .tracer import Tracer, compiling_scope

# How the return value is rebuilt: ("out", i) | ("const", v) | ("tuple"|"list", [..]) | ("dict", keys, [..])
OutputSpec = tuple


@dataclass
class Capture:
    graph: Graph
    guards: GuardSet
    output_spec: OutputSpec
    namespace: dict[str, Any]
    inputs: list[tuple[Node, Any, Any]]      # (placeholder, source, value)
    rewritten: list[Any] = field(default_factory=list)
    side_effects: list[tuple[Any, Any, list]] = field(default_factory=list)  # (effect, name, args)
    shape_env: Any = None


def has_side_effects(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target)
    return op is None or op.side_effects


def is_pure(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target)
    return op is not None and op.pure


def is_view(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target)
    return op is not None and op.kind == "view"


class _Outputs:
    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer
        self.nodes: list[Node] = []
        self._index: dict[Node, int] = {}

    def spec(self, value: Any) -> OutputSpec:
        if isinstance(value, SymInt):  # a dynamic size returned to Python: read at run time
            value = self.tracer.sym_value(value.expr)
        elif isinstance(value, SymBool):
            value = bool(value)
        if isinstance(value, ArrayProxy):
            index = self._index.get(value.node)
            if index is None:
                index = self._index[value.node] = len(self.nodes)
                self.nodes.append(value.node)
            pytype = value.node.meta.pytype if value.node.meta is not None else None
            return ("py", pytype, ("out", index)) if pytype is not None else ("out", index)
        if isinstance(value, ObjectProxy):
            return ("const", value._ac_value)
        if type(value) is tuple:
            return ("tuple", [self.spec(v) for v in value])
        if isinstance(value, tuple) and hasattr(type(value), "_fields"):
            return ("namedtuple", type(value), [self.spec(v) for v in value])
        if isinstance(value, (list, GuardedList)) and type(value) in (list, GuardedList):
            return ("list", [self.spec(v) for v in value])
        if type(value) in (dict, GuardedDict):
            return ("dict", list(value.keys()), [self.spec(v) for v in value.values()])
        if isinstance(value, (types.GeneratorType,)):
            raise GraphBreak("returning a generator from compiled code")
        if isinstance(value, types.FunctionType) and is_generated(value):
            raise GraphBreak("a function defined inside the compiled code escapes it "
                             "(returned, or live across a graph break)")
        return ("const", value)


def bind_arguments(fn: types.FunctionType, args: tuple, kwargs: dict) -> Any:
    bound = signature_of(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound


def capture_function(fn: types.FunctionType, args: tuple, kwargs: dict, *, cache_dir: str,
                     unroll_limit: int = 64, inline_depth_limit: int = 16,
                     policy: Any = None) -> Capture:
    """Capture ``fn(*args, **kwargs)`` as a graph (raises GraphBreak/Unsupported if it cannot)."""
    tracer = Tracer(unroll_limit=unroll_limit, policy=policy)
    runtime = Runtime(tracer, cache_dir, inline_depth_limit)
    bound = bind_arguments(fn, args, kwargs)
    try:
        lifted = {name: lift(tracer, value, local_source(name))
                  for name, value in bound.arguments.items()}
        bound.arguments.update(lifted)
        with compiling_scope():
            result = runtime.run_function(fn, bound.args, bound.kwargs)
        outputs = _Outputs(tracer)
        spec = outputs.spec(result)
        effects = [(effect, outputs.spec(effect.name), [outputs.spec(a) for a in effect.args])
                   for effect in tracer.side_effects]
    except Exception as error:
        # the guards recorded so far decide when the same outcome (e.g. a break) repeats
        error.capture_guards = tracer.guards  # type: ignore[attr-defined]
        error.capture_namespace = {**runtime.namespace, **tracer.namespace_objects}  # type: ignore[attr-defined]
        raise
    tracer.graph.output(tuple(outputs.nodes))
    add_size_guards(tracer)
    eliminate_common_subexpressions(tracer.graph, has_side_effects, is_pure, is_view)
    eliminate_dead_code(tracer.graph, has_side_effects)
    _drop_unused_placeholders(tracer)
    return Capture(graph=tracer.graph, guards=tracer.guards, output_spec=spec,
                   namespace={**runtime.namespace, **tracer.namespace_objects}, inputs=tracer.inputs,
                   rewritten=runtime.rewritten, shape_env=tracer.shape_env,
                   side_effects=effects)


def add_size_guards(tracer: Tracer) -> None:
    """Dynamic sizes: their ranges, and every relation the capture decided with hints."""
    env = tracer.shape_env
    names = {info.symbol: info.expr for info in env.symbols.values() if info.expr}
    for info, _, _ in env.range_guards():
        tracer.guards.add("size", Source(info.source, info.expr), (info.min, info.max))
    for relation in env.guards:
        if relation.free_symbols <= set(names):
            tracer.guards.add("relation", Source(str(relation), str(relation)), relation, names)


def _drop_unused_placeholders(tracer: Tracer) -> None:
    """Inputs the graph never reads stay guarded but are not passed to the backend."""
    for node, source, value in list(tracer.inputs):
        if not node.users:
            tracer.graph.nodes.remove(node)
            tracer.inputs.remove((node, source, value))
