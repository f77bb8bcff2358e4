"""Means, variances and standard deviations over empty axes on the CUDA target: NumPy's
values and NumPy's "Mean of empty slice" / "Degrees of freedom <= 0" warnings, also under
``np.errstate(all="ignore")`` (they are Python warnings, not FP flags), host and device
inputs, whole arrays and axes (an empty reduction runs on the host: runtime.KernelLauncher)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac

cuda = pytest.importorskip("numba.cuda")


def stats(x):
    return x.mean(axis=1) + x.var(axis=1) * 2.0, x.std()


def outcome(fn, x):
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        value = fn(x)
    return value, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("on_device", [False, True])
@pytest.mark.parametrize("shape", [(3, 0), (0, 4), (2, 5)])
def test_empty_axes_give_numpys_values_and_warnings(shape, on_device):
    x = np.arange(float(np.prod(shape))).reshape(shape)
    compiled = ac.compile(stats, device="cuda")
    want, want_warnings = outcome(stats, x)
    got, got_warnings = outcome(compiled, cuda.to_device(x) if on_device else x)
    got = tuple(g.copy_to_host() if hasattr(g, "copy_to_host") else g for g in got)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert got_warnings == want_warnings
    assert bool(want_warnings) == (0 in shape)
