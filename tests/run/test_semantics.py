"""Compiled == eager across backends: values, dtype, shape, scalar-ness, mutations, identity."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import BACKENDS, check_compiled

X = np.arange(12.0).reshape(3, 4) - 5.5


def inplace_ops(x):
    x += 1
    x[0, 0] = 7
    x[1] *= 2
    return x


def out_argument(x):
    y = np.empty_like(x)
    np.add(x, 1, out=y)
    return y


def mutate_view(x):
    v = x[1:, ::2]
    v *= 2
    return x.T[0]


def scalar_result(x):
    return x.sum() / x.size


def containers(x):
    return (x, x + 1, [x.shape, {"a": x.ndim}])


def reductions(x):
    return x.mean(axis=0), x.max(axis=-1, keepdims=True), np.argmax(x), x.std(), x.sum((0, 1))


def boolean_mask_read(x):
    return x[x > 3] * 2


def boolean_mask_write(x):
    x[x > 5] = 0
    return x


def fancy_index(x):
    return x[[0, 2]] + x[[1, 2], 1:2]


def where_and_cast(x):
    return np.where(x > 2, x, 0.0).astype(np.float32) * 2


def integer_division(a):
    return a // 3, a % 3, -a // 2, a ** 2, a >> 1, a & 5, ~a


def static_branches(x, n=3, flag=True):
    y = x * 2 if flag else x
    if n > 2 and x.shape[0] > 2:
        y = y + 1
    elif n is None:
        y = y - 1
    for i in range(n):
        y = y + x[i % x.shape[0]]
    return y


def helper_a(x):
    return x * 3


def calls_helper(x):
    return helper_a(x) + helper_a(x + 1)


def comprehension(x):
    return sum([x[i] for i in range(x.shape[0])])


def with_kwonly(x, *, alpha=2.0, beta=None):
    return x * alpha if beta is None else x * beta


def isinstance_and_len(x):
    if isinstance(x, np.ndarray) and len(x) > 1:
        return x[: len(x) // 2]
    return x


CASES = [
    (inplace_ops, (X,)), (out_argument, (X,)), (mutate_view, (X,)), (scalar_result, (X,)),
    (containers, (X,)), (reductions, (X,)), (boolean_mask_read, (X,)),
    (boolean_mask_write, (X,)), (fancy_index, (X,)), (where_and_cast, (X,)),
    (integer_division, (np.arange(-5, 5, dtype=np.int32),)), (static_branches, (X,)),
    (calls_helper, (X,)), (comprehension, (X,)), (with_kwonly, (X,)),
    (isinstance_and_len, (X,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_matches_eager(fn, args, backend):
    compiled = check_compiled(fn, *args, backend=backend)
    assert len(compiled.entries) == 1
    assert not compiled.entries[0].is_eager, compiled.entries[0].break_reason


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make_input", [
    lambda: np.array(2.5),                                  # 0-d
    lambda: np.zeros((0, 3)),                               # empty
    lambda: np.arange(24.0).reshape(4, 6)[::2, 1::2],       # non-contiguous
    lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    lambda: np.arange(10.0)[::-1],                          # negative strides
    lambda: np.float64(3.0),                                # NumPy scalar
], ids=["0d", "empty", "strided", "fortran", "negative", "npscalar"])
def test_input_layouts(make_input, backend):
    def fn(x):
        return np.sin(x) * 2.0 + x
    check_compiled(fn, make_input(), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_returning_an_input_keeps_identity(backend):
    def ident(x, y):
        return x, y[1:]
    x = np.ones(3)
    compiled = ac.compile(ident, backend=backend)
    a, b = compiled(x, x)
    assert a is x
    assert b.base is x and np.shares_memory(b, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_and_numpy_scalars_follow_nep50(backend):
    def fn(x, s):
        return x * s + 1.5
    check_compiled(fn, np.ones(3, np.float32), 2.0, backend=backend)
    check_compiled(fn, np.ones(3, np.float32), np.float64(2.0), backend=backend)
    check_compiled(fn, np.ones(3, np.int32), 3, backend=backend)


def test_closures_methods_lambdas_and_wraps():
    def make(k):
        def inner(x):
            return x * k
        return inner

    def deco(f):
        @functools.wraps(f)
        def wrapper(*a, **kw):
            return f(*a, **kw) + 1
        return wrapper

    @deco
    def wrapped(x):
        return x * 2

    class Model:
        scale = 3.0

        @ac.compile(backend="eager")
        def forward(self, x):
            return x * self.scale

    check_compiled(make(3.0), X)
    check_compiled(lambda x: x * 2 + 1, X)
    check_compiled(wrapped, X)
    np.testing.assert_array_equal(Model().forward(X), X * 3.0)


def test_unsupported_statement_splits_the_function(capsys):
    def prints(x):
        y = x * 2
        print("side effect")
        return y + 1

    compiled = check_compiled(prints, X)
    entry = compiled.entries[0]
    assert entry.pieces and "print()" in entry.break_reason.reason
    assert [len(p.entries) for p in entry.pieces] == [1, 1]
    assert all(not p.entries[0].is_eager for p in entry.pieces)
    assert capsys.readouterr().out.count("side effect") == 2


def test_data_dependent_branch_with_early_return_is_a_branch_region():
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return -x
    for sign in (1, -1):
        compiled = check_compiled(fn, sign * np.abs(X) + 0.5)
        assert not compiled.entries[0].is_eager
        assert any(n.op == "region" for n in compiled.entries[0].graph.nodes)


def test_is_compiling_and_graph_break():
    def fn(x):
        return x + (1 if ac.is_compiling() else 0)

    assert ac.compile(fn, backend="eager")(np.zeros(2))[0] == 1
    assert fn(np.zeros(2))[0] == 0

    def breaks(x):
        ac.graph_break()
        return x + 1
    compiled = check_compiled(breaks, X)
    assert "graph_break()" in compiled.entries[0].break_reason.reason


WEIGHTS = np.arange(3.0)


def uses_global_array(x):
    return x * WEIGHTS


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_arrays_are_inputs_not_baked_constants(backend):
    global WEIGHTS
    fn = ac.compile(uses_global_array, backend=backend)
    x = np.ones(3)
    np.testing.assert_array_equal(fn(x), [0.0, 1.0, 2.0])
    WEIGHTS[0] = 10.0  # in-place update: seen without recompiling
    np.testing.assert_array_equal(fn(x), [10.0, 1.0, 2.0])
    saved = WEIGHTS
    WEIGHTS = np.full(3, 7.0)  # rebinding to a same-shaped array: same entry
    try:
        np.testing.assert_array_equal(fn(x), [7.0, 7.0, 7.0])
        assert len(fn.entries) == 1
    finally:
        WEIGHTS = saved
        WEIGHTS[0] = 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_containers_of_arrays_as_arguments(backend):
    def fn(pair, table, scale=2):
        a, b = pair
        return {"sum": a + b * table["w"], "n": len(pair) * scale}
    check_compiled(fn, (np.ones(3), np.arange(3.0)), {"w": np.full(3, 2.0)}, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_equal_values_that_are_later_mutated_stay_distinct(backend):
    def fn(x):
        y1 = x + 1
        y2 = x + 1
        y1[0] = 5
        return y2, np.sort(x), np.sort(x)
    result = check_compiled(fn, np.arange(4.0), backend=backend)(np.arange(4.0))
    assert result[1] is not result[2]


def test_two_lambdas_on_one_line_are_told_apart():
    pair = (lambda x: x + 1, lambda x: x * 10)
    np.testing.assert_array_equal(ac.compile(pair[1], backend="eager")(np.ones(2)), [10.0, 10.0])
    np.testing.assert_array_equal(ac.compile(pair[0], backend="eager")(np.ones(2)), [2.0, 2.0])
