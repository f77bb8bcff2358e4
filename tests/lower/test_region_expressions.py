"""Expressions inside loop regions on the numba backend: each kernel runs compiled and plainly on
several sizes, values and dtypes, and the compiled one must stay one structured numba kernel
(no op-by-op fallback, no fallback at its first run)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.region_ops import scipy_blas
from tests.helpers import assert_same, clone

RNG = np.random.default_rng(10)


def check_kernel(fn, *argsets, structured: bool = True) -> str:
    """Compiled (numba) against plain on each argument set: same results, same input mutations;
    returns the entries' output code, asserting one structured kernel ran without fallback."""
    compiled = ac.compile(fn)
    for args in argsets:
        mine, theirs = [clone(a) for a in args], [clone(a) for a in args]
        expected = fn(*theirs)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # a run-time fallback warns
            got = compiled(*mine)
        assert_same(got, expected)
        for a, b in zip(mine, theirs):
            if isinstance(b, np.ndarray):
                assert_same(a, b)
    code = "\n".join(entry.output_code for entry in compiled.entries)
    if structured:
        assert "structured_kernel" in code, code
        assert "op by op" not in code, code
    return code


def sizes(make, *ns):
    return [make(n) for n in ns]


# ----------------------------------------------------------------------------- reductions


def column_means(A, steps):
    out = np.zeros(A.shape[1])
    for t in range(steps):
        out = out + A.mean(axis=0) * t
    return out


def row_stats(A, steps):
    total = np.zeros((A.shape[0], 1))
    for t in range(steps):
        total = total + A.max(axis=1, keepdims=True) - A.min(axis=1, keepdims=True)
        total = total + A.sum(axis=1, keepdims=True) + A.prod(axis=1, keepdims=True)
    return total


def small_int_sums(a, steps):
    s = 0
    wide = np.int64(0)
    for t in range(steps):
        wide = wide + a.sum() + a.sum(dtype=np.int8) + np.sum(a, axis=0).sum()
    return wide


def arg_positions(A, steps):
    out = np.zeros(A.shape[0], np.int64)
    for t in range(steps):
        out = out + np.argmax(A, axis=1) - np.argmin(A, axis=1)
    return out


def spreads(A, steps):
    acc = np.zeros(A.shape[1])
    for t in range(steps):
        acc = acc + A.std(axis=0) + A.var(axis=0, ddof=1) + A.var()
    return acc


def float32_reductions(A, steps):
    acc = np.zeros(A.shape[1], np.float32)
    for t in range(steps):
        acc = acc + A.sum(axis=0) + A.mean(axis=0, dtype=np.float32)
    return acc


def any_all_rows(M, steps):
    count = np.zeros((1, M.shape[1]), np.int64)
    for t in range(steps):
        count = count + np.any(M, axis=1).sum() + np.all(M, axis=0) + np.any(M, axis=0, keepdims=True)
    return count


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int8])
def test_reductions_with_axis_keepdims_in_loops(dtype):
    def make(n):
        return ((RNG.standard_normal((n, 5)) * 3).astype(dtype), n + 60)
    check_kernel(column_means, *sizes(make, 7, 11, 13))
    check_kernel(row_stats, *sizes(make, 7, 11))


def test_reduction_dtypes_follow_numpy():
    def make(n):
        return (RNG.integers(-128, 127, (n, 4)).astype(np.int8), n + 70)
    check_kernel(small_int_sums, *sizes(make, 5, 9))  # int8 sums: int64, dtype=int8 wraps
    def make_f32(n):
        return (RNG.standard_normal((n, 3)).astype(np.float32), n + 70)
    check_kernel(float32_reductions, *sizes(make_f32, 6, 10))


def test_argmax_argmin_with_axis_and_nan():
    def make(n):
        A = RNG.standard_normal((n, 6))
        A[1, 3] = np.nan
        return (A, n + 70)
    check_kernel(arg_positions, *sizes(make, 4, 8))


