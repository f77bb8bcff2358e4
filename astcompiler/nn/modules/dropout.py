"""``Dropout``."""

from __future__ import annotations

import numpy as np

from .._utils import as_generator
from .module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``; in eval mode (and for ``p == 0``) return the input unchanged.

    The mask comes from ``rng``: a ``np.random.Generator``, a seed (same seed, same masks), or
    None (fresh entropy). The generator advances on every training-mode call.
    """

    def __init__(self, p: float = 0.5, rng: np.random.Generator | int | None = None) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.rng = as_generator(rng)

    def forward(self, x: np.ndarray) -> np.ndarray:
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return x * 0
        keep = self.rng.random(np.shape(x)) >= self.p
        return x * keep * (1.0 / (1.0 - self.p))

    def extra_repr(self) -> str:
        return f"p={self.p}"
