"""``ac.grad`` / ``ac.value_and_grad`` / ``ac.vjp`` at capture time.

A ``GradSpec`` is what ``ac.grad(fn)`` wraps. Called inside a capture (``ac.compile`` of the
gradient function, or of any function that calls it), ``capture`` runs ``fn`` on the traced
arguments (its nodes join the graph under construction), then emits the backward pass into the
same graph (``reverse.backward``): one joint graph, guarded, lowered and fused like any other.
Called outside a capture it runs through ``eager_runner`` (set by ``astcompiler.gradients``):
the same joint graph, run op by op by the eager backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import contextlib
from typing import Any, Callable, Iterator

import numpy as np

from ..capture.lifting import GuardedDict, GuardedList, ObjectProxy
from ..capture.proxy import ArrayProxy
from ..capture.runtime.calls import dispatch_call
from ..exc import Unsupported
from ..graph import Node
from ..pytree import DEFAULT as pytrees
from ..nn.hooks import observe_backward_calls
from .module_hooks import Recording, emit_hook_calls, observed_nodes, refuse_hooked_call
from .regions import emit_again, region_vjp
from .reverse import BACKWARD, backward, unbroadcast_cotangents, user_error

MODES = ("grad", "value_and_grad", "vjp")


@dataclass(frozen=True)
class Wrt:
    """The differentiated leaves of one argument: ``leaves`` (traced arrays, None for a leaf
    that gets no gradient), their tree ``spec``, and for a module its parameter names."""

    leaves: list
    spec: Any
    names: tuple[str, ...] | None = None  # an ``ac.nn.Module``: named_parameters() order


@dataclass(eq=False)
class GradSpec:
    """``fn`` differentiated with respect to the arguments ``argnums``."""

    fn: Callable[..., Any]
    argnums: int | tuple[int, ...] = 0
    has_aux: bool = False
    mode: str = "grad"
    eager_runner: Callable[["GradSpec", tuple, dict], Any] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if not callable(self.fn):
            raise TypeError(f"Expected a callable value, got {self.fn!r}")
        nums = self.argnums if isinstance(self.argnums, tuple) else (self.argnums,)
        if not nums or not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
            raise TypeError(f"argnums must be an int or a non-empty tuple of ints, got "
                            f"{self.argnums!r}")

    @property
    def nums(self) -> tuple[int, ...]:
        return self.argnums if isinstance(self.argnums, tuple) else (self.argnums,)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.eager_runner is None:
            raise RuntimeError("astcompiler.gradients is not imported")
        return self.eager_runner(self, args, kwargs)

    # ----- capture ------------------------------------------------------------------------------
    def __ac_capture__(self, runtime: Any, args: tuple, kwargs: dict) -> Any:
        """Capture ``fn`` on ``args`` and its backward pass; returns what the wrapper returns."""
        if self.mode == "vjp":
            args, cotangent = args[:-1], args[-1]
        else:
            cotangent = None
        for i in self.nums:
            if not -len(args) <= i < len(args):
                raise user_error(TypeError(
                    f"differentiating with respect to argnums={self.argnums} requires at least "
                    f"{i + 1} positional arguments, got {len(args)}"))
        tracer = runtime.tracer
        graph = tracer.graph
        args, wrts = _distinct_arguments(runtime, args, self.nums)
        before = {id(n) for n in graph.nodes}
        saved, tracer.proxy_log = getattr(tracer, "proxy_log", None), {}
        saved_calls, tracer.module_calls = getattr(tracer, "module_calls", None), Recording(graph)
        observer = observe_backward_calls(refuse_hooked_call)  # a hooked call not inlined
        try:
            result = dispatch_call(runtime, self.fn, args, kwargs)
            log = tracer.proxy_log
            recording = tracer.module_calls
        finally:
            observe_backward_calls(observer)
            tracer.proxy_log = saved
            tracer.module_calls = saved_calls
        if saved is not None:
            saved.update(log)
        value, aux = _split_aux(result, self.has_aux)
        out_leaves, out_spec = pytrees.tree_flatten(value)
        if self.mode == "vjp":
            seeds = pytrees.tree_leaves(cotangent)
        else:
            _check_scalar(value)
            with _tagging(graph, None):
                seeds = [np.ones_like(value)] if isinstance(value, ArrayProxy) else [None]
        nodes = [n for n in graph.nodes if id(n) not in before and n.op != "placeholder"]
        wrt_proxies = [leaf for w in wrts for leaf in w.leaves if leaf is not None]
        known = {p.node: p for p in wrt_proxies}
        known.update(log)
        for leaf in out_leaves:
            if isinstance(leaf, ArrayProxy):
                known.setdefault(leaf.node, leaf)
        value_of = _value_lookup(tracer, known)
        outputs = [(leaf.node, seed) for leaf, seed in zip(out_leaves, seeds)
                   if isinstance(leaf, ArrayProxy) and seed is not None]
        tag = lambda node: _tagging(tracer.graph, node)  # noqa: E731  (a region's, inside one)
        replay = lambda region, values: _replay(tracer, region, values, value_of)  # noqa: E731
        with _tagging(graph, None):  # the seeds and the finishing casts: the grad call's line
            done = backward(nodes, outputs, [p.node for p in wrt_proxies], value_of, tag, replay,
                            observe=observed_nodes(recording),
                            region_rule=lambda *a: region_vjp(runtime, *a, tag))
            emit_hook_calls(tracer, recording, done, value_of, tag, replay)
        unbroadcast_cotangents([n for n in graph.nodes if id(n) not in before])
        grads = done.grads
        grads_by_node = dict(zip([id(p) for p in wrt_proxies], grads))
        with _tagging(graph, None):
            trees = tuple(_finish(w, grads_by_node) for w in wrts)
        grad_tree = trees[0] if isinstance(self.argnums, int) else trees
        if self.mode == "vjp":
            return grad_tree if isinstance(self.argnums, tuple) else (grad_tree,)
        if self.mode == "value_and_grad":
            return ((value, aux) if self.has_aux else value), grad_tree
        return (grad_tree, aux) if self.has_aux else grad_tree


@contextlib.contextmanager
def _tagging(graph: Any, forward: Node | None) -> Iterator[None]:
    """Nodes emitted inside: origin ``<forward node's origin> (backward)``."""
    last = graph.nodes[-1] if graph.nodes else None
    yield
    for node in reversed(graph.nodes):
        if node is last:
            break
        if node.op == "call" and not (node.origin or "").endswith(BACKWARD):
            where = (forward.origin if forward is not None else node.origin) or "?"
            node.origin = where if where.endswith(BACKWARD) else f"{where}{BACKWARD}"


