"""Native float32 expm1, log1p, tanh, sin, cos: float32 polynomials (16 lanes per 512-bit
vector, against 8 for the float64 functions these replace).

* ``expm1``: ``x = k*ln2 + r``, ``expm1(r) = r + r**2 * EXP_F32(r)``, then
  ``2**k * expm1(r) + (2**k - 1)`` in one fma (``2**k * (1 + expm1(r)) - 1`` below k = -1,
  two exact scalings above k = 24: overflow where the true result's is).
* ``log1p``: ``u = 1 + x`` rounded, ``log(u)`` as ``logfamily``'s float32 log, plus the rounding
  error of ``u`` divided by ``u``.
* ``tanh``: ``x + x**3 * TANH_F32(x*x)`` up to 0.625, ``1 - 2/(exp(2|x|) + 1)`` above.
* ``sin``/``cos``: Payne-Hanek for every finite argument, exact and branch-free in float64:
  ``x = m * 2**e`` with a 24-bit integer ``m``; ``x * 2/pi`` modulo 4 is ``m * (A + B + C)``
  with A, B, C consecutive 28-bit windows of ``2/pi * 2**e`` (``TABLE32``, read by exponent),
  each product exact in float64. The reduced ``r`` is rounded to float32 with its tail, and
  the float32 polynomials take the tail as a first-order correction.

Arithmetic never sees a value picked by a select with a constant arm: LLVM rewrites
``op(select(c, v, K))`` as ``select(c, op(v), op(K))``, computing ``op(v)`` on every lane (and
raising its flags there). Inputs are clamped with integer min/max instead.
"""

from __future__ import annotations

import numpy as np

from .bits import bits_f32, f32_bits, prefer_wide_vectors
from .coefficients import (COS_F32, EXP_F32, LN2_HI_LO_F32, LOG2E_F32, LOG_F32, SIN_F32,
                           TANH_F32, TWO_OVER_PI_BITS, TWO_OVER_PI_HEX)
from .core import fma, horner, jit, two_sum

_F32 = np.float32
_EXP = tuple(_F32(c) for c in EXP_F32)
_LOG = tuple(_F32(c) for c in LOG_F32)
_SIN = tuple(_F32(c) for c in SIN_F32)
_COS = tuple(_F32(c) for c in COS_F32)
_TANH = tuple(_F32(c) for c in TANH_F32)
_LN2_HI, _LN2_LO = (_F32(c) for c in LN2_HI_LO_F32)
_LOG2E = _F32(LOG2E_F32)
_SHIFTER = _F32(12582912.0)  # 1.5 * 2**23
_ABS = np.int32(0x7FFFFFFF)
_SIGN = np.int32(-0x80000000)
_INF = np.int32(0x7F800000)
_ONE = np.int32(0x3F800000)
_MIN_NORMAL = np.int32(0x00800000)
_SQRT_HALF = np.int32(0x3F3504F3)


@jit
def _pow2(k):
    """``2.0**k`` (float32) for an integer k in [-126, 127]."""
    return bits_f32(np.int32((k + 127) << 23))


@jit
def _with_sign(magnitude, b):
    return bits_f32(f32_bits(magnitude) | (b & _SIGN))


@jit
def _expm1_reduced(v):
    """``(k, expm1(r))`` with ``v = k*ln2 + r``, |r| <= ln2/2, for finite |v| < 128."""
    t = fma(v, _LOG2E, _SHIFTER)
    k = t - _SHIFTER
    r = fma(-k, _LN2_HI, v)  # exact: k*LN2_HI has 8 + 16 bits
    r = fma(-k, _LN2_LO, r)
    return np.int32(f32_bits(t) - f32_bits(_SHIFTER)), fma(r * r, horner(_EXP, r), r)


_EXPM1_TINY = np.int32(0x33000000)  # 2**-25: expm1(x) rounds to x
_EXPM1_HI = np.int32(0x42B40000)  # 90.0: past overflow
_EXPM1_LO = np.int32(0x418C0000)  # 17.5: expm1(-17.5) rounds to -1


