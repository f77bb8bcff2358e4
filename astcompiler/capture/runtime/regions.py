"""Structured regions: loops over run-time ranges, while loops, and branches on array data.

A region is captured once: its body runs on placeholders for the loop-carried state (and the
loop index), recording a subgraph; values of enclosing graphs it reads become extra inputs. The
state's types come from a small fixpoint: a first pass finds which variables the body changes and
what it changes them to, later passes capture with typed placeholders until input and output
types agree (``s = 0`` then ``s = s + x[i]`` carries a float).

A variable that is a Python number on some paths and the NumPy scalar of its default dtype on
others (``best = 0.0`` before a loop whose branch sets ``best = x[i]``) is carried as the NumPy
type with one more state variable beside it, ``__ac_isnp_best``, true once it holds NumPy's type
(``capture/type_tags.py``); the value after the region is tagged with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ...exc import GraphBreak
from ...graph import Graph, Node, RegionInfo, TensorMeta
from ...source.origins import current_origin
from ..proxy import ArrayProxy
from ..tracer import Scope, python_meta
from ..type_tags import default_dtype, mixed_python_type, numpy_typed, python_type_of

if TYPE_CHECKING:  # pragma: no cover
    from .api import Runtime

_PY = (bool, int, float, complex)
MAX_PASSES = 4


@dataclass(frozen=True)
class SymRange:
    """``range(...)`` whose bounds are traced values (known only at run time)."""

    start: Any
    stop: Any
    step: Any

    def __iter__(self):
        raise GraphBreak("iterating a range with run-time bounds outside a loop statement")


def is_undefined(value: Any) -> bool:
    return type(value).__name__ == "Undefined"


def value_meta(value: Any) -> TensorMeta | None:
    if isinstance(value, ArrayProxy):
        return value.node.meta
    if type(value) in _PY:
        return python_meta(value)
    if isinstance(value, np.generic):
        return TensorMeta((), value.dtype, True)
    return None


def merge_meta(name: str, before: TensorMeta | None, after: TensorMeta,
               same_size: Callable[[Any, Any], bool] | None = None) -> TensorMeta:
    """The type a state variable must have to hold both values (NumPy/Python promotion).
    ``same_size(a, b)``: whether two different symbolic sizes are equal (a guard when true)."""
    if before is None or before == after:
        return after
    if not _same_shape(before.shape, after.shape, same_size):
        raise GraphBreak(f"{name!r} changes shape from {before.shape} to {after.shape} inside a "
                         "compiled loop or branch; allocate it with its final shape first")
    if before.pytype is not None and after.pytype is not None:
        pytype = type(before.pytype(0) + after.pytype(0)) if bool not in (before.pytype, after.pytype) \
            else (after.pytype if before.pytype is bool else before.pytype)
        return python_meta(pytype(0))
    if before.pytype is not None:  # weak Python scalar meets a NumPy value
        dtype = np.result_type(after.dtype, before.pytype(0))
        return TensorMeta(after.shape, dtype, after.scalar)
    if after.pytype is not None:
        dtype = np.result_type(before.dtype, after.pytype(0))
        return TensorMeta(before.shape, dtype, before.scalar)
    return TensorMeta(after.shape, np.result_type(before.dtype, after.dtype), after.scalar)


def _same_shape(before: tuple, after: tuple,
                same_size: Callable[[Any, Any], bool] | None) -> bool:
    """Equal shapes, where two different symbolic sizes count as equal when ``same_size`` says
    so (the carried ``v`` of ``v = A @ v`` goes from ``(s2,)`` to ``(s0,)``)."""
    if len(before) != len(after):
        return False
    return all(a == b or (same_size is not None and same_size(a, b))
               for a, b in zip(before, after))


def example_for(meta: TensorMeta, value: Any) -> Any:
    """An example value of type ``meta`` (from ``value`` when it has one)."""
    source = value.example if isinstance(value, ArrayProxy) else value
    if meta.pytype is not None:
        if is_undefined(source) or source is None:
            return meta.pytype(0)
        try:
            return meta.pytype(source)
        except (TypeError, ValueError):
            return meta.pytype(0)
    known = () if is_undefined(source) or source is None else np.shape(source)
    shape = tuple(int(d) if isinstance(d, (int, np.integer)) else  # symbolic: the example's size
                  (known[k] if len(known) == len(meta.shape) else 1)
                  for k, d in enumerate(meta.shape))
    if is_undefined(source) or source is None:
        array = np.zeros(shape, meta.dtype)
    else:
        array = np.array(np.broadcast_to(np.asarray(source), shape), dtype=meta.dtype)
    return array[()] if meta.scalar else array


@dataclass
class Pass:
    scope: Scope
    inputs: list[Any]         # values the state variables had inside the body
    outputs: list[Any]        # values after the body
    extra: list[Any]          # further results (loop test, continue flag)


class RegionBuilder:
    """Captures one structured statement as a region node."""

    def __init__(self, runtime: "Runtime", kind: str, names: Sequence[str], init: Sequence[Any],
                 unused: Sequence[str] = ()):
        self.runtime = runtime
        self.tracer = runtime.tracer
        self.kind = kind
        self.names = list(names)
        self.init = list(init)
        self.metas: dict[int, TensorMeta] = {}
        self.origin = current_origin()
        # variables whose value the statement neither reads on entry nor leaves to a reader
        # (rewrite/liveness.py): not carried, they keep their value from before it
        self.unused = [k for k, name in enumerate(self.names) if name in unused]
        self.n_user = len(self.names)  # the program's variables; type tags follow them
        self.tag_slots: dict[int, tuple[int, type, str]] = {}  # k -> (its tag's index, type, why)
        self.maybe_python: dict[int, type] = {}  # k -> the Python type some pass left in it
        self.untagged: dict[int, str] = {}  # k -> why: a type the data decides, that no tag tells

    # ----- capture passes --------------------------------------------------------------------
    def _state_inputs(self, scope: Scope) -> list[Any]:
        values = []
        for k, (name, value) in enumerate(zip(self.names, self.init)):
            meta = self.metas.get(k)
            if meta is None:
                values.append(value)
                continue
            node = scope.graph.placeholder(f"state:{name}", meta, name)
            values.append(ArrayProxy(self.tracer, node, example_for(meta, value)))
        return values

    def trace(self, run: Callable[[Scope, list[Any]], tuple[list[Any], list[Any]]],
              leading: Callable[[Scope], list[Any]] | None = None) -> Pass:
        scope = self.tracer.push_scope()
        try:
            if leading is not None:
                leading(scope)
            inputs = self._state_inputs(scope)
            self._tag_inputs(inputs)
            outputs, extra = run(scope, inputs[:self.n_user])
            outputs = list(outputs)
            for k in self.unused:
                outputs[k] = inputs[k]
            outputs += self._output_tags(outputs)
        finally:
            self.tracer.pop_scope()
        return Pass(scope, inputs, outputs, list(extra))

    # ----- type tags (capture/type_tags.py) -------------------------------------------------
    def _tag_inputs(self, inputs: list[Any]) -> None:
        for k, (t, pytype, why) in self.tag_slots.items():
            if isinstance(inputs[k], ArrayProxy) and isinstance(inputs[t], ArrayProxy):
                self.tracer.tag_value(inputs[k], inputs[t], pytype, why)

    def _output_tags(self, outputs: list[Any]) -> list[Any]:
        """Each tagged variable's tag after this pass; notes the variables a pass left a
        Python number (or a tagged value) in."""
        tags = self.tracer.tags
        for k in range(self.n_user):
            numpy = numpy_typed(tags, outputs[k])
            pytype = python_type_of(tags, outputs[k])
            if numpy is not True and numpy is not None and pytype in (int, float):
                self.maybe_python.setdefault(k, pytype)
        found = [numpy_typed(tags, outputs[k]) for k in self.tag_slots]
        return [True if numpy is None else numpy for numpy in found]

    def add_tag_slot(self, k: int, pytype: type, why: str) -> None:
        """Carry a tag beside variable ``k``: true where it holds its NumPy type."""
        t = len(self.names)
        self.names.append(f"__ac_isnp_{self.names[k]}")
        init = numpy_typed(self.tracer.tags, self.init[k])
        self.init.append(True if init is None else init)
        self.metas[t] = TensorMeta((), np.dtype(bool), True)
        self.tag_slots[k] = (t, pytype, why)

    def drop_tag_slots(self) -> None:
        for t, _, _ in self.tag_slots.values():
            del self.metas[t]
        del self.names[self.n_user:], self.init[self.n_user:]
        self.tag_slots.clear()

    def twin(self, k: int, pytype: type | None) -> bool:
        """Variable ``k`` is carried as the NumPy scalar of ``pytype``'s default dtype."""
        meta = self.metas.get(k)
        return pytype in (int, float) and meta is not None and meta.pytype is None \
            and meta.shape == () and meta.scalar and meta.dtype == default_dtype(pytype)

    def retrace_with_tags(self, candidates: dict[int, tuple[type, str]],
                          trace_all: Callable[[], list[Pass]]) -> list[Pass] | None:
        """The passes again with a tag beside each candidate variable; None (and no tags) when
        the body uses one of them in a way the tags do not model (a graph break there)."""
        if not candidates:
            return None
        for k, (pytype, why) in candidates.items():
            self.add_tag_slot(k, pytype, why)
        try:
            return self.fixpoint(trace_all)
        except GraphBreak:
            self.drop_tag_slots()
            self.untagged = {k: why for k, (_, why) in candidates.items()}
            return None

    def update_metas(self, passes: Sequence[Pass]) -> bool:
        """Fold the passes' outputs into the state types; True when anything changed."""
        changed = False
        for k, name in enumerate(self.names[:self.n_user]):
            for p in passes:
                before, after = p.inputs[k], p.outputs[k]
                if after is before or is_undefined(after):
                    continue
                if type(after) in _PY and type(before) is type(after) and after == before:
                    continue
                meta = value_meta(after)
                if meta is None:
                    if after is self.init[k]:
                        continue
                    raise GraphBreak(f"{name!r} becomes a {type(after).__name__} inside a "
                                     f"compiled {self.kind}; only arrays and numbers can change there")
                start = self.metas.get(k, value_meta(self.init[k]) if not is_undefined(self.init[k]) else None)
                merged = merge_meta(name, start, meta, self.same_size)
                if self.metas.get(k) != merged:
                    self.metas[k] = merged
                    changed = True
        return changed

    def same_size(self, a: Any, b: Any) -> bool:
        """Two symbolic sizes of a carried value are equal in this call (their hints agree):
        the loop carries one size, under the guard ``a == b`` (a later call where they differ
        recompiles). Constants and sizes without hints (masks, windows) never merge."""
        import sympy

        if isinstance(a, (int, np.integer)) or isinstance(b, (int, np.integer)):
            return False
        env = self.tracer.shape_env
        symbols = sympy.sympify(a).free_symbols | sympy.sympify(b).free_symbols
        if any(env.symbols.get(s) is None or env.symbols[s].hint is None
               or env.symbols[s].unbacked for s in symbols):
            return False
        if env.size_hint(a) != env.size_hint(b):
            return False
        return self.tracer.evaluate_relation(sympy.Eq(a, b))

    def fixpoint(self, trace_all: Callable[[], list[Pass]],
                 first: list[Pass] | None = None) -> list[Pass]:
        for attempt in range(MAX_PASSES):
            passes = first if attempt == 0 and first is not None else trace_all()
            if not self.update_metas(passes):
                return passes
        raise GraphBreak(f"the types of {self.names} did not settle in a compiled {self.kind}")

    # ----- building the node ----------------------------------------------------------------
    def carried(self) -> list[int]:
        return sorted(self.metas)

    def _as_node(self, scope: Scope, value: Any, meta: TensorMeta) -> Node:
        """``value`` (a proxy or constant) as a node of ``scope``'s graph, cast to ``meta``."""
        graph = scope.graph
        if isinstance(value, ArrayProxy):
            node = self.tracer.localize(value.node, self._depth_of(scope))
            if node.meta is not None and node.meta.dtype != meta.dtype and meta.pytype is None:
                node = graph.call("astype", (node, meta.dtype), {}, meta, self.origin)
            return node
        if is_undefined(value) or value is None:
            value = example_for(meta, None)
        if meta.pytype is not None:
            value = meta.pytype(value)
        elif meta.scalar:
            value = meta.dtype.type(value)
        else:  # symbolic sizes: the example's shape (an unbound variable's value is never read)
            shape = meta.shape if all(isinstance(d, int) for d in meta.shape) else np.shape(value)
            value = np.array(np.broadcast_to(value, shape), dtype=meta.dtype)
            return graph.call("constant", (value,), {}, meta, self.origin)
        return graph.call("scalar", (value,), {}, meta, self.origin)

    def _depth_of(self, scope: Scope) -> int:
        for depth, candidate in enumerate(self.tracer.scopes):
            if candidate is scope:
                return depth
        return len(self.tracer.scopes)  # a popped subgraph: localize pushes it back below

    def finish_subgraph(self, p: Pass, extra_nodes: Sequence[Any] = ()) -> Graph:
        """Give the subgraph its outputs: carried state (typed), then ``extra_nodes``."""
        self.tracer.scopes.append(p.scope)
        try:
            values = [self._as_node(p.scope, p.outputs[k], self.metas[k]) for k in self.carried()]
            extras = [self._as_node(p.scope, v, value_meta(v) or python_meta(bool(v)))
                      for v in extra_nodes]
            p.scope.graph.output(tuple(values + extras))
        finally:
            self.tracer.pop_scope()
        return p.scope.graph

    def init_nodes(self) -> list[Node]:
        root_scope = self.tracer.scopes[-1]
        return [self._as_node(root_scope, self.init[k], self.metas[k]) for k in self.carried()]

    def captured_inputs(self, passes: Sequence[Pass]) -> list[Node]:
        """Outer nodes the subgraphs read, in one order; each subgraph gets a placeholder for each
        (in that order, after its own leading inputs)."""
        order: list[Node] = []
        for p in passes:
            for outer in p.scope.captured:
                if outer not in order:
                    order.append(outer)
        for p in passes:
            for outer in order:
                if outer not in p.scope.captured:
                    p.scope.captured[outer] = p.scope.graph.placeholder(
                        f"captured:{outer.name}", outer.meta, outer.name)
            _order_placeholders(p.scope.graph, [p.scope.captured[o] for o in order])
        return order

    def emit(self, controls: Sequence[Any], subgraphs: dict[str, Graph],
             passes: Sequence[Pass]) -> list[Any]:
        """Add the region node to the current graph; return the state values after it."""
        captured = self.captured_inputs(passes)
        graph = self.tracer.graph
        control_nodes = [self.tracer.localize(c.node) if isinstance(c, ArrayProxy) else c
                         for c in controls]
        args = (*control_nodes, *self.init_nodes(), *captured)
        info = RegionInfo(subgraphs=subgraphs, n_controls=len(controls),
                          n_carried=len(self.carried()), n_captured=len(captured),
                          names=tuple(self.names[k] for k in self.carried()))
        node = graph.region(self.kind, args, info, self.origin)
        after = list(self.init)
        for index, k in enumerate(self.carried()):
            meta = self.metas[k]
            out = graph.call("getitem", (node, index), {}, meta, self.origin)
            after[k] = ArrayProxy(self.tracer, out, example_for(meta, self.init[k]))
            self._keep_ambiguous(passes, k, out)
        for k, (t, pytype, why) in self.tag_slots.items():
            if isinstance(after[k], ArrayProxy) and isinstance(after[t], ArrayProxy):
                self.tracer.tag_value(after[k], after[t], pytype, why)
        for k, why in self.untagged.items():  # only storing it into an array stays exact
            if isinstance(after[k], ArrayProxy):
                self.tracer.ambiguous[after[k].node] = (why, after[k].dtype.kind in "fc")
        return after[:self.n_user]

    def _keep_ambiguous(self, passes: Sequence[Pass], k: int, out: Node) -> None:
        """A carried value whose type a loop inside left to the data stays so after this one."""
        marks = [self.tracer.ambiguous.get(p.outputs[k].node) for p in passes
                 if isinstance(p.outputs[k], ArrayProxy)]
        marks = [m for m in marks if m is not None]
        if marks:
            self.tracer.ambiguous[out] = (marks[0][0], all(m[1] for m in marks))


