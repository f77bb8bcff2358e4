"""Guard facts -> one generated Python function per cache entry, plus failure explanations.

The guard takes the user function's own parameters (same defaults), so calling it costs one
Python call and a chain of cheap checks: exact types, dtypes and shapes of arrays, values of
specialized scalars, identities of modules and functions, absence of shadowing globals.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..capture.guard_facts import GuardFact, GuardSet
from ..source import load_generated_module, write_generated_file
from .sympy_print import to_python

_LITERAL_TYPES = (bool, int, str, bytes, type(None))


class _Constants:
    """Objects the generated code refers to by name (``___k0``...)."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = dict(namespace)
        self.namespace["___ndarray"] = np.ndarray
        self._by_id: dict[int, str] = {}

    def name(self, value: Any) -> str:
        existing = self._by_id.get(id(value))
        if existing is not None:
            return existing
        var = f"___k{len(self._by_id)}"
        self._by_id[id(value)] = var
        self.namespace[var] = value
        return var


def _literal(value: Any) -> str | None:
    if isinstance(value, _LITERAL_TYPES):
        return repr(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    if type(value) is tuple and all(_literal(v) is not None for v in value):
        return repr(value)
    return None


def fact_code(fact: GuardFact, consts: _Constants) -> str:
    """The Python condition for one fact."""
    e = fact.source.expr
    kind = fact.kind
    if kind == "array":
        dtype, shape, exact = fact.value
        kind_check = "___ndarray" if exact is np.ndarray else consts.name(exact)
        head = f"type({e}) is {kind_check} and {e}.dtype == {consts.name(dtype)}"
        if all(d is not None for d in shape):
            return f"{head} and {e}.shape == {shape!r}"
        dims = " and ".join(f"{e}.shape[{i}] == {d}" for i, d in enumerate(shape) if d is not None)
        return f"{head} and {e}.ndim == {len(shape)}" + (f" and {dims}" if dims else "")
    if kind == "size":
        low, high = fact.value
        code = f"{e} >= {low}"
        return code if high is None else f"{code} and {e} <= {high}"
    if kind == "relation":
        return to_python(fact.value, fact.extra)
    if kind == "type":
        return f"type({e}) is {consts.name(fact.value)}"
    if kind == "id":
        return f"{e} is {consts.name(fact.value)}"
    if kind == "len":
        return f"len({e}) == {fact.value}"
    if kind == "keys":
        return f"tuple({e}) == {_literal(fact.value) or consts.name(fact.value)}"
    if kind == "absent":
        return f"{fact.value!r} not in {e}"
    if kind == "equals":
        value = fact.value
        if value is None or value is Ellipsis or isinstance(value, bool):
            return f"{e} is {repr(value) if value is not Ellipsis else consts.name(value)}"
        type_check = f"type({e}) is {type(value).__name__ if type(value) in (int, float, str, complex, bytes) else consts.name(type(value))}"
        if type(value) is float and math.isnan(value):
            return f"{type_check} and {e} != {e}"
        literal = _literal(value)
        return f"{type_check} and {e} == {literal if literal is not None else consts.name(value)}"
    raise AssertionError(f"unknown guard kind {kind!r}")


def short_name(source_name: str) -> str:
    """``L['x']`` -> ``x`` (how users name their arguments); other sources stay as they are."""
    if source_name.startswith("L['") and source_name.endswith("']") and source_name.count("[") == 1:
        return source_name[3:-2]
    return source_name


def explain_fact(fact: GuardFact, actual: Any) -> str:
    """Why ``actual`` (the value now at the fact's source) fails the fact, in words."""
    name = fact.source.name
    if fact.kind == "size":
        low, high = fact.value
        if actual < low:
            hint = (" (sizes 0 and 1 are specialized; use mark_unbacked to keep them dynamic)"
                    if low == 2 and actual in (0, 1) else "")
            return f"{name} >= {low} failed: actual {actual}{hint}"
        return f"{name} <= {high} failed: actual {actual}"
    if fact.kind == "relation":
        return f"{fact.source.name} no longer holds"
    if fact.kind == "array":
        name = short_name(name)
        dtype, shape, exact = fact.value
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
                        if index in (fact.extra or ()) else "")
                return f"array {name!r} size mismatch at index {index}. expected {want}, actual {got}{note}"
        return f"array {name!r} changed"
    if fact.kind == "type":
        return f"type({name}) changed: expected {fact.value.__name__}, actual {type(actual).__name__}"
    if fact.kind == "id":
        return f"{name} is not the object it was at compile time ({fact.value!r})"
    if fact.kind == "len":
        return f"len({name}) == {fact.value} failed: actual {len(actual)}"
    if fact.kind == "keys":
        return f"{name} keys changed: expected {list(fact.value)}, actual {list(actual)}"
    if fact.kind == "absent":
        return f"{name[:-1]}{fact.value!r}] is now defined as a global (it was a builtin)"
    return f"{name} == {fact.value!r} failed: actual {actual!r}"


