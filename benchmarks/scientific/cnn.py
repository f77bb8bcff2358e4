"""CNN layers written in NumPy: convolutions (loops, offsets, stride tricks), pooling, activations,
softmax cross-entropy, batch norm."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def conv2d_direct(x, w):
    c_in, h, wd = x.shape
    c_out, _, k, _ = w.shape
    out = np.zeros((c_out, h - k + 1, wd - k + 1))
    for o in range(c_out):
        for i in range(h - k + 1):
            for j in range(wd - k + 1):
                s = 0.0
                for c in range(c_in):
                    for di in range(k):
                        for dj in range(k):
                            s += x[c, i + di, j + dj] * w[o, c, di, dj]
                out[o, i, j] = s
    return out


def conv2d_offsets(x, w, b):
    c_in, h, wd = x.shape
    c_out, _, k, _ = w.shape
    ho, wo = h - k + 1, wd - k + 1
    out = np.zeros((c_out, ho * wo))
    for di in range(k):
        for dj in range(k):
            patch = x[:, di:di + ho, dj:dj + wo].reshape(c_in, ho * wo)
            out += w[:, :, di, dj] @ patch
    out = out + b[:, None]
    return np.maximum(out, 0.0).reshape(c_out, ho, wo)


def conv2d_im2col(x, w):
    c_in, h, wd = x.shape
    c_out, _, k, _ = w.shape
    windows = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(1, 2))
    ho, wo = windows.shape[1], windows.shape[2]
    cols = windows.transpose(1, 2, 0, 3, 4).reshape(ho * wo, c_in * k * k)
    out = cols @ w.reshape(c_out, -1).T
    return out.T.reshape(c_out, ho, wo)


def maxpool2x2(x):
    c, h, w = x.shape
    return x.reshape(c, h // 2, 2, w // 2, 2).max(axis=(2, 4))


def maxpool_loops(x):
    c, h, w = x.shape
    out = np.empty((c, h // 2, w // 2), dtype=x.dtype)
    for ch in range(c):
        for i in range(h // 2):
            for j in range(w // 2):
                out[ch, i, j] = max(x[ch, 2 * i, 2 * j], x[ch, 2 * i + 1, 2 * j],
                                    x[ch, 2 * i, 2 * j + 1], x[ch, 2 * i + 1, 2 * j + 1])
    return out


def relu_bias(x, b):
    return np.maximum(x + b[:, None, None], 0.0)


def softmax_xent(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -logp[np.arange(logits.shape[0]), labels].mean()
    probs = np.exp(logp)
    return loss, probs


def batchnorm(x, gamma, beta):
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=(0, 2, 3), keepdims=True)
    xhat = (x - mean) / np.sqrt(var + 1e-5)
    return gamma[None, :, None, None] * xhat + beta[None, :, None, None]


# -- inputs -------------------------------------------------------------------------------------


def conv_inputs(rng, n):
    return rng.standard_normal((3, n, n)), rng.standard_normal((4, 3, 3, 3))


def conv_bias_inputs(rng, n):
    return (rng.standard_normal((8, n, n)), rng.standard_normal((16, 8, 3, 3)),
            rng.standard_normal(16))


def image_inputs(rng, n):
    return (rng.standard_normal((16, 2 * n, 2 * n)),)


def image_f32_inputs(rng, n):
    return (rng.standard_normal((16, 2 * n, 2 * n)).astype(np.float32),)


def relu_inputs(rng, n):
    return rng.standard_normal((32, n, n)).astype(np.float32), rng.standard_normal(32).astype(
        np.float32)


def xent_inputs(rng, n):
    return rng.standard_normal((n, 100)), rng.integers(0, 100, n)


def batchnorm_inputs(rng, n):
    return (rng.standard_normal((8, 16, n, n)).astype(np.float32),
            rng.random(16).astype(np.float32), rng.random(16).astype(np.float32))


KERNELS = [
    Kernel("conv2d_direct", "cnn", conv2d_direct, conv_inputs, (6, 16, 40)),
    Kernel("conv2d_offsets", "cnn", conv2d_offsets, conv_bias_inputs, (6, 32, 128)),
    Kernel("conv2d_im2col", "cnn", conv2d_im2col, conv_inputs, (6, 64, 256)),
    Kernel("maxpool2x2", "cnn", maxpool2x2, image_inputs, (3, 32, 128)),
    Kernel("maxpool_loops", "cnn", maxpool_loops, image_f32_inputs, (3, 32, 96)),
    Kernel("relu_bias", "cnn", relu_bias, relu_inputs, (4, 64, 256)),
    Kernel("softmax_xent", "cnn", softmax_xent, xent_inputs, (5, 500, 10_000)),
    Kernel("batchnorm", "cnn", batchnorm, batchnorm_inputs, (3, 16, 64)),
]
