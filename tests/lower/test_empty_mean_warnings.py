"""Means and variances of empty slices warn as NumPy does, whatever ``np.errstate`` says.

NumPy's ``mean``, ``var`` and ``std`` call ``warnings.warn`` ("Mean of empty slice", "Degrees of
freedom <= 0 for slice") when a reduced slice has no degrees of freedom, then divide 0 by 0. The
division's *invalid* flag made a kernel's call rerun with NumPy, but ``np.errstate(all="ignore")``
stops watching that flag while the Python warning still shows: the compiled call lost it. A
kernel now reports no degrees of freedom itself (``runtime.empty_check``, declared by the op
table's ``empty_rerun``) and the call reruns with NumPy; a slice with elements costs no rerun.
The plain call is the oracle: value bits, warnings in order.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba import runtime
from tests.helpers import assert_same_bits, clone


def row_means(data, indptr):
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        out[i] = data[indptr[i]:indptr[i + 1]].mean()
    return out


def row_variances(data, indptr):
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        out[i] = np.var(data[indptr[i]:indptr[i + 1]], ddof=1)
    return out


def whole_mean(x):
    return (x * 0.5).mean()


def axis_std(x):
    return x.std(axis=1)


def loop_mean_of_prefix(x, n):
    total = 0.0
    for k in range(n):
        total += x[:k].mean() if k % 7 else 0.0
    return total


def run(fn, args, mode):
    """(result, warning messages) of one call under ``np.errstate(all=mode)``."""
    with warnings.catch_warnings(record=True) as seen, np.errstate(all=mode):
        warnings.simplefilter("always")
        result = fn(*clone(args))
    return result, [(w.category, str(w.message)) for w in seen]


def csr(lengths):
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    data = np.linspace(-1.0, 2.0, int(indptr[-1]))
    return data, indptr


ROWS = [5, 0, 3, 1] + [2] * 70  # more than the unroll limit: a compiled loop


@pytest.mark.parametrize("mode", ["ignore", "warn"])
@pytest.mark.parametrize("fn", [row_means, row_variances])
def test_loop_over_rows_warns_on_empty_rows(fn, mode):
    compiled = ac.compile(fn, backend="numba", dynamic=True)
    for lengths in (ROWS, [3] * len(ROWS), ROWS[::-1]):
        args = csr(lengths)
        want, want_warnings = run(fn, args, mode)
        got, got_warnings = run(compiled, args, mode)
        assert_same_bits(got, want)
        assert got_warnings == want_warnings
    assert len(compiled.entries) == 1


@pytest.mark.parametrize("mode", ["ignore", "warn"])
def test_dynamic_size_mean_and_axis_std_warn_when_empty(mode):
    for fn, shapes in ((whole_mean, [(6,), (9,), (0,), (4,)]),
                       (axis_std, [(3, 4), (5, 2), (3, 0), (0, 3), (2, 6)])):
        compiled = ac.compile(fn, backend="numba", dynamic=True)
        for shape in shapes:
            x = np.arange(float(np.prod(shape))).reshape(shape) * 0.5
            want, want_warnings = run(fn, (x,), mode)
            got, got_warnings = run(compiled, (x,), mode)
            assert_same_bits(got, want)
            assert got_warnings == want_warnings, (fn.__name__, shape)


def test_mean_of_empty_prefix_in_a_loop_warns_each_time():
    compiled = ac.compile(loop_mean_of_prefix, backend="numba")
    x = np.linspace(0.0, 1.0, 100)
    for n in (80, 90):
        want, want_warnings = run(loop_mean_of_prefix, (x, n), "ignore")
        got, got_warnings = run(compiled, (x, n), "ignore")
        assert_same_bits(got, want)
        assert got_warnings == want_warnings


def test_rows_with_elements_cost_no_rerun():
    compiled = ac.compile(row_means, backend="numba")
    args = csr([3] * 80)
    compiled(*args)
    before = runtime.zero_count()
    with np.errstate(all="ignore"):
        result = compiled(*args)
    assert runtime.zero_count() == before  # no empty slice reported: the kernels' answer
    assert_same_bits(result, row_means(*args))


def test_kernels_declare_the_check_in_their_source():
    compiled = ac.compile(whole_mean, backend="numba", dynamic=True)
    compiled(np.ones(5))
    compiled(np.ones(7))
    assert "empty_check(count - 0)" in compiled.entries[-1].output_code
