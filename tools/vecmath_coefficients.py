"""Compute the polynomial coefficients of ``astcompiler/lower/numba/vecmath`` with mpmath.

Each function's core is a polynomial on a small interval (after range reduction), fitted by
Chebyshev approximation (``mpmath.chebyfit``, near-minimax) at 60 digits and rounded to float64.
The degree is the smallest whose fitting error, weighted by how much the polynomial contributes
to the final result, is below ``2**-60`` relative (float64 evaluation then dominates the error).

Run ``python tools/vecmath_coefficients.py`` to regenerate
``astcompiler/lower/numba/vecmath/coefficients.py`` (written in place).
"""

from __future__ import annotations

import pathlib

import mpmath as mp

mp.mp.dps = 60
TARGET = mp.mpf(2) ** -60
OUT = pathlib.Path(__file__).resolve().parent.parent / "astcompiler/lower/numba/vecmath/coefficients.py"


def _safe(f, small):
    """``f`` with its removable singularity at 0 replaced by a series value near 0."""
    def g(t):
        t = mp.mpf(t)
        if abs(t) < mp.mpf(10) ** -20:
            return small(t)
        return f(t)
    return g


def fit(name: str, f, interval, weight, doc: str, max_terms: int = 30, target=TARGET) -> tuple:
    """(name, coefficients highest degree first, weighted error, doc) of the smallest fit
    meeting ``target`` (float32 polynomials: 2**-30)."""
    for terms in range(2, max_terms):
        poly, err = mp.chebyfit(f, interval, terms, error=True)
        if err * weight < target:
            return name, [float(c) for c in poly], float(err * weight), doc
    raise RuntimeError(f"{name}: no fit under {max_terms} terms")