def parameter_list(sig: inspect.Signature) -> str:
    parts: list[str] = []
    seen_kwonly = False
    for param in sig.parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            parts.append(f"*{param.name}")
            seen_kwonly = True
        elif param.kind is param.VAR_KEYWORD:
            parts.append(f"**{param.name}")
        elif param.kind is param.KEYWORD_ONLY:
            if not seen_kwonly:
                parts.append("*")
                seen_kwonly = True
            parts.append(param.name)
        else:
            parts.append(param.name)
        if param.kind is param.POSITIONAL_ONLY and _last_posonly(sig, param):
            parts.append("/")
    return ", ".join(parts)


def _last_posonly(sig: inspect.Signature, param: inspect.Parameter) -> bool:
    names = [p.name for p in sig.parameters.values() if p.kind is p.POSITIONAL_ONLY]
    return bool(names) and names[-1] == param.name


def copy_defaults(target: Callable, original: Callable) -> None:
    target.__defaults__ = getattr(original, "__defaults__", None)
    target.__kwdefaults__ = getattr(original, "__kwdefaults__", None)


@dataclass
class GuardFunction:
    """A compiled guard: ``check(*args, **kwargs) -> bool`` and its source."""

    check: Callable[..., bool]
    source: str
    facts: list[GuardFact]
    namespace: dict[str, Any]
    params: str
    path: str | None = None
    _explainers: list[Callable[..., bool]] = field(default_factory=list)
    condition: str = "True"  # the whole check as one Python expression (names in ``namespace``)

    def changed_sizes(self, args: tuple, kwargs: dict) -> dict[str, set[int]]:
        """Sources whose sizes (array dims, or int values as dim -1) differ from this entry's:
        what automatic dynamic shapes makes dynamic at the next compile."""
        changed: dict[str, set[int]] = {}
        for fact, explainer in zip(self.facts, self._explainers):
            if fact.kind not in ("array", "equals"):
                continue
            try:
                ok, actual = explainer(*args, **kwargs)
            except Exception:  # noqa: BLE001
                continue
            if ok:
                continue
            if fact.kind == "array" and isinstance(actual, np.ndarray):
                dtype, shape, _ = fact.value
                if actual.ndim == len(shape) and actual.dtype == dtype:
                    dims = {i for i, (want, got) in enumerate(zip(shape, actual.shape))
                            if want is not None and want != got}
                    changed.setdefault(fact.source.name, set()).update(dims)
            elif fact.kind == "equals" and type(fact.value) is int and type(actual) is int:
                changed.setdefault(fact.source.name, set()).add(-1)
        return changed

    def failures(self, args: tuple, kwargs: dict) -> list[str]:
        """Each failing fact, explained in words (slow path: recompile logs and errors)."""
        reasons = []
        for fact, explainer in zip(self.facts, self._explainers):
            try:
                ok, actual = explainer(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - a missing key or attribute is a failure
                reasons.append(f"{fact.source.name} could not be read ({type(error).__name__}: {error})")
                continue
            if not ok:
                reasons.append(explain_fact(fact, actual))
        return reasons


def build_guard(guards: GuardSet, sig: inspect.Signature, original: Callable,
                namespace: dict[str, Any], *, title: str, cache_dir: str | None) -> GuardFunction:
    """Generate, write and load the guard function for one cache entry."""
    consts = _Constants(namespace)
    facts = list(guards)
    conditions = [fact_code(f, consts) for f in facts]
    params = parameter_list(sig)
    body = "\n        and ".join(f"({c})" for c in conditions) if conditions else "True"
    unpack = "".join(f"    {name} = ___ns[{name!r}]\n" for name in consts.namespace)
    explainers = "".join(
        f"    def explain_{i}({params}):\n        return ({c}), "
        f"{f.source.expr if f.kind != 'relation' else 'None'}\n"
        for i, (f, c) in enumerate(zip(facts, conditions)))
    source = (
        f"# {title}\n# Guards generated by astcompiler: the cache entry runs only when all hold.\n\n"
        f"def ___make_guard(___ns):\n{unpack}"
        f"    def guard({params}):\n        return ({body})\n"
        f"{explainers}"
        f"    return guard, [{', '.join(f'explain_{i}' for i in range(len(facts)))}]\n")
    path = None
    if cache_dir is not None:
        path = write_generated_file(f"{cache_dir}/guards", "guard", source)
        maker = load_generated_module(path).___make_guard
    else:  # pragma: no cover - only without a cache dir
        scope: dict[str, Any] = {}
        exec(compile(source, "<guard>", "exec"), scope)
        maker = scope["___make_guard"]
    check, explain_fns = maker(consts.namespace)
    copy_defaults(check, original)
    for fn in explain_fns:
        copy_defaults(fn, original)
    return GuardFunction(check=check, source=guard_display_source(source), facts=facts,
                         namespace=consts.namespace, params=params, path=path,
                         _explainers=explain_fns, condition=body)


def guard_display_source(source: str) -> str:
    """The guard source without the explain helpers (what users read under "guards")."""
    keep = []
    skipping = False
    for line in source.splitlines():
        if line.startswith("    def explain_"):
            skipping = True
            continue
        if skipping and line.startswith("        "):
            continue
        skipping = False
        keep.append("    return guard" if line.startswith("    return guard, [") else line)
    return "\n".join(keep) + "\n"
