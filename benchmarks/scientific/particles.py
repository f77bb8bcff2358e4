"""N-body: pairwise gravitational forces with broadcasting, and the same with loops."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def nbody_vectorised(pos, vel, mass, steps):
    dt, eps = 0.01, 1e-3
    pos = pos.copy()
    vel = vel.copy()
    for _ in range(steps):
        diff = pos[None, :, :] - pos[:, None, :]
        r2 = (diff ** 2).sum(axis=-1) + eps
        inv_r3 = r2 ** -1.5
        acc = (diff * (mass[None, :, None] * inv_r3[:, :, None])).sum(axis=1)
        vel += dt * acc
        pos += dt * vel
    return pos, vel


def nbody_loops(pos, vel, mass, steps):
    dt, eps = 0.01, 1e-3
    n = pos.shape[0]
    pos = pos.copy()
    vel = vel.copy()
    acc = np.zeros((n, 3))
    for _ in range(steps):
        acc[:] = 0.0
        for i in range(n):
            for j in range(n):
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                r2 = dx * dx + dy * dy + dz * dz + eps
                f = mass[j] / (r2 * np.sqrt(r2))
                acc[i, 0] += f * dx
                acc[i, 1] += f * dy
                acc[i, 2] += f * dz
        for i in range(n):
            for d in range(3):
                vel[i, d] += dt * acc[i, d]
                pos[i, d] += dt * vel[i, d]
    return pos, vel


def potential_energy(pos, mass):
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        d = pos[i + 1:] - pos[i]
        r = np.sqrt((d * d).sum(axis=1))
        e -= mass[i] * (mass[i + 1:] / r).sum()
    return e


# -- inputs -------------------------------------------------------------------------------------


def nbody_inputs(rng, n):
    return rng.standard_normal((n, 3)), 0.1 * rng.standard_normal((n, 3)), rng.random(n) + 0.5, 3


def energy_inputs(rng, n):
    return rng.standard_normal((n, 3)), rng.random(n) + 0.5


KERNELS = [
    Kernel("nbody_vectorised", "nbody", nbody_vectorised, nbody_inputs, (5, 100, 500)),
    Kernel("nbody_loops", "nbody", nbody_loops, nbody_inputs, (5, 40, 150)),
    Kernel("potential_energy", "nbody", potential_energy, energy_inputs, (5, 200, 2000)),
]
