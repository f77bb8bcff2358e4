"""Functions that read or rebind their own frame run eagerly, as a whole.

``locals()``, ``vars()`` and ``dir()`` without arguments, ``eval``/``exec`` without explicit
namespaces and ``sys._getframe``/``inspect.currentframe`` see the function's local variables;
``global`` and (in the compiled function itself) ``nonlocal`` rebind names outside it. The
rewritten code moves variables into nested functions and the pieces of a graph-break split, so
none of these would see what Python shows. The rule replaces the body of such a function by one
explicit break, tagged with the ``def`` line: the capture stops before anything runs, no split is
possible there (the break is on no statement), and the whole call runs in plain Python::

    def f(x):                          def f(x):
        y = x + 1              ->          __ac.unsupported("`locals()` (...)")  # model.py:1
        return locals()
"""

from __future__ import annotations

import libcst as cst

from .templates import runtime_call, statement, string

_NO_ARGUMENT_FRAME_READERS = {"locals", "vars", "dir"}
_NAMESPACE_DEFAULTING = {"eval", "exec"}
_FRAME_ATTRIBUTES = {"_getframe", "currentframe"}


class _FrameUse(cst.CSTVisitor):
    """The first construct of a function that needs its real frame (``None`` when none)."""

    def __init__(self) -> None:
        self.found: str | None = None
        self._depth = 0

    def _note(self, what: str) -> None:
        if self.found is None:
            self.found = what

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth += 1

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth -= 1

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            if func.value in _NO_ARGUMENT_FRAME_READERS and not node.args:
                self._note(f"`{func.value}()`")
            elif func.value in _NAMESPACE_DEFAULTING and len(node.args) < 2:
                self._note(f"`{func.value}()` without explicit globals and locals")
        elif isinstance(func, cst.Attribute) and func.attr.value in _FRAME_ATTRIBUTES:
            self._note(f"`{func.attr.value}()`")

    def visit_Global(self, node: cst.Global) -> None:
        if self._depth <= 1:
            self._note("a `global` statement")

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        if self._depth <= 1:
            self._note("a `nonlocal` statement")


def frame_use(definition: cst.FunctionDef) -> str | None:
    """What in ``definition`` needs the function's real frame, if anything."""
    visitor = _FrameUse()
    definition.visit(visitor)
    return visitor.found


class RunEagerlyIfFrameIsUsed(cst.CSTTransformer):
    """The rule (see the module docstring); applied to one function definition."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # the definition is judged as a whole, nested functions included

    def leave_FunctionDef(self, original: cst.FunctionDef,
                          updated: cst.FunctionDef) -> cst.FunctionDef:
        what = frame_use(updated)
        if what is None:
            return updated
        reason = f"{what} (it needs the function's own frame: the whole function runs eagerly)"
        marker = statement(runtime_call("unsupported", [string(reason)]))
        body = updated.body
        if isinstance(body, cst.IndentedBlock):
            if body.header.comment is not None:
                marker = marker.with_changes(trailing_whitespace=body.header)
            return updated.with_changes(body=body.with_changes(body=[marker]))
        return updated.with_changes(body=cst.IndentedBlock(body=[marker]))
