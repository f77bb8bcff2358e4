"""The benchmark workloads: each one a plain NumPy function, its inputs, and its baselines.

The plain NumPy function is at the same time the NumPy-eager column and the input that
``astcompiler.compile`` gets, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

import handwritten


# -- the NumPy functions ------------------------------------------------------------------------


def pointwise(x, y, z):
    return 2.0 * x + 3.0 * y - 0.5 * z + x * y


def transcendental(x, y):
    return np.exp(np.sin(x)) * np.sqrt(np.abs(y))


def softmax(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x, weight, bias):
    mean = x.mean(axis=1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=1, keepdims=True)
    return centered / np.sqrt(var + 1e-5) * weight + bias


def mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0.0)
    return h @ w2 + b2


def tiny(x, y):
    return x * y + 1.0


# -- inputs ---------------------------------------------------------------------------------------


def _uniform(rng: np.random.Generator, shape, dtype, low=-1.0, high=1.0) -> np.ndarray:
    return rng.uniform(low, high, size=shape).astype(dtype)


def pointwise_inputs(rng, quick):
    n = 100_000 if quick else 10_000_000
    return tuple(_uniform(rng, n, np.float64) for _ in range(3))


def transcendental_inputs(rng, quick):
    n = 100_000 if quick else 10_000_000
    return _uniform(rng, n, np.float64, -3, 3), _uniform(rng, n, np.float64, -3, 3)


def rows_inputs(rng, quick):
    shape = (256, 128) if quick else (4096, 1024)
    return (_uniform(rng, shape, np.float32, -4, 4),)


def layernorm_inputs(rng, quick):
    (x,) = rows_inputs(rng, quick)
    cols = x.shape[1]
    return x, _uniform(rng, cols, np.float32, 0.5, 1.5), _uniform(rng, cols, np.float32)


def mlp_inputs(rng, quick):
    batch = 32 if quick else 256
    scale1, scale2 = 1 / np.sqrt(784), 1 / np.sqrt(256)
    return (_uniform(rng, (batch, 784), np.float32, 0, 1),
            _uniform(rng, (784, 256), np.float32, -scale1, scale1), _uniform(rng, 256, np.float32),
            _uniform(rng, (256, 10), np.float32, -scale2, scale2), _uniform(rng, 10, np.float32))


def tiny_inputs(rng, quick):
    return _uniform(rng, 3, np.float64), _uniform(rng, 3, np.float64)


# -- the table of workloads -----------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One benchmark row."""

    name: str
    fn: Callable  # plain NumPy: the eager baseline and astcompiler's input
    make_inputs: Callable[[np.random.Generator, bool], tuple]
    handwritten: Callable
    numexpr: Optional[str] = None  # the same computation as a numexpr expression
    unit: str = "ms"  # how its times are printed: "ms" or "us"


WORKLOADS: list[Workload] = [
    Workload("pointwise", pointwise, pointwise_inputs, handwritten.pointwise,
             numexpr="2.0*x + 3.0*y - 0.5*z + x*y"),
    Workload("transcendental", transcendental, transcendental_inputs, handwritten.transcendental,
             numexpr="exp(sin(x)) * sqrt(abs(y))"),
    Workload("softmax", softmax, rows_inputs, handwritten.softmax),
    Workload("layernorm", layernorm, layernorm_inputs, handwritten.layernorm),
    Workload("mlp", mlp, mlp_inputs, handwritten.mlp),
    Workload("tiny", tiny, tiny_inputs, handwritten.tiny, numexpr="x * y + 1.0", unit="us"),
]

def _loop_workloads() -> list[Workload]:
    from loop_workloads import LOOP_KERNELS
    return [Workload(name, kernel, inputs, njit) for name, (kernel, njit, inputs) in LOOP_KERNELS.items()]


WORKLOADS += _loop_workloads()
NAMES = [w.name for w in WORKLOADS]


def describe_inputs(args: tuple) -> str:
    """``4096x1024 f32`` for the first (largest) input."""
    first = args[0]
    dims = "x".join(_short_int(d) for d in first.shape)
    return f"{dims} {_DTYPE_SHORT.get(first.dtype.name, first.dtype.name)}"


_DTYPE_SHORT = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32"}


def _short_int(n: int) -> str:
    """10000000 -> '1e7'; other numbers as they are."""
    if n >= 100_000 and str(n).rstrip("0") == "1":
        return f"1e{len(str(n)) - 1}"
    return str(n)
