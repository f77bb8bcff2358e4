"""Capture one function call: lift the arguments, run the graph-building code, build the output.

Returns a ``Capture``: the graph (with DCE/CSE applied), the guard facts, how to rebuild the
return value from the graph's outputs, and the namespace (globals dicts, cells) that guard and
run code refer to.
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass, field
from typing import Any

from ..exc import GraphBreak
from ..rewrite import is_generated
from ..graph import Graph, Node, eliminate_common_subexpressions, eliminate_dead_code
from ..graph.passes import output_unused
from ..ops import REGISTRY
from .fp_effects import may_raise, may_set_fp_flags
from .guard_facts import GuardSet
from .lifting import GuardedDict, GuardedList, GuardedSet, LocalObject, ObjectProxy, SideEffect, lift
from .objects import object_state
from .proxy import ArrayProxy
from .runtime.api import Runtime, Undefined, signature_of
from .runtime.regions import SymRange
from .sources import Source, local_source
from .sizes.symbolic import SymBool, SymInt
from .tracer import Tracer, compiling_scope

# How the return value is rebuilt: ("out", i) | ("const", v) | ("tuple"|"list", [..]) |
# ("dict", keys, [..]) | ("ref", var) (an outside object) | ("bind", var, spec) | ("var", var) |
# ("py", type, spec) (a Python number) | ("py_unless", type, spec, flag) (NumPy's where flag is true)
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
    refs: dict[str, str] = field(default_factory=dict)  # source expr -> variable, read at start


def has_side_effects(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target)
    return op is None or op.side_effects


def is_pure(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target)
    return op is not None and op.pure


def is_pure_value(node: Node) -> bool:
    """Pure and without an FP warning: merging two equal calls loses nothing."""
    return is_pure(node) and not may_set_fp_flags(node)


def has_effects(node: Node) -> bool:
    """A side effect, an FP warning/error NumPy may report, or an error the op may raise on
    run-time values (an index out of bounds): never dropped when unused."""
    return has_side_effects(node) or may_set_fp_flags(node) or may_raise(node)


def may_warn_only(node: Node) -> bool:
    """An op whose only effect (when its value is unused) is an FP warning or an error."""
    return not has_side_effects(node) and (may_set_fp_flags(node) or may_raise(node))


def is_view(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target)
    return op is not None and op.kind == "view"


_MUTABLE = (list, dict, set, GuardedList, GuardedDict, GuardedSet)
_LIFTED = (GuardedList, GuardedDict, GuardedSet)
_ROOT = re.compile(r"^(\w+|___G\d*\[('[^'\\]*'|\"[^\"\\]*\")\]|___cell\d+\.cell_contents)$")


class _Outputs:
    """How the run code rebuilds values from the graph's outputs. Outside objects (containers
    lifted from arguments, globals or cells, and object proxies) are the caller's own objects:
    ``("ref", var)`` names the object fetched from its source when the call starts. A list or
    dict made inside the function that appears more than once (returned and stored in an outside
    list, say) is built once: ``("bind", var, spec)`` then ``("var", var)``."""

    def __init__(self, tracer: Tracer, shared: set[int] = frozenset()) -> None:
        self.tracer = tracer
        self.nodes: list[Node] = []
        self._index: dict[Node, int] = {}
        self.refs: dict[str, str] = {}          # source expression -> run-code variable
        self._shared = shared                   # ids of local containers seen more than once
        self._bound: dict[int, str] = {}
        self._building: set[int] = set()

    def ref(self, source: Source) -> OutputSpec:
        """A parameter, a global or a cell is named as is (nothing the run code does rebinds
        them); a deeper path (``lst[0]``, ``self.cache``) is read into a variable at the start."""
        if _ROOT.match(source.expr):
            return ("ref", source.expr)
        var = self.refs.get(source.expr)
        if var is None:
            var = self.refs[source.expr] = f"___o{len(self.refs)}"
        return ("ref", var)

    def spec(self, value: Any) -> OutputSpec:
        if isinstance(value, SymInt):  # a dynamic size returned to Python: read at run time
            value = self.tracer.sym_value(value.expr)
        elif isinstance(value, SymBool):
            value = bool(value)
        if isinstance(value, ArrayProxy):
            tag = self.tracer.tags.get(value.node)
            if tag is None:
                self.tracer.refuse_ambiguous(value)  # its Python type is decided by the data
            index = self._index.get(value.node)
            if index is None:
                index = self._index[value.node] = len(self.nodes)
                self.nodes.append(value.node)
            if tag is not None:  # NumPy's type when the tag is true, else a Python number
                return ("py_unless", tag.pytype, ("out", index), self.spec(tag.numpy))
            pytype = value.node.meta.pytype if value.node.meta is not None else None
            return ("py", pytype, ("out", index)) if pytype is not None else ("out", index)
        if isinstance(value, LocalObject):  # made by the compiled code: a new one per call
            return self._object(value)
        if isinstance(value, Undefined):  # an unbound local variable: Python's error, eagerly
            value._fail()
        if isinstance(value, ObjectProxy):
            return self.ref(value._ac_source)
        if isinstance(value, _LIFTED) and value._ac_source is not None:
            return self.ref(value._ac_source)
        if type(value) is tuple:
            return ("tuple", [self.spec(v) for v in value])
        if isinstance(value, tuple) and hasattr(type(value), "_fields"):
            return ("namedtuple", type(value), [self.spec(v) for v in value])
        if type(value) in _MUTABLE:
            return self._container(value)
        if isinstance(value, (types.GeneratorType,)):
            raise GraphBreak("returning a generator from compiled code")
        if isinstance(value, SymRange):  # its bounds exist only at run time
            raise GraphBreak("a range with run-time bounds leaves the compiled code")
        if isinstance(value, types.FunctionType) and is_generated(value):
            raise GraphBreak("a function defined inside the compiled code escapes it "
                             "(returned, or live across a graph break)")
        return ("const", value)

    def _object(self, value: LocalObject) -> OutputSpec:
        """``("object", cls, state specs, slot specs)``, bound to a variable on first use so
        every place that refers to the object gets the same one."""
        key = id(value._ac_value)
        if key in self._bound:
            return ("var", self._bound[key])
        if key in self._building:
            raise GraphBreak("an object created in compiled code that refers to itself leaves "
                             "the compiled code")
        self._building.add(key)
        try:
            cls, state, slots = object_state(value)
            spec: OutputSpec = ("object", cls, {k: self.spec(v) for k, v in state.items()},
                                {k: self.spec(v) for k, v in slots.items()})
        finally:
            self._building.discard(key)
        var = self._bound[key] = f"___t{len(self._bound)}"
        return ("bind", var, spec)

    def _container(self, value: Any) -> OutputSpec:
        key = id(value)
        if key in self._bound:
            return ("var", self._bound[key])
        if key in self._building:
            raise GraphBreak("a list or dict that contains itself leaves the compiled code")
        self._building.add(key)
        try:
            if isinstance(value, list):
                spec: OutputSpec = ("list", [self.spec(v) for v in value])
            elif isinstance(value, set):
                spec = ("set", [self.spec(v) for v in value])
            else:
                keys = [int(k) if isinstance(k, SymInt) else k for k in value]  # hashed: pinned
                spec = ("dict", keys, [self.spec(v) for v in value.values()])
        finally:
            self._building.discard(key)
        if key not in self._shared:
            return spec
        var = self._bound[key] = f"___t{len(self._bound)}"
        return ("bind", var, spec)


def shared_containers(values: list[Any]) -> set[int]:
    """Ids of the lists and dicts made in the function that ``values`` reach more than once."""
    seen: set[int] = set()
    shared: set[int] = set()

    def walk(value: Any) -> None:
        if isinstance(value, _LIFTED) and value._ac_source is not None:
            return
        if type(value) in _MUTABLE:
            if id(value) in seen:
                shared.add(id(value))
                return
            seen.add(id(value))
            for item in (value.values() if isinstance(value, dict) else value):
                walk(item)
        elif isinstance(value, tuple):
            for item in value:
                walk(item)
        elif isinstance(value, LocalObject) and id(value._ac_value) not in seen:
            seen.add(id(value._ac_value))  # an object made in the function: its attributes too
            _, state, slots = object_state(value)
            for item in (*state.values(), *slots.values()):
                walk(item)

    for value in values:
        walk(value)
    return shared


def effect_specs(outputs: _Outputs, effects: list[SideEffect]) -> list[tuple[Any, Any, list]]:
    """``(effect, key spec, argument specs)`` per recorded mutation, in program order; keyword
    arguments are ``("keyword", name, spec)``."""
    specs = []
    for effect in effects:
        outputs.ref(effect.source)  # the target: the object the call started with
        name = outputs.spec(effect.name) if effect.kind in ("setitem", "delitem") else effect.name
        args = [outputs.spec(a) for a in effect.args]
        args += [("keyword", k, outputs.spec(v)) for k, v in effect.kwargs.items()]
        specs.append((effect, name, args))
    return specs


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
    tracer.runtime = runtime  # attribute reads that run user code (properties) inline through it
    bound = bind_arguments(fn, args, kwargs)
    try:
        lifted = {name: lift(tracer, value, local_source(name))
                  for name, value in bound.arguments.items()}
        bound.arguments.update(lifted)
        with compiling_scope():
            result = runtime.run_function(fn, bound.args, bound.kwargs)
        stored = [(e.args, e.kwargs) for e in tracer.side_effects]
        outputs = _Outputs(tracer, shared_containers([*stored, result]))
        effects = effect_specs(outputs, tracer.side_effects)  # the run code replays these first
        spec = outputs.spec(result)
    except Exception as error:
        # the guards recorded so far decide when the same outcome (e.g. a break) repeats
        error.capture_guards = tracer.guards  # type: ignore[attr-defined]
        error.capture_namespace = {**runtime.namespace, **tracer.namespace_objects}  # type: ignore[attr-defined]
        raise
    tracer.graph.output(tuple(outputs.nodes))
    add_size_guards(tracer)
    eliminate_common_subexpressions(tracer.graph, has_side_effects, is_pure_value, is_view)
    eliminate_dead_code(tracer.graph, has_effects)
    output_unused(tracer.graph, may_warn_only)  # computed by every backend, so they warn
    _drop_unused_placeholders(tracer)
    return Capture(graph=tracer.graph, guards=tracer.guards, output_spec=spec,
                   namespace={**runtime.namespace, **tracer.namespace_objects}, inputs=tracer.inputs,
                   rewritten=runtime.rewritten, shape_env=tracer.shape_env,
                   side_effects=effects, refs=outputs.refs)


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
