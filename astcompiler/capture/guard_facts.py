"""What the capture relied on: the guard vocabulary, one class per kind of fact.

Each fact names a ``Source`` and what must hold for it. A kind is one class: its ``kind`` name,
its ``code`` (the Python condition, written with a ``Namer`` that ``guards/`` provides: constant
names, helpers, size relations), and its ``explain`` (what changed, in words). ``guards/`` turns a
``GuardSet`` into one generated function; it never needs to know the kinds.

Kinds: ``array`` (type, dtype, shape), ``size`` (a dynamic size's range), ``relation`` (a
decision on symbolic sizes), ``type``, ``id``, ``equals`` (floats exactly: -0.0 is not 0.0, NaN
matches NaN), ``len``, ``keys``, ``absent`` (a name missing from a globals dict), ``no_attr`` (an
attribute missing), ``empty_cell`` (a closure cell not bound yet), ``alias`` / ``distinct`` (two
sources are / are not one object).
"""

from __future__ import annotations

import math
import os
import re
import types
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from .sources import Source, key_literal


class Namer(Protocol):
    """What a fact's code may ask of the guard being generated."""

    def name(self, value: Any, source: Source | None = None) -> str:
        """A name bound to ``value`` in the guard's namespace."""

    def helper(self, name: str) -> str:
        """A standard helper (``___copysign``, ``___inf``, ``___ndarray``), bound and returned."""

    def add_source(self, source: Source) -> None:
        """Bind the constants ``source``'s expression refers to."""

    def relation(self, expr: Any, names: dict) -> str:
        """A symbolic-size relation as integer Python over the sizes' expressions."""

    def local(self) -> str:
        """A fresh local name for a value a condition reads once and tests several times."""


def describe(value: Any) -> str:
    """A value in a few words, stable across processes: ``dtype('float64')``, ``<function g at
    t.py:4>``, ``<module 'numpy'>`` (no memory addresses)."""
    if isinstance(value, types.FunctionType):
        code = value.__code__
        return (f"<function {value.__qualname__} at "
                f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}>")
    if isinstance(value, types.CodeType):
        return f"<code {value.co_name} at {os.path.basename(value.co_filename)}:{value.co_firstlineno}>"
    if isinstance(value, types.ModuleType):
        return f"<module {value.__name__!r}>"
    if isinstance(value, type):
        return f"<class {value.__module__}.{value.__qualname__}>"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not break the guard
        text = f"<{type(value).__name__} object>"
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", " ".join(text.split()))
    return text if len(text) <= 72 else text[:69] + "..."


def short_name(source_name: str) -> str:
    """``L['x']`` -> ``x`` (how users name their arguments); other sources stay as they are."""
    if source_name.startswith("L['") and source_name.endswith("']") and source_name.count("[") == 1:
        return source_name[3:-2]
    return source_name


@dataclass(frozen=True)
class GuardFact:
    """One thing the compiled code relied on, at ``source``."""

    source: Source
    value: Any = None
    extra: Any = None
    kind: ClassVar[str] = ""
    reads_source: ClassVar[bool] = True  # explanations compare the value now at ``source``

    def code(self, namer: Namer) -> str:
        raise NotImplementedError

    def explain(self, actual: Any) -> str:
        return f"{self.source.name} == {self.value!r} failed: actual {actual!r}"


