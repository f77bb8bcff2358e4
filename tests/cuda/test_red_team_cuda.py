"""Red team of the CUDA target (session 3, helper X; simulator, tiny sizes): one compiled function
per program, called many times with changing shapes, dtypes and values, on host and on device
inputs, against the plain NumPy call on host copies: value, Python type, dtype, shape, the
exception (class and message), warnings (category, message, order) and input mutations.
Products are compared within the documented bound (``test_cuda_matmul.within_bound``'s rule),
everything else within 1e-12 (float64) / 1e-5 (float32). ``xfail(strict=True)`` marks each
difference found, with the exact plain-vs-compiled difference as its reason."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome

cuda = pytest.importorskip("numba.cuda")

R = np.random.default_rng(7)



def host(value):
    """A device result (or a tuple of them) brought back to the host."""
    if isinstance(value, tuple):
        return tuple(host(v) for v in value)
    return value.copy_to_host() if hasattr(value, "copy_to_host") else value


def assert_same(got, want, bound=None) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, bound)
        return
    assert type(got) is type(want)
    assert getattr(got, "dtype", None) == getattr(want, "dtype", None)
    assert np.shape(got) == np.shape(want)
    if bound is not None:
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        fine = ~np.isnan(want) & (got != want)  # equal infinities are fine
        with np.errstate(invalid="ignore"):  # inf - inf where they differ: not fine
            assert np.all(np.abs(got - want)[fine] <= (bound + 1e-300)[fine])
    elif np.asarray(want).dtype.kind in "fc":
        rtol = 1e-5 if np.asarray(want).dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def differential(fn, calls, on_device, bound=None) -> object:
    """Plain ``fn`` on host copies vs one compiled ``fn`` over ``calls``; returns the compiled."""
    compiled = ac.compile(fn, device="cuda")
    with ac.config.patch(recompile_limit=64):  # every call may be a new entry
        for args in calls:
            check_call(fn, compiled, args, on_device, bound)
    return compiled


def check_call(fn, compiled, args, on_device, bound) -> None:
    """One call of ``compiled`` against the plain call on host copies."""
    plain = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want, want_error, want_warnings = outcome(fn, plain)
    passed = [cuda.to_device(a) if on_device and isinstance(a, np.ndarray) else
              (a.copy() if isinstance(a, np.ndarray) else a) for a in args]
    got, got_error, got_warnings = outcome(compiled, passed)
    assert got_error == want_error
    assert got_warnings == want_warnings
    for before, after in zip(plain, passed):
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(host(after), before)
    if want_error is None:
        assert_same(host(got), want, None if bound is None else bound(*args))


def product_bound(a, b):
    """2 * depth * eps * (|a| @ |b|): the documented tolerance of the tiled product."""
    dtype = np.result_type(a, b)
    eps = np.finfo(dtype).eps if dtype.kind == "f" else 0.0
    return 2 * a.shape[-1] * eps * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))


def mm(a, b):
    return a @ b


def mm_relu(a, b, c):
    return np.maximum(a @ b + c, 0.0)


F32 = np.float32


@pytest.mark.parametrize("on_device", [False, True])
def test_matmul_edge_tiles_vectors_batches_and_dtypes(on_device):
    calls = [(R.random((5, 7)), R.random((7, 6))), (R.random((9,)), R.random((9, 3))),
             (R.random((4, 9)), R.random((9,))), (R.random((2, 3, 5)), R.random((1, 5, 3))),
             (R.random((0, 5)), R.random((5, 3))), (R.random((2, 0)), R.random((0, 3))),
             (R.random((3, 5)).astype(F32), R.random((5, 2)).astype(F32)),
             (R.random((3, 5)).astype(F32), R.random((5, 2))),  # mixed: NumPy on the host
             (np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)),  # integer
             (R.random(5), R.random(5))]  # 0-d result
    differential(mm, calls, on_device, product_bound)


def test_matmul_fused_epilogue_broadcasts():
    calls = [(R.random((5, 7)) - .5, R.random((7, 3)) - .5, R.random(3)),
             (R.random((5, 7)) - .5, R.random((7, 3)) - .5, R.random((5, 1)))]
    differential(mm_relu, calls, True, lambda a, b, c: product_bound(a, b))


def test_matmul_shape_errors_on_host_inputs_are_numpys():
    calls = [(R.random((3, 5)), R.random((5, 2))), (R.random((3, 5)), R.random((4, 2))),
             (R.random((2, 3, 5)), R.random((3, 5, 3))), (R.random((3, 4)), R.random((4, 2)))]
    differential(mm, calls, False, product_bound)


def test_matmul_shape_error_on_device_inputs_is_numpys():
    calls = [(R.random((3, 5)), R.random((5, 2))), (R.random((3, 5)), R.random((4, 2)))]
    differential(mm, calls, True, product_bound)


def axis_stats(x):
    return (x.sum(axis=1, keepdims=True), x.max(axis=0, keepdims=True), np.argmax(x, axis=0),
            np.argmin(x, axis=1), x.mean(axis=0), x.var(axis=0, ddof=1))


@pytest.mark.parametrize("on_device", [False, True])
def test_axis_reductions_nan_ties_keepdims_and_warnings(on_device):
    nan = R.random((4, 3))
    nan[1, 0] = nan[2, 2] = nan[3, 2] = np.nan
    calls = [(R.random((4, 3)),), (nan,), (np.array([[1.0, 3.0, 3.0], [3.0, 1.0, 1.0]]),),
             (R.random((1, 3)),),  # var with ddof=1 over one row: NumPy's warnings
             (R.random((5, 2)).astype(F32),)]
    differential(axis_stats, calls, on_device)


def empty_axis(x):
    return x.max(axis=1)


def test_reductions_over_empty_axes_raise_numpys_error():
    differential(empty_axis, [(R.random((3, 2)),), (np.zeros((3, 0)),), (np.zeros((0, 2)),)],
                 True)


def host_loop(x, w, n):
    for _ in range(n):
        x = np.tanh(x @ w)
        x[0] = x.sum()
    return x


def test_host_loop_with_products_and_stores_over_changing_trip_counts():
    w = R.random((4, 4)) - 0.5
    calls = [(R.random((2, 4)), w, n) for n in (1, 3, 0, 2)]
    differential(host_loop, calls, True, lambda x, w, n: 1e-12 + 0 * x)


def mutate_in_loop(x, n):
    for i in range(n):
        x += 1.0
        x[i] = -x[i]
    return x.sum()


def test_mutation_of_device_input_in_a_loop_is_visible():
    differential(mutate_in_loop, [(np.arange(5.0), 2), (np.arange(5.0), 3), (np.arange(6.0), 4)],
                 True)


def shifted(x, y):
    return x * 2.0 + y


def test_mark_dynamic_device_arrays_keep_one_entry():
    compiled = ac.compile(shifted, device="cuda")
    for n in (3, 4, 6):
        x, y = R.random(n), R.random(n)
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        ac.mark_dynamic(dx, 0)
        ac.mark_dynamic(dy, 0)
        assert_same(host(compiled(dx, dy)), shifted(x, y))
    assert len(compiled.entries) == 1


def test_strided_and_fortran_device_views():
    compiled = ac.compile(shifted, device="cuda")
    a, b = R.random((4, 6)), R.random((4, 3))
    assert_same(host(compiled(cuda.to_device(a)[:, ::2], cuda.to_device(b))), shifted(a[:, ::2], b))
    f = np.asfortranarray(R.random((4, 3)))
    assert_same(host(compiled(cuda.to_device(f), cuda.to_device(b))), shifted(f, b))


def warn_chain(x, n):
    for _ in range(n):
        x = np.log(x - 1.0)
    return x


def test_fp_warnings_per_trip_of_a_host_loop():
    differential(warn_chain, [(np.array([3.0, 5.0]), 3), (np.array([3.0, 5.0]), 2)], True)


def to_int(x):
    return x.astype(np.int32)


def test_cast_of_nan_to_int_warns_like_numpy():
    compiled = ac.compile(to_int, device="cuda")
    x = np.array([1.5, -2.7, np.nan])
    assert outcome(compiled, (x,))[2] == outcome(to_int, (x,))[2]


INF_A, NAN_B = np.array([[np.inf, 1.0], [0.0, 2.0]]), np.array([[0.0, 1.0], [1.0, np.nan]])


def test_matmul_fp_warnings_are_numpys():
    differential(mm, [(INF_A, NAN_B), (np.array([[1e308, 1e308]]), np.array([[10.0], [10.0]]))],
                 True, lambda a, b: np.full((a.shape[0], b.shape[1]), np.inf))
