"""sin, cos, tan (float64; float32 through float64), for every finite argument.

Reduction (Payne-Hanek, branch-free): ``x = 2**e * m`` with ``m`` in [1, 2); ``x * 2/pi`` modulo
4 is ``sum(m * C[e, i])`` where ``C[e]`` are four 53-bit windows of the bits of 2/pi starting
where ``x``'s bits stop making multiples of 4 (``TABLE``, built from ``TWO_OVER_PI_HEX``). Each
product is split exactly (``fma``), the large ones are reduced modulo 4 exactly, and the rest
is summed error-free: the quadrant ``q`` and ``r = (x*2/pi - k) * pi/2`` come out as a
double-double ``r_hi + r_lo`` accurate to about 2**-150 absolute, for any exponent. (The
closest a float64 comes to a multiple of pi/2 is about 2**-61, so ``r`` keeps full relative
precision.) The table is read with a gather: the loop still vectorizes.

Then ``sin(r)``/``cos(r)`` polynomials on |r| <= pi/4 take the low part as a first-order
correction. |x| < 2**-27 gives ``x`` (sin, tan) or 1 (cos); inf gives NaN with *invalid*
(``x - x``), NaN itself.
"""

from __future__ import annotations

import numpy as np

from .bits import prefer_wide_vectors
from .coefficients import COS, HALF_PI_HI_LO, SIN, TAN, TWO_OVER_PI_BITS, TWO_OVER_PI_HEX
from .core import ABS, INF_BITS, SIGN, bits_f64, f64_bits, fma, horner, jit, two_sum


def _table() -> np.ndarray:
    """``C[e, i] = 2**e * (bits j0+53i .. j0+53i+52 of 2/pi)``, ``j0 = e - 53``, e in [0, 1023]."""
    bits = int(TWO_OVER_PI_HEX, 16)
    n = TWO_OVER_PI_BITS
    mask = (1 << 53) - 1
    table = np.zeros((1024, 4), np.float64)
    for e in range(1024):
        for i in range(4):
            last = e - 53 + 53 * i + 52  # the window's last bit (weight 2**-last)
            shift = n - last
            word = (bits >> shift) & mask if shift >= 0 else (bits << -shift) & mask
            table[e, i] = float(word) * 2.0 ** (e - last)
    return table


TABLE = _table()
_TINY = np.int64(0x3E40000000000000)  # 2**-27
_ONE = np.int64(0x3FF0000000000000)
_MIN_NORMAL = np.int64(0x0010000000000000)
_ONE_PLUS = 1.0000000000000002  # 1 + 2**-52: inexact on any subnormal (raises underflow)
_SMALL = np.int64(0x3C00000000000000)  # 2**-63 (float32 inputs whose square is tiny)
P1, P2 = HALF_PI_HI_LO


@jit
def _mod4(v):
    """``v`` minus the nearest multiple of 4 (exact)."""
    return v - 4.0 * np.rint(v * 0.25)


@jit
def reduce_half_pi(ab):
    """``(r_hi, r_lo, q)`` for the bits ``ab`` of a positive finite float64 ``x``:
    ``x = (4n + q) * pi/2 + r_hi + r_lo`` with |r| <= pi/4 (about)."""
    ex = (ab >> 52) - 1023
    ei = min(max(ex, np.int64(0)), np.int64(1023))
    m = bits_f64(ab - (ei << 52))
    c0 = TABLE[ei, 0]
    c1 = TABLE[ei, 1]
    c2 = TABLE[ei, 2]
    c3 = TABLE[ei, 3]
    h0 = m * c0
    l0 = fma(m, c0, -h0)
    h1 = m * c1
    l1 = fma(m, c1, -h1)
    h2 = m * c2
    l2 = fma(m, c2, -h2)
    h3 = m * c3
    s, e1 = two_sum(_mod4(h0), _mod4(l0))
    s, e2 = two_sum(s, _mod4(h1))
    k = np.rint(s)
    s = s - k  # exact
    t, t1 = two_sum(e1, e2)
    t, t2 = two_sum(t, l1)
    t, t3 = two_sum(t, h2)
    f, fe = two_sum(s, t)
    fe = fe + (((t1 + t2) + t3) + (l2 + h3))
    r_hi = f * P1
    r_lo = fma(f, P1, -r_hi) + fma(fe, P1, f * P2)
    return r_hi, r_lo, np.int64(k) & 3


