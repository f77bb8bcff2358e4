"""The entry's run code: fetch inputs from their sources, call the compiled graph, replay the
recorded side effects on the caller's objects, rebuild the return value (``build_run``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..capture.capture import Capture, has_side_effects
from ..capture.nonstrict import CaptureCall
from ..capture.objects import new_object
from ..capture.runtime.api import signature_of
from ..graph import Graph, Node
from ..ops import REGISTRY
from ..guards import GuardFunction
from ..guards.codegen import literal_code
from ..source import load_generated_module, write_generated_file
from .run_functions import name_run_functions, note_once
from .sentinels import MISS

__all__ = ["RunCode", "build_run", "capture_calls", "disarming_first_run"]


def _output_expr(spec: tuple, consts: dict[str, Any]) -> str:
    kind = spec[0]
    if kind == "out":
        return f"___out[{spec[1]}]"
    if kind in ("ref", "var"):  # an outside object fetched at the start / a container built once
        return spec[1]
    if kind == "bind":
        return f"({spec[1]} := {_output_expr(spec[2], consts)})"
    if kind == "object":  # an instance the compiled code created: rebuilt from its state
        consts.setdefault("___new_object", new_object)
        cls = f"___r{len(consts)}"
        consts[cls] = spec[1]
        state, slots = ("{" + ", ".join(f"{k!r}: {_output_expr(v, consts)}" for k, v in part.items())
                        + "}" for part in spec[2:4])
        return f"___new_object({cls}, {state}, {slots})"
    if kind == "const":
        literal = literal_code(spec[1])
        if literal is not None:
            return literal
        name = f"___r{len(consts)}"
        consts[name] = spec[1]
        return name
    if kind == "py":  # a Python scalar computed by the graph (a counter, a loop index)
        return f"{spec[1].__name__}({_output_expr(spec[2], consts)})"
    if kind == "py_unless":  # a number whose type the data decided: NumPy's where the flag is true
        value = _output_expr(spec[2], consts)
        return f"({value} if {_output_expr(spec[3], consts)} else {spec[1].__name__}({value}))"
    if kind == "tuple":
        items = [_output_expr(s, consts) for s in spec[1]]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if kind == "list":
        return "[" + ", ".join(_output_expr(s, consts) for s in spec[1]) + "]"
    if kind == "set":
        return "{" + ", ".join(_output_expr(s, consts) for s in spec[1]) + "}" if spec[1] else "set()"
    if kind == "namedtuple":
        name = f"___r{len(consts)}"
        consts[name] = spec[1]
        return f"{name}(" + ", ".join(_output_expr(s, consts) for s in spec[2]) + ")"
    if kind == "dict":
        keys, values = spec[1], spec[2]
        parts = []
        for key, value in zip(keys, values):
            key_code = literal_code(key)
            if key_code is None:
                key_code = f"___r{len(consts)}"
                consts[key_code] = key
            parts.append(f"{key_code}: {_output_expr(value, consts)}")
        return "{" + ", ".join(parts) + "}"
    raise AssertionError(f"bad output spec {spec!r}")


def _replay_lines(effects: list, consts: dict[str, Any], refs: dict[str, str]) -> list[str]:
    """Python statements that repeat the recorded mutations of outside objects, in order, on
    the objects as the call found them (``refs``: source expression -> variable)."""
    lines = []
    for effect, name_spec, arg_specs in effects:
        target = refs.get(effect.source.expr, effect.source.expr)
        args = [f"{a[1]}={_output_expr(a[2], consts)}" if a[0] == "keyword"
                else _output_expr(a, consts) for a in arg_specs]
        if effect.kind == "call":
            lines.append(f"{target}.{effect.name}({', '.join(args)})")
        elif effect.kind == "setitem":
            lines.append(f"{target}[{_output_expr(name_spec, consts)}] = {args[0]}")
        elif effect.kind == "delitem":
            lines.append(f"del {target}[{_output_expr(name_spec, consts)}]")
        elif effect.kind == "setattr":
            lines.append(f"{target}.{effect.name} = {args[0]}")
    return lines


def _forward_call(sig: Any) -> str:
    """The arguments that pass ``run``'s parameters on to the original function unchanged."""
    parts = []
    for param in sig.parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            parts.append(f"*{param.name}")
        elif param.kind is param.VAR_KEYWORD:
            parts.append(f"**{param.name}")
        elif param.kind is param.KEYWORD_ONLY:
            parts.append(f"{param.name}={param.name}")
        else:
            parts.append(param.name)
    return ", ".join(parts)


def capture_calls(graph: Graph) -> list[CaptureCall]:
    """The user functions the graph calls whose capture-time run stands for the first call's."""
    found = []
    for node in graph.nodes:
        if node.op == "call" and node.target == "call_function" \
                and isinstance(node.args[0], CaptureCall):
            found.append(node.args[0])
        if node.op == "region":
            if isinstance(getattr(node.info, "fn", None), CaptureCall):
                found.append(node.info.fn)
            for sub in node.info.subgraphs.values():
                found += capture_calls(sub)
    return found


