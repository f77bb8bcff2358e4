"""Symbolic shape rules declared by the op families (ops/sizes.py helpers), through capture."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import astcompiler as ac


def graph_of(fn, *args):
    compiled = ac.compile(fn, backend="eager", dynamic=True, fullgraph=True)
    compiled(*args)
    return compiled.entries[0].graph


def meta_of(graph, target):
    return [n.meta for n in graph.call_nodes() if n.target == target][-1]


s0 = sympy.Symbol("s0", integer=True, positive=True)
s1 = sympy.Symbol("s1", integer=True, positive=True)


@pytest.mark.parametrize("fn, target, expected", [
    (lambda x: x[1:], "getitem", (s0 - 1, s1)),
    (lambda x: x[:-2, 0], "getitem", (s0 - 2,)),
    (lambda x: x[::2], "getitem", None),          # ceiling(s0/2): checked by value below
    (lambda x: x.T, "transpose", (s1, s0)),
    (lambda x: x.reshape(-1), "reshape", (s0 * s1,)),
    (lambda x: x.ravel(), "ravel", (s0 * s1,)),
    (lambda x: x @ x.T, "matmul", (s0, s0)),
    (lambda x: np.concatenate([x, x]), "concatenate", (2 * s0, s1)),
    (lambda x: np.zeros((x.shape[0], 3)), "zeros", (s0, 3)),
    (lambda x: np.ones_like(x), "ones_like", (s0, s1)),
    (lambda x: x.sum(axis=0), "sum", (s1,)),
])
def test_rules(fn, target, expected):
    meta = meta_of(graph_of(fn, np.ones((6, 4))), target)
    if expected is None:
        assert meta.shape[0].subs({s0: 7}) == 4 and meta.shape[0].subs({s0: 6}) == 3
    else:
        assert tuple(sympy.simplify(a - b) == 0 for a, b in zip(meta.shape, expected)) \
            == (True,) * len(expected), meta.shape


def test_an_op_without_a_rule_gets_unbacked_sizes():
    meta = meta_of(graph_of(lambda x: np.tile(x, 2), np.ones(5)), "tile")
    assert str(meta.shape[0]).startswith("u")
