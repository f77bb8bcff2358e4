"""``a is b`` / ``a is not b`` become ``__ac.is_(a, b)`` / ``__ac.is_not(a, b)``.

Identity of traced values is decided by the runtime (a traced array is never ``None``).
Chained comparisons that mix ``is`` with other operators are left to Python.
"""

from __future__ import annotations

import libcst as cst

from .templates import runtime_call


class RewriteIdentity(cst.CSTTransformer):
    def leave_Comparison(self, original: cst.Comparison,
                         updated: cst.Comparison) -> cst.BaseExpression:
        if len(updated.comparisons) != 1:
            return updated
        target = updated.comparisons[0]
        if isinstance(target.operator, cst.Is):
            name = "is_"
        elif isinstance(target.operator, cst.IsNot):
            name = "is_not"
        else:
            return updated
        return runtime_call(name, [updated.left, target.comparator]).with_changes(
            lpar=updated.lpar, rpar=updated.rpar)