def _replay(tracer: Any, region: Node, values: tuple, outer: Callable[[Node], Any]
            ) -> tuple[list[Node], list[Any], Callable[[Node], Any]]:
    """A nonstrict_trace region's traced body emitted again into the graph under capture, on
    the region's argument values: (new nodes, output values, value lookup)."""
    body = region.info.subgraphs["body"]

    def refuse(node: Node) -> Exception:
        return user_error(Unsupported(
            f"cannot differentiate a {node.target} region inside the nonstrict_trace call "
            f"{region.name} ({region.origin or '?'})"))
    nodes, outs, env = emit_again(tracer, body, dict(zip(body.placeholders, values)), refuse)
    known = {p.node: p for p in env.values() if isinstance(p, ArrayProxy)}

    def value_of(node: Node) -> Any:
        return known[node] if node in known else outer(node)
    return nodes, outs, value_of


def _split_aux(result: Any, has_aux: bool) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not isinstance(result, tuple) or len(result) != 2:
        raise user_error(TypeError("has_aux=True requires the function to return a pair "
                                   f"(output, aux), got {type(result).__name__}"))
    return result


def _check_scalar(value: Any) -> None:
    shape = getattr(value, "shape", None)
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        return
    if shape is None or tuple(shape) != ():
        what = tuple(shape) if shape is not None else type(value).__name__
        raise user_error(TypeError("Gradient only defined for scalar-output functions. Output "
                                   f"had shape: {what}."))
    dtype = np.dtype(value.dtype)
    if dtype.kind not in "fc":
        raise user_error(TypeError("grad requires real- or complex-valued outputs (output dtype "
                                   f"that is a sub-dtype of np.inexact), but got {dtype.name}."))


def _check_leaf(leaf: Any) -> Any:
    if isinstance(leaf, ArrayProxy):
        dtype = np.dtype(leaf.dtype)
        if dtype.kind not in "fc":
            raise user_error(TypeError(
                "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype "
                f"of np.inexact), but got {dtype.name}. If you want to use integer-valued "
                "inputs, convert them to floats first."))
        return leaf
    if isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
        raise user_error(TypeError(f"grad of a Python {type(leaf).__name__} argument: astcompiler "
                        "specializes Python numbers; pass np.float64(...) or an array"))
    raise user_error(TypeError(f"grad with respect to a {type(leaf).__name__}: only float arrays "
                               "(and pytrees of them, and ac.nn.Module parameters) are "
                               "differentiable"))


