"""exp, exp2, expm1 (float64; float32 exp in float32 arithmetic, the others through float64).

Reduction: ``x = k*ln2 + r`` with ``|r| <= ln2/2`` (``k`` by the shifter trick, ``r`` by two
fused multiply-adds with ln2 split so that ``k*LN2_HI`` is exact), a polynomial for ``exp(r)``,
then ``2**k`` applied in two exact steps and one rounding (``core.scale``): overflow to inf and
underflow to 0 (and through the subnormals) happen where the true result's do, raising NumPy's
flags. Inputs are classified on their bits (no float compares, which would signal *invalid* on a
NaN); inf and NaN lanes compute on 0 and take their result by a select.
"""

from __future__ import annotations

import numpy as np

from .bits import bits_f32, f32_bits, prefer_wide_vectors
from .coefficients import EXP, EXP2, EXP_F32, LN2_HI_LO, LN2_HI_LO_F32, LOG2E, LOG2E_F32
from .core import (ABS, INF_BITS, SHIFTER, SIGN, bits_f64, f64_bits, fma, horner, jit,
                   pow2, scale, two_sum)

_CLAMP = np.int64(0x4087700000000000)  # 750.0: past overflow and underflow
_CLAMP2 = np.int64(0x4091300000000000)  # 1100.0 (exp2)
_TINY = np.int64(0x3C90000000000000)  # 2**-54: exp(x) rounds to 1 + x
_NEG_INF = np.int64(-0x10000000000000)  # bits of -inf
LN2_HI, LN2_LO = LN2_HI_LO


@jit
def exp_f64(x):
    """``np.exp`` for float64: summed in double-double and rounded once (measured 0.56 ulp),
    rounded twice where the result is subnormal (within 1 ulp there)."""
    return exp_scaled_f64(x, 0)


@jit
def exp_scaled_f64(x, extra):
    """``exp(x) * 2**extra`` rounded once (``extra`` a small int: sinh and cosh use -1)."""
    return _exp_core(x, 0.0, extra)  # x - 0.0 is x: LLVM drops the subtraction


@jit
def exp_dd_f64(x, lo):
    """``exp(x + lo)`` rounded once, for a double-double argument (``power``): ``lo`` joins
    the reduced argument's low part. ``|lo|`` below ``ulp(x)``; finite ``x``."""
    return _exp_core(x, lo, 0)


@jit
def _exp_core(x, lo, extra):
    """``exp(x + lo) * 2**extra``: the reduction, the polynomial and the scaling."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    ax = b & ABS
    special = ax >= INF_BITS
    tiny = ax < _TINY
    xb = ((b & SIGN) | _CLAMP) if ax > _CLAMP else b
    xs = bits_f64(np.int64(0) if (special or tiny) else xb)
    t = fma(xs, LOG2E, SHIFTER)
    k = t - SHIFTER
    hi = fma(-k, LN2_HI, xs)  # exact: k*LN2_HI has 32 + 11 bits, Sterbenz
    prod = k * LN2_LO - lo
    r = hi - prod
    r_lo = (hi - r) - prod  # r + r_lo == hi - k*LN2_LO + lo up to the product's rounding
    s, e = two_sum(1.0, r)  # exp(r + r_lo) = 1 + r + (r*r*P(r) + r_lo*(1 + r)), one rounding
    y = s + (e + fma(r * r, horner(EXP, r), r_lo * (1.0 + r)))
    y = scale(y, f64_bits(t) - f64_bits(SHIFTER) + extra)
    y = (1.0 + x) * pow2(np.int64(extra)) if tiny else y
    return (0.0 if b == _NEG_INF else x) if special else y


@jit
def exp2_f64(x):
    """``np.exp2`` for float64, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    ax = b & ABS
    special = ax >= INF_BITS
    xb = ((b & SIGN) | _CLAMP2) if ax > _CLAMP2 else b
    xs = bits_f64(np.int64(0) if special else xb)
    t = xs + SHIFTER
    r = xs - (t - SHIFTER)
    y = fma(r, horner(EXP2, r), 1.0)
    y = scale(y, f64_bits(t) - f64_bits(SHIFTER))
    return (0.0 if b == _NEG_INF else x) if special else y


_EXPM1_BIG = np.int64(0x4044000000000000)  # 40.0: expm1(x) == exp(x) in float64 above it


