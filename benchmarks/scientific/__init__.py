"""The scientific benchmark corpus: NumPy kernels written the way scientists write them.

Each family is one module (``linalg``, ``stencils``, ``weather``, ``cnn``, ``spectral``,
``particles``, ``bits``, ``sparse``, ``fractals``, ``dynprog``, ``stats``) with plain functions,
their input factories and a ``KERNELS`` list. ``KERNELS`` here is all of them, in table order.
"""

from __future__ import annotations

from . import bits, cnn, dynprog, fractals, linalg, particles, spectral, sparse, stats, stencils
from . import weather
from .kernel import Kernel

KERNELS: list[Kernel] = [
    *linalg.KERNELS, *stencils.KERNELS, *weather.KERNELS, *cnn.KERNELS, *spectral.KERNELS,
    *particles.KERNELS, *bits.KERNELS, *sparse.KERNELS, *fractals.KERNELS, *dynprog.KERNELS,
    *stats.KERNELS,
]
BY_NAME: dict[str, Kernel] = {kernel.name: kernel for kernel in KERNELS}

__all__ = ["KERNELS", "BY_NAME", "Kernel"]
