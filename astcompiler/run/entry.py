"""Cache entries: one compiled (or eager) way to run a function, with every generated source.

``build_entry`` runs the pipeline for one call: capture -> guards -> lower -> run code.
"""

from __future__ import annotations

import time
import traceback
import types
from dataclasses import dataclass, field
from typing import Any, Callable

from ..capture.capture import Capture, capture_function, has_side_effects
from ..capture.guard_facts import GuardSet
from ..capture.nonstrict import CaptureCall
from ..capture.objects import new_object
from ..capture.runtime import signature_of
from ..config import config, usable_cache_dir
from ..exc import AstCompilerError, ForbiddenInCompiledCode, GraphBreak, Unsupported
from ..graph import Graph
from ..guards import GuardFunction, build_guard, copy_defaults
from ..guards.codegen import _literal
from ..lower import CompiledGraph
from ..source import NoSourceError, load_generated_module, write_generated_file
from ..logs import get_logger
from .sentinels import MISS


@dataclass
class CacheEntry:
    """One way to run the function, valid while ``guard`` holds. ``guarded(*args)`` checks the
    guard and runs in one call (the dispatch fast path), returning ``MISS`` when it fails."""

    guard: GuardFunction
    run: Callable[..., Any]
    guarded: Callable[..., Any] | None = None
    rewritten_code: str = ""
    guards: str = ""
    graph_code: str = ""
    output_code: str = ""
    run_code: str = ""
    graph: Graph | None = None
    compile_time: float = 0.0
    break_reason: Unsupported | None = None
    files: list[str] = field(default_factory=list)
    pieces: list[Any] = field(default_factory=list)  # CompiledFunctions of a split (prefix, resume)
    split_code: str = ""

    def __post_init__(self) -> None:
        if self.guarded is None:
            check, run = self.guard.check, self.run

            def guarded(*args: Any, **kwargs: Any) -> Any:
                try:
                    ok = check(*args, **kwargs)
                except Exception:  # noqa: BLE001 - e.g. a global that is gone: not this entry
                    return MISS
                return run(*args, **kwargs) if ok else MISS
            self.guarded = guarded

    @property
    def is_eager(self) -> bool:
        return self.graph is None and not self.pieces

    def __repr__(self) -> str:
        kind = ("split at a graph break" if self.pieces else "eager fallback" if self.graph is None
                else f"graph with {self.graph.op_count()} ops")
        return f"<CacheEntry {kind}>"


def attach_user_stack(error: Unsupported, tb: types.TracebackType | None) -> None:
    """Fill ``error.user_stack`` from the generated frames in its traceback."""
    if error.user_stack:
        return
    import linecache

    from ..source.origins import SOURCE_MAPS
    stack = []
    while tb is not None:
        line_map = SOURCE_MAPS.get(tb.tb_frame.f_code.co_filename)
        location = None if line_map is None else line_map.get(tb.tb_lineno)
        if location is not None:
            stack.append((location[0], location[1],
                          linecache.getline(location[0], location[1]).rstrip()))
        tb = tb.tb_next
    error.user_stack = stack


def format_break(error: Unsupported, fn: Callable) -> str:
    """A user-facing message: where (file, line, the line itself), why, and what to do."""
    lines = []
    if error.user_stack:
        filename, lineno, text = error.user_stack[-1]
        lines.append(f"{filename}:{lineno}: cannot compile {getattr(fn, '__qualname__', fn)}")
        if text:
            lines.append(f"    {text.strip()}")
    else:
        lines.append(f"cannot compile {getattr(fn, '__qualname__', fn)}")
    lines.append(f"reason: {error.reason}")
    if len(error.user_stack) > 1:
        lines.append("inlined from:")
        for filename, lineno, text in error.user_stack[:-1]:
            lines.append(f"  {filename}:{lineno}: {text.strip()}")
    lines.append(error.hint or "what to do: move this statement out of the compiled function, "
                 "or drop fullgraph=True to let it run eagerly")
    return "\n".join(lines)


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
        literal = _literal(spec[1])
        if literal is not None:
            return literal
        name = f"___r{len(consts)}"
        consts[name] = spec[1]
        return name
    if kind == "py":  # a Python scalar computed by the graph (a counter, a loop index)
        return f"{spec[1].__name__}({_output_expr(spec[2], consts)})"
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
            key_code = _literal(key)
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


