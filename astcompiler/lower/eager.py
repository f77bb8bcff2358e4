"""The ``eager`` backend: run the graph node by node with each op's NumPy reference.

Regions are interpreted: a loop region runs its body subgraph once per iteration, a branch
region runs the subgraph its condition selects. This is the reference semantics every other
backend must reproduce.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..graph import Graph, Node, NonstrictCallInfo, map_nodes
from ..ops import REGISTRY
from ..ops.python_scalars import PYTHON_OPS, is_python_number
from .base import CompiledGraph
from .places import at_place


def _python(node: Node, value: Any) -> Any:
    """Values the graph treats as Python scalars (loop indices, counters) stay Python scalars,
    so NumPy promotes them as weak operands exactly as in the eager program."""
    meta = node.meta
    return meta.pytype(value) if meta is not None and meta.pytype is not None else value


def _evaluate(node: Node, args: Any, kwargs: dict) -> Any:
    """One op. A node typed as a Python number whose operands are Python numbers computes what
    Python computes (arbitrary-precision ints, ZeroDivisionError, ``int / int`` a float)."""
    meta = node.meta
    if meta is not None and meta.pytype is not None and not kwargs \
            and node.target in PYTHON_OPS and all(is_python_number(a) for a in args):
        return PYTHON_OPS[node.target](*args)
    op = REGISTRY[node.target]
    impl = op.impl
    if node.operator and op.python is not None and not kwargs and _scalars(args):
        impl = op.python  # NumPy's scalar math, as the user wrote it
    if node.place is not None:  # NumPy's warnings come from the user's line
        return _python(node, at_place(node.place)(impl, *args, **kwargs))
    return _python(node, impl(*args, **kwargs))


def _scalars(args: tuple) -> bool:
    """NumPy scalars and Python numbers only (some NumPy scalar): an operator on them runs
    NumPy's scalar math, whose warnings name it ("divide by zero encountered in scalar divide")."""
    return any(isinstance(a, np.generic) for a in args) \
        and all(isinstance(a, np.generic) or is_python_number(a) for a in args)


def _store_before_raising(node: Node, args: Any, kwargs: dict, lookup: Callable) -> None:
    """NumPy's ``out=`` (and ``a /= b``) writes the ufunc's result, then raises its floating-point
    error (``np.errstate(all="raise")``, a raising ``call`` handler, warnings as errors). Capture
    records it as the op followed by ``copy_(out, result)``: when the op raised, run it again into
    ``out`` with the errors ignored, so the caller raises with ``out`` written. A shape error
    raises NumPy's own message for ``out=`` (it names the output's shape too)."""
    stores = [user for user in node.users
              if user.op == "call" and user.target == "copy_" and user.args[1:2] == (node,)]
    if not stores:
        return
    impl = REGISTRY[node.target].impl
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if len(stores) == 1 and isinstance(impl, np.ufunc) and not kwargs:
                impl(*args, out=lookup(stores[0].args[0]))
                return
            value = _evaluate(node, args, kwargs)
            for store in stores:
                REGISTRY["copy_"].impl(lookup(store.args[0]), value)
    except ValueError as error:  # NumPy's broadcast error of ``out=``: the one plain raises
        raise error from None
    except Exception:  # noqa: BLE001 - the op's own error is the one to raise
        return


def interpret(graph: Graph, inputs: tuple, call_original: bool = True) -> tuple:
    """Evaluate ``graph`` on concrete inputs. ``call_original``: nonstrict_trace regions call the
    user's function (the ``eager`` backend) instead of running their traced subgraph
    (``aot_eager``)."""
    env: dict[Node, Any] = {}
    for node, value in zip(graph.placeholders, inputs):
        env[node] = _python(node, value)
    lookup = env.__getitem__
    for node in graph.nodes:
        if node.op == "call":
            args = map_nodes(node.args, lookup)
            kwargs = map_nodes(node.kwargs, lookup)
            try:
                env[node] = _evaluate(node, args, kwargs)
            except Exception as error:
                _store_before_raising(node, args, kwargs, lookup)
                # NumPy's own error on the call's values, after the plain call's warnings and
                # writes: raised as it is (running the original again would repeat them)
                error.__ac_exact__ = True  # type: ignore[attr-defined]
                raise
        elif node.op == "region":
            env[node] = run_region(node, [map_nodes(a, lookup) for a in node.args], call_original)
        elif node.op == "output":
            return tuple(map_nodes(node.args[0], lookup))
    raise AssertionError("graph has no output node")


