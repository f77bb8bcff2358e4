"""Red team of session 3's CPU work (helper X): one compiled function per program, called many
times with changing values, sizes, dtypes and layouts, against the plain call: value, Python
type, dtype, shape, layout flags, exception (class and message), warnings (category, message;
and their count under Python's default filter), input mutations, earlier results left alone.
Float sums are compared bit for bit (NumPy's pairwise order), vectorized math in ULPs.
``xfail(strict=True)`` marks each difference found, with the exact difference as its reason."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome

R = np.random.default_rng(11)



def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def assert_same(got, want, bits=False) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, bits)
        return
    assert type(got) is type(want)
    assert getattr(got, "dtype", None) == getattr(want, "dtype", None)
    assert np.shape(got) == np.shape(want)
    if bits:
        assert np.atleast_1d(got).tobytes() == np.atleast_1d(want).tobytes()
    elif np.asarray(want).dtype.kind in "fc":  # float32 math: vecmath is within 2 ulp
        rtol = 1e-6 if np.asarray(want).dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def differential(fn, calls, backend="numba", bits=False):
    """Plain vs one compiled ``fn`` over ``calls`` (values, errors, warnings, mutations)."""
    compiled = ac.compile(fn, backend=backend)
    with ac.config.patch(recompile_limit=64):
        for args in calls:
            plain, passed = copies(args), copies(args)
            want, want_error, want_warnings = outcome(fn, plain)
            got, got_error, got_warnings = outcome(compiled, passed)
            assert got_error == want_error
            assert got_warnings == want_warnings
            for before, after in zip(plain, passed):
                if isinstance(before, np.ndarray):
                    np.testing.assert_array_equal(after, before)
            if want_error is None:
                assert_same(got, want, bits)
    return compiled


# --- float sums, means, variances: NumPy's bits ------------------------------------------------

def whole_stats(x):
    return x.sum(), x.mean(), x.var(), x.std()


def axis_stats(x):
    return x.sum(axis=-1), x.mean(axis=-1), x.var(axis=-1), x.sum(axis=0), x.mean(axis=0)


SIZES = (1, 7, 8, 9, 17, 127, 128, 129, 257, 1025, 4097)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_whole_array_stats_of_vectors_are_numpys_bits(dtype):
    differential(whole_stats, [(R.standard_normal(n).astype(dtype),) for n in SIZES], bits=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_and_column_stats_are_numpys_bits(dtype):
    calls = [(R.standard_normal((3, n)).astype(dtype),) for n in (5, 9, 130, 300)]
    calls += [(R.standard_normal((n, 3)).astype(dtype),) for n in (5, 300)]
    differential(axis_stats, calls, bits=True)


def flat_sum(x):
    return x.sum()


def test_whole_sum_of_a_matrix_is_numpys_bits():
    """NumPy adds a C-contiguous matrix's elements as one pairwise run (== x.ravel().sum());
    kernels take a flattened twin on contiguous operands (``flat_sums.py``)."""
    differential(flat_sum, [(np.random.default_rng(0).standard_normal((4, n)),) for n in (7, 129)],
                 bits=True)


# --- vectorized math: float32 kernels, power ------------------------------------------------------

def ulps(got, want) -> float:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    if not finite.any():
        return 0.0
    spacing = np.spacing(np.abs(want[finite])).astype(np.float64)
    return float(np.max(np.abs(got[finite].astype(np.float64) - want[finite]) / spacing))


def math32(x):
    return (np.exp(x), np.log(np.abs(x)), np.sin(x), np.cos(x), np.tanh(x), np.expm1(x),
            np.log1p(np.abs(x)), np.sqrt(np.abs(x)) * np.float32(2), x ** 2 + x ** 3)


def test_float32_math_within_two_ulps_and_float32():
    compiled = ac.compile(math32, backend="numba")
    special = np.array([0, -0.0, np.inf, -np.inf, np.nan, 88.8, -104, 1e-40, -1, 1e-3], np.float32)
    for x in (R.standard_normal(37).astype(np.float32), R.standard_normal(300).astype(np.float32)
              * 30, special):
        want, got = outcome(math32, (x,))[0], outcome(compiled, (x,))[0]
        for g, w in zip(got, want):
            assert type(g) is type(w) and ulps(g, w) <= 2


def math32_vectors(x):
    return np.exp(x), np.log(np.abs(x)), np.tanh(x), np.sin(x), x ** 2.5


def test_float32_vector_math_on_long_arrays_within_two_ulps():
    special = np.array([0, -0.0, np.inf, -np.inf, np.nan, 88.72, -103.9, -87.4, 1e-40, -1, 3e38],
                       np.float32)
    x = np.concatenate([R.standard_normal(5000).astype(np.float32) * 10, np.tile(special, 100),
                        np.linspace(-100, 100, 5000, dtype=np.float32)])
    want, _, want_warnings = outcome(math32_vectors, (x,))
    got, _, got_warnings = outcome(ac.compile(math32_vectors, backend="numba"), (x,))
    assert got_warnings == want_warnings
    for g, w in zip(got, want):
        assert type(g) is type(w) and ulps(g, w) <= 2


def exp_and_cubic(x):
    return np.exp(x), x ** 2 + x ** 3


def transcendental_mix(x):
    return (np.exp(x), np.log(np.abs(x)), np.sin(x), np.tanh(x), np.sqrt(np.abs(x)),
            np.cos(x) * np.float32(2))


@pytest.fixture
def numpy_simd_policy(monkeypatch):
    """config.numpy_simd_math on (its default; the test session switches it off) with NumPy's
    SIMD loops present, as tests/lower/test_numpy_simd_policy.py sets it (helper N's policy)."""
    from astcompiler.lower.numba import numpy_simd

    monkeypatch.setitem(numpy_simd.cpu_features(), numpy_simd.FEATURE, True)
    monkeypatch.setattr(numpy_simd, "dispatched", lambda name, dtype: True)
    with ac.config.patch(persistent_cache=False, numpy_simd_math=True):
        yield


def test_warnings_of_numpy_steps_before_a_flagged_kernel_static(numpy_simd_policy):
    differential(exp_and_cubic, [(np.array([800.0, -np.inf, 1.0]),)])


SPECIAL32 = np.array([0, -0.0, np.inf, -np.inf, np.nan, 88.8, -104, 1e-40, -1, 1e-3], np.float32)


def test_warnings_of_numpy_steps_before_a_flagged_kernel_dynamic(numpy_simd_policy):
    differential(transcendental_mix, [(R.standard_normal(37).astype(np.float32),), (SPECIAL32,)])


def power(x, p):
    return x ** p


def test_power_scalar_rules_dtypes_and_errors():
    calls = [(R.standard_normal(20).astype(np.float32), 2.0),
             (R.standard_normal(20).astype(np.float32), 0.5),
             (R.standard_normal(20).astype(np.float32), 3),
             (R.standard_normal(20).astype(np.float32), np.float64(2.0)),
             (np.array([0.0, -0.0, np.inf, np.nan, -1.0]), -1.0),
             (np.array([0.0, np.nan, -np.inf]), 0.0), (np.arange(-3, 4), 2),
             (np.arange(-3, 4), -1),  # NumPy's ValueError
             (np.arange(4, dtype=np.int8), 7), (np.arange(5, dtype=np.uint8), 2)]
    compiled = ac.compile(power, backend="numba")
    with ac.config.patch(recompile_limit=64):
        for args in calls:
            want, want_error, want_warnings = outcome(power, args)
            got, got_error, got_warnings = outcome(compiled, args)
            assert (got_error, got_warnings) == (want_error, want_warnings)
            if want_error is None:
                assert type(got) is type(want) and ulps(got, want) <= 1


def test_an_array_where_a_dynamic_int_was_recompiles():
    compiled = ac.compile(power, backend="eager")
    for args in [(np.arange(-3, 4), 2), (np.arange(4, dtype=np.int8), 7),
                 (np.arange(-3, 4), np.arange(7))]:
        (got, got_error, _), (want, want_error, _) = outcome(compiled, args), outcome(power, args)
        assert got_error == want_error
        np.testing.assert_array_equal(got, want)


# --- loop regions with slice stores at run-time indices ----------------------------------------

def slide(x, k):
    for i in range(0, x.shape[0] - k):
        x[i:i + k] = x[i + 1:i + k + 1] * 0.5 + 1.0
    return x


def window_add(x, a, b):
    y = np.zeros_like(x)
    for i in range(3):
        y[a:b] += x[a:b] * i
    return y


def overlap(x, k):
    x[k:] += x[:-k]
    for _ in range(2):
        x[:-k] += x[k:] * 2.0
    return x


def test_slice_stores_at_run_time_indices():
    differential(slide, [(R.random(10), 3), (R.random(10), 2), (R.random(12), 3), (R.random(5), 7)])
    differential(window_add, [(R.random(10), 2, 7), (R.random(10), -4, 20), (R.random(10), 7, 2),
                              (R.random(10), -100, -3), (R.random(10), 0, 0)])
    differential(overlap, [(np.arange(10.0), 1), (np.arange(10.0), 3), (np.arange(12.0), 2)])


def add_windows(x, y, k):
    for i in range(k):
        x[i:i + 3] += y
    return x


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_in_place_broadcast_error_in_a_loop_is_numpys(backend):
    differential(add_windows, [(np.zeros(6), np.ones(3), 2), (np.zeros(6), np.ones(3), 5)],
                 backend=backend)


# --- kernels writing inputs; floating-point warnings --------------------------------------------

def divide_in_place(x, y):
    x /= y
    return x


def log_twice(x):
    np.sqrt(x, out=x)
    x[...] = np.log(x)
    return x.sum()


def test_kernels_writing_inputs_warn_like_numpy():
    differential(divide_in_place, [(np.ones(5), np.array([1.0, 0, 2, 0, 1])),
                                   (np.zeros(5), np.zeros(5)), (np.ones(5), np.ones(5))])
    differential(log_twice, [(np.array([1.0, -1, 0, 4]),), (np.array([1.0, 2.0]),)])


def test_errstate_modes_after_the_compile():
    compiled = ac.compile(divide_in_place, backend="numba")
    args = (np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    for mode in ("ignore", "warn", "raise"):
        with np.errstate(all=mode):
            want, got = outcome(divide_in_place, copies(args)), outcome(compiled, copies(args))
            assert got[1:] == want[1:]


def test_in_place_op_that_raises_keeps_its_writes():
    compiled = ac.compile(divide_in_place, backend="eager")
    with np.errstate(all="raise"):
        plain, passed = np.array([1.0, 2.0]), np.array([1.0, 2.0])
        with pytest.raises(FloatingPointError):
            divide_in_place(plain, np.array([1.0, 0.0]))
        with pytest.raises(FloatingPointError):
            compiled(passed, np.array([1.0, 0.0]))
    np.testing.assert_array_equal(passed, plain)


def divide_then_masked_store(x, y):
    x /= y
    x[x > 1e10] = np.log(-x[x > 1e10])
    return x.sum()


def test_comparison_of_nan_after_a_warning_kernel_does_not_warn():
    y = np.ones(10)
    y[5] = 0.0
    differential(divide_then_masked_store, [(np.zeros(10), y)])


def log_twice_added(x):
    return np.log(x) + np.log(x)


def stable_softmax(x):
    return np.exp(x - x.max()) / np.exp(x - x.max()).sum()


@pytest.mark.parametrize("fn, x", [(log_twice_added, [-1.0, 1.0]),
                                   (stable_softmax, [-np.inf, -np.inf])])
def test_repeated_warning_ops_are_not_merged(fn, x):
    differential(fn, [(np.array(x),)], backend="eager")


def unused_log(x):
    unused = np.log(x)  # noqa: F841 - its warning (or error) is the point
    return x * 2


@pytest.mark.parametrize("mode", ["warn", "raise"])
def test_unused_op_that_warns_still_warns(mode):
    with np.errstate(all=mode):
        differential(unused_log, [(np.array([-1.0, 1.0]),)], backend="eager")


def dense_relu(a, b):
    return np.maximum(a @ b + 1.0, 0.0)


def test_matmul_then_epilogue_warns_once():
    differential(dense_relu, [(np.array([[np.inf, 1.0], [0.0, 2.0]]),
                               np.array([[0.0, 1.0], [1.0, np.nan]]))])


def two_logs(x):
    a = np.log(x)
    b = np.log(x - 5.0)
    return a + b


def store_log(x):
    x[:] = np.log(x)
    return x


def default_filter_counts(fn, calls: int = 3) -> list[int]:
    """Warnings per call under Python's default action (once per source location)."""
    counts = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(calls):
            before = len(caught)
            fn(np.array([-1.0, 1.0]))
            counts.append(len(caught) - before)
    return counts


def test_default_filter_sees_each_source_line_eager():
    assert default_filter_counts(ac.compile(two_logs, backend="eager")) == \
        default_filter_counts(two_logs)


def test_default_filter_warns_once_numba():
    assert default_filter_counts(ac.compile(store_log, backend="numba")) == \
        default_filter_counts(store_log)


def scalar_ratio(x, i):
    return x[i] / x[i + 1]


def test_scalar_divide_warning_message_eager():
    compiled = ac.compile(scalar_ratio, backend="eager")
    args = (np.array([1.0, 0.0]), 0)
    assert outcome(compiled, args)[2] == outcome(scalar_ratio, args)[2]


# --- dispatch fast path: layouts, pooled buffers, threads --------------------------------------

def pointwise_and_rows(x):
    return x * 2.0 + 1.0, x - x.mean(axis=1, keepdims=True), x.T * 2.0


def layout(v):
    return (type(v), v.dtype, v.shape, v.strides, v.flags.c_contiguous, v.flags.f_contiguous)


def test_layouts_follow_numpy_across_guard_misses():
    compiled = ac.compile(pointwise_and_rows, backend="numba")
    base = R.standard_normal((4, 6))
    with ac.config.patch(recompile_limit=64):
        for x in (base, np.asfortranarray(base), base[:, ::-1], base.T,
                  np.asfortranarray(base).astype(np.float32)):
            for got, want in zip(compiled(x), pointwise_and_rows(x)):
                assert layout(got) == layout(want)
                np.testing.assert_allclose(got, want, rtol=1e-6)


def with_temporary(x):
    y = np.exp(x)
    m = y.max(axis=0)
    return y.real, y / m, (y / m).sum(axis=1)


def test_results_of_earlier_calls_do_not_change_pooled_buffers_and_threads():
    compiled = ac.compile(with_temporary, backend="numba")
    xs = [R.standard_normal((512, 300)) for _ in range(4)]  # 1.2 MB temporaries: pooled
    first = compiled(xs[0])
    kept = [a.copy() for a in first]
    for x in xs[1:]:
        compiled(x)
    for a, b, want in zip(first, kept, with_temporary(xs[0])):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, want, rtol=1e-12)
    wants, bad = [with_temporary(x)[2] for x in xs], []

    def work(i):
        for _ in range(5):
            if not np.allclose(compiled(xs[i])[2], wants[i], rtol=1e-12):
                bad.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not bad and len(compiled.entries) == 1
