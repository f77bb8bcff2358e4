"""The benchmark workloads: each one a plain NumPy function, its inputs, and its baselines.

The plain NumPy function is at the same time the NumPy-eager column and the input that
``astcompiler.compile`` gets, unchanged. Importing this module does not import numba: the
hand-written kernels (``handwritten.py``) are looked up by name when the runner asks for them, so
the peer worker (``peers/worker.py``) can use the same functions and inputs without numba's threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np


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


def jacobi(u):
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


def row_stats(x):
    return x.mean(axis=1), x.var(axis=1), x.argmax(axis=1)


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


def jacobi_inputs(rng, quick):
    n = 256 if quick else 2048
    return (_uniform(rng, (n, n), np.float64),)


def tiny_inputs(rng, quick):
    return _uniform(rng, 8, np.float64), _uniform(rng, 8, np.float64)


# -- the table of workloads -----------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One benchmark row."""

    name: str
    fn: Callable  # plain NumPy: the eager baseline and astcompiler's input
    make_inputs: Callable[[np.random.Generator, bool], tuple]
    handwritten: Union[str, Callable, None]  # a function of handwritten.py by name, the callable,
    # or None (no hand-written numba kernel: the training steps, whose NumPy column is hand-written)
    numexpr: Optional[str] = None  # the same computation as a numexpr expression
    unit: str = "ms"  # how its times are printed: "ms" or "us"
    title: str = ""  # what the table calls it ("axpy chain"); defaults to the name
    # what astcompiler runs, built from the astcompiler module; None: ``ac.compile(fn)``
    ac_compile: Optional[Callable[[Any], Callable]] = None

    def hand(self) -> Optional[Callable]:
        """The hand-written numba baseline (imports numba on first use), None when there is none."""
        if isinstance(self.handwritten, str):
            import handwritten

            return getattr(handwritten, self.handwritten)
        return self.handwritten


WORKLOADS: list[Workload] = [
    Workload("pointwise", pointwise, pointwise_inputs, "pointwise",
             numexpr="2.0*x + 3.0*y - 0.5*z + x*y", title="axpy chain"),
    Workload("transcendental", transcendental, transcendental_inputs, "transcendental",
             numexpr="exp(sin(x)) * sqrt(abs(y))", title="exp/sin/sqrt"),
    Workload("softmax", softmax, rows_inputs, "softmax"),
    Workload("layernorm", layernorm, layernorm_inputs, "layernorm"),
    Workload("mlp", mlp, mlp_inputs, "mlp", title="MLP (BLAS)"),
    Workload("jacobi", jacobi, jacobi_inputs, "jacobi", title="Jacobi step"),
    Workload("row_stats", row_stats, rows_inputs, "row_stats", title="row mean/var/argmax"),
    Workload("tiny", tiny, tiny_inputs, "tiny", numexpr="x * y + 1.0", unit="us",
             title="dispatch, 8 elements"),
]

def _loop_workloads() -> list[Workload]:
    from loop_workloads import LOOP_KERNELS
    return [Workload(name, kernel, inputs, njit) for name, (kernel, njit, inputs) in LOOP_KERNELS.items()]


WORKLOADS += _loop_workloads()


def _training_workloads() -> list[Workload]:
    """One training step (loss and gradients) of the MLP and of a layernorm (``training.py``)."""
    import training as t

    return [Workload("mlp_step", t.mlp_step_numpy, t.mlp_step_inputs, None,
                     title="MLP train step", ac_compile=lambda ac: t.ac_step(ac, t.mlp_loss,
                                                                             t.MLP_PARAMS)),
            Workload("layernorm_step", t.layernorm_step_numpy, t.layernorm_step_inputs, None,
                     title="layernorm train step",
                     ac_compile=lambda ac: t.ac_step(ac, t.layernorm_loss, t.LAYERNORM_PARAMS))]


WORKLOADS += _training_workloads()
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
