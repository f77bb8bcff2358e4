"""What a kernel module asks numba to compile (cold compile time, issue 11).

numba optimizes the code of every njit function a function calls anew in that caller, so a
serial rows entry holds its row function's lines instead of calling it, a flattened twin's
serial entry is inlined into the entry that dispatches to it, and a pointwise sin/cos kernel's
``prange`` twin runs a serial span function over slices (its parfor then holds one call, not
the loop body). Each test compiles one kernel module and checks the results are NumPy's.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba import numba_backend
from numba_helpers import GraphBuilder


def _module(compiled, kernel: str):
    """The imported kernel module of kernel ``kernel`` (by its file)."""
    for path in compiled.files:
        stem = path.rsplit("/", 1)[-1][:-3]
        if stem.startswith(kernel + "_") and stem in sys.modules:
            return sys.modules[stem]
    raise AssertionError(f"no module for {kernel} in {compiled.files}")


def _same(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


def test_serial_rows_entry_holds_the_row_function():
    """Rows of static length (max, subtract, sum, divide): the serial entry is the one function
    numba compiles."""
    x = np.random.default_rng(0).uniform(-4, 4, (5, 130)).astype(np.float32)
    b = GraphBuilder(x)
    (X,) = b.inputs
    e = b("subtract", X, b("max", X, axis=1, keepdims=True))
    graph = b.output(b("divide", e, b("sum", e, axis=1, keepdims=True)))
    want = x - x.max(axis=1, keepdims=True)
    want = want / want.sum(axis=1, keepdims=True)
    compiled = numba_backend(graph, [x])
    (name, source), = compiled.kernels.items()
    assert f"# {name}_row_long, inlined" in source
    (got,) = compiled.fn(x)
    _same(got, want)
    module = _module(compiled, name)
    assert len(getattr(module, name).signatures) == 1
    assert getattr(module, f"{name}_row_long").signatures == []  # only the parallel twin calls it


def test_flat_twin_entry_is_inlined_into_its_caller():
    """A mean of squares over all axes of a C-contiguous 2-D array: NumPy's flattened
    pairwise order, bit for bit."""
    x = np.random.default_rng(1).uniform(-1, 1, (64, 48)).astype(np.float32)
    b = GraphBuilder(x)
    (X,) = b.inputs
    graph = b.output(b("mean", b("multiply", X, X)))
    compiled = numba_backend(graph, [x])
    (name, source), = compiled.kernels.items()
    assert f'inline="always")\ndef {name}_flat(' in source
    (got,) = compiled.fn(x)
    _same(got, (x * x).mean())


@pytest.mark.slow  # two vecmath sin/exp compiles (serial and prange): ~8 s CPU
def test_parallel_sin_kernel_runs_spans_with_serial_bits():
    """Above the parallel threshold, an exp(sin) kernel's prange twin calls its span function on
    slices aligned to the fast blocks; every element has the serial kernel's bits (also
    arguments past the fast reduction, in the middle of a span and in the tail)."""
    n = 1000
    x = np.random.default_rng(2).uniform(-3, 3, n)
    x[[3, 517, n - 2]] = [1e6, -1e7, 1e300]
    x[[70, n - 1]] = [np.inf, np.nan]

    def f(x):
        return np.exp(np.sin(x))

    with ac.config.patch(parallel_threshold=256, vector_math_min_elements=256), \
            np.errstate(invalid="ignore"):
        compiled = numba_backend(_graph_of_sin(x), [x])
        (name, source), = compiled.kernels.items()
        assert f"{name}_parallel_span(" in source
        (parallel,) = compiled.fn(x)
        module = _module(compiled, name)
        assert len(getattr(module, f"{name}_parallel").signatures) == 1
        serial = np.empty_like(x)
        getattr(module, name)(x, serial)  # the serial entry (same module: one more compile)
    _same(parallel, serial)
    with np.errstate(invalid="ignore"):
        want = f(x)
    assert np.allclose(parallel, want, rtol=1e-14, atol=0, equal_nan=True)  # vecmath: ulps


def _graph_of_sin(x: np.ndarray):
    b = GraphBuilder(x)
    (X,) = b.inputs
    return b.output(b("exp", b("sin", X)))


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
