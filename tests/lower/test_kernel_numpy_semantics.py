"""Fused numba kernels compute exactly what NumPy computes (issue 10, "Exactly NumPy's semantics").

Every test compiles with ``backend="numba"`` and compares each call against the plain call, over
several calls: values, dtypes, signed zeros, memory layout, warnings and exceptions.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import astcompiler as ac


def _outcome(fn, *args):
    """(result, exception, warning messages) of one call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, error = fn(*args), None
        except Exception as exc:  # noqa: BLE001 - compared with the compiled call's
            result, error = None, exc
    return result, error, [(w.category, str(w.message)) for w in caught]


def _same_value(expected, actual) -> None:
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for e, a in zip(expected, actual):
            _same_value(e, a)
        return
    assert type(actual) is type(expected)
    e, a = np.asarray(expected), np.asarray(actual)
    assert a.dtype == e.dtype and a.shape == e.shape
    assert np.array_equal(a, e, equal_nan=e.dtype.kind in "fc")
    if e.dtype.kind == "f":  # signed zeros; a NaN's sign bit is unspecified (LLVM, NumPy)
        assert np.array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(e) & ~np.isnan(e)), \
            (expected, actual)
    if isinstance(expected, np.ndarray):
        assert actual.strides == expected.strides
        assert actual.flags.c_contiguous == expected.flags.c_contiguous
        assert actual.flags.f_contiguous == expected.flags.f_contiguous


def check(fn, calls, warns: bool = True):
    """Compile ``fn`` and compare every call in ``calls`` (argument tuples) with the plain one."""
    compiled = ac.compile(fn, backend="numba")
    for args in calls:
        expected, exp_error, exp_warnings = _outcome(fn, *args)
        actual, act_error, act_warnings = _outcome(compiled, *args)
        if exp_error is not None or act_error is not None:
            assert type(act_error) is type(exp_error), (exp_error, act_error)
            assert str(act_error) == str(exp_error)
        else:
            _same_value(expected, actual)
        if warns:
            assert act_warnings == exp_warnings
    return compiled


def _kernels(compiled) -> str:
    return "\n".join(entry.output_code for entry in compiled.entries)


# -- 1. narrow ints wrap inside fused chains and reductions --------------------------------------


def product_sum(a, b):
    return (a * b).sum()


def test_int8_product_wraps_before_the_int64_sum():
    a = np.array([100, 100], np.int8)
    b = np.array([2, 2], np.int8)
    compiled = check(product_sum, [(a, b), (a, b), (a[::-1].copy(), b)])
    assert compiled(a, b) == product_sum(a, b) == -112
    assert "kernel_0_multiply_sum" in _kernels(compiled)  # fused: the product never materializes