def _note_once(title: str) -> Callable[[BaseException], None]:
    """Log (once per entry) that the graph raised and the call ran the original function."""
    seen: list[bool] = []

    def note(error: BaseException) -> None:
        if not seen:
            seen.append(True)
            get_logger("graph_breaks").info(
                "%s: the graph raised %s: %s; this call runs the original function (its side "
                "effects and its exception, in Python's order)", title, type(error).__name__, error)

    return note


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


def _capture_calls(graph: Graph) -> list[CaptureCall]:
    """The user functions the graph calls whose capture-time run stands for the first call's."""
    found = []
    for node in graph.nodes:
        if node.op == "call" and node.target == "call_function" \
                and isinstance(node.args[0], CaptureCall):
            found.append(node.args[0])
        if node.op == "region":
            if isinstance(node.extra.get("fn"), CaptureCall):
                found.append(node.extra["fn"])
            for sub in node.extra.get("subgraphs", {}).values():
                found += _capture_calls(sub)
    return found


def _disarming_first_run(run: Callable, calls: list[CaptureCall]) -> Callable:
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
                _repeatable(g) for g in node.extra.get("subgraphs", {}).values())):
            return False
    return True


def build_run(capture: Capture, compiled: Callable, guard: GuardFunction, original: Callable,
              title: str, cache_dir: str) -> tuple[Callable, Callable, str, str]:
    """Generate the entry's run function (fetch inputs from their sources, call the compiled
    graph, replay side effects, rebuild the return value) and its guarded twin, which checks the
    guard first: the dispatch fast path is one Python call.

    Outside objects the replay mutates or the return value contains are fetched first, so both
    see the objects the call started with. If the graph raises (an index out of range at run
    time) and repeating it is harmless, the original function runs instead: the effects before
    the error happen, in order, and Python raises its own exception."""
    params = guard.params
    consts: dict[str, Any] = {"___compiled": getattr(compiled, "fn", compiled), "___MISS": MISS,
                              "___original": original, "___note": _note_once(title)}
    consts.update(guard.namespace)
    consts.update({k: v for k, v in capture.namespace.items()})
    inputs = ", ".join(source.expr for _, source, _ in capture.inputs)
    refs = capture.refs
    replay_lines = _replay_lines(capture.side_effects, consts, refs)
    result = _output_expr(capture.output_spec, consts)
    fetch = "".join(f"        {var} = {expr}\n" for expr, var in refs.items())
    replay = "".join(f"        {line}\n" for line in replay_lines)
    unpack = "".join(f"    {name} = ___ns[{name!r}]\n" for name in consts)
    if _repeatable(capture.graph):
        call = (f"        try:\n            ___out = ___compiled({inputs})\n"
                f"        except Exception as ___error:  # the original: its effects, its error\n"
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
              f"{call}        return {result}\n"
              f"    return run, guarded\n")
    path = write_generated_file(f"{cache_dir}/run", "run", source)
    run, guarded = load_generated_module(path).___make_run(consts)
    for made in (run, guarded):
        copy_defaults(made, original)
        _name_like(made, original)
    return run, guarded, source.split("    def guarded(")[0] + "    return run\n", path


def _name_like(made: Callable, original: Callable) -> None:
    """A call with missing or unexpected arguments fails in ``made`` first: Python's message
    must name the user's function, as the plain call's does."""
    name = getattr(original, "__name__", None)
    qualname = getattr(original, "__qualname__", name)
    if isinstance(name, str) and isinstance(qualname, str):
        made.__code__ = made.__code__.replace(co_name=name, co_qualname=qualname)
        made.__name__, made.__qualname__ = name, qualname


def eager_entry(fn: Callable, guards: GuardSet, namespace: dict, reason: Unsupported | None,
                title: str, cache_dir: str) -> CacheEntry:
    """An entry that runs the original function, valid under the guards recorded so far."""
    sig = signature_of(fn)
    guard = build_guard(guards, sig, fn, namespace, title=title, cache_dir=cache_dir)
    return CacheEntry(guard=guard, run=fn, guards=guard.source, break_reason=reason,
                      output_code="# runs eagerly: " + (reason.reason if reason else "no graph"))


