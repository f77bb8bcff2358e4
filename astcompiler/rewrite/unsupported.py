"""Statements capture cannot run become an explicit graph break right before them.

``try``, ``with``, ``global``, ``nonlocal`` (at the top level), ``yield``, ``async`` constructs and
class definitions get ``__ac.unsupported("<what>")`` in front, so the break names the user's line
and says what to do. The statement itself is kept (never reached during capture). A generator
function (or coroutine) also gets the break as its first statement: it runs only as Python.
"""

from __future__ import annotations

import libcst as cst

from .structured import SUSPENDING, in_own_scope, suspends
from .templates import body_start, runtime_call, statement, string

_COMPOUND = {
    cst.Try: "a `try` block",
    cst.With: "a `with` block",
    cst.ClassDef: "a class definition",
}


def _break_before(what: str, node: cst.BaseStatement) -> cst.FlattenSentinel:
    marker = statement(runtime_call("unsupported", [string(what)]))
    trailing = getattr(node, "trailing_whitespace", None)
    if trailing is None and isinstance(getattr(node, "body", None), cst.IndentedBlock):
        trailing = node.body.header
    if trailing is not None:
        marker = marker.with_changes(trailing_whitespace=trailing)
    return cst.FlattenSentinel([marker, node])


def _break_on_entry(node: cst.FunctionDef) -> cst.FunctionDef:
    """A generator's body starts with the break: driving a generator made during capture
    breaks before any of its statements runs (its loops are never converted or unrolled)."""
    what = "a generator (`yield`) or `await`"
    body = node.body
    if isinstance(body, cst.SimpleStatementSuite):  # `def g(): yield 1`
        small = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body.body]
        body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=small)],
                                 header=body.trailing_whitespace)
    marker = statement(runtime_call("unsupported", [string(what)])).with_changes(
        trailing_whitespace=body.header)
    lines = list(body.body)
    start = body_start(lines)
    lines[start:start] = [marker]
    return node.with_changes(body=body.with_changes(body=lines))


class MarkUnsupported(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self.depth -= 1
        if updated.asynchronous is not None:
            return _break_before("an `async def`", updated)
        if suspends(updated):
            return _break_on_entry(updated)
        return updated

    def _compound(self, original, updated):
        for kind, what in _COMPOUND.items():
            if isinstance(updated, kind):
                return _break_before(what, updated)
        return updated

    leave_Try = _compound
    leave_With = _compound
    leave_ClassDef = _compound

    def leave_For(self, original: cst.For, updated: cst.For):
        if updated.asynchronous is not None:
            return _break_before("an `async for` loop", updated)
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine):
        for small in updated.body:
            if isinstance(small, cst.Global):
                return _break_before("a `global` statement (writes to module globals)", updated)
            if isinstance(small, cst.Nonlocal) and self.depth <= 1:
                return _break_before("a `nonlocal` statement", updated)
        if in_own_scope([updated], SUSPENDING):
            return _break_before("a generator (`yield`) or `await`", updated)
        return updated
