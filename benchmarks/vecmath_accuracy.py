"""Accuracy of ``astcompiler.lower.numba.vecmath``: max ulp error, special values, FP flags.

For every function and dtype: ``--points`` log-uniform samples per sign over the function's
domain plus edges (around 0, the overflow/underflow thresholds, subnormals, integers, multiples
of pi/2), evaluated by a numba loop over the vectorized function, against ``np.longdouble``
(64-bit significand, glibc's ``expl``/``sinl``..., accurate to about 2**-63: the ulp errors
below are exact to about 1/1000 ulp); a subset is checked against mpmath at 200 bits to confirm
the reference. Special values (inf, -inf, NaN, +-0, subnormals, thresholds) must be NumPy's
result exactly (same bits but for NaN payloads), and each raises the same floating-point flags
as NumPy's ufunc (read with ``fetestexcept``; NumPy's through ``np.seterrcall``).

``python benchmarks/vecmath_accuracy.py [--points N] [--markdown docs/performance.md]``
rewrites the "Vectorized math" section of ``docs/performance.md`` with the table.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import importlib
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from astcompiler.lower.numba.vecmath import VECTOR_MATH  # noqa: E402

_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
_FE = {"invalid": 1, "divide": 4, "over": 8, "under": 16}  # x86-64 <fenv.h>
_NP_BITS = {"divide": 1, "over": 2, "under": 4, "invalid": 8}  # np.seterrcall's flag argument

# (smallest, largest) magnitude sampled, and whether negative arguments are in the domain
DOMAINS = {
    "exp": (1e-300, 760.0, True), "exp2": (1e-300, 1100.0, True), "expm1": (1e-300, 760.0, True),
    "log": (5e-324, 1.7e308, False), "log2": (5e-324, 1.7e308, False),
    "log10": (5e-324, 1.7e308, False), "log1p": (1e-300, 1.7e308, "log1p"),
    "sin": (1e-300, 1.7e308, True), "cos": (1e-300, 1.7e308, True), "tan": (1e-300, 1.7e308, True),
    "tanh": (1e-300, 30.0, True), "sinh": (1e-300, 760.0, True), "cosh": (1e-300, 760.0, True),
    "arctan": (1e-300, 1.7e308, True), "cbrt": (5e-324, 1.7e308, True),
}


def kernel(name: str, dtype: str):
    """A numba loop ``out[i] = f(x[i])`` over the vectorized function."""
    import numba

    module, function = VECTOR_MATH[(name, dtype)]
    f = getattr(importlib.import_module(module), function)

    @numba.njit(error_model="numpy")
    def loop(x, out):
        for i in range(x.shape[0]):
            out[i] = f(x[i])
    return loop


def run(loop, x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    loop(x, out)
    return out


def samples(name: str, dtype: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    """Log-uniform magnitudes per sign over the domain, plus edges."""
    lo, hi, negative = DOMAINS[name]
    info = np.finfo(dtype)
    lo = max(lo, float(info.smallest_subnormal))
    hi = min(hi, float(info.max))
    mag = np.exp2(rng.uniform(np.log2(lo), np.log2(hi), n))
    parts = [mag]
    if negative is True:
        parts.append(-np.exp2(rng.uniform(np.log2(lo), np.log2(hi), n)))
    elif negative == "log1p":
        parts.append(-np.exp2(rng.uniform(np.log2(lo), 0.0, n)))
    parts.append(edges(name, dtype))
    with np.errstate(all="ignore"):
        x = np.concatenate(parts).astype(dtype)
    return x[np.isfinite(x)]


def edges(name: str, dtype: np.dtype) -> np.ndarray:
    """Integers, multiples of pi/2, points around 1, 0 and the thresholds."""
    info = np.finfo(dtype)
    values = [np.arange(-50, 51), np.arange(-50, 51) * 0.5, 1 + np.arange(-20, 21) * info.eps]
    values.append(np.float64(info.smallest_subnormal) * np.arange(1, 20))
    values.append(np.float64(info.tiny) * np.array([0.5, 1, 1.5, 2]))
    if name in ("sin", "cos", "tan"):
        k = np.concatenate([np.arange(1, 2000), np.unique(np.geomspace(1, 1e15, 2000).round())])
        near = (k * (np.pi / 2)).astype(dtype)
        values += [near, np.nextafter(near, np.inf), np.nextafter(near, -np.inf),
                   np.array([6381956970095103.0 * 2.0 ** 797, 5.319372648326541e255, 1e22])]
    for t in thresholds(name, dtype):
        values.append(t * (1 + np.arange(-8, 9) * info.eps))
    return np.concatenate([np.asarray(v, np.float64) for v in values])


def thresholds(name: str, dtype: np.dtype) -> list[float]:
    """Arguments where the result overflows or underflows, in ``dtype``."""
    info = np.finfo(dtype)
    big, tiny, sub = float(np.log(info.max)), float(np.log(info.tiny)), \
        float(np.log(info.smallest_subnormal))
    return {"exp": [big, tiny, sub], "expm1": [big], "exp2": [float(np.log2(info.max)), -126.0
                                                            if dtype == np.float32 else -1022.0,
                                                            float(np.log2(info.smallest_subnormal))],
            "sinh": [big + float(np.log(2))], "cosh": [big + float(np.log(2))]}.get(name, [])


def reference(name: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return getattr(np, name)(x.astype(np.longdouble))


def ulp_errors(y: np.ndarray, ref: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """|y - ref| in ulps of the correctly rounded result (inf where the classes differ)."""
    with np.errstate(all="ignore"):
        rounded = ref.astype(dtype)
        err = np.abs(y.astype(np.longdouble) - ref) / np.spacing(np.abs(rounded)).astype(np.longdouble)
        same_inf = np.isinf(y) & (y == rounded)
        err = np.where(same_inf | (np.isnan(y) & np.isnan(rounded)), 0.0, err)
        err = np.where(np.isinf(rounded) & ~np.isinf(y), np.abs(y.astype(np.longdouble) - ref) /
                       np.spacing(np.finfo(dtype).max).astype(np.longdouble), err)
        return np.where(np.isnan(err), np.inf, err).astype(np.float64)


def mpmath_check(name: str, x: np.ndarray) -> float:
    """Max disagreement (in ulps of float64) between the longdouble reference and mpmath."""
    import mpmath as mp

    mp.mp.prec = 200
    f = {"exp2": lambda v: mp.power(2, v), "log2": lambda v: mp.log(v, 2),
         "log10": mp.log10, "arctan": mp.atan,
         "cbrt": lambda v: mp.cbrt(v) if v >= 0 else -mp.cbrt(-v)}.get(name) or getattr(mp, name)
    worst = 0.0
    ref = reference(name, x)
    for v, r in zip(x.astype(np.float64), ref):
        if not np.isfinite(r):
            continue
        exact = f(mp.mpf(float(v)))
        if not isinstance(exact, mp.mpf) or mp.isinf(exact) or not 1e-307 < abs(exact) < 1e308:
            continue
        exact_f = float(exact)
        d = abs(mp.mpf(str(r)) - exact)
        worst = max(worst, float(d / mp.mpf(float(np.spacing(abs(exact_f))))))
    return worst


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, -1e-310, 2.2250738585072014e-308,
            -2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308, 1.0, -1.0,
            1e-30, -1e-30, 1e-19, -1e-19, 1e-20, 1e30, -1e30, 0.5, -0.5, 2.0, -2.0]


def special_inputs(name: str, dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    extra = [float(info.smallest_subnormal), -float(info.smallest_subnormal), float(info.max),
             -float(info.max), float(info.tiny), -float(info.tiny)]
    for t in thresholds(name, dtype):
        extra += [t, float(np.nextafter(dtype.type(t), dtype.type(np.inf))),
                  float(np.nextafter(dtype.type(t), dtype.type(-np.inf)))]
    with np.errstate(all="ignore"):
        return np.array(SPECIALS + extra, np.float64).astype(dtype)


def numpy_flags(name: str, v: np.ndarray) -> set[str]:
    raised: list[int] = []
    old = np.seterrcall(lambda kind, flag: raised.append(flag))
    try:
        with np.errstate(all="call"):
            getattr(np, name)(v)
    finally:
        np.seterrcall(old)
    bits = raised[0] if raised else 0
    return {k for k, b in _NP_BITS.items() if bits & b}


def kernel_flags(loop, v: np.ndarray) -> set[str]:
    out = np.empty_like(v)
    _LIBM.feclearexcept(31 + 32)
    loop(v, out)
    bits = _LIBM.fetestexcept(31 + 32)
    return {k for k, b in _FE.items() if bits & b}


def same_value(a, b) -> bool:
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return bool(a == b and np.signbit(a) == np.signbit(b))


def check_specials(name: str, dtype: np.dtype, loop) -> list[str]:
    """Differences from NumPy at the special values: values (exact) and flags."""
    problems = []
    for v in special_inputs(name, dtype):
        one = np.array([v], dtype)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(one)[0]
        got = run(loop, one)[0]
        finite_close = np.isfinite(want) and np.isfinite(got) and want != 0 and got != 0 and \
            abs(float(got) - float(want)) <= 2 * float(np.spacing(abs(want)))
        special_result = not np.isfinite(want) or want == 0 or not np.isfinite(v) or v == 0
        if not (same_value(got, want) or (finite_close and not special_result)):
            problems.append(f"{name}({v!r}) = {got!r}, NumPy {want!r}")
        mine, theirs = kernel_flags(loop, one), numpy_flags(name, one)
        if mine != theirs:
            problems.append(f"{name}({v!r}) flags {sorted(mine)}, NumPy {sorted(theirs)}")
    return problems


def measure(name: str, dtype: str, points: int, seed: int = 0) -> dict:
    dt = np.dtype(dtype)
    loop = kernel(name, dtype)
    x = samples(name, dt, points, np.random.default_rng(seed))
    start = time.perf_counter()
    y = run(loop, x)
    err = ulp_errors(y, reference(name, x), dt)
    worst = int(np.argmax(err))
    with np.errstate(all="ignore"):
        np_err = ulp_errors(getattr(np, name)(x), reference(name, x), dt)
    return {"name": name, "dtype": dtype, "points": len(x), "max_ulp": float(err[worst]),
            "worst_x": float(x[worst]), "numpy_max_ulp": float(np.max(np_err)),
            "mean_ulp": float(np.mean(err)), "specials": check_specials(name, dt, loop),
            "seconds": time.perf_counter() - start}


BINARY_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.0, -1.0, 2.0, -3.0,
                   1e300, -1e300, 1e-300]


def binary_kernel(name: str, dtype: str):
    import numba

    module, function = VECTOR_MATH[(name, dtype)]
    f = getattr(importlib.import_module(module), function)

    @numba.njit(error_model="numpy")
    def loop(y, x, out):
        for i in range(x.shape[0]):
            out[i] = f(y[i], x[i])
    return loop


def measure_binary(name: str, dtype: str, points: int, seed: int = 0) -> dict:
    """arctan2: log-uniform magnitudes and random signs for both operands, plus a grid of
    special pairs compared with NumPy (values and flags)."""
    dt = np.dtype(dtype)
    loop = binary_kernel(name, dtype)
    rng = np.random.default_rng(seed)
    info = np.finfo(dt)
    lo, hi = np.log2(float(info.smallest_subnormal)), np.log2(float(info.max))
    y = (np.exp2(rng.uniform(lo, hi, points)) * rng.choice([-1, 1], points)).astype(dt)
    x = (np.exp2(rng.uniform(lo, hi, points)) * rng.choice([-1, 1], points)).astype(dt)
    near = (np.exp2(rng.uniform(-30, 30, points)) * rng.choice([-1, 1], points)).astype(dt)
    y, x = np.concatenate([y, near]), np.concatenate([x, (near * rng.uniform(0.5, 2, points)).astype(dt)])
    start = time.perf_counter()
    out = np.empty_like(x)
    loop(y, x, out)
    with np.errstate(all="ignore"):
        ref = np.arctan2(y.astype(np.longdouble), x.astype(np.longdouble))
        err = ulp_errors(out, ref, dt)
        np_err = ulp_errors(np.arctan2(y, x), ref, dt)
    worst = int(np.argmax(err))
    problems = []
    for a in BINARY_SPECIALS:
        for b in BINARY_SPECIALS:
            with np.errstate(all="ignore"):
                ya, xb = np.array([a], dt), np.array([b], dt)
                want = np.arctan2(ya, xb)[0]
            got = np.empty(1, dt)
            loop(ya, xb, got)
            ok = same_value(got[0], want) or (
                np.isfinite(want) and want != 0 and abs(float(got[0]) - float(want)) <= 2 * float(np.spacing(abs(want))))
            if not ok:
                problems.append(f"arctan2({a!r}, {b!r}) = {got[0]!r}, NumPy {want!r}")
            _LIBM.feclearexcept(31 + 32)
            loop(ya, xb, got)
            bits = _LIBM.fetestexcept(31 + 32)
            mine = {k for k, v in _FE.items() if bits & v}
            raised: list[int] = []
            old = np.seterrcall(lambda kind, flag: raised.append(flag))
            with np.errstate(all="call"):
                np.arctan2(ya, xb)
            np.seterrcall(old)
            theirs = {k for k, v in _NP_BITS.items() if raised and raised[0] & v}
            if mine != theirs:
                problems.append(f"arctan2({a!r}, {b!r}) flags {sorted(mine)}, NumPy {sorted(theirs)}")
    return {"name": name, "dtype": dtype, "points": len(x), "max_ulp": float(err[worst]),
            "worst_x": float(y[worst]), "numpy_max_ulp": float(np.max(np_err)),
            "mean_ulp": float(np.mean(err)), "specials": problems,
            "seconds": time.perf_counter() - start}


POWER_SPECIALS = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, 0.5, -2.0, -0.5, 3.0, -3.0,
                  2.5, -2.5, 1e-310, 5e-324, 1e300, -1e300, 2.0 ** 53, -(2.0 ** 53 + 2), 1e19,
                  1e-45, 1e-40, 88.7, -149.0, 1075.0]


def power_samples(dt: np.dtype, points: int, rng: np.random.Generator) -> tuple:
    """Results over the whole range (``y = t / log x``), bases near 1 with large exponents,
    negative bases with integer exponents."""
    info = np.finfo(dt)
    x = np.exp2(rng.uniform(np.log2(float(info.smallest_subnormal)), np.log2(float(info.max)),
                            points))
    limit = 745.0 if dt == np.float64 else 104.0
    parts = [(x, rng.uniform(-limit, 0.96 * limit, points) / np.log(x)),
             (rng.uniform(0.5, 2, points), rng.uniform(-40, 40, points)),
             (-np.exp2(rng.uniform(-20, 20, points)), np.round(rng.uniform(-30, 30, points))),
             (1 + rng.uniform(-1e-6, 1e-6, points), rng.uniform(-1e8, 1e8, points))]
    with np.errstate(all="ignore"):
        xs = np.concatenate([a for a, _ in parts]).astype(dt)
        ys = np.concatenate([b for _, b in parts]).astype(dt)
    keep = np.isfinite(xs) & np.isfinite(ys)
    return xs[keep], ys[keep]


def measure_power(name: str, dtype: str, points: int, seed: int = 0) -> dict:
    """power against ``np.longdouble`` (glibc's powl); NumPy's value and flags on a grid of
    special pairs, each as 1 element (scalar loop) and 64 (vector loop). C99 raises no flag
    for an infinite exponent; NumPy's SIMD loops raise *overflow* for some (1e300 ** inf):
    those pairs' flags are not compared."""
    dt = np.dtype(dtype)
    loop = binary_kernel(name, dtype)
    x, y = power_samples(dt, points, np.random.default_rng(seed))
    start = time.perf_counter()
    out = np.empty_like(x)
    loop(x, y, out)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
        err = ulp_errors(out, ref, dt)
        np_err = ulp_errors(np.power(x, y), ref, dt)
    worst = int(np.argmax(err))
    problems = []
    for a in POWER_SPECIALS:
        for b in POWER_SPECIALS:
            with np.errstate(all="ignore"):
                xa, yb = np.array([a], dt), np.array([b], dt)
                want = np.power(xa, yb)[0]
                exact = np.power(xa.astype(np.longdouble), yb.astype(np.longdouble))[0]
            got = np.empty(1, dt)
            loop(xa, yb, got)
            special = not np.isfinite(want) or want == 0 or not (np.isfinite(a) and np.isfinite(b))
            close = np.isfinite(want) and abs(float(got[0]) - float(exact)) <= 2 * float(
                np.spacing(abs(want)))
            if not (same_value(got[0], want) or (close and not special)):
                problems.append(f"{a!r}**{b!r} = {got[0]!r}, NumPy {want!r}")
            if np.isinf(yb[0]) and xa[0] != 0:
                continue
            for n in (1, 64):
                xs, ys, o = np.full(n, a, dt), np.full(n, b, dt), np.empty(n, dt)
                loop(xs, ys, o)
                _LIBM.feclearexcept(31 + 32)
                loop(xs, ys, o)
                bits = _LIBM.fetestexcept(31 + 32)
                mine = {k for k, v in _FE.items() if bits & v}
                raised: list[int] = []
                old = np.seterrcall(lambda kind, flag: raised.append(flag))
                with np.errstate(all="call"):
                    np.power(xs, ys)
                np.seterrcall(old)
                theirs = {k for k, v in _NP_BITS.items() if raised and raised[0] & v}
                if mine != theirs:
                    problems.append(f"{a!r}**{b!r} (n={n}) flags {sorted(mine)}, NumPy {sorted(theirs)}")
    return {"name": name, "dtype": dtype, "points": len(x), "max_ulp": float(err[worst]),
            "worst_x": float(x[worst]), "numpy_max_ulp": float(np.max(np_err)),
            "mean_ulp": float(np.mean(err)), "specials": problems,
            "seconds": time.perf_counter() - start}


def table(rows: list[dict]) -> str:
    lines = ["| function | dtype | points | max ulp | at x (y for arctan2) | NumPy's max ulp | "
             "special values and flags |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        specials = "as NumPy" if not r["specials"] else "; ".join(r["specials"][:3]) + (
            f" (+{len(r['specials']) - 3})" if len(r["specials"]) > 3 else "")
        lines.append(f"| {r['name']} | {r['dtype']} | {r['points']} | {r['max_ulp']:.3f} | "
                     f"{r['worst_x']:.6g} | {r['numpy_max_ulp']:.3f} | {specials} |")
    return "\n".join(lines)


SECTION = "## Vectorized math"
NOTE = ('Known differences: NumPy\'s own float32 SIMD loops raise *underflow* (ignored by default) from their internal steps at a few arguments where the correctly rounded result does not (float32 `exp` at -87.336555, `exp2` at -149): under `np.errstate(under="raise")` those two calls raise in NumPy and not compiled. A flag raised by a kernel that NumPy would not raise only reruns the call with NumPy (the wrapper\'s rule), so it costs time, never a different result. NumPy\'s float64 `cos` is up to 8 ulp off (130 ulp at 6381956970095103 * 2**797): compiled results can differ from NumPy\'s by that much while being within 1 ulp of the exact value. Loops where the function\'s value feeds a float reduction in the same loop keep libm (`vecmath.feeds_reduction`): that loop does not vectorize anyway. float32 `exp`, `expm1`, `log`, `log1p`, `tanh`, `sin` and `cos` compute with float32 polynomials (16 lanes per 512-bit vector; sin/cos after an exact float64 Payne-Hanek reduction); the other float32 functions, and `power`, evaluate the float64 function and round once more. `power` takes the log as a double-double (about 2**-62 relative) and feeds `y*log|x|` as a double-double to the exponential. Its flags are also compared on vector lanes (64 equal elements): LLVM computes what a select chooses from on every lane, which raised spurious flags (*overflow* for log(1e300), *invalid* for log1p(-1), expm1(709.78)) until the inputs were clamped with integer min/max instead. Still raising spurious flags on vector lanes (a rerun with NumPy, never a different result): float64 `exp`/`sinh`/`cosh` at subnormal arguments (*underflow*), `arctan` above 2**66 and `cbrt`/`sin`/`cosh` near the largest float64 (*overflow*, *underflow*).')


def write_markdown(path: pathlib.Path, rows: list[dict], points: int, ref_check: dict) -> None:
    body = [SECTION, "",
            "Fused numba kernels compute these ufuncs with `astcompiler/lower/numba/vecmath` "
            "(branch-free range reduction and polynomials, coefficients fitted by "
            "`tools/vecmath_coefficients.py`; the loop vectorizes) instead of libm, while "
            "`ac.config.vector_math` is True (the default).", "",
            f"Max error in ulps against a correctly rounded reference (`np.longdouble`, checked "
            f"against mpmath at 200 bits on a subset: max disagreement "
            f"{max(ref_check.values()):.4f} ulp) over {points} log-uniform points per sign and "
            "the edges (thresholds, subnormals, integers, multiples of pi/2, huge arguments of "
            "sin/cos/tan). Special values (inf, -inf, NaN, +-0, subnormals, the overflow and "
            "underflow thresholds) are compared with NumPy's result and the floating-point "
            "flags NumPy's ufunc raises. Generated by `python benchmarks/vecmath_accuracy.py "
            f"--points {points} --markdown docs/performance.md`.", "", table(rows), "", NOTE, ""]
    text = path.read_text() if path.exists() else "# Performance\n\n"
    if SECTION in text:
        head, _, rest = text.partition(SECTION)
        nxt = rest.find("\n## ")
        text = head + "\n".join(body) + (rest[nxt:] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(body)
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--only", default="", help="comma-separated function names")
    parser.add_argument("--markdown", type=pathlib.Path)
    args = parser.parse_args()
    names = [n for n in list(DOMAINS) + ["arctan2", "power"]
             if not args.only or n in args.only.split(",")]
    rows, ref_check = [], {}
    for name in names:
        if name in DOMAINS:
            ref_check[name] = mpmath_check(name, samples(name, np.dtype(np.float64), 100,
                                                         np.random.default_rng(1))[:300])
        for dtype in ("float64", "float32"):
            how = measure if name in DOMAINS else (measure_power if name == "power" else
                                                   measure_binary)
            row = how(name, dtype, args.points)
            rows.append(row)
            print(f"{name:6} {dtype}: max {row['max_ulp']:.3f} ulp at {row['worst_x']!r} "
                  f"(NumPy {row['numpy_max_ulp']:.3f}), {len(row['specials'])} special "
                  f"differences {row['specials'][:4]} [{row['seconds']:.1f} s]", flush=True)
    print("reference vs mpmath (ulp):", {k: round(v, 4) for k, v in ref_check.items()})
    print(table(rows))
    if args.markdown:
        write_markdown(args.markdown, rows, args.points, ref_check)


if __name__ == "__main__":
    main()
