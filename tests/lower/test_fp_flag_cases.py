"""FP-flag cases of the numba wrapper (red team X8, X9, X13, X14): the compiled call warns,
raises and calls ``np.errstate`` handlers exactly as the plain call, in order and count.

* Kernels of comparisons, max/min and selections are not flag-tested: vectorized ordered compares
  raise the invalid flag on NaN lanes, NumPy's comparisons never warn (``wrapper.checks_fp``).
* NumPy ufunc steps before a flag-tested kernel run with their warnings deferred
  (``runtime.fp_defer``): a flag that warns reruns the whole call with NumPy, which warns once,
  in the plain call's order.
* A structured loop function's ``ValueError`` (numba's words) reruns the call with NumPy, which
  raises its own error after the same writes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome as call_outcome
from astcompiler.lower.numba import numpy_simd


def outcome(fn, args):
    """``helpers.outcome`` on copies of the arrays, and those copies after the call."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    return (*call_outcome(fn, args), args)


def assert_like_plain(fn, compiled, args) -> list:
    """The compiled call against the plain one; returns the plain call's warnings."""
    errstate = np.geterr()
    want, want_error, want_warnings, want_inputs = outcome(fn, args)
    got, got_error, got_warnings, got_inputs = outcome(compiled, args)
    assert np.geterr() == errstate  # the deferral leaves the caller's modes as they were
    assert (got_error, got_warnings) == (want_error, want_warnings)
    for before, after in zip(want_inputs, got_inputs):
        np.testing.assert_array_equal(after, before)
    if want_error is None:
        for g, w in zip(want if isinstance(want, tuple) else (want,),
                        got if isinstance(got, tuple) else (got,)):
            assert type(g) is type(w) and np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=2e-7, equal_nan=True)
    return want_warnings


def specials(n: int, *values: float, dtype=np.float64) -> np.ndarray:
    """``n`` ordinary values (vectorized loops) with ``values`` spread over them."""
    x = np.linspace(0.5, 2.0, n).astype(dtype)
    for i, v in enumerate(values):
        x[(i * 7 + 3) % n] = v
    return x


# --- X8: comparisons -----------------------------------------------------------------------------

def scaled_then_compared(x):
    x *= 2.0
    return x > 1.0, np.maximum(x, 0.0), np.where(x < 3.0, x, 0.0)


def log_positive(x):
    return np.log(x) > 0.0


def log_positive_after_a_write(x):
    x *= 1.0
    return np.log(x) > 0.0


@pytest.fixture(scope="module")
def compare_fns():
    return {fn: ac.compile(fn, backend="numba")
            for fn in (scaled_then_compared, log_positive, log_positive_after_a_write)}


def test_comparison_kernels_do_not_warn_on_nan(compare_fns):
    fn = scaled_then_compared
    assert assert_like_plain(fn, compare_fns[fn], (specials(64, np.nan, np.nan, -1.0),)) == []
    warned = assert_like_plain(fn, compare_fns[fn], (specials(64, np.nan, 1e308),))
    assert warned == [(RuntimeWarning, "overflow encountered in multiply")]
    lines = compare_fns[fn].entries[-1].output_code.split("# ---- kernel")[0].splitlines()
    calls = [i for i, line in enumerate(lines) if "kernel_1_greater_maximum_less_where(" in line]
    assert calls and all("fp_any()" not in lines[i + 1] for i in calls)  # no test after it


@pytest.mark.parametrize("fn", [log_positive, log_positive_after_a_write])
def test_a_fused_comparison_keeps_the_other_ops_warning(compare_fns, fn):
    compiled = compare_fns[fn]
    assert assert_like_plain(fn, compiled, (specials(64, np.nan, 3.0),)) == []
    warned = assert_like_plain(fn, compiled, (specials(64, np.nan, -1.0, -2.0),))
    assert warned == [(RuntimeWarning, "invalid value encountered in log")]
    with np.errstate(invalid="raise"):
        assert_like_plain(fn, compiled, (specials(64, -1.0),))
        assert_like_plain(fn, compiled, (specials(64, np.nan),))


# --- X9: NumPy steps before a flagged kernel (config.numpy_simd_math) ----------------------------

def exp_and_sine(x):
    return np.exp(x), np.sin(x) * np.float32(2.0)


