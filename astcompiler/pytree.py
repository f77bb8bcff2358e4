"""``ac.pytree``: nested containers as flat lists of leaves plus a structure (a ``TreeSpec``).

Built in: tuples, lists, dicts (keys in insertion order), named tuples, ``None``. User classes
join with ``register_pytree_node`` (flatten/unflatten functions), ``register_dataclass`` (fields
are children) or ``register_constant`` (the whole value is part of the structure, compared by
equality: no leaves). Registrations are per registry; the module-level functions use a default
one, and ``PytreeRegistry()`` gives an isolated one for embedding.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable

FlattenFn = Callable[[Any], tuple[Iterable[Any], Any]]
UnflattenFn = Callable[[Iterable[Any], Any], Any]


@dataclass(frozen=True)
class NodeDef:
    kind: type
    flatten: FlattenFn
    unflatten: UnflattenFn
    constant: bool = False


@dataclass(frozen=True)
class TreeSpec:
    """The structure of a pytree: node type, its context and the children's specs (a leaf has
    ``kind is None``)."""

    kind: Any
    context: Any
    children: tuple["TreeSpec", ...] = ()

    @property
    def is_leaf(self) -> bool:
        return self.kind is None

    @property
    def num_leaves(self) -> int:
        if self.is_leaf:
            return 1
        return sum(child.num_leaves for child in self.children)

    def __repr__(self) -> str:
        if self.is_leaf:
            return "*"
        name = getattr(self.kind, "__name__", str(self.kind))
        inner = ", ".join(repr(c) for c in self.children)
        return f"{name}({self.context!r}; {inner})" if self.context is not None else f"{name}({inner})"


LEAF = TreeSpec(None, None)


def _namedtuple_flatten(value: Any) -> tuple[list, Any]:
    return list(value), type(value)


class PytreeRegistry:
    """Which types are containers (nodes) and how to take them apart."""

    def __init__(self) -> None:
        self._nodes: dict[type, NodeDef] = {}
        self._lock = threading.Lock()
        self.register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
        self.register_pytree_node(list, lambda l: (list(l), None), lambda c, _: list(c))
        self.register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())),
                                  lambda c, keys: dict(zip(keys, c)))
        self.register_pytree_node(type(None), lambda n: ([], None), lambda c, _: None)

    def register_pytree_node(self, cls: type, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn,
                             **_: Any) -> None:
        """``flatten_fn(obj) -> (children, context)``; ``unflatten_fn(children, context) -> obj``."""
        with self._lock:
            if cls in self._nodes and cls not in (tuple, list, dict, type(None)):
                raise ValueError(f"{cls.__qualname__} is already registered as a pytree node")
            self._nodes[cls] = NodeDef(cls, flatten_fn, unflatten_fn)

    def register_dataclass(self, cls: type, *, field_names: list[str] | None = None,
                           **_: Any) -> type:
        """A dataclass whose fields are its children (usable as a decorator)."""
        if field_names is None:
            if not dataclasses.is_dataclass(cls):
                raise TypeError(f"{cls.__qualname__} is not a dataclass: pass field_names")
            field_names = [f.name for f in dataclasses.fields(cls) if f.init]
        names = list(field_names)
        self.register_pytree_node(
            cls, lambda obj: ([getattr(obj, n) for n in names], tuple(names)),
            lambda children, keys: cls(**dict(zip(keys, children))))
        return cls

    def register_constant(self, cls: type) -> type:
        """Instances are constants: part of the structure (compared by equality), no leaves.
        The class must define ``__eq__`` and ``__hash__``."""
        if cls.__eq__ is object.__eq__ or cls.__hash__ is None:
            raise TypeError(f"register_constant({cls.__qualname__}) needs __eq__ and __hash__")
        with self._lock:
            self._nodes[cls] = NodeDef(cls, lambda obj: ([], obj), lambda c, obj: obj, constant=True)
        return cls

    def node_def(self, value: Any) -> NodeDef | None:
        kind = type(value)
        found = self._nodes.get(kind)
        if found is None and isinstance(value, tuple) and hasattr(kind, "_fields"):
            return NodeDef(kind, _namedtuple_flatten, lambda c, t: t(*c))
        return found

    def is_constant(self, value: Any) -> bool:
        found = self._nodes.get(type(value))
        return found is not None and found.constant

    # ----- flattening ----------------------------------------------------------------------------
    def tree_flatten(self, tree: Any, is_leaf: Callable[[Any], bool] | None = None
                     ) -> tuple[list[Any], TreeSpec]:
        leaves: list[Any] = []
        spec = self._flatten(tree, leaves, is_leaf)
        return leaves, spec

    def _flatten(self, tree: Any, leaves: list, is_leaf: Callable[[Any], bool] | None) -> TreeSpec:
        if is_leaf is not None and is_leaf(tree):
            leaves.append(tree)
            return LEAF
        node = self.node_def(tree)
        if node is None:
            leaves.append(tree)
            return LEAF
        children, context = node.flatten(tree)
        specs = tuple(self._flatten(child, leaves, is_leaf) for child in children)
        return TreeSpec(node.kind, context, specs)

    def tree_unflatten(self, leaves: Iterable[Any], spec: TreeSpec) -> Any:
        iterator = iter(leaves)
        result = self._unflatten(iterator, spec)
        if next(iterator, _END) is not _END:
            raise ValueError(f"too many leaves for {spec!r}")
        return result

    def _unflatten(self, leaves: Any, spec: TreeSpec) -> Any:
        if spec.is_leaf:
            value = next(leaves, _END)
            if value is _END:
                raise ValueError("too few leaves for the tree structure")
            return value
        node = self._nodes.get(spec.kind)
        children = [self._unflatten(leaves, child) for child in spec.children]
        if node is None:  # a named tuple
            return spec.kind(*children)
        return node.unflatten(children, spec.context)

    def tree_map(self, fn: Callable[..., Any], tree: Any, *rest: Any,
                 is_leaf: Callable[[Any], bool] | None = None) -> Any:
        leaves, spec = self.tree_flatten(tree, is_leaf)
        others = [self.tree_flatten(r, is_leaf) for r in rest]
        for other_leaves, other_spec in others:
            if other_spec != spec:
                raise ValueError(f"tree structures differ: {spec!r} vs {other_spec!r}")
        mapped = [fn(*values) for values in zip(leaves, *(o[0] for o in others))]
        return self.tree_unflatten(mapped, spec)

    def tree_leaves(self, tree: Any) -> list[Any]:
        return self.tree_flatten(tree)[0]


_END = object()
DEFAULT = PytreeRegistry()

register_pytree_node = DEFAULT.register_pytree_node
register_dataclass = DEFAULT.register_dataclass
register_constant = DEFAULT.register_constant
tree_flatten = DEFAULT.tree_flatten
tree_unflatten = DEFAULT.tree_unflatten
tree_map = DEFAULT.tree_map
tree_leaves = DEFAULT.tree_leaves

__all__ = ["PytreeRegistry", "TreeSpec", "register_pytree_node", "register_dataclass",
           "register_constant", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves"]
