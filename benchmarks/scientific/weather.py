"""A small weather model: upwind advection and diffusion on a periodic grid, a vertical implicit
diffusion (tridiagonal sweep along the last axis) and a column diagnostic."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def advect_diffuse(q, u, v, steps):
    dt, dx, kappa = 0.1, 1.0, 0.05
    q = q.copy()
    for _ in range(steps):
        dqdx_minus = (q - np.roll(q, 1, axis=1)) / dx
        dqdx_plus = (np.roll(q, -1, axis=1) - q) / dx
        dqdy_minus = (q - np.roll(q, 1, axis=0)) / dx
        dqdy_plus = (np.roll(q, -1, axis=0) - q) / dx
        adv = (np.where(u > 0, u * dqdx_minus, u * dqdx_plus)
               + np.where(v > 0, v * dqdy_minus, v * dqdy_plus))
        lap = (np.roll(q, 1, axis=0) + np.roll(q, -1, axis=0) + np.roll(q, 1, axis=1)
               + np.roll(q, -1, axis=1) - 4.0 * q) / (dx * dx)
        q = q + dt * (kappa * lap - adv)
    return q


def vertical_diffusion(T, kappa, dt):
    nx, ny, nz = T.shape
    a = -kappa * dt * np.ones(nz)
    b = (1.0 + 2.0 * kappa * dt) * np.ones(nz)
    c = -kappa * dt * np.ones(nz)
    cp = np.zeros((nx, ny, nz))
    dp = np.zeros((nx, ny, nz))
    cp[:, :, 0] = c[0] / b[0]
    dp[:, :, 0] = T[:, :, 0] / b[0]
    for k in range(1, nz):
        denom = b[k] - a[k] * cp[:, :, k - 1]
        cp[:, :, k] = c[k] / denom
        dp[:, :, k] = (T[:, :, k] - a[k] * dp[:, :, k - 1]) / denom
    out = np.zeros((nx, ny, nz))
    out[:, :, nz - 1] = dp[:, :, nz - 1]
    for k in range(nz - 2, -1, -1):
        out[:, :, k] = dp[:, :, k] - cp[:, :, k] * out[:, :, k + 1]
    return out


def column_diagnostics(T):
    nz = T.shape[2]
    p = np.linspace(1000.0, 100.0, nz)
    w = p / p.sum()
    mean_t = (T * w).sum(axis=2, keepdims=True)
    anomaly = T - mean_t
    top_down = np.flip(anomaly, axis=2)
    lapse = top_down[:, :, 1:] - top_down[:, :, :-1]
    return anomaly.std(axis=2), lapse.mean(axis=(0, 1))


def semi_lagrangian(q, u, dt):
    n = q.shape[0]
    x = np.arange(n, dtype=np.float64)
    out = np.empty_like(q)
    for i in range(n):
        xd = (x[i] - u[i] * dt) % n
        j = int(np.floor(xd))
        frac = xd - j
        out[i] = (1.0 - frac) * q[j] + frac * q[(j + 1) % n]
    return out


# -- inputs -------------------------------------------------------------------------------------


def advect_inputs(rng, n):
    return (rng.random((n, n)), rng.standard_normal((n, n)) * 0.5,
            rng.standard_normal((n, n)) * 0.5, 10)


def column_inputs(rng, n):
    return (250.0 + 30.0 * rng.random((n, n, 30)), 0.4, 0.5)


def diag_inputs(rng, n):
    return (250.0 + 30.0 * rng.random((n, n, 40)),)


def semi_lagrangian_inputs(rng, n):
    return rng.random(n), rng.standard_normal(n), 0.7


KERNELS = [
    Kernel("advect_diffuse", "weather", advect_diffuse, advect_inputs, (6, 64, 400)),
    Kernel("vertical_diffusion", "weather", vertical_diffusion, column_inputs, (4, 24, 120)),
    Kernel("column_diagnostics", "weather", column_diagnostics, diag_inputs, (4, 24, 120)),
    Kernel("semi_lagrangian", "weather", semi_lagrangian, semi_lagrangian_inputs,
           (10, 2000, 100_000)),
]
