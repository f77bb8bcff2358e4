"""Reverse mode over the graph IR.

``backward`` walks the forward nodes of a captured computation from its output back to the
inputs being differentiated, applying each op's ``vjp`` rule (``OpDef.vjp``, declared beside
the op) to the cotangent of its result. Rules are NumPy code on the values they are given, and
the values given here are traced arrays of the capture, so every step of the backward pass
becomes nodes of the same graph: one joint graph computes the value and the gradients, and the
backends lower and fuse it like any other.

Writes (``setitem``, ``copy_``: ops with a ``store`` rule) are made functional here: each write
starts a new *version* of the array it writes into; reads after it see that version. The
cotangent of a write splits into the written value's part (``g[index]``) and the previous
version's (``g`` with the overwritten part zeroed). A rule that needs the data of a version
that a later write overwrote gets a ``StaleValue`` (shape and dtype only) and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import contextlib
from typing import Any, Callable, ContextManager

import numpy as np

from ..exc import Unsupported
from ..graph import Node, map_nodes
from ..ops import REGISTRY
from ..ops.derivatives import VjpContext, sum_to

ValueOf = Callable[[Node], Any]  # a forward node -> its traced value
Tagger = Callable[[Node], ContextManager]  # around each rule: tags the nodes it emits
BACKWARD = " (backward)"  # origin suffix of backward nodes: ``model.py:3 (backward)``


@dataclass
class ForwardFacts:
    """What the forward pass of ``backward`` learned: which nodes carry gradient, what each
    read resolves to once writes are versions, and which versions are overwritten later."""

    needs: set[Node] = field(default_factory=set)
    args: dict[Node, tuple[tuple, dict]] = field(default_factory=dict)
    current: dict[Node, Node] = field(default_factory=dict)  # array node -> its latest write
    stale: set[Node] = field(default_factory=set)  # versions a later write overwrote


@dataclass(frozen=True)
class BackwardResult:
    """Cotangents of the differentiated inputs (None: no path from the output to it), and of
    the ``observe``d nodes (module call boundaries: ``autodiff/module_hooks.py``)."""

    grads: tuple
    observed: dict = field(default_factory=dict)  # observed node -> its cotangent (or None)
    needs: frozenset = frozenset()  # the nodes that carry gradient


class StaleValue:
    """An array version a later write overwrote: shape and dtype are known, its data is not
    kept (a rule that needs it raises)."""

    def __init__(self, value: Any, node: Node) -> None:
        self._value = value
        self._node = node
        self.shape = value.shape
        self.ndim = value.ndim
        self.dtype = value.dtype

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        if func in (np.zeros_like, np.ones_like, np.shape, np.ndim):
            return func(self._value, *args[1:], **kwargs)
        self._refuse()

    def __array_ufunc__(self, *args: Any, **kwargs: Any) -> Any:
        self._refuse()

    def __getattr__(self, name: str) -> Any:
        self._refuse()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise user_error(Unsupported(
            f"the gradient needs the values of {self._node.name} as they were before a later "
            f"write into it ({self._node.origin or '?'}); copy the array before writing into it "
            "(y = y.copy()) so both versions exist"))

    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = _refuse


def user_error(error: Exception) -> Exception:
    """Mark an error about the differentiated call itself (JAX's TypeErrors, what is not
    differentiable): ``ac.grad`` run eagerly raises it as is, not as a capture failure."""
    error.__ac_grad_error__ = True  # type: ignore[attr-defined]
    return error


def _differentiable(node: Node) -> bool:
    meta = node.meta
    return meta is not None and meta.pytype is None and np.dtype(meta.dtype).kind in "fc"


def _where(node: Node) -> str:
    return node.origin or "?"


def _not_differentiable(node: Node, why: str) -> Unsupported:
    return user_error(Unsupported(
        f"cannot differentiate {why} ({_where(node)})",
        hint="compute it outside the differentiated function, or stop the gradient there; "
             "see docs/gradients.md for what is differentiable"))


def analyze(nodes: list[Node], wrt: list[Node]) -> ForwardFacts:
    """The forward pass: gradient-carrying nodes and versioned reads."""
    facts = ForwardFacts(needs=set(wrt))
    view_base: dict[Node, tuple[Node, int]] = {}  # view -> (array version it reads, position)
    written: dict[Node, int] = {}  # array version -> position of the write that replaced it
    for position, node in enumerate(nodes):
        resolve = lambda n: facts.current.get(n, n)  # noqa: E731
        if node.op == "region":
            inputs = [resolve(n) for n in node.all_input_nodes()]
            if any(n in facts.needs for n in inputs):
                write = _write_inside(node)
                if write is not None and (write.origin or "").endswith(BACKWARD):
                    raise _not_differentiable(write, "a gradient (ac.jvp, a gradient of a "
                                              "gradient) through a loop over a run-time range: "
                                              "the loop's backward pass writes a tape")
                if write is not None:  # its reads after the region would miss the write
                    raise _not_differentiable(write, "a write into an array inside a loop or "
                                              "branch on run-time values; carry the value "
                                              "instead (`s = s + ...`) or collect results in a "
                                              "list and `np.stack` them")
                facts.needs.add(node)  # through its traced subgraph(s): regions.py
                facts.args[node] = (map_nodes(node.args, resolve), {})
            continue
        if node.op != "call":
            continue
        op = REGISTRY[node.target]
        args, kwargs = map_nodes(node.args, resolve), map_nodes(node.kwargs, resolve)
        facts.args[node] = (args, kwargs)
        inputs = _nodes_in((args, kwargs))
        if inputs & facts.needs:
            for view in inputs:  # a view read after a write into its base sees the write
                base = view_base.get(view)
                if base is not None and written.get(base[0], -1) > base[1]:
                    raise _not_differentiable(node, "a view read after a write into its base")
        store = op.store(args, kwargs) if op.store is not None else None
        if store is not None:
            dst = node.args[0]
            before = resolve(dst)
            if before in facts.needs or _nodes_in(store.value) & facts.needs:
                if before in view_base:
                    raise _not_differentiable(node, "a write into a view of another array")
                facts.needs.add(node)
            facts.stale.add(before)
            written[before] = position
            facts.current[dst] = node
            continue
        if op.kind == "view" and args and isinstance(args[0], Node):
            view_base[node] = (args[0], position)
        if _differentiable(node) and inputs & facts.needs:
            facts.needs.add(node)
    return facts


def _write_inside(region: Node) -> Node | None:
    """The first write (a ``store`` op) in the subgraphs of a loop or branch region."""
    if region.target == "nonstrict_call":
        return None  # its body is emitted again as nodes of this graph (versions apply)
    for sub in region.info.subgraphs.values():
        for node in sub.nodes:
            found = _write_inside(node) if node.op == "region" else node if (
                node.op == "call" and REGISTRY[node.target].store is not None) else None
            if found is not None:
                return found
    return None


def _nodes_in(value: Any) -> set[Node]:
    found: list[Node] = []
    map_nodes(value, found.append)
    return set(found)


def _wants(value: Any, needs: set[Node]) -> Any:
    if isinstance(value, Node):
        return value in needs
    if isinstance(value, (tuple, list)):
        return tuple(_wants(v, needs) for v in value)
    return False


def _accumulate(ct: dict[Node, Any], target: Any, g: Any, needs: set[Node]) -> None:
    if g is None:
        return
    if isinstance(target, Node):
        if target in needs:
            ct[target] = g if target not in ct else ct[target] + g
    elif isinstance(target, (tuple, list)):
        for item, gi in zip(target, g):
            _accumulate(ct, item, gi, needs)


def _value(node: Node, facts: ForwardFacts, value_of: ValueOf) -> Any:
    """A forward value for a rule; a write's version is the array it wrote into."""
    array = node.args[0] if node.op == "call" and REGISTRY[node.target].store is not None \
        else node
    value = value_of(array)
    return StaleValue(value, node) if node in facts.stale else value


