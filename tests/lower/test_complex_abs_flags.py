"""The kernels' complex absolute raises no FP flag NumPy does not raise, also on vector lanes.

A spurious flag is never a wrong answer (the wrapper reruns the call with NumPy), but a loop
region that raises one on every call runs at eager speed: ``np.abs(z) <= 2.0`` on complex zeros
(the first trip of a Mandelbrot loop) made the whole region rerun with NumPy on each call.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba import runtime


def escape_count(z, c, n):
    counts = np.zeros(z.shape, dtype=np.int64)
    for _ in range(n):
        alive = np.abs(z) <= 2.0
        z[alive] = z[alive] ** 2 + c[alive]
        counts += alive
    return counts


def _abs_loop(dtype):
    """A vectorizable loop over the kernels' complex absolute of ``dtype`` (its own source)."""
    import numba

    from astcompiler.lower.numba import complex_ops
    from astcompiler.lower.numba.fma import fma

    key = f"cabs_simd:{np.dtype(dtype).name}"
    namespace = {"np": np, "fma": fma}
    exec(complex_ops.helper_source(key), namespace)
    cabs = numba.njit(namespace[complex_ops.helper_call(key)])

    @numba.njit
    def loop(z, out):
        for i in range(z.shape[0]):
            out[i] = cabs(z[i])
    return loop


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_abs_of_zeros_infs_and_subnormals_raises_no_flag(dtype):
    part = np.finfo(dtype).dtype
    tiny = np.finfo(part).smallest_subnormal
    values = np.array([0, 0j, complex(tiny, tiny), complex(3 * tiny, 0), np.inf,
                       complex(0, np.inf), complex(-np.inf, 2), 3 + 4j, 1e-20 + 1j], dtype=dtype)
    z = np.tile(values, 40)  # long enough for the vector lanes
    out = np.empty(z.shape, part)
    loop = _abs_loop(dtype)
    loop(z, out)
    runtime.fp_clear()
    loop(z, out)
    assert not runtime.fp_raised()
    with np.errstate(all="raise"):
        want = np.abs(z)  # NumPy raises nothing either
    np.testing.assert_array_equal(out, want)


def test_escape_loop_from_zeros_raises_no_flag():
    rng = np.random.default_rng(0)
    c = rng.uniform(-2, 1, (16, 16)) + 1j * rng.uniform(-1.5, 1.5, (16, 16))
    compiled = ac.compile(escape_count, backend="numba")
    want = escape_count(np.zeros_like(c), c, 12)
    with np.errstate(all="raise"):
        runtime.fp_clear()
        got = compiled(np.zeros_like(c), c, 12)
        assert not runtime.fp_raised()
    np.testing.assert_array_equal(got, want)
