"""Pass 1: tag every statement line with its origin (``# model.py:12``).

Runs on the original nodes (positions known); later passes keep the tags because they only
change expressions inside statements.
"""

from __future__ import annotations

import libcst as cst


def origin_comment(display: str, line: int) -> cst.TrailingWhitespace:
    return cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "),
                                  comment=cst.Comment(f"# {display}:{line}"),
                                  newline=cst.Newline())


class TagOrigins(cst.CSTTransformer):
    def __init__(self, positions: dict, display: str) -> None:
        super().__init__()
        self.positions = positions
        self.display = display

    def _line(self, node: cst.CSTNode) -> int | None:
        pos = self.positions.get(node)
        return pos.start.line if pos is not None else None

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        line = self._line(original)
        if line is None:
            return updated
        return updated.with_changes(trailing_whitespace=origin_comment(self.display, line))

    def _tag_block(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        line = self._line(original)
        body = getattr(updated, "body", None)
        if line is not None and isinstance(body, cst.SimpleStatementSuite):  # `if c: x = 1`
            return updated.with_changes(body=body.with_changes(
                trailing_whitespace=origin_comment(self.display, line)))
        if line is None or not isinstance(body, cst.IndentedBlock):
            return updated
        return updated.with_changes(body=body.with_changes(header=origin_comment(self.display, line)))

    # compound statements: the origin goes on the header line (``if c:  # model.py:3``)
    leave_If = leave_Else = leave_For = leave_While = _tag_block
    leave_FunctionDef = leave_With = leave_Try = leave_ClassDef = _tag_block