def _values(value: Any, facts: ForwardFacts, value_of: ValueOf) -> Any:
    return map_nodes(value, lambda node: _value(node, facts, value_of))


def _store_vjp(node: Node, facts: ForwardFacts, value_of: ValueOf, g: Any,
               ct: dict[Node, Any]) -> None:
    args, kwargs = facts.args[node]
    store = REGISTRY[node.target].store(args, kwargs)
    before, index, value = args[0], store.index, store.value
    whole = index is Ellipsis
    if isinstance(value, Node) and value in facts.needs:
        part = g if whole else g[_values(index, facts, value_of)]
        _accumulate(ct, value, sum_to(part, _value(value, facts, value_of)), facts.needs)
    if isinstance(before, Node) and before in facts.needs and not whole:
        rest = g.copy()
        rest[_values(index, facts, value_of)] = 0
        _accumulate(ct, before, rest, facts.needs)


Replay = Callable[[Node, tuple], tuple[list[Node], list[Any], ValueOf]]
# a nonstrict_trace region and its argument values -> its traced body emitted again (nodes,
# output values, their value lookup): the backward pass of a region recomputes its forward
RegionRule = Callable[[Node, tuple, dict, tuple], tuple]
# a loop or branch region, its argument values, the cotangents of its results (by index) and
# which arguments carry gradient -> one cotangent per argument (autodiff/regions.py)


