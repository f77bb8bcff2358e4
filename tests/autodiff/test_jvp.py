"""``astcompiler.gradients.jvp`` (``ac.jvp`` once the public API lists it): forward-mode
derivatives as the transpose of the VJP, against central differences (float64)."""

from __future__ import annotations

import numpy as np
import pytest

from astcompiler.gradients import jvp

RNG = np.random.default_rng(5)


def layer(x, w):
    return np.sum(np.tanh(x @ w) ** 2, axis=0) / x.shape[0] + np.sin(w[0]) * w[1]


def test_jvp_matches_central_differences():
    x, w = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 2))
    tx, tw = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 2))
    out, tangent = jvp(layer, (x, w), (tx, tw))
    np.testing.assert_array_equal(out, layer(x, w))
    eps = 1e-6
    expected = (layer(x + eps * tx, w + eps * tw) - layer(x - eps * tx, w - eps * tw)) / (2 * eps)
    assert type(tangent) is np.ndarray and tangent.shape == out.shape
    assert tangent.dtype == out.dtype
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-6)


def test_jvp_needs_one_tangent_per_primal():
    with pytest.raises(TypeError, match="jvp: 2 primals but 1 tangents"):
        jvp(layer, (np.ones((2, 3)), np.ones((3, 2))), (np.ones((2, 3)),))
