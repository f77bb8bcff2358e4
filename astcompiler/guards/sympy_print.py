"""Print sympy size relations as plain Python integer code (``//`` for floor, never floats)."""

from __future__ import annotations

import sympy


def to_python(expr: sympy.Basic, names: dict) -> str:
    """``names`` maps each symbol to the Python expression of its value (``x.shape[0]``)."""
    p = lambda e: to_python(e, names)  # noqa: E731
    if isinstance(expr, sympy.Symbol):
        return names[expr]
    if expr.is_Integer:
        return str(int(expr))
    if isinstance(expr, sympy.Add):
        parts = [p(a) for a in expr.args]
        return "(" + " + ".join(parts) + ")"
    if isinstance(expr, sympy.Mul):
        numer, denom = expr.as_numer_denom()
        if denom != 1:
            return f"({p(numer)} / {p(denom)})"
        return "(" + " * ".join(p(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and expr.exp > 0:
        return f"({p(expr.base)} ** {int(expr.exp)})"
    if isinstance(expr, sympy.floor):
        numer, denom = expr.args[0].as_numer_denom()
        return f"({p(numer)} // {p(denom)})"
    if isinstance(expr, sympy.ceiling):
        numer, denom = expr.args[0].as_numer_denom()
        return f"(-((-{p(numer)}) // {p(denom)}))"
    if isinstance(expr, sympy.Abs):
        return f"abs({p(expr.args[0])})"
    if isinstance(expr, sympy.Mod):
        return f"({p(expr.args[0])} % {p(expr.args[1])})"
    if isinstance(expr, (sympy.Max, sympy.Min)):
        fn = "max" if isinstance(expr, sympy.Max) else "min"
        return f"{fn}({', '.join(p(a) for a in expr.args)})"
    relations = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Lt: "<", sympy.Le: "<=",
                 sympy.Gt: ">", sympy.Ge: ">="}
    for kind, op in relations.items():
        if isinstance(expr, kind):
            numer, denom = sympy.fraction(sympy.together(expr.lhs - expr.rhs))
            if denom.is_Integer and denom > 1:  # `s0/2 < 3` as `s0 - 6 < 0`: integers only
                return f"{p(sympy.expand(numer))} {op} 0"
            return f"{p(expr.lhs)} {op} {p(expr.rhs)}"
    if isinstance(expr, sympy.Not):
        return f"not ({p(expr.args[0])})"
    if isinstance(expr, sympy.And):
        return " and ".join(f"({p(a)})" for a in expr.args)
    if isinstance(expr, sympy.Or):
        return " or ".join(f"({p(a)})" for a in expr.args)
    raise ValueError(f"cannot print {expr!r} as a guard")
