"""ac.pytree: flatten/unflatten/map for built-in containers and registered classes."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.pytree import PytreeRegistry

Point = namedtuple("Point", "x y")


def test_builtin_containers_round_trip():
    tree = {"a": (1, [2.0, np.ones(2)]), "b": None, "c": Point(3, 4)}
    leaves, spec = ac.pytree.tree_flatten(tree)
    assert leaves[:2] == [1, 2.0] and leaves[3:] == [3, 4]
    assert spec.num_leaves == 5
    rebuilt = ac.pytree.tree_unflatten(leaves, spec)
    assert rebuilt["c"] == Point(3, 4) and type(rebuilt["c"]) is Point
    assert list(rebuilt) == ["a", "b", "c"] and rebuilt["b"] is None


def test_tree_map_over_several_trees():
    out = ac.pytree.tree_map(lambda a, b: a + b, {"k": [1, 2]}, {"k": [10, 20]})
    assert out == {"k": [11, 22]}
    with pytest.raises(ValueError, match="structures differ"):
        ac.pytree.tree_map(lambda a, b: a, [1], [1, 2])


def test_register_node_dataclass_and_constant():
    registry = PytreeRegistry()

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    registry.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))

    @registry.register_dataclass
    @dataclass
    class State:
        pos: object
        vel: object

    @dataclass(frozen=True)
    class Mode:
        name: str

    registry.register_constant(Mode)
    leaves, spec = registry.tree_flatten([Pair(1, 2), State(3, 4), Mode("fast")])
    assert leaves == [1, 2, 3, 4]
    rebuilt = registry.tree_unflatten([5, 6, 7, 8], spec)
    assert (rebuilt[0].a, rebuilt[1].vel, rebuilt[2]) == (5, 8, Mode("fast"))
    with pytest.raises(TypeError, match="__eq__"):
        registry.register_constant(Pair)
    with pytest.raises(ValueError, match="already registered"):
        registry.register_pytree_node(Pair, lambda p: ([], None), lambda c, _: None)