def backward(nodes: list[Node], outputs: list[tuple[Node, Any]], wrt: list[Node],
             value_of: ValueOf, tag: Tagger | None = None,
             replay: Replay | None = None, observe: frozenset = frozenset(),
             region_rule: RegionRule | None = None) -> BackwardResult:
    """Cotangents of ``wrt`` for the computation ``nodes`` (forward order) whose results
    ``outputs`` have the given cotangents (seeds); backward nodes are emitted through the
    values ``value_of`` gives (traced arrays), each rule inside ``tag(forward node)``. The
    total cotangent of each node in ``observe`` is reported too."""
    tag = tag or (lambda node: contextlib.nullcontext())
    facts = analyze(nodes, wrt)
    ct: dict[Node, Any] = {}
    for output, seed in outputs:
        _accumulate(ct, facts.current.get(output, output), seed, facts.needs)
    regions: dict[Node, dict[int, Any]] = {}  # nonstrict region -> cotangents of its results
    observed: dict[Node, Any] = {}
    targets = set(wrt)  # a computed value differentiated against: its cotangent is the answer
    for node in reversed(nodes):
        if node in targets:
            continue
        if node.op == "region" and node in facts.needs:
            if node.target == "nonstrict_call":
                _region_vjp(node, facts, value_of, regions.pop(node, {}), ct, tag, replay)
            else:
                _loop_vjp(node, facts, value_of, regions.pop(node, {}), ct, tag, region_rule)
            continue
        if node.op != "call" or node not in facts.needs:
            continue
        g = ct.pop(node, None)
        if node in observe:
            observed[node] = g
        if g is None:
            continue
        if node.target == "getitem" and isinstance(node.args[0], Node) \
                and node.args[0].op == "region":  # a result of a region: its k-th output
            results = regions.setdefault(node.args[0], {})
            k = node.args[1]
            results[k] = g if k not in results else results[k] + g
            continue
        op = REGISTRY[node.target]
        if op.store is not None:
            with tag(node):
                _store_vjp(node, facts, value_of, g, ct)
            continue
        if op.vjp is None:
            raise user_error(Unsupported(
                f"op {node.target!r} has no derivative rule ({_where(node)})",
                hint="differentiate a function that does not use it on the differentiated "
                     "values, or declare a vjp for it in the op registry (ops/<family>.py)"))
        args, kwargs = facts.args[node]
        ctx = VjpContext(node.target, _values(args, facts, value_of),
                         _values(kwargs, facts, value_of), _value(node, facts, value_of),
                         tuple(_wants(a, facts.needs) for a in args))
        try:
            with tag(node):
                cotangents = op.vjp(ctx, g)
        except NotImplementedError as error:
            raise _not_differentiable(node, f"{node.target}: {error}") from None
        for arg, gi in zip(args, cotangents):
            _accumulate(ct, arg, gi, facts.needs)
    for node in observe:
        if node not in observed:  # an input (never popped) or a node that carries no gradient
            observed[node] = ct.get(facts.current.get(node, node))
    return BackwardResult(tuple(ct.get(w) for w in wrt), observed, frozenset(facts.needs))


def _broadcasts_anyway(user: Node, view: Node) -> bool:
    """``user`` is a pointwise op that gives ``view``'s shape anyway: another array operand has
    the result's shape, so reading ``view``'s (smaller) source broadcasts to the same values."""
    meta, source = user.meta, view.args[0]
    if user.op != "call" or meta is None or REGISTRY[user.target].kind != "pointwise":
        return False
    if view.meta is None or view.meta.shape != meta.shape or source.meta is None \
            or source.meta.pytype is not None or source.meta.dtype != view.meta.dtype:
        return False
    if view in _nodes_in(user.kwargs):
        return False
    return any(isinstance(a, Node) and a is not view and a.meta is not None
               and a.meta.pytype is None and a.meta.shape == meta.shape for a in user.args)


