"""The pipeline driver: one call of a function -> a cache entry (capture -> guards -> lower ->
run code), or an eager entry, or a function split at its graph break.

``build_entry`` is called by ``run/compiled.py``; the run code is ``run/replay.py``, the user-facing
error text ``run/errors.py``.
"""

from __future__ import annotations

import logging
import time
import traceback
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..config import config, usable_cache_dir
from ..exc import AstCompilerError, ForbiddenInCompiledCode, Unsupported
from ..logs import get_logger, seconds as format_seconds
from ..source.loading import user_stacklevel
from .sentinels import MISS

if TYPE_CHECKING:  # the pipeline (capture, guards, lower: sympy, libcst) loads on the first compile
    from ..capture.guard_facts import GuardSet
    from ..graph import Graph
    from ..guards import GuardFunction


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
    compile_time: float = 0.0  # seconds: the phases below, numba's JIT of the first call included
    # seconds per phase: capture, guards, lower, run_code, numba_jit (the first call's)
    phases: dict[str, float] = field(default_factory=dict)
    first_call_time: float = 0.0  # seconds of the first call: compiling, then running it
    break_reason: Unsupported | None = None
    files: list[str] = field(default_factory=list)
    pieces: list[Any] = field(default_factory=list)  # CompiledFunctions of a split (prefix, resume)
    split_code: str = ""
    split: Any = None  # the SplitPlan of a split (``run/splitting.py``; export reads it)
    # the persistent entry cache (``run/persist.py``): where this entry was loaded from, and what
    # writing it needs (the run code, the compiled graph) until it is written after its first run
    loaded_from: str = ""
    blueprint: Any = field(default=None, repr=False)

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
        return self.graph is None and not self.pieces and not self.loaded_from

    def __repr__(self) -> str:
        kind = ("split at a graph break" if self.pieces else "eager fallback" if self.graph is None
                else f"graph with {self.graph.op_count()} ops")
        return f"<CacheEntry {kind}>"


def eager_entry(fn: Callable, guards: GuardSet, namespace: dict, reason: Unsupported | None,
                title: str, cache_dir: str) -> CacheEntry:
    """An entry that runs the original function, valid under the guards recorded so far."""
    from ..capture.runtime.api import signature_of
    from ..guards import build_guard
    sig = signature_of(fn)
    guard = build_guard(guards, sig, fn, namespace, title=title, cache_dir=cache_dir)
    return CacheEntry(guard=guard, run=fn, guards=guard.source, break_reason=reason,
                      output_code="# runs eagerly: " + (reason.reason if reason else "no graph"))


PieceFactory = Callable[[types.FunctionType, Callable, Any], Any]