LN2 = mp.log(2)
HALF_PI = mp.pi / 2
FITS = [
    (fit("EXP", _safe(lambda r: (mp.exp(r) - 1 - r) / r ** 2, lambda r: mp.mpf(1) / 2 + r / 6),
         [-LN2 / 2 * 1.01, LN2 / 2 * 1.01], (LN2 / 2) ** 2,
         "exp(r) = 1 + r + r**2 * EXP(r), |r| <= ln2/2 (also expm1)"), ),
    (fit("EXP_F32", _safe(lambda r: (mp.exp(r) - 1 - r) / r ** 2, lambda r: mp.mpf(1) / 2 + r / 6),
         [-LN2 / 2 * 1.01, LN2 / 2 * 1.01], (LN2 / 2) ** 2,
         "float32 arithmetic: exp(r) = 1 + r + r**2 * EXP_F32(r), |r| <= ln2/2",
         target=mp.mpf(2) ** -30), ),
    (fit("EXP2", _safe(lambda r: (mp.power(2, r) - 1) / r, lambda r: LN2 + LN2 ** 2 * r / 2),
         [-0.5, 0.5], 0.5, "2**r = 1 + r * EXP2(r), |r| <= 1/2"), ),
    (fit("LOG", _safe(lambda z: (mp.log((1 + mp.sqrt(z)) / (1 - mp.sqrt(z))) - 2 * mp.sqrt(z))
                      / (mp.sqrt(z) * z), lambda z: mp.mpf(2) / 3 + 2 * z / 5),
         [0, (mp.mpf(3) - 2 * mp.sqrt(2)) ** 2 * 1.01], (3 - 2 * mp.sqrt(2)) ** 2,
         "log(1+f) = f - f*f/2 + s*(f*f/2 + z*LOG(z)), s = f/(2+f), z = s*s"), ),
    (fit("LOG_F32", _safe(lambda z: (mp.log((1 + mp.sqrt(z)) / (1 - mp.sqrt(z))) - 2 * mp.sqrt(z))
                          / (mp.sqrt(z) * z), lambda z: mp.mpf(2) / 3 + 2 * z / 5),
         [0, (mp.mpf(3) - 2 * mp.sqrt(2)) ** 2 * 1.01], (3 - 2 * mp.sqrt(2)) ** 2,
         "float32 arithmetic: as LOG", target=mp.mpf(2) ** -30), ),
    (fit("POW_LOG", _safe(lambda z: (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)
                          - mp.mpf(2) / 3 * z * mp.sqrt(z)) / (z * z * mp.sqrt(z)),
                          lambda z: mp.mpf(2) / 5 + 2 * z / 7),
         [0, (mp.mpf(3) - 2 * mp.sqrt(2)) ** 2 * 1.01], (3 - 2 * mp.sqrt(2)) ** 2 / 2,
         "power's log: log(1+f) = 2s + 2/3 s**3 + s**5 * POW_LOG(s*s), s = f/(2+f)",
         target=mp.mpf(2) ** -66), ),
    (fit("SIN", _safe(lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)),
                      lambda z: -mp.mpf(1) / 6 + z / 120),
         [0, (mp.pi / 4) ** 2 * 1.01], (mp.pi / 4) ** 2,
         "sin(r) = r + r**3 * SIN(r*r), |r| <= pi/4"), ),
    (fit("COS", _safe(lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z ** 2,
                      lambda z: mp.mpf(1) / 24 - z / 720),
         [0, (mp.pi / 4) ** 2 * 1.01], (mp.pi / 4) ** 4,
         "cos(r) = 1 - r*r/2 + r**4 * COS(r*r), |r| <= pi/4"), ),
    (fit("TAN", _safe(lambda z: (mp.tan(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)),
                      lambda z: mp.mpf(1) / 3 + 2 * z / 15),
         [0, (mp.pi / 4) ** 2 * 1.01], (mp.pi / 4) ** 2,
         "tan(r) = r + r**3 * TAN(r*r), |r| <= pi/4"), ),
    (fit("SIN_F32", _safe(lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)),
                          lambda z: -mp.mpf(1) / 6 + z / 120),
         [0, (mp.pi / 4) ** 2 * 1.01], (mp.pi / 4) ** 2,
         "float32 arithmetic: sin(r) = r + r**3 * SIN_F32(r*r), |r| <= pi/4",
         target=mp.mpf(2) ** -30), ),
    (fit("COS_F32", _safe(lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z ** 2,
                          lambda z: mp.mpf(1) / 24 - z / 720),
         [0, (mp.pi / 4) ** 2 * 1.01], (mp.pi / 4) ** 4,
         "float32 arithmetic: cos(r) = 1 - r*r/2 + r**4 * COS_F32(r*r), |r| <= pi/4",
         target=mp.mpf(2) ** -30), ),
    (fit("TANH_F32", _safe(lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)),
                           lambda z: -mp.mpf(1) / 3 + 2 * z / 15),
         [0, mp.mpf(0.625) ** 2 * 1.01], mp.mpf(0.625) ** 2,
         "float32 arithmetic: tanh(x) = x + x**3 * TANH_F32(x*x), |x| <= 0.625",
         target=mp.mpf(2) ** -30), ),
    (fit("SINH", _safe(lambda z: (mp.sinh(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)),
                       lambda z: mp.mpf(1) / 6 + z / 120),
         [0, 1.01], 1, "sinh(r) = r + r**3 * SINH(r*r), |r| <= 1"), ),
    (fit("ATAN", _safe(lambda z: (mp.atan(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)),
                       lambda z: -mp.mpf(1) / 3 + z / 5),
         [0, (mp.mpf(7) / 16) ** 2 * 1.01], (mp.mpf(7) / 16) ** 2,
         "atan(t) = t + t**3 * ATAN(t*t), |t| <= 7/16"), ),
]


def split(value, bits: int) -> tuple[float, float, float]:
    """``value`` as hi + mid + lo; hi and mid have ``bits`` significant bits (exact products
    with small integers), lo is rounded to float64."""
    parts = []
    rest = mp.mpf(value)
    for _ in range(2):
        e = int(mp.floor(mp.log(abs(rest), 2)))
        scale = mp.mpf(2) ** (bits - 1 - e)
        part = mp.nint(rest * scale) / scale
        parts.append(float(part))
        rest -= part
    parts.append(float(rest))
    return tuple(parts)


