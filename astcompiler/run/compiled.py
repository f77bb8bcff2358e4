"""``CompiledFunction``: per-call dispatch over cache entries, and recompilation.

A hit costs one guard call per entry tried plus the entry's run function. A miss compiles under a
per-function lock (thread-safe), subject to ``config.recompile_limit``.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import sys
import threading
import time
import types
import warnings
import weakref
from typing import Any, Callable, Generic, ParamSpec, TypeVar

from ..config import config, usable_cache_dir
from ..exc import FailOnRecompileLimitHit, RecompileError
from . import persist, pgo, trace
from .sentinels import MISS
from .stance import CURRENT_STANCE, DEFAULT, Stance, current_stance
from ..logs import display_name, get_logger, seconds
from ..source.loading import user_stacklevel
from ..lower import check_backend, lookup_backend
from .entry import CacheEntry, build_entry
from .devices import EAGER, cuda_entry, eager_call
from .dispatch import OWN_CLASS, install_dispatch

_P = ParamSpec("_P")
_R = TypeVar("_R")
_ALL: "weakref.WeakSet[CompiledFunction[Any, Any]]" = weakref.WeakSet()
_ALL_LOCK = threading.Lock()


def location(fn: Callable) -> str:
    """``file.py:LINE`` of ``fn``'s definition (of a split piece: of its first statement)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return "?"
    from ..source.names import display_name, synthetic_source
    synthetic = synthetic_source(code)
    if synthetic is not None:  # a piece of a split function: where its statements are
        body = getattr(synthetic.node.body, "body", ())
        lines = [synthetic.positions[s].start.line for s in body if s in synthetic.positions]
        return f"{synthetic.display_name}:{lines[0] if lines else '?'}"
    return f"{display_name(code.co_filename)}:{code.co_firstlineno}"


