"""Guard facts -> one generated Python function per cache entry, plus failure explanations.

The guard takes the user function's own parameters (same defaults), so calling it costs one
Python call and a chain of cheap checks: exact types, dtypes and shapes of arrays, values of
specialized scalars, identities of modules and functions, the attributes read on them, absence
of shadowing globals. Each fact writes its own condition and explanation (one class per kind in
``capture/guard_facts.py``); this module names the constants they use and assembles the function.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import math
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..capture.guard_facts import GuardFact, GuardSet, describe
from ..capture.sources import Source
from ..source import load_generated_module, write_generated_file
from .module_tree import ModuleTree, covered_facts, seen_item, tree_code, tree_items

_LITERAL_TYPES = (bool, int, str, bytes, type(None))


def holds(ok: Any) -> bool:
    """Whether an explainer's condition held: only a true bool counts. A fact evaluated on a
    value of the wrong type (a relation on an array after its type fact failed) has failed,
    whatever it evaluates to; it never raises."""
    return type(ok) in (bool, np.bool_) and bool(ok)


def _empty_cell(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return True
    return False


_HELPERS = {"___ndarray": np.ndarray, "___copysign": math.copysign, "___inf": math.inf,
            "___empty_cell": _empty_cell}


_READ_ONCE = re.compile(r"^type\((____a\d+) := ")
_RESERVED = {"___ns", "___make_guard", "___make_run", "___ModuleTree", "___nn_state"}


class _Constants:
    """Objects the generated code refers to by name: a name that says what the object is
    (``___float64`` for a dtype, ``___numpy`` for a module, ``___g`` for a function), and in the
    guard source each name is bound on a line whose comment shows the value."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = dict(namespace)
        self.namespace["___ndarray"] = np.ndarray
        self._by_id: dict[int, str] = {}
        self.shown: dict[str, str] = {}  # constant name -> how its value reads
        self._locals = 0  # local names handed out (``local``)

    def name(self, value: Any, source: Any = None) -> str:
        existing = self._by_id.get(id(value))
        if existing is not None:
            return existing
        hint = _hint(value) or (_source_hint(source.name) if source is not None else "")
        base = f"___{hint}" if hint else f"___k{len(self._by_id)}"
        var, n = base, 1
        while var in self.namespace or var in _HELPERS or var in _RESERVED:
            var, n = f"{base}_{n}", n + 1
        self._by_id[id(value)] = var
        self.namespace[var] = value
        self.shown[var] = describe(value)
        return var

    def helper(self, name: str) -> str:
        self.namespace[name] = _HELPERS[name]
        self.shown[name] = {"___copysign": "math.copysign", "___inf": "math.inf",
                            "___empty_cell": "a closure cell not bound yet"}.get(name, "")
        return name

    def local(self) -> str:
        """``____a0``, ``____a1``...: constants never start with four underscores."""
        self._locals += 1
        return f"____a{self._locals - 1}"

    def relation(self, expr: Any, names: dict) -> str:
        from .sympy_print import to_python  # sympy: not on a warm start's path
        return to_python(expr, names)

    def add_source(self, source: Any) -> None:
        """Constants a source's expression names (dict keys with no literal)."""
        for var, value in getattr(source, "constants", ()):
            self.namespace[var] = value
            self.shown.setdefault(var, describe(value))


def _hint(value: Any) -> str:
    """A readable identifier for a constant, or "" (then ``___k<n>``)."""
    if isinstance(value, np.dtype):
        text = value.name if value.names is None else ""
    elif isinstance(value, enum.Enum):
        text = f"{type(value).__name__}_{value.name}"
    elif isinstance(value, types.ModuleType):
        text = value.__name__.split(".")[-1]
    elif isinstance(value, types.CodeType):
        text = f"{value.co_name.strip('_')}_code"
    elif isinstance(value, type):
        text = ("np_" if value.__module__ == "numpy" else "") + value.__qualname__
    elif callable(value) and isinstance(getattr(value, "__name__", None), str):
        text = value.__name__.strip("_")
    else:
        return ""
    text = re.sub(r"\W+", "_", text).strip("_")
    return text if text and not text[0].isdigit() else ""


