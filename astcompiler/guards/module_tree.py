"""Module-tree guards: the facts about an ``ac.nn`` module tree that only the module API can
change, checked once per change instead of on every call.

A compiled module call relies on many facts about the tree it was given: the type of every
submodule, the keys of every registry, that no method was patched onto an instance, the
``training`` flags. Each of them can change only through ``Module.__setattr__`` /
``__delattr__``, ``register_*``, ``train``/``eval`` or the registries' own dict methods, and
every one of those moves ``nn.modules.state_version()``. So the guard checks them in one
function per tree root (``tree_0(module)``) and remembers the root that passed (by weak
reference) and the version then: the next call with the same root at the same version skips
them. Everything else stays an ordinary check on every call: parameter and buffer arrays
(their shape and dtype can change in place), class attributes, globals, user attributes. The
parameter and buffer arrays themselves are read from what the last check saw (``items``, by
weak reference): at the same version the registries hold the same objects.

Covered, for a root parameter ``R`` whose type is a Module subclass and the module paths
``P`` below it (``R._modules['fc']``, ...): the type of ``P`` (P != R), the type, keys and
length of ``P._parameters`` / ``P._buffers`` / ``P._modules`` when it is a ``ModuleRegistry``,
``None`` items of those registries, ``'name' not in P.__dict__``, and ``P.training`` /
``P._compile_kwargs`` when they are None or a bool, and the class attributes read on the type of
``P`` (``___Linear.forward is ___forward``) when every class of its MRO but ``object`` is a
``nn.Module`` class (their metaclass ``ModuleType`` moves the version on class attribute
writes; a plain mixin's do not, so its classes' facts stay per-call checks, as do the
functions' ``__code__``), and the global hooks' ``_hooks_version``. Not covered (not seen, as with hook
dictionaries edited by hand): writes into ``module.__dict__`` or with ``object.__setattr__``,
and registry writes through ``dict``'s own methods (``dict.__setitem__(m._parameters, k, v)``).
"""

from __future__ import annotations

import ast
import re
import weakref
from typing import Any, Callable

from ..capture.guard_facts import GuardFact

__all__ = ["ModuleTree", "covered_facts", "seen_item", "tree_code", "tree_items"]

_REGISTRIES = ("_parameters", "_buffers", "_modules")
_STATE = ("training", "_compile_kwargs")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _nothing() -> None:
    return None


class ModuleTree:
    """One tree root's covered facts (``facts(root) -> bool``) and what last passed them:
    ``seen`` is ``(weak reference to the root, the state version read before checking, weak
    references to the registry items ``items(root)`` reads)``. At the same root and version the
    items are the same objects (replacing one moves the version), so the guard reads them from
    ``seen`` instead of their paths; their type, dtype and shape are still checked."""

    __slots__ = ("facts", "state", "seen", "items")

    def __init__(self, facts: Callable[[Any], bool], state: Any,
                 items: Callable[[Any], tuple] | None = None) -> None:
        self.facts = facts
        self.state = state  # the module holding ``_state_version`` (nn.modules.module)
        self.items = items
        self.seen: tuple[Callable[[], Any], int, tuple] = (_nothing, -1, ())

    def check(self, root: Any) -> tuple | None:
        """Check the facts on ``root``: the new ``seen`` tuple when they hold (remembered when
        everything in it has weak references), else None. The version is read first: a change
        while checking moves it, so the next call checks again."""
        version = self.state._state_version
        if not self.facts(root):
            return None
        try:
            values = self.items(root) if self.items is not None else ()
        except Exception:  # noqa: BLE001 - an item that is gone: not this entry
            return None
        keep = True
        refs: list[Callable[[], Any]] = []
        for value in (root, *values):
            try:
                refs.append(weakref.ref(value))
            except TypeError:  # no weak references to it: checked on every call
                refs.append(_holder(value))
                keep = False
        seen = (refs[0], version, tuple(refs[1:]))
        if keep:
            self.seen = seen
        return seen


def _holder(value: Any) -> Callable[[], Any]:
    return lambda: value


def _is_module_class(value: Any) -> bool:
    from ..nn.modules.module import Module
    return isinstance(value, type) and issubclass(value, Module)


def _class_covered(cls: Any) -> bool:
    """Whether every class ``cls``'s attributes are looked up on (its MRO but ``object``,
    which cannot change) is a ``ModuleType`` instance: one whose attribute writes move the
    state version."""
    from ..nn.modules.module import Module
    meta = type(Module)
    return isinstance(cls, type) and all(isinstance(c, meta) for c in cls.__mro__[:-1])


def _class_attribute_of(expr: str, classes: dict[str, Any], paths: dict[str, str]) -> str | None:
    """The root of ``expr`` when it is ``type(P).name``, ``P`` a module path whose pinned
    class is covered (``_class_covered``)."""
    if not expr.startswith("type("):
        return None
    inner, close, name = expr[len("type("):].rpartition(").")
    if not close or not _NAME.match(name) or inner not in paths:
        return None
    return paths[inner] if _class_covered(classes.get(inner)) else None


