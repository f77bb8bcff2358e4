"""Vectorizable math functions (``lower/numba/vecmath``): accuracy, NumPy's special values and
floating-point flags, vectorization, and their use in fused kernels.

The dense sweep (1e6 points per sign and function) is ``benchmarks/vecmath_accuracy.py``; here a
few 1e4 points per function and dtype against ``np.longdouble`` (exact to about 2**-63).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import platform
import re
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba import numba_backend
from astcompiler.lower.numba.vecmath import VECTOR_MATH

from numba_helpers import GraphBuilder


@pytest.fixture(autouse=True)
def vecmath_at_every_size():
    """These tests use small arrays: vecmath is on for every size here (by default only from
    ``vector_math_min_elements`` elements, see ``test_small_static_arrays_keep_libm``)."""
    with ac.config.patch(vector_math_min_elements=0):
        yield

BINARY = ("arctan2", "power")  # power: tests/lower/test_vecmath_f32.py
NAMES = sorted({name for name, _ in VECTOR_MATH} - set(BINARY))
DTYPES = ["float64", "float32"]
MAX_ULP = 2.0

# (smallest, largest) magnitude sampled; negative arguments: True, False, or (lo, hi) magnitudes
DOMAINS = {"exp": (1e-300, 760.0, True), "exp2": (1e-300, 1100.0, True),
           "expm1": (1e-300, 760.0, True), "log": (5e-324, 1.7e308, False),
           "log2": (5e-324, 1.7e308, False), "log10": (5e-324, 1.7e308, False),
           "log1p": (1e-300, 1.7e308, (1e-300, 1.0)), "sin": (1e-300, 1.7e308, True),
           "cos": (1e-300, 1.7e308, True), "tan": (1e-300, 1.7e308, True),
           "tanh": (1e-300, 30.0, True), "sinh": (1e-300, 760.0, True),
           "cosh": (1e-300, 760.0, True), "arctan": (1e-300, 1.7e308, True),
           "cbrt": (5e-324, 1.7e308, True)}

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, -1e-310, 1e-45, -1e-45,
            2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308, 3.4e38,
            -3.4e38, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-30, -1e-30, 1e30, -1e30, 88.7, -88.7,
            89.0, -104.0, 709.78, 709.79, -745.1, -745.2, 710.5, 1024.0, -1075.0, 1e22,
            6381956970095103.0 * 2.0 ** 797, np.pi / 2, np.pi]

_FE = {"invalid": 1, "divide": 4, "over": 8, "under": 16}  # x86-64 <fenv.h>
_NP_BITS = {"divide": 1, "over": 2, "under": 4, "invalid": 8}  # np.seterrcall's argument
# NumPy's own float32 SIMD loops raise *underflow* (ignored by default) by their internal steps
# at a few arguments where the float64 evaluation does not: known and documented differences
UNDERFLOW_QUIRKS = {("exp", "float32"), ("exp2", "float32")}


def _cpu_dependent_underflow(v: float) -> bool:
    """A subnormal argument: whether NumPy raises *underflow* for f(x) ~ x there depends on the
    loop its build dispatches to on this CPU (NumPy 2.4's X86_V3 loops of arctan, expm1, log1p,
    sinh, tan raise it on an AVX2 machine, its AVX-512 and baseline loops do not)."""
    return v != 0 and abs(v) < np.finfo(np.asarray(v).dtype).tiny


# by default only these are compiled for float32 (each function inlined costs about a second of
# numba compilation); the rest: slow. vecmath.NATIVE_FLOAT32 and exp, log have float32 code.
FAST_FLOAT32 = ("exp", "log", "sin", "tanh")


def _dtype_params() -> list:
    return [pytest.param(n, d, marks=[pytest.mark.slow] if d == "float32" and
                         n not in FAST_FLOAT32 else []) for n in NAMES for d in DTYPES]


def _apply_kernel(dtype: str, names: tuple[str, ...]):
    """One njit function ``apply(which, x, out)``: ``out[i] = names[which](x[i])`` (one compile
    for several functions of a dtype)."""
    import numba

    namespace = {}
    lines = ["def apply(which, x, out):", "    for i in range(x.shape[0]):"]
    for j, name in enumerate(names):
        module, function = VECTOR_MATH[(name, dtype)]
        namespace[f"f{j}"] = getattr(importlib.import_module(module), function)
        lines.append(f"        {'if' if j == 0 else 'elif'} which == {j}:")
        lines.append(f"            out[i] = f{j}(x[i])")
    exec("\n".join(lines), namespace)  # noqa: S102 - a test kernel
    return numba.njit(error_model="numpy")(namespace["apply"])


_KERNELS: dict[tuple, object] = {}


def _run(name: str, dtype: str, x: np.ndarray) -> np.ndarray:
    names = FAST_FLOAT32 if dtype == "float32" and name in FAST_FLOAT32 else tuple(NAMES)
    if (dtype, names) not in _KERNELS:
        _KERNELS[(dtype, names)] = _apply_kernel(dtype, names)
    out = np.empty_like(x)
    _KERNELS[(dtype, names)](names.index(name), x, out)
    return out


def _samples(name: str, dtype: np.dtype, n: int) -> np.ndarray:
    rng = np.random.default_rng(abs(hash((name, dtype.name))) % 2 ** 32)
    lo, hi, negative = DOMAINS[name]
    info = np.finfo(dtype)
    lo, hi = max(lo, float(info.smallest_subnormal)), min(hi, float(info.max))
    parts = [np.exp2(rng.uniform(np.log2(lo), np.log2(hi), n)), np.arange(-20, 21) * 0.25]
    if negative is True:
        parts.append(-np.exp2(rng.uniform(np.log2(lo), np.log2(hi), n)))
    elif negative:
        parts.append(-np.exp2(rng.uniform(np.log2(negative[0]), np.log2(negative[1]), n)))
    if name in ("sin", "cos", "tan"):
        near = np.arange(1, 3000) * (np.pi / 2)
        parts += [near, np.nextafter(near, np.inf), np.nextafter(near, -np.inf)]
    with np.errstate(all="ignore"):
        x = np.concatenate(parts).astype(dtype)
    return x[np.isfinite(x)]


def _ulps(y: np.ndarray, x: np.ndarray, name: str, dtype: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(np.longdouble))
        rounded = ref.astype(dtype)
        err = np.abs(y.astype(np.longdouble) - ref) / np.spacing(np.abs(rounded))
        agree = (np.isnan(y) & np.isnan(rounded)) | (np.isinf(y) & (y == rounded))
        return np.where(agree, 0.0, np.where(np.isnan(err), np.inf, err)).astype(np.float64)


@pytest.mark.parametrize("name,dtype", _dtype_params())
def test_accuracy_within_two_ulp(name, dtype):
    dt = np.dtype(dtype)
    x = _samples(name, dt, 10_000)
    err = _ulps(_run(name, dtype, x), x, name, dt)
    worst = int(np.argmax(err))
    assert err[worst] <= MAX_ULP, f"{name}({x[worst]!r}): {err[worst]:.3f} ulp"


def _same(got, want) -> bool:
    if np.isnan(want):
        return bool(np.isnan(got))
    return bool(got == want and np.signbit(got) == np.signbit(want))


def _inputs(dtype: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.unique(np.array(SPECIALS, np.float64).astype(dtype))


@pytest.mark.parametrize("name,dtype", _dtype_params())
def test_special_values_are_numpys(name, dtype):
    """inf, NaN, signed zeros, subnormals, thresholds: NumPy's value exactly where NumPy's is
    special (inf, 0, NaN, or a special argument); within 2 ulp of the exact value elsewhere
    (NumPy's own cos is 130 ulp off at 6381956970095103 * 2**797)."""
    dt = np.dtype(dtype)
    x = _inputs(dt)
    got = _run(name, dtype, x)
    err = _ulps(got, x, name, dt)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    for v, g, w, e in zip(x, got, want, err):
        special = not np.isfinite(w) or w == 0 or not np.isfinite(v) or v == 0
        assert _same(g, w) or (e <= MAX_ULP and not special), f"{name}({v!r}) = {g!r}, NumPy {w!r}"


_LIBM = ctypes.CDLL(ctypes.util.find_library("m")) if platform.machine() == "x86_64" else None


def _kernel_flags(name: str, dtype: str, v: np.ndarray) -> set[str]:
    _run(name, dtype, v)  # compiled (flags of the first call's compilation are not read)
    _LIBM.feclearexcept(31)
    _run(name, dtype, v)
    bits = _LIBM.fetestexcept(31)
    return {k for k, b in _FE.items() if bits & b}


def _numpy_flags(name: str, v: np.ndarray) -> set[str]:
    raised: list[int] = []
    old = np.seterrcall(lambda kind, flag: raised.append(flag))
    try:
        with np.errstate(all="call"):
            getattr(np, name)(v)
    finally:
        np.seterrcall(old)
    return {k for k, b in _NP_BITS.items() if raised and raised[0] & b}


@pytest.mark.skipif(_LIBM is None, reason="reads x86-64 <fenv.h> flags")
@pytest.mark.parametrize("name,dtype", _dtype_params())
def test_floating_point_flags_are_numpys(name, dtype):
    """Each special argument alone: the flags raised are NumPy's (overflow in exp, divide by
    zero at log(0), invalid at log(-1) and sin(inf)), and no spurious ones."""
    for v in _inputs(np.dtype(dtype)):
        one = np.array([v], dtype)
        mine, theirs = _kernel_flags(name, dtype, one), _numpy_flags(name, one)
        if (name, dtype) in UNDERFLOW_QUIRKS or _cpu_dependent_underflow(v):
            mine, theirs = mine - {"under"}, theirs - {"under"}
        assert mine == theirs, f"{name}({v!r}): flags {sorted(mine)}, NumPy {sorted(theirs)}"


def _chain(x, y, z):
    return np.exp(x) * np.sin(y) + np.sqrt(z)


def _graph(x, y, z):
    b = GraphBuilder(x, y, z)
    X, Y, Z = b.inputs
    return b.output(b("add", b("multiply", b("exp", X), b("sin", Y)), b("sqrt", Z)),
                    b("log", Z), b("tanh", X))


def test_fused_kernel_uses_vectorized_math_and_matches_numpy():
    rng = np.random.default_rng(0)
    x, y, z = rng.uniform(-20, 20, 5000), rng.uniform(-50, 50, 5000), rng.uniform(0, 9, 5000)
    graph = _graph(x, y, z)
    compiled = numba_backend(graph, [x, y, z])
    (source,) = compiled.kernels.values()
    for name in ("exp", "sin", "log", "tanh"):
        assert f"vm_{name}_float64" in source
    assert "fastmath" not in source
    chain, log, tanh = compiled(x, y, z)
    want = _chain(x, y, z)
    # terms keep their own rounding: compare each function's error, then the chain's
    assert np.max(np.abs(log - np.log(z)) / np.spacing(np.abs(np.log(z)))) <= MAX_ULP
    assert np.max(np.abs(tanh - np.tanh(x)) / np.spacing(np.abs(np.tanh(x)))) <= MAX_ULP
    scale = np.abs(np.exp(x) * np.sin(y)) + np.sqrt(z)
    assert np.max(np.abs(chain - want) / np.spacing(scale)) <= 2 * MAX_ULP + 1


def test_vector_math_switch_uses_libm():
    x = np.linspace(0.1, 5, 64)
    b = GraphBuilder(x)
    graph = b.output(b("exp", b.inputs[0]))
    with ac.config.patch(vector_math=False):
        compiled = numba_backend(graph, [x])
    (source,) = compiled.kernels.values()
    assert "vm_exp" not in source and "np.exp(" in source
    (result,) = compiled(x)
    assert np.max(np.abs(result - np.exp(x)) / np.spacing(np.exp(x))) <= 1


def test_float32_kernel_keeps_float32():
    x = np.linspace(-3, 3, 100, dtype=np.float32)
    b = GraphBuilder(x)
    graph = b.output(b("exp", b.inputs[0]), b("cos", b.inputs[0]))
    compiled = numba_backend(graph, [x])
    (source,) = compiled.kernels.values()
    assert "vm_exp_float32" in source and "vm_cos_float32" in source
    e, c = compiled(x)
    assert e.dtype == np.float32 and c.dtype == np.float32
    assert np.max(np.abs(e - np.exp(x)) / np.spacing(np.exp(x))) <= 3  # NumPy's own: 2.2 ulp


def exp_log_chain(x, y):
    return np.exp(x) + np.log(y)


@pytest.mark.parametrize("x_value,y_value,category", [(1000.0, 1.0, "overflow"),
                                                      (1.0, 0.0, "divide by zero"),
                                                      (1.0, -1.0, "invalid value")])
def test_errstate_raise_like_numpy(x_value, y_value, category):
    """A compiled call under np.errstate(all="raise") raises NumPy's FloatingPointError, and a
    call without special values raises nothing (no spurious flag)."""
    compiled = ac.compile(exp_log_chain, backend="numba")
    x = np.array([0.5, 1.0, 2.0])
    y = np.array([1.0, 2.0, 3.0])
    with np.errstate(all="raise"):
        np.testing.assert_allclose(compiled(x, y), exp_log_chain(x, y), rtol=1e-15)
        bad_x, bad_y = x.copy(), y.copy()
        bad_x[1], bad_y[1] = x_value, y_value
        with pytest.raises(FloatingPointError) as expected:
            exp_log_chain(bad_x, bad_y)
        with pytest.raises(FloatingPointError) as actual:
            compiled(bad_x, bad_y)
    assert str(actual.value) == str(expected.value) and category in str(expected.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled(x, y)  # default errstate: nothing to warn about
    assert len(compiled.entries) == 1


def test_loop_vectorizes_without_libm_calls():
    """``for i in range(n): out[i] = f(x[i])`` compiles to packed instructions, no calls."""
    import numba

    from astcompiler.lower.numba.vecmath.expfamily import exp_f64
    from astcompiler.lower.numba.vecmath.logfamily import log_f64
    from astcompiler.lower.numba.vecmath.trig import sin_f64

    @numba.njit(error_model="numpy")
    def loop(x, out):
        for i in range(x.shape[0]):
            out[i] = exp_f64(x[i]) * sin_f64(x[i]) + log_f64(x[i]) + np.sqrt(x[i])

    x = np.linspace(0.5, 9, 100)
    out = np.empty_like(x)
    loop(x, out)
    signature = loop.signatures[0]
    ir = loop.inspect_llvm(signature)
    assert re.search(r"<(4|8) x double>", ir)
    for libm in ("@llvm.exp.", "@llvm.sin.", "@llvm.log.", "@exp(", "@sin(", "@log("):
        assert libm not in ir
    asm = loop.inspect_asm(signature)
    assert re.search(r"v\w+pd\s+%[yz]mm", asm)  # packed double instructions
    np.testing.assert_allclose(out, np.exp(x) * np.sin(x) + np.log(x) + np.sqrt(x), rtol=1e-14)


BINARY_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.0, -1.0, 2.0, -3.0,
                   1e300, -1e300, 1e-300]


def _binary_kernel(name: str, dtype: str):
    import numba

    module, function = VECTOR_MATH[(name, dtype)]
    f = getattr(importlib.import_module(module), function)

    @numba.njit(error_model="numpy")
    def loop(y, x, out):
        for i in range(x.shape[0]):
            out[i] = f(y[i], x[i])
    return loop


@pytest.mark.parametrize("dtype", [pytest.param("float64"),
                                   pytest.param("float32", marks=pytest.mark.slow)])
def test_arctan2_accuracy_special_values_and_flags(dtype):
    dt = np.dtype(dtype)
    loop = _binary_kernel("arctan2", dtype)
    rng = np.random.default_rng(7)
    n = 10_000
    info = np.finfo(dt)
    lo, hi = np.log2(float(info.smallest_subnormal)), np.log2(float(info.max))
    with np.errstate(all="ignore"):
        y = (np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1, 1], n)).astype(dt)
        x = (np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1, 1], n)).astype(dt)
        near = (np.exp2(rng.uniform(-30, 30, n)) * rng.choice([-1, 1], n)).astype(dt)
    y = np.concatenate([y, near])
    x = np.concatenate([x, (near * rng.uniform(0.5, 2, n)).astype(dt)])
    out = np.empty_like(x)
    loop(y, x, out)
    with np.errstate(all="ignore"):
        ref = np.arctan2(y.astype(np.longdouble), x.astype(np.longdouble))
        err = np.abs(out.astype(np.longdouble) - ref) / np.spacing(np.abs(ref.astype(dt)))
    err = np.where(np.isnan(err), np.inf, err).astype(np.float64)
    assert np.max(err) <= MAX_ULP, (y[np.argmax(err)], x[np.argmax(err)], np.max(err))
    with np.errstate(all="ignore"):
        values = np.array(BINARY_SPECIALS, np.float64).astype(dt)
    for a in values:
        for b in values:
            ya, xb, got = np.array([a], dt), np.array([b], dt), np.empty(1, dt)
            with np.errstate(all="ignore"):
                want = np.arctan2(ya, xb)[0]
            loop(ya, xb, got)
            close = np.isfinite(want) and want != 0 and \
                abs(float(got[0]) - float(want)) <= MAX_ULP * float(np.spacing(abs(want)))
            assert _same(got[0], want) or close, (a, b, got[0], want)
            if _LIBM is not None:
                _LIBM.feclearexcept(31)
                loop(ya, xb, got)
                bits = _LIBM.fetestexcept(31)
                mine = {k for k, v in _FE.items() if bits & v}
                assert mine == _numpy_flags_binary(ya, xb), (a, b, mine)


