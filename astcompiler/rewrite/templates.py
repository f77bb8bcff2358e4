"""Small builders for the runtime calls the rewrites emit (``__ac.call(...)`` and friends)."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

RUNTIME = "__ac"


def runtime_attr(name: str) -> cst.Attribute:
    return cst.Attribute(value=cst.Name(RUNTIME), attr=cst.Name(name))


def runtime_call(name: str, args: Sequence[cst.BaseExpression | cst.Arg]) -> cst.Call:
    return cst.Call(func=runtime_attr(name),
                    args=[a if isinstance(a, cst.Arg) else cst.Arg(a) for a in args])


def thunk(expr: cst.BaseExpression) -> cst.Lambda:
    """``lambda: expr``: delays evaluation to keep Python's short-circuit semantics."""
    return cst.Lambda(params=cst.Parameters(), body=expr)


def string(value: str) -> cst.SimpleString:
    return cst.SimpleString(repr(value))


def statement(expr: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(expr)])


def assign(targets: Sequence[str], value: cst.BaseExpression) -> cst.SimpleStatementLine:
    if len(targets) == 1:
        target: cst.BaseAssignTargetExpression = cst.Tuple(
            elements=[cst.Element(cst.Name(targets[0]))], lpar=[], rpar=[])
    else:
        target = cst.Tuple(elements=[cst.Element(cst.Name(t)) for t in targets], lpar=[], rpar=[])
    return cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(target)], value=value)])


def body_start(body: Sequence[cst.BaseStatement]) -> int:
    """Index after a docstring: where generated statements go at the top of a function body."""
    if body and isinstance(body[0], cst.SimpleStatementLine) and body[0].body \
            and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        return 1
    return 0
