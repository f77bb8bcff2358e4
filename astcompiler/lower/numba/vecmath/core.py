"""Generic njit pieces of the vectorizable math functions: classification on bits, polynomial
evaluation, scaling by ``2**k``, error-free transformations.

Everything here is branch-free once LLVM has turned the conditional expressions into selects,
and is inlined into the caller (small njit functions): a loop calling these vectorizes.
"""

from __future__ import annotations

import numba
import numpy as np

from .bits import bits_f64, f64_bits, fma

ABS = np.int64(0x7FFFFFFFFFFFFFFF)
SIGN = np.int64(-0x8000000000000000)
INF_BITS = np.int64(0x7FF0000000000000)
ONE_BITS = np.int64(0x3FF0000000000000)
SHIFTER = 6755399441055744.0  # 1.5 * 2**52: x + SHIFTER rounds x to an integer (|x| < 2**51)

# numba-level inlining: LLVM's inliner gives up on the larger functions, and one call left in
# a loop body keeps the loop from vectorizing
jit = numba.njit(cache=True, error_model="numpy", inline="always")


@jit
def horner(coeffs, x):
    """``sum(c * x**i)`` for coefficients listed highest degree first (fused multiply-adds)."""
    p = coeffs[0]
    for c in coeffs[1:]:
        p = fma(p, x, c)
    return p


@jit
def pow2(k):
    """``2.0**k`` for an int64 ``k`` in [-1022, 1023] (exact, built from bits)."""
    return bits_f64((k + 1023) << 52)


@jit
def scale(y, k):
    """``y * 2**k`` rounded once, for |k| <= 2044 (two exact steps, then one rounding): overflow
    and underflow (with their flags) happen exactly where the true product's do."""
    k1 = k >> 1
    return (y * pow2(k1)) * pow2(k - k1)


@jit
def two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e == a + b`` exactly."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


@jit
def abs_bits(x):
    return f64_bits(x) & ABS


@jit
def with_sign(magnitude, sign_of):
    """``magnitude`` with the sign bit of ``sign_of`` (on bits: no float compare)."""
    return bits_f64((f64_bits(magnitude) & ABS) | (f64_bits(sign_of) & SIGN))


__all__ = ["horner", "pow2", "scale", "two_sum", "with_sign", "abs_bits", "jit", "fma",
           "f64_bits", "bits_f64", "ABS", "SIGN", "INF_BITS", "ONE_BITS", "SHIFTER"]
