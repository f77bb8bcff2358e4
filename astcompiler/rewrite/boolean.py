"""``and``/``or``/``not`` and conditional expressions become runtime calls.

Operands are wrapped in ``lambda:`` so evaluation stays lazy (short-circuit), and the runtime can
decide the truth of each operand: statically (guarded) or as a graph break on array data.
"""

from __future__ import annotations

import libcst as cst

from .templates import runtime_call, thunk


class RewriteBoolean(cst.CSTTransformer):
    def leave_BooleanOperation(self, original: cst.BooleanOperation,
                               updated: cst.BooleanOperation) -> cst.BaseExpression:
        name = "and_" if isinstance(updated.operator, cst.And) else "or_"
        call = runtime_call(name, [thunk(updated.left), thunk(updated.right)])
        return call.with_changes(lpar=updated.lpar, rpar=updated.rpar)

    def leave_UnaryOperation(self, original: cst.UnaryOperation,
                             updated: cst.UnaryOperation) -> cst.BaseExpression:
        if not isinstance(updated.operator, cst.Not):
            return updated
        return runtime_call("not_", [updated.expression]).with_changes(
            lpar=updated.lpar, rpar=updated.rpar)

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        call = runtime_call("ifexp", [updated.test, thunk(updated.body), thunk(updated.orelse)])
        return call.with_changes(lpar=updated.lpar, rpar=updated.rpar)
