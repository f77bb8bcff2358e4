"""``ac.set_stance``: how compiled functions behave right now (function, context manager,
decorator).

The stance lives in a context variable: it is per thread (and per asyncio task), so one user of
the library cannot change another's. As a plain call it stays in force for the current context;
as a ``with`` block or a decorator it applies only inside.
"""

from __future__ import annotations

import contextvars
import functools
from dataclasses import dataclass
from typing import Any, Callable

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
           "eager_then_compile", "aot_eager_then_compile")


@dataclass(frozen=True)
class Stance:
    stance: str = "default"
    skip_guard_eval_unsafe: bool = False
    force_backend: Any = None


DEFAULT = Stance()
CURRENT_STANCE: contextvars.ContextVar[Stance] = contextvars.ContextVar("astcompiler_stance",
                                                                 default=DEFAULT)


# non-empty once any stance was set, in any thread: until then a compiled call's dispatch
# (``run/dispatch.py``) skips reading the context variable (the stance is then the default)
EVER_SET: list[bool] = []


def current_stance() -> Stance:
    return CURRENT_STANCE.get()


class set_stance:
    """Set the compile stance: ``default``, ``force_eager`` (run the original functions),
    ``eager_on_recompile`` (use a matching entry, else run eagerly; never compile),
    ``fail_on_recompile`` (RuntimeError instead of recompiling), ``eager_then_compile`` and
    ``aot_eager_then_compile`` (the first call runs eagerly / with aot_eager, the second compiles
    with every size that differed dynamic). ``skip_guard_eval_unsafe=True`` checks only the guards
    that tell existing entries apart. ``force_backend`` compiles with that backend (default stance
    only)."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend: Any = None) -> None:
        if stance not in STANCES:
            raise RuntimeError(f"invalid astcompiler stance {stance!r}; choose one of {STANCES}")
        if force_backend is not None and stance != "default":
            raise RuntimeError(f"force_backend can only be used with the 'default' stance, "
                               f"not {stance!r}")
        if force_backend is not None:
            from ..lower import check_backend
            check_backend(force_backend)
        self.new = Stance(stance, skip_guard_eval_unsafe, force_backend)
        if not EVER_SET:
            EVER_SET.append(True)  # before the context variable changes
        self._token: contextvars.Token | None = CURRENT_STANCE.set(self.new)

    def __enter__(self) -> "set_stance":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            CURRENT_STANCE.reset(self._token)
            self._token = None

    def __call__(self, fn: Callable) -> Callable:
        """As a decorator: nothing changes outside the decorated function's calls."""
        self.__exit__()
        new = self.new

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            token = CURRENT_STANCE.set(new)
            try:
                return fn(*args, **kwargs)
            finally:
                CURRENT_STANCE.reset(token)
        return wrapper
