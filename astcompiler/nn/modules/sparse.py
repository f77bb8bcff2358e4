"""``Embedding``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._utils import as_generator
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding"]


class Embedding(Module):
    """A lookup table: ``forward(indices)`` is ``weight[indices]``.

    ``weight`` (num_embeddings, embedding_dim) is drawn from N(0, 1) (``rng``: a generator, a
    seed, or None); the row ``padding_idx`` (negative counts from the end) starts as zeros.
    Indices are NumPy indices: out of range raises ``IndexError``, negative ones count from the
    end (torch rejects them).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 dtype: Any = np.float64, rng: np.random.Generator | int | None = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = self._normalized_padding_idx(padding_idx)
        weight = as_generator(rng).standard_normal((num_embeddings, embedding_dim)).astype(dtype)
        if self.padding_idx is not None:
            weight[self.padding_idx] = 0
        self.weight = Parameter(weight)

    def _normalized_padding_idx(self, padding_idx: int | None) -> int | None:
        if padding_idx is None:
            return None
        if not -self.num_embeddings <= padding_idx < self.num_embeddings:
            raise ValueError("Padding_idx must be within num_embeddings")
        return padding_idx + self.num_embeddings if padding_idx < 0 else padding_idx

    @classmethod
    def from_pretrained(cls, embeddings: np.ndarray,
                        padding_idx: int | None = None) -> "Embedding":
        """An Embedding whose weight is ``embeddings`` (shared, not copied; a 2-d array)."""
        if np.ndim(embeddings) != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = np.shape(embeddings)
        module = cls(rows, cols, padding_idx=padding_idx, dtype=np.asarray(embeddings).dtype,
                     rng=0)
        module.weight = Parameter(embeddings)
        return module

    def forward(self, indices: np.ndarray) -> np.ndarray:
        return self.weight[indices]

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text