def test_std_var_with_axis_and_ddof():
    def make(n):
        return (RNG.standard_normal((n, 4)), n + 70)
    check_kernel(spreads, *sizes(make, 5, 9))


def test_any_all_with_axis():
    def make(n):
        return (RNG.random((n, 3)) > 0.3, n + 70)
    check_kernel(any_all_rows, *sizes(make, 6, 9))


def max_of_columns(A, steps):
    acc = np.zeros(A.shape[1])
    for t in range(steps):
        acc = acc + A.max(axis=0)
    return acc


def test_max_over_an_empty_axis_raises_like_numpy():
    compiled = ac.compile(max_of_columns)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        compiled(np.zeros((0, 3)), 80)
    A = RNG.standard_normal((6, 3))
    A[2, 1] = np.nan
    assert_same(compiled(A, 90), max_of_columns(A, 90))


# ----------------------------------------------------------------------------- Python-int bits


def crc_of_indices(n):
    crc = 0xFFFFFFFF
    for i in range(n):
        crc ^= (i * 7) & 0xFF
        for k in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 & -(crc & 1))
    return ~crc & 0xFFFFFFFF


def mix_bits(n, seed):
    h = seed
    for i in range(n):
        h = (h ^ (h << 5) ^ (h >> 3) ^ ~i) & 0xFFFFFFFFFF
        h = h | (i << 2)
    return h


def shift_grows(n):
    x = 1
    for i in range(n):
        x = (x << 1) | 1
    return x


def test_crc_style_bit_operations_on_python_ints():
    code = check_kernel(crc_of_indices, (100,), (257,), (1000,))
    assert "on Python ints" not in code
    check_kernel(mix_bits, (90, 12345), (130, 987654321))


def test_left_shift_that_outgrows_64_bits_is_exact():
    compiled = ac.compile(shift_grows)
    for n in (70, 62, 100):  # 70, 100: past 64 bits: the loop reruns with Python's ints
        result = compiled(n)
        assert type(result) is int and result == shift_grows(n)


def test_invert_on_python_ints():
    def make(n):
        return (n, -n)
    check_kernel(mix_bits, *sizes(make, 80, 95))


# ----------------------------------------------------------------------------- complex numbers


def mandelbrot_python_complex(width, height, maxiter):
    counts = np.zeros((height, width), np.int64)
    for r in range(height):
        for q in range(width):
            c = (-2.0 + 3.0 * q / width) + (-1.5 + 3.0 * r / height) * 1j
            z = 0j
            n = 0
            while n < maxiter and abs(z) <= 2.0:
                z = z * z + c
                n += 1
            counts[r, q] = n
    return counts


def complex_scalar_ops(n, w):
    acc = 0j
    for i in range(n):
        z = (i + 1j) * w
        acc = acc + z / (1 + 2j) - z * 0.5
        acc = acc + (z.real - z.imag) + (z - 1j) * (z + 1j)
    return acc


def fft_butterflies(x, tw, steps):
    half = x.shape[0] // 2
    for s in range(steps):
        for k in range(half):
            t = tw[k] * x[k + half]
            u = x[k]
            x[k] = u + t
            x[k + half] = u - t
        x = x * 0.5
    return x


def complex_array_ops(z, steps):
    acc = np.zeros(z.shape[0])
    w = np.zeros_like(z)
    for t in range(steps):
        w = w + np.exp(z * 0.01j) * np.conj(z) / (z + 2.0)
        acc = acc + np.abs(w) + z.real * z.imag + np.real(w) - np.imag(w)
    return acc, w


def test_mandelbrot_with_python_complex_numbers():
    check_kernel(mandelbrot_python_complex, (70, 66, 30), (81, 72, 25))


def test_python_complex_arithmetic_in_loops():
    check_kernel(complex_scalar_ops, (70, 0.5 + 0.25j), (90, -1.5 + 2j))


