"""Errors seen by the user: where a graph break happened and whose error an exception is."""

from __future__ import annotations

import os
import types
from typing import Callable

from ..exc import Unsupported
from ..source.origins import SOURCE_MAPS


def attach_user_stack(error: Unsupported, tb: types.TracebackType | None) -> None:
    """Fill ``error.user_stack`` from the generated frames in its traceback."""
    if error.user_stack:
        return
    import linecache

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


def raised_by_astcompiler(error: BaseException) -> bool:
    """The innermost frame is astcompiler's own code (not NumPy, not the user's)."""
    if getattr(error, "__ac_from_numpy__", False):
        return False
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tb = error.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and os.path.abspath(last).startswith(package + os.sep)


def is_user_error(error: Exception) -> bool:
    """Errors NumPy or Python raise for the user's own code: running eagerly re-raises them."""
    return isinstance(error, (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError,
                              ArithmeticError, NameError, AttributeError))