def _check_branches(builder: RegionBuilder, passes: Sequence[Pass]) -> None:
    """Python gives each variable the type its branch produced: never merge two types into one
    (an int and a float, float32 and float64), and a variable left unbound by one branch raises
    UnboundLocalError there. Both are decided by the data, so they are graph breaks."""
    for k, name in enumerate(builder.names):
        outputs = [p.outputs[k] for p in passes]
        unbound = [is_undefined(v) for v in outputs]
        if any(unbound) and not all(unbound) and not name.startswith("__ac_"):
            raise GraphBreak(f"{name!r} is assigned in only one branch of an `if` on array data "
                             "(the other branch leaves it unbound); assign it before the `if`")
        if any(unbound):
            continue
        metas = [value_meta(v) for v in outputs]
        if metas[0] is None and metas[1] is None:
            continue  # neither a number nor an array: update_metas decides
        if None in metas and not name.startswith("__ac_"):  # None/an object, and a number
            kinds = [type(v).__name__ if m is None else m.short() for v, m in zip(outputs, metas)]
            raise GraphBreak(f"{name!r} is {kinds[0]} in one branch of an `if` on array data "
                             f"and {kinds[1]} in the other; Python keeps each, so this `if` "
                             "runs in Python")
        if None in metas:
            continue  # a return value on one side only: the return flag decides
        if metas[0].shape != metas[1].shape:
            raise GraphBreak(f"{name!r} changes shape from {metas[0].shape} to {metas[1].shape} "
                             "between the branches of an `if` on array data")
        if metas[0] != metas[1] and not _same_number(*metas):
            raise GraphBreak(f"{name!r} is {metas[0].short()} in one branch of an `if` on array "
                             f"data and {metas[1].short()} in the other; Python keeps each type, "
                             "so this `if` runs in Python")


