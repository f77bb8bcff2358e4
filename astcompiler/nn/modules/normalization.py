"""``LayerNorm``."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dimensions (biased variance), then scale
    by ``weight`` (ones) and shift by ``bias`` (zeros) when ``elementwise_affine``."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 dtype: Any = np.float64) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if elementwise_affine and bias:
            self.bias = Parameter(np.zeros(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, x: np.ndarray) -> np.ndarray:
        n = len(self.normalized_shape)
        if x.shape[x.ndim - n:] != self.normalized_shape:
            expected = ", ".join(str(size) for size in self.normalized_shape)
            raise RuntimeError(f"Given normalized_shape={list(self.normalized_shape)}, expected "
                               f"input with shape [*, {expected}], but got input of size "
                               f"{list(x.shape)}")
        axes = tuple(range(x.ndim - n, x.ndim))
        centered = x - x.mean(axis=axes, keepdims=True)
        var = (centered * centered).mean(axis=axes, keepdims=True)
        y = centered / np.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
