"""Indexing and views inside loop regions on the numba backend: exactly NumPy's results, errors
and mutations, and the loops stay one structured numba function (no host loop, no NumPy op by
op). Loops run past ``config.unroll_limit`` so they stay loops."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import astcompiler as ac

pytest.importorskip("numba")

RNG = np.random.default_rng(7)


def _copies(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _outcome(fn: Callable, args: tuple) -> tuple[Any, tuple]:
    """(result or (exception type, message), the arguments afterwards)."""
    try:
        result = fn(*args)
    except Exception as err:  # the exact error is part of the behaviour
        result = (type(err), str(err))
    return result, args


def _same(expected: Any, got: Any, exact: bool = True) -> None:
    """``exact=False``: floats within rounding (a float sum's order is not NumPy's pairwise one)."""
    if isinstance(expected, tuple) and expected and isinstance(expected[0], type):
        assert isinstance(got, tuple) and got[:1] == expected[:1] and got == expected
        return
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for e, g in zip(expected, got):
            _same(e, g, exact)
        return
    assert type(got) is type(expected)
    if isinstance(expected, (np.ndarray, np.generic)):
        assert got.dtype == expected.dtype and np.shape(got) == np.shape(expected)
        if not exact and np.dtype(expected.dtype).kind == "f":
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
            return
        np.testing.assert_array_equal(got, expected)
    else:
        assert got == expected or (got != got and expected != expected)


def check(fn: Callable, calls: list[tuple], structured: bool = True, exact: bool = True) -> Any:
    """Each call plain and compiled (numba): same result or error, same argument mutations."""
    compiled = ac.compile(fn, backend="numba")
    for args in calls:
        expected, expected_args = _outcome(fn, _copies(args))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got, got_args = _outcome(compiled, _copies(args))
        fallbacks = [str(w.message) for w in caught if "could not compile" in str(w.message)]
        assert not fallbacks, fallbacks  # numba compiled the kernel: no eager rerun
        _same(expected, got, exact)
        for e, g in zip(expected_args, got_args):
            _same(e, g, exact)
    if structured:
        for entry in compiled.entries:
            code = entry.output_code
            assert "def structured_kernel" in code, code[:600]
            assert "host loop" not in code and "op by op" not in code, code[:600]
    return compiled


def kernel_source(compiled: Any) -> str:
    code = compiled.entries[-1].output_code
    return code[code.index("def structured_kernel"):]


# ---------------------------------------------------------------- 1. bounds


def gather(x, idx):
    out = np.zeros(idx.shape[0])
    for t in range(idx.shape[0]):
        out[t] = x[idx[t]] * 2.0
    return out


def test_gather_wraps_negative_and_raises_numpy_index_error():
    x = np.arange(100.0)
    ok = RNG.integers(-100, 100, 120)
    high, low = ok.copy(), ok.copy()
    high[50], low[7] = 100, -101
    compiled = check(gather, [(x, ok), (x, high), (x, low), (np.arange(130.0), ok)])
    with pytest.raises(IndexError, match="^index 100 is out of bounds for axis 0 with size 100$"):
        compiled(x, high)
    assert "_ac_ix(" in kernel_source(compiled)


def scatter(y, idx, v):
    for t in range(idx.shape[0]):
        y[idx[t]] = v * t
    return y


def test_scatter_out_of_bounds_raises_after_the_same_writes():
    idx = RNG.integers(-80, 80, 90)
    bad = idx.copy()
    bad[60] = 80
    check(scatter, [(np.zeros(80), idx, 1.5), (np.zeros(80), bad, 2.0),
                    (np.zeros(80), bad - 200, 2.0)])


def scatter_2d(y, rows, cols):
    for t in range(rows.shape[0]):
        y[rows[t], cols[t]] += 1.0
    return y


def test_two_dimensional_index_names_its_axis():
    rows = RNG.integers(0, 70, 100)
    cols = RNG.integers(0, 9, 100)
    bad = cols.copy()
    bad[3] = 9
    compiled = check(scatter_2d, [(np.zeros((70, 9)), rows, cols),
                                  (np.zeros((70, 9)), rows, bad)])
    with pytest.raises(IndexError, match="^index 9 is out of bounds for axis 1 with size 9$"):
        compiled(np.zeros((70, 9)), rows, bad)


def stencil(x):
    y = np.zeros_like(x)
    for i in range(1, x.shape[0] - 1):
        y[i] = 0.5 * (x[i - 1] + x[i + 1]) - x[-1]
    return y


def test_stencil_bounds_proven_from_the_loop_range():
    compiled = check(stencil, [(RNG.standard_normal(100),), (RNG.standard_normal(120),),
                               (RNG.standard_normal(150),)])
    assert "_ac_ix(" not in kernel_source(compiled)


def test_stencil_bounds_proven_for_symbolic_sizes():
    x = RNG.standard_normal(100)
    ac.mark_dynamic(x, 0)
    compiled = check(stencil, [(x,), (RNG.standard_normal(170),)])
    source = kernel_source(compiled)
    assert "_ac_ix(" not in source and "x.shape[0]" in source


def prefix_writes(y, n):
    for i in range(n):
        y[i] = i * 2.0
    return y


def test_loop_over_a_dynamic_count_checks_and_raises():
    compiled = check(prefix_writes, [(np.zeros(90), 70), (np.zeros(90), 80), (np.zeros(90), 95),
                                     (np.zeros(120), 110)])
    assert "_ac_ix(" in kernel_source(compiled)


def reverse_reads(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s * 0.5 + x[-1 - i]
    return s


def test_negative_indices_from_the_loop_are_proven():
    compiled = check(reverse_reads, [(RNG.standard_normal(100),), (RNG.standard_normal(80),)])
    assert "_ac_ix(" not in kernel_source(compiled)


# ---------------------------------------------------------------- 2. advanced indexing


def fancy_rows(x, rows):
    s = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        s += x[rows].sum(axis=0) * t
    return s


def test_integer_array_index_in_a_loop():
    x = RNG.standard_normal((80, 12))
    check(fancy_rows, [(x, np.array([1, 5, -2])), (x, np.array([0, 79, 3])),
                       (x, np.array([1, 80, 0])), (x, np.array([-81, 2, 0]))])


def fancy_write(y, cols):
    for t in range(y.shape[0]):
        y[t, cols] = y[t, cols] * 2.0 + t
    return y


def test_integer_array_write_in_a_loop():
    y = RNG.standard_normal((70, 10))
    check(fancy_write, [(y, np.array([0, 3, -1])), (y, np.array([2, 2, 9])),
                        (y, np.array([1, 10, 2])), (y, np.array([1, -11, 2]))])


def mask_read(x, thr):
    total = 0.0
    for t in range(x.shape[0]):
        row = x[t]
        total += row[row > thr].sum()
    return total


def mask_write(x, low):
    for t in range(x.shape[0]):
        row = x[t]
        row[row < low] = low
    return x


def test_boolean_masks_read_and_write_in_a_loop():
    x = RNG.standard_normal((80, 12))
    other = RNG.standard_normal((90, 7))  # new sizes: symbolic, with ``row`` bound in the loop
    check(mask_read, [(x, 0.3), (x, -0.5), (other, 0.0)])
    check(mask_write, [(x, 0.0), (x, -0.25), (other, 0.1)])


def mask_from_other(x, keep):
    total = 0.0
    for t in range(x.shape[0]):
        total += x[t][keep].sum()
        x[t][keep] = total
    return x, total


def test_mask_length_mismatch_raises_numpy_message():
    def mask(n: int) -> np.ndarray:
        return RNG.random(n) > 0.4

    x6, x7 = RNG.standard_normal((80, 6)), RNG.standard_normal((90, 7))
    check(mask_from_other, [(x6, mask(6)), (x6, mask(6)), (x7, mask(7)), (x7, mask(6)),
                            (x6, mask(7)), (x7, np.zeros(7, bool))])


def masked_iteration(z, c, steps):
    """An escape-time iteration written with whole-array masks, read and written in a loop."""
    counts = np.zeros(z.shape, dtype=np.int64)
    for _ in range(steps):
        alive = np.abs(z) <= 2.0
        z[alive] = z[alive] * np.abs(z[alive]) * 0.5 + c[alive]
        counts += alive
        z[z > 1.5] = 0.0
    return counts, z


def test_two_dimensional_masks_read_and_write_in_a_loop():
    def plane(shift: float) -> tuple:
        xs = np.linspace(-2.0, 0.6, 20) + shift
        return np.zeros((20, 20)), xs[None, :] + 0.3 * xs[:, None], 70

    compiled = check(masked_iteration, [plane(0.0), plane(0.1), plane(-0.3)])
    source = kernel_source(compiled)  # loop bodies are planned: a masked fill may be a kernel
    assert "_ac_mask_set_2d(" in source or "masked_fill" in source


def masked_assign(x, m, v):
    for t in range(x.shape[0]):
        x[m] = v * t
    return x


def test_mask_assignment_value_count_mismatch_raises_numpy_error():
    m = np.zeros((70, 3), bool)
    m[:4, 0] = True
    compiled = check(masked_assign, [(np.zeros((70, 3)), m, np.ones(4)),
                                     (np.zeros((70, 3)), m, np.ones(5)),
                                     (np.zeros((70, 3)), m, np.ones(1))], structured=False)
    assert "def structured_kernel" in compiled.entries[0].output_code


def outer_products(x):
    acc = np.zeros((x.shape[1], x.shape[1]))
    for t in range(x.shape[0]):
        r = x[t]
        acc += r[:, None] * r[None, :]
    return acc


def last_axis_sum(x):
    acc = np.zeros(x.shape[:-1])
    for t in range(x.shape[-1]):
        acc += x[..., t]
    return acc


def test_none_and_ellipsis_in_a_loop():
    check(outer_products, [(RNG.standard_normal((80, 6)),), (RNG.standard_normal((90, 4)),)])
    check(last_axis_sum, [(RNG.standard_normal((3, 4, 70)),), (RNG.standard_normal((2, 5, 80)),)])


def pair_sum(x, i, j):
    acc = 0.0
    for t in range(x.shape[0]):
        acc += x[[i, j]].sum() * t
    return acc


def test_list_of_dynamic_ints_is_an_input():
    x = np.arange(100.0)
    compiled = check(pair_sum, [(x, 3, 7), (x, 5, 9), (x, 11, -2), (x, 1, 4), (x, 2, 100)])
    assert len(compiled.entries) <= 2  # the ints became dynamic inputs, not constants per call


# ---------------------------------------------------------------- 3. views


def flip_rows(x):
    acc = np.zeros_like(x)
    for t in range(x.shape[0]):
        acc[t] = np.flip(x[t]) + acc[t - 1]
    return acc


def test_flip_in_a_loop():
    check(flip_rows, [(RNG.standard_normal((80, 5)),), (RNG.standard_normal((70, 3)),)])


def strided_views(a):
    out = np.zeros(a.shape[0])
    for t in range(a.shape[0]):
        row = a[t]
        out[t] = row.T[2] + row[::3].sum() + row[::-2][0] + a.T[1, t]
    return out


def test_transposes_and_step_slices_in_a_loop():
    # row[::3].sum() runs in a fused reduction kernel: its float sum rounds in its own order
    check(strided_views, [(RNG.standard_normal((80, 12)),), (RNG.standard_normal((90, 9)),)],
          exact=False)


def mutated_reversed_view(a):
    y = a + 1.0
    v = y[::-1]
    for t in range(a.shape[0]):
        v[t] = v[t] * 2.0 + t
    v[0] = 5.0
    return y


def test_mutated_view_of_a_computed_array():
    check(mutated_reversed_view, [(np.arange(100.0),), (RNG.standard_normal(120),)])


# ---------------------------------------------------------------- 4. iteration and CSR


def row_iteration(data):
    s = np.zeros(data.shape[1])
    for b in data:
        s = s * 0.5 + b
    return s


def test_iteration_over_rows_is_a_loop():
    check(row_iteration, [(RNG.standard_normal((80, 6)),), (RNG.standard_normal((95, 3)),),
                          (RNG.standard_normal((120, 5)),)])


def csr_matvec(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            y[i] += data[k] * x[indices[k]]
    return y


def _csr(rows: int, cols: int, per_row: int) -> tuple:
    indptr = np.arange(0, rows * per_row + 1, per_row)
    indices = RNG.integers(0, cols, rows * per_row)
    return indptr, indices, RNG.standard_normal(rows * per_row), RNG.standard_normal(cols)


def test_csr_matvec_and_a_bad_column_index():
    good = _csr(100, 70, 3)
    bad_indices = good[1].copy()
    bad_indices[17] = 70
    compiled = check(csr_matvec, [good, _csr(120, 90, 2), (good[0], bad_indices, *good[2:])])
    with pytest.raises(IndexError, match="^index 70 is out of bounds for axis 0 with size 70$"):
        compiled(good[0], bad_indices, *good[2:])


# ---------------------------------------------------------------- 5. sweeps along the last axis


def thomas_last_axis(a, b, c, d):
    """Thomas algorithm along axis -1: the first level computed before the loop, reassigned in
    the body, each level stored twice."""
    nx, ny, nz = d.shape
    cp = np.zeros((nx, ny, nz))
    dp = np.zeros((nx, ny, nz))
    cprev = c[:, :, 0] / b[:, :, 0]
    dprev = d[:, :, 0] / b[:, :, 0]
    cp[:, :, 0] = cprev
    dp[:, :, 0] = dprev
    for k in range(1, nz):
        denom = b[:, :, k] - a[:, :, k] * cprev
        dp[:, :, k] = d[:, :, k] - a[:, :, k] * dprev
        dp[:, :, k] = dp[:, :, k] / denom
        cprev = c[:, :, k] / denom
        cp[:, :, k] = cprev
        dprev = dp[:, :, k]
    x = np.zeros((nx, ny, nz))
    x[:, :, nz - 1] = dp[:, :, nz - 1]
    for k in range(nz - 2, -1, -1):
        x[:, :, k] = dp[:, :, k] - cp[:, :, k] * x[:, :, k + 1]
    return x


def _tridiagonal(nz: int) -> tuple:
    shape = (4, 5, nz)
    return (RNG.random(shape), RNG.random(shape) + 4.0, RNG.random(shape), RNG.random(shape))


def test_thomas_sweep_over_the_last_axis():
    check(thomas_last_axis, [_tridiagonal(70), _tridiagonal(70), _tridiagonal(90)])


def first_level_after_the_sweep(d, b):
    nz = d.shape[-1]
    first = d[:, :, 0] / b[:, :, 0]
    for k in range(1, nz):
        d[:, :, k - 1] = 0.5 * d[:, :, k]
    return first * 2.0


def test_no_fusion_across_a_loop_that_writes():
    """``first`` is computed before the loop overwrites ``d[:, :, 0]``: fusing ``first * 2.0``
    with its producer would read ``d`` after the loop (a wrong answer, found on a sweep)."""
    d, b = RNG.random((4, 5, 70)), RNG.random((4, 5, 70)) + 1.0
    check(first_level_after_the_sweep, [(d, b), (RNG.random((3, 2, 80)), RNG.random((3, 2, 80)))])


def first_level_after_a_store(x):
    t = x[:, 0] * 2.0 + 1.0
    x[:, 0] = -1.0
    for k in range(1, x.shape[1]):
        x[:, k] = x[:, k - 1] * 0.5
    return t * 3.0


def test_no_fusion_across_a_store():
    check(first_level_after_a_store, [(RNG.random((6, 70)),), (RNG.random((3, 90)),)])


def reshaped_rows(a):
    out = np.zeros(a.shape[0])
    for t in range(a.shape[0]):
        m = a[t].reshape(4, -1)
        out[t] = m.T[1, 2] + m[3, ::-1][0] * 2.0
    return out


def test_reshape_in_a_loop_of_contiguous_and_strided_rows():
    x = RNG.standard_normal((80, 12))
    check(reshaped_rows, [(x,), (RNG.standard_normal((80, 12)),)])
    check(reshaped_rows, [(np.asfortranarray(x),), (x,)])


def reshape_write(a):
    for t in range(a.shape[0]):
        m = a[t].reshape(4, -1)
        m[0, 0] = t  # writes through to a when reshape is a view (C order), not when it copies
    return a


def test_written_reshape_keeps_numpy_view_or_copy():
    x = RNG.standard_normal((80, 12))
    compiled = check(reshape_write, [(x,), (np.asfortranarray(x),)], structured=False)
    assert "def structured_kernel" not in compiled.entries[0].output_code


def rolled(q, shift, steps):
    for _ in range(steps):
        q = 0.5 * q + 0.25 * (np.roll(q, shift, axis=1) + np.roll(q, -1, axis=0))
    return q


def rolled_flat(x, steps):
    for t in range(steps):
        x = np.roll(x, t - 3) * 0.5 + x
    return x


def test_roll_in_a_loop():
    q = RNG.standard_normal((16, 9))
    check(rolled, [(q, 1, 70), (q, -4, 70), (q, 13, 75), (RNG.standard_normal((5, 3, 2)), 2, 80)])
    # one size: np.roll's shape rule gives a new size for a symbolic one (a graph break)
    check(rolled_flat, [(RNG.standard_normal(7), 70), (RNG.standard_normal(7), 90)])


def rolled_2d_flat(q, steps):
    for _ in range(steps):
        q = np.roll(q, 3) + q * 0.5
    return q


def test_roll_of_a_flattened_array_stays_exact():
    check(rolled_2d_flat, [(RNG.standard_normal((4, 5)), 70)], structured=False)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.uint32])
def test_gather_with_narrow_index_dtypes(dtype):
    x = np.arange(100.0)
    idx = RNG.integers(0, 100, 120).astype(dtype)
    bad = idx.copy()
    bad[9] = 100
    compiled = check(gather, [(x, idx), (x, bad)])
    compiled_rows = check(fancy_rows, [(RNG.standard_normal((80, 4)), np.array([1, 5, 79], dtype)),
                                       (RNG.standard_normal((80, 4)), np.array([1, 80, 2], dtype))])
    assert compiled.entries and compiled_rows.entries