def disarming_first_run(run: Callable, calls: list[CaptureCall]) -> Callable:
    """``run`` for the call that was captured (the first one): afterwards no capture-time result
    is left to stand in for a later call."""
    if not calls:
        return run

    def first_run(*args: Any, **kwargs: Any) -> Any:
        try:
            return run(*args, **kwargs)
        finally:
            for call in calls:
                call.disarm()

    first_run.__wrapped__ = run  # type: ignore[attr-defined]
    return first_run


def _repeatable(graph: Graph) -> bool:
    """No node of the graph (or of its regions) changes anything outside it or runs user
    Python: if it raises halfway, running the original function instead repeats nothing."""
    for node in graph.nodes:
        if node.op == "call" and (has_side_effects(node) or node.target == "call_function"):
            return False
        if node.op == "region" and (node.target == "nonstrict_call" or not all(
                _repeatable(g) for g in node.info.subgraphs.values())):
            return False
    return True


def written_inputs(graph: Graph) -> set[int] | None:
    """Positions of the graph's inputs whose memory it may write (through views, regions and
    their subgraphs; an over-approximation), or None when the graph runs user Python (a write
    there cannot be traced)."""
    roots = _aliased_inputs(graph)
    written: set[int] = set()
    for node in graph.nodes:
        if node.op == "call" and node.target == "call_function":
            return None
        if node.op == "call" and has_side_effects(node) and node.args \
                and isinstance(node.args[0], Node):
            written |= roots.get(node.args[0], set())
        if node.op == "region":
            if node.target == "nonstrict_call":
                return None
            for sub in node.info.subgraphs.values():
                inner = written_inputs(sub)
                if inner is None:
                    return None
                if inner:  # a write to a value the region was handed: any of its array args
                    for arg in node.args:
                        if isinstance(arg, Node):
                            written |= roots.get(arg, set())
    return written


def _aliased_inputs(graph: Graph) -> dict[Node, set[int]]:
    """For each node, the inputs whose memory it may share (views, regions, ops that may return
    an input); fresh arrays share none."""
    roots: dict[Node, set[int]] = {}
    for index, node in enumerate(graph.placeholders):
        roots[node] = {index}
    for node in graph.nodes:
        if node in roots:
            continue
        op = REGISTRY.ops.get(node.target) if node.op == "call" else None
        shares = node.op == "region" or (node.op == "call" and node.target == "getitem") \
            or (op is not None and (op.kind == "view" or op.returns_input is not None)) \
            or (node.op == "call" and op is None)
        found: set[int] = set()
        if shares:
            for arg in node.all_input_nodes():
                found |= roots.get(arg, set())
        roots[node] = found
    return roots


def _plain_inputs(capture: Capture) -> set[int]:
    """Positions of ``ac.nn.Parameter`` inputs that the graph receives as plain ndarray views of
    the same memory: what a Parameter computes is a plain ndarray anyway, and NumPy's dispatch to
    ``Parameter.__array_function__`` costs microseconds per op. Not when the graph runs user
    Python (which could tell) or returns a value that may share the input's memory."""
    from ..nn.parameter import Parameter
    graph = capture.graph
    if written_inputs(graph) is None:
        return set()
    roots = _aliased_inputs(graph)
    returned: set[int] = set()
    for value in graph.output_node.args[0]:
        if isinstance(value, Node):
            returned |= roots.get(value, set())
    return {index for index, (_, _, value) in enumerate(capture.inputs)
            if type(value) is Parameter and index not in returned}


def _input_list(capture: Capture, plain_views: set[int], reads: dict[str, str]) -> str:
    """The graph's arguments; ``reads``: sources the guard already read into locals."""
    parts = []
    for index, (_, source, _) in enumerate(capture.inputs):
        expr = reads.get(source.expr, source.expr)
        parts.append(f"___ndarray.view({expr}, ___ndarray)" if index in plain_views else expr)
    return ", ".join(parts)


def _reusing(call: str, inputs: str, read: str) -> str:
    """``call`` for the guarded twin: the graph takes the values its guard just read."""
    return call.replace(f"___compiled({inputs})", f"___compiled({read})")


def _restoring_call(inputs: str, capture: Capture, written: set[int], original: Callable) -> str:
    """The graph call for a graph that writes to its inputs and whose recorded effects must not
    be lost if it raises: the written inputs are saved first; on an error they are restored and
    the original function runs (its effects, its writes, its exception, in Python's order)."""
    arrays = [capture.inputs[i][1].expr for i in sorted(written)]
    listed = ", ".join(arrays) + ("," if len(arrays) == 1 else "")
    return (f"        ___saved = ___snapshot(({listed}))\n"
            f"        try:\n            ___out = ___compiled({inputs})\n"
            f"        except Exception as ___error:  # undo the writes, then the original\n"
            f"            ___restore(({listed}), ___saved)\n"
            f"            ___note(___error)\n"
            f"            return ___original({_forward_call(signature_of(original))})\n")