# Cody-Waite reduction for |x| < FAST_BOUND (``reduce_half_pi_small``): pi/2 as three 27-bit
# parts (k * part exact for |k| < 2**26) and a 53-bit fourth; what is left of pi/2 is 2**-141
FAST_BOUND = 32768.0  # 2**15: |k| <= 20861
_FAST_BITS = np.int64(0x40E0000000000000)  # bits of FAST_BOUND
CW1, CW2, CW3, CW4 = 1.570796325802803, 9.920935739593517e-10, 5.721188709663575e-18, \
    1.6446256936324258e-26


@jit
def reduce_half_pi_small(ax):
    """``(r_hi, r_lo, q)`` as ``reduce_half_pi`` for a positive ``ax`` below ``FAST_BOUND``:
    ``t = ax - k*CW1`` is exact (Sterbenz), the next two parts are subtracted error-free and the
    fourth into the low part: ``r_hi + r_lo`` within about 2**-120 absolute of ``ax - k*pi/2``."""
    k = np.rint(ax * 0.6366197723675814)
    t = ax - k * CW1
    s, e1 = two_sum(t, -k * CW2)
    s, e2 = two_sum(s, -k * CW3)
    lo = (e1 + e2) - k * CW4
    r_hi = s + lo
    r_lo = lo - (r_hi - s)
    return r_hi, r_lo, np.int64(k) & 3


@jit
def trig_big_f64(x):
    """Whether ``sin_fast_f64``/``cos_fast_f64`` do not cover ``x``: finite, ``|x| >=
    FAST_BOUND`` (a kernel reruns such a block with ``sin_f64``/``cos_f64``)."""
    ab = f64_bits(x) & ABS
    return (ab >= _FAST_BITS) & (ab < INF_BITS)


@jit
def _sin_kernel(r, r_lo, z):
    return r + fma(r * z, horner(SIN, z), r_lo * (1.0 - 0.5 * z))


@jit
def _cos_kernel(r, r_lo, z):
    hz = 0.5 * z
    w = 1.0 - hz
    z_err = fma(r, r, -z)
    return w + (((1.0 - w) - hz) + (fma(z * z, horner(COS, z), -r * r_lo) - 0.5 * z_err))


@jit
def _prepare(x):
    """``(b, ab, special, tiny, r_hi, r_lo, q, z)`` for sin/cos/tan of ``x``."""
    b = f64_bits(x)
    ab = b & ABS
    special = ab >= INF_BITS
    tiny = ab < _TINY
    fast = ab < _FAST_BITS  # the fast reduction's lanes: the same bits as ``sin_fast_f64``
    p_hi, p_lo, p_q = reduce_half_pi(_ONE if (special or tiny or fast) else ab)
    f_hi, f_lo, f_q = reduce_half_pi_small(bits_f64(_ONE if (tiny or not fast) else ab))
    r_hi = f_hi if fast else p_hi
    r_lo = f_lo if fast else p_lo
    q = f_q if fast else p_q
    return b, special, tiny, r_hi, r_lo, q, r_hi * r_hi


@jit
def _negate_if(y, flag):
    return bits_f64(f64_bits(y) ^ SIGN) if flag else y


@jit
def _prepare_fast(x):
    """``_prepare`` with ``reduce_half_pi_small``; lanes it does not cover reduce 1.0 (their
    result is garbage: ``trig_big_f64``)."""
    b = f64_bits(x)
    ab = b & ABS
    special = ab >= INF_BITS
    tiny = ab < _TINY
    r_hi, r_lo, q = reduce_half_pi_small(bits_f64(_ONE if (tiny or ab >= _FAST_BITS) else ab))
    return b, special, tiny, r_hi, r_lo, q, r_hi * r_hi


