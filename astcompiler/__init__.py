"""astcompiler: torch.compile for NumPy, by source rewriting.

``@astcompiler.compile`` rewrites a function's source (libcst) into graph-building code, captures
a graph of array operations on proxies, guards what it relied on with generated Python, and
lowers the graph to numba kernels. Everything generated can be read: ``astcompiler.show(fn)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar, overload

from . import exc, pytree, testing
from . import nn
from .capture.state import HANDLERS, is_compiling
from .config import config
from .capture.sizes.dynamic import MARKERS, DimMarker
from .exc import ForbiddenInCompiledCode, GraphBreak
from .lower import check_backend, list_backends, register_backend
from .run import CompiledFunction, ExplainOutput, all_compiled_functions, explain, show
from .run.stance import set_stance
from .run.compiled import compile_callable, validate_function
from .gradients import grad, jvp, value_and_grad, vjp

if TYPE_CHECKING:
    from typing import ParamSpec

    from .nn.compile_support import OptimizedModule
    from .nn.modules.module import Module

    _P = ParamSpec("_P")

__version__ = "0.1.0"

F = TypeVar("F", bound=Callable[..., Any])
_R = TypeVar("_R")


@overload
def compile(fn: Module, *, backend: Any = ..., fullgraph: bool = ...,  # type: ignore[overload-overlap]
            dynamic: bool | None = ..., device: str | None = ...,  # (a Module is callable too)
            options: dict[str, Any] | None = ..., disable: bool = ...) -> OptimizedModule: ...
@overload
def compile(fn: Callable[_P, _R], *, backend: Any = ..., fullgraph: bool = ...,
            dynamic: bool | None = ..., device: str | None = ...,
            options: dict[str, Any] | None = ..., disable: bool = ...
            ) -> CompiledFunction[_P, _R]: ...
@overload
def compile(fn: None = ..., *, backend: Any = ..., fullgraph: bool = ...,
            dynamic: bool | None = ..., device: str | None = ...,
            options: dict[str, Any] | None = ..., disable: bool = ...
            ) -> Callable[[Callable[_P, _R]], CompiledFunction[_P, _R]]: ...


def compile(fn: Any = None, *, backend: Any = "numba", fullgraph: bool = False,
            dynamic: bool | None = None, device: str | None = None,
            options: dict[str, Any] | None = None,
            disable: bool = False) -> Any:
    """Compile a NumPy function. Use as ``@compile``, ``@compile(backend="eager")`` or
    ``compile(fn, fullgraph=True)``.

    backend: "numba" (default), "eager", "aot_eager", or a callable ``backend(graph, inputs)``.
    fullgraph: raise ``astcompiler.exc.Unsupported`` instead of running eagerly when something
    cannot be captured.
    """
    check_backend(backend)  # an unknown backend name fails here, at decoration time
    if device not in (None, "cpu", "cuda"):
        raise ValueError(f"device={device!r} is not supported (None, 'cpu' or 'cuda')")
    if device == "cuda" and backend != "numba":
        raise ValueError(f"device='cuda' needs backend='numba', not {backend!r}")
    if device == "cuda":  # no GPU and no simulator: say how to enable either, now
        from .lower.numba.gpu.devices import require_cuda
        require_cuda()

    def decorate(target: Any) -> Any:
        if _is_module(target):
            from .nn.compile_support import OptimizedModule
            return OptimizedModule(target, {"backend": backend, "fullgraph": fullgraph,
                                            "dynamic": dynamic})
        return compile_callable(target, lambda original: CompiledFunction(
            original, backend=backend, fullgraph=fullgraph, dynamic=dynamic, device=device,
            options=options, disable=disable))

    if fn is None:
        return decorate
    return decorate(fn)


@overload
def nonstrict_trace(traceable_fn: F) -> F: ...
@overload
def nonstrict_trace(traceable_fn: None = ..., **kwargs: Any) -> Any: ...


def nonstrict_trace(traceable_fn: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Mark a function to be traced non-strictly: inside compiled code its call is one opaque
    node; its body is traced by operator overloading (not rewritten), so anything may happen in
    it, ``graph_break()`` included. Returns a new wrapper; ``traceable_fn`` itself is unchanged."""
    if traceable_fn is None:
        traceable_fn = kwargs.pop("traceable_fn", None)
    if kwargs:
        raise TypeError(f"nonstrict_trace() got unexpected keyword arguments {sorted(kwargs)}")
    assert callable(traceable_fn), "nonstrict_trace expects a callable"
    import functools

    @functools.wraps(traceable_fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        return traceable_fn(*args, **kw)

    wrapper.__ac_nonstrict__ = traceable_fn  # type: ignore[attr-defined]
    return wrapper


def allow_in_graph(fn: F) -> F:
    """Put calls of ``fn`` in the graph as one node, called as is at run time (arrays and
    primitives in, arrays out); its body is never traced."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    wrapper.__ac_allow_in_graph__ = fn  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def _is_module(value: Any) -> bool:
    from .nn.modules.module import Module
    return isinstance(value, Module)


def graph_break() -> None:
    """An explicit graph break; a no-op when run eagerly."""


def disable(fn: F) -> F:
    """Mark ``fn`` as never compiled: called from compiled code it is a graph break and runs
    eagerly."""
    fn.__ac_disabled__ = True  # type: ignore[attr-defined]
    return fn


def mark_dynamic(x: Any, dim: int | Sequence[int], *, min: int | None = None,
                 max: int | None = None) -> None:
    """Make dimension(s) ``dim`` of array ``x`` dynamic from the first compile. It is an error
    (``ConstraintViolationError``) if the compiled code specializes it, or if its size is outside
    ``[min, max]``."""
    MARKERS.mark(x, dim, DimMarker("dynamic", min, max, strict=True))


def maybe_mark_dynamic(x: Any, dim: int | Sequence[int]) -> None:
    """Like ``mark_dynamic``, but specializing the dimension is allowed (no error)."""
    MARKERS.mark(x, dim, DimMarker("maybe"))


def mark_unbacked(x: Any, dim: int | Sequence[int], *, strict: bool = False) -> None:
    """Dynamic with no hint and no 0/1 specialization: a guard that needs the size's value raises
    ``DataDependentError``; with ``strict=True`` any specialization is an error."""
    MARKERS.mark(x, dim, DimMarker("unbacked", strict=strict))


def mark_static(x: Any, dim: int | Sequence[int] | None = None) -> None:
    """Keep dimension(s) ``dim`` (all when None) of ``x`` static, even when they change."""
    MARKERS.mark(x, dim, DimMarker("static"))


def reset() -> None:
    """Forget every compiled entry of every compiled function."""
    for compiled in all_compiled_functions():
        compiled.reset()


def _graph_break_handler(runtime: Any) -> None:
    raise GraphBreak("explicit graph break: astcompiler.graph_break()")


def _is_compiling_handler(runtime: Any) -> bool:
    return True


def _forbidden_handler(name: str) -> Any:
    def handler(runtime: Any, *args: Any, **kwargs: Any) -> None:
        raise ForbiddenInCompiledCode(f"Attempt to trace forbidden callable astcompiler.{name}: "
                                      "call it before the compiled function, not inside it")
    return handler


HANDLERS[graph_break] = _graph_break_handler
HANDLERS[nonstrict_trace] = lambda runtime, *args, **kwargs: nonstrict_trace(*args, **kwargs)
HANDLERS[is_compiling] = _is_compiling_handler
for _fn in (mark_dynamic, maybe_mark_dynamic, mark_unbacked, mark_static, set_stance):
    HANDLERS[_fn] = _forbidden_handler(_fn.__name__)

# the public API (DESIGN.md section 2); ``dir(astcompiler)`` lists these only
__all__ = [
    "compile", "nonstrict_trace", "disable", "allow_in_graph", "graph_break", "is_compiling",
    "mark_dynamic", "maybe_mark_dynamic", "mark_unbacked", "mark_static", "set_stance",
    "config", "explain", "show", "reset",
    "exc", "pytree", "nn", "testing",
    "CompiledFunction", "ExplainOutput", "list_backends", "register_backend",
    "grad", "value_and_grad", "vjp", "jvp",
]


def __dir__() -> list[str]:
    return sorted(__all__ + ["__version__"])
