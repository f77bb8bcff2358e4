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
    """Facts in recording order, without duplicates."""

    def __init__(self) -> None:
        self.facts: list[GuardFact] = []
        self._seen: set[tuple] = set()

    def add(self, kind: str, source: Source, value: Any = None, extra: Any = None) -> None:
        key = (kind, source.expr, _identity_key(value), _identity_key(extra))
        if key in self._seen:
            return
        self._seen.add(key)
        self.facts.append(GuardFact(kind, source, value, extra))

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
