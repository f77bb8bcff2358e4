"""Backward-graph clean-ups: a reduction's cotangent is not materialised by ``broadcast_to``
before a pointwise op that broadcasts it anyway, and ``x * x`` gets one backward product."""

from __future__ import annotations

import io
import contextlib

import numpy as np
import pytest

import astcompiler as ac

from .fd import assert_gradients


def layernorm_loss(x, weight, bias, y):
    centered = x - x.mean(axis=1, keepdims=True)
    var = (centered * centered).mean(axis=1, keepdims=True)
    out = centered / np.sqrt(var + 1e-5) * weight + bias
    return np.mean((out - y) ** 2)


def _inputs(dtype):
    rng = np.random.default_rng(3)
    return [rng.standard_normal((6, 5)).astype(dtype), rng.uniform(0.5, 1.5, 5).astype(dtype),
            rng.standard_normal(5).astype(dtype), rng.standard_normal((6, 5)).astype(dtype)]


@pytest.mark.slow  # one numba compile: ~6-14 s under load
def test_layernorm_gradients_match_finite_differences_and_eager():
    args64 = _inputs(np.float64)
    eager = ac.value_and_grad(layernorm_loss, argnums=(0, 1, 2, 3))
    value, grads = eager(*args64)
    assert value == layernorm_loss(*args64)
    assert_gradients(layernorm_loss, args64, grads)
    args32 = _inputs(np.float32)
    compiled = ac.compile(ac.value_and_grad(layernorm_loss, argnums=(0, 1, 2)))
    got_value, got = compiled(*args32)
    want_value, want = ac.value_and_grad(layernorm_loss, argnums=(0, 1, 2))(*args32)
    assert got_value.tobytes() == want_value.tobytes()
    for g, w in zip(got, want):
        assert (g.dtype, g.shape, g.tobytes()) == (w.dtype, w.shape, w.tobytes())
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        ac.show(compiled)
    backward = shown.getvalue().split("# ----- backward_code -----")[1].split("# -----")[0]
    # the reductions' cotangents (mean over axis 1 twice, the loss's mean) reach their
    # pointwise users unbroadcast; x * x's two partials are one node
    assert "np.broadcast_to(" not in backward
    assert backward.count("np.multiply(divide_5, subtract)") == 1
