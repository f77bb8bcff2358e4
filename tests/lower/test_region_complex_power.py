"""``z ** 2`` of a complex array inside a loop kernel is NumPy's square (``z * z``)."""

import numpy as np

import astcompiler as ac


def squares(z, n):
    for _ in range(n):
        z = z ** 2 * 0.5 + 0.1j
    return z


def test_complex_square_in_a_loop_matches_numpy_and_stays_a_kernel():
    compiled = ac.compile(squares, backend="numba", dynamic=True)
    rng = np.random.default_rng(0)
    for size, n in ((5, 3), (17, 4)):
        z = rng.standard_normal(size) + 1j * rng.standard_normal(size)
        got, want = compiled(z, n), squares(z, n)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
    code = compiled.entries[-1].output_code
    assert "structured numba function" in code and "np.power" not in code
