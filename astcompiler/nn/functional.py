"""NumPy building blocks the layers share. NumPy has no ``erf``: this module provides one.

``erf`` is accurate to about 1e-15 (absolute) in float64, written with NumPy operations only, no
data-dependent control flow and no loop over elements, so a compiler can capture it:

- ``|x| < 0.5``: the Taylor series ``2/sqrt(pi) * sum((-1)^n x^(2n+1) / (n! (2n+1)))``, 13 terms
  (the first omitted term is below 1e-17 relative);
- ``0.5 <= |x| <= 6``: ``erf = 1 - erfc`` with ``erfc(z) = exp(-z^2 + s(v)) / (z + 2)``, where ``s``
  is a degree-18 Chebyshev series in ``v = (2u + 0.1) / 1.1``, ``u = (z - 2) / (z + 2)``, fitted
  to 40-digit values (``tests/nn/make_erf_coefficients.py`` regenerates the coefficients);
- ``|x| > 6``: ``erfc(6) < 1e-16``, so the same formula evaluated at 6 rounds to ``+-1``.

Both branches are evaluated on clipped inputs (no overflow warnings) and chosen with ``np.where``;
NaN propagates. float32 inputs stay float32 (accurate to float32 rounding).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["erf"]

_ERF_TAYLOR = tuple(2.0 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1))
                    for n in range(13))

_ERFC_CHEBYSHEV = (
    0.06092087025470633, -0.36656365074453623, 0.005740295449515013, 0.0018890625258603624,
    -8.203255070465735e-05, -2.5488713966935022e-05, 8.501829788510294e-07,
    4.6908381679897546e-07, 2.445595153715327e-09, -9.093642001594538e-09,
    -5.570613379757026e-10, 1.5376458479169384e-10, 2.2318123629657413e-11,
    -1.5922417503790512e-12, -5.994528746034339e-13, -1.6857149659282612e-14,
    1.0928245851656591e-14, 1.5335273986266921e-15, -2.7140774548101885e-16,
)
_ERFC_HIGH_FIRST = _ERFC_CHEBYSHEV[:0:-1]  # c18 ... c1, for the Clenshaw recurrence


def _erf_small(x: Any) -> Any:
    """The Taylor series for |x| < 0.5 (Horner's rule in x^2)."""
    x2 = x * x
    acc = x2 * 0.0 + _ERF_TAYLOR[-1]
    for c in _ERF_TAYLOR[-2::-1]:
        acc = acc * x2 + c
    return x * acc


def _erfc_mid(z: Any) -> Any:
    """erfc(z) for 0.5 <= z <= 6 from the fitted Chebyshev series (Clenshaw's recurrence)."""
    v = (2.0 * (z - 2.0) / (z + 2.0) + 0.1) / 1.1
    b1 = z * 0.0
    b2 = z * 0.0
    for c in _ERFC_HIGH_FIRST:
        b1, b2 = 2.0 * v * b1 - b2 + c, b1
    s = v * b1 - b2 + _ERFC_CHEBYSHEV[0]
    return np.exp(s - z * z) / (z + 2.0)


def erf(x: Any) -> Any:
    """The error function, element-wise (absolute error about 1e-15 in float64)."""
    a = np.abs(x)
    small = _erf_small(np.minimum(np.maximum(x, -0.5), 0.5))
    large = 1.0 - _erfc_mid(np.minimum(np.maximum(a, 0.5), 6.0))
    return np.where(a < 0.5, small, np.copysign(large, x))