TWO_OVER_PI_BITS = 1400  # bits of 2/pi kept for the Payne-Hanek reduction (vecmath.trig)


def _f32(value) -> float:
    """``value`` rounded to float32 (as a Python float)."""
    import numpy as np

    return float(np.float32(float(value)))


def _two_over_pi_hex() -> str:
    """floor(2/pi * 2**TWO_OVER_PI_BITS) in hex."""
    with mp.workdps(TWO_OVER_PI_BITS // 3 + 50):
        return hex(int(mp.floor(2 / mp.pi * mp.mpf(2) ** TWO_OVER_PI_BITS)))


def constants() -> dict[str, object]:
    """Range-reduction constants, exact to float64 or split into exactly multipliable parts."""
    return {
        "LOG2E": float(1 / LN2),
        "LN2_HI_LO": split(LN2, 32)[:1] + (float(LN2 - mp.mpf(split(LN2, 32)[0])),),
        "LN2_HI_LO_F32": (split(LN2, 16)[0], _f32(LN2 - mp.mpf(split(LN2, 16)[0]))),
        "LOG2E_F32": _f32(1 / LN2),
        "LN2": float(LN2),
        "LOG2_10": float(mp.log(10, 2)),
        "LOG10_2_HI_LO": (split(mp.log10(2), 32)[0], float(mp.log10(2) - mp.mpf(split(mp.log10(2), 32)[0]))),
        "INV_LN10_HI_LO": (split(1 / mp.log(10), 32)[0], float(1 / mp.log(10) - mp.mpf(split(1 / mp.log(10), 32)[0]))),
        "INV_LN2_HI_LO": (split(1 / LN2, 32)[0], float(1 / LN2 - mp.mpf(split(1 / LN2, 32)[0]))),
        "TWO_OVER_PI": float(2 / mp.pi),
        "HALF_PI_3": (float(HALF_PI), float(HALF_PI - mp.mpf(float(HALF_PI))),
                      float(HALF_PI - mp.mpf(float(HALF_PI)) - mp.mpf(float(HALF_PI - mp.mpf(float(HALF_PI)))))),
        "TWO_THIRDS_HI_LO": (float(mp.mpf(2) / 3), float(mp.mpf(2) / 3 - mp.mpf(float(mp.mpf(2) / 3)))),
        "PI_HI_LO": (float(mp.pi), float(mp.pi - mp.mpf(float(mp.pi)))),
        "QUARTER_PI_HI_LO": (float(mp.pi / 4), float(mp.pi / 4 - mp.mpf(float(mp.pi / 4)))),
        "HALF_PI_HI_LO": (float(HALF_PI), float(HALF_PI - mp.mpf(float(HALF_PI)))),
        "SQRT2_HALF": float(mp.sqrt(2) / 2),
        "ATAN_HI_LO": tuple((float(mp.atan(c)), float(mp.atan(c) - mp.mpf(float(mp.atan(c)))))
                            for c in (mp.mpf(0), mp.mpf(1) / 2, mp.mpf(1), mp.mpf(3) / 2,
                                      mp.inf)),
        "TWO_OVER_PI_BITS": TWO_OVER_PI_BITS,
        "TWO_OVER_PI_HEX": _two_over_pi_hex(),
    }


def main() -> None:
    lines = ['"""Polynomial coefficients and reduction constants of the vectorizable math functions.',
             "", "Generated by tools/vecmath_coefficients.py (mpmath Chebyshev fits at 60 digits);",
             "do not edit. Coefficient tuples list the highest degree first.", '"""', ""]
    for (name, coeffs, err, doc), in FITS:
        lines.append(f"# {doc}; weighted fitting error 2**{float(mp.log(err, 2)):.1f}")
        lines.append(f"{name} = (" + ", ".join(repr(c) for c in coeffs) + ",)")
    lines.append("")
    for key, value in constants().items():
        lines.append(f"{key} = {value!r}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
