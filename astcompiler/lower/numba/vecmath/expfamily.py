"""exp, exp2, expm1 (float64; float32 through float64).

Reduction: ``x = k*ln2 + r`` with ``|r| <= ln2/2`` (``k`` by the shifter trick, ``r`` by two
fused multiply-adds with ln2 split so that ``k*LN2_HI`` is exact), a polynomial for ``exp(r)``,
then ``2**k`` applied in two exact steps and one rounding (``core.scale``): overflow to inf and
underflow to 0 (and through the subnormals) happen where the true result's do, raising NumPy's
flags. Inputs are classified on their bits (no float compares, which would signal *invalid* on a
NaN); inf and NaN lanes compute on 0 and take their result by a select.
"""

from __future__ import annotations

import numpy as np

from .bits import prefer_wide_vectors
from .coefficients import EXP, EXP2, LN2_HI_LO, LOG2E
from .core import (ABS, INF_BITS, SHIFTER, SIGN, bits_f64, f64_bits, fma, horner, jit, pow2, scale,
                   two_sum)

_CLAMP = np.int64(0x4087700000000000)  # 750.0: past overflow and underflow
_CLAMP2 = np.int64(0x4091300000000000)  # 1100.0 (exp2)
_TINY = np.int64(0x3C90000000000000)  # 2**-54: exp(x) rounds to 1 + x
_NEG_INF = np.int64(-0x10000000000000)  # bits of -inf
_F32_MIN_NORMAL = np.int64(0x3810000000000000)  # 2**-126 as float64 bits
LN2_HI, LN2_LO = LN2_HI_LO


@jit
def exp_f64(x):
    """``np.exp`` for float64: summed in double-double and rounded once (measured 0.56 ulp),
    rounded twice where the result is subnormal (within 1 ulp there)."""
    return exp_scaled_f64(x, 0)


@jit
def exp_scaled_f64(x, extra):
    """``exp(x) * 2**extra`` rounded once (``extra`` a small int: sinh and cosh use -1)."""
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
    prod = k * LN2_LO
    r = hi - prod
    r_lo = (hi - r) - prod  # r + r_lo == hi - k*LN2_LO up to the product's rounding
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
    twok = bits_f64(((np.int64(0) if big else ki) + 1023) << 52)
    s, e = two_sum(twok - 1.0, twok * r)  # 2**k - 1 exact for |k| <= 53
    y = s + (e + twok * tail)
    large = scale(1.0 + (r + tail), ki)
    y = (-1.0 if b < 0 else large) if big else y
    y = x if tiny else y
    return (-1.0 if b == _NEG_INF else x) if special else y


@jit
def exp_f32(x):
    """``np.exp`` for float32: the float64 function, rounded once more (within 0.5 ulp + 2**-29);
    a subnormal input raises *underflow*, as NumPy's float32 exp does."""
    b = f64_bits(np.float64(x)) & ABS
    t = x * np.float32(1.0000001) if b < _F32_MIN_NORMAL else np.float32(0.0)
    return np.float32(exp_f64(np.float64(x))) + (t - t)


@jit
def exp2_f32(x):
    return np.float32(exp2_f64(np.float64(x)))


@jit
def expm1_f32(x):
    return np.float32(expm1_f64(np.float64(x)))
