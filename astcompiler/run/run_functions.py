"""Helpers of generated run functions, shared by entries built now and entries loaded from the
persistent cache (light: no capture machinery)."""

from __future__ import annotations

from typing import Callable

from ..guards.codegen import copy_defaults
from ..logs import get_logger


def note_once(title: str) -> Callable[[BaseException], None]:
    """Log (once per entry) that the graph raised and the call ran the original function."""
    seen: list[bool] = []

    def note(error: BaseException) -> None:
        if not seen:
            seen.append(True)
            get_logger("graph_breaks").info(
                "%s: the graph raised %s: %s; this call runs the original function (its side "
                "effects and its exception, in Python's order)", title, type(error).__name__, error)

    return note


def name_run_functions(made: tuple[Callable, ...], original: Callable) -> None:
    """Run functions take the original's defaults and name (Python's messages name it)."""
    for function in made:
        copy_defaults(function, original)
        name_like(function, original)


def name_like(made: Callable, original: Callable) -> None:
    """A call with missing or unexpected arguments fails in ``made`` first: Python's message
    must name the user's function, as the plain call's does."""
    name = getattr(original, "__name__", None)
    qualname = getattr(original, "__qualname__", name)
    if isinstance(name, str) and isinstance(qualname, str):
        made.__code__ = made.__code__.replace(co_name=name, co_qualname=qualname)
        made.__name__, made.__qualname__ = name, qualname