def _is_hooks_version(fact: GuardFact) -> bool:
    """Whether ``fact`` reads ``nn.modules.module._hooks_version`` (as ``capture/lifting.py``
    and ``autodiff/module_hooks.py`` name it; each change of the global hooks moves the state
    version after it)."""
    return (fact.source.name == "nn.modules.hooks_version()"
            and fact.source.expr == "___nn_module._hooks_version")


def _is_registry_class(value: Any) -> bool:
    return isinstance(value, type) and getattr(value, "__ac_dict__", False) is True


def _item_of(expr: str, containers: dict[str, str]) -> str | None:
    """The root of ``expr`` when it is ``C[literal]`` for a container ``C`` in ``containers``."""
    if not expr.endswith("]"):
        return None
    for container, root in containers.items():
        if expr.startswith(container + "["):
            try:
                ast.literal_eval(expr[len(container) + 1:-1])
            except (ValueError, SyntaxError):
                continue
            return root
    return None


def _attribute_of(expr: str, paths: dict[str, str], names: tuple[str, ...]) -> str | None:
    """The root of ``expr`` when it is ``P.name``, ``P`` a module path and ``name`` in ``names``."""
    head, dot, name = expr.rpartition(".")
    return paths.get(head) if dot and name in names else None


def covered_facts(facts: list[GuardFact], params: set[str]) -> dict[int, str]:
    """Fact index -> the root parameter whose tree version covers it (see the module doc)."""
    return _scan(facts, params)[0]


def tree_items(facts: list[GuardFact], params: set[str]) -> dict[int, str]:
    """Array fact index -> its tree root, for arrays that are items of a covered
    ``_parameters`` or ``_buffers`` registry (read from the tree's ``seen``; see ModuleTree)."""
    registries = _scan(facts, params)[1]
    params_and_buffers = {r: v for r, v in registries.items()
                          if r.endswith(("._parameters", "._buffers"))}
    found = {}
    for index, fact in enumerate(facts):
        if fact.kind == "array" and not fact.source.expr.isidentifier():
            root = _item_of(fact.source.expr, params_and_buffers)
            if root is not None:
                found[index] = root
    return found


def _scan(facts: list[GuardFact], params: set[str]) -> tuple[dict[int, str], dict[str, str]]:
    paths: dict[str, str] = {}  # module path -> its root
    registries: dict[str, str] = {}  # ModuleRegistry path -> its root
    classes: dict[str, Any] = {}  # module path -> the class its type fact pinned
    covered: dict[int, str] = {}
    for index, fact in enumerate(facts):
        expr, kind, root = fact.source.expr, fact.kind, None
        if kind == "type" and _is_module_class(fact.value):
            classes.setdefault(expr, fact.value)
            if expr in params and _NAME.match(expr):
                paths.setdefault(expr, expr)  # the root itself: its type is checked every call
                continue
            root = _item_of(expr, {r: v for r, v in registries.items() if r.endswith("._modules")})
            if root is not None:
                paths.setdefault(expr, root)
        elif kind == "type" and _is_registry_class(fact.value):
            root = _attribute_of(expr, paths, _REGISTRIES)
            if root is not None:
                registries.setdefault(expr, root)
        elif kind == "id":
            root = _class_attribute_of(expr, classes, paths)
        elif kind == "equals" and paths and _is_hooks_version(fact):
            root = next(iter(paths.values()))  # any tree: hook changes move the version
        elif kind in ("keys", "len"):
            root = registries.get(expr)
        elif kind == "absent" and expr.endswith(".__dict__"):
            root = paths.get(expr[:-len(".__dict__")])
        elif kind == "equals" and (fact.value is None or isinstance(fact.value, bool)):
            root = _attribute_of(expr, paths, _STATE) or _item_of(expr, registries)
        if root is not None:
            covered[index] = root
    return covered, registries


def tree_code(root: str, conditions: list[str], number: int,
              items: list[str] | None = None) -> tuple[str, str]:
    """(the definitions inside ``___make_guard``, the condition in the guard's body) for one
    root's covered conditions; ``items``: the registry item paths ``seen`` keeps (see
    ``seen_item``)."""
    name = f"____tree_{number}"  # (constants never start with four underscores)
    body = "\n            and ".join(f"({c})" for c in conditions)
    listed = "".join(f"{item}, " for item in items or ())
    reader = (f"    def items_{number}({root}):  # what the guard reads from ``seen``\n"
              f"        return ({listed.rstrip(' ')})\n") if items else ""
    definition = (
        f"    def tree_{number}({root}):  # re-checked only when nn.modules.state_version() moved\n"
        f"        return ({body})\n{reader}"
        f"    {name} = ___ns[{name!r}] = ___ModuleTree(tree_{number}, ___nn_state"
        f"{f', items_{number}' if items else ''})\n")
    # ``seen`` read once (another thread may replace it between two reads); a new check gives
    # the new one
    check = (f"(____seen_{number} := {name}.seen)[0]() is {root} "
             f"and ____seen_{number}[1] == ___nn_state._state_version "
             f"or (____seen_{number} := {name}.check({root}))")
    return definition, check


def seen_item(number: int, index: int) -> str:
    """The expression reading registry item ``index`` of tree ``number`` from its ``seen``."""
    return f"____seen_{number}[2][{index}]()"
