"""How user files are named in origins, and the registry of synthetic functions (light: no
libcst, so dispatch and warm starts can name a function without parsing anything)."""

from __future__ import annotations

import os
import threading
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .loader import FunctionSource

_LOCK = threading.Lock()


def display_name(filename: str) -> str:
    if filename.startswith("<"):
        return filename
    return os.path.basename(filename)


# Functions the compiler builds from pieces of user functions (graph-break prefixes and resume
# functions): their definition is a libcst node made of the user's own statements, so origins
# still name the user's file and lines.
_SYNTHETIC: dict[tuple[types.CodeType, str], "FunctionSource"] = {}  # (code, its file): see
# rewrite/function.py, code objects of two files compare equal


def register_synthetic(code: types.CodeType, source: "FunctionSource") -> None:
    with _LOCK:
        _SYNTHETIC[code, code.co_filename] = source


def synthetic_source(code: types.CodeType) -> "FunctionSource | None":
    """The source registered for generated code (a piece of a split function), if any."""
    return _SYNTHETIC.get((code, code.co_filename))