@jit
def sin_f64(x):
    """``np.sin`` for float64, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b, special, tiny, r_hi, r_lo, q, z = _prepare(x)
    return _sin_finish(x, b, special, tiny, r_hi, r_lo, q, z)


@jit
def sin_fast_f64(x):
    """``sin_f64`` for |x| < ``FAST_BOUND`` (and inf, NaN): the same polynomials on a
    Cody-Waite reduction, about 3x cheaper; other lanes: garbage, see ``trig_big_f64``."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b, special, tiny, r_hi, r_lo, q, z = _prepare_fast(x)
    return _sin_finish(x, b, special, tiny, r_hi, r_lo, q, z)


@jit
def _sin_finish(x, b, special, tiny, r_hi, r_lo, q, z):
    y = _cos_kernel(r_hi, r_lo, z) if (q & 1) else _sin_kernel(r_hi, r_lo, z)
    y = _negate_if(y, ((q & 2) != 0) != (b < 0))
    ab = b & ABS
    subnormal = 0 < ab < _MIN_NORMAL
    s = bits_f64(ab if subnormal else np.int64(0)) * _ONE_PLUS
    y = x if tiny else y
    y = (x + (s - s)) if subnormal else y  # NumPy's sin raises *underflow* at subnormals
    return (x - x) if special else y


@jit
def cos_f64(x):
    """``np.cos`` for float64, within 1 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b, special, tiny, r_hi, r_lo, q, z = _prepare(x)
    return _cos_finish(x, special, tiny, r_hi, r_lo, q, z)


@jit
def cos_fast_f64(x):
    """``cos_f64`` for |x| < ``FAST_BOUND`` (see ``sin_fast_f64``)."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b, special, tiny, r_hi, r_lo, q, z = _prepare_fast(x)
    return _cos_finish(x, special, tiny, r_hi, r_lo, q, z)


@jit
def _cos_finish(x, special, tiny, r_hi, r_lo, q, z):
    y = _sin_kernel(r_hi, r_lo, z) if (q & 1) else _cos_kernel(r_hi, r_lo, z)
    y = _negate_if(y, ((q + 1) & 2) != 0)
    y = 1.0 if tiny else y
    return (x - x) if special else y


@jit
def tan_f64(x):
    """``np.tan`` for float64, within 1.5 ulp: ``tan(r)`` as a double-double, and
    ``-1/tan(r)`` in odd quadrants with one Newton correction."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b, special, tiny, r_hi, r_lo, q, z = _prepare(x)
    small = fma(r_hi * z, horner(TAN, z), r_lo * (1.0 + z))
    t_hi, t_lo = two_sum(r_hi, small)
    q0 = -1.0 / t_hi
    e = fma(q0, t_hi, 1.0) + q0 * t_lo
    y = fma(q0, e, q0) if (q & 1) else t_hi + t_lo
    y = _negate_if(y, b < 0)
    y = x if tiny else y
    return (x - x) if special else y


@jit
def _square_underflow_f32(x):
    """0, raising *underflow* where ``x * x`` underflows in float32 (as NumPy's float32 sin
    and cos do for |x| below about 1e-19)."""
    t = x * x if (f64_bits(np.float64(x)) & ABS) < _SMALL else np.float32(0.0)
    return t - t


@jit
def sin_f32(x):
    """``np.sin`` for float32: the float64 function, rounded once more."""
    y = np.float32(sin_f64(np.float64(x)))
    return y if (f64_bits(np.float64(x)) & ABS) == 0 else y + _square_underflow_f32(x)


@jit
def cos_f32(x):
    return np.float32(cos_f64(np.float64(x))) + _square_underflow_f32(x)  # cos > 0 near 0


@jit
def tan_f32(x):
    return np.float32(tan_f64(np.float64(x)))
