"""arctan and cbrt (float64; float32 through float64).

``arctan``: |x| is reduced to |t| <= 7/16 by ``atan(x) = atan(c) + atan((x - c)/(1 + c*x))``
with c in {0, 1/2, 1, 3/2, inf} chosen by |x|'s interval (selects, one division), then
``t + t**3 * ATAN(t*t)`` with ``atan(c)`` split in two. ``cbrt``: a first guess from the bits
(the exponent divided by 3), three Halley steps ``t * (t**3 + 2a) / (2t**3 + a)``, subnormals
scaled by 2**54 first, and a last Newton step on the exact residual (fma).
"""

from __future__ import annotations

import numpy as np

from .bits import prefer_wide_vectors
from .coefficients import ATAN, ATAN_HI_LO, PI_HI_LO
from .core import ABS, INF_BITS, SIGN, bits_f64, f64_bits, fma, horner, jit, pow2

_B7_16 = np.int64(0x3FDC000000000000)  # 7/16
_B11_16 = np.int64(0x3FE6000000000000)  # 11/16
_B19_16 = np.int64(0x3FF3000000000000)  # 19/16
_B39_16 = np.int64(0x4003800000000000)  # 39/16
_HUGE = np.int64(0x4410000000000000)  # 2**66: atan rounds to pi/2
_TINY = np.int64(0x3E40000000000000)  # 2**-27: atan rounds to x
(_C0H, _C0L), (_C1H, _C1L), (_C2H, _C2L), (_C3H, _C3L), (_C4H, _C4L) = ATAN_HI_LO


@jit
def _sign_of(y, b):
    return bits_f64(f64_bits(y) | (b & SIGN))


@jit
def _atan_nonnegative(a):
    """``atan(a)`` for ``a >= 0`` below 2**66 (or 0 for a sanitized lane), within 1 ulp."""
    i1 = f64_bits(a) >= _B7_16
    i2 = f64_bits(a) >= _B11_16
    i3 = f64_bits(a) >= _B19_16
    i4 = f64_bits(a) >= _B39_16
    num = (-1.0 if i4 else a - 1.5) if i3 else ((a - 1.0) if i2 else ((2.0 * a - 1.0) if i1 else a))
    den = (a if i4 else 1.0 + 1.5 * a) if i3 else ((a + 1.0) if i2 else ((2.0 + a) if i1 else 1.0))
    c_hi = (_C4H if i4 else _C3H) if i3 else (_C2H if i2 else (_C1H if i1 else _C0H))
    c_lo = (_C4L if i4 else _C3L) if i3 else (_C2L if i2 else (_C1L if i1 else _C0L))
    t = num / den
    z = t * t
    return c_hi + (t + fma(t * z, horner(ATAN, z), c_lo))


@jit
def arctan_f64(x):
    """``np.arctan`` for float64, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    ab = b & ABS
    huge = ab >= _HUGE
    a = bits_f64(np.int64(0) if (ab < _TINY or huge) else ab)  # NaN stays NaN: no flag
    y = _atan_nonnegative(a)
    y = (_C4H + _C4L) if huge else y
    y = _sign_of(y, b)
    y = x if ab < _TINY else y
    return x if ab > INF_BITS else y


_PI_HI, _PI_LO = PI_HI_LO


@jit
def arctan2_f64(y, x):
    """``np.arctan2`` for float64, within 1.5 ulp: ``atan(min/max)`` of the magnitudes, placed in
    its octant (``c + s*atan`` with c in {0, pi/2, pi} split in two), C99's special cases.

    The quotient's operands are clamped with integer min/max, not selected: LLVM turns a
    division of two selects on one condition into a select of two divisions, which would
    compute (and flag) 0/0 or inf/inf in the discarded one."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    by = f64_bits(y)
    bx = f64_bits(x)
    ay = by & ABS
    ax = bx & ABS
    nan = (ay > INF_BITS) or (ax > INF_BITS)
    swap = ay > ax
    num_b = min(ay, ax)
    den_b = max(ay, ax)
    negative_x = bx < 0
    offset = swap or negative_x  # the result is c + s*atan with c != 0: a tiny atan vanishes
    far = (den_b >> 52) - (num_b >> 52) > 60
    num_b = np.int64(0) if (den_b >= INF_BITS or (offset and far)) else num_b
    den_b = max(min(den_b, _MAX_FINITE), np.int64(1))
    t = bits_f64(num_b) / bits_f64(den_b)
    small = f64_bits(t) < _TINY
    a = _atan_nonnegative(0.0 if small else t)
    subnormal = 0 < f64_bits(t) < _MIN_NORMAL  # NumPy raises underflow for a subnormal result
    s = t * 1.0000000000000002
    a = (t + (s - s) if subnormal else t) if small else a
    c_hi = _C4H if swap else (_PI_HI if negative_x else 0.0)
    c_lo = _C4L if swap else (_PI_LO if negative_x else 0.0)
    r = c_hi + (c_lo - a if swap != negative_x else c_lo + a)
    both_inf = (ay == INF_BITS) and (ax == INF_BITS)
    r = (_THREE_QUARTER_PI if negative_x else _QUARTER_PI) if both_inf else r
    r = _sign_of(r, by)
    return (x if ax > INF_BITS else y) if nan else r  # the NaN operand (no arithmetic)


_MAX_FINITE = np.int64(0x7FEFFFFFFFFFFFFF)
_QUARTER_PI = 0.7853981633974483
_THREE_QUARTER_PI = 2.356194490192345


_MIN_NORMAL = np.int64(0x0010000000000000)
_TWO54 = 18014398509481984.0
_CBRT_BIAS = np.int64(682 << 52)  # (1023 - 1023/3) in the exponent field
_THIRD = 1.0 / 3.0
_MANTISSA = np.int64(0x000FFFFFFFFFFFFF)


@jit
def cbrt_f64(x):
    """``np.cbrt`` for float64, within 0.51 ulp: ``|x| = m * 2**(3q)`` with m in [1, 8), the cube
    root of m, times ``2**q`` (exact)."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    ab = b & ABS
    special = (ab == 0) or (ab >= INF_BITS)
    sub = ab < _MIN_NORMAL
    a = bits_f64(np.int64(0x3FF0000000000000) if special else ab)
    ba = f64_bits(a * _TWO54 if sub else a)
    e = (ba >> 52) - (1023 + 54 if sub else 1023)
    q = np.int64(np.floor((np.float64(e) + 0.5) * _THIRD))
    m = bits_f64((ba & _MANTISSA) | ((e - 3 * q + 1023) << 52))  # in [1, 8)
    t = bits_f64(np.int64(np.float64(f64_bits(m)) * _THIRD) + _CBRT_BIAS)
    for _ in range(3):
        t3 = t * t * t
        t = t * ((t3 + 2.0 * m) / (2.0 * t3 + m))
    t2 = t * t  # then one Newton step on the exact residual m - t**3
    t2_lo = fma(t, t, -t2)
    t3 = t2 * t
    t3_lo = fma(t2, t, -t3) + t2_lo * t
    t = t + ((m - t3) - t3_lo) / (3.0 * t2)
    y = _sign_of(t * pow2(q), b)
    return x if special else y


@jit
def arctan_f32(x):
    return np.float32(arctan_f64(np.float64(x)))


@jit
def arctan2_f32(y, x):
    return np.float32(arctan2_f64(np.float64(y), np.float64(x)))


@jit
def cbrt_f32(x):
    return np.float32(cbrt_f64(np.float64(x)))
