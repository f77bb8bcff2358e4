"""Fused epilogues of batched products (simulator): a pointwise kernel that is the only reader
of a 3-D ``matmul`` runs in the product's store, as for 2-D (one launch, the product never
stored); results within the product's documented bound."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu import runtime
from astcompiler.lower.numba.gpu.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")
R = np.random.default_rng(3)


def batched_layer(a, b, bias):
    return np.maximum(a @ b + bias, 0.0)


def also_returned(a, b, bias):
    c = a @ b
    return c + bias, c


@pytest.fixture
def launches(monkeypatch):
    """Counts product kernel launches (fused or not) and other kernels' launches."""
    counts = {"product": 0, "kernel": 0}
    real_grid, real_kernel = runtime.MatmulLauncher.grid, runtime.KernelLauncher.launch

    def grid(self, shape):
        counts["product"] += 1
        return real_grid(self, shape)

    def kernel(self, *args, **kwargs):
        counts["kernel"] += 1
        return real_kernel(self, *args, **kwargs)
    monkeypatch.setattr(runtime.MatmulLauncher, "grid", grid)
    monkeypatch.setattr(runtime.KernelLauncher, "launch", kernel)
    return counts


def bound(a, b):
    depth = a.shape[-1]
    return 2 * depth * np.finfo(np.float64).eps * (np.abs(a) @ np.abs(b))


@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)),
                                    ((3, 4), (2, 4, 5))])
def test_batched_epilogue_runs_in_the_store(shapes, launches):
    compiled = ac.compile(batched_layer, device="cuda")
    a, b, bias = R.standard_normal(shapes[0]), R.standard_normal(shapes[1]), R.standard_normal(5)
    for args in ((a, b, bias), tuple(cuda.to_device(v) for v in (a, b, bias))):
        launches.update(product=0, kernel=0)
        got = compiled(*args)
        got = got.copy_to_host() if is_device_array(got) else got
        want = batched_layer(a, b, bias)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert np.all(np.abs(got - want) <= bound(a, b) + 1e-300)
        assert launches == {"product": 1, "kernel": 0}  # one launch: the fused product
    assert "fused into matrix products' stores" in compiled.entries[0].output_code


def test_a_returned_product_is_not_fused(launches):
    compiled = ac.compile(also_returned, device="cuda")
    a, b, bias = R.standard_normal((2, 3, 4)), R.standard_normal((2, 4, 5)), np.ones(5)
    got, product = compiled(a, b, bias)
    want, want_product = also_returned(a, b, bias)
    assert np.all(np.abs(product - want_product) <= bound(a, b) + 1e-300)
    assert np.all(np.abs(got - want) <= bound(a, b) + 1e-300)
    assert launches == {"product": 1, "kernel": 1}