def test_python_complex_division_by_zero_raises():
    compiled = ac.compile(complex_scalar_ops)
    with pytest.raises(ZeroDivisionError, match="complex division by zero"):
        def divide(n, w):
            acc = 0j
            for i in range(n):
                acc = acc + w / (i - 40)
            return acc
        ac.compile(divide)(80, 1j)
    assert_same(compiled(75, 1j), complex_scalar_ops(75, 1j))


def test_fft_butterflies_on_complex_arrays():
    def make(n):
        x = RNG.standard_normal(2 * n) + 1j * RNG.standard_normal(2 * n)
        tw = np.exp(-2j * np.pi * np.arange(n) / (2 * n))
        return (x, tw, 3)
    check_kernel(fft_butterflies, *sizes(make, 70, 90))


def test_complex_array_expressions_in_loops():
    def make(n):
        return (RNG.standard_normal(n) + 1j * RNG.standard_normal(n), n + 60)
    check_kernel(complex_array_ops, *sizes(make, 8, 12))


# ----------------------------------------------------------------------------- ranges


def ramps(x, steps):
    n = x.shape[0]
    acc = np.zeros(n)
    for t in range(steps):
        acc = acc + np.arange(n) * t + np.linspace(0.0, 1.0, n) + np.linspace(x[0], x[t % n], n)
        acc = acc - np.arange(0, n) + np.linspace(-1.0, 2.0, n, endpoint=False)
    return acc


def odd_ramps(x, steps):
    acc = np.zeros(9)
    for t in range(steps):
        acc = acc + np.arange(1, 18, 2) * x[t % 9] + np.arange(1.0, 1.85, 0.1) + np.arange(9.0)
    return acc


def float_ramps(x, steps):
    acc = np.zeros(x.shape[0])
    for t in range(steps):
        acc = acc + np.linspace(x[0], x[1], x.shape[0]) + np.arange(0.0, x.shape[0] * 0.25, 0.25)
        acc = acc + np.linspace(0, 10, x.shape[0], dtype=np.int32)
    return acc


def test_linspace_and_arange_inside_loops():
    def make(n):
        return (RNG.standard_normal(n), n + 60)
    check_kernel(ramps, *sizes(make, 7, 12, 1))
    check_kernel(odd_ramps, (RNG.standard_normal(9), 70), (RNG.standard_normal(9), 75))


def test_float32_linspace_and_float_arange_inside_loops():
    def make(n):
        return (RNG.standard_normal(n).astype(np.float32), n + 60)
    check_kernel(float_ramps, *sizes(make, 9, 13))


# ----------------------------------------------------------------------------- dot / matmul


def power_iteration(A, v, steps):
    for t in range(steps):
        w = A @ v
        v = w / np.sqrt(np.dot(w, w))
    return v, v @ (A @ v)


def matrix_chain(A, B, steps):
    C = np.zeros((A.shape[0], B.shape[1]), A.dtype)
    for t in range(steps):
        C = C + A @ B - np.dot(A, B) * 0.5 + (A[0] @ B)[None, :] * 0
    return C


def row_projections(X, w, steps):
    acc = np.zeros(X.shape[1])
    for t in range(steps):
        acc = acc + w @ X + np.dot(X[t % X.shape[0]], X[0]) * X[1]
    return acc


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_matvec_and_vector_dots_in_loops(dtype):
    def make(n):
        A = (RNG.standard_normal((n, n)) + n * np.eye(n)).astype(dtype)
        return (A, np.ones(n, dtype), n + 60)
    check_kernel(power_iteration, *sizes(make, 5, 8))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_matmul_in_loops_keeps_numpy_dtypes(dtype):
    def make(n):
        return ((RNG.standard_normal((n, 4)) * 3).astype(dtype),
                (RNG.standard_normal((4, n + 1)) * 3).astype(dtype), 70)
    code = check_kernel(matrix_chain, make(3), make(3))  # small static matrices
    blas = np.dtype(dtype).kind == "f" and scipy_blas()  # numba's np.dot needs SciPy
    assert ("np.dot(np.ascontiguousarray" in code) == blas
    assert ("_ac_matmul(" in code) == (not blas)
    if np.dtype(dtype).kind == "i":  # integer sizes of any size: loops (NumPy has no BLAS there)
        check_kernel(matrix_chain, make(5), make(40))