@jit
def expm1_f32(x):
    """``np.expm1`` for float32, in float32 arithmetic, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f32_bits(x)
    ab = b & _ABS
    special = ab >= _INF
    bound = _ONE if special else (_EXPM1_LO if b < 0 else _EXPM1_HI)
    v = bits_f32(max(min(ab, bound), _EXPM1_TINY) | (b & _SIGN))  # a clamp: finite, not tiny
    ki, em = _expm1_reduced(v)
    twok = _pow2(max(min(ki, np.int32(24)), np.int32(-26)))
    mid = fma(twok, em, twok - _F32(1.0))  # 2**k - 1 exact for |k| <= 24
    low = fma(twok, _F32(1.0) + em, _F32(-1.0))
    k1 = ki >> 1
    high = ((_F32(1.0) + em) * _pow2(k1)) * _pow2(ki - k1)  # overflows where expm1 does
    y = high if ki > 24 else (low if ki < -1 else mid)
    y = x if ab < _EXPM1_TINY else y
    return ((_F32(-1.0) if b < 0 else x) if ab == _INF else x) if special else y


@jit
def _log_parts(ub):
    """``(e, f, lo)``: ``log(u) = e*ln2 + f + lo`` for the bits ``ub`` of a positive normal u."""
    e = (ub - _SQRT_HALF) >> 23
    f = bits_f32(ub - (e << 23)) - _F32(1.0)
    s = f / (_F32(2.0) + f)
    z = s * s
    hfsq = _F32(0.5) * f * f
    return _F32(e), f, s * (hfsq + z * horner(_LOG, z)) - hfsq


_LOG1P_TINY = np.int32(0x33800000)  # 2**-24: log1p(x) rounds to x
_HUGE = np.int32(0x7E800000)  # 2**126: above it 1 + x is x


@jit
def log1p_f32(x):
    """``np.log1p`` for float32, in float32 arithmetic, within 1 ulp: ``u = 1 + x`` rounded,
    its exact error ``c`` carried as ``c / u``."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f32_bits(x)
    ab = b & _ABS
    u = _F32(1.0) + x
    ub = f32_bits(u)
    special = (ub <= 0) or (ub >= _INF)  # x <= -1, inf, NaN
    xf = bits_f32(min(ab, _HUGE) | (b & _SIGN))  # finite: 1 + xf rounds close
    c = xf - ((_F32(1.0) + xf) - _F32(1.0))
    us = min(max(ub, _MIN_NORMAL), np.int32(0x7F7FFFFF))  # u clamped to a positive normal
    e, f, lo = _log_parts(us)
    y = fma(e, _LN2_HI, f + fma(e, _LN2_LO, lo + c / bits_f32(us)))
    y = x if ab < _LOG1P_TINY else y
    if special:  # a select: NumPy's value and flags at -1 (pole), below -1, inf and NaN
        zero = bits_f32(min(max(ub, np.int32(0)), _ONE))  # 0 exactly at u == 0
        at_pole = _F32(-1.0) / zero
        y = at_pole if ub == 0 else (np.sqrt(u) if ub < 0 else u)
    return y


_TANH_TINY = np.int32(0x39800000)  # 2**-12: tanh(x) rounds to x
_TANH_MID = np.int32(0x3F200000)  # 0.625
_TANH_BIG = np.int32(0x41200000)  # 10.0: tanh rounds to 1


