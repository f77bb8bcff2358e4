"""Graph breaks the scientific corpus found in capture (issue 10, helper G), each captured exactly.

Small kernels of our own in the style of ``benchmarks/scientific``: ``int()``/``float()``/
``complex()``/``bool()`` of array elements, Python's ``max``/``min``/``abs`` of elements, branches
on element comparisons inside loops, CSR loops over rows that may be empty, ``a if t else b`` of
a NumPy scalar and a Python float, and no warnings from a branch side that is not taken. Each is
compiled (eager and numba) against the plain call over several calls: one cache entry without a
break, same values, Python types, dtypes and exceptions.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import astcompiler as ac
from tests.capture.test_symbolic_semantics import assert_same_outcome, outcome

BACKENDS = ["eager", "numba"]
N = 100  # longer than config.unroll_limit: loops over it are loop regions


def one_graph(fn: Callable, calls: list[tuple], backend: str) -> Any:
    """Plain against compiled on every call; the compiled function is one graph, no break."""
    compiled = ac.compile(fn, backend=backend)
    for args in calls:
        with warnings.catch_warnings(record=True) as plain_warnings:
            warnings.simplefilter("always")
            want = outcome(fn, args)
        with warnings.catch_warnings(record=True) as compiled_warnings:
            warnings.simplefilter("always")
            got = outcome(compiled, args)
        assert_same_outcome(got, want)
        assert [str(w.message) for w in compiled_warnings] == \
            [str(w.message) for w in plain_warnings]
    assert len(compiled.entries) == 1
    assert compiled.entries[0].break_reason is None
    return compiled


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ----- 1. int(), float(), complex(), bool() of array elements -----------------------------------
def checksum(data):
    a, b = 1, 0
    for i in range(data.shape[0]):
        a = (a + int(data[i])) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


def crc_bits(data):
    crc = 0xFFFFFFFF
    for i in range(data.shape[0]):
        crc ^= int(data[i])
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [checksum, crc_bits])
def test_int_of_bytes_in_a_loop_is_a_python_int(backend, fn):
    calls = [(rng(s).integers(0, 256, N).astype(np.uint8),) for s in range(3)]
    compiled = one_graph(fn, calls, backend)
    assert "py_int" in compiled.entries[0].graph_code


def truncate_sum(x):
    total = 0
    for i in range(x.shape[0]):
        total += int(x[i] * 3.0)  # toward zero, also for negatives
    return total, type(total).__name__


def bin_index(x, out):
    for i in range(x.shape[0]):
        k = int(x[i])
        out[k % out.shape[0]] += 1
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_of_floats_truncates_toward_zero(backend):
    calls = [(rng(s).standard_normal(N) * 5,) for s in range(3)]
    calls.append((np.array([-0.99, 0.99, -2.5, 2.5, -0.0] * 20),))
    one_graph(truncate_sum, calls, backend)
    one_graph(bin_index, [(np.abs(rng(s).standard_normal(N)) * 9, np.zeros(7, np.int64))
                          for s in range(3)], backend)


def with_nan_at(position: int, value: float) -> np.ndarray:
    x = np.linspace(-3.0, 3.0, N)
    x[position] = value
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_of_nan_and_infinity_raise_as_python(backend):
    calls = [(np.linspace(-3.0, 3.0, N),), (with_nan_at(50, np.nan),),
             (with_nan_at(7, np.inf),), (with_nan_at(0, -np.inf),), (np.ones(N),)]
    one_graph(truncate_sum, calls, backend)
    first = lambda x: int(x[0]) + 1  # noqa: E731 - outside any loop
    one_graph(first, [(np.array([2.7, 1.0]),), (np.array([np.nan, 1.0]),),
                      (np.array([np.inf, 1.0]),), (np.array([-7.9, 1.0]),)], backend)


def python_number_types(x, y, z):
    f = float(x[0])  # a Python float: weak against float32 arrays
    c = complex(x[1], x[2])
    b = bool(z[0])
    i = int(z[1])
    return y * f, c, b, i, float(z[1]), complex(x[0]), bool(x[3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_conversions_give_python_numbers(backend):
    calls = [(np.array([1.5, -2.0, np.inf, np.nan]), np.ones(3, np.float32),
              np.array([0, 7], np.int16)),
             (np.array([-0.0, 3.0, np.nan, 0.0]), np.arange(3, dtype=np.float32),
              np.array([3, -9], np.int16))]
    one_graph(python_number_types, calls, backend)


def escape_counts(xs, ys, maxiter):
    out = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for i in range(ys.shape[0]):
        for j in range(xs.shape[0]):
            c = complex(xs[j], ys[i])
            z = 0j
            n = 0
            while n < maxiter and abs(z) <= 2.0:
                z = z * z + c
                n += 1
            out[i, j] = n
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_of_two_elements_in_loops(backend):
    calls = [(np.linspace(-2, 1, 70), np.linspace(-1, 1, 3), 20),
             (np.linspace(-1, 0.5, 70), np.linspace(-0.5, 1, 3), 20)]
    one_graph(escape_counts, calls, backend)


def index_halves(x):
    total = 0
    for i in range(x.shape[0]):
        total += int(i / 3) + int(bool(x[i]))  # int() of a Python float, of a Python bool
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_of_python_numbers_in_a_loop(backend):
    one_graph(index_halves, [(rng(s).integers(0, 2, N),) for s in range(2)], backend)


def complex_of_complex_warns(z):
    return float(z[0])  # ComplexWarning: a side effect, so it runs in Python


def test_int_and_float_of_complex_elements_stay_a_break():
    compiled = ac.compile(complex_of_complex_warns, backend="eager")
    with pytest.warns(np.exceptions.ComplexWarning):
        assert compiled(np.array([1 + 2j])) == 1.0
    assert compiled.entries[0].break_reason is not None


# ----- 2. Python's max(), min() and abs() of elements --------------------------------------------
def pool(x):
    c, h, w = x.shape
    out = np.empty((c, h // 2, w // 2), dtype=x.dtype)
    for ch in range(c):
        for i in range(h // 2):
            for j in range(w // 2):
                out[ch, i, j] = max(x[ch, 2 * i, 2 * j], x[ch, 2 * i + 1, 2 * j],
                                    x[ch, 2 * i, 2 * j + 1], x[ch, 2 * i + 1, 2 * j + 1])
    return out


def pairwise(x, y):
    out = np.empty((4, x.shape[0]), dtype=x.dtype)
    for i in range(x.shape[0]):
        out[0, i] = max(x[i], y[i])
        out[1, i] = min(x[i], y[i])
        out[2, i] = max(y[i], x[i])
        out[3, i] = abs(x[i]) - min(y[i], x[i], abs(y[i]))
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_of_elements_pools(backend):
    calls = [(rng(s).standard_normal((2, 16, 14)),) for s in range(2)]
    calls.append((np.where(rng(3).random((2, 16, 14)) < 0.2, np.nan, 1.0),))
    one_graph(pool, calls, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_min_keep_pythons_order_with_nan(backend):
    x = rng(0).standard_normal(N)
    y = rng(1).standard_normal(N)
    x[::7], y[::5] = np.nan, np.nan  # max(nan, 1) is nan, max(1, nan) is 1
    x[::11], y[::11] = -0.0, 0.0  # ties: the first item stays
    one_graph(pairwise, [(x, y), (y, x), (np.abs(x), -y)], backend)


def edit_distance(a, b):
    m, n = a.shape[0], b.shape[0]
    D = np.zeros((m + 1, n + 1), dtype=np.int64)
    D[:, 0] = np.arange(m + 1)
    D[0, :] = np.arange(n + 1)
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + cost)
    return D[m, n]


def running_max(x):
    best = 0
    worst = 0.0
    where = 0
    for i in range(x.shape[0]):
        where = max(where, i * int(x[i] > 0))  # Python ints
        best = max(best, int(x[i] * 10))
        worst = min(worst, float(x[i]))  # Python floats
    return best, worst, where


def mixed_types(x):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = max(0.0, x[i])  # a Python float or a NumPy float: only stored
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_of_element_sums_and_python_ints(backend):
    one_graph(edit_distance, [(rng(s).integers(0, 4, 9), rng(s + 5).integers(0, 4, 12))
                              for s in range(3)], backend)
    one_graph(running_max, [(rng(s).standard_normal(N),) for s in range(3)], backend)
    one_graph(mixed_types, [(rng(s).standard_normal(N),) for s in range(2)], backend)


def test_max_with_a_key_or_of_arrays_is_unchanged():
    compiled = ac.compile(lambda x: max(x[0], x[1], key=abs), backend="eager")
    assert compiled(np.array([-3.0, 2.0])) == -3.0
    rows = ac.compile(lambda x: max(x[0], x[1]), backend="eager")
    with pytest.raises(ValueError, match="truth value of an array"):
        rows(np.ones((2, 3)))


# ----- 3. branches on element comparisons inside loops ------------------------------------------
def lcs_length(a, b):
    m, n = a.shape[0], b.shape[0]
    prev = np.zeros(n + 1, dtype=np.int64)
    for i in range(m):
        cur = np.zeros(n + 1, dtype=np.int64)
        for j in range(n):
            if a[i] == b[j]:
                cur[j + 1] = prev[j] + 1
            else:
                cur[j + 1] = max(prev[j + 1], cur[j])
        prev = cur
    return int(prev[n])


@pytest.mark.parametrize("backend", BACKENDS)
def test_branch_on_element_equality_in_loops(backend):
    one_graph(lcs_length, [(rng(s).integers(0, 4, 70), rng(s + 9).integers(0, 4, 9))
                           for s in range(3)], backend)


# ----- 4. CSR loops over rows that may be empty -------------------------------------------------
def csr_matvec(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s
    return y


def csr(seed: int, empty_last: bool) -> tuple:
    per_row = rng(seed).integers(0, 4, 8)
    if empty_last:
        per_row[-3:] = 0  # the last rows are empty: their first index is past the end
    indptr = np.concatenate(([0], np.cumsum(per_row))).astype(np.int64)
    nnz = int(indptr[-1])
    return indptr, rng(seed).integers(0, 6, nnz), rng(seed).standard_normal(nnz), np.arange(6.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_csr_rows_that_may_be_empty(backend):
    indptr, indices, data, x = csr(0, True)
    calls = [(indptr, indices, data, x), (indptr, indices, data * 2, x + 1),
             (indptr, indices[::-1].copy(), data, x)]
    one_graph(csr_matvec, calls, backend)


# ----- 5. `a if test else b` of a NumPy scalar and a Python float -------------------------------
def row_norms(indptr, data):
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        vals = data[lo:hi]
        out[i] = np.sqrt((vals * vals).sum()) if hi > lo else 0.0
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_choice_of_numpy_and_python_float_stored(backend):
    indptr, _, data, _ = csr(1, True)
    one_graph(row_norms, [(indptr, data), (indptr, data * 3), (indptr, -data)], backend)


# ----- 6. no warnings from the side of a branch that is not taken -------------------------------
def centroid_update(X, labels, centroids):
    k = centroids.shape[0]
    new = np.zeros_like(centroids)
    counts = np.zeros(k)
    for i in range(X.shape[0]):
        new[labels[i]] += X[i]
        counts[labels[i]] += 1.0
    for j in range(k):
        if counts[j] > 0:
            new[j] /= counts[j]
        else:
            new[j] = centroids[j]
    return new


def guarded_log(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = np.log(x[i]) if x[i] > 0 else -1.0
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_untaken_branch_never_warns(backend):
    X = rng(0).standard_normal((80, 2))
    centroids = rng(1).standard_normal((4, 2))
    calls = [(X, np.array([0, 1, 3] * 26 + [0, 1]), centroids),  # cluster 2 is empty
             (X, np.array([0, 1, 2, 3] * 20), centroids)]
    one_graph(centroid_update, calls, backend)
    one_graph(guarded_log, [(np.linspace(-1.0, 1.0, N),), (np.zeros(N),)], backend)


# ----- chained comparisons on traced values (`0 <= k < n`) ---------------------------------------
def histogram(x, lo, hi):
    nbins = 10
    counts = np.zeros(nbins, dtype=np.int64)
    width = (hi - lo) / nbins
    for i in range(x.shape[0]):
        k = int((x[i] - lo) / width)
        if 0 <= k < nbins:
            counts[k] += 1
    return counts


def chains(x, a):
    ordered = 0
    for i in range(1, x.shape[0] - 1):
        ordered += int(x[i - 1] < x[i] <= x[i + 1] != a)
    return ordered, x[0] < x[1] < a, a < 0.0 < 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_chained_comparisons_of_elements(backend):
    one_graph(histogram, [(rng(s).standard_normal(N) * 2, -1.5, 1.5) for s in range(3)], backend)
    one_graph(chains, [(rng(s).standard_normal(N), 0.25) for s in range(3)], backend)


def chain_evaluation(x, log):
    return (log.append("a") or x[0]) < (log.append("b") or x[1]) < (log.append("c") or x[2])


def test_chained_comparison_evaluates_each_operand_once_in_order():
    for values in ([1.0, 2.0, 3.0], [2.0, 1.0, 3.0]):
        plain_log, compiled_log = [], []
        want = chain_evaluation(np.array(values), plain_log)
        got = ac.compile(chain_evaluation, backend="eager")(np.array(values), compiled_log)
        assert type(got) is type(want) and got == want
        assert compiled_log == plain_log


# ----- what capturing float()/bool() exposed: branch twins, `is True`, shared attributes --------
def python_float_in_one_branch(x):
    v = x.sum()
    if v > 0:
        v = float(v)  # a Python float on one side, np.float64 on the other
    return v, type(v)


def traced_bool_identity(x):
    b = bool(x[0] > 1)
    return b is True, b is False, b is not True, (not x[1]) is True, b is None


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_branch_twins_and_identity_of_traced_bools(backend):
    calls = [(np.array([1.0, 2.0]),), (np.array([-1.0, -2.0]),), (np.array([3.0, 0.0]),)]
    for fn in (python_float_in_one_branch, traced_bool_identity):
        compiled = ac.compile(fn, backend=backend)
        for args in calls:
            assert_same_outcome(outcome(compiled, args), outcome(fn, args))
    assert ac.compile(traced_bool_identity, backend=backend, fullgraph=True)(calls[0][0]) == \
        traced_bool_identity(calls[0][0])


class Tracked:
    def __init__(self, value):
        self.log = ["made"]
        self.value = float(value) * 2


def returns_object_and_its_list(x):
    t = Tracked(x.sum())
    return t, t.log


def test_returned_object_shares_its_list_with_the_result():
    compiled = ac.compile(returns_object_and_its_list, backend="eager")
    for n in (2, 3):
        t, log = compiled(np.ones(n))
        assert t.log is log and log == ["made"] and type(t.value) is float and t.value == 2.0 * n
    assert compiled.entries[0].break_reason is None


# ----- a while loop met many times at capture (inside unrolled loops) ---------------------------
def escape_rows(xs, ys):
    out = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for i in range(ys.shape[0]):  # short: unrolled
        for j in range(xs.shape[0]):  # unrolled until the node budget, then a loop region
            z = 0.0
            n = 0
            while n < 8 and z <= 4.0:  # static on entry: its first iteration runs in Python
                z = z * z + xs[j] + ys[i]
                n += 1
            out[i, j] = n
    return out


def test_while_iterations_count_per_execution():
    xs, ys = np.linspace(-1.0, 1.0, 60), np.linspace(-0.5, 0.5, 12)
    one_graph(escape_rows, [(xs, ys), (xs * 1.5, ys)], "eager")
