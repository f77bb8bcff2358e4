"""Module backward hooks under ``ac.grad`` (``register_full_backward_hook`` and friends).

While a gradient is captured, a module with backward hooks records its call boundary
(``nn.hooks.backward_call_start`` / ``backward_call_end``, called by ``Module._call_impl``): the
traced inputs and outputs of the call and where its nodes lie in the graph. After the backward
pass, ``emit_hook_calls`` adds one ``call_function`` node at the end of the joint graph: it
hands each module's hooks the cotangents of its outputs (``grad_output``) and, for full backward
hooks, the cotangents of its inputs through the module alone (``grad_input``, a second reverse
pass over the module's nodes), in the order a backward pass reaches them: every pre-hook when
the module's outputs are done, every hook when its inputs are, inner modules in reverse call
order. As in torch.compile, all the hooks fire together after the whole backward pass; a hook
that returns a new gradient is an error (the gradients are already computed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..capture.lifting import ObjectProxy
from ..capture.proxy import ArrayProxy
from ..capture.sources import Source
from ..capture.state import HANDLERS
from ..exc import Unsupported
from ..graph import Node
from ..nn.hooks import backward_call_end, backward_call_start
from .reverse import BackwardResult, backward, user_error


@dataclass(eq=False)
class Boundary:
    """One call of a hooked module inside a differentiated function."""

    module: Any
    inputs: tuple
    start: int  # graph position of the call's first node
    order: int  # event number of the call's start
    pre_hooks: tuple
    hooks: tuple
    outputs: tuple = ()
    finished: bool = False  # the call returned (its outputs are recorded)
    end: int = 0
    end_order: int = 0


@dataclass
class Recording:
    """The hooked module calls of one gradient capture (``tracer.module_calls``)."""

    graph: Any = None  # the joint graph under capture
    calls: list[Boundary] = field(default_factory=list)
    events: int = 0

    def tick(self) -> int:
        self.events += 1
        return self.events


def _start(runtime: Any, module: Any, args: Any) -> Boundary | None:
    tracer = runtime.tracer
    recording = getattr(tracer, "module_calls", None)
    if recording is None or not isinstance(module, ObjectProxy):
        return None
    real = module._ac_value
    if tracer.graph is not recording.graph:
        refuse_hooked_call(real, args)
    from ..nn.modules import module as nn_module
    tracer.guards.add("id", module._ac_source, real)  # the hooks get this very module
    tracer.namespace_objects["___nn_module"] = nn_module
    tracer.guards.add("equals", Source("nn.modules.hooks_version()",
                                       "___nn_module._hooks_version"), nn_module._hooks_version)
    boundary = Boundary(
        real, tuple(args), len(tracer.graph.nodes), recording.tick(),
        tuple(nn_module._global_backward_pre_hooks.values())
        + tuple(real._backward_pre_hooks.values()),
        tuple(nn_module._global_backward_hooks.values()) + tuple(real._backward_hooks.values()))
    recording.calls.append(boundary)
    return boundary


def _end(runtime: Any, token: Any, result: Any) -> None:
    if not isinstance(token, Boundary):
        return None
    recording = runtime.tracer.module_calls
    token.outputs = tuple(result) if isinstance(result, tuple) else (result,)
    token.finished = True
    token.end = len(runtime.tracer.graph.nodes)
    token.end_order = recording.tick()
    return None


def refuse_hooked_call(module: Any, args: tuple) -> None:
    """A hooked module called where its call boundary cannot be recorded (a ``nonstrict_trace``
    body, a loop or branch on run-time values): a clear error, not hooks that never fire."""
    raise user_error(Unsupported(
        f"a {type(module).__name__} with backward hooks is called inside a nonstrict_trace "
        "function (or a loop or branch on run-time values) of a differentiated function: its "
        "hooks cannot be given its gradients there",
        hint="register the hooks on a module the differentiated function calls directly, or "
             "remove them (see docs/gradients.md, 'Module backward hooks')"))


HANDLERS[backward_call_start] = _start
HANDLERS[backward_call_end] = _end


def observed_nodes(recording: Recording) -> frozenset:
    """The nodes whose total cotangents the hooks need: every hooked call's outputs."""
    return frozenset(o.node for b in _finished(recording) for o in b.outputs
                     if isinstance(o, ArrayProxy))


def _finished(recording: Recording | None) -> list[Boundary]:
    return [] if recording is None else [b for b in recording.calls if b.finished
                                         and (b.pre_hooks or b.hooks)]


