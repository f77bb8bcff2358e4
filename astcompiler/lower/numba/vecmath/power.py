"""power (``x ** y``, ``np.power``) for float64 and float32 arrays.

``|x|**y = exp(y * log|x|)`` with ``log|x|`` as a double-double accurate to about 2**-68
relative (the product with ``y`` can reach 745 in magnitude, and every bit of its error is
relative error of the result): ``x = 2**e * (1 + f)``, ``s = f/(2+f)`` as a double-double,
``log(1+f) = 2s + 2/3 s**3 + s**5 * POW_LOG(s*s)`` with the ``s**3`` term in double-double,
``e*ln2`` with ln2 split so that ``e*LN2_HI`` is exact. The product ``y * log|x|`` is split
exactly (fma) and its low part joins the exponential's reduced argument
(``expfamily.exp_dd_f64``). float32 computes in float64 with a plain float64 log (its
``y * log x`` is small enough) and rounds once more; kernels keep libm's ``powf`` for float32,
which is faster (``VecFunction.float32_in_kernels``).

NumPy's (C99's) special cases are selects on the bit patterns: ``x**0`` and ``1**y`` are 1 (NaN
too), ``(-1)**inf`` is 1, ``0**y`` is ±0 or ±inf (*divide by zero* for y < 0), ``inf**y``, the
infinite exponents by ``|x|`` against 1, a negative ``x`` with a non-integer ``y`` is NaN
(*invalid*), a negative ``x`` with an odd integer ``y`` negates. Overflow and underflow (and
their flags) happen in the exponential's last scaling, where the true result's do.
"""

from __future__ import annotations

import numpy as np

from .bits import bits_f32, f32_bits, prefer_wide_vectors
from .coefficients import LN2_HI_LO, POW_LOG, TWO_THIRDS_HI_LO
from .core import ABS, INF_BITS, ONE_BITS, SIGN, bits_f64, f64_bits, fma, horner, jit, two_sum
from .expfamily import exp_dd_f64
from .logfamily import log1p_parts

_MIN_NORMAL = np.int64(0x0010000000000000)
_SQRT_HALF = np.int64(0x3FE6A09E667F3BCD)
_Y_CLAMP = np.int64(0x4400000000000000)  # 2**65: |y * log x| > 750 beyond it (x != 1)
_MANTISSA = np.int64(0x000FFFFFFFFFFFFF)
_Y_TINY = np.int64(0x3BD0000000000000)  # 2**-66: |y * log x| < 2**-56, x**y rounds to 1
_P_CLAMP = np.int64(0x4087700000000000)  # 750.0: where exp clamps its argument
_BIT52 = np.int64(1) << 52
_HALF_BITS = np.int64(0x3FE0000000000000)  # 0.5: bit 52 clear
_QUARTER_BITS = np.int64(0x3FD0000000000000)  # 0.25: bit 53 clear
_BIT53 = np.int64(1) << 53
_ONE_PLUS = 1.0000000000000002  # 1 + 2**-52: inexact on any subnormal (raises underflow)
LN2_HI, LN2_LO = LN2_HI_LO
C23_HI, C23_LO = TWO_THIRDS_HI_LO


@jit
def log_dd(bx):
    """``(hi, lo)``: ``log(x)`` as a double-double for the bits ``bx`` of a positive finite x."""
    sub = bx < _MIN_NORMAL
    # a subnormal's bits as an integer, converted: x * 2**1074 exactly (no float multiply,
    # which LLVM would run on every lane: overflow at large x)
    bs = f64_bits(np.float64(bx)) if sub else bx
    e = (bs - _SQRT_HALF) >> 52
    f = bits_f64(bs - (e << 52)) - 1.0  # exact
    ef = np.float64((e - 1074) if sub else e)
    u = 2.0 + f
    u_lo = (2.0 - u) + f  # exact
    u_inv = 1.0 / u  # one division (the slowest step)
    s = f * u_inv
    s_lo = (fma(-s, u, f) - s * u_lo) * u_inv  # s + s_lo = f / (2 + f)
    z = s * s
    z_lo = fma(s, s, -z)
    s3 = z * s
    s3_lo = fma(z, s, -s3) + z_lo * s
    t = s3 * C23_HI  # 2/3 (s + s_lo)**3 as t + t_lo
    t_lo = fma(s3, C23_HI, -t) + (s3 * C23_LO + s3_lo * C23_HI + 2.0 * z * s_lo)
    tail = (s3 * z) * horner(POW_LOG, z)
    h1, l1 = two_sum(ef * LN2_HI, 2.0 * s)  # both exact
    h2, l2 = two_sum(h1, t)
    lo = (l1 + l2) + (fma(ef, LN2_LO, 2.0 * s_lo) + (t_lo + tail))
    hi = h2 + lo
    return hi, (h2 - hi) + lo


@jit
def _integer_parity(ay):
    """``(integer, odd)`` for the bits ``ay`` of a finite ``|y|`` (on bits: no float compare)."""
    ey = (ay >> 52) - 1023
    shift = min(max(np.int64(52) - ey, np.int64(0)), np.int64(62))
    frac = (ay & _MANTISSA) & ((np.int64(1) << shift) - 1)
    integer = (ay == 0) or (ey >= 0 and frac == 0)
    unit = ((ay & _MANTISSA) | (np.int64(1) << 52)) >> shift  # the integer's low bit at shift
    odd = integer and ey >= 0 and ey <= 52 and (unit & 1) == 1
    return integer, odd