def _retyped(builder: RegionBuilder, approximate: bool = True) -> list[int]:
    """Carried variables whose type in the loop differs from their type before it: after a loop
    that runs zero times they keep the old type. ``approximate``: count a Python number carried
    as a NumPy scalar of its default dtype too."""
    changed = []
    for k in builder.carried():
        value = builder.init[k]
        if builder.names[k].startswith("__ac_"):
            continue
        if is_undefined(value):  # bound by the loop only when it runs
            if approximate:
                changed.append(k)
            continue
        before, after = value_meta(value), builder.metas[k]
        if before is None or before == after:
            continue
        if approximate or not _same_number(before, after):
            changed.append(k)
    return changed


def _retype_message(builder: RegionBuilder, changed: list[int], kind: str) -> str:
    k = changed[0]
    name, init = builder.names[k], builder.init[k]
    if is_undefined(init):
        return (f"{name!r} is bound only by a compiled {kind} that may run zero times (then it "
                "is unbound), so this use of it after the loop runs in Python")
    return (f"{name!r} is {value_meta(init).short()} before a compiled {kind} and "
            f"{builder.metas[k].short()} inside it; if the loop runs zero times Python keeps the "
            "old type, so this use of it after the loop runs in Python")


def _ambiguous(builder: RegionBuilder, dead: Sequence[str]) -> list[int]:
    """Carried variables whose type after a loop depends on whether it ran (a Python number that
    the body makes a NumPy scalar, a variable the loop binds) and that are read after it, and
    that no type tag tells."""
    return [k for k in _retyped(builder)
            if builder.names[k] not in dead and k not in builder.tag_slots]