def _numpy_flags_binary(y: np.ndarray, x: np.ndarray) -> set[str]:
    raised: list[int] = []
    old = np.seterrcall(lambda kind, flag: raised.append(flag))
    try:
        with np.errstate(all="call"):
            np.arctan2(y, x)
    finally:
        np.seterrcall(old)
    return {k for k, b in _NP_BITS.items() if raised and raised[0] & b}


def test_binary_ufunc_in_fused_kernel():
    y = np.linspace(-3, 3, 50)
    x = np.linspace(2, -2, 50)
    b = GraphBuilder(y, x)
    graph = b.output(b("arctan2", *b.inputs))
    compiled = numba_backend(graph, [y, x])
    (source,) = compiled.kernels.values()
    assert "vm_arctan2_float64(" in source
    (result,) = compiled(y, x)
    want = np.arctan2(y, x)
    assert np.max(np.abs(result - want) / np.spacing(np.abs(want))) <= MAX_ULP


def test_small_static_arrays_keep_libm():
    """vecmath costs compile time: arrays of a small static size keep libm, large or dynamic
    ones get the vectorized functions."""
    def f(x):
        return np.exp(x) * 2.0
    with ac.config.patch(vector_math_min_elements=4096):
        for n, dynamic, vectorized in ((100, False, False), (5000, False, True), (100, True, True)):
            x = np.linspace(-3, 3, n)
            compiled = ac.compile(f, backend="numba", dynamic=dynamic)
            np.testing.assert_allclose(compiled(x), f(x), rtol=4e-16)
            code = "\n".join(entry.output_code for entry in compiled.entries)
            assert ("vm_exp_float64(" in code) is vectorized, (n, dynamic)
