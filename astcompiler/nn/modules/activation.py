"""Element-wise activations and ``Softmax``."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..functional import erf
from .module import Module

__all__ = ["GELU", "ReLU", "Sigmoid", "Softmax", "Tanh"]

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class ReLU(Module):
    """``max(x, 0)`` (NaN propagates)."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0)


class GELU(Module):
    """``x * Phi(x)``: ``approximate='none'`` is ``0.5 x (1 + erf(x / sqrt 2))`` (exact up to
    ``nn.functional.erf``'s 1e-15); ``approximate='tanh'`` is torch's tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError("approximate argument must be either none or tanh.")
        self.approximate = approximate

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))
            return 0.5 * x * (1.0 + np.tanh(inner))
        return 0.5 * x * (1.0 + erf(x * _SQRT_HALF))

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``, computed without overflow and accurate for large ``|x|``."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the maximum for stability.

    ``dim=None`` keeps torch's deprecated implicit choice (0 for 0-, 1- and 3-d inputs, else 1).
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        if dim is None:
            warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the "
                          "call to include dim=X as an argument.", stacklevel=2)
        self.dim = dim

    def forward(self, x: np.ndarray) -> np.ndarray:
        dim = self.dim
        if dim is None:
            dim = 0 if x.ndim in (0, 1, 3) else 1
        shifted = x - x.max(axis=dim, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=dim, keepdims=True)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