def _snapshot(arrays: tuple) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else None for a in arrays]


def _restore(arrays: tuple, saved: list) -> None:
    for array, copy in zip(arrays, saved):
        if copy is not None:
            np.copyto(array, copy)


@dataclass
class RunCode:
    """An entry's generated run function and its guarded twin, from the module at ``path``
    (``___make_run(namespace)``); ``source`` is what users read as ``run_code``. ``plain``: the
    code calls the graph, returns its result and replays nothing, and an error of the graph makes
    it run the original function (what the persistent entry cache can rebuild without a graph)."""

    run: Callable
    guarded: Callable
    source: str
    path: str
    namespace: dict[str, Any]
    plain: bool


# a compiled call without Python side effects to replay that ran the graph with NumPy and met
# NumPy's own error (``eager.interpret`` marks it) raises it: the original would repeat the
# warnings and writes before it
_EXACT_RERAISE = ("            if getattr(___error, '__ac_exact__', False):  # NumPy's "
                  "error, after its warnings\n                raise\n")


def build_run(capture: Capture, compiled: Callable, guard: GuardFunction, original: Callable,
              title: str, cache_dir: str) -> RunCode:
    """Generate the entry's run function (fetch inputs from their sources, call the compiled
    graph, replay side effects, rebuild the return value) and its guarded twin, which checks the
    guard first: the dispatch fast path is one Python call.

    Outside objects the replay mutates or the return value contains are fetched first, so both
    see the objects the call started with. If the graph raises (an index out of range at run
    time) and repeating it is harmless, the original function runs instead: the effects before
    the error happen, in order, and Python raises its own exception."""
    params = guard.params
    consts: dict[str, Any] = {"___compiled": getattr(compiled, "fn", compiled), "___MISS": MISS,
                              "___original": original, "___note": note_once(title)}
    consts.update(guard.namespace)
    consts.update({k: v for k, v in capture.namespace.items()})
    plain_views = _plain_inputs(capture)
    if plain_views:
        consts.update(___ndarray=np.ndarray)
    inputs = _input_list(capture, plain_views, {})
    reads = getattr(guard, "reads", {})
    refs = capture.refs
    replay_lines = _replay_lines(capture.side_effects, consts, refs)
    reraise = "" if replay_lines else _EXACT_RERAISE  # (effects replayed after: the original)
    result = _output_expr(capture.output_spec, consts)
    fetch = "".join(f"        {var} = {expr}\n" for expr, var in refs.items())
    replay = "".join(f"        {line}\n" for line in replay_lines)
    unpack = "".join(f"    {name} = ___ns[{name!r}]\n" for name in consts)
    if _repeatable(capture.graph):
        call = (f"        try:\n            ___out = ___compiled({inputs})\n"
                f"        except Exception as ___error:  # the original: its effects, its error\n"
                f"{reraise}"
                f"            ___note(___error)\n"
                f"            return ___original({_forward_call(signature_of(original))})\n")
    elif capture.side_effects and (written := written_inputs(capture.graph)) is not None:
        consts.update(___snapshot=_snapshot, ___restore=_restore)
        unpack = "".join(f"    {name} = ___ns[{name!r}]\n" for name in consts)
        call = _restoring_call(inputs, capture, written, original) if written else (
            f"        try:\n            ___out = ___compiled({inputs})\n"
            f"        except Exception as ___error:  # the original: its effects, its error\n"
            f"{reraise}"
            f"            ___note(___error)\n"
            f"            return ___original({_forward_call(signature_of(original))})\n")
    else:
        call = f"        ___out = ___compiled({inputs})\n"
    call = f"{fetch}{call}{replay}"
    source = (f"# {title}\n# Run code generated by astcompiler: inputs from their sources, the "
              f"compiled graph, the return value.\n\n"
              f"def ___make_run(___ns):\n{unpack}"
              f"    def run({params}):\n{call}        return {result}\n"
              f"    def guarded({params}):\n"
              f"        try:\n            ___ok = ({guard.condition})\n"
              f"        except Exception:\n            return ___MISS\n"
              f"        if not ___ok:\n            return ___MISS\n"
              f"{_reusing(call, inputs, _input_list(capture, plain_views, reads))}"
              f"        return {result}\n"
              f"    return run, guarded\n")
    path = write_generated_file(f"{cache_dir}/run", "run", source)
    run, guarded = load_generated_module(path).___make_run(consts)
    name_run_functions((run, guarded), original)
    plain = _repeatable(capture.graph) and not capture.side_effects
    return RunCode(run, guarded, source.split("    def guarded(")[0] + "    return run\n", path,
                   consts, plain)