def build_entry(fn: types.FunctionType, args: tuple, kwargs: dict, backend: Callable,
                *, fullgraph: bool, title: str, policy: Any = None) -> CacheEntry:
    """Capture, guard and lower one call of ``fn``; a graph break gives an eager entry."""
    start = time.perf_counter()
    cache_dir = usable_cache_dir()  # the private fallback once the configured one failed
    try:
        capture = capture_function(fn, args, kwargs, cache_dir=cache_dir,
                                   unroll_limit=config.unroll_limit,
                                   inline_depth_limit=config.inline_depth_limit, policy=policy)
    except Unsupported as error:
        attach_user_stack(error, error.__traceback__)
        message = format_break(error, fn)
        get_logger("graph_breaks").info("graph break in %s:\n%s", title, message)
        if isinstance(error, NoSourceError) and not fullgraph:
            import warnings
            warnings.warn(f"astcompiler: {error.reason}; {title} runs eagerly", RuntimeWarning,
                          stacklevel=5)
        if fullgraph:
            raise Unsupported(message, user_stack=error.user_stack, hint=None) from None
        partial = getattr(error, "capture_guards", None) or GuardSet()
        split = split_entry(fn, error, partial, backend, policy, title, cache_dir)
        if split is not None:
            split.compile_time = time.perf_counter() - start
            return split
        entry = eager_entry(fn, partial, getattr(error, "capture_namespace", {}), error, title,
                            cache_dir)
        entry.compile_time = time.perf_counter() - start
        return entry
    except (AstCompilerError, ForbiddenInCompiledCode):
        raise  # constraint violations, data-dependent errors, forbidden calls: the user's to see
    except Exception as error:  # noqa: BLE001 - a user error or a gap: NumPy decides eagerly
        get_logger("graph_breaks").info("capture of %s failed (%s: %s); running eagerly",
                                        title, type(error).__name__, error)
        if fullgraph and not _is_user_error(error):
            raise
        reason = Unsupported(f"capture raised {type(error).__name__}: {error}")
        attach_user_stack(reason, error.__traceback__)
        if fullgraph and _raised_by_astcompiler(error):  # a gap of ours: never hide it
            raise Unsupported(format_break(reason, fn), user_stack=reason.user_stack) from error
        entry = eager_entry(fn, getattr(error, "capture_guards", None) or GuardSet(),
                            getattr(error, "capture_namespace", {}), reason, title, cache_dir)
        entry.compile_time = time.perf_counter() - start
        return entry
    sig = signature_of(fn)
    guard = build_guard(capture.guards, sig, fn, capture.namespace, title=title, cache_dir=cache_dir)
    graph_code = capture.graph.print_readable(print_output=False)
    example_inputs = [value for _, _, value in capture.inputs]
    if capture.graph.op_count() == 0:  # nothing to compile (e.g. a resume that only returns)
        from ..lower.eager import eager_backend
        compiled = eager_backend(capture.graph, example_inputs)
    else:
        compiled = lower_graph(backend, capture.graph, example_inputs)
    output_code = compiled.output_code if isinstance(compiled, CompiledGraph) else \
        f"# user backend {getattr(backend, '__name__', backend)!r}: no generated source\n"
    run, guarded, run_code, run_path = build_run(capture, compiled, guard, fn, title, cache_dir)
    run = _disarming_first_run(run, _capture_calls(capture.graph))
    entry = CacheEntry(
        guard=guard, run=run, guarded=guarded,
        rewritten_code="\n".join(r.source for r in capture.rewritten),
        guards=guard.source, graph_code=graph_code, output_code=output_code, run_code=run_code,
        graph=capture.graph, compile_time=time.perf_counter() - start,
        files=[r.path for r in capture.rewritten if r.path] + [p for p in (guard.path, run_path) if p]
        + list(getattr(compiled, "files", []) or []))
    _log_entry(entry, title)
    return entry


