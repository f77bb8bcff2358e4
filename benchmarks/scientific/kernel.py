"""What one corpus kernel is: a plain NumPy function, an input factory and its sizes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

InputFactory = Callable[[np.random.Generator, int], tuple]


@dataclass(frozen=True)
class Kernel:
    """One kernel of the scientific corpus.

    ``fn`` is the unchanged user function (NumPy baseline, ``numba.njit`` input and
    ``ac.compile`` input). ``make(rng, n)`` builds its arguments at size ``n``; ``sizes`` holds
    the ``n`` of the tiny (tests), quick (``--quick``) and full (``make bench``) runs. No kernel
    mutates its arguments, so every timed call sees the same inputs.
    """

    name: str
    family: str
    fn: Callable
    make: InputFactory
    sizes: tuple[int, int, int]
    rtol: float = 1e-9  # float64 tolerance of the NumPy comparison (float32 uses 1e-4)

    def inputs(self, rng: np.random.Generator, which: str) -> tuple:
        """The arguments at size ``which``: "tiny", "quick" or "full"."""
        n = self.sizes[("tiny", "quick", "full").index(which)]
        return self.make(rng, n)
