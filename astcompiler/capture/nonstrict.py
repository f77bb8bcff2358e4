"""``nonstrict_trace`` and ``allow_in_graph`` calls: one opaque node in the graph.

A ``nonstrict_trace`` function is not rewritten. Its arguments are flattened with pytrees: arrays
become inputs of a ``nonstrict_call`` region, primitives and registered constants are part of the
call's structure (specialized). Its body runs once on proxies (operator overloading and NumPy's
protocols), which records the region's subgraph; ``ac.graph_break()`` and other Python inside it
simply run. The ``eager`` backend calls the original function at run time, ``aot_eager`` runs the
traced subgraph, ``numba`` inlines it into the surrounding kernels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..exc import GraphBreak, Unsupported
from ..graph import NonstrictCallInfo
from ..pytree import DEFAULT as PYTREES, TreeSpec
from ..source.origins import current_origin
from .proxy import ArrayProxy
from .sizes.symbolic import SymInt
from .tracer import meta_of

if TYPE_CHECKING:  # pragma: no cover
    from .runtime.api import Runtime

_PRIMITIVES = (bool, int, float, complex, str, type(None))


class CaptureCall:
    """A user function the graph calls (``allow_in_graph``, ``nonstrict_trace`` on the eager
    backend). Its capture-time run (on this call's own values) is the first call's run: the
    first time the graph calls it, it returns that result, so the function runs once per call
    as in plain Python. Later calls call the function."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.__qualname__ = getattr(fn, "__qualname__", type(fn).__qualname__)
        self.__name__ = getattr(fn, "__name__", self.__qualname__)
        self._primed: list[Any] = []

    def prime(self, result: Any) -> None:
        self._primed = [_copy_arrays(result)]

    def disarm(self) -> None:
        """After the entry's first run (a backend that ran a traced copy never used it)."""
        self._primed = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._primed:
            return self._primed.pop()
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return repr(self.fn)


def _copy_arrays(value: Any) -> Any:
    """``value`` with its arrays copied (later capture steps may write into the examples)."""
    leaves, spec = PYTREES.tree_flatten(value)
    return PYTREES.tree_unflatten([leaf.copy() if isinstance(leaf, (np.ndarray, np.generic))
                                   else leaf for leaf in leaves], spec)


def _where() -> str:
    origin = current_origin()
    return f" (at {origin})" if origin else ""


def _contains_proxy(value: Any) -> bool:
    if isinstance(value, ArrayProxy):
        return True
    if isinstance(value, (tuple, list)):
        return any(_contains_proxy(v) for v in value)
    if isinstance(value, dict):
        return any(_contains_proxy(v) for v in value.values())
    return False


def _check_spec(spec: TreeSpec) -> None:
    if spec.is_leaf:
        return
    if _contains_proxy(spec.context):
        raise Unsupported("Invalid use of pytree_flatten with nonstrict_trace-ed function: the "
                          f"flatten function of {spec.kind.__qualname__} put a traced array in "
                          f"its context{_where()}; return arrays as children, not context")
    for child in spec.children:
        _check_spec(child)


def _module_arrays(proxy: Any, prefix: tuple = ()) -> list[tuple[tuple, ArrayProxy]]:
    """Parameters and buffers of a module (recursively), lifted through its proxy: graph inputs."""
    module = proxy._ac_value
    found = []
    for registry in ("_parameters", "_buffers"):
        for name, value in getattr(module, registry).items():
            if value is not None:
                found.append(((*prefix, registry, name), getattr(proxy, name)))
    for name in module._modules:
        found += _module_arrays(getattr(proxy, name), (*prefix, "_modules", name))
    return found


def _is_module(value: Any) -> bool:
    from ..nn.modules.module import Module
    return isinstance(value, Module)


def flatten_inputs(runtime: "Runtime", args: tuple, kwargs: dict) -> tuple[list[Any], TreeSpec]:
    from .lifting import ObjectProxy
    plain = _unwrap((args, kwargs))
    leaves, spec = PYTREES.tree_flatten(plain)
    _check_spec(spec)
    for leaf in leaves:
        if isinstance(leaf, (ArrayProxy, SymInt, *_PRIMITIVES)) or PYTREES.is_constant(leaf):
            continue
        if isinstance(leaf, ObjectProxy) and _is_module(leaf._ac_value):
            continue  # its parameters and buffers become inputs
        if isinstance(leaf, ObjectProxy):
            leaf = leaf._ac_value
        raise Unsupported(f"Invalid input type for nonstrict_trace-ed function: "
                          f"{type(leaf).__qualname__}{_where()}. Pass arrays, numbers, strings, "
                          "lists/tuples/dicts of them, or classes registered with "
                          "ac.pytree.register_pytree_node / register_dataclass / register_constant")
    return leaves, spec


def _unwrap(value: Any) -> Any:
    """Containers lifted from outside (GuardedList/Dict) as plain ones, for flattening."""
    from .lifting import GuardedDict, GuardedList, ObjectProxy
    if isinstance(value, GuardedList):
        return [_unwrap(v) for v in value]
    if isinstance(value, GuardedDict):
        return {k: _unwrap(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_unwrap(v) for v in value)
    if type(value) is list:
        return [_unwrap(v) for v in value]
    if type(value) is dict:
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, ObjectProxy) and PYTREES.node_def(value._ac_value) is not None:
        return value._ac_value
    return value


class _SwappedArrays:
    """Temporarily put traced stand-ins in a module's parameter and buffer slots."""

    def __init__(self, module: Any, replacements: list[tuple[tuple, Any]]) -> None:
        self.module = module
        self.replacements = replacements
        self.saved: list[tuple[dict, str, Any]] = []

    def __enter__(self) -> None:
        for path, value in self.replacements:
            owner = self.module
            for registry, name in zip(path[:-2:2], path[1:-2:2]):
                owner = getattr(owner, registry)[name]
            slots = getattr(owner, path[-2])
            self.saved.append((slots, path[-1], slots[path[-1]]))
            slots[path[-1]] = value

    def __exit__(self, *exc: Any) -> None:
        for slots, name, value in reversed(self.saved):
            slots[name] = value


def trace_nonstrict(runtime: "Runtime", wrapper: Any, fn: Callable, args: tuple,
                    kwargs: dict) -> Any:
    """Record a call of a ``nonstrict_trace`` function as one region node."""
    from ..rewrite import is_generated
    if is_generated(fn) or is_generated(wrapper):
        raise Unsupported(f"nonstrict_trace of {getattr(fn, '__qualname__', fn)} requires the "
                          "function to be defined outside the compiled region (at module level "
                          f"or before calling the compiled function){_where()}")
    from .lifting import ObjectProxy
    tracer = runtime.tracer
    leaves, in_spec = flatten_inputs(runtime, args, kwargs)
    array_positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, (ArrayProxy, SymInt))]
    outer = [leaves[i] if isinstance(leaves[i], ArrayProxy) else tracer.sym_value(leaves[i].expr)
             for i in array_positions]
    modules = [(i, leaf, _module_arrays(leaf)) for i, leaf in enumerate(leaves)
               if isinstance(leaf, ObjectProxy) and _is_module(leaf._ac_value)]
    module_inputs = [proxy for _, _, arrays in modules for _, proxy in arrays]
    scope = tracer.push_scope()
    swaps = []
    try:
        inner_leaves = list(leaves)
        for position, value in zip(array_positions, outer):
            node = scope.graph.placeholder("nonstrict:input", value.node.meta, value.node.name)
            inner_leaves[position] = ArrayProxy(tracer, node, value.example)
        for position, proxy, arrays in modules:  # parameters and buffers: inputs of the call
            stand_ins = []
            for path, value in arrays:
                node = scope.graph.placeholder("nonstrict:parameter", value.node.meta, value.node.name)
                stand_ins.append((path, ArrayProxy(tracer, node, value.example)))
            inner_leaves[position] = proxy._ac_value
            swaps.append(_SwappedArrays(proxy._ac_value, stand_ins))
        for swap in swaps:
            swap.__enter__()
        call_args, call_kwargs = PYTREES.tree_unflatten(inner_leaves, in_spec)
        result = fn(*call_args, **call_kwargs)
        out_leaves, out_spec = PYTREES.tree_flatten(result)
        _check_spec(out_spec)
        for leaf in out_leaves:
            if not isinstance(leaf, (ArrayProxy, np.ndarray, np.generic, *_PRIMITIVES)):
                raise Unsupported(f"Unsupported output type for nonstrict_trace-ed function: "
                                  f"{type(leaf).__qualname__}{_where()}")
        array_out = [i for i, leaf in enumerate(out_leaves) if isinstance(leaf, (ArrayProxy, np.ndarray))]
        out_nodes = []
        for i in array_out:
            leaf = out_leaves[i]
            if not isinstance(leaf, ArrayProxy):
                leaf = tracer.constant_array(leaf)
            out_nodes.append(tracer.localize(leaf.node))
        scope.graph.output(tuple(out_nodes))
    finally:
        for swap in reversed(swaps):
            swap.__exit__()
        tracer.pop_scope()
    captured = list(scope.captured)
    for position, proxy, _ in modules:  # the eager backend calls the function with the module
        leaves[position] = proxy._ac_value
    region = tracer.graph.region(
        "nonstrict_call", (*[tracer.localize(v.node) for v in outer],
                           *[tracer.localize(v.node) for v in module_inputs], *captured),
        NonstrictCallInfo(
            subgraphs={"body": scope.graph}, n_captured=len(captured),
            names=(getattr(fn, "__qualname__", "fn"),), fn=primed_call(fn, out_leaves, out_spec),
            in_spec=in_spec, leaves=leaves, array_positions=array_positions, out_spec=out_spec,
            out_leaves=out_leaves, array_out=array_out, n_inputs=len(outer),
            n_module_inputs=len(module_inputs)),
        current_origin())
    results = list(out_leaves)
    for index, position in enumerate(array_out):
        leaf = out_leaves[position]
        meta = _output_meta(leaf)
        example = leaf.example if isinstance(leaf, ArrayProxy) else leaf
        node = tracer.graph.call("getitem", (region, index), {}, meta, region.origin)
        results[position] = ArrayProxy(tracer, node, example)
    return PYTREES.tree_unflatten(results, out_spec)