def test_large_float_matmul_without_blas_is_a_host_loop_calling_numpy():
    def make(n):
        return (RNG.standard_normal((n, n)), RNG.standard_normal((n, n)), 66)
    code = check_kernel(matrix_chain, make(40), make(48), structured=scipy_blas())
    if not scipy_blas():
        assert "host loop" in code and "large or dynamic matrices" in code


def test_mixed_dtype_dots_promote_like_numpy():
    def make(n):
        return (RNG.integers(-5, 5, (n, 3)).astype(np.int32), RNG.standard_normal(n).astype(np.float32), 70)
    check_kernel(row_projections, *sizes(make, 4, 7))


# ----------------------------------------------------------------------------- linalg


def implicit_steps(A, u, steps):
    total = 0.0
    for t in range(steps):
        u = np.linalg.solve(A, u) + 0.01 * (np.linalg.inv(A) @ u)
        total = total + u.sum()
    return u, total


def implicit_steps_writing(A, u, steps):
    out = np.zeros(steps)
    for t in range(steps):
        u = np.linalg.solve(A, u)
        out[t] = u[0]
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_solve_and_inv_in_loops(dtype):
    def make(n):
        A = (RNG.standard_normal((n, n)) * 3 + 4 * n * np.eye(n)).astype(dtype)
        return (A, RNG.standard_normal(n), 70)
    code = check_kernel(implicit_steps, make(4), make(6), structured=scipy_blas())
    if not scipy_blas():  # numba's np.linalg needs SciPy: a host loop calls NumPy
        assert "without SciPy's LAPACK" in code


def test_singular_matrix_raises_numpys_error():
    compiled = ac.compile(implicit_steps)
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        compiled(np.zeros((3, 3)), np.ones(3), 70)
    A = np.eye(3) * 2
    A[1, 1] = np.nan  # NumPy computes with NaN (numba's solve refuses it): same as plain
    assert_same(compiled(A, np.ones(3), 71), implicit_steps(A, np.ones(3), 71))


def test_solve_in_a_loop_that_writes_arrays():
    def make(n):
        return (RNG.standard_normal((n, n)) + 3 * n * np.eye(n), RNG.standard_normal(n), 70)
    check_kernel(implicit_steps_writing, make(4), make(5), structured=False)
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        ac.compile(implicit_steps_writing)(np.zeros((3, 3)), np.ones(3), 70)


# ----------------------------------------------------------------------------- float16


def half_precision_updates(a, steps):
    s = np.float16(0)
    for t in range(steps):
        a[t % a.shape[0]] = a[t % a.shape[0]] * np.float16(1.1) + np.float16(0.3)
        s = s + a.sum() / np.float16(7)
    return a, s


def test_float16_loops_compute_like_numpy_or_fall_back():
    def make(n):
        return ((RNG.standard_normal(n) * 4).astype(np.float16), n + 60)
    compiled = ac.compile(half_precision_updates)
    for n in (7, 11):
        args = make(n)
        mine, theirs = [clone(a) for a in args], [clone(a) for a in args]
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            got = compiled(*mine)
        expected = half_precision_updates(*theirs)
        for g, e in zip(got, expected):  # float16 rounding after each op: bit for bit
            assert type(g) is type(e) and g.dtype == e.dtype
            np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(mine[0], theirs[0])


# ----------------------------------------------------------------------------- conversions


def crc32_of_bytes(data):
    crc = 0xFFFFFFFF
    for byte in data:  # iteration over an array of dynamic length
        crc ^= int(byte)
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def adler(data):
    a, b = 1, 0
    for i in range(data.shape[0]):
        a = (a + int(data[i])) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