class ArrayFact(GuardFact):
    """An array's exact type, dtype, rank and static sizes; ``value = (dtype, shape, type)``
    (None in ``shape`` for a dynamic size), ``extra`` the dims specialized as 0/1."""

    kind = "array"

    def code(self, namer: Namer) -> str:
        e = first = self.source.expr
        if not e.isidentifier():  # a path (``m._parameters['w']``): read once
            e = namer.local()
            first = f"{e} := {first}"
        dtype, shape, exact = self.value
        kind_check = namer.helper("___ndarray") if exact is np.ndarray else namer.name(exact)
        want = namer.name(dtype)  # ``is`` first: the common dtype singletons, no comparison
        head = (f"type({first}) is {kind_check} and ({e}.dtype is {want} "
                f"or {e}.dtype == {want})")
        if len(shape) == 1 and shape[0] is not None and exact is np.ndarray:
            # ``len`` is a slot call; ``.shape`` builds a tuple per call (about 25 ns more)
            return f"{head} and {e}.ndim == 1 and len({e}) == {shape[0]}"
        if all(d is not None for d in shape):
            return f"{head} and {e}.shape == {shape!r}"
        dims = " and ".join(f"{e}.shape[{i}] == {d}" for i, d in enumerate(shape) if d is not None)
        return f"{head} and {e}.ndim == {len(shape)}" + (f" and {dims}" if dims else "")

    def explain(self, actual: Any) -> str:
        name = short_name(self.source.name)
        dtype, shape, exact = self.value
        if type(actual) is not exact:
            return (f"{name} is not of type {exact.__name__}: expected "
                    f"{exact.__module__}.{exact.__name__}, actual {type(actual).__name__}")
        if actual.dtype != dtype:
            return f"array {name!r} dtype mismatch. expected {dtype}, actual {actual.dtype}"
        if actual.ndim != len(shape):
            return f"array {name!r} rank mismatch. expected {len(shape)}, actual {actual.ndim}"
        for index, (want, got) in enumerate(zip(shape, actual.shape)):
            if want is not None and want != got:
                note = (f" (size {want} was specialized: sizes 0 and 1 always are; use "
                        "mark_unbacked to keep such a size dynamic)"
                        if index in (self.extra or ()) else "")
                return (f"array {name!r} size mismatch at index {index}. expected {want}, "
                        f"actual {got}{note}")
        return f"array {name!r} changed"


class SizeFact(GuardFact):
    """A dynamic size within its range; ``value = (low, high)`` (high None: unbounded)."""

    kind = "size"

    def code(self, namer: Namer) -> str:
        low, high = self.value
        code = f"{self.source.expr} >= {low}"
        return code if high is None else f"{code} and {self.source.expr} <= {high}"

    def explain(self, actual: Any) -> str:
        low, high = self.value
        if actual < low:
            hint = (" (sizes 0 and 1 are specialized; use mark_unbacked to keep them dynamic)"
                    if low == 2 and actual in (0, 1) else "")
            return f"{self.source.name} >= {low} failed: actual {actual}{hint}"
        return f"{self.source.name} <= {high} failed: actual {actual}"


class RelationFact(GuardFact):
    """A decision the capture took on symbolic sizes; ``value`` the sympy relation, ``extra``
    symbol -> the Python expression of that size."""

    kind = "relation"
    reads_source = False

    def code(self, namer: Namer) -> str:
        return namer.relation(self.value, self.extra)

    def explain(self, actual: Any) -> str:
        return f"{self.source.name} no longer holds"


class TypeFact(GuardFact):
    """The exact type (``type(e) is T``)."""

    kind = "type"

    def code(self, namer: Namer) -> str:
        return f"type({self.source.expr}) is {namer.name(self.value)}"

    def explain(self, actual: Any) -> str:
        return (f"type({self.source.name}) changed: expected {self.value.__name__}, "
                f"actual {type(actual).__name__}")


class IdFact(GuardFact):
    """The very object read at compile time (functions, modules, classes, code objects, a
    function's ``__defaults__`` tuple, objects guarded by identity)."""

    kind = "id"

    def code(self, namer: Namer) -> str:
        return f"{self.source.expr} is {namer.name(self.value, self.source)}"

    def explain(self, actual: Any) -> str:
        return (f"{self.source.name} is not the object it was at compile time: expected "
                f"{describe(self.value)}, actual {describe(actual)}")


_BUILTIN_SCALARS = (int, float, str, complex, bytes)


