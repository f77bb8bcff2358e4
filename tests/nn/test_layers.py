"""Each layer's math against a NumPy (or math-module) reference, and numerical checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from astcompiler import nn
from astcompiler.nn.functional import erf

vec_erf = np.vectorize(math.erf)


@pytest.fixture(autouse=True)
def numpy_errors_raise():
    """No layer may overflow, divide by zero or produce invalid values silently."""
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        yield


# -- erf and GELU -----------------------------------------------------------------------------


def test_erf_matches_math_erf() -> None:
    x = np.concatenate([np.linspace(-7, 7, 20001), [0.0, 0.5, -0.5, 1e-300, -1e-12, 5.9, 6.0,
                                                    6.1, 30.0, 1e300, -1e300]])
    np.testing.assert_allclose(erf(x), vec_erf(x), rtol=1e-14, atol=1e-15)
    small = np.array([1e-300, -1e-12, 1e-5])
    np.testing.assert_allclose(erf(small), vec_erf(small), rtol=1e-15, atol=0)  # relative
    assert erf(np.array([np.inf]))[0] == 1.0 and erf(np.array([-np.inf]))[0] == -1.0


def test_erf_special_values_and_dtype() -> None:
    with np.errstate(invalid="ignore"):
        assert np.isnan(erf(np.array([np.nan]))).all()
    x32 = np.linspace(-4, 4, 101, dtype=np.float32)
    out = erf(x32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, vec_erf(x32.astype(np.float64)), atol=3e-7)


def test_gelu_exact() -> None:
    x = np.linspace(-10, 10, 4001)
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(nn.GELU()(x), expected, rtol=1e-13, atol=1e-15)
    assert repr(nn.GELU()) == "GELU(approximate='none')"


def test_gelu_tanh() -> None:
    x = np.linspace(-6, 6, 1001)
    expected = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(nn.GELU(approximate="tanh")(x), expected, rtol=1e-14, atol=1e-15)
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    with pytest.raises(ValueError, match="approximate argument"):
        nn.GELU("fast")


def test_gelu_float32_stays_float32() -> None:
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    assert nn.GELU()(x).dtype == np.float32 and nn.GELU("tanh")(x).dtype == np.float32


# -- element-wise -----------------------------------------------------------------------------


def test_relu_tanh_identity() -> None:
    x = np.array([-2.0, -0.0, 0.0, 3.5])
    np.testing.assert_array_equal(nn.ReLU()(x), [0.0, 0.0, 0.0, 3.5])
    np.testing.assert_array_equal(nn.Tanh()(x), np.tanh(x))
    assert nn.Identity(1, foo=2)(x) is x
    assert nn.ReLU()(np.arange(-2, 2)).dtype == np.arange(2).dtype


def test_sigmoid_is_stable_and_accurate() -> None:
    x = np.array([-1000.0, -40.0, -1.0, 0.0, 1.0, 40.0, 1000.0])
    out = nn.Sigmoid()(x)
    expected = [0.0, 1 / (1 + math.exp(40)), 1 / (1 + math.e), 0.5, 1 / (1 + math.exp(-1)),
                1.0, 1.0]
    np.testing.assert_allclose(out, expected, rtol=1e-15)
    assert out[1] > 0  # no underflow to zero at -40


def test_softmax() -> None:
    x = np.random.default_rng(0).standard_normal((4, 5))
    for dim in (0, 1, -1):
        ref = np.exp(x) / np.exp(x).sum(axis=dim, keepdims=True)
        np.testing.assert_allclose(nn.Softmax(dim)(x), ref, rtol=1e-14)
    big = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -np.inf]])
    out = nn.Softmax(dim=1)(big)
    np.testing.assert_allclose(out[0], np.exp([-2.0, -1.0, 0.0]) / np.exp([-2.0, -1.0, 0.0]).sum())
    np.testing.assert_allclose(out[1], [0.5, 0.5, 0.0])
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"


def test_softmax_implicit_dim_warns_and_follows_torch() -> None:
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        soft = nn.Softmax()
    np.testing.assert_allclose(soft(np.zeros((2, 4))).sum(axis=1), 1.0)
    np.testing.assert_allclose(soft(np.zeros(3)).sum(), 1.0)


# -- Linear -----------------------------------------------------------------------------------


def test_linear_math_and_init() -> None:
    lin = nn.Linear(9, 4, rng=0)
    assert lin.weight.shape == (4, 9) and lin.bias.shape == (4,)
    bound = 1 / 3
    assert np.abs(lin.weight).max() <= bound and np.abs(lin.bias).max() <= bound
    assert np.abs(lin.weight).max() > 0.5 * bound    # actually spread over the range
    x = np.random.default_rng(1).standard_normal((2, 3, 9))
    np.testing.assert_allclose(lin(x), x @ np.asarray(lin.weight).T + np.asarray(lin.bias))
    np.testing.assert_allclose(lin(x[0, 0]), lin.weight @ x[0, 0] + lin.bias)
    assert type(lin(x)) is np.ndarray


def test_linear_options() -> None:
    a, b = nn.Linear(3, 2, rng=5), nn.Linear(3, 2, rng=5)
    np.testing.assert_array_equal(a.weight, b.weight)
    no_bias = nn.Linear(3, 2, bias=False, rng=0)
    assert no_bias.bias is None and list(no_bias.state_dict()) == ["weight"]
    np.testing.assert_allclose(no_bias(np.ones(3)), no_bias.weight.sum(axis=1))
    f32 = nn.Linear(3, 2, dtype=np.float32, rng=0)
    assert f32.weight.dtype == np.float32 and f32(np.ones(3, np.float32)).dtype == np.float32
    assert nn.Linear(0, 2, rng=0).weight.shape == (2, 0)
    assert repr(no_bias) == "Linear(in_features=3, out_features=2, bias=False)"


# -- LayerNorm --------------------------------------------------------------------------------


def test_layer_norm_matches_reference() -> None:
    x = np.random.default_rng(0).standard_normal((3, 4, 5)) * 7 + 2
    norm = nn.LayerNorm(5)
    out = norm(x)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(out.var(-1), 1, rtol=1e-5)
    norm.weight[...] = 2.0
    norm.bias[...] = 0.5
    np.testing.assert_allclose(norm(x), 2 * ref + 0.5, rtol=1e-12)


def test_layer_norm_multi_dim_and_options() -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    out = nn.LayerNorm((3, 4), eps=1e-3, elementwise_affine=False)(x)
    ref = (x - x.mean((1, 2), keepdims=True)) / np.sqrt(x.var((1, 2), keepdims=True) + 1e-3)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    plain = nn.LayerNorm(4, elementwise_affine=False)
    assert plain.weight is None and plain.bias is None and list(plain.parameters()) == []
    no_bias = nn.LayerNorm(4, bias=False)
    assert no_bias.bias is None and no_bias.weight.shape == (4,)
    assert repr(nn.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 3, 4\], but got "
                       r"input of size \[2, 4\]"):
        nn.LayerNorm((3, 4))(np.zeros((2, 4)))


def test_layer_norm_constant_input() -> None:
    out = nn.LayerNorm(3)(np.full((2, 3), 5.0))
    np.testing.assert_array_equal(out, 0.0)


# -- Embedding --------------------------------------------------------------------------------


def test_embedding() -> None:
    emb = nn.Embedding(10, 3, padding_idx=-1, rng=0)
    assert emb.padding_idx == 9 and (emb.weight[9] == 0).all()
    idx = np.array([[1, 9], [0, 1]])
    out = emb(idx)
    assert out.shape == (2, 2, 3) and type(out) is np.ndarray
    np.testing.assert_array_equal(out[0, 0], emb.weight[1])
    np.testing.assert_array_equal(out[1, 1], out[0, 0])
    assert repr(emb) == "Embedding(10, 3, padding_idx=9)"
    assert repr(nn.Embedding(4, 2, rng=0)) == "Embedding(4, 2)"
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(IndexError):
        emb(np.array([10]))


def test_embedding_from_pretrained_shares_memory() -> None:
    table = np.arange(6.0).reshape(3, 2)
    emb = nn.Embedding.from_pretrained(table)
    assert np.shares_memory(emb.weight, table) and emb.num_embeddings == 3
    np.testing.assert_array_equal(emb(np.array([2])), [[4.0, 5.0]])
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.Embedding.from_pretrained(np.zeros(3))


# -- Dropout ----------------------------------------------------------------------------------


def test_dropout_eval_is_identity() -> None:
    x = np.ones((4, 4))
    drop = nn.Dropout(0.5, rng=0).eval()
    assert drop(x) is x
    assert nn.Dropout(0.0, rng=0)(x) is x


def test_dropout_train_seeded_and_scaled() -> None:
    x = np.random.default_rng(3).standard_normal((200, 50))
    a, b = nn.Dropout(0.3, rng=11), nn.Dropout(0.3, rng=np.random.default_rng(11))
    out_a, out_b = a(x), b(x)
    np.testing.assert_array_equal(out_a, out_b)                 # same seed, same mask
    assert not np.array_equal(a(x), out_a)                      # the generator advances
    kept = out_a != 0
    np.testing.assert_allclose(out_a[kept], x[kept] / 0.7, rtol=1e-15)
    assert abs((~kept).mean() - 0.3) < 0.02
    assert (x == np.random.default_rng(3).standard_normal((200, 50))).all()  # input untouched


def test_dropout_edges() -> None:
    x = np.ones(5)
    np.testing.assert_array_equal(nn.Dropout(1.0, rng=0)(x), 0.0)
    assert nn.Dropout(0.5, rng=0)(np.ones(3, np.float32)).dtype == np.float32
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            nn.Dropout(p)
    assert repr(nn.Dropout(0.25)) == "Dropout(p=0.25)"