def run_nonstrict(node: Node, args: list[Any], call_original: bool) -> tuple:
    """A nonstrict_trace call: the original function, or its traced subgraph."""
    from ..pytree import DEFAULT as pytrees
    info = node.info
    assert isinstance(info, NonstrictCallInfo)
    if not call_original:
        return interpret(info.subgraphs["body"], tuple(args), call_original)
    leaves = list(info.leaves)
    for position, value in zip(info.array_positions, args[:info.n_inputs]):
        leaves[position] = value
    call_args, call_kwargs = pytrees.tree_unflatten(leaves, info.in_spec)
    result = info.fn(*call_args, **call_kwargs)
    out_leaves, out_spec = pytrees.tree_flatten(result)
    arrays = info.array_out  # traced arrays and NumPy scalars
    name = getattr(info.fn, "__qualname__", "function")
    if out_spec != info.out_spec or not all(
            isinstance(out_leaves[i], (np.ndarray, np.generic)) for i in arrays):
        raise AssertionError(
            f"{name} (nonstrict_trace) must return the same output structure on every call: "
            f"traced {info.out_spec}, now {out_spec}")
    for i, (now, traced) in enumerate(zip(out_leaves, info.out_leaves)):
        if i not in arrays and not _same_constant(now, traced):  # fixed in the graph
            raise AssertionError(
                f"{name} (nonstrict_trace) returned {now!r} where its traced run returned "
                f"{traced!r}: the Python values it returns are fixed at capture; return arrays, "
                "or compute the value outside the function")
    return tuple(out_leaves[i] for i in arrays)


def _same_constant(now: Any, traced: Any) -> bool:
    if type(now) is not type(traced):
        return False
    if isinstance(now, (np.ndarray, np.generic)):
        return bool(np.array_equal(now, traced, equal_nan=now.dtype.kind in "fc"))
    return now == traced or (now != now and traced != traced)  # NaN is NaN


def run_region(node: Node, args: list[Any], call_original: bool = True) -> tuple:
    """Run a structured region on concrete values; returns the final carried state."""
    info = node.info
    if node.target == "nonstrict_call":
        return run_nonstrict(node, args, call_original)
    n_carried = info.n_carried
    controls, state, captured = info.split(tuple(args))
    subgraphs = info.subgraphs
    if node.target == "for_range":
        start, stop, step, enter = controls
        if not enter:
            return state
        body = subgraphs["body"]
        for index in range(int(start), int(stop), int(step)):
            results = interpret(body, (index, *state, *captured), call_original)
            state, go = results[:n_carried], results[n_carried]
            if not go:
                break
        return tuple(state)
    if node.target == "while_loop":
        cond, body = subgraphs["cond"], subgraphs["body"]
        while interpret(cond, (*state, *captured), call_original)[-1]:
            state = interpret(body, (*state, *captured), call_original)
        return tuple(state)
    if node.target == "cond":
        branch = subgraphs["true"] if controls[0] else subgraphs["false"]
        return interpret(branch, (*state, *captured), call_original)
    raise AssertionError(f"unknown region kind {node.target!r}")


def eager_backend(graph: Graph, example_inputs: list) -> CompiledGraph:
    """Op by op with NumPy; nonstrict_trace calls run the user's original function."""
    def run(*inputs: Any) -> tuple:
        return interpret(graph, inputs, True)

    code = "# eager backend: the graph runs op by op on NumPy\n" + graph.print_readable(
        "eager_forward", print_output=False)
    return CompiledGraph(run, output_code=code)


def aot_eager_backend(graph: Graph, example_inputs: list) -> CompiledGraph:
    """As eager, but nonstrict_trace calls run their traced subgraphs."""
    def run(*inputs: Any) -> tuple:
        return interpret(graph, inputs, False)

    code = "# aot_eager backend: the graph (nonstrict_trace calls expanded) op by op on NumPy\n" \
        + graph.print_readable("aot_eager_forward", print_output=False)
    return CompiledGraph(run, output_code=code)
