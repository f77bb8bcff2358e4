"""Regenerate the Chebyshev coefficients of ``astcompiler.nn.functional.erf`` (needs mpmath).

For z in [0.5, 6], ``erfc(z) = exp(-z*z + s(v)) / (z + 2)`` where ``u = (z - 2) / (z + 2)`` maps
[0.5, 6] onto [-0.6, 0.5], ``v = (2u + 0.1) / 1.1`` maps that onto [-1, 1], and ``s`` is a degree-18
Chebyshev series fitted here by least squares at 400 Chebyshev nodes to 40-digit values of
``log(erfc(z) * exp(z*z) * (z + 2))``. Run: ``python tests/nn/make_erf_coefficients.py``.
"""

from __future__ import annotations

import mpmath
import numpy as np

DEGREE, NODES, K, LO, HI = 18, 400, 2, -0.6, 0.5


def target(u: float) -> float:
    """log(erfc(z) * exp(z^2) * (z + K)) at z = K (1 + u) / (1 - u), in 40-digit arithmetic."""
    mpmath.mp.dps = 40
    z = K * (1 + mpmath.mpf(u)) / (1 - mpmath.mpf(u))
    return float(mpmath.log(mpmath.erfc(z) * mpmath.exp(z * z) * (z + K)))


def coefficients() -> np.ndarray:
    v = np.cos(np.pi * (np.arange(NODES) + 0.5) / NODES)
    u = LO + (v + 1) * (HI - LO) / 2
    return np.polynomial.chebyshev.chebfit(v, [target(x) for x in u], DEGREE)


if __name__ == "__main__":
    print("_ERFC_CHEBYSHEV = (")
    for c in coefficients():
        print(f"    {float(c)!r},")
    print(")")