@jit
def log_single(bx):
    """``(log(x), 0.0)`` in plain float64 (within 1 ulp) for the bits of a positive finite x:
    enough for float32's power, whose ``y * log x`` stays below 2**7."""
    sub = bx < _MIN_NORMAL
    bs = f64_bits(np.float64(bx)) if sub else bx
    e = (bs - _SQRT_HALF) >> 52
    f = bits_f64(bs - (e << 52)) - 1.0
    ef = np.float64((e - 1074) if sub else e)
    hi, lo = log1p_parts(f)
    return fma(ef, LN2_HI, hi + fma(ef, LN2_LO, lo)), 0.0


@jit
def power_f64(x, y):
    """``np.power`` for float64, within 1 ulp (0.86 measured)."""
    return _power(x, y, True)


@jit
def _power(x, y, double_double):
    """``x ** y`` in float64; ``double_double`` (a constant): the log as a double-double."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    bx = f64_bits(x)
    by = f64_bits(y)
    ax = bx & ABS
    ay = by & ABS
    integer, odd = _integer_parity(ay)
    x_nan = ax > INF_BITS
    y_nan = ay > INF_BITS
    y_inf = ay == INF_BITS
    x_inf = ax == INF_BITS
    x_zero = ax == 0
    negative = bx < 0
    finite_y = not (y_inf or y_nan)
    invalid = negative and not (x_inf or x_zero or x_nan) and finite_y and not integer
    regular = not (x_nan or y_nan or y_inf or x_inf or x_zero or invalid or ay == 0)
    # |x| ** y for the regular lanes; the others compute 1 ** 0
    lx_bits = ax if regular else ONE_BITS
    lx_hi, lx_lo = log_dd(lx_bits) if double_double else log_single(lx_bits)
    yc = bits_f64(min(ay, _Y_CLAMP) | (by & SIGN)) if (regular and ay >= _Y_TINY) else 0.0
    p = yc * lx_hi
    p_lo = fma(yc, lx_hi, -p) + yc * lx_lo
    p_lo = p_lo if (f64_bits(p) & ABS) < _P_CLAMP else 0.0  # exp clamps p there
    r = exp_dd_f64(p, p_lo)
    tiny = bits_f64(min(f64_bits(r) & ABS, _MIN_NORMAL)) * _ONE_PLUS
    r = r - (tiny - tiny)  # *underflow* at every subnormal result, as NumPy's
    r = bits_f64(f64_bits(r) ^ SIGN) if (negative and odd) else r
    # special lanes: NumPy's value, times ``unit``: 1.0 exactly, but ±inf where 0 ** y has a
    # pole (from 1/±0: *divide by zero*) and NaN where x < 0 meets a non-integer y (from
    # sqrt(x): *invalid*). The division and the root run on every lane, on data-dependent
    # powers of two elsewhere (exact), and their product is used on every lane: LLVM would
    # otherwise simplify them under the condition of the one select arm that uses them and
    # then compute that version on all lanes, flagging 1/x or sqrt(x) everywhere.
    y_neg = by < 0
    zero_pole = x_zero and y_neg and ay != 0 and not y_nan
    w = bits_f64(_HALF_BITS | (by & _BIT52))  # 0.5 or 1.0
    v = bits_f64(_QUARTER_BITS | (by & _BIT53))  # 0.25 or 1.0
    v_root_inv = bits_f64(ONE_BITS + (((by & _BIT53) ^ _BIT53) >> 1))  # 1/sqrt(v): 2.0 or 1.0
    unit = (w * (1.0 / (x if zero_pole else w))) * (np.sqrt(x if invalid else v) * v_root_inv)
    big = (ax > ONE_BITS) != y_neg  # the result of an infinite y (or x) is inf, else 0
    inf_y = (1.0 if ax == ONE_BITS else (np.inf if big else 0.0))
    odd_sign = bx & SIGN if odd else np.int64(0)
    pole_sign = (bx & SIGN) ^ odd_sign  # 1/-0 is -inf: negated back for an even y
    zero_x = bits_f64((pole_sign | ONE_BITS) if zero_pole else odd_sign)
    inf_x = bits_f64((np.int64(0) if y_neg else INF_BITS) | odd_sign)
    s = zero_x if x_zero else (inf_y if y_inf else (inf_x if x_inf else 1.0))
    s = (x if x_nan else y) if (x_nan or y_nan) else s  # the NaN operand (x + y: inf - inf)
    s = 1.0 if (ay == 0 or bx == ONE_BITS) else s
    return (r if regular else s) * unit


@jit
def power_f32(x, y):
    """``np.power`` for float32: in float64 with a plain float64 log (``y * log x`` is below
    2**7 in magnitude wherever the result is finite and nonzero: its error stays far below a
    float32 ulp), rounded once (overflow and underflow flags from that rounding)."""
    r = np.float32(_power(np.float64(x), np.float64(y), False))
    tiny = bits_f32(min(f32_bits(r) & _ABS32, _MIN_NORMAL32)) * np.float32(1.0000001)
    return r - (tiny - tiny)  # *underflow* at every subnormal result, as NumPy's


_ABS32 = np.int32(0x7FFFFFFF)
_MIN_NORMAL32 = np.int32(0x00800000)