def _break_statement(fn: types.FunctionType, error: BaseException) -> int | None:
    """Index of the top-level statement of ``fn`` where capture broke (None: not splittable)."""
    from ..rewrite.function import _CACHE
    from ..source.origins import SOURCE_MAPS
    from .splitting import statement_index
    rewritten = _CACHE.get(fn.__code__)
    if rewritten is None or rewritten.origin is None or rewritten.origin.node.__class__.__name__ != "FunctionDef":
        return None
    line = None
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == rewritten.path and code.co_name == rewritten.name:
            mapped = SOURCE_MAPS.get(code.co_filename, {}).get(tb.tb_lineno)
            line = mapped[1] if mapped is not None else line
        tb = tb.tb_next
    return None if line is None else statement_index(rewritten.origin, line)


def split_entry(fn: types.FunctionType, error: Unsupported, guards: GuardSet, backend: Callable,
                policy: Any, title: str, cache_dir: str) -> CacheEntry | None:
    """The function split at the statement that broke (see ``run/splitting.py``)."""
    from .compiled import CompiledFunction
    from .splitting import plan_split, split_runner
    if isinstance(error, NoSourceError):
        return None
    index = _break_statement(fn, error)
    if index is None:
        return None
    from ..rewrite.function import _CACHE
    from .splitting import redirect_to
    origin = _CACHE[fn.__code__].origin
    dynamic = getattr(policy, "dynamic", None)
    callee = (getattr(error, "inlined", None) or [None])[-1]  # the user function it broke in
    callees = [] if callee is None else [CompiledFunction(callee, backend=backend, dynamic=dynamic)]
    redirect = redirect_to(callee, callees[0]) if callees else None
    plan = plan_split(fn, origin, index, cache_dir, redirect)
    if plan is None:  # not splittable there: the whole function runs eagerly
        return None
    pieces = [CompiledFunction(f, backend=backend, dynamic=dynamic)
              for f in (plan.prefix, plan.resume) if f is not None]
    prefix = pieces[0] if plan.prefix is not None else None
    resume = pieces[-1] if plan.resume is not None else None
    pieces += callees
    guard = build_guard(guards, signature_of(fn), fn, getattr(error, "capture_namespace", {}),
                        title=title, cache_dir=cache_dir)
    run = split_runner(plan, prefix, resume, fn)
    code = "\n".join(f"# ----- {name} -----\n{text}" for name, text in plan.sources.items())
    return CacheEntry(guard=guard, run=run, guards=guard.source, break_reason=error,
                      pieces=pieces, split_code=code,
                      output_code=f"# split at statement {index}: the prefix runs compiled, the "
                                  f"statement that broke runs in Python, the rest resumes "
                                  f"compiled\n{code}")


def _raised_by_astcompiler(error: BaseException) -> bool:
    """The innermost frame is astcompiler's own code (not NumPy, not the user's)."""
    import os
    if getattr(error, "__ac_from_numpy__", False):
        return False
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tb = error.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and os.path.abspath(last).startswith(package + os.sep)


def _is_user_error(error: Exception) -> bool:
    """Errors NumPy or Python raise for the user's own code: running eagerly re-raises them."""
    return isinstance(error, (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError,
                              ArithmeticError, NameError, AttributeError))


def lower_graph(backend: Callable, graph: Graph, example_inputs: list) -> Callable:
    """Run the backend; if a built-in backend fails, fall back to the eager one with a warning
    (a slower answer, never a wrong one)."""
    try:
        return backend(graph, example_inputs)
    except Exception as error:  # noqa: BLE001
        from ..lower.eager import eager_backend
        if backend is eager_backend or not getattr(backend, "__module__", "").startswith("astcompiler"):
            raise
        import warnings
        get_logger("graph_breaks").info("the backend failed (%s: %s); the graph runs op by op",
                                        type(error).__name__, error, exc_info=True)
        warnings.warn(f"astcompiler: backend failed ({type(error).__name__}: {error}); "
                      f"running the graph op by op instead.\n{traceback.format_exc(limit=3)}",
                      RuntimeWarning, stacklevel=4)
        return eager_backend(graph, example_inputs)


def _log_entry(entry: CacheEntry, title: str) -> None:
    for artifact in ("rewritten_code", "graph_code", "guards", "output_code"):
        logger = get_logger(artifact)
        if logger.isEnabledFor(20):
            logger.info("%s for %s:\n%s", artifact, title, getattr(entry, artifact))