def _float_code(e: str, value: float, namer: Namer) -> str:
    """``e`` equals the float ``value`` exactly: NaN matches NaN, -0.0 does not match 0.0."""
    if math.isnan(value):
        return f"{e} != {e}"
    if value == 0.0:
        sign = math.copysign(1.0, value)
        return f"{e} == 0.0 and {namer.helper('___copysign')}(1.0, {e}) == {sign!r}"
    if math.isinf(value):
        return f"{e} == {'-' if value < 0 else ''}{namer.helper('___inf')}"
    return f"{e} == {value!r}"


class EqualsFact(GuardFact):
    """A specialized value: its exact type and its value (``is`` for None, bools, Ellipsis)."""

    kind = "equals"

    def code(self, namer: Namer) -> str:
        e, value = self.source.expr, self.value
        if value is None or isinstance(value, bool):
            return f"{e} is {value!r}"
        if value is Ellipsis:
            return f"{e} is {namer.name(value)}"
        kind = type(value)
        type_check = f"type({e}) is {kind.__name__ if kind in _BUILTIN_SCALARS else namer.name(kind)}"
        if kind is float:
            return f"{type_check} and {_float_code(e, value, namer)}"
        if kind is complex:
            return (f"{type_check} and {_float_code(f'{e}.real', value.real, namer)} "
                    f"and {_float_code(f'{e}.imag', value.imag, namer)}")
        literal = key_literal(value) if kind in (int, str, bytes, tuple) else None
        return f"{type_check} and {e} == {literal if literal is not None else namer.name(value)}"

    def explain(self, actual: Any) -> str:
        name, value = self.source.name, self.value
        if isinstance(value, float) and isinstance(actual, float) and value == actual:
            return f"{name} == {value!r} failed: actual {actual!r} (the sign of zero differs)"
        return f"{name} == {value!r} failed: actual {actual!r}"


class LenFact(GuardFact):
    kind = "len"

    def code(self, namer: Namer) -> str:
        return f"len({self.source.expr}) == {self.value}"

    def explain(self, actual: Any) -> str:
        return f"len({self.source.name}) == {self.value} failed: actual {len(actual)}"


class KeysFact(GuardFact):
    """A dict's keys, in order (``value`` the tuple of keys)."""

    kind = "keys"

    def code(self, namer: Namer) -> str:
        literal = key_literal(self.value)
        return f"tuple({self.source.expr}) == {literal if literal is not None else namer.name(self.value)}"

    def explain(self, actual: Any) -> str:
        return f"{self.source.name} keys changed: expected {list(self.value)}, actual {list(actual)}"


class AbsentFact(GuardFact):
    """A free name that resolved to a builtin: still not a global (``value`` the name)."""

    kind = "absent"

    def code(self, namer: Namer) -> str:
        return f"{self.value!r} not in {self.source.expr}"

    def explain(self, actual: Any) -> str:
        name = self.source.name
        if name.endswith("__dict__"):
            return f"{name}[{self.value!r}] is now set (it was not at compile time)"
        return f"{name[:-1]}{self.value!r}] is now defined as a global (it was a builtin)"


class NoAttrFact(GuardFact):
    """An attribute the code found missing (``hasattr``, ``getattr`` with a default)."""

    kind = "no_attr"

    def code(self, namer: Namer) -> str:
        return f"not hasattr({self.source.expr}, {self.value!r})"

    def explain(self, actual: Any) -> str:
        return f"{self.source.name}.{self.value} is now defined (it was not at compile time)"


class EmptyCellFact(GuardFact):
    """A closure cell the code found unbound (``source.expr`` is the cell itself)."""

    kind = "empty_cell"
    reads_source = False

    def code(self, namer: Namer) -> str:
        return f"{namer.helper('___empty_cell')}({self.source.expr})"

    def explain(self, actual: Any) -> str:
        return f"{self.source.name} is now bound (it was empty at compile time)"


