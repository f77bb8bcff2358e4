"""What the capture relied on, recorded as plain facts; ``guards/`` turns them into code.

Each fact names a ``Source`` and what must hold for it: exact type, identity, equality, array
metadata (type, dtype, shape), length, dict keys, absence from a globals dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .sources import Source


@dataclass(frozen=True)
class GuardFact:
    kind: str       # "type" | "id" | "equals" | "array" | "len" | "keys" | "absent" | "size" | "relation"
    source: Source
    value: Any = None
    extra: Any = None


class GuardSet:
    """Facts in recording order, without duplicates. Facts recorded under ``deferred()`` are
    kept aside and only become guards when ``commit`` is called (a container's contents matter
    only once the code reads them: appending to a list must not guard its length)."""

    def __init__(self) -> None:
        self.facts: list[GuardFact] = []
        self._seen: set[tuple] = set()
        self._pending: list[list[GuardFact]] = []

    def add(self, kind: str, source: Source, value: Any = None, extra: Any = None) -> None:
        fact = GuardFact(kind, source, value, extra)
        if self._pending:
            self._pending[-1].append(fact)
            return
        self._commit_one(fact)

    def _commit_one(self, fact: GuardFact) -> None:
        key = (fact.kind, fact.source.expr, _identity_key(fact.value), _identity_key(fact.extra))
        if key in self._seen:
            return
        self._seen.add(key)
        self.facts.append(fact)

    def deferred(self) -> "_Deferred":
        return _Deferred(self)

    def commit(self, facts: list[GuardFact]) -> None:
        for fact in facts:
            self.add(fact.kind, fact.source, fact.value, fact.extra)

    def __iter__(self):
        return iter(self.facts)

    def __len__(self) -> int:
        return len(self.facts)


class _Deferred:
    def __init__(self, guards: GuardSet) -> None:
        self.guards = guards
        self.facts: list[GuardFact] = []

    def __enter__(self) -> list[GuardFact]:
        self.guards._pending.append(self.facts)
        return self.facts

    def __exit__(self, *exc: Any) -> None:
        self.guards._pending.pop()

    def __iter__(self):
        return iter(self.facts)

    def __len__(self) -> int:
        return len(self.facts)


def _identity_key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    if isinstance(value, float) and value != value:
        return ("nan",)
    return (type(value).__name__, value)
