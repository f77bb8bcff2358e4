"""log, log2, log10, log1p (float64; float32 through float64).

Reduction: ``x = 2**e * m`` with ``m`` in [sqrt(1/2), sqrt(2)) read from the bits (subnormals
scaled by 2**54 first), ``f = m - 1`` (exact), then ``log(1 + f)`` by the series in
``s = f / (2 + f)``: ``f - (f*f/2 - s*(f*f/2 + R(s*s)))``, and ``e*ln2`` added with ln2 split
so that ``e*LN2_HI`` is exact. Special inputs compute on 1.0 and take NumPy's result by a select;
the flags NumPy raises come from real operations on values that are special only where needed:
``-1 / z`` with ``z == 0`` exactly for a zero input (*divide by zero*), ``sqrt(x)`` with a
negative ``x`` (*invalid*).
"""

from __future__ import annotations

import numpy as np

from .bits import bits_f32, f32_bits, prefer_wide_vectors
from .coefficients import (INV_LN2_HI_LO, INV_LN10_HI_LO, LN2_HI_LO, LN2_HI_LO_F32, LOG,
                           LOG10_2_HI_LO, LOG_F32)
from .core import ABS, INF_BITS, ONE_BITS, bits_f64, f64_bits, fma, horner, jit, two_sum

_MIN_NORMAL = np.int64(0x0010000000000000)
_SQRT_HALF = np.int64(0x3FE6A09E667F3BCD)
LN2_HI, LN2_LO = LN2_HI_LO


@jit
def _reduce(x):
    """``(e, f, special)``: ``x = 2**e * (1 + f)`` for positive finite x; ``special`` lanes
    (zero, negative, inf, NaN) give ``e = 0, f = 0``."""
    b = f64_bits(x)
    sub = b < _MIN_NORMAL  # also zero and negatives: they are special anyway
    # a subnormal's bits converted as an integer: x * 2**1074 exactly (LLVM runs what a select
    # chooses from on every lane: a float multiply by 2**54 overflows at large x)
    bs = f64_bits(np.float64(b)) if sub else b
    special = (b <= 0) or (b >= INF_BITS)
    bs = ONE_BITS if special else bs
    tmp = bs - _SQRT_HALF
    e = tmp >> 52
    f = bits_f64(bs - (e << 52)) - 1.0
    e = (e - 1074) if (sub and not special) else e
    return np.float64(e), f, special


@jit
def log1p_parts(f):
    """``_log1p_f``, for other modules (power)."""
    return _log1p_f(f)


@jit
def _log1p_f(f):
    """``(hi, lo)``: ``log(1 + f)`` as ``hi + lo`` (hi exact ``f``), for f in [-0.2929, 0.4143]."""
    s = f / (2.0 + f)
    z = s * s
    hfsq = 0.5 * f * f
    lo = s * (hfsq + z * horner(LOG, z)) - hfsq
    return f, lo


@jit
def _special(x, special):
    """NumPy's log at zero (-inf, divide by zero), below zero (NaN, invalid), inf and NaN
    (themselves); garbage on other lanes (selected away)."""
    ax = bits_f64(f64_bits(x) & ABS)
    z = bits_f64(min(f64_bits(ax), ONE_BITS) if special else ONE_BITS)  # 0 only for a zero x
    at_zero = -1.0 / z
    root = np.sqrt(x)  # NaN (invalid) exactly for x < 0
    b = f64_bits(x)
    return at_zero if (b & ABS) == 0 else (root if b < 0 else x)


@jit
def log_f64(x):
    """``np.log`` for float64, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    e, f, special = _reduce(x)
    hi, lo = _log1p_f(f)
    s, err = two_sum(e * LN2_HI, hi)  # e*LN2_HI is exact
    y = s + (err + fma(e, LN2_LO, lo))
    return _special(x, special) if special else y


@jit
def log2_f64(x):
    """``np.log2`` for float64, within 1 ulp: ``e + log(1+f)/ln2`` in double-double."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    e, f, special = _reduce(x)
    hi, lo = _log1p_f(f)
    c_hi, c_lo = INV_LN2_HI_LO
    p = hi * c_hi
    p_err = fma(hi, c_hi, -p)
    y = e + (p + (p_err + fma(lo, c_hi, (hi + lo) * c_lo)))
    return _special(x, special) if special else y