class AliasFact(GuardFact):
    """``source`` is the same object as the source in ``value`` (read twice, or tested)."""

    kind = "alias"
    relation = "is"
    words = "the same object as"

    def code(self, namer: Namer) -> str:
        namer.add_source(self.value)
        return f"{self.source.expr} {self.relation} {self.value.expr}"

    def explain(self, actual: Any) -> str:
        return (f"{self.source.name} is no longer {self.words} {self.value.name} "
                "(the compiled code relied on it)")


class DistinctFact(AliasFact):
    """``source`` is not the same object as the source in ``value`` (the code tested it)."""

    kind = "distinct"
    relation = "is not"
    words = "a different object from"


class WriteableFact(GuardFact):
    """An array the compiled code writes into (or a view of it) is writeable (``value`` True),
    or read-only (False: the write raised NumPy's error at capture)."""

    kind = "writeable"

    def code(self, namer: Namer) -> str:
        return f"{'' if self.value else 'not '}{self.source.expr}.flags.writeable"

    def explain(self, actual: Any) -> str:
        state = "read-only" if self.value else "writeable"
        return (f"array {short_name(self.source.name)!r} is now {state} (the compiled code "
                "writes into it)")


FACT_KINDS: dict[str, type[GuardFact]] = {
    cls.kind: cls for cls in (ArrayFact, SizeFact, RelationFact, TypeFact, IdFact, EqualsFact,
                              LenFact, KeysFact, AbsentFact, NoAttrFact, EmptyCellFact, AliasFact,
                              DistinctFact, WriteableFact)}


class GuardSet:
    """Facts in recording order, without duplicates. Facts recorded under ``deferred()`` are
    kept aside and only become guards when ``commit`` is called (a container's contents matter
    only once the code reads them: appending to a list must not guard its length)."""

    def __init__(self) -> None:
        self.facts: list[GuardFact] = []
        self._seen: set[tuple] = set()
        self._pending: list[list[GuardFact]] = []
        self._identity_sources: dict[int, tuple[Any, Source]] = {}
        self._kept_aside: list[list[GuardFact]] = []  # every list ``deferred()`` filled

    def add(self, kind: str, source: Source, value: Any = None, extra: Any = None) -> None:
        fact = FACT_KINDS[kind](source, value, extra)
        if self._pending:
            self._pending[-1].append(fact)
            return
        self._commit_one(fact)

    def _commit_one(self, fact: GuardFact) -> None:
        value_key = ("id", id(fact.value)) if fact.kind == "id" else _identity_key(fact.value)
        key = (fact.kind, fact.source.expr, value_key, _identity_key(fact.extra))
        if key in self._seen:
            return
        self._seen.add(key)
        self.facts.append(fact)
        if fact.kind == "id" and id(fact.value) not in self._identity_sources:
            self._identity_sources[id(fact.value)] = (fact.value, fact.source)

    @property
    def deferring(self) -> bool:
        """True while facts are being kept aside (inside ``deferred()``)."""
        return bool(self._pending)

    def identity_source(self, value: Any) -> Source | None:
        """A source whose identity with ``value`` is guarded (committed), if any: what the guard
        can read the object's ``__code__``, ``__defaults__``... from."""
        known = self._identity_sources.get(id(value))
        return known[1] if known is not None and known[0] is value else None

    def commit_source(self, source: Source) -> None:
        """Commit the facts kept aside about ``source`` itself (its type, its array metadata):
        the object it holds is now used through another source."""
        for kept in self._kept_aside:
            own = [f for f in kept if f.source.expr == source.expr]
            for fact in own:
                kept.remove(fact)
                self._commit_one(fact)

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
        guards._kept_aside.append(self.facts)

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
    if isinstance(value, float) and value == 0.0:
        return ("float", repr(value))  # -0.0 and 0.0 are different facts
    if isinstance(value, Source):
        return ("source", value.expr)
    return (type(value).__name__, value)
