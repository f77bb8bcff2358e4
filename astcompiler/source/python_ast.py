"""``ast.parse`` for the compiler's own generated code, safe to call from several threads.

CPython 3.11 before 3.11.8 keeps the recursion depth of its AST conversion in a process-wide
counter: two threads parsing at once can raise ``SystemError: AST constructor recursion depth
mismatch`` (CPython gh-106905). The compiler parses generated code (dispatch, kernels) while
compiling, which users may do from several threads, so every such parse takes one lock.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["parse"]

_LOCK = threading.Lock()


def parse(text: str, mode: str = "exec") -> ast.AST:
    """``ast.parse(text, mode=mode)`` under the process-wide parse lock."""
    with _LOCK:
        return ast.parse(text, mode=mode)