def _loop_tag_candidates(builder: RegionBuilder, dead: Sequence[str],
                         runs: bool | None) -> dict[int, tuple[type, str]]:
    """Variables read after a loop that hold a Python number or its NumPy twin there depending
    on the data: a Python number before a loop that may not run, or one some path of the body
    leaves in it (``if x[i] > best: best = x[i]``, ``best = max(best, x[i])``)."""
    found = {}
    tags = builder.tracer.tags
    for k in builder.carried():
        name = builder.names[k]
        if k >= builder.n_user or name.startswith("__ac_") or name in dead \
                or is_undefined(builder.init[k]):
            continue
        numpy = numpy_typed(tags, builder.init[k])
        before = python_type_of(tags, builder.init[k]) if numpy is not True else None
        inside = builder.maybe_python.get(k)
        if inside is None and (numpy is True or runs is True):
            continue  # NumPy's type after every iteration, and the loop runs
        if before is not None and inside is not None and before is not inside:
            continue
        pytype = inside or before
        if builder.twin(k, pytype):
            found[k] = (pytype, f"{name!r} is a Python {pytype.__name__} or a NumPy scalar after "
                                "a compiled loop, depending on the data (Python keeps the type "
                                "of the value it last assigned); this use of it runs in Python")
    return found


def _runs(tracer: Any, bounds: tuple[Any, Any, Any]) -> bool | None:
    """Whether a retyping ``for`` loop runs at least once: a guarded decision when its bounds are
    sizes or ints (static or dynamic); None when the data decides (array values as bounds)."""
    import sympy
    start, stop, step = (_bound_expr(tracer, b) for b in bounds)
    if start is not None and stop is not None and step is not None and step.is_Integer:
        relation = sympy.Lt(start, stop) if step > 0 else sympy.Gt(start, stop)
        if relation in (sympy.true, sympy.false):
            return bool(relation)
        if tracer.read_at_run_time(relation):
            return None  # a length the data decides (``range(len(data[lo:hi]))``)
        return tracer.evaluate_relation(relation)
    return None


