"""A graph break inside an inlined helper splits the helper; split functions return tuples
(issue 9, group 5)."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter


def _check(fn, make_args, backend_name="eager", calls=3):
    """Plain and compiled (through a CompileCounter) agree on every call; returns the counter."""
    from astcompiler.lower import lookup_backend
    counter = CompileCounter()

    def backend(graph, inputs):
        counter(graph, inputs)
        return lookup_backend(backend_name)(graph, inputs)

    compiled = ac.compile(fn, backend=backend)
    for _ in range(calls):
        plain_args, compiled_args = make_args(), make_args()
        expected, got = fn(*plain_args), compiled(*compiled_args)
        assert type(expected) is type(got)
        if isinstance(expected, tuple):
            assert len(expected) == len(got)
            for e, g in zip(expected, got):
                assert type(e) is type(g)
                np.testing.assert_allclose(e, g)
        else:
            np.testing.assert_allclose(expected, got)
        for p, c in zip(plain_args, compiled_args):
            if isinstance(p, list):
                assert len(p) == len(c) and all(np.allclose(a, b) for a, b in zip(p, c))
    return counter


def breaks(x):
    y = np.sin(x)
    ac.graph_break()
    return y + 1


def calls_breaking_helper(x):
    return breaks(x) * 2


def calls_through_a_helper(x):
    return calls_breaking_helper(x) + 1


def calls_helper_twice(x):
    return breaks(x) + breaks(x + 1)


def calls_helper_in_a_loop(x):
    for _ in range(2):
        x = breaks(x)
    return x


def calls_an_alias(x):
    helper = breaks
    return helper(x) * 2


def make_closure():
    def inner(x):
        y = np.cos(x)
        ac.graph_break()
        return y - 1

    def outer(x):
        return inner(x) * 2

    return outer


class Model:
    def __init__(self):
        self.scale = 3.0

    def step(self, x):
        y = np.exp(-x) * self.scale
        print("inside step")
        return y.sum()


MODEL = Model()


def calls_a_method(x):
    return MODEL.step(x) + 1


def logs_in_helper(x, history):
    return logging_helper(x, history) * 2


def logging_helper(x, history):
    y = np.tanh(x)
    print("log")
    history.append(y.sum())
    return y * 3


CASES = [calls_breaking_helper, calls_through_a_helper, calls_helper_twice,
         calls_helper_in_a_loop, calls_an_alias, make_closure(), calls_a_method]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_a_break_in_a_helper_splits_the_helper(fn, capsys):
    counter = _check(fn, lambda: (np.arange(4.0),))
    assert counter.frame_count >= 2


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
def test_split_helper_on_other_backends(backend):
    counter = _check(calls_breaking_helper, lambda: (np.arange(4.0),), backend)
    assert counter.frame_count == 2


def test_effects_after_a_break_in_a_helper_reach_the_caller(capsys):
    counter = _check(logs_in_helper, lambda: (np.arange(3.0), []))
    assert counter.frame_count >= 2
    compiled = ac.compile(logs_in_helper, backend="eager")
    history = []
    for _ in range(3):
        compiled(np.arange(3.0), history)
    assert len(history) == 3 and np.isclose(history[0], np.tanh(np.arange(3.0)).sum())


def tuple_after_break(x):
    y = x + 1
    print("break")
    return y.sum(), float(y.max())


def tuple_in_prefix(x, early):
    y = x * 2
    if early:
        return y.min(), y.max()
    print("break")
    return y.sum(), -1.0


def tuple_from_helper(x):
    return breaks(x), float(x.sum())


def starred_tuple(x):
    parts = [x.sum(), x.max()]
    ac.graph_break()
    return *parts, x.min()


@pytest.mark.parametrize("fn", [tuple_after_break, tuple_from_helper, starred_tuple],
                         ids=lambda f: f.__name__)
def test_unparenthesised_tuple_returns_in_split_functions(fn, capsys):
    counter = _check(fn, lambda: (np.arange(3.0),))
    assert counter.frame_count >= 1


@pytest.mark.parametrize("early", [True, False])
def test_tuple_return_inside_the_prefix(early, capsys):
    _check(tuple_in_prefix, lambda: (np.arange(3.0), early))
