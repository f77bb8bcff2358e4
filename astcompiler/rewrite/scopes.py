"""A visitor base that stays in one scope: nested functions, classes and lambdas run later (or
never), so what they contain does not belong to the statements being looked at."""

from __future__ import annotations

import libcst as cst


class SkipNestedScopes(cst.CSTVisitor):
    """Does not descend into ``def``, ``class`` or ``lambda``."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False