def _mark_ambiguous(builder: RegionBuilder, after: list[Any], changed: list[int],
                    kind: str) -> None:
    """The values of ``changed`` after a loop that may run zero times: their Python type is the
    data's (``tracer.ambiguous``); storing a number into an array stays exact, any other use is
    a graph break there (rewrite/liveness.py already dropped the variables nothing reads)."""
    for k in changed:
        value = after[k]
        if isinstance(value, ArrayProxy):
            init = builder.init[k]
            storable = not is_undefined(init) and value.dtype.kind in "fc"
            builder.tracer.ambiguous[value.node] = (_retype_message(builder, [k], kind), storable)


def _empty_example_range(examples: Sequence[Any]) -> bool:
    """The loop's bounds as this call has them give no iteration (the body's examples are then
    made up: an error they raise is not the program's)."""
    try:
        return len(range(*(int(e) for e in examples))) == 0
    except (TypeError, ValueError, OverflowError):
        return False


def _bound_expr(tracer: Any, bound: Any) -> Any:
    import sympy
    if isinstance(bound, bool):
        return None
    if isinstance(bound, int):
        return sympy.Integer(bound)
    if isinstance(bound, ArrayProxy):
        return tracer.node_exprs.get(bound.node)
    return None


def _same_number(a: TensorMeta, b: TensorMeta) -> bool:
    """A Python number and a NumPy scalar of its default dtype (``0.0`` and ``np.float64``,
    ``0`` and ``np.int64`` in range): the same value, a NumPy type (a subclass of float for
    floats). Loops carry such pairs as the NumPy type; branches inside loops must agree."""
    python, numpy = (a, b) if a.pytype is not None else (b, a)
    if python.pytype is None or numpy.pytype is not None or not numpy.scalar:
        return False
    return numpy.dtype == np.asarray(python.pytype(0)).dtype and python.pytype is not bool


