"""Complex values and masked stores in fused numba kernels: exactly NumPy's bits.

Complex rules: ``astcompiler/lower/numba/complex_ops.py``; masked stores
(``dst[mask] = expr(a[mask], ...)`` as one ``if mask[i]`` loop): ``lower/numba/masked.py``.
Every test compares the compiled call with the plain call: values bit for bit (a NaN matches
any NaN), dtypes, the written inputs, warnings and exceptions.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac


def same_bits(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind == "c":
        return same_bits(got.real, want.real) and same_bits(got.imag, want.imag)
    if got.dtype.kind == "f":
        bits = f"u{got.dtype.itemsize}"
        equal = got.view(bits) == want.view(bits)
        return bool(np.all(equal | (np.isnan(got) & np.isnan(want))))
    return bool(np.array_equal(got, want))


def special_complex(n: int, dtype, seed: int = 0) -> np.ndarray:
    """Random values over a wide exponent range, mixed with 0, -0, inf, nan, huge and tiny parts."""
    rng = np.random.default_rng(seed)
    part = np.float32 if dtype == np.complex64 else np.float64
    info = np.finfo(part)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, info.max, -info.max,
                        info.tiny, info.smallest_subnormal], part)
    out = np.empty(n, dtype)
    for name in ("real", "imag"):
        with np.errstate(all="ignore"):
            values = (rng.standard_normal(n) * np.exp(rng.uniform(-60, 60, n))).astype(part)
        pick = rng.integers(0, 40, n)
        values = np.where(pick < len(special), special[np.minimum(pick, len(special) - 1)],
                          values)
        setattr(out, name, values)
    return out


def kernel_summary(compiled) -> list[str]:
    code = compiled.entries[-1].output_code
    return [line for line in code.splitlines() if line.startswith("#   ")]


def run_both(fn, *args):
    """(compiled result, plain result), each on its own copies of the array arguments."""
    compiled = ac.compile(fn, backend="numba")
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        got, want = compiled(*mine), fn(*theirs)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            assert same_bits(a, b)
    return compiled, got, want


# -- complex pointwise chains ---------------------------------------------------------------------


def complex_chain(z, w):
    p = z * w
    return p + np.conj(z) - np.square(w), np.abs(p - z), p == w, np.isnan(p), np.isfinite(-w)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_chain_is_one_kernel_with_numpys_bits(dtype):
    z, w = special_complex(20000, dtype, 1), special_complex(20000, dtype, 2)
    compiled, got, want = run_both(complex_chain, z, w)
    assert len(got) == len(want)
    for g, e in zip(got, want):
        assert same_bits(g, e)
    assert kernel_summary(compiled) == ["#   kernels: kernel_0_multiply_conjugate_add_square_etc"]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_absolute_matches_numpy_on_huge_tiny_and_special_parts(dtype):
    z = special_complex(200000, dtype, 3)
    compiled, got, want = run_both(lambda a: np.abs(a), z)
    assert got.dtype == want.dtype and same_bits(got, want)
    assert "NumPy calls" not in "\n".join(kernel_summary(compiled))


def plane(xs, ys):
    return xs[None, :] + 1j * ys[:, None]


def test_float_arrays_and_complex_constants_fuse():
    xs, ys = np.linspace(-2.0, 0.6, 37), np.linspace(-1.2, 1.2, 23)
    compiled, got, want = run_both(plane, xs, ys)
    assert got.dtype == np.complex128 and same_bits(got, want)
    assert "NumPy calls" not in "\n".join(kernel_summary(compiled))


def where_and_casts(z, x):
    big = np.abs(z) > 4.0
    return np.where(big, z, z * z + (-0.8 + 0.156j)), x.astype(np.complex64) * (0.5 - 1j)


def test_where_and_astype_to_complex_fuse():
    z = special_complex(5000, np.complex128, 4)
    x = np.random.default_rng(5).standard_normal(5000)
    compiled, got, want = run_both(where_and_casts, z, x)
    assert all(same_bits(g, e) for g, e in zip(got, want))
    assert "NumPy calls" not in "\n".join(kernel_summary(compiled))


def divide_and_exp(z, w):
    return z / w + np.exp(z)


def test_complex_divide_and_exp_stay_numpy_steps():
    z, w = special_complex(1000, np.complex128, 6), special_complex(1000, np.complex128, 7)
    compiled, got, want = run_both(divide_and_exp, z, w)
    assert same_bits(got, want)
    summary = "\n".join(kernel_summary(compiled))
    assert "NumPy calls in the wrapper: divide, exp" in summary and "kernel_0_add" in summary


def overflowing_product(z):
    return z * z + 1.0


def test_complex_overflow_warns_and_raises_like_numpy():
    z = np.array([1e200 + 1e200j, 1.0 + 2.0j] * 50)
    compiled = ac.compile(overflowing_product, backend="numba")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(z)
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        want = overflowing_product(z)
    assert same_bits(got, want)
    assert [str(w.message) for w in caught] == [str(w.message) for w in expected]
    with np.errstate(over="raise"), pytest.raises(FloatingPointError) as error:
        compiled(z)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError) as plain:
        overflowing_product(z)
    assert str(error.value) == str(plain.value)


# -- the power operator (NumPy's fast paths) ------------------------------------------------------


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_array_power_operator_follows_numpys_fast_paths(backend):
    """``a ** 2`` of a float or complex array is np.square (np.power differs for complex),
    ``** -1`` reciprocal, ``** 0.5`` sqrt; other exponents are np.power."""
    z = special_complex(3000, np.complex128, 8)
    x = np.random.default_rng(9).standard_normal(3000)
    cases = [(lambda a: a ** 2, (z, x)), (lambda a: a ** -1, (z, x)), (lambda a: a ** 0.5, (z, x)),
             (lambda a: a ** 2.0, (z, x)), (lambda a: a ** 3, (z,))]
    for fn, values in cases:  # (float ``x ** 3`` in a kernel is libm's pow, not NumPy's SIMD pow)
        for value in values:
            compiled = ac.compile(fn, backend=backend)
            with np.errstate(all="ignore"):
                assert same_bits(compiled(value), fn(value))


def in_place_square(z):
    z **= 2
    return z


def test_in_place_power_operator_is_square():
    z = special_complex(500, np.complex128, 10)
    compiled, got, want = run_both(in_place_square, z)
    assert same_bits(got, want)


# -- masked stores --------------------------------------------------------------------------------


def escape_step(z, c):
    alive = np.abs(z) <= 2.0
    z[alive] = z[alive] ** 2 + c[alive]
    return z, alive


def test_masked_store_is_one_kernel_without_gathers():
    rng = np.random.default_rng(11)
    z = (rng.standard_normal((60, 50)) + 1j * rng.standard_normal((60, 50))) * 1.5
    c = special_complex(3000, np.complex128, 12).reshape(60, 50)
    compiled, got, want = run_both(escape_step, z, c)
    assert all(same_bits(g, e) for g, e in zip(got, want))
    code = compiled.entries[-1].output_code
    assert kernel_summary(compiled) == ["#   kernels: kernel_0_absolute_less_equal, "
                                        "kernel_1_masked_square_add"]
    assert "if less_equal[i0, i1]:" in code and "[less_equal]" not in code


def fill(x, k):
    x[x > 0.5] = k
    return x


@pytest.mark.parametrize("k", [3, 2.5, -7])
def test_masked_fill_with_python_numbers(k):
    x = np.random.default_rng(13).random((9, 11))
    compiled, got, want = run_both(fill, x, k)
    assert same_bits(got, want)
    assert "kernel_1_masked_fill" in "\n".join(kernel_summary(compiled))


def fill_float32(x, k):
    x[x > 0.5] = k
    return x


def test_masked_fill_rounds_a_python_float_into_float32_like_numpy():
    x = np.random.default_rng(14).random(100).astype(np.float32)
    compiled, got, want = run_both(fill_float32, x, 0.1)
    assert got.dtype == np.float32 and same_bits(got, want)


def shifted(x, m):
    y = x[::-1]
    x[m] = y[m] + 1.0
    return x


def test_masked_store_reading_a_view_of_its_destination_reads_old_values():
    x, m = np.arange(40.0), np.arange(40) % 3 == 0
    compiled, got, want = run_both(shifted, x, m)
    assert same_bits(got, want)


def add_into(x, y, m):
    x[m] = y[m] * 2.0 + 1.0
    return x


def test_masked_store_between_overlapping_inputs():
    mask = np.ones(10, bool)
    base_a, base_b = np.arange(12.0), np.arange(12.0)
    compiled = ac.compile(add_into, backend="numba")
    compiled(base_a[2:], base_a[:-2], mask)
    add_into(base_b[2:], base_b[:-2], mask)
    assert same_bits(base_a, base_b)
    same_a, same_b = np.arange(10.0), np.arange(10.0)
    compiled(same_a, same_a, mask)
    add_into(same_b, same_b, mask)
    assert same_bits(same_a, same_b)


def square_root_where(x, m):
    x[m] = np.sqrt(x[m])
    return x


@pytest.mark.parametrize("mode", ["warn", "raise", "ignore"])
def test_masked_store_evaluates_only_selected_elements_for_fp_errors(mode):
    x = np.arange(12.0) - 3.0
    outcomes = []
    for mask in (x > -0.5, x > -2.5):  # the first selects no negative value: no warning
        for fn in (ac.compile(square_root_where, backend="numba"), square_root_where):
            data = x.copy()
            with warnings.catch_warnings(record=True) as caught, np.errstate(invalid=mode):
                warnings.simplefilter("always")
                try:
                    result = ("ok", fn(data, mask))
                except FloatingPointError as error:
                    result = ("raised", str(error))
            outcomes.append((result, data, [str(w.message) for w in caught]))
    for mine, theirs in ((outcomes[0], outcomes[1]), (outcomes[2], outcomes[3])):
        assert mine[0][0] == theirs[0][0] and mine[2] == theirs[2]
        assert same_bits(mine[1], theirs[1])
        if mine[0][0] == "ok":
            assert same_bits(mine[0][1], theirs[0][1])


def read_only_destination(x, y, m):
    x[m] = y[m] * 2.0
    return x


def test_masked_store_into_a_read_only_array_raises_like_numpy():
    x = np.arange(6.0)
    x.setflags(write=False)
    compiled = ac.compile(read_only_destination, backend="numba")
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        compiled(x, np.ones(6), np.ones(6, bool))


def mixed_dtypes(x, y, m):
    x[m] = y[m] + 1  # float32 values into a float64 array: NumPy casts, the store stays NumPy's
    return x


def row_mask(x, m):
    x[m] = x[m] * 2.0  # a 1-d mask selecting rows of a 2-d array
    return x


def test_masked_stores_kernels_do_not_model_stay_numpy():
    x, y = np.arange(8.0), np.arange(8.0, dtype=np.float32)
    m = np.arange(8) % 2 == 0
    compiled, got, want = run_both(mixed_dtypes, x, y, m)
    assert same_bits(got, want) and "masked" not in "\n".join(kernel_summary(compiled))
    rows = np.arange(12.0).reshape(4, 3)
    compiled, got, want = run_both(row_mask, rows, np.array([True, False, True, False]))
    assert same_bits(got, want) and "masked" not in "\n".join(kernel_summary(compiled))


def mandelbrot(xs, ys, maxiter):
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int64)
    for _ in range(maxiter):
        alive = np.abs(z) <= 2.0
        z[alive] = z[alive] ** 2 + c[alive]
        counts += alive
    return counts, z


def test_masked_complex_store_inside_a_loop_matches_numpy_bit_for_bit():
    xs, ys = np.linspace(-2.0, 0.6, 41), np.linspace(-1.2, 1.2, 37)
    compiled, got, want = run_both(mandelbrot, xs, ys, 30)
    assert all(same_bits(g, e) for g, e in zip(got, want))
    assert "masked_square_add" in compiled.entries[-1].output_code


def test_a_masked_kernels_numpy_twin_gathers_computes_and_stores():
    """The NumPy twin that replaces a kernel numba cannot compile (``numpy_twins.py``)."""
    from astcompiler.lower.numba import lower_graph
    from astcompiler.lower.numba.cpu import kernel_code
    from astcompiler.lower.numba.numpy_twins import numpy_twin
    from astcompiler.lower.numba.plan import build_plan

    def escape(z, c):
        alive = np.abs(z) <= 2.0
        z[alive] = z[alive] ** 2 + c[alive]
        return z

    rng = np.random.default_rng(15)
    z = (rng.standard_normal((20, 10)) + 1j * rng.standard_normal((20, 10))) * 2.0
    c = z * 0.3
    captured = ac.compile(escape, backend="eager")
    captured(z.copy(), c)
    plan = build_plan(captured.entries[-1].graph, [z, c])
    (kernel,) = [k for k in plan.kernels if k.masked is not None]
    code = kernel_code(kernel, plan, cache=False)

    def lower(graph, name):
        inputs = [None] * len(graph.placeholders)
        return lower_graph(graph, inputs, name, numpy_only=True).compiled.fn

    twin = numpy_twin(code, lower)
    assert twin is not None and [n.name for n in code.inputs] == ["less_equal", "z", "c"]
    mine, theirs = z.copy(), z.copy()
    twin(np.abs(mine) <= 2.0, mine, c)
    escape(theirs, c)
    assert same_bits(mine, theirs)