@jit
def expm1_f64(x):
    """``np.expm1`` for float64, within 1 ulp.

    ``expm1(x) = 2**k * (r + tail) + (2**k - 1)`` with the leading sum done exactly (two_sum)
    so that only the last addition rounds; above 40 it is ``2**k * (1 + r + tail)`` (the 1 is
    below the last bit); below -40 it is -1.
    """
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    ax = b & ABS
    special = ax >= INF_BITS
    tiny = ax < _TINY
    big = ax > _EXPM1_BIG
    xb = ((b & SIGN) | _CLAMP) if ax > _CLAMP else b
    xs = bits_f64(np.int64(0) if (special or tiny or (big and b < 0)) else xb)
    t = fma(xs, LOG2E, SHIFTER)
    k = t - SHIFTER
    ki = f64_bits(t) - f64_bits(SHIFTER)
    hi = fma(-k, LN2_HI, xs)  # exact: k*LN2_HI has 32 + 11 bits, Sterbenz
    prod = k * LN2_LO
    r = hi - prod
    r_lo = (hi - r) - prod  # r + r_lo == hi - k*LN2_LO up to the product's rounding
    tail = fma(r * r, horner(EXP, r), r_lo * (1.0 + r))
    twok = bits_f64((min(ki, np.int64(64)) + 1023) << 52)  # a clamp, not a select: no inf
    s, e = two_sum(twok - 1.0, twok * r)  # 2**k - 1 exact for |k| <= 53
    y = s + (e + twok * tail)
    large = scale(1.0 + (r + tail), ki)
    y = (-1.0 if b < 0 else large) if big else y
    y = x if tiny else y
    return (-1.0 if b == _NEG_INF else x) if special else y


_F32 = np.float32
_EXP_F32 = tuple(_F32(c) for c in EXP_F32)
_LN2_HI_F32, _LN2_LO_F32 = (_F32(c) for c in LN2_HI_LO_F32)
_LOG2E_F32 = _F32(LOG2E_F32)
_SHIFTER_F32 = _F32(12582912.0)  # 1.5 * 2**23
_ABS32 = np.int32(0x7FFFFFFF)
_SIGN32 = np.int32(-0x80000000)
_INF32 = np.int32(0x7F800000)
_CLAMP32 = np.int32(0x42DC0000)  # 110.0: past float32 overflow and underflow
_TINY32 = np.int32(0x33000000)  # 2**-25: exp(x) rounds to 1 + x
_NEG_INF32 = np.int32(-0x800000)  # bits of -inf
_MIN_NORMAL32 = np.int32(0x00800000)


@jit
def _pow2_f32(k):
    return bits_f32(np.int32((k + 127) << 23))


@jit
def exp_f32(x):
    """``np.exp`` for float32, in float32 arithmetic (twice the lanes of float64), within 1 ulp:
    the float64 scheme with a degree-5 polynomial and ``2**k`` in two exact steps. A subnormal
    input raises *underflow*, as NumPy's float32 exp does."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f32_bits(x)
    ax = b & _ABS32
    special = ax >= _INF32
    tiny = ax < _TINY32
    xb = ((b & _SIGN32) | _CLAMP32) if ax > _CLAMP32 else b
    xs = bits_f32(np.int32(0) if (special or tiny) else xb)
    t = fma(xs, _LOG2E_F32, _SHIFTER_F32)
    k = t - _SHIFTER_F32
    r = fma(-k, _LN2_HI_F32, xs)  # exact: k*LN2_HI has 8 + 16 bits
    r = fma(-k, _LN2_LO_F32, r)
    y = _F32(1.0) + fma(r * r, horner(_EXP_F32, r), r)
    ki = f32_bits(t) - f32_bits(_SHIFTER_F32)
    k1 = ki >> 1
    y = (y * _pow2_f32(k1)) * _pow2_f32(ki - k1)
    sub = bits_f32(ax if 0 < ax < _MIN_NORMAL32 else np.int32(0)) * _F32(1.0000001)
    y = (_F32(1.0) + x) + (sub - sub) if tiny else y
    return (_F32(0.0) if b == _NEG_INF32 else x) if special else y


@jit
def exp2_f32(x):
    return np.float32(exp2_f64(np.float64(x)))


@jit
def expm1_f32(x):
    return np.float32(expm1_f64(np.float64(x)))
