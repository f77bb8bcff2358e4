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
