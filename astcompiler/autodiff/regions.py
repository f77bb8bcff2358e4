"""Reverse mode through loop and branch regions, at capture time.

A ``for_range`` region (a loop over a run-time range) is differentiated with a **tape**: a
taping loop runs the loop forward, writing the carried state each iteration starts from into one
stack array per state variable (``tape[k][iteration]``); it reads only the loop's own inputs, so
it replaces the program's loop (``reuse_forward``: the forward runs once). Then a reverse loop
(``for j in range(trips)``, iteration ``trips - 1 - j``) reads that iteration's state back,
emits the body again on it (its intermediates: recomputed from the stored state) and applies
the body's rules: the state's cotangent is the reverse loop's carried value, the cotangents of
the values the body reads from outside add up in carried accumulators. Tape over recompute:
recomputing the state of iteration ``t`` from the start costs ``t`` body runs (quadratic in the
trip count); the tape costs one state per iteration of memory. Only the
state is stored, not the body's intermediates (they are recomputed once, in the reverse loop),
so memory is ``trips x size(state)``.

A ``cond`` region (an ``if`` on array data) is differentiated by a ``cond`` region on the same
condition whose branches emit the taken branch again and apply its rules: only the taken
branch runs, forward and backward.

Both backward regions are built by the capture's own region machinery (``for_region``,
``if_region``): they lower like any loop or branch of user code (loop regions in the numba
backend). A loop or branch nested in the region is captured again inside the body being
emitted (``_emit_region``) and differentiated there by the same rules, so nesting goes to any
depth. ``while`` loops, loops with ``break`` and writes into arrays inside the region (or a
region nested in it) are refused with an error naming the line.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..capture.proxy import ArrayProxy
from ..capture.runtime.calls import dispatch_call
from ..capture.runtime.regions import for_region, if_region
from ..exc import Unsupported
from ..graph import Graph, Node, map_nodes
from ..ops import REGISTRY
from ..source.origins import current_origin
from .reverse import BACKWARD, Tagger, backward, user_error

LEADING = {"for_range": 1, "cond": 0}  # subgraph placeholders before the carried ones


def refusal(region: Node) -> str | None:
    """Why ``region`` (a loop or branch) cannot be differentiated, or None."""
    if region.target == "while_loop":
        return ("a `while` loop on run-time values: its trip count is known only when it "
                "ends; write it as `for i in range(max_steps):` with the update masked, "
                "`h = np.where(done, h, step(h))`")
    if region.target not in LEADING:
        return f"a {region.target} region"
    if region.target == "for_range":
        controls, _, _ = region.info.split(region.args)
        body = region.info.subgraphs["body"]
        if controls[3] is not True or not _always_true(body.output_node.args[0][-1]):
            return "a loop with `break` over a run-time range (its trip count is data)"
    for sub in region.info.subgraphs.values():
        for node in sub.nodes:
            if node.op == "region":
                inner = refusal(node)
                if inner is not None:
                    return inner
            if node.op == "call" and REGISTRY[node.target].store is not None:
                return (f"a write into an array ({node.origin or '?'}) inside a loop or branch "
                        "on run-time values; carry the value instead (`s = s + ...`, "
                        "`h = np.tanh(...)`) or collect results in a list and `np.stack` them")
    return None


def _always_true(value: Any) -> bool:
    if value is True:
        return True
    return isinstance(value, Node) and value.op == "call" and value.target == "scalar" \
        and value.args[:1] == (True,)


def _refuse(region: Node, why: str) -> Unsupported:
    return user_error(Unsupported(f"cannot differentiate {why} ({region.origin or '?'})",
                                  hint="see docs/gradients.md, 'Loops and branches'"))


def emit_again(tracer: Any, sub: Graph, env: dict[Node, Any],
               refuse: Callable[[Node], Exception], suffix: str | None = None,
               runtime: Any = None) -> tuple[list[Node], list[Any], dict[Node, Any]]:
    """``sub``'s call nodes traced again into the graph under capture on ``env`` (its
    placeholders' values); a loop or branch region in ``sub`` is captured again as a region
    when ``runtime`` is given (``_emit_region``), else raises ``refuse(node)``. ``suffix``:
    each new node takes the origin of the node it repeats plus it (None: the tracer's).
    Returns (the new nodes, the output values, the value of each node of ``sub``)."""
    graph = tracer.graph
    before = {id(n) for n in graph.nodes}
    env = dict(env)
    outs: list[Any] = []
    for node in sub.nodes:
        if node.op == "call" and _region_result(node):
            env[node] = env[node.args[0]][node.args[1]]
        elif node.op == "call":
            args = map_nodes(node.args, env.__getitem__)
            kwargs = map_nodes(node.kwargs, env.__getitem__)
            env[node] = tracer.trace_op(REGISTRY[node.target], args, kwargs)
            made = getattr(env[node], "node", None)
            if suffix is not None and made is not None and id(made) not in before \
                    and node.origin:
                made.origin = node.origin + suffix
        elif node.op == "region":
            if runtime is None or node.target not in LEADING:
                raise refuse(node)
            env[node] = _emit_region(runtime, node, map_nodes(node.args, env.__getitem__),
                                     suffix)
        elif node.op == "output":
            outs = [env[o] if isinstance(o, Node) else o for o in node.args[0]]
    nodes = [n for n in graph.nodes if id(n) not in before and n.op != "placeholder"]
    return nodes, outs, env


def _region_result(node: Node) -> bool:
    return node.target == "getitem" and isinstance(node.args[0], Node) \
        and node.args[0].op == "region"


def _emit_region(runtime: Any, region: Node, values: tuple, suffix: str | None) -> list[Any]:
    """A loop or branch region nested in a region being emitted again: captured again by the
    capture's own ``for_region``/``if_region`` on ``values`` (its arguments), each subgraph
    emitted again on the new state (its own nested regions the same way). Returns the values
    of its results, in order (its ``getitem`` nodes read them)."""
    info = region.info
    controls, carried, captured = info.split(values)
    state = list(carried)

    def again(label: str, leading: list[Any]) -> None:
        sub = info.subgraphs[label]
        env = dict(zip(sub.placeholders, [*leading, *state, *captured]))
        outs = emit_again(runtime.tracer, sub, env, lambda n: _refuse(n, "this region"),
                          suffix, runtime)[1]
        state[:] = outs[:info.n_carried]

    def get_state() -> tuple:
        return tuple(state)

    def set_state(new: tuple) -> None:
        state[:] = list(new)

    names = list(info.names)
    if region.target == "cond":
        if_region(runtime, controls[0], lambda: again("true", []), lambda: again("false", []),
                  get_state, set_state, names)
    else:
        for_region(runtime, tuple(controls[:3]), lambda i: i, lambda i: again("body", [i]),
                   get_state, set_state, names, None)
    return state


def replay(runtime: Any, sub: Graph, env: dict[Node, Any], region: Node, suffix: str = ""
           ) -> tuple[list[Node], list[Any], Callable[[Node], Any], dict[Node, Any]]:
    """``sub``'s call nodes emitted again into the graph under capture on ``env`` (its
    placeholders' values; nested loops and branches as regions again), each with the origin
    of the node it repeats plus ``suffix``: (the new nodes, the output values, their value
    lookup, the value of each node of ``sub``)."""
    tracer = runtime.tracer
    nodes, outs, env = emit_again(tracer, sub, env, lambda _: _refuse(
        region, "a loop or branch inside a loop or branch on run-time values"), suffix, runtime)
    known = {p.node: p for p in env.values() if isinstance(p, ArrayProxy)}
    for outer, inner in local_inputs(tracer).items():  # values read from enclosing graphs
        if outer in known:
            known.setdefault(inner, known[outer])

    def value_of(node: Node) -> Any:
        if node in known:
            return known[node]
        raise _refuse(region, f"a value {node.name} the region does not hold")
    return nodes, outs, value_of, env


def local_inputs(tracer: Any) -> dict[Node, Node]:
    """Nodes of enclosing graphs -> the placeholders the region under capture reads them as
    (through every region in between: a branch inside a loop reads the loop's placeholder)."""
    found: dict[Node, Node] = {}
    for scope in tracer.scopes[1:]:
        deeper = dict(scope.captured)
        for outer, inner in found.items():
            if inner in scope.captured:
                deeper[outer] = scope.captured[inner]
        found = deeper
    return found


def _float(value: Any) -> bool:
    return isinstance(value, ArrayProxy) and np.dtype(value.dtype).kind in "fc"


def _body_vjp(runtime: Any, sub: Graph, env: dict[Node, Any], region: Node,
              seeds: dict[int, Any], wrt: list[Any], tag: Tagger,
              reads: tuple[Node, ...] = ()) -> tuple[list[Any], dict[Node, Any]]:
    """Emit ``sub`` again on ``env`` and the cotangents of ``wrt`` (traced values: distinct
    ones get their own, a repeated one gets None after its first place), then of the values of
    its nodes ``reads``, for the cotangents ``seeds`` of its outputs; and each node's value.
    A region nested in ``sub`` is differentiated the same way, inside this one."""
    tracer = runtime.tracer
    nodes, outs, value_of, values = replay(runtime, sub, env, region, BACKWARD)
    wrt = list(wrt) + [values[r] for r in reads]
    local = local_inputs(tracer)
    here = lambda node: local.get(node, node)  # noqa: E731
    outputs = [(here(outs[k].node), g) for k, g in seeds.items()
               if g is not None and isinstance(outs[k], ArrayProxy)]
    unique: list[Node] = []
    for value in wrt:
        if here(value.node) not in unique:
            unique.append(here(value.node))
    done = backward(nodes, outputs, unique, value_of, tag,
                    region_rule=lambda *a: region_vjp(runtime, *a, tag))
    by_node = dict(zip(unique, done.grads))
    grads, seen = [], set()
    for value in wrt:
        node = here(value.node)
        grads.append(None if node in seen else by_node[node])
        seen.add(node)
    return grads, values


def _or_zeros(g: Any, like: Any) -> Any:
    return np.zeros_like(like) if g is None else g


def region_vjp(runtime: Any, region: Node, values: tuple, results: dict[int, Any],
               wants: tuple, tag: Tagger) -> tuple:
    """Cotangents of ``region``'s args (its traced ``values``) given those of its results
    (``results``: result index -> cotangent); ``wants``: which args carry gradient."""
    why = refusal(region)
    if why is not None:
        raise _refuse(region, why)
    if region.target == "cond":
        return _cond_vjp(runtime, region, values, results, wants, tag)
    return _loop_vjp(runtime, region, values, results, wants, tag)


def _cond_vjp(runtime: Any, region: Node, values: tuple, results: dict[int, Any],
              wants: tuple, tag: Tagger) -> tuple:
    info = region.info
    controls, carried, captured = info.split(values)
    inputs = list(carried) + list(captured)
    targets = [k for k, v in enumerate(inputs) if wants[info.n_controls + k] and _float(v)]
    state = [np.zeros_like(inputs[k]) for k in targets]

    def branch(label: str) -> Callable[[], None]:
        def run() -> None:
            sub = info.subgraphs[label]
            env = dict(zip(sub.placeholders, inputs))
            grads, _ = _body_vjp(runtime, sub, env, region, results,
                                 [inputs[k] for k in targets], tag)
            state[:] = [_or_zeros(g, inputs[k]) for g, k in zip(grads, targets)]
        return run

    def get_state() -> tuple:
        return tuple(state)

    def set_state(new: tuple) -> None:
        state[:] = list(new)

    names = [f"ct_{k}" for k in targets]
    mark = {id(n) for n in runtime.tracer.graph.nodes}
    if_region(runtime, controls[0], branch("true"), branch("false"), get_state, set_state, names)
    label(runtime.tracer.graph, mark, region)
    cotangents: list[Any] = [None] * len(values)
    for g, k in zip(state, targets):
        cotangents[info.n_controls + k] = g
    return tuple(cotangents)


def _trips(tracer: Any, region: Node, bounds: tuple) -> tuple[Any, Any] | None:
    """How many iterations ``range(*bounds)`` has, as (a size, a loop bound): ints, or a
    symbolic size and its run-time value when the bounds are sizes; None when it is not
    positive (a guard when symbolic: the loop does not run in this call)."""
    if all(type(b) is int for b in bounds):
        count = len(range(*bounds))
        return (count, count) if count > 0 else None
    import sympy

    exprs = [sympy.Integer(b) if type(b) is int else tracer.node_exprs.get(getattr(b, "node", None))
             for b in bounds]
    start, stop, step = exprs
    if None in exprs or not step.is_Integer or step == 0:
        raise _refuse(region, "a loop over a range whose bounds are array data, or whose step "
                              "is not a constant")
    count = stop - start if step == 1 else sympy.floor((stop - start + step - sympy.sign(step))
                                                       / step)
    if not tracer.evaluate_relation(sympy.Gt(count, 0)):
        return None
    return tracer.sym_shape((count,))[0], tracer.sym_value(count)


def _loop_vjp(runtime: Any, region: Node, values: tuple, results: dict[int, Any],
              wants: tuple, tag: Tagger) -> tuple:
    info = region.info
    tracer = runtime.tracer
    (start, stop, step, _), carried, captured = info.split(values)
    body = info.subgraphs["body"]
    index, *places = body.placeholders
    state_places, captured_places = places[:info.n_carried], places[info.n_carried:]
    bodyout = body.output_node.args[0]
    read = [any(u is not body.output_node for u in p.users) for p in state_places]
    floats = [p.meta is not None and p.meta.pytype is None and np.dtype(p.meta.dtype).kind in "fc"
              for p in state_places]
    for k, p in enumerate(state_places):
        if read[k] and not floats[k] and (p.meta is None or p.meta.pytype is not None):
            raise _refuse(region, f"a loop whose body reads the Python number {info.names[k]!r} "
                                  "it carries (its per-iteration values are not kept)")
    taped = [k for k in range(info.n_carried) if read[k] or floats[k]]
    counted = _trips(tracer, region, (start, stop, step))
    if counted is None:  # the loop does not run: its results are its initial values
        return tuple(results.get(k - info.n_controls) if info.n_controls <= k <
                     info.n_controls + info.n_carried else None for k in range(len(values)))
    size, trips = counted
    init = list(carried)
    mark = {id(n) for n in tracer.graph.nodes}  # what the taping loop adds: after it
    tapes = {k: dispatch_call(runtime, np.zeros, ((size,) + _shape(init[k]),),
                              {"dtype": state_places[k].meta.dtype}) for k in taped}
    linear = all(type(b) is int for b in (start, step)) and (start, step) == (0, 1)

    def position(i: Any) -> Any:
        return i if linear else (i - start) // step

    # 1. the forward loop again, keeping the state each iteration starts from
    state = list(init)

    def tape_body(i: Any) -> None:
        for k in taped:
            tapes[k][position(i)] = state[k]
        env = {index: i, **dict(zip(state_places, state)), **dict(zip(captured_places, captured))}
        outs = replay(runtime, body, env, region)[1]  # the user's lines: the forward loop
        state[:] = outs[:info.n_carried]

    def set_all(new: tuple) -> None:
        state[:] = list(new)

    names = [f"fwd_{n}" for n in info.names]
    for_region(runtime, (start, stop, step), lambda i: i, tape_body, lambda: tuple(state),
               set_all, names, None)
    label(tracer.graph, mark, region)
    reuse_forward(tracer.graph, region, mark)
    mark = {id(n) for n in tracer.graph.nodes}

    # 2. the reverse loop
    float_state = [k for k in range(info.n_carried) if floats[k]]
    targets = [c for c, v in enumerate(captured)
               if wants[info.n_controls + info.n_carried + c] and _float(v)]
    sliced = {c: _sliced_reads(captured_places[c]) for c in targets}  # x[t]: scatter-added
    sliced = {c: reads for c, reads in sliced.items() if reads}
    scattered = {c: np.zeros_like(captured[c]) for c in sliced}  # written in place
    targets = [c for c in targets if c not in sliced]
    cts = [_zeros_of(init[k], state_places[k]) if results.get(k) is None else results[k]
           for k in float_state]
    accs = [np.zeros_like(captured[c]) for c in targets]
    rev = cts + accs

    def reverse_body(j: Any) -> None:
        back = trips - 1 - j
        i = back if linear else start + back * step
        states = [tapes[k][back] if k in tapes else init[k] for k in range(info.n_carried)]
        env = {index: i, **dict(zip(state_places, states)), **dict(zip(captured_places, captured))}
        seeds = dict(zip(float_state, rev[:len(float_state)]))
        wrt = [states[k] for k in float_state] + [captured[c] for c in targets]
        reads = tuple(r for c in sliced for r in sliced[c])
        grads, body_values = _body_vjp(runtime, body, env, region, seeds, wrt, tag, reads)
        grads, read_grads = grads[:len(wrt)], grads[len(wrt):]
        owner = [c for c in sliced for _ in sliced[c]]
        for c, r, g in zip(owner, reads, read_grads):
            if g is not None:
                where = map_nodes(r.args[1], body_values.__getitem__)
                scattered[c][where] = scattered[c][where] + g
        n = len(float_state)
        new = [_or_zeros(g, old) for g, old in zip(grads[:n], rev[:n])]
        new += [old if g is None else old + g for g, old in zip(grads[n:], rev[n:])]
        rev[:] = new

    def set_rev(new: tuple) -> None:
        rev[:] = list(new)

    names = [f"ct_{info.names[k]}" for k in float_state] + [f"ct_captured_{c}" for c in targets]
    for_region(runtime, (0, trips, 1), lambda j: j, reverse_body, lambda: tuple(rev), set_rev,
               names, None)
    label(tracer.graph, mark, region)
    cotangents: list[Any] = [None] * len(values)
    for slot, k in enumerate(float_state):
        cotangents[info.n_controls + k] = rev[slot]
    for slot, c in enumerate(targets):
        cotangents[info.n_controls + info.n_carried + c] = rev[len(float_state) + slot]
    for c, acc in scattered.items():
        cotangents[info.n_controls + info.n_carried + c] = acc
    return tuple(cotangents)


def label(graph: Graph, mark: set[int], region: Node) -> None:
    """The nodes added to ``graph`` since ``mark`` (ids), and those in their subgraphs, that
    carry the line of this code's caller (the ``ac.grad`` wrapper: tapes, accumulators, loop
    counters) get the line of the differentiated ``region`` instead, tagged backward."""
    ambient, origin = current_origin(), f"{region.origin or '?'}{BACKWARD}"

    def relabel(nodes: list[Node]) -> None:
        for node in nodes:
            if node.origin == ambient:
                node.origin = origin
            if node.op == "region":
                for sub in node.info.subgraphs.values():
                    relabel(sub.nodes)
    relabel([n for n in graph.nodes if id(n) not in mark])


def reuse_forward(graph: Graph, region: Node, mark: set[int]) -> bool:
    """The taping loop (the ``for_range`` region among the nodes not in ``mark``, ids) replaces
    the forward ``region``: it computes the same results from the same args, so the program's
    reads of ``region``'s results read its results, and the loop runs once, not twice. Its
    nodes move to ``region``'s place; done only when they read nothing computed after it and
    its results line up with ``region``'s. Returns whether it was done."""
    nodes = graph.nodes
    added = [n for n in nodes if id(n) not in mark]
    tapers = [n for n in added if n.op == "region" and n.target == "for_range"]
    if region not in nodes or len(tapers) != 1 or not _same_results(region, tapers[0]):
        return False
    taper, place = tapers[0], nodes.index(region)
    earlier = {id(n) for n in nodes[:place]} | {id(n) for n in added}
    if any(id(i) not in earlier for n in added for i in n.all_input_nodes()):
        return False
    moved = {id(n) for n in added}
    graph.nodes[:] = nodes[:place] + added + [n for n in nodes[place:] if id(n) not in moved]
    for read in list(region.users):
        read.replace_input(region, taper)
    graph.erase(region)
    taper.origin = region.origin  # the user's loop (its tape writes are tagged backward)
    for read in added:  # the taping loop's own reads of its results: unused duplicates
        if read.op == "call" and read.target == "getitem" and read.args[0] is taper \
                and not read.users:
            graph.erase(read)
    return True


def _same_results(region: Node, taper: Node) -> bool:
    """Both loops give the same results: one per carried value, same metadata, and every read of
    ``region`` is ``getitem(region, k)``."""
    if region.info.n_carried != taper.info.n_carried:
        return False
    mine = {u.args[1]: u.meta for u in taper.users if u.op == "call" and u.target == "getitem"}
    for read in region.users:
        if read.op != "call" or read.target != "getitem" or read.args[0] is not region \
                or type(read.args[1]) is not int or read.meta != mine.get(read.args[1]):
            return False
    return True


def _sliced_reads(place: Node) -> tuple[Node, ...]:
    """The reads of a captured array ``place`` when the body only reads it by basic indexing
    (``x[t]``, ``x[t, 1:]``): their cotangents are added into one array in place
    (``ct[t] += g``) instead of a full-size cotangent per iteration; else ()."""
    reads = tuple(place.users)
    for read in reads:
        if read.op != "call" or read.target != "getitem" or read.args[0] is not place \
                or not all(_basic(v) for v in _index_leaves(read.args[1])):
            return ()
    return reads


def _index_leaves(index: Any) -> list[Any]:
    items = index if isinstance(index, tuple) else (index,)
    leaves: list[Any] = []
    for item in items:
        leaves.extend((item.start, item.stop, item.step) if isinstance(item, slice) else (item,))
    return leaves


def _basic(value: Any) -> bool:
    """An index part of basic indexing: an int (traced or not), None, ``...``."""
    if value is None or value is Ellipsis or (type(value) is int):
        return True
    meta = value.meta if isinstance(value, Node) else None
    return meta is not None and meta.ndim == 0 and np.dtype(meta.dtype).kind in "iu"


def _shape(value: Any) -> tuple:
    return tuple(value.shape) if isinstance(value, ArrayProxy) else ()


def _zeros_of(value: Any, place: Node) -> Any:
    """Zeros shaped like a carried value, of the type the loop carries it as."""
    dtype = np.dtype(place.meta.dtype)
    if isinstance(value, ArrayProxy):
        return np.zeros_like(value, dtype=dtype)
    return dtype.type(0)


__all__ = ["LEADING", "label", "refusal", "region_vjp", "replay", "reuse_forward"]
