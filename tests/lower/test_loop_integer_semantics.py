"""Integer arithmetic and stores of loop code (structured functions, 100 trips: past the unroll
limit) against the plain call, found by a differential search: ``MIN % -1`` was a hardware trap
(SIGFPE killed the process), ``MIN // -1`` gave 0, ``x // 0`` did not warn, integer ``**`` went
through float64 and ignored negative exponents, a scalar stored out of an integer array's
bounds wrapped, and a scalar ``np.maximum`` kept the first of two equal zeros."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome

N = 100


def run_both(fn, *args):
    """((result or exception, inputs after, warnings) for the plain call, then compiled)."""
    outcomes = []
    for f in (fn, ac.compile(fn)):
        inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        value, error, warned = outcome(f, inputs)
        outcomes.append((_bits(value) if error is None else error,
                         [_bits(a) for a in inputs], sorted(set(warned))))
    return outcomes


def _bits(value):
    if isinstance(value, tuple):
        return tuple(_bits(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, np.generic):
        return type(value), value.tobytes()
    return value


def elementwise(op):
    def f(a, b):
        out = np.empty_like(a)
        for i in range(a.shape[0]):
            out[i] = op(a[i], b[i])
        return out
    return f


def carried(op):
    def f(a, b):
        s = a[0]
        for i in range(a.shape[0]):
            s = op(s, b[i])
        return s
    return f


OPS = {"remainder": lambda x, y: x % y, "floor_divide": lambda x, y: x // y,
       "fmod": np.fmod, "divmod": lambda x, y: divmod(x, y)[0] + divmod(x, y)[1]}


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("divisor", [-1, 0, 3])
@pytest.mark.parametrize("shape", [elementwise, carried])
def test_integer_division_at_min_and_zero(dtype, op, divisor, shape):
    a = np.full(N, np.iinfo(dtype).min, dtype)
    a[1::2] = 7
    b = np.full(N, divisor, dtype)
    plain, compiled = run_both(shape(OPS[op]), a, b)
    if op == "divmod":  # (capture splits divmod into // and %: NumPy's two warnings, not one)
        plain, compiled = plain[:2], compiled[:2]
    assert compiled == plain


def test_integer_division_by_zero_raises_under_errstate():
    a, b = np.arange(N, dtype=np.int64), np.zeros(N, np.int64)
    fn = elementwise(OPS["floor_divide"])
    compiled = ac.compile(fn)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero"):
            fn(a, b)
        with pytest.raises(FloatingPointError, match="divide by zero"):
            compiled(a, b)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int16])
@pytest.mark.parametrize("exponent", [39, 5, 0])
def test_integer_power_is_exact(dtype, exponent):
    x = np.full(N, 3, dtype)
    e = np.full(N, exponent, dtype)
    assert run_both(elementwise(lambda u, v: u ** v), x, e)[1] == \
        run_both(elementwise(lambda u, v: u ** v), x, e)[0]

    def constant(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = x[i] ** 39
        return out
    plain, compiled = run_both(constant, x)
    assert compiled == plain


def test_integer_power_of_arrays_in_a_loop_is_exact():
    def f(x, e):
        r = x
        for i in range(N):
            r = x ** e + i
        return r
    plain, compiled = run_both(f, np.full(4, 3, np.int64), np.full(4, 39, np.int64))
    assert compiled == plain


def test_a_negative_integer_exponent_raises_numpys_value_error():
    x = np.array([2, -1] * (N // 2))
    plain, compiled = run_both(elementwise(lambda u, v: u ** v), x, np.roll(x, -1))
    assert compiled == plain and plain[0][0] is ValueError


def store_index(x, n):
    for i in range(n):
        x[i] = i
    return x


def store_values(x, y):
    for i in range(y.shape[0]):
        x[i] = y[i]
    return x


@pytest.mark.parametrize("dtype, n", [(np.int8, 300), (np.uint8, 300), (np.int16, 33000)])
def test_a_python_int_stored_out_of_bounds_raises(dtype, n):
    plain, compiled = run_both(store_index, np.zeros(n, dtype), n)
    assert compiled == plain and plain[0][0] is OverflowError


@pytest.mark.parametrize("dtype, values", [
    (np.int8, np.arange(N, dtype=np.int64) * 3),  # signed: through a Python int, raises
    (np.int8, np.linspace(-300, 300, N)),  # floats truncated, then checked
    (np.int32, np.full(N, 2.0 ** 40)),
    (np.int8, np.full(N, np.nan)),  # ValueError
    (np.int32, np.arange(N, dtype=np.uint64) * 2 ** 60),
    (np.uint8, np.arange(N, dtype=np.int64) * 5 - 10),  # unsigned: NumPy casts (wraps)
    (np.int16, np.arange(N, dtype=np.int16)),
    (np.int64, np.arange(N) + 0.7),
])
def test_scalars_stored_into_integer_arrays(dtype, values):
    plain, compiled = run_both(store_values, np.zeros(N, dtype), values)
    assert compiled == plain


@pytest.mark.parametrize("first", [0.0, -0.0])
def test_scalar_maximum_and_minimum_keep_numpys_zero(first):
    x = np.array([first, -first] * (N // 2))
    for op in (np.maximum, np.minimum):
        plain, compiled = run_both(carried(op), x, x)
        assert compiled == plain


def chained_solves(a, b, n):
    x = b
    for _ in range(n):
        x = np.linalg.solve(a, x) + b
    return x, np.linalg.inv(a) @ x


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
def test_single_precision_linalg_in_loops_is_computed_in_double_like_numpy(dtype):
    """numpy.linalg solves float32 (complex64) systems in double and rounds once, and inverts
    by gesv against the identity; numba's bindings call the single-precision routine (1-2 ulp
    apart after two solves) and invert with getri (other bits in float64 too)."""
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((20, 20)) + 20 * np.eye(20)).astype(dtype)
    b = rng.standard_normal(20).astype(dtype)
    plain, compiled = run_both(chained_solves, a, b, 70)
    assert compiled == plain
