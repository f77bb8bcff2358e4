"""tanh, sinh, cosh (float64; float32 through float64), from ``expm1`` and ``exp``.

``tanh(|x|) = u / (u + 2)`` with ``u = expm1(2|x|)``, the quotient corrected once from its exact
residual (fma); 1 above 22, ``x`` below 2**-27. ``sinh(|x|) = (u + u/(u + 1)) / 2`` with
``u = expm1(|x|)`` up to 22, ``exp(|x|) / 2`` above (scaled inside ``exp``: no early overflow);
``cosh = exp(|x|)/2 + 1/(2 exp(|x|))``.
"""

from __future__ import annotations

import numpy as np

from .bits import prefer_wide_vectors
from .coefficients import SINH
from .core import ABS, INF_BITS, SIGN, bits_f64, f64_bits, fma, horner, jit, two_sum
from .expfamily import exp_scaled_f64, expm1_f64

_TINY = np.int64(0x3E40000000000000)  # 2**-27
_BIG = np.int64(0x4036000000000000)  # 22.0
_ONE = np.int64(0x3FF0000000000000)


@jit
def _with_sign_of(y, b):
    return bits_f64(f64_bits(y) | (b & SIGN))


@jit
def tanh_f64(x):
    """``np.tanh`` for float64, within 1.5 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    ab = b & ABS
    mid = ab < _BIG
    a = bits_f64(ab if (mid and ab >= _TINY) else np.int64(0))
    u = expm1_f64(2.0 * a)
    d, d_err = two_sum(u, 2.0)
    q = u / d
    q = q + (fma(-q, d, u) - q * d_err) / d
    y = q if mid else 1.0
    y = _with_sign_of(y, b)
    y = x if ab < _TINY else y
    return x if ab > INF_BITS else y  # NaN


@jit
def sinh_f64(x):
    """``np.sinh`` for float64, within 1.5 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    ab = b & ABS
    mid = ab < _BIG
    u = expm1_f64(bits_f64(ab if (mid and ab >= _TINY) else np.int64(0)))
    small = 0.5 * (u + u / (u + 1.0))
    a = bits_f64(ab if _TINY <= ab < _ONE else np.int64(0))
    z = a * a
    small = fma(a * z, horner(SINH, z), a) if ab < _ONE else small
    large = exp_scaled_f64(bits_f64(np.int64(0) if mid else ab), -1)
    y = _with_sign_of(small if mid else large, b)
    y = x if ab < _TINY else y
    return x if ab >= INF_BITS else y


@jit
def cosh_f64(x):
    """``np.cosh`` for float64, within 1.5 ulp."""
    prefer_wide_vectors()  # zmm where AVX-512 is tuned for ymm
    b = f64_bits(x)
    ab = b & ABS
    mid = ab < _BIG
    a = bits_f64(ab)
    e = exp_scaled_f64(a, -1)  # exp(|x|) / 2
    y = (e + 0.25 / e) if mid else e
    return a if ab >= INF_BITS else y


@jit
def tanh_f32(x):
    return np.float32(tanh_f64(np.float64(x)))


@jit
def sinh_f32(x):
    return np.float32(sinh_f64(np.float64(x)))


@jit
def cosh_f32(x):
    return np.float32(cosh_f64(np.float64(x)))
