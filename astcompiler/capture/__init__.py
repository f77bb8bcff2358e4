"""Capture: run graph-building code on proxies to record a Graph, guard facts and outputs.

Only the cheap per-thread state is imported here; the capture machinery (libcst, sympy) loads
with ``astcompiler.capture.capture`` on the first compile.
"""

from .state import HANDLERS, compiling_scope, is_compiling

__all__ = ["HANDLERS", "compiling_scope", "is_compiling"]