@jit
def tanh_f32(x):
    """``np.tanh`` for float32, in float32 arithmetic, within 1.5 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f32_bits(x)
    ab = b & _ABS
    a = bits_f32(max(min(ab, _TANH_MID), _TANH_TINY))
    z = a * a
    small = fma(a * z, horner(_TANH, z), a)
    ki, em = _expm1_reduced(_F32(2.0) * bits_f32(max(min(ab, _TANH_BIG), _TANH_MID)))
    big = _F32(1.0) - _F32(2.0) / fma(_pow2(ki), em, _pow2(ki) + _F32(1.0))  # e**2a + 1
    # blended, not selected: a select arm's inputs would sink below its condition, which
    # undoes the clamps (a*a underflows at tiny x, overflows at huge x, on every lane)
    m = _F32(ab < _TANH_MID)
    t = _F32(ab < _TANH_TINY)
    y = _with_sign(fma(small, m, big * (_F32(1.0) - m)), b)  # both finite: exact
    xt = bits_f32(min(ab, _TANH_TINY) | (b & _SIGN))  # x at tiny x, finite elsewhere
    y = fma(xt, t, y * (_F32(1.0) - t))  # x for tiny x: x + 0 or 0 + y, exact
    y = x if (ab & _ABS) == 0 else y  # keeps -0.0
    return x if ab > _INF else y  # NaN


def _table32() -> np.ndarray:
    """``TABLE32[eb] = (A, B, C)``: 28-bit windows of ``2/pi * 2**(eb - 150)`` with weights
    2**1..2**-26, 2**-27..2**-54, 2**-55..2**-82 (bits of weight 4 and above make multiples
    of 4 with any 24-bit integer: dropped)."""
    bits = int(TWO_OVER_PI_HEX, 16)
    n = TWO_OVER_PI_BITS
    table = np.zeros((256, 3), np.float64)
    for eb in range(256):
        shift = eb - 150  # V = 2/pi * 2**shift: V's weight 2**w is 2/pi's bit j = shift - w
        for i, top in enumerate((1, -27, -55)):
            first, last = shift - top, shift - (top - 27)  # bits j of 2/pi, weight 2**-j
            if last < 1:
                continue
            first = max(first, 1)
            word = (bits >> (n - last)) & ((1 << (last - first + 1)) - 1)
            table[eb, i] = float(word) * 2.0 ** (shift - last)
    return table


TABLE32 = _table32()
_TRIG_TINY = np.int32(0x39800000)  # 2**-12: sin(x) rounds to x, cos(x) to 1
_HALF_PI = 1.5707963267948966


@jit
def _mod4(v):
    return v - 4.0 * np.rint(v * 0.25)


@jit
def _reduce(ab):
    """``(r, r_lo, q)`` for the bits ``ab`` of a finite |x| (float32): ``|x| = (4n + q)*pi/2 + r``
    with |r| <= pi/4 (float32 ``r`` and its float32 tail)."""
    eb = ab >> 23
    m = np.float64((ab & np.int32(0x7FFFFF)) | (np.int32(0x800000) if eb > 0 else np.int32(0)))
    row = min(max(eb, np.int32(1)), np.int32(254))  # subnormals share the smallest row
    a = TABLE32[row, 0]
    b = TABLE32[row, 1]
    c = TABLE32[row, 2]
    hi, lo = two_sum(_mod4(m * a), m * b)  # every product exact
    k = np.rint(hi)
    f, fe = two_sum(hi - k, lo + m * c)
    r = (f + fe) * _HALF_PI
    r32 = np.float32(r)
    return r32, np.float32(r - np.float64(r32)), np.int64(k) & 3


@jit
def _sin_poly(r, r_lo, z):
    return r + fma(r * z, horner(_SIN, z), r_lo)


@jit
def _cos_poly(r, r_lo, z):
    hz = _F32(0.5) * z
    w = _F32(1.0) - hz
    return w + (((_F32(1.0) - w) - hz) + fma(z * z, horner(_COS, z), -r * r_lo))


@jit
def _square_underflow(ab):
    """0, raising *underflow* where ``x * x`` underflows in float32 (NumPy's float32 sin and
    cos do for |x| below about 1e-19): a clamp, no select."""
    t = bits_f32(min(ab, np.int32(0x20000000)))  # 2**-63
    t = t * t
    return t - t


@jit
def sin_f32(x):
    """``np.sin`` for float32, in float32 arithmetic after an exact reduction, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f32_bits(x)
    ab = b & _ABS
    r, r_lo, q = _reduce(min(ab, np.int32(0x7F7FFFFF)))
    z = r * r
    y = _cos_poly(r, r_lo, z) if (q & 1) else _sin_poly(r, r_lo, z)
    y = bits_f32(f32_bits(y) ^ _SIGN) if (((q & 2) != 0) != (b < 0)) else y
    y = (x - _square_underflow(ab)) if ab < _TRIG_TINY else y  # x - 0: keeps -0.0
    return (x - x) if ab >= _INF else y


@jit
def cos_f32(x):
    """``np.cos`` for float32, in float32 arithmetic after an exact reduction, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f32_bits(x)
    ab = b & _ABS
    r, r_lo, q = _reduce(min(ab, np.int32(0x7F7FFFFF)))
    z = r * r
    y = _sin_poly(r, r_lo, z) if (q & 1) else _cos_poly(r, r_lo, z)
    y = bits_f32(f32_bits(y) ^ _SIGN) if ((q + 1) & 2) != 0 else y
    y = (_F32(1.0) + _square_underflow(ab)) if ab < _TRIG_TINY else y
    return (x - x) if ab >= _INF else y


__all__ = ["expm1_f32", "log1p_f32", "tanh_f32", "sin_f32", "cos_f32", "TABLE32"]