def _order_placeholders(graph: Graph, tail: list[Node]) -> None:
    """Keep the leading placeholders (index, state) first and the captured ones in ``tail`` order."""
    placeholders = graph.placeholders
    lead = [p for p in placeholders if p not in tail]
    others = [n for n in graph.nodes if n.op != "placeholder"]
    graph.nodes[:] = lead + tail + others


# ----- the three statements -------------------------------------------------------------------
def for_region(runtime: "Runtime", bounds: tuple[Any, Any, Any], item: Callable[[Any], Any],
               body: Callable[[Any], None], get_state: Callable[[], tuple] | None,
               set_state: Callable[[tuple], None] | None, names: Sequence[str],
               extra_test: Callable[[], Any] | None, dead: Sequence[str] = (),
               unused: Sequence[str] = ()) -> None:
    """``for i in range(start, stop, step)`` with run-time bounds or a long trip count.
    ``unused``: dead variables the body never reads on entry (not carried)."""
    init = list(get_state()) if get_state is not None else []
    builder = RegionBuilder(runtime, "for_range", names, init, unused)
    examples = [b.example if isinstance(b, ArrayProxy) else b for b in bounds]
    empty = _empty_example_range(examples)
    index_example = int(examples[0])
    if empty and index_example > 0:  # e.g. an empty row of a CSR matrix: the previous index
        index_example -= 1

    def run(scope: Scope, state: list[Any]) -> tuple[list[Any], list[Any]]:
        index = ArrayProxy(builder.tracer, scope.graph.placeholders[0], index_example)
        if set_state is not None:
            set_state(tuple(state))
        body(item(index))
        outputs = list(get_state()) if get_state is not None else []
        go = extra_test() if extra_test is not None else True
        return outputs, [go]

    def leading(scope: Scope) -> None:
        scope.graph.placeholder("index", python_meta(0), "i")

    try:
        passes = builder.fixpoint(lambda: [builder.trace(run, leading)])
    except GraphBreak:
        raise
    except Exception as error:
        if not empty or not getattr(error, "__ac_from_numpy__", False):
            raise
        # the loop does not run for this call: the error comes from a made-up index only
        raise GraphBreak(f"the body of a loop over an empty range raised {type(error).__name__} "
                         "on the example index used to capture it") from error
    final = passes[0]
    if set_state is not None:
        set_state(tuple(init))  # the passes left placeholders in the variables
    enter = extra_test() if extra_test is not None else True
    if enter is False:
        return
    runs = _runs(builder.tracer, bounds) if _retyped(builder) else True
    if runs is False:
        return  # decided (a guard): the loop does not run, the variables keep their values
    tagged = builder.retrace_with_tags(_loop_tag_candidates(builder, dead, runs),
                                       lambda: [builder.trace(run, leading)])
    if tagged is not None:
        passes, final = tagged, tagged[0]
        if set_state is not None:
            set_state(tuple(init))
    changed = _ambiguous(builder, dead) if runs is None else []
    body_graph = builder.finish_subgraph(final, [final.extra[0]])
    after = builder.emit([*bounds, enter], {"body": body_graph}, passes)
    _mark_ambiguous(builder, after, changed, "loop")
    if set_state is not None:
        set_state(tuple(after))


