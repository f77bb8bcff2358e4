"""``and``/``or``/``not`` and conditional expressions become runtime calls.

Operands are wrapped in ``lambda:`` so evaluation stays lazy (short-circuit), and the runtime can
decide the truth of each operand: statically (guarded) or as a branch region on array data.
Where only the truth of ``a and b`` is used (the test of an ``if``, a ``while`` or a conditional
expression, the operand of ``not``, and operands of those), it becomes ``and_test``/``or_test``,
which return the truth instead of the deciding operand: operands of different types may then
meet on array data.
"""

from __future__ import annotations

import libcst as cst

from .templates import RUNTIME, runtime_call, thunk

_WHILE_TEST = "while_test_"  # the loop test function made by structured.py (it returns the test)


def _is_runtime_call(node: cst.Call, name: str) -> bool:
    func = node.func
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
        and func.value.value == RUNTIME and func.attr.value == name


class RewriteBoolean(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self._tests: set[int] = set()  # ids of original expressions whose truth alone is used
        self._chains = 0  # chained comparisons rewritten so far (their parameter names)

    # ----- which expressions are tests (marked top-down, before their operands are visited) ----
    def _mark(self, node: cst.CSTNode | None) -> None:
        if node is not None:
            self._tests.add(id(node))

    def visit_Call(self, node: cst.Call) -> None:
        if _is_runtime_call(node, "if_stmt") and node.args:
            self._mark(node.args[0].value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value.startswith(_WHILE_TEST):
            for line in getattr(node.body, "body", ()):
                for small in getattr(line, "body", ()):
                    if isinstance(small, cst.Return):
                        self._mark(small.value)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._mark(node.test)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._mark(node.expression)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if id(node) in self._tests:
            self._mark(node.left)
            self._mark(node.right)

    # ----- the rewrites ------------------------------------------------------------------------
    def leave_BooleanOperation(self, original: cst.BooleanOperation,
                               updated: cst.BooleanOperation) -> cst.BaseExpression:
        name = "and_" if isinstance(updated.operator, cst.And) else "or_"
        if id(original) in self._tests:
            name += "test"
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

    def leave_Comparison(self, original: cst.Comparison,
                         updated: cst.Comparison) -> cst.BaseExpression:
        """``a < b < c`` is ``a < b and b < c`` with ``b`` evaluated once, in Python's order:
        each operand but the last is the argument of a lambda called when it is reached,
        ``(lambda c0: (lambda c1: __ac.and_(lambda: c0 < c1, lambda: c1 < c))(b))(a)``."""
        steps = updated.comparisons
        if len(steps) < 2:
            return updated
        self._chains += 1
        name = "and_test" if id(original) in self._tests else "and_"
        params = [f"__ac_chain{self._chains}_{j}" for j in range(len(steps))]
        operands = [updated.left] + [step.comparator for step in steps]

        def compare(j: int, right: cst.BaseExpression) -> cst.Comparison:  # operand j-1 op_j right
            return cst.Comparison(left=cst.Name(params[j - 1]),
                                  comparisons=[steps[j - 1].with_changes(comparator=right)])

        n = len(steps)
        rest: cst.BaseExpression = compare(n, operands[n])
        for j in range(n - 1, 0, -1):
            call = runtime_call(name, [thunk(compare(j, cst.Name(params[j]))), thunk(rest)])
            rest = _bind(params[j], call, operands[j])
        return _bind(params[0], rest, operands[0]).with_changes(
            lpar=updated.lpar, rpar=updated.rpar)


def _bind(param: str, body: cst.BaseExpression, value: cst.BaseExpression) -> cst.Call:
    """``(lambda param: body)(value)``."""
    function = cst.Lambda(params=cst.Parameters(params=[cst.Param(cst.Name(param))]), body=body,
                          lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=function, args=[cst.Arg(value)])
