"""Red team, fused kernels: complex values and masked stores (helper M), vectorized math (V),
row kernels and the output buffer pool (R), serial/BLAS neighbours and sliding windows (S).

Plain call vs ``backend="numba"`` over several calls, every observable
(``red_team_support.differential``): bits (2 ulp for transcendental functions, issue 11), dtypes,
shapes, identity, mutations, NumPy warnings and exceptions, earlier results never overwritten.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import astcompiler as ac

from .red_team_support import array_difference, differential

pytest.importorskip("numba")

T = 40  # loop trips: past LOOP_REGION's unroll limit, so the loops below stay loops (regions)
# config.unroll_limit for the tests of loops here (the default, 64, would unroll 40 trips into a
# graph of up to 160 ops that tests no region and takes seconds to compile)
LOOP_REGION = ac.config.patch(unroll_limit=4)


def cplx(n, dtype=np.complex128, seed=0):
    """Random complex values with specials (0, -0, inf, nan, huge, tiny) in both parts."""
    rng = np.random.default_rng(seed)
    part = np.float32 if dtype == np.complex64 else np.float64
    info = np.finfo(part)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max, info.tiny, 1.0, -1.0], part)
    out = np.empty(n, dtype)
    for name in ("real", "imag"):
        vals = rng.standard_normal(n).astype(part)
        pick = rng.integers(0, 3 * len(special), n)
        setattr(out, name, np.where(pick < len(special), special[pick % len(special)], vals))
    return out


# ----------------------------------------------------------------------------- complex (M)

def test_complex_pointwise_chain_special_values():
    def f(z, c):
        return z * z + c, np.abs(z), np.conj(z) - c, z.real * 2.0, (z == c), np.isnan(z)
    differential(f, lambda: [(cplx(64), cplx(64, seed=1)),
                             (cplx(33, np.complex64), cplx(33, np.complex64, 2)),
                             (cplx(5), np.complex128(1 + 2j))], errstate={"all": "ignore"})


def test_complex_divide_and_mixed_dtypes():
    def f(z, x):
        return z / x, z / (z + 1.0), x * z, (z * 1j).astype(np.complex64)
    differential(f, lambda: [(cplx(40), np.linspace(-2, 2, 40)),
                             (cplx(40, np.complex64), np.linspace(-2, 2, 40).astype(np.float32)),
                             (cplx(7, np.complex64), np.arange(7.0))], errstate={"all": "ignore"})


def test_complex_warnings_like_numpy():
    def f(z, x):
        return z / x
    differential(f, lambda: [(cplx(16), np.zeros(16)), (np.ones(3, np.complex128), np.arange(3.0))],
                 errstate={"all": "warn"})


@LOOP_REGION
def test_mandelbrot_masked_loop():
    """The benchmark pattern: masked complex update in a loop; escape counts exact."""
    def f(c, iters):
        z = np.zeros_like(c)
        count = np.zeros(c.shape, np.int64)
        for _ in range(iters):
            alive = np.abs(z) <= 2.0
            z[alive] = z[alive] ** 2 + c[alive]
            count[alive] += 1
        return count, z
    def calls():
        xs = np.linspace(-2.0, 0.6, 9)
        ys = np.linspace(-1.2, 1.2, 7)
        grid = (xs[None, :] + 1j * ys[:, None])
        return [(grid, T), (grid[::2, ::3].copy(), T), (grid.astype(np.complex64), T)]
    differential(f, calls, errstate={"all": "ignore"})


@LOOP_REGION
def test_complex_in_loop_accumulates():
    def f(z, w, steps):
        for _ in range(steps):
            z = z * w + 0.5j
        return z
    differential(f, lambda: [(cplx(6, seed=3) / 10, np.full(6, 0.3 + 0.4j), T),
                             (np.ones(4, np.complex64), np.complex64(0.5 - 0.5j), T)],
                 errstate={"all": "ignore"})


# ----------------------------------------------------------------------------- masked stores (M)

def test_masked_store_expr():
    def f(dst, a, b):
        m = a > 0
        dst[m] = a[m] * 2.0 + b[m]
        return dst
    differential(f, lambda: [(np.zeros(8), np.linspace(-1, 1, 8), np.arange(8.0)),
                             (np.zeros(8), -np.ones(8), np.arange(8.0)),        # all False
                             (np.zeros(5), np.ones(5), np.arange(5.0)),         # all True
                             (np.zeros(3, np.float32), np.array([1.0, -1, 1]), np.arange(3.0))])


def test_masked_store_aliasing_destination():
    """``x[m] = x[m] * 2 + 1`` reads and writes the same array; ``x[m] += 1`` too."""
    def f(x, lo):
        m = x > lo
        x[m] = x[m] * 2.0 + 1.0
        x[m] += 1.0
        return x
    differential(f, lambda: [(np.linspace(-2, 2, 9), 0.0), (np.arange(6.0), 10.0),
                             (np.array([np.nan, 1.0, -0.0, 0.0]), -0.0)])


def test_masked_store_mask_of_other_array_view():
    """The destination is a view of the masked source: element order matters."""
    def f(x):
        m = x[:-1] > 0
        x[1:][m] = x[:-1][m] + 10.0
        return x
    differential(f, lambda: [(np.linspace(-1, 1, 7),), (np.ones(4),)])


def test_masked_store_errors_only_from_masked_elements():
    """NumPy evaluates the expression on the selected elements only: no error from the rest."""
    def f(dst, a):
        m = a > 0
        dst[m] = np.log(a[m]) + 1.0 / a[m]
        return dst
    differential(f, lambda: [(np.zeros(6), np.array([1.0, 0.0, -1.0, 2.0, 0.0, 3.0])),
                             (np.zeros(3), np.array([-1.0, -2.0, 0.0]))], errstate={"all": "raise"})


def test_masked_store_scalar_and_int_wrap():
    def f(x, k):
        m = x % 3 == 0
        x[m] = k
        x[~m] += 120
        return x
    differential(f, lambda: [(np.arange(9, dtype=np.int8), 7), (np.arange(9, dtype=np.int64), -1),
                             (np.arange(4, dtype=np.uint8), 255)])


def test_masked_store_int_out_of_range_raises():
    def f(x, k):
        x[x > 2] = k
        return x
    differential(f, lambda: [(np.arange(5, dtype=np.int8), 100), (np.arange(5, dtype=np.int8), 300),
                             (np.arange(5, dtype=np.uint8), -1)])


def test_masked_store_shape_mismatch_error():
    def f(dst, a, m):
        dst[m] = a[m] + 1.0
        return dst
    differential(f, lambda: [(np.zeros(4), np.arange(4.0), np.array([True, False, True, True])),
                             (np.zeros(4), np.arange(5.0), np.array([True, False, True, True, False])),
                             (np.zeros(4), np.arange(4.0), np.array([True, False, True]))])


@LOOP_REGION
def test_masked_store_in_loop_with_nan_mask():
    def f(x, steps):
        for _ in range(steps):
            m = x > 0.5
            x[m] = x[m] * 0.5
        return x
    differential(f, lambda: [(np.array([np.nan, 4.0, 0.2, -1.0, 1e300]), T), (np.ones(1), T)])


# ----------------------------------------------------------------------------- vecmath (V)

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1e-300, 709.0, 710.0,
                    -745.0, -746.0, 88.7, 89.0, -103.0, 1e22, -1e22, 3.14159, 1.0, -1.0, 0.5,
                    1e308, -1e308, 2.0 ** -1022, 6.0e5, 1e5])


@pytest.mark.parametrize("name", ["exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
                                  "tan", "tanh", "sinh", "cosh", "arctan", "sqrt", "cbrt"])
def test_vecmath_special_values_and_dense_sample(name):
    ufunc = getattr(np, name)

    def f(x):
        return ufunc(x) * 1.0
    def calls():
        rng = np.random.default_rng(7)
        dense = np.concatenate([rng.uniform(-50, 50, 300), np.exp(rng.uniform(-60, 60, 300))])
        return [(SPECIAL.copy(),), (SPECIAL.astype(np.float32),), (dense,),
                (dense.astype(np.float32),)]
    differential(f, calls, ulp=2, errstate={"all": "warn"})


def test_vecmath_raise_on_invalid_and_overflow():
    def f(x, y):
        return np.exp(x) + np.log(y)
    differential(f, lambda: [(np.arange(4.0), np.ones(4)), (np.array([1.0, 800.0]), np.ones(2)),
                             (np.ones(2), np.array([1.0, 0.0])), (np.ones(2), np.array([1.0, -1.0])),
                             (np.ones(2, np.float32), np.array([1.0, 0.0], np.float32))],
                 errstate={"all": "raise"})


def test_vecmath_power_arctan2():
    def f(x, y):
        return np.power(x, y), np.arctan2(y, x), x ** 0.5
    def calls():
        v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, 1e300, 1.0])
        w = np.array([0.5, -1.0, 0.0, 3.0, 2.0, -np.inf, np.inf, np.nan, 2.0, np.nan])
        return [(v, w), (v.astype(np.float32), w.astype(np.float32)), (np.abs(v), w[::-1].copy())]
    differential(f, calls, ulp=2, errstate={"all": "ignore"})


# ----------------------------------------------------------------------------- row kernels (R)

def test_softmax_layernorm_float32_within_rounding():
    def f(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        s = e / e.sum(axis=-1, keepdims=True)
        mu = x.mean(axis=-1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
        return s, (x - mu) / np.sqrt(var + 1e-5)
    def calls():
        rng = np.random.default_rng(3)
        return [(rng.standard_normal((4, 37)).astype(np.float32),),
                (rng.standard_normal((3, 300)).astype(np.float32),),
                (rng.standard_normal((2, 17)),)]
    differential(f, calls, rtol=2e-5, atol=1e-6)  # x - mu cancels: absolute error of mu


def test_argmax_argmin_nan_and_ties():
    def f(x):
        return x.argmax(axis=-1), x.argmin(axis=-1), np.argmax(x), x.max(axis=-1), x.min(axis=0)
    def calls():
        a = np.array([[1.0, 3.0, 3.0, 0.0, np.nan, 5.0, np.nan, 2.0, 1.0],
                      [-0.0, 0.0, -1.0, -1.0, 7.0, 7.0, 7.0, 7.0, 7.0]])
        b = np.tile(np.array([2.0, 9.0, 9.0, 1.0, 1.0]), (3, 4))
        return [(a,), (a.astype(np.float32),), (b,), (np.arange(12, dtype=np.int32).reshape(3, 4) % 5,)]
    differential(f, calls)


def test_row_reductions_empty_rows_raise():
    def f(x):
        return x.max(axis=-1)
    differential(f, lambda: [(np.ones((2, 3)),), (np.ones((2, 0)),), (np.ones((0, 3)),)])


# ----------------------------------------------------------------------------- the pool (R)

def test_pool_results_survive_later_calls():
    """Returned arrays and temporaries: each call's result keeps its values after later calls
    (a pool must never hand out a returned buffer again), and feeding results back in is safe."""
    def f(x):
        t = x * 2.0 + 1.0
        u = np.sqrt(np.abs(t)) - x
        return u * 0.5
    def calls():
        return [(np.linspace(0, 1, 64),), (np.linspace(1, 2, 64),), (np.linspace(2, 3, 64),),
                (np.linspace(3, 4, 64),), (np.linspace(0, 1, 65),), (np.linspace(0, 1, 64),)]
    differential(f, calls)


def test_pool_chained_outputs_fed_back():
    compiled = ac.compile(lambda x: np.tanh(x) * 0.5 + x * 0.25, backend="numba")
    plain = lambda x: np.tanh(x) * 0.5 + x * 0.25  # noqa: E731
    xs, ps = [np.linspace(-1, 1, 50)], [np.linspace(-1, 1, 50)]
    snaps = []
    for _ in range(8):
        xs.append(compiled(xs[-1]))
        ps.append(plain(ps[-1]))
        snaps.append(xs[-1].copy())
        assert not np.shares_memory(xs[-1], xs[-2])
    for got, snap in zip(xs[1:], snaps):
        assert np.array_equal(got, snap)  # never overwritten by a later call
    for got, want in zip(xs, ps):
        assert array_difference(got, want, ulp=16) is None


def test_pool_returned_tuple_and_view_of_temporary():
    def f(x):
        t = x * 3.0
        return t, t[1:], t.reshape(-1)[::2], (t + 1.0).sum()
    differential(f, lambda: [(np.arange(6.0),), (np.arange(6.0) + 1,), (np.arange(7.0),),
                             (np.arange(6.0),)])


def test_pool_four_threads():
    """Four threads call one compiled function; every result is the plain one and stays so."""
    def f(x, k):
        t = x * k + 1.0
        return np.sqrt(np.abs(t)) * (t - x)
    compiled = ac.compile(f, backend="numba")
    compiled(np.arange(32.0), 1.5)
    errors: list = []
    results: dict = {}

    def worker(tid: int) -> None:
        try:
            mine = []
            for j in range(60):
                x = np.arange(32.0 + (j % 3)) * (tid + 1)
                mine.append((x, tid + j * 0.5, compiled(x, tid + j * 0.5)))
            results[tid] = mine
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for mine in results.values():
        for x, k, got in mine:
            assert array_difference(got, f(x, k)) is None


# ----------------------------------------------------------------------------- S

def test_sliding_window_view_sums():
    from numpy.lib.stride_tricks import sliding_window_view

    def f(x, w):
        v = sliding_window_view(x, w)
        return v.sum(axis=-1), v.max(axis=-1), v
    differential(f, lambda: [(np.arange(10.0), 3), (np.arange(10.0), 1), (np.arange(5.0), 5),
                             (np.arange(4.0), 5), (np.arange(12.0)[::2], 2)], rtol=1e-12)


def test_sliding_window_view_write_raises():
    from numpy.lib.stride_tricks import sliding_window_view

    def f(x):
        v = sliding_window_view(x, 2)
        v[0, 0] = 1.0
        return v
    differential(f, lambda: [(np.arange(4.0),), (np.arange(6.0),)])


def test_matmul_neighbours_and_bounds():
    def f(a, b, idx):
        c = a @ b
        d = np.maximum(c, 0.0) * 2.0 + 1.0
        return d, d[idx], c.cumsum(axis=0), np.sort(d, axis=-1)
    differential(f, lambda: [(np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4), 1),
                             (np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4), -2),
                             (np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4), 2),
                             (np.ones((3, 2)), np.ones((2, 2)), 0)], rtol=1e-12)


@LOOP_REGION
def test_gather_index_out_of_bounds_in_loop():
    def f(x, idx, steps):
        s = np.zeros_like(x)
        for _ in range(steps):
            s = s + x[idx]
        return s
    differential(f, lambda: [(np.arange(5.0), np.array([0, 4, -1, -5, 2]), T),
                             (np.arange(5.0), np.array([0, 5, 1, 1, 1]), T),
                             (np.arange(5.0), np.array([0, -6, 1, 1, 1]), T)])


def test_cumsum_sort_dtypes():
    def f(x):
        return np.cumsum(x), np.sort(x), np.argsort(x, kind="stable"), np.cumsum(x, dtype=np.int8)
    differential(f, lambda: [(np.array([3, 1, 2, 100, 100], np.int8),),
                             (np.array([np.nan, 1.0, -0.0, 0.0, -1.0]),),
                             (np.array([True, False, True]),)])


# ----------------------------------------------------------------------------- round 2

def test_masked_store_from_reversed_view_of_destination():
    """``x[m] = x[::-1][m] * 2``: NumPy gathers from the reversed view before it stores."""
    def f(x):
        m = x > 0
        x[m] = x[::-1][m] * 2.0
        return x
    differential(f, lambda: [(np.linspace(-1, 2, 7),), (np.arange(1.0, 6.0),), (np.ones(2),)])


def test_masked_store_from_shifted_view_of_destination():
    def f(x):
        m = x[1:] > 0
        x[:-1][m] = x[1:][m] + 1.0
        return x
    differential(f, lambda: [(np.arange(1.0, 8.0),), (np.linspace(-1, 1, 5),)])


def test_masked_store_float_to_int_cast_warns():
    def f(dst, a):
        m = a > -np.inf
        dst[m] = a[m] * 2.5
        return dst
    differential(f, lambda: [(np.zeros(4, np.int64), np.array([1.0, 2.0, 3.0, 4.0])),
                             (np.zeros(4, np.int64), np.array([1.0, np.nan, np.inf, 1e300])),
                             (np.zeros(4, np.int32), np.array([1.0, 2.0, 1e10, -1.5]))],
                 errstate={"all": "warn"})


def test_masked_store_2d_and_mask_mutated_before_use():
    def f(dst, a):
        m = a > 0
        m[0, 0] = True
        dst[m] = np.sqrt(a[m])
        return dst, m
    differential(f, lambda: [(np.zeros((2, 3)), np.arange(6.0).reshape(2, 3) - 2),
                             (np.zeros((3, 2)), -np.ones((3, 2)))], errstate={"all": "warn"})


def test_complex_power_exp_sqrt():
    def f(z):
        return z ** 3, z ** 0.5, np.exp(z), np.sqrt(z), 1.0 / z, z ** 2
    differential(f, lambda: [(cplx(32, seed=5),), (cplx(16, np.complex64, 6),)],
                 ulp=2, errstate={"all": "ignore"})


def test_pool_temporary_escapes_through_argument_list():
    """A temporary stored into a list argument escapes without being returned."""
    def f(x, keep):
        t = x * 2.0 + 1.0
        keep.append(t)
        u = np.sqrt(t) * 3.0
        keep.append(u[1:])
        return float(u.sum())
    compiled = ac.compile(f, backend="numba")
    kept_c, kept_p = [], []
    for n in (16, 16, 16, 17, 16):
        x = np.linspace(0, 1, n)
        compiled(x.copy(), kept_c)
        f(x.copy(), kept_p)
    assert len(kept_c) == len(kept_p)
    for got, want in zip(kept_c, kept_p):
        assert array_difference(got, want) is None


def test_pool_temporary_escapes_through_attribute():
    class Box:
        pass

    def f(x, box):
        t = np.exp(x) * 0.5
        box.last = t
        return t.max() + (t * t).sum()
    compiled = ac.compile(f, backend="numba")
    boxes_c, boxes_p = [Box() for _ in range(4)], [Box() for _ in range(4)]
    for i in range(4):
        x = np.linspace(0, 1, 20) + i
        compiled(x.copy(), boxes_c[i])
        f(x.copy(), boxes_p[i])
    for bc, bp in zip(boxes_c, boxes_p):
        assert array_difference(bc.last, bp.last, ulp=2) is None


def test_ufunc_out_argument_reversed_alias():
    def f(a, b):
        np.multiply(a, b, out=b[::-1])
        np.add(a, 1.0, out=a)
        return a, b
    differential(f, lambda: [(np.arange(5.0), np.arange(5.0) + 1), (np.arange(3.0), np.ones(3))])


BIG = (512, 256)  # 1 MiB of float64: temporaries this size are pooled (runtime.POOL_MIN_BYTES)


def test_pool_big_temporaries_across_calls_and_escapes():
    """Pooled temporaries between kernels (column mean, row sums): results of earlier calls,
    arrays stored into a list argument and a dict argument keep their values."""
    def f(x, keep, d):
        t = x * 2.0 + 1.0
        keep.append(t)
        m = t.mean(axis=0)
        d["m"] = m
        e = np.exp(x - 3.0)
        return t - m, e / e.sum(axis=1, keepdims=True) - e.max(axis=0, keepdims=True)
    def calls():
        return [(np.linspace(0, 1, BIG[0] * BIG[1]).reshape(BIG) + i, [], {}) for i in range(3)]
    compiled = differential(f, calls, ulp=2, rtol=1e-12)
    assert "___pool.take" in compiled.entries[-1].output_code  # the pool is exercised


def test_pool_big_temporaries_four_threads():
    def f(x):
        t = x * 2.0 + 1.0
        return t - t.mean(axis=0)
    compiled = ac.compile(f, backend="numba")
    errors: list = []
    kept: list = []

    def worker(tid):
        try:
            for j in range(4):
                x = np.full(BIG, float(tid * 10 + j)) + np.arange(BIG[1])
                r = compiled(x)
                kept.append((x, r, r.copy()))
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for x, r, snap in kept:
        assert np.array_equal(r, snap)
        assert array_difference(r, f(x), rtol=1e-12) is None


def test_warnings_of_kernel_writing_an_input():
    def f(x):
        x[:] = np.log(x - 0.5) + np.sqrt(x - 0.7)
        return x
    differential(f, lambda: [(np.array([1.0, 0.0, 0.6]),)], errstate={"all": "warn"})


def test_warnings_of_masked_store_two_invalid_ops():
    def f(d, x):
        m = x < 2.0
        d[m] = np.log(x[m]) + np.sqrt(x[m])
        return d
    differential(f, lambda: [(np.zeros(3), np.array([1.0, -1.0, 3.0]))], errstate={"all": "warn"})
