"""Mandelbrot escape times: explicit loops over complex numbers, and a masked vectorised version."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def mandelbrot_loops(xs, ys, maxiter):
    out = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for i in range(ys.shape[0]):
        for j in range(xs.shape[0]):
            c = complex(xs[j], ys[i])
            z = 0j
            n = 0
            while n < maxiter and abs(z) <= 2.0:
                z = z * z + c
                n += 1
            out[i, j] = n
    return out


def mandelbrot_vectorised(xs, ys, maxiter):
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int64)
    for _ in range(maxiter):
        alive = np.abs(z) <= 2.0
        z[alive] = z[alive] ** 2 + c[alive]
        counts += alive
    return counts


def julia_smooth(n, maxiter):
    xs = np.linspace(-1.6, 1.6, n)
    z = xs[None, :] + 1j * xs[:, None]
    c = -0.8 + 0.156j
    escaped = np.full(z.shape, float(maxiter))
    for k in range(maxiter):
        z = np.where(np.abs(z) <= 4.0, z * z + c, z)
        newly = (np.abs(z) > 4.0) & (escaped == maxiter)
        escaped[newly] = k
    return escaped


# -- inputs -------------------------------------------------------------------------------------


def plane_inputs(rng, n):
    return np.linspace(-2.0, 0.6, n), np.linspace(-1.2, 1.2, n), 50


def julia_inputs(rng, n):
    return n, 40


KERNELS = [
    Kernel("mandelbrot_loops", "mandelbrot", mandelbrot_loops, plane_inputs, (6, 60, 300)),
    Kernel("mandelbrot_vectorised", "mandelbrot", mandelbrot_vectorised, plane_inputs,
           (6, 60, 300)),
    Kernel("julia_smooth", "mandelbrot", julia_smooth, julia_inputs, (6, 60, 300)),
]