def conversions(x, big, steps):
    total, flips, z = 0, 0, 0j
    for t in range(steps):
        v = x[t % x.shape[0]]
        total = total + int(v * 1000.0) + int(big[t % big.shape[0]])
        flips = flips + bool(v > 0) + bool(v)
        z = z + complex(v, float(t)) + complex(float(int(v)))
    return total, flips, z


def test_int_of_bytes_in_crc_and_adler_loops():
    def make(n):
        return (RNG.integers(0, 256, n).astype(np.uint8),)
    check_kernel(crc32_of_bytes, *sizes(make, 100, 300, 1000))
    check_kernel(adler, *sizes(make, 100, 500))


def test_python_number_conversions_in_loops():
    def make(n):
        x = RNG.standard_normal(n) * 50
        x[1] = -0.0
        return (x, RNG.integers(0, 2 ** 63, n, dtype=np.uint64) // 4, n + 60)
    check_kernel(conversions, *sizes(make, 6, 9))


def test_int_of_nan_raises_and_huge_values_stay_exact():
    compiled = ac.compile(conversions)
    big = np.array([2 ** 64 - 1, 3], np.uint64)  # int() of it is past int64: reruns in Python
    x = np.ones(5)
    assert_same(compiled(x, big, 70), conversions(x, big, 70))
    x[0] = 1e300
    assert_same(compiled(x, big, 70), conversions(x, big, 70))
    x[0] = np.nan
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        compiled(x, big, 70)


# ----------------------------------------------------------------------------- ufunc keywords


def ufunc_dtypes(a, steps):
    acc = np.zeros(a.shape[0], np.float32)
    small = np.zeros(a.shape[0], np.int16)
    for t in range(steps):
        acc = np.add(acc, np.sqrt(a, dtype=np.float32), dtype=np.float32)
        small = np.multiply(small, 3, dtype=np.int16) + np.int16(t)
    return acc, small


def test_ufuncs_with_dtype_in_loops():
    def make(n):
        return (RNG.random(n) * 10, n + 60)
    check_kernel(ufunc_dtypes, *sizes(make, 5, 9))


# ----------------------------------------------------------------------------- outer, roll


def rank1_elimination(A):
    n = A.shape[0]
    LU = A.copy()
    for k in range(n - 1):
        LU[k + 1:, k] = LU[k + 1:, k] / LU[k, k]
        LU[k + 1:, k + 1:] -= np.outer(LU[k + 1:, k], LU[k, k + 1:])
    return LU


def outer_products(x, y, steps):
    acc = np.zeros((x.shape[0], y.shape[0]))
    for t in range(steps):
        acc = acc + np.outer(x, y) * t + np.outer(y[:2], x)[0, 0]
    return acc


def periodic_diffusion(q, steps, shift):
    for t in range(steps):
        lap = (np.roll(q, 1, axis=0) + np.roll(q, -1, axis=0) + np.roll(q, shift, axis=1)
               + np.roll(q, -1, axis=1) - 4.0 * q)
        q = q + 0.1 * lap + np.roll(q[0], t)[None, :] * 0.0
    return q


def test_outer_products_in_loops():
    def make(n):
        return (RNG.standard_normal((n, n)) + n * np.eye(n),)
    check_kernel(rank1_elimination, *sizes(make, 70, 90))
    def make_int(n):
        return (RNG.integers(-9, 9, n).astype(np.int8), RNG.integers(-9, 9, n + 2).astype(np.int32), 70)
    check_kernel(outer_products, *sizes(make_int, 3, 5))


def test_roll_in_loops():
    def make(n):
        return (RNG.standard_normal((n, n + 1)), n + 60, 1 - n)
    check_kernel(periodic_diffusion, *sizes(make, 5, 8))


def triangles(A, steps):
    acc = np.zeros_like(A)
    for t in range(steps):
        acc = acc + np.tril(A) * t - np.triu(A, 1) + np.tril(A, -1)
    return acc


def test_tril_triu_in_loops():
    def make(n):
        return (RNG.standard_normal((n, n + 2)), n + 60)
    check_kernel(triangles, *sizes(make, 4, 7))


# ----------------------------------------------------------------------------- more ops


def clipped_updates(x, lo, steps):
    y = x.copy()
    total = 0.0
    for t in range(steps):
        y = np.clip(y * 1.5, lo, 3.0) + np.clip(x, None, 0.5)
        total = total + np.clip(y[t % y.shape[0]], -1.0, 1.0)
    return y, total


def int_clip(a, steps):
    acc = np.zeros(a.shape[0], a.dtype)
    for t in range(steps):
        acc = acc + np.clip(a, -3, 100)
    return acc


def filled_and_scans(x, steps):
    n = x.shape[0]
    acc = np.zeros((n, n))
    run = np.zeros(n)
    for t in range(steps):
        acc = acc + np.eye(n) * t + np.identity(n) + np.full((n, n), 0.5) + np.eye(n, n, 1)
        run = run + np.cumsum(x) - np.cumprod(x[::-1] * 0.5)
        run = run + np.concatenate((x[1:], x[:1]), axis=0)
    return acc, run


def integer_scans(a, steps):
    acc = np.zeros(a.shape[0], np.int64)
    for t in range(steps):
        acc = acc + np.cumsum(a) + np.cumprod(a, dtype=np.int64)
    return acc


def test_clip_in_loops():
    def make(n):
        return (RNG.standard_normal(n) * 3, -0.25 * n, n + 60)
    check_kernel(clipped_updates, *sizes(make, 5, 9))
    check_kernel(int_clip, (np.arange(-5, 5, dtype=np.int8), 70), (np.arange(-5, 5, dtype=np.int8), 71))


def test_full_eye_identity_cumsum_concatenate_in_loops():
    def make(n):
        return (RNG.standard_normal(n), n + 60)
    check_kernel(filled_and_scans, *sizes(make, 4, 7))
    def make_int(n):
        return (RNG.integers(-3, 4, n).astype(np.int8), n + 60)
    check_kernel(integer_scans, *sizes(make_int, 30, 40))  # int8 cumsum is int64; products wrap


def cube_reductions(V, steps):
    acc = np.zeros((1, 1, V.shape[2]))
    side = np.zeros(V.shape[1])
    for t in range(steps):
        acc = acc + V.sum(axis=(0, 1), keepdims=True) + V.min(axis=(0, 1), keepdims=True)
        side = side + V.max(axis=(0, 2)) + V.var(axis=(0, 2), ddof=1) + V.mean(axis=(1, 2))[0]
    return acc, side


@pytest.mark.parametrize("dtype", [np.float64, np.int16])
def test_reductions_over_several_axes_of_3d_arrays(dtype):
    def make(n):
        V = (RNG.standard_normal((n, 3, n + 2)) * 9).astype(dtype)
        return (V, n + 60)
    check_kernel(cube_reductions, *sizes(make, 4, 6))


def test_vector_norm_in_a_loop_is_numpys():
    pytest.importorskip("scipy")

    def power_iteration(A, v0, iters):
        v = v0 / np.linalg.norm(v0)
        lam = 0.0
        for _ in range(iters):
            w = A @ v
            lam = v @ w
            v = w / np.linalg.norm(w)
        return lam, v

    compiled = ac.compile(power_iteration, backend="numba")
    rng = np.random.default_rng(1)
    A = rng.standard_normal((6, 6))
    A = A + A.T
    for iters in (80, 90):
        v = rng.standard_normal(6)
        got, want = compiled(A, v, iters), power_iteration(A, v, iters)
        for g, w in zip(got, want):
            assert type(g) is type(w)
            np.testing.assert_allclose(g, w, rtol=1e-9)
    code = compiled.entries[-1].output_code
    assert "structured numba function" in code and "_ac_norm2(" in code
