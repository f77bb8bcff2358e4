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
(their shape and dtype can change in place), class attributes, globals, user attributes.

Covered, for a root parameter ``R`` whose type is a Module subclass and the module paths
``P`` below it (``R._modules['fc']``, ...): the type of ``P`` (P != R), the type, keys and
length of ``P._parameters`` / ``P._buffers`` / ``P._modules`` when it is a ``ModuleRegistry``,
``None`` items of those registries, ``'name' not in P.__dict__``, and ``P.training`` /
``P._compile_kwargs`` when they are None or a bool. Not covered (not seen, as with hook
dictionaries edited by hand): writes into ``module.__dict__`` or with ``object.__setattr__``.
"""

from __future__ import annotations

import ast
import re
import weakref
from typing import Any, Callable

from ..capture.guard_facts import GuardFact

__all__ = ["ModuleTree", "covered_facts", "tree_code"]

_REGISTRIES = ("_parameters", "_buffers", "_modules")
_STATE = ("training", "_compile_kwargs")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _nothing() -> None:
    return None


class ModuleTree:
    """One tree root's covered facts (``facts(root) -> bool``) and what last passed them:
    ``seen`` is ``(weak reference to the root, the state version read before checking)``."""

    __slots__ = ("facts", "state", "seen")

    def __init__(self, facts: Callable[[Any], bool], state: Any) -> None:
        self.facts = facts
        self.state = state  # the module holding ``_state_version`` (nn.modules.module)
        self.seen: tuple[Callable[[], Any], int] = (_nothing, -1)

    def check(self, root: Any) -> bool:
        """Check the facts on ``root``; remember it when they hold (the version is read first:
        a change while checking moves it, so the next call checks again)."""
        version = self.state._state_version
        if not self.facts(root):
            return False
        try:
            self.seen = (weakref.ref(root), version)
        except TypeError:  # no weak references to it: checked on every call
            pass
        return True


def _is_module_class(value: Any) -> bool:
    from ..nn.modules.module import Module
    return isinstance(value, type) and issubclass(value, Module)


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
    paths: dict[str, str] = {}  # module path -> its root
    registries: dict[str, str] = {}  # ModuleRegistry path -> its root
    covered: dict[int, str] = {}
    for index, fact in enumerate(facts):
        expr, kind, root = fact.source.expr, fact.kind, None
        if kind == "type" and _is_module_class(fact.value):
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
        elif kind in ("keys", "len"):
            root = registries.get(expr)
        elif kind == "absent" and expr.endswith(".__dict__"):
            root = paths.get(expr[:-len(".__dict__")])
        elif kind == "equals" and (fact.value is None or isinstance(fact.value, bool)):
            root = _attribute_of(expr, paths, _STATE) or _item_of(expr, registries)
        if root is not None:
            covered[index] = root
    return covered


def tree_code(root: str, conditions: list[str], number: int) -> tuple[str, str]:
    """(the definitions inside ``___make_guard``, the condition in the guard's body) for one
    root's covered conditions."""
    name = f"____tree_{number}"  # (constants never start with four underscores)
    body = "\n            and ".join(f"({c})" for c in conditions)
    definition = (
        f"    def tree_{number}({root}):  # re-checked only when nn.modules.state_version() moved\n"
        f"        return ({body})\n"
        f"    {name} = ___ns[{name!r}] = ___ModuleTree(tree_{number}, ___nn_state)\n")
    check = (f"{name}.seen[0]() is {root} and {name}.seen[1] == ___nn_state._state_version "
             f"or {name}.check({root})")
    return definition, check