def _source_hint(name: str) -> str:
    """``G['g'].__defaults__`` -> ``g_defaults``: a name for a constant read at that source."""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", name)
    if words and words[0] in ("L", "G", "C"):
        words = words[1:]
    text = "_".join(w.strip("_") for w in words[-2:] if w.strip("_"))
    return text if len(text) <= 40 else ""


def literal_code(value: Any) -> str | None:
    if isinstance(value, _LITERAL_TYPES):
        return repr(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    if type(value) is tuple and all(literal_code(v) is not None for v in value):
        return repr(value)
    return None


def fact_code(fact: GuardFact, consts: _Constants) -> str:
    """The Python condition for one fact (each kind writes its own: capture/guard_facts.py)."""
    consts.add_source(fact.source)
    return fact.code(consts)


def explain_fact(fact: GuardFact, actual: Any) -> str:
    """Why ``actual`` (the value now at the fact's source) fails the fact, in words."""
    try:
        return fact.explain(actual)
    except Exception as error:  # noqa: BLE001 - a value of another type: still a failure
        return f"{fact.source.name} failed its {fact.kind} guard ({type(error).__name__}: {error})"


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
    # source expression -> the local name ``condition`` binds to its value (once it held)
    reads: dict[str, str] = field(default_factory=dict)

    def changed_sizes(self, args: tuple, kwargs: dict) -> dict[str, set[int]]:
        """Sources whose sizes (array dims, or int and float values as dim -1) differ from this
        entry's: what automatic dynamic shapes makes dynamic at the next compile."""
        changed: dict[str, set[int]] = {}
        for fact, explainer in zip(self.facts, self._explainers):
            if fact.kind not in ("array", "equals"):
                continue
            try:
                ok, actual = explainer(*args, **kwargs)
            except Exception:  # noqa: BLE001
                continue
            if holds(ok):
                continue
            if fact.kind == "array" and hasattr(actual, "shape") and hasattr(actual, "dtype"):
                # (device arrays too: ``lower/numba/gpu``)
                dtype, shape, _ = fact.value
                if actual.ndim == len(shape) and actual.dtype == dtype:
                    dims = {i for i, (want, got) in enumerate(zip(shape, actual.shape))
                            if want is not None and want != got}
                    changed.setdefault(fact.source.name, set()).update(dims)
            elif fact.kind == "equals" and type(fact.value) in (int, float) \
                    and type(actual) is type(fact.value):  # (a float: config.specialize_float)
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
            if not holds(ok):
                reasons.append(explain_fact(fact, actual))
        return reasons


def build_guard(guards: GuardSet, sig: inspect.Signature, original: Callable,
                namespace: dict[str, Any], *, title: str, cache_dir: str | None) -> GuardFunction:
    """Generate, write and load the guard function for one cache entry."""
    consts = _Constants(namespace)
    facts = list(guards)
    conditions = [fact_code(f, consts) for f in facts]
    params = parameter_list(sig)
    pairs = body_conditions(facts, conditions, consts)
    reads = {facts[i].source.expr: found.group(1) for i, code in pairs
             if facts[i].kind == "array" and (found := _READ_ONCE.match(code))}
    checked, trees = _with_module_trees(pairs, facts, sig, consts)
    body = "\n        and ".join(f"({c})" for c in checked) if checked else "True"
    unpack = "".join(f"    {name} = ___ns[{name!r}]"
                     + (f"  # {consts.shown[name]}" if consts.shown.get(name) else "") + "\n"
                     for name in consts.namespace)
    explainers = "".join(
        f"    def explain_{i}({params}):\n        return ({c}), "
        f"{f.source.expr if f.reads_source else 'None'}\n"
        for i, (f, c) in enumerate(zip(facts, conditions)))
    source = (
        f"# {title}\n# Guards generated by astcompiler: the cache entry runs only when all hold.\n\n"
        f"def ___make_guard(___ns):\n{unpack}{trees}"
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
                         _explainers=explain_fns, condition=body, reads=reads)


def body_conditions(facts: list[GuardFact], conditions: list[str],
                    consts: _Constants) -> list[tuple[int, str]]:
    """(fact index, condition) for what the guard checks, in the facts' order: a fact read
    through ``type(e)``
    after a fact that pinned ``type(e) is C`` is checked on ``C`` itself (``___Linear.forward is
    ___forward``: nothing read through the instance), and a condition already checked is not
    checked again (two layers of one class share their class's facts)."""
    pinned: dict[str, Any] = {}  # source expression -> the class its type fact pinned
    known: dict[str, str] = {}  # an id fact's expression (as checked) -> its constant's name
    checked: list[tuple[int, str]] = []
    seen: set[str] = set()
    for index, (fact, condition) in enumerate(zip(facts, conditions)):
        on_class = _on_class(fact, pinned, consts)
        code = condition if on_class is None else on_class
        if fact.kind == "type" and isinstance(fact.value, type):
            pinned.setdefault(fact.source.expr, fact.value)
        if fact.kind == "id":
            code = _on_known(code, known)
            expr, _, name = code.rpartition(" is ")
            known.setdefault(expr, name)
        if code not in seen:
            seen.add(code)
            checked.append((index, code))
    return checked


def _with_module_trees(checked: list[tuple[int, str]], facts: list[GuardFact],
                       sig: inspect.Signature, consts: _Constants) -> tuple[list[str], str]:
    """The body's conditions with each module tree's covered facts replaced by one check, at
    the place of its first fact (``guards/module_tree.py``), and the trees' definitions."""
    covered = covered_facts(facts, set(sig.parameters)) if "astcompiler.nn" in sys.modules else {}
    if not covered:
        return [code for _, code in checked], ""
    from ..nn.modules import module as nn_state
    consts.namespace.update(___ModuleTree=ModuleTree, ___nn_state=nn_state)
    consts.shown.update(___ModuleTree="guards.module_tree.ModuleTree",
                        ___nn_state="<module 'astcompiler.nn.modules.module'>")
    roots = list(dict.fromkeys(covered[i] for i, _ in checked if i in covered))
    grouped = {root: [code for i, code in checked if covered.get(i) == root] for root in roots}
    items = {i: root for i, root in tree_items(facts, set(sig.parameters)).items() if root in roots}
    listed = {root: [facts[i].source.expr for i, _ in checked if items.get(i) == root]
              for root in roots}
    body: list[str] = []
    definitions = []
    for index, code in checked:
        root = covered.get(index)
        if root is None:
            body.append(_item_read(code, facts[index].source.expr, index, items, listed, roots,
                                   grouped))
        elif root in grouped:
            definition, check = tree_code(root, grouped.pop(root), roots.index(root),
                                          listed[root])
            definitions.append(definition)
            body.append(check)
    return body, "".join(definitions)


def _item_read(code: str, expr: str, index: int, items: dict[int, str],
               listed: dict[str, list[str]], roots: list[str], pending: dict) -> str:
    """An array fact on a registry item with its path read replaced by the tree's ``seen``
    (``module_tree.seen_item``), once that tree's check came before it in the body."""
    root = items.get(index)
    if root is None or root in pending:
        return code
    head = f" := {expr})"
    if code.count(head) != 1 or expr not in listed[root]:
        return code
    return code.replace(head, f" := {seen_item(roots.index(root), listed[root].index(expr))})")


def _on_known(code: str, known: dict[str, str]) -> str:
    """``E.name is K`` as ``C.name is K`` when an earlier id fact checked ``E is C`` (the same
    object whenever the guard holds; one lookup less: ``___forward.__code__``)."""
    expr, _, name = code.rpartition(" is ")
    head, dot, attr = expr.rpartition(".")
    if dot and head in known and attr.isidentifier():
        return f"{known[head]}.{attr} is {name}"
    return code


def _on_class(fact: GuardFact, pinned: dict[str, Any], consts: _Constants) -> str | None:
    """``fact``'s condition with its leading ``type(e)`` replaced by the class pinned for
    ``e`` (equal objects whenever the earlier type fact held), or None."""
    expr = fact.source.expr
    if not expr.startswith("type("):
        return None
    for inner, cls in pinned.items():
        head = f"type({inner})"
        if expr.startswith(head) and expr[len(head):len(head) + 1] == ".":
            source = Source(fact.source.name, consts.name(cls) + expr[len(head):],
                            fact.source.constants)
            return fact_code(dataclasses.replace(fact, source=source), consts)
    return None


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
