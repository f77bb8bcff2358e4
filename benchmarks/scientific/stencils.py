"""Stencils on regular grids: Jacobi, heat, Gauss-Seidel, FDTD (polybench style)."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def jacobi_1d(A, steps):
    A = A.copy()
    B = A.copy()
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A


def jacobi_2d(A, steps):
    A = A.copy()
    B = A.copy()
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
                               + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:]
                               + B[2:, 1:-1] + B[:-2, 1:-1])
    return A


def heat_3d(A, steps):
    A = A.copy()
    B = A.copy()
    for _ in range(steps):
        c = A[1:-1, 1:-1, 1:-1]
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * c + A[:-2, 1:-1, 1:-1])
                               + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * c + A[1:-1, :-2, 1:-1])
                               + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * c + A[1:-1, 1:-1, :-2])
                               + c)
        A, B = B, A
    return A


def seidel_2d(A, steps):
    A = A.copy()
    n, m = A.shape
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1]
                           + A[i, j - 1] + A[i, j] + A[i, j + 1]
                           + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) / 9.0
    return A


def fdtd_2d(ex, ey, hz, fict):
    ex = ex.copy()
    ey = ey.copy()
    hz = hz.copy()
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


def laplace_residual(u, f, h):
    r = np.zeros_like(u)
    r[1:-1, 1:-1] = f[1:-1, 1:-1] - (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                     - 4.0 * u[1:-1, 1:-1]) / (h * h)
    return np.sqrt(np.mean(r ** 2))


# -- inputs -------------------------------------------------------------------------------------


def grid1_inputs(rng, n):
    return rng.random(n), 20


def grid2_inputs(rng, n):
    return rng.random((n, n)), 10


def grid3_inputs(rng, n):
    return rng.random((n, n, n)), 10


def seidel_inputs(rng, n):
    return rng.random((n, n)), 4


def fdtd_inputs(rng, n):
    return (rng.random((n, n + 4)), rng.random((n, n + 4)), rng.random((n, n + 4)),
            rng.random(8))


def residual_inputs(rng, n):
    return rng.random((n, n)), rng.random((n, n)), 1.0 / n


KERNELS = [
    Kernel("jacobi_1d", "stencil", jacobi_1d, grid1_inputs, (10, 10_000, 500_000)),
    Kernel("jacobi_2d", "stencil", jacobi_2d, grid2_inputs, (6, 100, 1000)),
    Kernel("heat_3d", "stencil", heat_3d, grid3_inputs, (5, 24, 100)),
    Kernel("seidel_2d", "stencil", seidel_2d, seidel_inputs, (5, 40, 120)),
    Kernel("fdtd_2d", "stencil", fdtd_2d, fdtd_inputs, (6, 100, 800)),
    Kernel("laplace_residual", "stencil", laplace_residual, residual_inputs, (6, 200, 1000)),
]
