"""What every backend returns, and how backends are looked up by name.

A backend is ``backend(graph, example_inputs) -> callable``: the callable takes the graph's
placeholder values in order and returns the tuple of the output node's values.
Built-in backends return a ``CompiledGraph`` that also carries its generated source.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from ..graph import Graph
from ..logs import get_logger
from ..source.loading import user_stacklevel

Backend = Callable[[Graph, list], Callable[..., tuple]]


@dataclass
class CompiledGraph:
    """A runnable lowering of one graph, with the source a user can read."""

    fn: Callable[..., tuple]
    output_code: str = ""
    files: list[str] = field(default_factory=list)
    kernels: dict[str, str] = field(default_factory=dict)  # kernel name -> source
    # why nothing of the graph was compiled (no kernel, no compiled loop), or None: ``fn`` then
    # only repeats, op by op, what the user's function does, and the caller may run that
    # function itself instead (as fast, and exact by construction)
    prefer_original: str | None = None
    # how to build ``fn`` again in a new process from its generated files alone (no graph), for
    # the persistent entry cache; None: it cannot be (``lower/numba/rebuild.py``)
    rebuild: Any = None

    def __call__(self, *args: Any) -> tuple:
        return self.fn(*args)


_BACKENDS: dict[str, Callable[[], Backend]] = {}


def register_backend(name: str, loader: Callable[[], Backend]) -> None:
    """Register a backend by name; ``loader`` imports it lazily (``import astcompiler`` stays cheap)."""
    _BACKENDS[name] = loader


def list_backends() -> list[str]:
    return sorted(_BACKENDS)


def check_backend(backend: str | Backend) -> None:
    """Fail early (and cheaply: nothing is imported) on an unknown backend name."""
    if callable(backend):
        return
    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {list_backends()} "
                         f"or pass a callable backend(graph, example_inputs)")


def lookup_backend(backend: str | Backend) -> Backend:
    if callable(backend):
        return backend
    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {list_backends()} "
                         f"or pass a callable backend(graph, example_inputs)")
    return _BACKENDS[backend]()


@dataclass(frozen=True)
class PasteTemplate:
    """A generated forward function's body, for a caller to paste where it calls the function
    (``run/dispatch.py``); the backend's wrapper writer makes it and the backend sets it as
    ``forward.paste`` (a rebuilt forward: from the persisted entry), so no one reads the
    function's file back.

    ``lines``: the body dedented to column 0, one statement per line where it returns;
    ``returns``: ``(row, value, items)`` for each ``return value`` line (``items``: the values of
    a tuple display, else None); ``names``: every variable name the lines use (attributes and
    keyword names left out); ``stored``: the parameters the lines assign to."""

    params: tuple[str, ...]
    lines: tuple[str, ...]
    returns: tuple[tuple[int, str, tuple[str, ...] | None], ...]
    names: frozenset[str]
    stored: frozenset[str] = frozenset()

    def as_json(self) -> dict:
        """JSON-able fields (the persistent entry cache keeps them beside the wrapper)."""
        return {"params": list(self.params), "lines": list(self.lines),
                "returns": [[row, value, None if items is None else list(items)]
                            for row, value, items in self.returns],
                "names": sorted(self.names), "stored": sorted(self.stored)}

    @classmethod
    def from_json(cls, data: dict) -> "PasteTemplate":
        return cls(tuple(data["params"]), tuple(data["lines"]),
                   tuple((row, value, None if items is None else tuple(items))
                         for row, value, items in data["returns"]),
                   frozenset(data["names"]), frozenset(data["stored"]))


@dataclass(eq=False)
class RunFallback:
    """Switches a lowered graph to its eager twin when the backend's own compiler fails while the
    graph runs (numba types and compiles each kernel at its first call, not at lowering time).

    ``recover(error)`` decides, inside the generated code's ``except``: a compiler error
    (``is_backend_error``) switches this graph to ``eager`` for good (one warning, one log
    record) when re-running from the start is exact: nothing was written to an input yet (the
    error came from a line before ``effects_from``), or the inputs that the graph writes to were
    saved on this call (``mutated``: their positions; saved on the first call, in
    ``slow_call``). Anything else is the program's own error and propagates as in eager.
    Generated code tests ``slow`` first and routes the call through ``slow_call`` when set.
    """

    eager: Callable[..., tuple]
    is_backend_error: Callable[[BaseException], bool]
    title: str = "graph"
    instead: str = "op by op with NumPy"  # how ``eager`` runs the graph (for the warning)
    mutated: tuple[int, ...] = ()
    effects_from: tuple[str, int] | None = None  # (file, first line that writes to an input)
    # makes a backend error local (a kernel swapped for NumPy code computing the same values):
    # True when the fast code can run the call again
    localize: Callable[[BaseException], bool] | None = None
    slow: bool = False
    failure: BaseException | None = None
    _calls: threading.local = field(default_factory=threading.local)  # .saved: this call's copies

    def __post_init__(self) -> None:
        self.slow = bool(self.mutated)  # the first call saves what the graph overwrites

    def slow_call(self, fast: Callable[..., tuple], args: tuple) -> tuple:
        if self.failure is not None:
            return self.eager(*args)
        self.slow = False
        self._calls.saved = [(a, a.copy()) for a in (args[i] for i in self.mutated)
                             if hasattr(a, "copy") and hasattr(a, "shape")]
        done = False
        try:
            result = fast(*args)
            done = True
            return result
        finally:
            self._calls.saved = None
            if not done and self.failure is None:
                self.slow = True  # a user error on the first call: save again on the next one

    def recover(self, error: BaseException) -> bool:
        """True when ``error`` is the backend's and the call can re-run eagerly (inputs restored)."""
        if not self.is_backend_error(error):
            return False
        saved = getattr(self._calls, "saved", None)
        if saved is not None:
            import numpy as np
            for array, copy in saved:
                np.copyto(array, copy)
        elif not self._before_effects(error):  # re-running would repeat a write to an input
            get_logger("graph_breaks").info(
                "astcompiler: the backend could not compile %s for new argument types after it "
                "had written to an input; the error is raised (%s: %s)", self.title,
                type(error).__name__, error_summary(error))
            return False
        if self.localize is not None and self.localize(error):
            self._calls.retry = True  # the failure stays local: ``take_retry`` runs fast again
            return True
        first = self.failure is None
        self.failure, self.slow = error, True
        if first:
            self._report(error)
        return True

    def take_retry(self) -> bool:
        """True once after ``recover`` made a failure local: the caller's eager function then
        runs the fast code again instead."""
        retry = getattr(self._calls, "retry", False)
        self._calls.retry = False
        return retry

    def use_twin(self, error: BaseException, namespace: dict, name: str, twin: str) -> bool:
        """``namespace[name]`` (a kernel) failed to compile: calls of it go to ``namespace[twin]``,
        which computes the same (numba's ``prange`` twin -> the serial kernel). One log record."""
        if not self.is_backend_error(error):
            return False
        if namespace.get(name) is not namespace.get(twin):
            namespace[name] = namespace[twin]
            get_logger("graph_breaks").info(
                "astcompiler: numba could not compile %s (%s: %s); %s runs instead", name,
                type(error).__name__, error_summary(error), twin)
        return True

    def _before_effects(self, error: BaseException) -> bool:
        if self.effects_from is None:
            return True
        filename, line = self.effects_from
        tb = error.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                return tb.tb_lineno < line
            tb = tb.tb_next
        return False

    def _report(self, error: BaseException) -> None:
        import warnings
        message = (f"astcompiler: the backend could not compile {self.title} when it first ran "
                   f"({type(error).__name__}: {error_summary(error)}); this graph runs "
                   f"{self.instead} from now on")
        get_logger("graph_breaks").info("%s\n%s", message, error)
        warnings.warn(message, RuntimeWarning, stacklevel=user_stacklevel())

    def wrap(self, fast: Callable[..., tuple]) -> Callable[..., tuple]:
        """``fast`` behind the fallback (for lowerings whose code does not test ``slow`` itself)."""
        def run(*inputs: Any) -> tuple:
            if not self.slow:
                try:
                    return fast(*inputs)
                except Exception as error:  # noqa: BLE001 - recover() re-raises what is not ours
                    if not self.recover(error):
                        raise
            elif self.failure is None:
                return self.slow_call(run, inputs)
            return self.eager(*inputs)
        return run


def error_summary(error: BaseException) -> str:
    """The first line of a compiler error and, when it names one, the generated line it failed on."""
    import re
    lines = [line.rstrip() for line in str(error).strip().splitlines()]
    first = lines[0] if lines else ""
    for i, line in enumerate(lines):
        found = re.match(r'\s*File "(.+)", line (\d+):', line)
        if found is None:
            continue
        code = [c.strip() for c in lines[i + 1:i + 5]
                if c.strip() and c.strip() not in ("^", "<source elided>")
                and not c.strip().startswith("def ")]
        where = f"{found.group(1).rsplit('/', 1)[-1]}:{found.group(2)}"
        return f"{first} at {where}" + (f": {code[0]}" if code else "")
    return first