def while_region(runtime: "Runtime", test: Callable[[], Any], body: Callable[[], None],
                 get_state: Callable[[], tuple] | None, set_state: Callable[[tuple], None] | None,
                 names: Sequence[str], extra_test: Callable[[], Any] | None,
                 dead: Sequence[str] = (), unused: Sequence[str] = ()) -> None:
    """``while cond:`` whose condition depends on array data; a variable whose type after it
    depends on whether it ran must be dead after it (``dead``), else a graph break.
    ``unused``: dead variables the loop never reads on entry (not carried)."""
    init = list(get_state()) if get_state is not None else []
    builder = RegionBuilder(runtime, "while_loop", names, init, unused)

    def condition() -> Any:
        if extra_test is not None:
            return runtime.and_test(extra_test, test)
        return test()

    def run_cond(scope: Scope, state: list[Any]) -> tuple[list[Any], list[Any]]:
        if set_state is not None:
            set_state(tuple(state))
        return list(state), [condition()]

    def run_body(scope: Scope, state: list[Any]) -> tuple[list[Any], list[Any]]:
        if set_state is not None:
            set_state(tuple(state))
        body()
        return (list(get_state()) if get_state is not None else []), []

    def trace_all() -> list[Pass]:
        return [builder.trace(run_cond), builder.trace(run_body)]

    passes = builder.fixpoint(trace_all)
    passes = builder.retrace_with_tags(_loop_tag_candidates(builder, dead, None), trace_all) \
        or passes
    if set_state is not None:
        set_state(tuple(init))
    changed = _ambiguous(builder, dead)
    cond_pass, body_pass = passes
    cond_graph = builder.finish_subgraph(cond_pass, [cond_pass.extra[0]])
    body_graph = builder.finish_subgraph(body_pass)
    after = builder.emit([], {"cond": cond_graph, "body": body_graph}, passes)
    _mark_ambiguous(builder, after, changed, "while loop")
    if set_state is not None:
        set_state(tuple(after))


def if_region(runtime: "Runtime", condition: ArrayProxy, true_fn: Callable[[], None],
              false_fn: Callable[[], None] | None, get_state: Callable[[], tuple] | None,
              set_state: Callable[[tuple], None] | None, names: Sequence[str],
              dead: Sequence[str] = ()) -> None:
    """``if cond:`` on array data: both branches become subgraphs with the same outputs. A
    ``dead`` variable (nothing reads its value after the ``if``) is not carried out: it keeps
    its value from before, whatever the branches leave in it (an inner loop's index)."""
    init = list(get_state()) if get_state is not None else []
    builder = RegionBuilder(runtime, "cond", names, init, unused=dead)

    def branch(fn: Callable[[], None] | None):
        def run(scope: Scope, state: list[Any]) -> tuple[list[Any], list[Any]]:
            if set_state is not None:
                set_state(tuple(state))
            if fn is not None:
                fn()
            return (list(get_state()) if get_state is not None else []), []
        return run

    def trace_both() -> list[Pass]:
        return [builder.trace(branch(true_fn)), builder.trace(branch(false_fn))]

    first = trace_both()  # state as it is before the `if`: what each branch really produces
    if set_state is not None:
        set_state(tuple(init))
    _check_branches(builder, first)
    passes = builder.fixpoint(trace_both, first)
    passes = builder.retrace_with_tags(_branch_tag_candidates(builder, first), trace_both) \
        or passes
    if set_state is not None:
        set_state(tuple(init))
    true_graph = builder.finish_subgraph(passes[0])
    false_graph = builder.finish_subgraph(passes[1])
    after = builder.emit([condition], {"true": true_graph, "false": false_graph}, passes)
    _mark_twins(builder, first, after)
    if set_state is not None:
        set_state(tuple(after))


