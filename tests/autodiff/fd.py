"""Central finite differences (float64): the oracle of the gradient tests."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


def numeric_grad(fn: Callable[..., Any], args: list, index: int, eps: float = 1e-6) -> np.ndarray:
    """d fn(*args) / d args[index] by central differences, element by element."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    x = args[index]
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + eps
        plus = float(fn(*args))
        x[idx] = old - eps
        minus = float(fn(*args))
        x[idx] = old
        out[idx] = (plus - minus) / (2 * eps)
    return out


def assert_gradients(fn: Callable[..., Any], args: list, grads: Any, tol: float = 1e-6) -> None:
    """``grads`` (one per argument) match finite differences, with the primals' dtype/shape."""
    grads = grads if isinstance(grads, tuple) else (grads,)
    assert len(grads) == len(args)
    for i, (g, x) in enumerate(zip(grads, args)):
        assert type(g) is np.ndarray, f"argument {i}: gradient is a {type(g).__name__}"
        assert g.shape == x.shape and g.dtype == x.dtype, (i, g.shape, g.dtype)
        expected = numeric_grad(fn, args, i)
        np.testing.assert_allclose(g, expected, rtol=tol, atol=tol, err_msg=f"argument {i}")
