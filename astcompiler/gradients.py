"""``ac.grad``, ``ac.value_and_grad`` and ``ac.vjp`` (JAX's API on NumPy code).

``ac.grad(f)`` is a plain function. Compiled (``ac.compile(ac.grad(f))``, or called from a
compiled function), its call is captured as ``f``'s forward graph followed by the backward
graph (``autodiff/``): one entry, one joint graph. Called as is, it captures the same joint
graph once per input signature and runs it op by op on NumPy (the ``eager`` backend): exact,
for debugging, and a graph break in ``f`` is an error naming the line.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # autodiff/ imports the capture machinery (sympy): loaded at the first ac.grad
    from .autodiff import GradSpec
from .capture.state import HANDLERS
from .exc import Unsupported

_EAGER_LOCK = threading.Lock()
_ACTIVE = threading.local()  # per thread: the gradients running eagerly now


def _spec(*args: Any) -> "GradSpec":
    from .autodiff import GradSpec

    return GradSpec(*args)


def _title(name: str, fn: Any) -> str:
    """How the compile log and the slow-compile notice name ``ac.compile(ac.grad(fn))``: the
    user's function and its line (``value_and_grad(loss) (model.py:12)``), not this file."""
    from .run.compiled import location
    return f"{name}({getattr(fn, '__qualname__', fn)}) ({location(fn)})"


def _wrapper(spec: "GradSpec", name: str) -> Callable[..., Any]:
    def gradient(*args: Any, **kwargs: Any) -> Any:
        return spec(*args, **kwargs)

    fn_name = getattr(spec.fn, "__name__", "fn")
    gradient.__name__ = f"{name}_{fn_name}"
    gradient.__qualname__ = f"{name}({getattr(spec.fn, '__qualname__', fn_name)})"
    gradient.__doc__ = f"{name} of {fn_name} with respect to argnums={spec.argnums}"
    gradient.__ac_transform__ = spec.__ac_capture__  # type: ignore[attr-defined]
    gradient.__ac_title__ = (  # type: ignore[attr-defined]
        lambda *args, **kwargs: _title(name, spec.fn))
    spec.wrapper = gradient  # type: ignore[attr-defined]
    return gradient


def _run_eagerly(spec: GradSpec, args: tuple, kwargs: dict) -> Any:
    """Outside a capture: the joint graph on the eager backend (one cache per gradient)."""
    with _EAGER_LOCK:
        compiled = getattr(spec, "eager_compiled", None)
        if compiled is None:
            from .run.compiled import CompiledFunction, forget
            compiled = CompiledFunction(spec.wrapper, backend="eager", fullgraph=True)
            forget(compiled)
            spec.eager_compiled = compiled  # type: ignore[attr-defined]
    active = _ACTIVE.__dict__.setdefault("specs", set())
    if id(spec) in active:  # the capture failed and its eager fallback calls us again
        if spec.mode != "vjp":
            spec.fn(*args, **kwargs)  # the user's own error (NumPy's IndexError, ...) if any
        raise _capture_failure(compiled)
    active.add(id(spec))
    from .run.stance import CURRENT_STANCE, DEFAULT
    token = CURRENT_STANCE.set(DEFAULT)  # the stance is the caller's compile's, not this one's
    try:
        return compiled(*args, **kwargs)
    except Unsupported as error:  # about the differentiated call itself: raised as itself
        for cause in (error.__cause__, error.__context__):
            if cause is not None and getattr(cause, "__ac_grad_error__", False):
                if isinstance(cause, Unsupported):  # its message names the user's line
                    cause.user_stack = [s for s in cause.user_stack if s[0] != __file__]
                raise cause from None
        raise
    finally:
        CURRENT_STANCE.reset(token)
        active.discard(id(spec))


def _capture_failure(compiled: Any) -> Exception:
    """Why the joint graph could not be captured (the eager entry's break reason)."""
    reasons = [e.break_reason for e in compiled.entries if e.break_reason is not None]
    reason = reasons[-1] if reasons else None
    return Unsupported(f"{compiled.title}: the function and its backward pass must be captured as "
                       f"one graph; {reason.reason if reason is not None else 'capture failed'}",
                       user_stack=reason.user_stack if reason is not None else None)


def grad(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of ``fn`` (which returns a float scalar) with respect to the arguments
    ``argnums``: each a float array, a pytree of them, or an ``ac.nn.Module`` (a dict of its
    parameters' gradients keyed by ``named_parameters()`` names). With ``has_aux=True`` ``fn``
    returns ``(value, aux)`` and the gradient function returns ``(grads, aux)``."""
    return _wrapper(_spec(fn, argnums, has_aux, "grad", _run_eagerly), "grad")


def value_and_grad(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """Like ``grad``, returning ``(value, grads)`` (``((value, aux), grads)`` with ``has_aux``)."""
    return _wrapper(_spec(fn, argnums, has_aux, "value_and_grad", _run_eagerly),
                    "value_and_grad")


def vjp(fn: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., tuple]]:
    """``(fn(*primals), vjp_fn)``: ``vjp_fn(cotangent)`` (a cotangent shaped like the output)
    returns one cotangent per primal, as a tuple."""
    out = fn(*primals)
    spec = _spec(fn, tuple(range(len(primals))), False, "vjp", _run_eagerly)
    pull = _wrapper(spec, "vjp")

    def vjp_fn(cotangent: Any) -> tuple:
        return pull(*primals, cotangent)

    return out, vjp_fn


def jvp(fn: Callable[..., Any], primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    """``(fn(*primals), J @ tangents)``: the forward-mode derivative of ``fn`` along
    ``tangents`` (one per primal, shaped like it). Computed as the transpose of the linear map
    ``vjp_fn`` (a VJP of the VJP: every backward rule is linear in its cotangent and made of
    differentiable ops), so it needs no forward-mode rules; it costs two backward passes."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    out = fn(*primals)
    n = len(primals)
    pull = _wrapper(_spec(fn, tuple(range(n)), False, "vjp", _run_eagerly), "vjp")
    push = _wrapper(_spec(pull, (n,), False, "vjp", _run_eagerly), "vjp")  # d pull / d cotangent

    import numpy as np
    (tangent_out,) = push(*primals, np.zeros_like(out), tangents)
    return out, tangent_out


def _building(api: Callable[..., Any]) -> Callable[..., Any]:
    """Inside compiled code ``ac.grad(f)`` just builds the gradient function (its call is
    captured)."""
    def handler(runtime: Any, *args: Any, **kwargs: Any) -> Any:
        return api(*args, **kwargs)
    return handler


HANDLERS[grad] = _building(grad)
HANDLERS[value_and_grad] = _building(value_and_grad)

__all__ = ["grad", "jvp", "value_and_grad", "vjp"]
