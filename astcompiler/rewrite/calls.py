"""Every call site ``f(a, *b, k=c)`` becomes ``__ac.call(f, a, *b, k=c)``.

At capture time the runtime decides what the call is: a NumPy op (graph nodes), a user function
(rewritten and inlined), a pure builtin (evaluated), or something unsupported (a graph break).
``super()`` is left alone: it needs the caller's frame.
"""

from __future__ import annotations

import sys

import libcst as cst

from .templates import runtime_attr


class RewriteCalls(cst.CSTTransformer):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        if isinstance(func, cst.Name) and func.value == "super":
            return updated
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value == "__ac":
            return updated
        args = [_parenthesize_generator(arg) for arg in updated.args]
        return cst.Call(func=runtime_attr("call"), args=[cst.Arg(func), *args],
                        lpar=updated.lpar, rpar=updated.rpar)


def _parenthesize_generator(arg: cst.Arg) -> cst.Arg:
    """``f(x for x in y)`` is only valid as a sole argument: it needs parentheses once the
    callable becomes the first argument of ``__ac.call``."""
    value = arg.value
    if isinstance(value, cst.GeneratorExp) and not value.lpar:
        return arg.with_changes(value=value.with_changes(lpar=[cst.LeftParen()],
                                                         rpar=[cst.RightParen()]))
    return arg


INLINED_COMPREHENSIONS = sys.version_info >= (3, 12)  # PEP 709: no frame of their own


class ExplicitSuper(cst.CSTTransformer):
    """``super()`` -> ``super(__class__, self)`` (``self``: the method's first parameter).

    Zero-argument ``super()`` finds its class in the ``__class__`` cell and its instance in the
    frame's first argument; the rewritten method loads ``__class__`` in its prologue and moves
    statements into nested functions, where neither would be found. Applied to one function
    definition; nested definitions keep their own ``super()``.

    Visiting a function definition takes the instance from its first parameter; visiting
    statements of a method needs that name as ``first``. Nested functions, classes, lambdas and
    generator expressions (and, before Python 3.12, list/set/dict comprehensions) have their own
    ``super()`` and are left alone; ``changed`` says whether anything was rewritten.
    """

    def __init__(self, first: str | None = None) -> None:
        super().__init__()
        self.first = first
        self._from_definition = first is None
        self._depth = 0
        self.changed = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._depth += 1
        if not (self._from_definition and self._depth == 1):
            return False
        params = [*node.params.posonly_params, *node.params.params]
        self.first = params[0].name.value if params else None
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self._depth -= 1
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return INLINED_COMPREHENSIONS

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return INLINED_COMPREHENSIONS

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return INLINED_COMPREHENSIONS

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        if self.first is None or updated.args or not (isinstance(func, cst.Name)
                                                       and func.value == "super"):
            return updated
        self.changed = True
        return updated.with_changes(args=[cst.Arg(cst.Name("__class__")),
                                          cst.Arg(cst.Name(self.first))])