def _wrt_of(runtime: Any, arg: Any) -> Wrt:
    """The differentiated leaves of one argument (parameters for a module)."""
    named = _module_parameters(runtime, arg)
    if named is not None:
        names = tuple(name for name, _ in named)
        return Wrt([_check_leaf(p) for _, p in named], None, names)
    leaves, spec = pytrees.tree_flatten(_plain(arg))
    return Wrt([_check_leaf(leaf) for leaf in leaves], spec)


def _plain(value: Any) -> Any:
    """Containers lifted from outside (``GuardedList``/``GuardedDict``) as plain ones."""
    if isinstance(value, GuardedList) or type(value) is list:
        return [_plain(v) for v in value]
    if isinstance(value, GuardedDict) or type(value) is dict:
        return {k: _plain(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_plain(v) for v in value)
    return value




def _distinct_arguments(runtime: Any, args: tuple, nums: tuple[int, ...]) -> tuple[tuple, list]:
    """The differentiated leaves of each argument, one traced value per leaf: an array passed
    twice (``grad(f, (0, 1))(x, x)``) gets a copy for its second place, so each argument has a
    gradient of its own (as in JAX)."""
    args = list(args)
    seen: set[Node] = set()
    wrts = []
    for i in nums:
        wrt = _wrt_of(runtime, args[i])
        if wrt.names is None and any(p.node in seen for p in wrt.leaves):
            leaves = [p.copy() if p.node in seen else p for p in wrt.leaves]
            args[i] = pytrees.tree_unflatten(leaves, wrt.spec)
            wrt = Wrt(leaves, wrt.spec)
        seen.update(p.node for p in wrt.leaves)
        wrts.append(wrt)
    return tuple(args), wrts


def _module_parameters(runtime: Any, arg: Any) -> list[tuple[str, Any]] | None:
    """``(name, traced parameter)`` of an ``ac.nn.Module`` argument (``named_parameters()``
    order; each read through the module as user code reads it, so it is guarded the same way),
    else None."""
    if not isinstance(arg, ObjectProxy):
        return None
    module = arg._ac_value
    named = getattr(module, "named_parameters", None)
    if named is None or not callable(named):
        return None
    found = []
    for name, _ in named():
        value = arg
        for part in name.split("."):
            value = getattr(value, part)
        found.append((name, value))
    return found


def _finish(wrt: Wrt, grads: dict[int, Any]) -> Any:
    """Gradients with the primal's dtype and shape, fresh arrays, in the argument's structure."""
    seen: set[int] = set()
    done = []
    for leaf in wrt.leaves:
        g = grads.get(id(leaf))
        if g is None:
            g = np.zeros_like(leaf)
        else:
            if np.dtype(g.dtype) != np.dtype(leaf.dtype):
                g = g.astype(leaf.dtype)
            meta = g.node.meta
            if meta is None or meta.shape != leaf.node.meta.shape or meta.scalar:
                g = np.broadcast_to(g, leaf.shape)
            if _aliases(g) or id(g.node) in seen:
                g = g.copy()
        seen.add(id(g.node))
        done.append(g)
    if wrt.names is not None:
        return dict(zip(wrt.names, done))
    return pytrees.tree_unflatten(done, wrt.spec)


def _aliases(value: Any) -> bool:
    """A view or an input: the gradient must be an array of its own."""
    from ..ops import REGISTRY
    node: Node = value.node
    return node.op != "call" or REGISTRY[node.target].kind == "view"


def _value_lookup(tracer: Any, known: dict[Node, Any]) -> Callable[[Node], Any]:
    inputs = {node: (source, value) for node, source, value in tracer.inputs}

    def value_of(node: Node) -> Any:
        proxy = known.get(node)
        if proxy is not None:
            return proxy
        if node in inputs:
            existing = tracer.existing_input(inputs[node][0])
            if existing is not None:
                return existing
        raise user_error(Unsupported(
            f"the gradient needs {node.name} ({node.origin or '?'}), a value computed outside "
            "the differentiated function; pass it as an argument"))
    return value_of


__all__ = ["GradSpec", "MODES", "Wrt"]
