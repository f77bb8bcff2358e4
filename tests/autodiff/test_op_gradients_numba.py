"""The gradient table of ``test_op_gradients.py`` compiled with numba.

numba's compile time grows faster than the kernel (the backward kernels fuse with the forward
ones), so the CI run compiles small groups: one row per *rule kind* (the code object of an op's
derivative rule or store: the 27 unary pointwise ops share one rule, ``unary``, with a per-op
formula) and the ops whose rule is written by hand; every row of the table runs on ``aot_eager`` in
``test_op_gradients.py``. ``ASTCOMPILER_FULL_GRAD_TESTS=1`` also compiles every row with numba, in
the larger groups of ``FULL_GROUPS`` (minutes). Marked slow (``-m slow``)."""

from __future__ import annotations

import os
from typing import Callable

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.ops import REGISTRY

from .fd import assert_gradients, numeric_grad
from .test_op_gradients import A, B, BIG, M, POS, TABLE, UNIT

pytestmark = pytest.mark.slow

FULL = os.environ.get("ASTCOMPILER_FULL_GRAD_TESTS") == "1"
needs_full = pytest.mark.skipif(not FULL, reason="set ASTCOMPILER_FULL_GRAD_TESTS=1 for every row")

# group -> (rows, arguments of the group's function); each row's function takes the first
# ``len(row args)`` arguments, so rows of one group share their inputs' domain
CI_GROUPS = {
    "pointwise": (["tanh", "sin", "floor", "clip", "astype", "copy"], [A]),
    "binary": (["multiply", "maximum", "where", "matmul[vec]"], [A, B]),
    "positive": (["power", "log"], [POS, B]),
    "reductions": (["sum", "mean", "max", "var"], [A]),
    "views": (["getitem", "getitem[array]", "getitem[mask]", "reshape", "transpose"], [A]),
    "reshapes": (["swapaxes", "broadcast_to", "ravel", "asarray", "copy_"], [A]),
    "joins": (["concatenate", "stack", "setitem"], [A, B]),
    "matmul": (["matmul"], [A, M]),
}

# the whole table, in larger groups (ASTCOMPILER_FULL_GRAD_TESTS=1)
FULL_GROUPS = {
    "pointwise": (["exp", "exp2", "expm1", "sin", "cos", "tanh", "sinh", "cosh", "arctan",
                   "arcsinh", "square", "absolute", "fabs", "floor", "ceil", "trunc", "rint",
                   "sign", "round", "clip", "astype", "copy", "negative", "positive"], [A]),
    "reductions": (["sum", "mean", "max", "min", "var", "std"], [A]),
    "views": (["getitem", "getitem[array]", "getitem[mask]", "reshape", "transpose", "ravel",
               "flatten", "squeeze", "expand_dims", "swapaxes", "broadcast_to", "asarray",
               "ascontiguousarray", "copy_"], [A]),
    "binary": (["add", "multiply", "maximum", "where", "logaddexp", "matmul[vec]",
                "dot", "concatenate", "stack", "setitem"], [A, B]),
    "positive": (["power", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "reciprocal"],
                 [POS, B]),
    "unit": (["tan", "arcsin", "arccos", "arctanh"], [UNIT]),
    "big": (["arccosh"], [BIG]),
    "pair": (["divide", "arctan2", "hypot"], [A, BIG]),
    "column": (["subtract", "minimum"], [A, TABLE["minimum"][1][1]]),
    "matmul": (["matmul"], [A, M]),
}


def total_of(names: list) -> Callable:
    """The sum of the rows' functions (each of ``x`` or of ``x, y``): a function of one or two."""
    unary = [TABLE[n][0] for n in names if len(TABLE[n][1]) == 1]
    binary = [TABLE[n][0] for n in names if len(TABLE[n][1]) == 2]

    def total1(x):
        out = 0.0
        for fn in unary:
            out = out + fn(x)
        return out

    def total2(x, y):
        out = total1(x)
        for fn in binary:
            out = out + fn(x, y)
        return out
    return total2 if binary else total1


def check_group(names: list, args: list) -> None:
    fn = total_of(names)
    compiled = ac.compile(ac.grad(fn, argnums=tuple(range(len(args)))), backend="numba",
                          fullgraph=True)
    assert_gradients(fn, args, compiled(*args))
    assert len(compiled.entries) == 1


def rule_kind(name: str) -> object:
    """The code object of an op's derivative rule (or store): ops built by one factory share it."""
    op = REGISTRY[name.split("[")[0]]
    return (op.vjp or op.store).__code__


@pytest.mark.parametrize("group", sorted(CI_GROUPS))
def test_numba_gradient_per_rule_kind(group):
    check_group(*CI_GROUPS[group])


@needs_full
@pytest.mark.parametrize("group", sorted(FULL_GROUPS))
def test_numba_gradient_full_table(group):
    check_group(*FULL_GROUPS[group])


def test_every_rule_kind_is_compiled_with_numba():
    ruled = [n for n, op in REGISTRY.ops.items() if op.vjp is not None or op.store is not None]
    ci_rows = [n for rows, _ in CI_GROUPS.values() for n in rows]
    assert {rule_kind(n) for n in ruled} - {rule_kind(n) for n in ci_rows} == set()


def test_every_row_is_in_a_full_group():
    full_rows = [n for rows, _ in FULL_GROUPS.values() for n in rows]
    assert set(TABLE) - set(full_rows) == set()
    for rows, args in list(CI_GROUPS.values()) + list(FULL_GROUPS.values()):
        for n in rows:  # each row gets its own arguments' domain and shapes
            own = TABLE[n][1]
            assert all(a is b for a, b in zip(own, args)), n


def test_numba_nonstrict_trace_module_gradient():
    from .test_grad_api import Net, call_net
    net, x = Net(), A[:, :3].copy()
    compiled = ac.compile(ac.grad(call_net, argnums=1), backend="numba", fullgraph=True)
    np.testing.assert_allclose(compiled(net, x), numeric_grad(lambda v: call_net(net, v), [x], 0),
                               rtol=1e-6, atol=1e-6)