@pytest.fixture
def simd_policy(monkeypatch):
    """float32 sin a NumPy step (tests/lower/test_numpy_simd_policy.py sets it the same way)."""
    monkeypatch.setitem(numpy_simd.cpu_features(), numpy_simd.FEATURE, True)
    monkeypatch.setattr(numpy_simd, "dispatched", lambda name, dtype: True)
    with ac.config.patch(persistent_cache=False, numpy_simd_math=True):
        yield


def test_numpy_steps_then_a_flagged_kernel_warn_in_order(simd_policy):
    compiled = ac.compile(exp_and_sine, backend="numba")
    calls = [specials(80, dtype=np.float32), specials(80, np.inf, 100.0, dtype=np.float32),
             specials(80, 100.0, dtype=np.float32), specials(80, np.inf, dtype=np.float32)]
    seen = [assert_like_plain(exp_and_sine, compiled, (x,)) for x in calls]
    assert seen[1] == [(RuntimeWarning, "overflow encountered in exp"),
                       (RuntimeWarning, "invalid value encountered in sin")]
    assert seen[3] == [(RuntimeWarning, "invalid value encountered in sin")]
    assert "op_sin" in compiled.entries[-1].output_code  # (sin is a NumPy step)
    for mode in ({"over": "raise"}, {"all": "raise"}):  # (the first flag raises)
        with np.errstate(**mode):
            assert_like_plain(exp_and_sine, compiled, (calls[1],))
    for x in calls[1:]:
        plain, got = [], []
        with np.errstate(all="call", call=lambda kind, flag: plain.append(kind)):
            exp_and_sine(x.copy())
        with np.errstate(all="call", call=lambda kind, flag: got.append(kind)):
            compiled(x.copy())
        assert got == plain and plain


# --- X13: a matrix product and its fused epilogue ----------------------------------------------

def dense_relu(a, b):
    return np.maximum(a @ b + 1.0, 0.0)


def dense_sqrt(a, b):
    return np.sqrt(a @ b - 10.0)


A = np.array([[np.inf, 1.0], [0.0, 2.0]])
B = np.array([[0.0, 1.0], [1.0, np.nan]])


@pytest.mark.parametrize("fn", [dense_relu, dense_sqrt])
def test_product_then_epilogue_warns_once(fn):
    compiled = ac.compile(fn, backend="numba")
    finite = np.arange(4.0).reshape(2, 2)
    assert_like_plain(fn, compiled, (finite, finite))
    assert assert_like_plain(fn, compiled, (A, B))[0] == (
        RuntimeWarning, "invalid value encountered in matmul")
    with np.errstate(invalid="raise"):
        assert_like_plain(fn, compiled, (A, B))
        assert_like_plain(fn, compiled, (finite, finite))
    assert_like_plain(fn, compiled, (finite, np.ones((3, 2))))  # NumPy's matmul ValueError
    assert len(compiled.entries) <= 2


def scaled_then_dense_relu(x, a, b):
    x *= 2.0
    return np.maximum(a @ b + 1.0, 0.0)


def test_epilogue_after_a_write_reports_no_compare_flag():
    """After a write the epilogue cannot rerun the call: a NaN from the product must not make
    its max report 'invalid ... in add' (its NumPy twin runs on the product instead)."""
    compiled = ac.compile(scaled_then_dense_relu, backend="numba")
    nan_product = np.array([[np.nan, 1.0], [0.0, 2.0]])
    assert assert_like_plain(scaled_then_dense_relu, compiled, (np.ones(3), nan_product, B)) == []
    assert assert_like_plain(scaled_then_dense_relu, compiled, (np.ones(3), A, B)) == [
        (RuntimeWarning, "invalid value encountered in matmul")]
    overflow = np.full((2, 2), 1e308)
    assert assert_like_plain(scaled_then_dense_relu, compiled, (np.ones(3), overflow, overflow))


# --- X14: errors of a structured loop function ------------------------------------------------

def add_rows(x, y, k):
    for i in range(k):
        x[i] += y * i
    return x


def test_structured_loop_errors_are_numpys():
    compiled = ac.compile(add_rows, backend="numba")
    assert_like_plain(add_rows, compiled, (np.zeros((3, 4)), np.ones(4), 3))
    assert_like_plain(add_rows, compiled, (np.zeros((3, 4)), np.ones(5), 3))  # first trip
    assert_like_plain(add_rows, compiled, (np.zeros((3, 4)), np.ones(4), 4))  # IndexError