def build_entry(fn: types.FunctionType, args: tuple, kwargs: dict, backend: Callable,
                *, fullgraph: bool, title: str, policy: Any = None,
                make_piece: PieceFactory | None = None,
                adjust_guards: Callable[[Any], Any] | None = None) -> CacheEntry:
    """Capture, guard and lower one call of ``fn``; a graph break gives an eager entry, or a
    split one when ``make_piece(function, backend, dynamic)`` can compile its pieces (the
    caller's ``CompiledFunction``: this module never imports it). ``adjust_guards``: applied
    to the recorded facts before the guard is built (``run/devices.py``: device arrays)."""
    adjust = adjust_guards or (lambda guards: guards)
    from ..capture.capture import capture_function
    from ..capture.guard_facts import GuardSet
    from ..capture.runtime.api import signature_of
    from ..guards import build_guard
    from ..lower import CompiledGraph
    from ..source import NoSourceError
    from .errors import attach_user_stack, format_break, is_user_error, raised_by_astcompiler
    from .replay import build_run, capture_calls, disarming_first_run
    start = time.perf_counter()
    cache_dir = usable_cache_dir()  # the private fallback once the configured one failed
    try:
        capture = capture_function(fn, args, kwargs, cache_dir=cache_dir,
                                   unroll_limit=config.unroll_limit,
                                   inline_depth_limit=config.inline_depth_limit, policy=policy)
    except Unsupported as error:
        attach_user_stack(error, error.__traceback__)
        message = format_break(error, fn)
        breaks = get_logger("graph_breaks")
        breaks.info("graph break in %s:\n%s", title, message)
        if breaks.isEnabledFor(logging.DEBUG):  # +graph_breaks: where in the compiler it broke
            breaks.debug("traceback of the graph break in %s:\n%s", title,
                         "".join(traceback.format_exception(error)).rstrip())
        if isinstance(error, NoSourceError) and not fullgraph:
            import warnings
            warnings.warn(f"astcompiler: {error.reason}; {title} runs eagerly", RuntimeWarning,
                          stacklevel=user_stacklevel())
        if fullgraph:
            raise Unsupported(message, user_stack=error.user_stack, hint=None) from None
        partial = adjust(getattr(error, "capture_guards", None) or GuardSet())
        split = None if make_piece is None else split_entry(
            fn, error, partial, backend, policy, title, cache_dir, make_piece)
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
        if fullgraph and not is_user_error(error):
            raise
        reason = Unsupported(f"capture raised {type(error).__name__}: {error}")
        attach_user_stack(reason, error.__traceback__)
        if fullgraph and raised_by_astcompiler(error):  # a gap of ours: never hide it
            raise Unsupported(format_break(reason, fn), user_stack=reason.user_stack) from error
        entry = eager_entry(fn, adjust(getattr(error, "capture_guards", None) or GuardSet()),
                            getattr(error, "capture_namespace", {}), reason, title, cache_dir)
        entry.compile_time = time.perf_counter() - start
        return entry
    captured = time.perf_counter()
    log_phase(title, "capture", captured - start)
    sig = signature_of(fn)
    guard = build_guard(adjust(capture.guards), sig, fn, capture.namespace, title=title,
                        cache_dir=cache_dir)
    guarded_at = time.perf_counter()
    log_phase(title, "guards", guarded_at - captured)
    graph_code = capture.graph.print_readable(print_output=False)
    example_inputs = [value for _, _, value in capture.inputs]
    if capture.graph.op_count() == 0:  # nothing to compile (e.g. a resume that only returns)
        from ..lower.eager import eager_backend
        compiled = eager_backend(capture.graph, example_inputs)
    else:
        compiled = lower_graph(backend, capture.graph, example_inputs)
    output_code = compiled.output_code if isinstance(compiled, CompiledGraph) else \
        f"# user backend {getattr(backend, '__name__', backend)!r}: no generated source\n"
    lowered = time.perf_counter()
    log_phase(title, "lower", lowered - guarded_at)
    original = getattr(compiled, "prefer_original", None)
    if original and not capture_calls(capture.graph):
        # nothing of the graph compiled: the user's function is as fast, and exact by construction
        entry = CacheEntry(
            guard=guard, run=fn, rewritten_code="\n".join(r.source for r in capture.rewritten),
            guards=guard.source, graph_code=graph_code, graph=capture.graph,
            output_code=f"# the original function runs ({original})\n{output_code}",
            compile_time=time.perf_counter() - start,
            phases=_phases(start, captured, guarded_at, lowered),
            files=[r.path for r in capture.rewritten if r.path] + [guard.path] * bool(guard.path),
            blueprint=(None, compiled))
        _log_entry(entry, title)
        return entry
    code = build_run(capture, compiled, guard, fn, title, cache_dir)
    log_phase(title, "run_code", time.perf_counter() - lowered)
    calls = capture_calls(capture.graph)
    run = disarming_first_run(code.run, calls)
    entry = CacheEntry(
        guard=guard, run=run, guarded=code.guarded,
        rewritten_code="\n".join(r.source for r in capture.rewritten),
        guards=guard.source, graph_code=graph_code, output_code=output_code, run_code=code.source,
        graph=capture.graph,
        phases=_phases(start, captured, guarded_at, lowered, time.perf_counter()),
        compile_time=time.perf_counter() - start,
        files=[r.path for r in capture.rewritten if r.path] + [p for p in (guard.path, code.path) if p]
        + list(getattr(compiled, "files", []) or []),
        blueprint=None if calls or not code.plain else (code, compiled))
    _log_entry(entry, title)
    return entry


def _phases(*ends: float) -> dict[str, float]:
    """Seconds per compile phase, from the start and the time each phase ended."""
    names = ("capture", "guards", "lower", "run_code")
    return {name: end - begin for name, begin, end in zip(names, ends, ends[1:])}