def _output_meta(leaf: Any) -> Any:
    """The traced meta of an output (symbolic sizes stay symbolic), else the example's."""
    if isinstance(leaf, ArrayProxy) and leaf.node.meta is not None:
        return leaf.node.meta
    return meta_of(leaf.example if isinstance(leaf, ArrayProxy) else leaf)


def primed_call(fn: Callable, out_leaves: list, out_spec: TreeSpec) -> CaptureCall:
    """The eager backend calls the original function: the traced run (its Python ran once, on
    this call's values) stands for the first call."""
    call = CaptureCall(fn)
    call.prime(PYTREES.tree_unflatten([leaf.example if isinstance(leaf, ArrayProxy) else leaf
                                       for leaf in out_leaves], out_spec))
    return call


def call_allowed(runtime: "Runtime", fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``allow_in_graph``: one node that calls ``fn`` as is (arrays and primitives only)."""
    for value in (*args, *kwargs.values()):
        if not isinstance(value, (ArrayProxy, *_PRIMITIVES)):
            raise Unsupported(f"allow_in_graph function {getattr(fn, '__qualname__', fn)} takes "
                              f"arrays and primitives, got {type(value).__qualname__}{_where()}")
    if not any(isinstance(v, ArrayProxy) for v in (*args, *kwargs.values())):
        raise GraphBreak(f"allow_in_graph function {getattr(fn, '__qualname__', fn)} called "
                         "without arrays (it would run once, at capture): it runs in Python")
    call = CaptureCall(fn)
    results: list[Any] = []

    def capture_run(*values: Any, **named: Any) -> Any:  # the capture's run is this call's run
        results.append(fn(*values, **named))
        return results[-1]

    call.fn, original = capture_run, fn
    result = runtime.tracer.call_op("call_function", (call, *args), kwargs)
    call.fn = original
    if results:
        call.prime(results[-1])
    return result
