"""numba backend: fixes for the slow corpus kernels (issue 10, "no kernel below 0.95x NumPy").

* kernels beside BLAS/LAPACK calls stay serial below ``config.blas_parallel_threshold`` (their
  ``prange`` twins would compete with BLAS's threads), and a pointwise kernel after a BLAS call
  writes into the BLAS result when nothing else reads it;
* a host loop reads ``np.errstate`` once, not once per iteration;
* the structured lowering checks an index once per block, not once per use, and still raises
  NumPy's IndexError;
* ``np.lib.stride_tricks.sliding_window_view`` is an op (a read-only view): no graph break;
* a region piece returns only the results the enclosing graph reads.
Every test compares the compiled call against the plain call.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.config import config

from numba_helpers import assert_same


def _copies(args):
    return tuple(a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args)


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert_same(got, want)


def _check(fn, calls, backend="numba"):
    """Compiled == plain for each argument tuple (results, and the inputs after the call)."""
    compiled = ac.compile(fn, backend=backend)
    for args in calls:
        mine, theirs = _copies(args), _copies(args)
        _same(compiled(*mine), fn(*theirs))
        for a, b in zip(mine, theirs):
            if isinstance(a, np.ndarray):
                assert_same(a, b)
    return compiled


def _raises_like_plain(fn, compiled, args):
    """The compiled call raises the plain call's exception (class and message) and leaves the
    inputs as the plain call leaves them."""
    mine, theirs = _copies(args), _copies(args)
    with pytest.raises(Exception) as plain:
        fn(*theirs)
    with pytest.raises(type(plain.value)) as got:
        compiled(*mine)
    assert str(got.value) == str(plain.value)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return plain.value


def _code(compiled) -> str:
    return "\n".join(entry.output_code for entry in compiled.entries)


# -- kernels beside BLAS --------------------------------------------------------------------------


def matmul_chain(alpha, beta, A, B, C, D):
    return alpha * A @ B @ C + beta * D


def scaled_sum(alpha, beta, A, D):
    return alpha * A + beta * D


def _chain_inputs(n, order="C"):
    rng = np.random.default_rng(1)
    mats = [np.asarray(rng.standard_normal((n, n)), order=order) for _ in range(4)]
    return (0.5, 2.0, *mats)


def test_kernels_beside_blas_run_serially_and_match_numpy_exactly():
    args = _chain_inputs(300)  # 90000 elements: above config.parallel_threshold
    compiled = _check(matmul_chain, [args])
    code = _code(compiled)
    threshold = int(config.blas_parallel_threshold)
    assert threshold > int(config.parallel_threshold)
    assert f">= {threshold}:  # serial below this size beside BLAS" in code
    assert f">= {int(config.parallel_threshold)}:" not in code
    # the same elementwise work without BLAS keeps the usual threshold
    plain = _check(scaled_sum, [(0.5, 2.0, args[2], args[5])])
    plain_code = _code(plain)
    assert f">= {int(config.parallel_threshold)}:" in plain_code
    assert "beside BLAS" not in plain_code
    # elementwise kernels and the same BLAS calls: the bits of NumPy
    np.testing.assert_array_equal(compiled(*args), matmul_chain(*args))


def test_a_lower_blas_threshold_runs_the_prange_twins_beside_blas():
    args = _chain_inputs(300)
    with config.patch(parallel_threshold=512, blas_parallel_threshold=1024):
        compiled = _check(matmul_chain, [args])
    assert ">= 1024:  # serial below this size beside BLAS" in _code(compiled)
    np.testing.assert_array_equal(compiled(*args), matmul_chain(*args))


def solve_loop_beside_big_kernel(A, v, n, big):
    for _ in range(n):
        v = np.linalg.solve(A, v) * 0.5 + 1.0
    return v, big * 2.0 + 1.0


def test_a_graph_whose_loop_calls_lapack_keeps_its_kernels_serial(monkeypatch):
    from astcompiler.lower.numba import region_ops
    monkeypatch.setattr(region_ops, "_SCIPY", False)  # solve: a host loop, not a loop kernel
    A, v, _ = _system(6)
    big = np.ones(70000)  # above config.parallel_threshold
    compiled = _check(solve_loop_beside_big_kernel, [(A, v, 70, big), (A, v, 90, big)])
    code = _code(compiled)
    top = code.split("# ==== ")[0]
    assert "a host loop in this wrapper" in top and "op_linalg_solve" not in top
    assert "big.size >= " in top or "add.size >= " in top
    assert "beside BLAS" in top and f">= {int(config.parallel_threshold)}:" not in top


def test_a_kernel_after_blas_writes_into_the_blas_result():
    args = _chain_inputs(64)
    compiled = _check(matmul_chain, [args, _chain_inputs(64, order="F")])
    code = _code(compiled)
    assert re.search(r"add = matmul_1  # in place: a BLAS result read only here", code)
    got, want = compiled(*args), matmul_chain(*args)
    np.testing.assert_array_equal(got, want)
    assert got.flags.c_contiguous == want.flags.c_contiguous
    assert not any(np.shares_memory(got, a) for a in args[2:])
    assert not np.shares_memory(got, compiled(*args))  # a fresh array per call
    # Fortran-ordered inputs: NumPy's layout for the result (no in-place reuse there)
    f_args = _chain_inputs(64, order="F")
    got, want = compiled(*f_args), matmul_chain(*f_args)
    np.testing.assert_array_equal(got, want)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == \
        (want.flags.c_contiguous, want.flags.f_contiguous)


def blas_result_read_twice(A, B, D):
    m = A @ B
    return m, m * 2.0 + D


def blas_result_two_outputs(A, B, D):
    m = A @ B
    return m * 2.0 + D, np.sqrt(np.abs(m)) - D


def test_a_blas_result_read_elsewhere_is_not_overwritten():
    rng = np.random.default_rng(3)
    A, B, D = (rng.standard_normal((40, 40)) for _ in range(3))
    compiled = _check(blas_result_read_twice, [(A, B, D)])
    assert "in place" not in _code(compiled)
    m, out = compiled(A, B, D)
    np.testing.assert_array_equal(m, A @ B)
    assert not np.shares_memory(m, out)
    # one kernel with two outputs reading the BLAS result: one of them may reuse it
    compiled = _check(blas_result_two_outputs, [(A, B, D)])
    first, second = compiled(A, B, D)
    np.testing.assert_array_equal(first, (A @ B) * 2.0 + D)
    np.testing.assert_array_equal(second, np.sqrt(np.abs(A @ B)) - D)
    assert not np.shares_memory(first, second)


def matrix_power_one(A, D):
    return np.linalg.matrix_power(A, 1) + D


def test_a_linalg_op_that_returns_its_input_is_not_written_to():
    rng = np.random.default_rng(4)
    A, D = rng.standard_normal((30, 30)), rng.standard_normal((30, 30))
    compiled = _check(matrix_power_one, [(A, D)])
    assert "in place" not in _code(compiled)


# -- host loops read np.errstate once ---------------------------------------------------------


@pytest.fixture()
def _no_blas_in_loop_kernels(monkeypatch):
    """``np.linalg.solve`` is then an op loop kernels cannot hold: its loop is a host loop."""
    from astcompiler.lower.numba import region_ops
    monkeypatch.setattr(region_ops, "_SCIPY", False)


def solve_into(A, b, x, out, n):
    for t in range(n):
        out[t % out.shape[0]] += x.sum()  # a write, then kernels: the body cannot rerun them
        y = np.linalg.solve(A, b + x)
        x = np.sqrt(x * x + y) - 0.5
    return x


def _system(size=5):
    rng = np.random.default_rng(5)
    A = rng.standard_normal((size, size)) + size * np.eye(size)
    return A, np.abs(rng.standard_normal(size)) + 1.0, np.abs(rng.standard_normal(size))


@pytest.mark.usefixtures("_no_blas_in_loop_kernels")
def test_a_host_loop_reads_the_errstate_once_and_still_honours_it():
    A, b, x = _system()
    calls = [(A, b, x, np.zeros(3), 7), (A, b, x * 0.5, np.ones(3), 4), (A, b, x, np.zeros(3), 0)]
    compiled = _check(solve_into, calls)
    code = _code(compiled)
    assert "a host loop in this wrapper" in code
    head, _, body = code.partition("# ==== ")
    loop = head.index("for i in range(")
    assert head.index("strict = ___rt.strict()") < loop  # read before the loop ...
    assert "___strict=strict)" in head[loop:]  # ... and passed to the body
    assert re.search(r"def \w+_body\(.*, ___strict=None\):", body)
    assert "if ___rt.strict() if ___strict is None else ___strict:" in body
    # np.errstate set by the caller: the loop raises where the plain call raises
    bad = (A, -b * 50.0, x, np.zeros(3), 6)
    with np.errstate(invalid="raise"):
        error = _raises_like_plain(solve_into, compiled, bad)
    assert isinstance(error, FloatingPointError)
    with np.errstate(invalid="ignore"):
        _check(solve_into, [bad])


# -- index checks once per block ----------------------------------------------------------------


def gather_update(a, idx):
    out = np.zeros(idx.shape[0])
    for i in range(idx.shape[0]):
        j = idx[i]
        out[i] = a[j] * 2.0 + a[j]
        a[j] = a[j] + 1.0
    return out


def test_an_index_is_checked_once_per_iteration_and_raises_numpys_error():
    rng = np.random.default_rng(6)
    a = rng.random(10)
    idx = rng.integers(-10, 10, 100)
    compiled = _check(gather_update, [(a, idx), (a, idx[::-1].copy())])
    code = _code(compiled)
    assert "one structured numba function" in code
    kernel = code[code.index("def structured_kernel"):]
    assert kernel.count("_ac_ix(") == 1  # a[j] read twice and written once: one check
    for bad in (10, -11, 1000):
        wrong = idx.copy()
        wrong[37] = bad
        error = _raises_like_plain(gather_update, compiled, (a, wrong))
        assert isinstance(error, IndexError)
    assert len(compiled.entries) == 1


def index_in_branches(a, idx):
    total = 0.0
    for i in range(idx.shape[0]):
        j = idx[i]
        if i % 2 == 0:
            total += a[j]
        else:
            total -= a[j] * 0.5
    return total


def test_a_check_in_one_branch_is_not_reused_in_the_other():
    rng = np.random.default_rng(7)
    a, idx = rng.random(8), rng.integers(0, 8, 80)
    compiled = _check(index_in_branches, [(a, idx)])
    wrong = idx.copy()
    wrong[41] = 8  # an odd iteration: the else branch's access
    assert isinstance(_raises_like_plain(index_in_branches, compiled, (a, wrong)), IndexError)


# -- sliding_window_view ---------------------------------------------------------------------------


def conv_im2col(x, w):
    c_in, h, wd = x.shape
    c_out, _, k, _ = w.shape
    windows = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(1, 2))
    ho, wo = windows.shape[1], windows.shape[2]
    cols = windows.transpose(1, 2, 0, 3, 4).reshape(ho * wo, c_in * k * k)
    out = cols @ w.reshape(c_out, -1).T
    return out.T.reshape(c_out, ho, wo)


def window_sums(x, k):
    v = np.lib.stride_tricks.sliding_window_view(x, (k, 2), axis=(0, 1))
    return v.max(axis=(-1, -2)) * 2.0 + v.shape[0]


def repeated_axis(x):
    return np.lib.stride_tricks.sliding_window_view(x, (2, 3), axis=(0, 0)).max(axis=-1)


def write_window(x):
    v = np.lib.stride_tricks.sliding_window_view(x, 3)
    v[0, 0] = 5.0
    return v.sum()


def too_large(x):
    return np.lib.stride_tricks.sliding_window_view(x, (20,)) + 1.0


def wrong_window_count(x):
    return np.lib.stride_tricks.sliding_window_view(x, (2, 2)) + 1.0


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_sliding_window_view_is_an_op_without_a_graph_break(backend):
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((3, 9, 8)), rng.standard_normal((4, 3, 3, 3))
    compiled = _check(conv_im2col, [(x, w)], backend)
    (entry,) = compiled.entries
    assert not entry.pieces and entry.break_reason is None
    assert "sliding_window_view(" in entry.graph_code


def test_sliding_window_view_shapes_follow_numpy_with_dynamic_sizes():
    rng = np.random.default_rng(9)
    calls = [(rng.random((n, m)), k) for n, m, k in [(4, 3, 2), (6, 5, 2), (9, 7, 3), (12, 4, 5)]]
    compiled = _check(window_sums, calls)
    eager = _check(window_sums, calls, "eager")
    assert len(compiled.entries) == len(eager.entries)
    assert "sliding_window_view" in compiled.entries[-1].graph_code
    _check(repeated_axis, [(np.arange(8.0),)])


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_sliding_window_view_is_read_only_and_rejects_what_numpy_rejects(backend):
    for fn, x in [(write_window, np.arange(6.0)), (too_large, np.arange(5.0)),
                  (wrong_window_count, np.arange(5.0))]:
        error = _raises_like_plain(fn, ac.compile(fn, backend=backend), (x,))
        assert isinstance(error, ValueError)
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        ac.compile(write_window, backend=backend)(np.arange(6.0))


# -- a region piece returns what the enclosing graph reads ------------------------------------


def windows_then_solve(x, A, b):
    acc = 0.0
    for i in range(x.shape[0] - 3):
        patch = x[i:i + 4, ::2].reshape(8)  # a copy: whether it is one is never observed
        acc = acc + patch.sum()
    return acc, np.linalg.solve(A, b)


@pytest.mark.usefixtures("_no_blas_in_loop_kernels")
def test_an_unused_carried_value_does_not_keep_a_region_out_of_numba():
    rng = np.random.default_rng(10)
    A, b, _ = _system()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numba compiles the piece (no fallback at run time)
        compiled = _check(windows_then_solve, [(rng.random((80, 4)), A, b)])
    code = _code(compiled)
    assert re.search(r"for_range at .*: one structured numba function", code), code[:600]


# -- cumsum / cumprod of float vectors as numba loops ----------------------------------------------


def cdf(x):
    s = np.sort(x)
    c = np.cumsum(s)
    return s, c / c[-1]


def reverse_cumsum(x):
    return np.flip(np.cumsum(np.flip(x)))


def scans(x):
    return np.cumsum(x), np.cumprod(x * 0.5 + 0.75), x.cumsum(axis=0)


def scans_elsewhere(x, m):
    return np.cumsum(x, dtype=np.float64), np.cumsum(m), np.cumsum(m, axis=1)


def test_cumsum_of_a_float_vector_is_a_numba_loop_with_numpys_bits():
    rng = np.random.default_rng(11)
    calls = [(rng.random(1000),), (rng.standard_normal(7),), (np.ones(1),), (np.zeros(0),),
             (rng.random(513).astype(np.float32),), (rng.random(300)[::-3],)]
    for fn in (cdf, reverse_cumsum, scans):
        compiled = _check(fn, calls[:1])
        code = _code(compiled)
        assert "numba scans in the wrapper (scans.py): cum" in code
        assert "SCANS['cumsum']" in code and "the original function runs" not in code
        for args in calls if fn is not cdf else calls[:3] + calls[4:]:
            got, want = compiled(*args), fn(*args)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(g, w)  # bit for bit: the same sequential order


def test_other_scans_stay_numpys():
    rng = np.random.default_rng(12)
    compiled = _check(scans_elsewhere, [(rng.random(20).astype(np.float32),
                                         rng.integers(0, 9, (3, 4)))])
    assert "SCANS[" not in _code(compiled)


def overflowing(x):
    return np.cumsum(x) * 0.5


def test_a_scan_that_overflows_warns_and_raises_as_numpy_does():
    x = np.array([1e308, 1e308, 1.0])
    compiled = _check(overflowing, [(np.array([1.0, 2.0]),)])
    with pytest.warns(RuntimeWarning) as plain:
        want = overflowing(x)
    with pytest.warns(RuntimeWarning) as got:
        result = compiled(x)
    np.testing.assert_array_equal(result, want)
    assert [str(w.message) for w in got] == [str(w.message) for w in plain]
    with np.errstate(over="raise"):
        assert isinstance(_raises_like_plain(overflowing, compiled, (x,)), FloatingPointError)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(compiled(x), want)
