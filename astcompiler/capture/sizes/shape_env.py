"""``ShapeEnv``: the symbolic sizes of one capture (sympy), their hints, ranges and guards.

Backed symbols ``s0, s1, ...`` stand for dynamic dimensions (and int arguments) and carry the
example's value as a hint. Sizes are assumed >= 2 (sizes 0 and 1 are specialized instead); the
symbols of int arguments are any integer (negative, 0 and 1 included), so every decision on them
is a guard.
Unbacked symbols ``u0, ...`` stand for sizes known only at run time (boolean masks); a decision
that needs their value is a graph break, or a ``DataDependentError`` for ``mark_unbacked``.
Decisions taken with hints are recorded as guards (sympy relations over the symbols).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from ...exc import ConstraintViolationError, DataDependentError, GraphBreak


@dataclass
class SymbolInfo:
    symbol: sympy.Symbol
    hint: int | None
    source: str          # torch-style name: L['x'].size()[0]
    expr: str            # Python expression in guard code: x.shape[0]
    min: int | None = 2      # None: an int argument, no lower bound
    max: int | None = None
    strict: bool = False     # mark_dynamic / mark_unbacked(strict=True): specializing is an error
    unbacked: bool = False   # no usable hint: decisions on it raise DataDependentError
    marker: str = "auto"     # how it became dynamic: auto, mark_dynamic, maybe, unbacked, config


# what made an unbacked size (``create_unbacked(source)``), for the graph-break message
_DATA_SIZES = {"slice": "a slice whose bounds are read from array data"}


@dataclass
class ShapeEnv:
    symbols: dict[sympy.Symbol, SymbolInfo] = field(default_factory=dict)
    guards: list[sympy.Basic] = field(default_factory=list)
    specialized: list[tuple[str, int]] = field(default_factory=list)
    _next_backed: int = 0
    _next_unbacked: int = 0

    def create_symbol(self, hint: int, source: str, expr: str, *, min: int | None = 2,
                      max: int | None = None, strict: bool = False, marker: str = "auto",
                      unbacked: bool = False) -> sympy.Symbol:
        """A backed symbol; ``min=None`` for an int argument (any integer, no sign assumed)."""
        facts = {"integer": True}
        if min is not None and min >= 1:
            facts["positive"] = True
        elif min is not None and min >= 0:
            facts["nonnegative"] = True
        symbol = sympy.Symbol(f"s{self._next_backed}", **facts)
        self._next_backed += 1
        self.symbols[symbol] = SymbolInfo(symbol, hint, source, expr, min, max, strict,
                                          unbacked, marker)
        return symbol

    def create_unbacked(self, source: str) -> sympy.Symbol:
        symbol = sympy.Symbol(f"u{self._next_unbacked}", integer=True, nonnegative=True)
        self._next_unbacked += 1
        self.symbols[symbol] = SymbolInfo(symbol, None, source, "", 0, None, False, True, "data")
        return symbol

    # ----- hints ---------------------------------------------------------------------------------
    def _hints(self, expr: sympy.Basic, why: str) -> dict[sympy.Symbol, int]:
        subs = {}
        for symbol in expr.free_symbols:
            info = self.symbols.get(symbol)
            if info is None or info.hint is None:
                origin = _DATA_SIZES.get(info.source if info is not None else "",
                                         "a boolean mask or nonzero()")
                raise GraphBreak(f"{why} depends on a size known only at run time ({symbol}: "
                                 f"from {origin}); keep it in NumPy")
            if info.unbacked:
                strict = (" With strict=True it must never be specialized."
                          if info.strict else "")
                raise DataDependentError(
                    f"{why} needs the value of {info.source}, which is marked unbacked "
                    "(mark_unbacked): there is no hint to decide with, and deciding would have "
                    f"specialized it.{strict} Avoid branching on it, or use mark_dynamic instead")
            subs[symbol] = info.hint
        return subs

    def size_hint(self, expr: object) -> int:
        if isinstance(expr, int):
            return expr
        expr = sympy.sympify(expr)
        return int(expr.subs(self._hints(expr, f"the size {expr}")))

    # ----- decisions -----------------------------------------------------------------------------
    def evaluate(self, relation: sympy.Basic, where: str | None = None) -> bool:
        """Decide ``relation`` with the hints and remember the decision as a guard."""
        value = bool(relation.subs(self._hints(relation, f"the condition {relation}")))
        decided = relation if value else _negated(relation)
        if decided in (sympy.true, True):
            return value
        self._check_constraints(decided, where)
        self.guards.append(decided)
        return value

    def specialize(self, expr: sympy.Expr, where: str | None = None) -> int:
        """A plain int is needed: pin ``expr`` to its hint."""
        hint = self.size_hint(expr)
        self.evaluate(sympy.Eq(expr, hint), where)
        return hint

    def _check_constraints(self, relation: sympy.Basic, where: str | None) -> None:
        """A strict marker (mark_dynamic) forbids guards that pin a size to one value."""
        if not isinstance(relation, sympy.Eq):
            return
        for symbol in relation.free_symbols:
            info = self.symbols.get(symbol)
            if info is None or not info.strict:
                continue
            solved = sympy.solve(relation, symbol)
            if len(solved) == 1 and solved[0].is_Integer:
                at = f" at {where}" if where else ""
                verb = "specialized" if info.marker == "unbacked" else "specialized"
                raise ConstraintViolationError(
                    f"Constraints violated ({info.source})! The code {verb} {info.source} to "
                    f"the constant {solved[0]}{at} (guard: {relation}). It was marked dynamic with "
                    f"{info.marker}; use maybe_mark_dynamic(x, dim) to allow specialization, or "
                    "change the code so it does not depend on the exact size.")

    def range_guards(self) -> list[tuple[SymbolInfo, int, int | None]]:
        return [(info, info.min, info.max) for info in self.symbols.values()
                if info.hint is not None and info.marker != "data" and info.min is not None]


def _negated(relation: sympy.Basic) -> sympy.Basic:
    """``not relation`` without sympy.simplify (slow): relations flip, others get a Not."""
    negated = getattr(relation, "negated", None)
    return negated if negated is not None else sympy.Not(relation)