@jit
def log10_f64(x):
    """``np.log10`` for float64, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    e, f, special = _reduce(x)
    hi, lo = _log1p_f(f)
    c_hi, c_lo = INV_LN10_HI_LO
    d_hi, d_lo = LOG10_2_HI_LO
    p = hi * c_hi
    p_err = fma(hi, c_hi, -p)
    y = fma(e, d_hi, p + fma(e, d_lo, p_err + fma(lo, c_hi, (hi + lo) * c_lo)))
    return _special(x, special) if special else y


_LOG1P_TINY = np.int64(0x3C90000000000000)  # 2**-54: log1p(x) rounds to x
_HUGE = np.int64(0x7E37E43C8800759C)  # 1e300: above it 1 + x is x
_MAX_FINITE = np.int64(0x7FEFFFFFFFFFFFFF)


@jit
def log1p_f64(x):
    """``np.log1p`` for float64, within 1 ulp: ``u = 1 + x`` rounded, its exact error ``c``
    carried as ``c / u`` into the result."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    tiny = (b & ABS) < _LOG1P_TINY
    u = 1.0 + x
    xf = bits_f64(b if (b & ABS) < _HUGE else np.int64(0))  # finite, and 1 + x rounds close
    c = xf - ((1.0 + xf) - 1.0)
    e, f, special = _reduce(u)
    hi, lo = _log1p_f(f)
    corr = c / bits_f64(min(max(f64_bits(u), _MIN_NORMAL), _MAX_FINITE))  # clamped: no 0/0
    y = fma(e, LN2_HI, hi + fma(e, LN2_LO, lo + corr))
    y = x if tiny else y
    return _special(u, special) if (special and not tiny) else y


_F32 = np.float32
_LOG_F32 = tuple(_F32(c) for c in LOG_F32)
_LN2_HI_F32, _LN2_LO_F32 = (_F32(c) for c in LN2_HI_LO_F32)
_MIN_NORMAL32 = np.int64(0x00800000)
_INF32 = np.int64(0x7F800000)
_ONE32 = np.int64(0x3F800000)
_SQRT_HALF32 = np.int64(0x3F3504F3)


@jit
def log_f32(x):
    """``np.log`` for float32, in float32 arithmetic (twice the lanes), within 1 ulp: the
    float64 scheme with a degree-3 series polynomial."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = np.int64(f32_bits(x))
    sub = b < _MIN_NORMAL32
    bs = np.int64(f32_bits(np.float32(b))) if sub else b  # x * 2**149 exactly (as _reduce)
    special = (b <= 0) or (b >= _INF32)
    bs = _ONE32 if special else bs
    e = (bs - _SQRT_HALF32) >> 23
    f = bits_f32(bs - (e << 23)) - _F32(1.0)
    e = (e - 149) if (sub and not special) else e
    ef = _F32(e)
    s = f / (_F32(2.0) + f)
    z = s * s
    hfsq = _F32(0.5) * f * f
    lo = s * (hfsq + z * horner(_LOG_F32, z)) - hfsq
    y = fma(ef, _LN2_HI_F32, f + fma(ef, _LN2_LO_F32, lo))
    if special:  # a select: NumPy's value and flags at 0, below 0, inf and NaN
        ax = bits_f32((b & np.int64(0x7FFFFFFF)) if special else _ONE32)
        at_zero = _F32(-1.0) / bits_f32(min(np.int64(f32_bits(ax)), _ONE32))
        y = at_zero if (b & np.int64(0x7FFFFFFF)) == 0 else (np.sqrt(x) if b < 0 else x)
    return y


@jit
def log2_f32(x):
    return np.float32(log2_f64(np.float64(x)))


@jit
def log10_f32(x):
    return np.float32(log10_f64(np.float64(x)))


@jit
def log1p_f32(x):
    return np.float32(log1p_f64(np.float64(x)))