class CompiledFunction(Generic[_P, _R]):
    """The callable ``ac.compile(fn)`` returns (for type checkers: with ``fn``'s signature).

    Each instance has a class of its own (``__new__``) whose ``__call__`` is generated for the
    current entries (``dispatch.py``): the user's parameters, the stance test and each entry's
    guarded run, one Python frame; the method ``__call__`` below serves the rest."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "CompiledFunction[_P, _R]":
        if cls.__dict__.get(OWN_CLASS):  # copy.copy: a class of its own too, not a subclass
            cls = cls.__mro__[1]
        own = type(cls.__name__, (cls,), {"__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__, OWN_CLASS: True})
        return super().__new__(own)

    def __init__(self, fn: Callable[_P, _R], *, backend: Any = "numba", fullgraph: bool = False,
                 dynamic: bool | None = None, device: str | None = None,
                 options: dict | None = None, disable: bool = False) -> None:
        self._orig_fn = fn
        self._ac_original = fn
        self._backend_spec = backend
        check_backend(backend)
        self._backend: Callable | None = None  # resolved at the first compile (lazy import)
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.device = device
        self.options = dict(options or {})
        self.disabled = disable
        self._eager_reason = suspending_reason(fn)  # generators and coroutines run as Python
        self._logged_eager = False
        if self._eager_reason is not None and fullgraph:
            raise TypeError(f"astcompiler.compile(fullgraph=True) cannot compile "
                            f"{self._eager_reason}: compile the function that consumes it instead")
        self._entries: tuple[CacheEntry, ...] = ()
        self._lock = threading.RLock()
        self._warned_limit = False
        self._traced_limit = False  # the first recompile-limit hit is in the compile trace
        self._warned_no_source = False
        self._last_failure: list[str] = []
        self._automatic: dict[str, set[int]] = {}  # sources whose sizes changed: made dynamic
        self._first_call: dict[str, Any] | None = None  # eager_then_compile's first inputs
        self._distinguishing: tuple | None = None
        functools.update_wrapper(self, fn)
        with _ALL_LOCK:
            _ALL.add(self)

    # ----- inspection --------------------------------------------------------------------------
    @property
    def entries(self) -> list[CacheEntry]:
        """The cache entries, oldest first (each with its generated sources)."""
        return list(self._entries)

    @property
    def title(self) -> str:
        return f"{getattr(self._orig_fn, '__qualname__', self._orig_fn)} ({location(self._orig_fn)})"

    def call_title(self, args: tuple, kwargs: dict) -> str:
        """What a notice about this call names: the function, or what the function's
        ``__ac_title__(*args, **kwargs)`` says (a compiled module call names the module's
        ``forward`` and its line, not the shared ``module_call``)."""
        describe = getattr(self._orig_fn, "__ac_title__", None)
        if describe is not None:
            try:
                return describe(*args, **kwargs)
            except Exception:  # a title never breaks a call
                pass
        return self.title

    def reset(self) -> None:
        with self._lock:
            self._entries = ()
            self._automatic = {}
            self._warned_limit = self._traced_limit = False

    def __repr__(self) -> str:
        return f"<astcompiler.CompiledFunction {self.title}, {len(self._entries)} entries>"

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return types.MethodType(self, instance)

    def __reduce__(self) -> Any:
        """Pickle by reference, as a function is: the module-level name that holds this object
        (its ``__qualname__``, or the name ``ac.compile(fn)`` was assigned to). Under cloudpickle,
        a function it sends by value (``__main__``, notebooks) goes by value (``run/pickling.py``)."""
        from .pickling import by_value_reduction
        settings = {"backend": self._backend_spec, "fullgraph": self.fullgraph,
                    "dynamic": self.dynamic, "device": self.device, "options": self.options,
                    "disable": self.disabled}
        return by_value_reduction(self, settings, lambda: reference_name(self)) \
            or reference_name(self)

    def __copy__(self) -> "CompiledFunction[_P, _R]":
        """``copy.copy``: a new object (a class of its own) sharing the entries' state."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    # ----- dispatch ----------------------------------------------------------------------------
    def __call__(self, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """Each entry's guarded run, oldest first (a hit is one call deep), else the slow path:
        what serves where no dispatch was generated (``run/dispatch.py``), and its calls with
        surplus or left-out arguments or a stance."""
        if CURRENT_STANCE.get() is DEFAULT:
            for guarded in self._fast:
                result = guarded(*args, **kwargs)
                if result is not MISS:
                    return result
        return self._slow_call(args, kwargs)

    @property
    def _entries(self) -> tuple[CacheEntry, ...]:
        return self.__entries

    @_entries.setter
    def _entries(self, entries: tuple[CacheEntry, ...]) -> None:
        self.__entries = entries
        self._fast = () if self.disabled or self._eager_reason is not None \
            else tuple(e.guarded for e in entries)
        install_dispatch(self, self._orig_fn, self._fast, [e.guard for e in entries],
                         CompiledFunction.__call__)

    def _slow_call(self, args: tuple, kwargs: dict) -> Any:
        if self.disabled:  # device arrays: NumPy on host copies (run/devices.py)
            return eager_call(self._orig_fn, self.device, args, kwargs)
        if self._eager_reason is not None:
            if not self._logged_eager:
                self._logged_eager = True
                get_logger("graph_breaks").info("%s is %s: it runs eagerly", self.title,
                                                self._eager_reason)
            return self._orig_fn(*args, **kwargs)
        if CURRENT_STANCE.get() is not DEFAULT:
            return self._call_with_stance(current_stance(), args, kwargs)
        return self._miss(args, kwargs)

    def _hit(self, args: tuple, kwargs: dict) -> CacheEntry | None:
        for entry in self._entries:
            if _safe_check(entry, args, kwargs):
                return entry
        return None

    def _call_with_stance(self, stance: Stance, args: tuple, kwargs: dict) -> Any:
        name = stance.stance
        if name == "force_eager":  # device arrays: NumPy on host copies (run/devices.py)
            return eager_call(self._orig_fn, self.device, args, kwargs)
        if stance.skip_guard_eval_unsafe:
            return self._unsafe_dispatch(args, kwargs)
        entry = self._hit(args, kwargs)
        if entry is not None:
            return entry.run(*args, **kwargs)
        if name == "eager_on_recompile":
            return eager_call(self._orig_fn, self.device, args, kwargs)
        if name == "fail_on_recompile" and self._entries:
            reasons = "\n".join(f"  - entry {i}: {'; '.join(e.guard.failures(args, kwargs))}"
                                for i, e in enumerate(self._entries))
            raise RuntimeError(f"Detected recompile of {self.title} while the stance is "
                               f"'fail_on_recompile'. Guard failures:\n{reasons}")
        if name in ("eager_then_compile", "aot_eager_then_compile") and not self._entries:
            if self._first_call is None:
                self._first_call = _input_sizes(self._orig_fn, args, kwargs)
                if name == "aot_eager_then_compile":
                    return self._run_once_with("aot_eager", args, kwargs)
                return eager_call(self._orig_fn, self.device, args, kwargs)
            for source, dims in _changed(self._first_call, _input_sizes(self._orig_fn, args, kwargs)).items():
                self._automatic.setdefault(source, set()).update(dims)
        return self._miss(args, kwargs, backend=stance.force_backend)

    def _run_once_with(self, backend: str, args: tuple, kwargs: dict) -> Any:
        probe = CompiledFunction(self._orig_fn, backend=backend, fullgraph=self.fullgraph)
        forget(probe)
        return probe._miss(args, kwargs)

    def _unsafe_dispatch(self, args: tuple, kwargs: dict) -> Any:
        """Check only the guards that tell the existing entries apart (unsafe: inputs outside
        every entry's assumptions are not detected)."""
        entries = self._entries
        if len(entries) == 1:
            return entries[0].run(*args, **kwargs)
        for entry, check in self._distinguishing_checks():
            try:
                if check(*args, **kwargs):
                    return entry.run(*args, **kwargs)
            except Exception:  # noqa: BLE001
                continue
        raise RuntimeError(f"{self.title}: no cache entry matches these inputs and "
                           "skip_guard_eval_unsafe=True forbids compiling a new one; leave "
                           "skip_guard_eval_unsafe for calls whose inputs were seen before")

    def _distinguishing_checks(self) -> list[tuple[CacheEntry, Callable[..., bool]]]:
        cached = self._distinguishing
        if cached is not None and cached[0] is self._entries:
            return cached[1]
        from ..guards import build_guard
        from ..capture.guard_facts import GuardSet
        from ..capture.runtime.api import signature_of
        keys = [{(f.kind, f.source.expr, repr(f.value)) for f in e.guard.facts} for e in self._entries]
        common = set.intersection(*keys) if keys else set()
        checks = []
        for entry in self._entries:
            subset = GuardSet()
            for fact in entry.guard.facts:
                if (fact.kind, fact.source.expr, repr(fact.value)) not in common:
                    subset.add(fact.kind, fact.source, fact.value, fact.extra)
            guard = build_guard(subset, signature_of(self._orig_fn), self._orig_fn,
                                entry.guard.namespace, title=self.title + " (distinguishing)",
                                cache_dir=usable_cache_dir())
            checks.append((entry, guard.check))
        self._distinguishing = (self._entries, checks)
        return checks

    def _miss(self, args: tuple, kwargs: dict, backend: Any = None) -> Any:
        start = time.perf_counter()
        from ..capture.signatures import signature_of
        try:
            signature_of(self._orig_fn).bind(*args, **kwargs)
        except TypeError:
            return self._orig_fn(*args, **kwargs)  # raises Python's own error
        with self._lock:
            for entry in self._entries:  # another thread may have compiled meanwhile
                if _safe_check(entry, args, kwargs):
                    break
            else:
                entry = self._compile_new(args, kwargs, backend)
                if entry is None:  # device arrays: NumPy on host copies (run/devices.py)
                    return eager_call(self._orig_fn, self.device, args, kwargs)
                _count_setup(entry, time.perf_counter() - start)
                try:
                    result = _first_run(entry, args, kwargs)
                finally:  # ASTCOMPILER_TRACE_DIR: the compile, its first call's JIT included
                    self._trace(entry, args, kwargs, time.time() - (time.perf_counter() - start))
                report_compile(self.call_title(args, kwargs), entry)  # log, slow-compile notice
                persist.after_run(entry)  # written to the persistent cache once it ran
                return result
        return entry.run(*args, **kwargs)

    def _trace(self, entry: CacheEntry, args: tuple, kwargs: dict, started: float) -> None:
        if not config.trace_dir:
            return
        index = self._entries.index(entry) if entry in self._entries else len(self._entries)
        trace.record_compile(self._orig_fn, self.title, entry, args, kwargs, index=index,
                             recompile_reasons=self._last_failure if index else [],
                             stance=current_stance().stance, started=started)

    def _failures(self, args: tuple, kwargs: dict) -> list[str]:
        reasons = []
        for index, entry in enumerate(self._entries):
            for reason in entry.guard.failures(args, kwargs)[:1]:
                reasons.append(f"{index}/{index}: {reason}")
        return reasons

    def _compile_new(self, args: tuple, kwargs: dict, backend: Any = None) -> CacheEntry | None:
        if self._entries:
            reasons = self._failures(args, kwargs)
            self._last_failure = reasons
            if config.error_on_recompile:
                raise RecompileError(f"recompiling {self.title} (config.error_on_recompile): "
                                     + "; ".join(reasons))
            if len(self._entries) >= config.recompile_limit:
                self._trace_limit(args, kwargs, reasons)
                if config.fail_on_recompile_limit_hit:
                    raise FailOnRecompileLimitHit(
                        f"{self.call_title(args, kwargs)} hit config.recompile_limit "
                        f"({config.recompile_limit}); "
                        f"last guard failure: {reasons[-1] if reasons else 'unknown'}")
                self._warn_limit(reasons, self.call_title(args, kwargs))
                return None
            for entry in self._entries:
                for source, dims in entry.guard.changed_sizes(args, kwargs).items():
                    self._automatic.setdefault(source, set()).update(dims)
            self._log_recompile(reasons, args, kwargs)
        if self._backend is None:
            self._backend = lookup_backend(self._backend_spec)
        pgo_on = pgo.enabled() and self.dynamic is None
        if pgo_on and not self._entries:
            for source, dims in pgo.load(self._orig_fn).items():
                self._automatic.setdefault(source, set()).update(dims)
        chosen = lookup_backend(backend) if backend is not None else self._backend
        from ..capture.sizes.dynamic import DynamicPolicy
        policy = DynamicPolicy.from_config(config, self.dynamic, self._automatic)
        build = functools.partial(build_entry, fullgraph=self.fullgraph, title=self.title,
                                  policy=policy, make_piece=_compiled_piece)
        spec = self._backend_spec if backend is None else backend
        entry = cuda_entry(self._orig_fn, args, kwargs, self.device, spec, build)  # devices.py
        if entry is EAGER:
            return None
        entry = entry or persist.build_or_load(  # a warm start: loaded, else built (written later)
            self._orig_fn, args, kwargs, lambda: build(self._orig_fn, args, kwargs, chosen),
            backend=spec, fullgraph=self.fullgraph, dynamic=self.dynamic, options=self.options,
            policy=policy, title=self.title, entries=self._entries)
        self._entries = self._entries + (entry,)
        if pgo_on and self._automatic:
            pgo.save(self._orig_fn, self._automatic)
        return entry

    def _log_recompile(self, reasons: list[str], args: tuple, kwargs: dict) -> None:
        """``recompiles``: the first failed guard of each entry (``+recompiles``: all of them)."""
        logger = get_logger("recompiles")
        if not logger.isEnabledFor(logging.INFO):
            return
        name = display_name(getattr(self._orig_fn, "__qualname__", self._orig_fn.__name__))
        logger.info("Recompiling function %s in %s triggered by the following guard failure(s):"
                    "\n%s", name, location(self._orig_fn), "\n".join(f"    - {r}" for r in reasons))
        if logger.isEnabledFor(logging.DEBUG):
            every = [f"    - {i}/{i}: {reason}" for i, entry in enumerate(self._entries)
                     for reason in entry.guard.failures(args, kwargs)]
            logger.debug("every failed guard of %s:\n%s", name, "\n".join(every))

    def _trace_limit(self, args: tuple, kwargs: dict, reasons: list[str]) -> None:
        """The first recompile-limit hit, in the compile trace (``ASTCOMPILER_TRACE_DIR``)."""
        if self._traced_limit or not config.trace_dir:
            return
        self._traced_limit = True
        trace.record_limit_hit(self._orig_fn, self.title, args, kwargs,
                               limit=config.recompile_limit, entries=len(self._entries),
                               reasons=reasons, outcome="raised"
                               if config.fail_on_recompile_limit_hit else "eager")

    def _warn_limit(self, reasons: list[str], title: str) -> None:
        if self._warned_limit:
            return
        self._warned_limit = True
        last = reasons[-1] if reasons else "unknown"
        warnings.warn(
            f"astcompiler: {title} hit "
            f"config.recompile_limit ({config.recompile_limit}); last guard failure: {last}. "
            "New inputs run eagerly from now on; existing entries keep serving matching calls.",
            RuntimeWarning, stacklevel=user_stacklevel())


def _input_sizes(fn: Callable, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Source name -> shape (arrays) or value (ints) of the arguments, for eager_then_compile."""
    from ..capture.runtime.api import signature_of
    bound = signature_of(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    sizes: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if type(value).__name__ == "ndarray":
            sizes[f"L[{name!r}]"] = tuple(value.shape)
        elif type(value) in (int, float):
            sizes[f"L[{name!r}]"] = value
    return sizes


def _changed(first: dict[str, Any], second: dict[str, Any]) -> dict[str, set[int]]:
    changed: dict[str, set[int]] = {}
    for source, before in first.items():
        after = second.get(source)
        if isinstance(before, tuple) and isinstance(after, tuple) and len(before) == len(after):
            dims = {i for i, (a, b) in enumerate(zip(before, after)) if a != b}
            if dims:
                changed[source] = dims
        elif type(before) is type(after) and type(before) in (int, float) \
                and not before == after:  # (NaN: changed)
            changed[source] = {-1}
    return changed


def _jit_listener() -> Any:
    """A context measuring the seconds numba spends compiling (or loading from its cache)
    while it is open: kernels compile at their first call (nothing when numba is not loaded)."""
    if "numba" not in sys.modules:
        return contextlib.nullcontext(None)
    from numba.core import event
    return event.install_listener("numba:compiler_lock", event.TimingListener())


def _count_setup(entry: CacheEntry, built: float) -> None:
    """``built``: the seconds from the miss to the new entry; what ``build_entry`` did not time
    itself (importing the pipeline on the first compile of a process, the backend lookup) is the
    phase ``setup``."""
    setup = max(built - entry.compile_time, 0.0)
    entry.phases["setup"] = entry.phases.get("setup", 0.0) + setup
    entry.compile_time += setup
    entry.first_call_time = built


def _clear_fp_flags() -> None:
    """Clears the FP status flags the compile itself left set (the compiler's own float and NumPy
    work: an invalid comparison, say). Nothing reads them but kernels: the first call's first
    kernel does not clear them before it runs (a flag found after it reruns the call with NumPy),
    so a stale one would send that call to NumPy, and its answer to NumPy's bits instead of the
    kernel's, depending on what the process compiled before (tests/cli/test_export.py)."""
    runtime = sys.modules.get("astcompiler.lower.numba.runtime")  # loaded by any numba entry
    if runtime is not None:
        runtime.fp_clear()


def _first_run(entry: CacheEntry, args: tuple, kwargs: dict) -> Any:
    """The first call of a new entry: numba's JIT of its kernels is added to ``compile_time``
    as the phase ``numba_jit``; ``first_call_time`` becomes the whole first call."""
    start = time.perf_counter()
    listener = None
    _clear_fp_flags()
    try:
        with _jit_listener() as listener:
            return entry.run(*args, **kwargs)
    finally:
        jit = listener.duration if listener is not None and listener.done else 0.0
        entry.phases["numba_jit"] = entry.phases.get("numba_jit", 0.0) + jit
        entry.compile_time += jit
        entry.first_call_time += time.perf_counter() - start


def report_compile(title: str, entry: CacheEntry) -> None:
    """After a new entry's first call: the ``compile`` log's lines for numba's JIT and the
    whole compile, and a one-line notice when the first call spent more than
    ``config.slow_compile_notice_s`` seconds compiling (0: never)."""
    logger = get_logger("compile")
    if logger.isEnabledFor(logging.INFO):
        if entry.phases.get("numba_jit"):  # numba compiled (or loaded) kernels at the first call
            logger.info("%s: numba_jit %s", title, seconds(entry.phases["numba_jit"]))
        kind = ("loaded from the persistent cache" if entry.loaded_from else
                "split at a graph break" if entry.pieces else
                "no graph, runs eagerly" if entry.graph is None else
                f"{entry.graph.op_count()} ops")
        logger.info("%s: compiled (%s) in %s (%s); first call %s", title, kind,
                    seconds(entry.compile_time),
                    ", ".join(f"{name} {seconds(value)}" for name, value in entry.phases.items()
                              if value or name != "numba_jit"),
                    seconds(entry.first_call_time))
    limit = config.slow_compile_notice_s
    if limit and entry.compile_time > limit and not _inside_first_run():
        jit = entry.phases.get("numba_jit", 0.0)
        logger.warning("astcompiler: %s spent %s compiling on its first call (numba's JIT %s); "
                       "later calls with such inputs reuse it. ASTCOMPILER_LOGS=compile shows "
                       "each phase; ac.config.slow_compile_notice_s sets when this notice shows",
                       title, seconds(entry.compile_time), seconds(jit))


def reference_name(compiled: CompiledFunction[Any, Any]) -> str:
    """The name pickle saves ``compiled`` under: its qualified name in its module when that
    finds it, else a module-level name bound to it; ``pickle.PicklingError`` saying what to
    do when neither does (a compiled function is pickled by reference, never by value)."""
    import pickle
    module_name = getattr(compiled, "__module__", None)
    qualname = getattr(compiled, "__qualname__", "")
    module = sys.modules.get(module_name) if isinstance(module_name, str) else None
    if module is not None:
        found: Any = module
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is compiled:
            return qualname
        for name, value in list(vars(module).items()):
            if value is compiled:
                return name
    raise pickle.PicklingError(
        f"cannot pickle {compiled!r}: compiled functions are pickled by reference (module and "
        f"name, as functions are) and neither {module_name}.{qualname} nor another name in "
        f"{module_name} is bound to it. What to do: compile a module-level function "
        f"(`@ac.compile` on it, or `name = ac.compile(fn)` at module level), not a local one")


def _inside_first_run() -> bool:
    """Whether this compile happens inside another entry's first call (a piece of a function
    split at a graph break): the outer function's notice covers it."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code is _first_run.__code__:
            return True
        frame = frame.f_back
    return False


def _safe_check(entry: CacheEntry, args: tuple, kwargs: dict) -> bool:
    try:
        return bool(entry.guard.check(*args, **kwargs))
    except Exception:  # noqa: BLE001
        return False


def _compiled_piece(fn: types.FunctionType, backend: Callable, dynamic: Any) -> CompiledFunction:
    """A piece of a function split at a graph break, compiled on its own."""
    return CompiledFunction(fn, backend=backend, dynamic=dynamic)


def forget(function: CompiledFunction) -> None:
    """Drop ``function`` from the registry of live compiled functions (``explain``'s probes)."""
    with _ALL_LOCK:
        _ALL.discard(function)


def all_compiled_functions() -> list[CompiledFunction]:
    with _ALL_LOCK:
        return list(_ALL)


def validate_function(fn: Any) -> types.FunctionType:
    """Reject what cannot be compiled with a clear message."""
    if isinstance(fn, CompiledFunction):
        return fn._orig_fn
    if not callable(fn):
        raise TypeError(f"astcompiler.compile expects a function, got {type(fn).__name__} {fn!r}")
    if isinstance(fn, types.MethodType):
        raise TypeError(f"astcompiler.compile cannot compile {fn!r}: the bound method of a C "
                        "function or callable object has no source to rewrite")
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"astcompiler.compile expects a Python function, got {type(fn).__name__}: "
                        "C functions and callable objects have no source to rewrite")
    return fn


def suspending_reason(fn: Any) -> str | None:
    """What ``fn`` is when its calls return a generator or a coroutine (its body runs later,
    step by step, outside any capture), else None."""
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        return f"generator function {fn.__qualname__!r}"
    if inspect.iscoroutinefunction(fn):
        return f"async function {fn.__qualname__!r}"
    return None


def compile_callable(target: Any, make: Callable[[types.FunctionType], CompiledFunction]) -> Any:
    """``make`` (a ``CompiledFunction`` factory) applied to what ``target`` runs.

    A bound method (``obj.method``, ``model.forward``) compiles its function and binds the
    result to the same ``__self__``: the call passes ``self`` as the first argument, so the
    guards check ``self`` (its identity, or its type for an ``ac.nn.Module``) and every attribute
    the code read. ``staticmethod``/``classmethod`` objects (decorated in a class body) stay
    descriptors around the compiled function."""
    if isinstance(target, (staticmethod, classmethod)):
        return type(target)(compile_callable(target.__func__, make))
    if isinstance(target, types.MethodType) and isinstance(
            target.__func__, (types.FunctionType, CompiledFunction)):
        return types.MethodType(make(validate_function(target.__func__)), target.__self__)
    return make(validate_function(target))
