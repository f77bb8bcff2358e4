"""Loop kernels: NumPy eager vs plain ``numba.njit`` of the same source vs astcompiler.

The kernels are the ones the tests use (``tests/kernels/loop_kernels.py``), written the way NumPy
users write them. Kernels that mutate their input run on a copy, so every timed call sees the same
data. The "numba (hand)" column is ``numba.njit`` applied to the unchanged kernel: where numba
cannot compile the user's code (``np.dot`` needs SciPy, ``np.add.outer`` is unsupported) it says so.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.kernels import loop_kernels as k  # noqa: E402


def stencil_on_copy(u, steps):
    return k.heat_stencil(u.copy(), steps)


def reverse_sweep_on_copy(a, c):
    return k.reverse_sweep(a.copy(), c)


def njit_of(kernel: Callable, copy_first: bool = False) -> Callable:
    """Plain numba on the user's source (compiled lazily, at the first call)."""
    compiled: list[Callable] = []

    def run(first, *rest):
        if not compiled:
            import numba
            compiled.append(numba.njit(kernel))
        return compiled[0](first.copy() if copy_first else first, *rest)
    return run


def _spd(rng: np.random.Generator, n: int) -> np.ndarray:
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def _complex(rng: np.random.Generator, n: int) -> np.ndarray:
    return 1.5 * rng.standard_normal(n) + 1.5j * rng.standard_normal(n)


# name -> (kernel as the user calls it, njit baseline, inputs(rng, quick))
LOOP_KERNELS = {
    "trisolve": (k.triangular_solve, njit_of(k.triangular_solve),
                 lambda rng, q: (np.linalg.cholesky(_spd(rng, 80 if q else 500)),
                                 rng.standard_normal(80 if q else 500))),
    "cholesky": (k.cholesky, njit_of(k.cholesky), lambda rng, q: (_spd(rng, 40 if q else 150),)),
    "stencil": (stencil_on_copy, njit_of(k.heat_stencil, copy_first=True),
                lambda rng, q: (rng.random(200 if q else 20000), 20 if q else 200)),
    "reverse_sweep": (reverse_sweep_on_copy, njit_of(k.reverse_sweep, copy_first=True),
                      lambda rng, q: (rng.standard_normal(1000 if q else 1_000_000), 0.3)),
    "checksum": (k.checksum, njit_of(k.checksum),
                 lambda rng, q: (rng.integers(0, 256, 1000 if q else 1_000_000).astype(np.uint8),)),
    "escape_time": (k.escape_time, njit_of(k.escape_time),
                    lambda rng, q: (_complex(rng, 100 if q else 20000), 100)),
    "shortest_paths": (k.shortest_paths, njit_of(k.shortest_paths),
                       lambda rng, q: (rng.random((70, 70) if q else (200, 200)),)),
    "signed_sum": (k.signed_sum, njit_of(k.signed_sum),
                   lambda rng, q: (rng.standard_normal(1000 if q else 1_000_000),)),
}
