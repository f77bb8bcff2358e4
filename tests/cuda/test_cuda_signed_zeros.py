"""Float max/min results that are a zero, on the CUDA target (simulator; issue 10): NumPy's
sign of such a zero is its CPU SIMD lane order's, which a GPU reduction tree does not follow, so
a float max/min result that is a zero (an output or internal to a fused kernel) sets the kernel's
device zero flag and the launcher returns the kernel's NumPy twin run on the host instead.
Plain call vs compiled: the same bits."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import assert_same_bits

cuda = pytest.importorskip("numba.cuda")


def whole_max(x):
    return (x * 1.0).max()


def row_min(x):
    return (x * 1.0).min(axis=1)


def shifted(x):
    return x - x.max()


def rows_shifted(x):
    return x - x.max(axis=1, keepdims=True)  # the max is internal to one row kernel


def mixed(shape, seed: int) -> np.ndarray:
    """Signed zeros with about a third of the elements -1 (a max that is a zero)."""
    rng = np.random.default_rng(seed)
    signs = np.where(rng.integers(0, 2, shape).astype(bool), -0.0, 0.0)
    return signs - (rng.integers(0, 3, shape) == 0)


@pytest.fixture(scope="module")
def compiled():
    return {fn: ac.compile(fn, device="cuda") for fn in (whole_max, row_min, shifted, rows_shifted)}


@pytest.mark.parametrize("fn, shape, sign", [(whole_max, 40, 1), (row_min, (3, 40), -1),
                                             (shifted, 40, 1), (rows_shifted, (3, 40), 1)])
def test_zero_results_have_numpys_sign(compiled, fn, shape, sign):
    for seed in range(6):
        x = sign * mixed(shape, seed)
        assert_same_bits(np.asarray(compiled[fn](x)), np.asarray(fn(x)))


def test_only_zero_results_run_on_the_host(compiled, monkeypatch):
    from astcompiler.lower.numba.gpu import runtime
    hosted = []
    real = runtime.KernelLauncher.host
    monkeypatch.setattr(runtime.KernelLauncher, "host",
                        lambda self, *args: hosted.append(self.name) or real(self, *args))
    with np.errstate(all="ignore"):  # (no FP flag read for warnings: only the zero flag)
        for x, runs in ((mixed((3, 40), 7) + 2.0, 0), (mixed((3, 40), 8), 1)):
            assert_same_bits(compiled[rows_shifted](x), rows_shifted(x))
            assert len(hosted) == runs