def narrow_chain(a, b):
    t = a * b + a  # wraps twice in the narrow dtype
    return (t.astype(np.int64), np.abs(a).astype(np.int64), (-a).sum(), (a - b).sum(axis=0),
            (a * b).prod(), np.square(a).max())


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_signed_wrapping_in_fused_kernels(dtype):
    info = np.iinfo(dtype)
    a = np.array([[info.max, info.min, 100], [info.min, -3, info.max // 2 + 7]], dtype)
    b = np.array([[2, 3, 127], [-1, info.max, 5]], dtype)
    check(narrow_chain, [(a, b), (b, a), (a, a)])


def int64_prod(a):
    return a.prod(), (a * a).sum()


def test_int64_product_overflow_wraps():
    a = np.arange(1, 40, dtype=np.int64)
    check(int64_prod, [(a,), (a[::-1].copy(),), (-a,)])


# -- 2. Python ints that do not fit the array's dtype ------------------------------------------


def add_k(x, k):
    return x + k


def compare_k(x, k):
    return x < k, x == k, x >= k


@pytest.mark.parametrize("dtype,values,bad", [
    (np.uint8, [3, 300, 5, -1, 255, 256, 0], 300),
    (np.int8, [3, 127, 128, -128, -129, 7], 128),
    (np.uint16, [3, 70000, 65535, -1, 9], 70000),
])
def test_python_int_out_of_bounds_raises_overflow_error(dtype, values, bad):
    x = np.array([1, 2, 100], dtype)
    compiled = check(add_k, [(x, k) for k in values])
    with pytest.raises(OverflowError, match=f"Python integer {bad} out of bounds for "
                                            f"{np.dtype(dtype).name}"):
        compiled(x, bad)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32, np.uint32, np.uint64])
def test_comparison_with_out_of_range_python_int_is_by_value(dtype):
    x = np.array([1, 2, 100, 44], dtype)
    check(compare_k, [(x, k) for k in (3, 300, 44, -1, -200, 2 ** 40, 2 ** 70, 5)])


def compare_literal(x):
    return x < 300, x == 300, x != -1


def test_comparison_with_out_of_range_literal():
    x = np.array([1, 44, 255], np.uint8)
    check(compare_literal, [(x,), (x[::-1].copy(),)])


def float32_plus_k(x, k):
    return x + k


def test_python_int_becomes_float32_through_float64_like_numpy():
    x = np.zeros(3, np.float32)
    k = 2 ** 54 + 2 ** 30 + 1  # rounding it to float32 directly gives another float
    check(float32_plus_k, [(x, 5), (x, k), (x, -k), (x, 7)])


# -- 3. np.errstate and NumPy's floating-point warnings -----------------------------------------


def divide(x, y):
    return x / y + 1.0


def exp_sqrt(x):
    return np.exp(x) + np.sqrt(x)


def int_divide(x, y):
    return x // y + x % y


X = np.array([1.0, 2.0, 3.0])
ZEROS = np.array([1.0, 0.0, 2.0])


def test_divide_by_zero_warns_like_numpy():
    check(divide, [(X, X), (X, ZEROS), (X, X), (X, ZEROS)])


@pytest.mark.parametrize("mode", ["raise", "ignore", "warn"])
def test_errstate_divide_is_honoured(mode):
    compiled = check(divide, [(X, X + 1.0)])
    with np.errstate(divide=mode):
        expected = _outcome(divide, X, ZEROS)
        actual = _outcome(compiled, X, ZEROS)
    assert type(actual[1]) is type(expected[1]) and str(actual[1]) == str(expected[1])
    assert actual[2] == expected[2]
    if mode == "raise":
        assert isinstance(actual[1], FloatingPointError)
    assert len(compiled.entries) == 1


@pytest.mark.parametrize("errstate,value", [({"over": "raise"}, 1000.0),
                                            ({"invalid": "raise"}, -1.0),
                                            ({"all": "raise"}, 4.0)])
def test_errstate_over_and_invalid(errstate, value):
    compiled = check(exp_sqrt, [(X,)])
    x = np.array([1.0, value])
    with np.errstate(**errstate):
        expected = _outcome(exp_sqrt, x)
        actual = _outcome(compiled, x)
    assert type(actual[1]) is type(expected[1]) and str(actual[1]) == str(expected[1])
    if expected[1] is None:
        _same_value(expected[0], actual[0])


def test_integer_division_by_zero_warns_and_raises_like_numpy():
    x = np.array([5, -128, 7], np.int8)
    y = np.array([2, -1, 3], np.int8)  # -128 // -1 overflows: NumPy warns
    z = np.array([0, 1, 3], np.int8)
    compiled = check(int_divide, [(x, y), (x, z), (x, y)])
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in floor_divide"):
            compiled(x, z)


# -- 4. signed zeros and NaN ---------------------------------------------------------------------


def zeros_and_nans(x, y):
    return (np.maximum(x, y), np.minimum(x, y), np.sign(x), x % y, np.fmod(x, y), x // y,
            np.fmax(x, y), np.fmin(x, y), np.clip(x, -1.0, 1.0), np.clip(x, y, 0.0),
            x.max(), x.min(), np.maximum(x, 0.0), np.minimum(0.0, x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_signed_zeros_and_nan(dtype):
    x = np.array([-0.0, 0.0, np.nan, 1.0, -0.0, 4.0, -4.0, 0.0], dtype)
    y = np.array([0.0, -0.0, 1.0, np.nan, -2.0, -2.0, 2.0, -0.0], dtype)
    small = [0, 1, 4]
    check(zeros_and_nans, [(x, y), (y, x), (x[small], y[small]), (-x, y)], warns=False)


def minmax(x):
    return x.max(), x.min(), x.max(axis=0), x.min(axis=1)


def test_max_min_reductions_with_nan_and_signed_zero():
    x = np.array([[0.0, -0.0], [-0.0, 0.0]])
    n = np.array([[1.0, np.nan], [-0.0, 2.0]])
    check(minmax, [(x,), (-x,), (n,), (x,)], warns=False)


def sign(x):
    return np.sign(x)


def test_np_sign_of_negative_zero():
    compiled = check(sign, [(np.array([-0.0, 0.0, -2.0]),), (np.array([0.0, -0.0]),)])
    assert not np.signbit(compiled(np.array([-0.0]))[0])


# -- 5. output layout follows NumPy ------------------------------------------------------------


def affine(a, b):
    return a * 2.0 + b


def softmax_like(a):
    return a - a.max(axis=1, keepdims=True), a.sum(axis=0)


C = np.arange(12.0).reshape(3, 4)
F = np.asfortranarray(C)


@pytest.mark.parametrize("a,b", [
    (F, F), (F, C), (C, F), (F, np.ones(4)), (F.T, 1.0), (C[::2, ::-1], C[::2]),
    (np.arange(24.0).reshape(4, 3, 2).transpose(1, 0, 2), 2.0),
])
def test_elementwise_output_layout(a, b):
    check(affine, [(a, b), (a, b)])


def test_reduction_output_layout_follows_input():
    f3 = np.asfortranarray(np.arange(24.0).reshape(2, 3, 4))
    check(softmax_like, [(F,), (f3,), (C,), (f3,)])


# -- 6. a list of dynamic ints as an index ---------------------------------------------------


def pick(x, i, j):
    return x[[i, j]] * 2


def test_list_of_dynamic_ints_index_is_an_input(caplog):
    x = np.arange(5.0)
    pairs = [(1, 2), (3, 0), (4, 4), (2, 1), (0, 3), (-1, -5), (4, 9), (1, 3)]
    with caplog.at_level(logging.INFO, logger="astcompiler.graph_breaks"):
        compiled = check(pick, [(x, i, j) for i, j in pairs])
    assert len(compiled.entries) <= 2  # the first call's values, then dynamic ints
    assert not any("runs the original function" in r.getMessage() for r in caplog.records
                   if "index 9" not in r.getMessage())


# -- 7. gathers with run-time indices ------------------------------------------------------------


def gather(x, idx):
    return x[idx] + 1.0, x[idx, 1:].sum()


def test_gather_out_of_bounds_raises_index_error():
    x = np.arange(20.0).reshape(5, 4)
    calls = [(x, np.array([0, 2])), (x, np.array([4, -5])), (x, np.array([0, 7])),
             (x, np.array([-6])), (x, np.array([1, 3]))]
    check(gather, calls)


# -- differential fuzz: pointwise chains and reductions over every dtype -------------------------


def mixed(a, b):
    t = a * b + a
    return (t * b + t, np.maximum(a, b), np.minimum(t, a), a == b, a < b, (a * b).sum(),
            (a * t).max(axis=0), t.min(axis=1), (a + b).any(), np.where(a > b, a, t))


def _sample(rng, dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edges = np.array([0, 1, info.max, info.min, info.max - 1, 7], dtype=dt)
        vals = rng.integers(max(int(info.min), -100), min(int(info.max), 100), shape,
                            endpoint=True).astype(dt)
        return np.where(rng.random(shape) < 0.4, rng.choice(edges, shape), vals)
    if dt.kind == "f":
        edges = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 65504.0]).astype(dt)
        return np.where(rng.random(shape) < 0.4, rng.choice(edges, shape),
                        (rng.standard_normal(shape) * 10).astype(dt))
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int64, np.uint8, np.uint64,
                                   np.float16, np.float32, np.float64, np.complex128])