def emit_hook_calls(tracer: Any, recording: Recording | None, result: BackwardResult,
                    value_of: Callable[[Node], Any], tag: Any, replay: Any) -> None:
    """One ``call_function`` node at the end of the joint graph that runs the hooks."""
    events: list[tuple[int, str, Boundary, tuple, tuple | None]] = []
    for b in _finished(recording):
        grad_output = tuple(result.observed.get(o.node) if isinstance(o, ArrayProxy) else None
                            for o in b.outputs)
        if all(g is None for g in grad_output):
            continue  # no gradient reaches the module: torch runs none of its hooks either
        grad_input = _grad_input(tracer, b, grad_output, result, value_of, tag, replay) \
            if b.hooks else None
        if b.pre_hooks:
            events.append((b.end_order, "pre", b, grad_output, None))
        if b.hooks:
            events.append((b.order, "post", b, grad_output, grad_input))
    if not events:
        return
    events.sort(key=lambda e: -e[0])
    arrays: list[Any] = []
    layout = []
    for _, kind, b, g_out, g_in in events:
        layout.append((kind, b.module, b.pre_hooks if kind == "pre" else b.hooks,
                       _slots(g_out, arrays), None if g_in is None else _slots(g_in, arrays)))
    firer = HookFirer(tuple(layout))
    tracer.call_op("call_function", (firer, *arrays), {})
    firer.armed = True


def _grad_input(tracer: Any, b: Boundary, grad_output: tuple, result: BackwardResult,
                value_of: Callable[[Node], Any], tag: Any, replay: Any) -> tuple:
    """The cotangents of the module's inputs through the module alone (torch's grad_input):
    None for an input that is not an array or carries no gradient."""
    wanted = [x.node for x in b.inputs if isinstance(x, ArrayProxy) and x.node in result.needs]
    if not wanted:
        return tuple(None for _ in b.inputs)
    nodes = [n for n in tracer.graph.nodes[b.start:b.end] if n.op != "placeholder"]
    seeds = [(o.node, g) for o, g in zip(b.outputs, grad_output)
             if isinstance(o, ArrayProxy) and g is not None]
    inner = backward(nodes, seeds, wanted, value_of, tag, replay)
    by_node = dict(zip(wanted, inner.grads))
    return tuple(by_node.get(x.node) if isinstance(x, ArrayProxy) else None for x in b.inputs)


def _slots(values: tuple, arrays: list) -> tuple:
    """``("a", k)``: the k-th array argument of the node; ``("c", v)``: a constant."""
    slots = []
    for v in values:
        if isinstance(v, ArrayProxy):
            arrays.append(v)
            slots.append(("a", len(arrays) - 1))
        else:
            slots.append(("c", v))
    return tuple(slots)


class HookFirer:
    """What the ``call_function`` node calls: the hooks, in backward order, on fresh copies of
    the cotangents (the capture-time call, before ``armed``, runs nothing)."""

    def __init__(self, layout: tuple) -> None:
        self.layout = layout
        self.armed = False
        self.__name__ = self.__qualname__ = "backward_hooks"

    def __call__(self, *arrays: Any) -> None:
        if not self.armed:
            return None
        for kind, module, hooks, out_slots, in_slots in self.layout:
            grad_output = _values(out_slots, arrays)
            if kind == "pre":
                for hook in hooks:
                    _check_none(hook(module, grad_output), "backward pre-hook", hook)
            else:
                grad_input = _values(in_slots, arrays)
                for hook in hooks:
                    _check_none(hook(module, grad_input, grad_output), "backward hook", hook)
        return None

    def __repr__(self) -> str:
        return "backward_hooks"


def _values(slots: tuple, arrays: tuple) -> tuple:
    return tuple(np.array(arrays[v], copy=True) if kind == "a" else v for kind, v in slots)


def _check_none(returned: Any, what: str, hook: Any) -> None:
    if returned is not None:
        name = getattr(hook, "__qualname__", repr(hook))
        raise RuntimeError(
            f"{what} {name} returned a value: under ac.grad the hooks run after the whole "
            "backward pass, when the gradients are already computed, so a hook cannot replace "
            "them; return None (see docs/gradients.md, 'Module backward hooks')")


__all__ = ["Boundary", "HookFirer", "Recording", "emit_hook_calls", "observed_nodes",
           "refuse_hooked_call"]
