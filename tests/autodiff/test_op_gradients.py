"""Every op with a derivative rule, against central finite differences (float64).

One function per op (the table), run through ``ac.grad`` on the eager backend (the joint graph
op by op) and compiled with ``aot_eager``; ``test_op_gradients_numba.py`` compiles the same rows
with numba, in groups. A rule added to the registry without a row here fails
``test_every_rule_has_a_row``.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.ops import REGISTRY

from .fd import assert_gradients

RNG = np.random.default_rng(1234)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4,))
C = RNG.standard_normal((3, 1))
M = RNG.standard_normal((4, 2))
POS = RNG.uniform(0.5, 2.0, (3, 4))
UNIT = RNG.uniform(-0.8, 0.8, (3, 4))
BIG = RNG.uniform(1.5, 3.0, (3, 4))


def f_add(x, y): return np.sum(np.add(x, y) ** 2)
def f_subtract(x, y): return np.sum((x - y) ** 2)
def f_multiply(x, y): return np.sum(x * y * x)
def f_divide(x, y): return np.sum(x / y)
def f_negative(x): return np.sum(-x * x)
def f_positive(x): return np.sum(+x * x)
def f_power(x, y): return np.sum(x ** y)
def f_exp(x): return np.sum(np.exp(x))
def f_exp2(x): return np.sum(np.exp2(x))
def f_expm1(x): return np.sum(np.expm1(x))
def f_log(x): return np.sum(np.log(x))
def f_log2(x): return np.sum(np.log2(x))
def f_log10(x): return np.sum(np.log10(x))
def f_log1p(x): return np.sum(np.log1p(x))
def f_sin(x): return np.sum(np.sin(x))
def f_cos(x): return np.sum(np.cos(x))
def f_tan(x): return np.sum(np.tan(x))
def f_tanh(x): return np.sum(np.tanh(x))
def f_sinh(x): return np.sum(np.sinh(x))
def f_cosh(x): return np.sum(np.cosh(x))
def f_arcsin(x): return np.sum(np.arcsin(x))
def f_arccos(x): return np.sum(np.arccos(x))
def f_arctan(x): return np.sum(np.arctan(x))
def f_arcsinh(x): return np.sum(np.arcsinh(x))
def f_arccosh(x): return np.sum(np.arccosh(x))
def f_arctanh(x): return np.sum(np.arctanh(x))
def f_sqrt(x): return np.sum(np.sqrt(x))
def f_cbrt(x): return np.sum(np.cbrt(x))
def f_square(x): return np.sum(np.square(x))
def f_absolute(x): return np.sum(np.abs(x) * x)
def f_fabs(x): return np.sum(np.fabs(x) * x)
def f_reciprocal(x): return np.sum(np.reciprocal(x))
def f_floor(x): return np.sum(np.floor(x) * x)
def f_ceil(x): return np.sum(np.ceil(x) * x)
def f_trunc(x): return np.sum(np.trunc(x) * x)
def f_rint(x): return np.sum(np.rint(x) * x)
def f_sign(x): return np.sum(np.sign(x) * x)
def f_round(x): return np.sum(np.round(x) * x)
def f_maximum(x, y): return np.sum(np.maximum(x, y) ** 2)
def f_minimum(x, y): return np.sum(np.minimum(x, y) ** 2)
def f_arctan2(x, y): return np.sum(np.arctan2(x, y))
def f_hypot(x, y): return np.sum(np.hypot(x, y))
def f_logaddexp(x, y): return np.sum(np.logaddexp(x, y))
def f_where(x, y): return np.sum(np.where(x > 0, x * y, y * y))
def f_clip(x): return np.sum(np.clip(x, -0.5, 0.7) ** 2)
def f_astype(x): return np.sum(x.astype(np.float64) * x)
def f_copy(x): return np.sum(np.copy(x) * x)
def f_sum(x): return np.sum(np.sum(x, axis=0) ** 2) + np.sum(np.sum(x, axis=1, keepdims=True) * x)
def f_mean(x): return np.sum(np.mean(x, axis=1) ** 2) + np.mean(x)
def f_max(x): return np.sum(np.max(x, axis=0) ** 2) + np.max(x)
def f_min(x): return np.sum(np.min(x, axis=1, keepdims=True) * x)
def f_var(x): return np.sum(np.var(x, axis=0)) + np.var(x, ddof=1)
def f_std(x): return np.sum(np.std(x, axis=1)) + np.std(x)
def f_matmul(x, y): return np.sum(np.tanh(x @ y))
def f_matmul_vec(x, y): return np.sum(np.sin(x @ y)) + np.sum(np.cos(y @ x.T))
def f_dot(x, y): return np.sum(np.dot(x, y) ** 2) + np.dot(y, y)
def f_getitem(x): return np.sum(x[1:, ::2] ** 2) + x[0, 1] * 3.0 + np.sum(x[:, 2] * x[:, 3])
def f_getitem_array(x): return np.sum(x[np.array([0, 2, 2, -1])] ** 2)
def f_getitem_mask(x): return np.sum(x[x > 0.1] ** 2)
def f_reshape(x): return np.sum(x.reshape(4, 3)[0] * x.reshape(-1)[:3])
def f_transpose(x): return np.sum(x.T[1] * np.transpose(x)[2])
def f_ravel(x): return np.sum(np.ravel(x)[::3] ** 2)
def f_flatten(x): return np.sum(x.flatten()[1::2] ** 3)
def f_squeeze(x): return np.sum(np.squeeze(x[:, None, :]) ** 2)
def f_expand_dims(x): return np.sum(np.expand_dims(x, 0) * x)
def f_swapaxes(x): return np.sum(np.swapaxes(x, 0, 1)[0] ** 3)
def f_broadcast_to(x): return np.sum(np.broadcast_to(x[0], (5, 4)) * np.arange(20.0).reshape(5, 4))
def f_concatenate(x, y): return np.sum(np.concatenate([x, y[None, :]], axis=0) ** 3)
def f_stack(x, y): return np.sum(np.stack([x[0], y], axis=1) ** 3)
def f_asarray(x): return np.sum(np.asarray(x) ** 3)
def f_ascontiguousarray(x): return np.sum(np.ascontiguousarray(x.T) ** 3)


def f_setitem(x, y):
    z = np.zeros((3, 4))
    z[1:] = x[:2] * 2.0
    z[0, :] = y
    return np.sum(z ** 3)


def f_copy_(x):
    y = x * 1.0
    y += np.sin(x)
    y *= 2.0
    return np.sum(y * y)


# op name -> (function, arguments); several rows may cover one op
TABLE = {
    "add": (f_add, [A, B]), "subtract": (f_subtract, [A, C]), "multiply": (f_multiply, [A, B]),
    "divide": (f_divide, [A, BIG]), "negative": (f_negative, [A]), "positive": (f_positive, [A]),
    "power": (f_power, [POS, B]), "exp": (f_exp, [A]), "exp2": (f_exp2, [A]),
    "expm1": (f_expm1, [A]), "log": (f_log, [POS]), "log2": (f_log2, [POS]),
    "log10": (f_log10, [POS]), "log1p": (f_log1p, [POS]), "sin": (f_sin, [A]),
    "cos": (f_cos, [A]), "tan": (f_tan, [UNIT]), "tanh": (f_tanh, [A]), "sinh": (f_sinh, [A]),
    "cosh": (f_cosh, [A]), "arcsin": (f_arcsin, [UNIT]), "arccos": (f_arccos, [UNIT]),
    "arctan": (f_arctan, [A]), "arcsinh": (f_arcsinh, [A]), "arccosh": (f_arccosh, [BIG]),
    "arctanh": (f_arctanh, [UNIT]), "sqrt": (f_sqrt, [POS]), "cbrt": (f_cbrt, [POS]),
    "square": (f_square, [A]), "absolute": (f_absolute, [A]), "fabs": (f_fabs, [A]),
    "reciprocal": (f_reciprocal, [POS]), "floor": (f_floor, [A]), "ceil": (f_ceil, [A]),
    "trunc": (f_trunc, [A]), "rint": (f_rint, [A]), "sign": (f_sign, [A]),
    "round": (f_round, [A]), "maximum": (f_maximum, [A, B]), "minimum": (f_minimum, [A, C]),
    "arctan2": (f_arctan2, [A, BIG]), "hypot": (f_hypot, [A, BIG]),
    "logaddexp": (f_logaddexp, [A, B]), "where": (f_where, [A, B]), "clip": (f_clip, [A]),
    "astype": (f_astype, [A]), "copy": (f_copy, [A]), "sum": (f_sum, [A]),
    "mean": (f_mean, [A]), "max": (f_max, [A]), "min": (f_min, [A]), "var": (f_var, [A]),
    "std": (f_std, [A]), "matmul": (f_matmul, [A, M]), "matmul[vec]": (f_matmul_vec, [A, B]),
    "dot": (f_dot, [A, B]), "getitem": (f_getitem, [A]),
    "getitem[array]": (f_getitem_array, [A]), "getitem[mask]": (f_getitem_mask, [A]),
    "reshape": (f_reshape, [A]),
    "transpose": (f_transpose, [A]), "ravel": (f_ravel, [A]), "flatten": (f_flatten, [A]),
    "squeeze": (f_squeeze, [A]), "expand_dims": (f_expand_dims, [A]),
    "swapaxes": (f_swapaxes, [A]), "broadcast_to": (f_broadcast_to, [A]),
    "concatenate": (f_concatenate, [A, B]), "stack": (f_stack, [A, B]),
    "asarray": (f_asarray, [A]), "ascontiguousarray": (f_ascontiguousarray, [A]),
    "setitem": (f_setitem, [A, B]), "copy_": (f_copy_, [A]),
}


def _grad(fn, n_args):
    return ac.grad(fn, argnums=tuple(range(n_args)))


def test_every_rule_has_a_row():
    ruled = {name for name, op in REGISTRY.ops.items() if op.vjp is not None}
    ruled |= {name for name, op in REGISTRY.ops.items() if op.store is not None}
    rows = {name.split("[")[0] for name in TABLE}
    assert ruled - rows == set()
    assert rows - ruled == set()


@pytest.mark.parametrize("name", sorted(TABLE))
def test_eager_gradient(name):
    fn, args = TABLE[name]
    assert_gradients(fn, args, _grad(fn, len(args))(*args))


@pytest.mark.parametrize("name", sorted(TABLE))
def test_aot_eager_gradient(name):
    fn, args = TABLE[name]
    compiled = ac.compile(_grad(fn, len(args)), backend="aot_eager", fullgraph=True)
    assert_gradients(fn, args, compiled(*args))
    assert len(compiled.entries) == 1
