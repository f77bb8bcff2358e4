"""The op table of ``test_op_gradients.py`` compiled with numba, in groups (one compiled
function per group: the backward kernels fuse with the forward ones). Slow: numba compiles a
few large kernels (``-m slow``)."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac

from .fd import assert_gradients
from .test_op_gradients import A, B, BIG, POS, TABLE, UNIT

pytestmark = pytest.mark.slow


def _grad(fn, n_args):
    return ac.grad(fn, argnums=tuple(range(n_args)))


# numba: the rows in groups (each group one compiled function), inputs in each row's domain
GROUPS = {
    "pointwise": ["exp", "exp2", "expm1", "sin", "cos", "tanh", "sinh", "cosh", "arctan", "arcsinh",
                  "square", "absolute", "fabs", "floor", "ceil", "trunc", "rint", "sign",
                  "round", "clip", "astype", "copy", "negative", "positive"],
    "reductions": ["sum", "mean", "max", "min", "var", "std"],
    "views": ["getitem", "getitem[array]", "getitem[mask]", "reshape", "transpose", "ravel",
              "flatten", "squeeze", "expand_dims", "swapaxes", "broadcast_to", "asarray",
              "ascontiguousarray", "copy_"],
}


def total_of(names):
    fns = [TABLE[n][0] for n in names]

    def total(x):
        out = 0.0
        for fn in fns:
            out = out + fn(x)
        return out
    return total


def total2_of(names):
    fns = [TABLE[n][0] for n in names]

    def total(x, y):
        out = 0.0
        for fn in fns:
            out = out + fn(x, y)
        return out
    return total


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_numba_gradient_groups(group):
    fn = total_of(GROUPS[group])
    compiled = ac.compile(ac.grad(fn), backend="numba", fullgraph=True)
    assert_gradients(fn, [A], compiled(A))


def test_numba_binary_gradients():
    names = ["add", "subtract", "multiply", "maximum", "where", "logaddexp", "matmul[vec]",
             "dot", "concatenate", "stack", "setitem"]
    fn = total2_of(names)
    compiled = ac.compile(ac.grad(fn, argnums=(0, 1)), backend="numba", fullgraph=True)
    assert_gradients(fn, [A, B], compiled(A, B))


def test_numba_positive_domain_gradients():
    names = ["log", "log2", "log10", "log1p", "sqrt", "cbrt", "reciprocal", "power"]
    fn = total2_of(["power"])
    rest = total_of([n for n in names if n != "power"])

    def both(x, y):
        return fn(x, y) + rest(x)
    compiled = ac.compile(ac.grad(both, argnums=(0, 1)), backend="numba", fullgraph=True)
    assert_gradients(both, [POS, B], compiled(POS, B))


def test_numba_domain_groups():
    unit = total_of(["tan", "arcsin", "arccos", "arctanh"])
    big = total_of(["arccosh"])
    pair = total2_of(["divide", "arctan2", "hypot"])

    def both(x, y, z):
        return unit(x) + big(y) + pair(z, y)
    compiled = ac.compile(ac.grad(both, argnums=(0, 1, 2)), backend="numba", fullgraph=True)
    assert_gradients(both, [UNIT, BIG, A], compiled(UNIT, BIG, A))


@pytest.mark.parametrize("name", ["minimum", "matmul"])
def test_numba_own_inputs(name):
    fn, args = TABLE[name]
    compiled = ac.compile(_grad(fn, len(args)), backend="numba", fullgraph=True)
    assert_gradients(fn, args, compiled(*args))


def test_every_row_is_in_a_numba_test():
    covered = set().union(*GROUPS.values()) | {
        "add", "subtract", "multiply", "maximum", "where", "logaddexp", "matmul[vec]", "dot",
        "concatenate", "stack", "setitem", "log", "log2", "log10", "log1p", "sqrt", "cbrt",
        "reciprocal", "power", "tan", "arcsin", "arccos", "arctanh", "arccosh", "divide",
        "arctan2", "hypot", "minimum", "matmul"}
    assert set(TABLE) - covered == set()


def test_numba_nonstrict_trace_module_gradient():
    from .test_grad_api import Net, call_net
    from .fd import numeric_grad
    net, x = Net(), A[:, :3].copy()
    compiled = ac.compile(ac.grad(call_net, argnums=1), backend="numba", fullgraph=True)
    np.testing.assert_allclose(compiled(net, x), numeric_grad(lambda v: call_net(net, v), [x], 0),
                               rtol=1e-6, atol=1e-6)