def _break_statement(fn: types.FunctionType, error: BaseException) -> int | None:
    """Index of the top-level statement of ``fn`` where capture broke (None: not splittable)."""
    from ..rewrite.function import cached_rewrite
    from ..source.origins import SOURCE_MAPS
    from .splitting import statement_index
    rewritten = cached_rewrite(fn.__code__)
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
                policy: Any, title: str, cache_dir: str, make_piece: PieceFactory) -> CacheEntry | None:
    """The function split at the statement that broke (see ``run/splitting.py``)."""
    from ..capture.runtime.api import signature_of
    from ..guards import build_guard
    from ..source import NoSourceError
    from .splitting import plan_split, split_runner
    if isinstance(error, NoSourceError):
        return None
    index = _break_statement(fn, error)
    if index is None:
        return None
    from ..rewrite.function import cached_rewrite
    from .splitting import redirect_to
    origin = cached_rewrite(fn.__code__).origin
    dynamic = getattr(policy, "dynamic", None)
    callee = (getattr(error, "inlined", None) or [None])[-1]  # the user function it broke in
    callees = [] if callee is None else [make_piece(callee, backend, dynamic)]
    redirect = redirect_to(callee, callees[0]) if callees else None
    plan = plan_split(fn, origin, index, cache_dir, redirect)
    if plan is None:  # not splittable there: the whole function runs eagerly
        return None
    pieces = [make_piece(f, backend, dynamic) for f in (plan.prefix, plan.resume) if f is not None]
    prefix = pieces[0] if plan.prefix is not None else None
    resume = pieces[-1] if plan.resume is not None else None
    pieces += callees
    guard = build_guard(guards, signature_of(fn), fn, getattr(error, "capture_namespace", {}),
                        title=title, cache_dir=cache_dir)
    run = split_runner(plan, prefix, resume, fn)
    code = "\n".join(f"# ----- {name} -----\n{text}" for name, text in plan.sources.items())
    return CacheEntry(guard=guard, run=run, guards=guard.source, break_reason=error,
                      pieces=pieces, split_code=code, split=plan,
                      output_code=f"# split at statement {index}: the prefix runs compiled, the "
                                  f"statement that broke runs in Python, the rest resumes "
                                  f"compiled\n{code}")


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
                      RuntimeWarning, stacklevel=user_stacklevel())
        return eager_backend(graph, example_inputs)


def log_phase(title: str, phase: str, seconds: float) -> None:
    """One line of the ``compile`` log as each phase of a compile ends."""
    logger = get_logger("compile")
    if logger.isEnabledFor(logging.INFO):
        logger.info("%s: %s %s", title, phase, format_seconds(seconds))


def _log_entry(entry: CacheEntry, title: str) -> None:
    """The artefacts of a new entry; at debug level (``+name``) with what tells more."""
    for artifact in ("rewritten_code", "graph_code", "guards", "output_code"):
        logger = get_logger(artifact)
        if not logger.isEnabledFor(logging.INFO):
            continue
        logger.info("%s for %s:\n%s", artifact, title, getattr(entry, artifact))
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("%s for %s, in detail:\n%s", artifact, title, _detail(entry, artifact))


def _detail(entry: CacheEntry, artifact: str) -> str:
    """What ``+artifact`` adds to the artefact's source."""
    if artifact == "guards":
        return "\n".join(f"  {fact.kind} {fact.source.name}: {fact.value!r}"
                         for fact in entry.guard.facts) or "  (no facts)"
    if artifact == "graph_code" and entry.graph is not None:
        inputs = [n for n in entry.graph.nodes if n.op == "placeholder"]
        return (f"  {entry.graph.op_count()} ops, {len(inputs)} inputs: "
                + ", ".join(str(getattr(n, "name", n)) for n in inputs))
    if artifact == "output_code":
        files = "\n".join(f"  {path}" for path in entry.files) or "  (none)"
        return f"run code:\n{entry.run_code or '(none)'}\nfiles:\n{files}"
    return "files:\n" + ("\n".join(f"  {path}" for path in entry.files) or "  (none)")
