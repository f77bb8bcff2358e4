"""``Identity`` and ``Linear``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._utils import as_generator
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear"]


class Identity(Module):
    """Returns its input; any constructor arguments are accepted and ignored."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features).

    Initialized as torch does: weight and bias uniform in ``[-1/sqrt(in_features),
    1/sqrt(in_features)]``, drawn from ``rng`` (a ``np.random.Generator``, a seed, or None for
    fresh entropy).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: Any = np.float64, rng: np.random.Generator | int | None = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        generator = as_generator(rng)
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(generator.uniform(-bound, bound, (out_features, in_features))
                                .astype(dtype))
        if bias:
            self.bias = Parameter(generator.uniform(-bound, bound, out_features).astype(dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, x: np.ndarray) -> np.ndarray:
        y = x @ self.weight.T
        if self.bias is not None:
            y = y + self.bias
        return y

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
