"""Polybench-style dense linear algebra: BLAS chains, matrix-vector kernels, loop factorizations."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def gemm(alpha, beta, C, A, B):
    return alpha * A @ B + beta * C


def two_mm(alpha, beta, A, B, C, D):
    tmp = alpha * A @ B
    return tmp @ C + beta * D


def three_mm(A, B, C, D):
    E = A @ B
    F = C @ D
    return E @ F


def matmul_chain(alpha, beta, A, B, C, D):
    return alpha * A @ B @ C + beta * D


def atax(A, x):
    return A.T @ (A @ x)


def bicg(A, p, r):
    s = r @ A
    q = A @ p
    return s, q


def mvt(A, x1, x2, y1, y2):
    x1 = x1 + A @ y1
    x2 = x2 + A.T @ y2
    return x1, x2


def gesummv(alpha, beta, A, B, x):
    return alpha * (A @ x) + beta * (B @ x)


def trisolv(L, b):
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def cholesky_loops(A):
    n = A.shape[0]
    L = A.copy()
    for i in range(n):
        for j in range(i):
            s = L[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
        s = L[i, i]
        for k in range(i):
            s -= L[i, k] * L[i, k]
        L[i, i] = np.sqrt(s)
    return np.tril(L)


def lu_rank1(A):
    n = A.shape[0]
    LU = A.copy()
    for k in range(n - 1):
        LU[k + 1:, k] = LU[k + 1:, k] / LU[k, k]
        LU[k + 1:, k + 1:] -= np.outer(LU[k + 1:, k], LU[k, k + 1:])
    return LU


def implicit_heat(u0, dt, steps):
    n = u0.shape[0]
    lap = -2.0 * np.eye(n) + np.eye(n, k=1) + np.eye(n, k=-1)
    M = np.eye(n) - dt * lap
    u = u0.copy()
    for _ in range(steps):
        u = np.linalg.solve(M, u)
    return u


def power_iteration(A, v0, iters):
    v = v0 / np.linalg.norm(v0)
    lam = 0.0
    for _ in range(iters):
        w = A @ v
        lam = v @ w
        v = w / np.linalg.norm(w)
    return lam, v


# -- inputs -------------------------------------------------------------------------------------


def _mat(rng, *shape):
    return rng.standard_normal(shape)


def _spd(rng, n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def gemm_inputs(rng, n):
    return 1.5, 1.2, _mat(rng, n, n), _mat(rng, n, n), _mat(rng, n, n)


def two_mm_inputs(rng, n):
    return (1.5, 1.2, _mat(rng, n, n + 4), _mat(rng, n + 4, n + 8), _mat(rng, n + 8, n + 2),
            _mat(rng, n, n + 2))


def three_mm_inputs(rng, n):
    return _mat(rng, n, n + 2), _mat(rng, n + 2, n + 4), _mat(rng, n + 4, n + 6), _mat(rng, n + 6, n)


def chain_inputs(rng, n):
    return 0.5, 2.0, _mat(rng, n, n), _mat(rng, n, n), _mat(rng, n, n), _mat(rng, n, n)


def atax_inputs(rng, n):
    return _mat(rng, n + 10, n), _mat(rng, n)


def bicg_inputs(rng, n):
    return _mat(rng, n + 10, n), _mat(rng, n), _mat(rng, n + 10)


def mvt_inputs(rng, n):
    return (_mat(rng, n, n),) + tuple(_mat(rng, n) for _ in range(4))


def gesummv_inputs(rng, n):
    return 1.5, 1.2, _mat(rng, n, n), _mat(rng, n, n), _mat(rng, n)


def trisolv_inputs(rng, n):
    return np.linalg.cholesky(_spd(rng, n)), _mat(rng, n)


def spd_inputs(rng, n):
    return (_spd(rng, n),)


def lu_inputs(rng, n):
    return (_mat(rng, n, n) + n * np.eye(n),)


def heat_inputs(rng, n):
    return rng.random(n), 0.1, 10


def power_inputs(rng, n):
    return _spd(rng, n), rng.random(n) + 0.1, 50


KERNELS = [
    Kernel("gemm", "linalg", gemm, gemm_inputs, (6, 96, 400)),
    Kernel("2mm", "linalg", two_mm, two_mm_inputs, (6, 96, 300)),
    Kernel("3mm", "linalg", three_mm, three_mm_inputs, (6, 96, 300)),
    Kernel("matmul_chain", "linalg", matmul_chain, chain_inputs, (6, 96, 300)),
    Kernel("atax", "linalg", atax, atax_inputs, (6, 200, 1500)),
    Kernel("bicg", "linalg", bicg, bicg_inputs, (6, 200, 1500)),
    Kernel("mvt", "linalg", mvt, mvt_inputs, (6, 200, 1500)),
    Kernel("gesummv", "linalg", gesummv, gesummv_inputs, (6, 200, 1500)),
    Kernel("trisolv", "linalg", trisolv, trisolv_inputs, (6, 100, 600)),
    Kernel("cholesky_loops", "linalg", cholesky_loops, spd_inputs, (6, 40, 100)),
    Kernel("lu_rank1", "linalg", lu_rank1, lu_inputs, (6, 60, 250)),
    Kernel("implicit_heat", "linalg", implicit_heat, heat_inputs, (6, 40, 120)),
    Kernel("power_iteration", "linalg", power_iteration, power_inputs, (6, 100, 500)),
]
