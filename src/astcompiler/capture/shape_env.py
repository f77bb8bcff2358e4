"""``ShapeEnv``: the symbolic sizes of one capture (sympy), with their hints and guards.

Sizes are static ints in this version; the environment already owns symbol creation, value
ranges and the guards that code branching on sizes adds, so dynamic shapes extend it in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy


@dataclass
class SymbolInfo:
    symbol: sympy.Symbol
    hint: int | None
    source: str
    min: int
    max: int | None


@dataclass
class ShapeEnv:
    symbols: dict[sympy.Symbol, SymbolInfo] = field(default_factory=dict)
    guards: list[sympy.Basic] = field(default_factory=list)
    _next_backed: int = 0
    _next_unbacked: int = 0

    def create_symbol(self, hint: int, source: str, *, min: int = 2, max: int | None = None) -> sympy.Symbol:
        symbol = sympy.Symbol(f"s{self._next_backed}", integer=True, positive=True)
        self._next_backed += 1
        self.symbols[symbol] = SymbolInfo(symbol, hint, source, min, max)
        return symbol

    def create_unbacked(self, source: str) -> sympy.Symbol:
        symbol = sympy.Symbol(f"u{self._next_unbacked}", integer=True, nonnegative=True)
        self._next_unbacked += 1
        self.symbols[symbol] = SymbolInfo(symbol, None, source, 0, None)
        return symbol

    def size_hint(self, expr: object) -> int:
        if isinstance(expr, int):
            return expr
        subs = {s: info.hint for s, info in self.symbols.items() if info.hint is not None}
        return int(sympy.sympify(expr).subs(subs))

    def add_guard(self, relation: sympy.Basic) -> None:
        if relation not in (sympy.true, True):
            self.guards.append(relation)