def test_differential_fuzz(dtype):
    rng = np.random.default_rng(np.dtype(dtype).num)
    calls = []
    for _ in range(3):
        a, b = _sample(rng, dtype, (4, 6)), _sample(rng, dtype, (4, 6))
        if np.dtype(dtype).kind == "f":  # ties and signed zeros
            b = np.where(rng.random((4, 6)) < 0.3, a, b)
            a = np.where(rng.random((4, 6)) < 0.2, -0.0, a).astype(dtype)
        calls.append((a, b))
    exact = np.dtype(dtype).kind not in "fc"  # float sums: NumPy adds pairwise
    compiled = ac.compile(mixed, backend="numba")
    with np.errstate(all="ignore"):
        for a, b in calls:
            expected, actual = mixed(a, b), compiled(a, b)
            for i, (e, r) in enumerate(zip(expected, actual)):
                if exact or i not in (5, 8):
                    _same_value(e, r)
                else:
                    np.testing.assert_allclose(r, e, rtol=1e-3 if np.dtype(dtype).itemsize <= 4
                                               else 1e-12, equal_nan=True)


def divide_into(x, y, out):
    out[:] = x / y
    out += 1.0
    return out.sum()


@pytest.mark.parametrize("mode", ["warn", "raise", "ignore"])
def test_errstate_after_a_write_to_an_input(mode):
    x, y = np.ones(4), np.array([1.0, 0.0, 2.0, 3.0])
    compiled = ac.compile(divide_into, backend="numba")
    compiled(x, x + 1.0, np.zeros(4))
    mine, theirs = np.zeros(4), np.zeros(4)
    with np.errstate(divide=mode):
        expected = _outcome(divide_into, x, y, theirs)
        actual = _outcome(compiled, x, y, mine)
    assert type(actual[1]) is type(expected[1]) and str(actual[1]) == str(expected[1])
    assert actual[2] == expected[2]
    _same_value(theirs, mine)
    assert len(compiled.entries) == 1


@pytest.mark.parametrize("where", [0, -1])
def test_errstate_in_parallel_kernels(where):
    """prange twins run on worker threads, each with its own FP flags: they are gathered."""
    n = 200_000  # above config.parallel_threshold
    x, y = np.ones(n), np.ones(n)
    compiled = check(divide, [(x, y)])
    y[where] = 0.0
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            compiled(x, y)
    check(divide, [(x, y)])


def clip_literal(x):
    return np.clip(x, 0, 300), np.clip(x, -5, 100), np.clip(x, 2, 2 ** 70), np.where(x > 3, x, 7)


def clip_k(x, k):
    return np.clip(x, 1, k)


def test_clip_with_python_int_bounds_beyond_the_dtype():
    x = np.array([1, 5, 250], np.uint8)
    check(clip_literal, [(x,), (x[::-1].copy(),)])
    check(clip_k, [(x, 7), (x, 300), (x, 255), (x, -1), (x, 9)])
