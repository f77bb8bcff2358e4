"""Every call site ``f(a, *b, k=c)`` becomes ``__ac.call(f, a, *b, k=c)``.

At capture time the runtime decides what the call is: a NumPy op (graph nodes), a user function
(rewritten and inlined), a pure builtin (evaluated), or something unsupported (a graph break).
``super()`` is left alone: it needs the caller's frame.
"""

from __future__ import annotations

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


class ExplicitSuper(cst.CSTTransformer):
    """``super()`` -> ``super(__class__, self)`` (``self``: the method's first parameter).

    Zero-argument ``super()`` finds its class in the ``__class__`` cell and its instance in the
    frame's first argument; the rewritten method loads ``__class__`` in its prologue and moves
    statements into nested functions, where neither would be found. Applied to one function
    definition; nested definitions keep their own ``super()``."""

    def __init__(self) -> None:
        super().__init__()
        self._first: list[str | None] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        params = [*node.params.posonly_params, *node.params.params]
        self._first.append(params[0].name.value if params else None)
        return len(self._first) == 1

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self._first.pop()
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        first = self._first[-1] if self._first else None
        if first is None or updated.args or not (isinstance(updated.func, cst.Name)
                                                  and updated.func.value == "super"):
            return updated
        return updated.with_changes(args=[cst.Arg(cst.Name("__class__")), cst.Arg(cst.Name(first))])