def unbroadcast_cotangents(nodes: list[Node]) -> int:
    """Backward clean-up: a pointwise op reads the source of a ``broadcast_to`` (a reduction's
    cotangent spread back to its input's shape) when it broadcasts that source anyway; the view
    then is no wrapper call between two kernels and the planner can fuse across it. Returns how
    many uses were redirected (an unused view is dead code)."""
    redirected = 0
    for node in nodes:
        if node.op != "call" or node.target != "broadcast_to" \
                or not isinstance(node.args[0], Node):
            continue
        for user in list(node.users):
            if _broadcasts_anyway(user, node):
                user.replace_input(node, node.args[0])
                redirected += 1
    return redirected


__all__ = ["BACKWARD", "BackwardResult", "ForwardFacts", "StaleValue", "analyze", "backward",
           "backward_source", "unbroadcast_cotangents", "user_error"]


def _region_vjp(node: Node, facts: ForwardFacts, value_of: ValueOf, results: dict[int, Any],
                ct: dict[Node, Any], tag: Tagger, replay: Replay | None) -> None:
    """A nonstrict_trace call: its traced body is emitted again (recompute: the forward ran the
    function, or an opaque kernel, and kept no intermediates) and differentiated like any
    other nodes, from the cotangents of the results the program used."""
    if not results:
        return
    if replay is None:
        raise _not_differentiable(node, "a nonstrict_trace call outside a capture")  # noqa
    args, _ = facts.args[node]
    with tag(node):
        body, outs, inner_value_of = replay(node, _values(args, facts, value_of))
        wanted = [a for a in args if isinstance(a, Node) and a in facts.needs]
        seeds = [(out.node, results[k]) for k, out in enumerate(outs)
                 if k in results and hasattr(out, "node")]
        inner = backward(body, seeds, wanted, inner_value_of, tag, replay)
    for arg, g in zip(wanted, inner.grads):
        _accumulate(ct, arg, g, facts.needs)


def _loop_vjp(node: Node, facts: ForwardFacts, value_of: ValueOf, results: dict[int, Any],
              ct: dict[Node, Any], tag: Tagger, rule: RegionRule | None) -> None:
    """A loop or branch region: ``rule`` emits its backward region(s)."""
    if not results:
        return
    if rule is None:
        raise _not_differentiable(node, f"a {node.target} region inside a nonstrict_trace call")
    args, _ = facts.args[node]
    wants = tuple(isinstance(a, Node) and a in facts.needs for a in args)
    with tag(node):
        values = map_nodes(args, lambda n: n.args[0] if n.op == "call" and REGISTRY[
            n.target].literal and isinstance(n.args[0], (bool, int, float, np.generic)) else
            _value(n, facts, value_of))  # a loop's Python number state: its literal
        cotangents = rule(node, values, results, wants)
    for arg, g in zip(args, cotangents):
        _accumulate(ct, arg, g, facts.needs)


def _backward(node: Node) -> bool:
    return (node.origin or "").endswith(BACKWARD)


def _has_backward(region: Node) -> bool:
    """A region that is or holds part of the backward pass (a reverse loop, a forward loop
    that writes tapes)."""
    return any(_backward(n) or (n.op == "region" and _has_backward(n))
               for sub in region.info.subgraphs.values() for n in sub.nodes)


def _region_lines(node: Node) -> list[str]:
    from ..graph.printer import format_region
    role = "" if _backward(node) else "  (the forward loop; its backward lines write the tape)"
    return format_region(node, note=role)


def backward_source(graph: Any) -> str:
    """The backward part of a joint graph, one line per node, a region (a loop or branch of
    the backward) as graph_code prints it (``ac.show``'s backward_code)."""
    from ..graph.printer import format_call, format_index, format_value
    lines = []
    for node in graph.nodes:
        if node.op == "region" and node.target != "nonstrict_call" and (
                _backward(node) or _has_backward(node)):
            lines.extend(_region_lines(node))
            continue
        if node.op != "call" or not _backward(node):
            continue
        meta = f': "{node.meta.short()}"' if node.meta is not None else ""
        if node.target == "setitem":
            dst, index, value = node.args
            text = f"{format_value(dst)}[{format_index(index)}] = {format_value(value)}"
        else:
            text = f"{node.name}{meta} = {format_call(node)}"
        lines.append(f"{text}  # {node.origin}")
    if not lines:
        return ""
    return "# the backward pass of the joint graph (ac.grad): nodes in graph_code order\n" \
        + "\n".join(lines) + "\n"