def _branch_tag_candidates(builder: RegionBuilder,
                           first: Sequence[Pass]) -> dict[int, tuple[type, str]]:
    """Variables that one branch leaves a Python number (or a tagged value) and the other its
    NumPy twin (``if x[i] > best: best = x[i]`` after ``best = 0.0``): carried with a tag."""
    found = {}
    tags = builder.tracer.tags
    for k in builder.carried():
        outputs = [p.outputs[k] for p in first]
        if k >= builder.n_user or any(is_undefined(v) for v in outputs):
            continue
        pytype = mixed_python_type(tags, tuple(outputs))
        if builder.twin(k, pytype):
            name = builder.names[k] if not builder.names[k].startswith("__ac_") else "the value"
            found[k] = (pytype, f"{name!r} is a Python {pytype.__name__} after one branch of an "
                                "`if` on array data and a NumPy scalar after the other; this use "
                                "of it runs in Python")
    return found


def _mark_twins(builder: RegionBuilder, first: Sequence[Pass], after: list[Any]) -> None:
    """A variable that is a Python number in one branch and its NumPy twin in the other
    (``v = float(v)`` on one side) is carried as the NumPy type: its Python type after the `if`
    is the data's, so only storing it into an array stays exact (``tracer.ambiguous``)."""
    for k, name in enumerate(builder.names[:builder.n_user]):
        metas = [value_meta(p.outputs[k]) for p in first]
        value = after[k]
        if None in metas or metas[0] == metas[1] or not isinstance(value, ArrayProxy) \
                or k in builder.tag_slots:
            continue
        builder.tracer.ambiguous[value.node] = (
            f"{name!r} is {metas[0].short()} in one branch of an `if` on array data and "
            f"{metas[1].short()} in the other; Python keeps each type, so this use of it runs "
            "in Python", value.dtype.kind in "fc")


def choice_region(runtime: "Runtime", condition: ArrayProxy, when_true: Callable[[], Any],
                  when_false: Callable[[], Any], what: str) -> Any:
    """``when_true() if condition else when_false()`` on array data (``a and b``, ``a or b``,
    ``b if c else d``): a branch region with one result, the value of the side taken; the other
    side is never evaluated at run time. Python keeps each side's type, so both sides must give
    the same one, and only scalars are chosen (an array operand is returned as itself by
    ``a or b``: a copy made by a region would lose its identity); otherwise a graph break."""
    builder = RegionBuilder(runtime, "cond", ["choice"], [None])

    def side(fn: Callable[[], Any]):
        def run(scope: Scope, state: list[Any]) -> tuple[list[Any], list[Any]]:
            return [fn()], []
        return run

    def trace_both() -> list[Pass]:
        return [builder.trace(side(when_true)), builder.trace(side(when_false))]

    first = trace_both()  # on the call's own values: what each side really gives
    metas = [_chosen_meta(what, p.outputs[0]) for p in first]
    mixed = metas[0] != metas[1]
    if mixed and not _same_number(*metas):
        raise GraphBreak(f"the sides of {what} on array data give "
                         f"{metas[0].short()} and {metas[1].short()}; Python keeps each type, so "
                         "it runs in Python")
    passes = builder.fixpoint(trace_both, first)
    passes = builder.retrace_with_tags(_branch_tag_candidates(builder, first), trace_both) \
        or passes
    true_graph = builder.finish_subgraph(passes[0])
    false_graph = builder.finish_subgraph(passes[1])
    (result,) = builder.emit([condition], {"true": true_graph, "false": false_graph}, passes)
    taken = first[0] if bool(condition.example) else first[1]
    chosen = ArrayProxy(builder.tracer, result.node,
                        example_for(builder.metas[0], taken.outputs[0]))
    tag = builder.tracer.tags.get(result.node)
    if tag is not None:  # chosen stands for the result: the same node
        builder.tracer.tag_value(chosen, tag.numpy, tag.pytype, builder.tag_slots[0][2])
    elif mixed:  # a Python number or its NumPy twin: exact only stored into an array
        builder.tracer.ambiguous[chosen.node] = (
            f"the sides of {what} on array data give {metas[0].short()} and "
            f"{metas[1].short()}; Python keeps each type, so this use of it runs in Python",
            chosen.dtype.kind in "fc")
    return chosen


def _chosen_meta(what: str, value: Any) -> TensorMeta:
    """The type of one side of a choice on array data: a number or a NumPy scalar."""
    meta = value_meta(value)
    if meta is None or is_undefined(value):
        raise GraphBreak(f"{what} on array data gives a "
                         f"{type(value).__name__} on one side, which a compiled branch cannot "
                         "return; it runs in Python")
    if not meta.scalar:
        raise GraphBreak(f"{what} on array data would return an array "
                         "operand itself (its identity); it runs in Python")
    return meta
