"""Hand-written numba kernels: the baseline a careful numba user would write for each workload.

Rules: plain ``njit`` (fastmath off), ``prange`` over the outer dimension where there is enough work
to amortise a parallel launch (about 2.5 us), outputs allocated inside the kernel as NumPy would,
and the same dtype as NumPy's result. Matmul goes to NumPy's BLAS: ``np.dot`` inside ``njit`` needs
SciPy, and no hand-written loop nest competes with BLAS anyway.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def pointwise(x, y, z):
    """``2.0*x + 3.0*y - 0.5*z + x*y`` over 1-d arrays, one pass."""
    out = np.empty_like(x)
    for i in prange(x.shape[0]):
        out[i] = 2.0 * x[i] + 3.0 * y[i] - 0.5 * z[i] + x[i] * y[i]
    return out


@njit(parallel=True, cache=True)
def transcendental(x, y):
    """``exp(sin(x)) * sqrt(abs(y))`` over 1-d arrays, one pass."""
    out = np.empty_like(x)
    for i in prange(x.shape[0]):
        out[i] = math.exp(math.sin(x[i])) * math.sqrt(abs(y[i]))
    return out


@njit(parallel=True, cache=True)
def softmax(x):
    """Row softmax of a 2-d array: max, exp and sum, then scale; one row per parallel iteration."""
    rows, cols = x.shape
    out = np.empty_like(x)
    for i in prange(rows):
        row_max = x[i, 0]
        for j in range(1, cols):
            if x[i, j] > row_max:
                row_max = x[i, j]
        total = x.dtype.type(0.0)
        for j in range(cols):
            e = np.exp(x[i, j] - row_max)
            out[i, j] = e
            total += e
        scale = x.dtype.type(1.0) / total
        for j in range(cols):
            out[i, j] *= scale
    return out


@njit(parallel=True, cache=True)
def _layernorm(x, weight, bias, eps):
    rows, cols = x.shape
    out = np.empty_like(x)
    for i in prange(rows):
        total = 0.0
        for j in range(cols):
            total += x[i, j]
        mean = total / cols
        sq = 0.0
        for j in range(cols):
            d = x[i, j] - mean
            sq += d * d
        inv = 1.0 / math.sqrt(sq / cols + eps)
        for j in range(cols):
            out[i, j] = (x[i, j] - mean) * inv * weight[j] + bias[j]
    return out


def layernorm(x, weight, bias):
    """Layer norm over the last axis (eps 1e-5), with weight and bias; float64 accumulation."""
    return _layernorm(x, weight, bias, 1e-5)


@njit(cache=True)
def _add_bias_relu(h, b):
    for i in range(h.shape[0]):
        for j in range(h.shape[1]):
            v = h[i, j] + b[j]
            h[i, j] = v if v > 0.0 else 0.0


@njit(cache=True)
def _add_bias(h, b):
    for i in range(h.shape[0]):
        for j in range(h.shape[1]):
            h[i, j] += b[j]


def mlp(x, w1, b1, w2, b2):
    """``relu(x @ w1 + b1) @ w2 + b2``: BLAS matmuls, bias and relu fused in place by numba."""
    h = x @ w1
    _add_bias_relu(h, b1)
    out = h @ w2
    _add_bias(out, b2)
    return out


@njit(parallel=True, cache=True)
def jacobi(u):
    """One Jacobi step on a 2-d grid: the boundary copied, the interior the mean of 4 neighbours."""
    rows, cols = u.shape
    out = np.empty_like(u)
    out[0, :] = u[0, :]
    out[rows - 1, :] = u[rows - 1, :]
    for i in prange(1, rows - 1):
        out[i, 0] = u[i, 0]
        for j in range(1, cols - 1):
            out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
        out[i, cols - 1] = u[i, cols - 1]
    return out


@njit(parallel=True, cache=True)
def row_stats(x):
    """Per row: mean, variance (two passes, float64 accumulation) and the first argmax."""
    rows, cols = x.shape
    mean = np.empty(rows, dtype=x.dtype)
    var = np.empty(rows, dtype=x.dtype)
    arg = np.empty(rows, dtype=np.int64)
    for i in prange(rows):
        total = 0.0
        best, best_j = x[i, 0], 0
        for j in range(cols):
            v = x[i, j]
            total += v
            if v > best:
                best, best_j = v, j
        m = total / cols
        sq = 0.0
        for j in range(cols):
            d = x[i, j] - m
            sq += d * d
        mean[i], var[i], arg[i] = m, sq / cols, best_j
    return mean, var, arg


@njit(cache=True)
def tiny(x, y):
    """``x * y + 1.0`` on a few elements: serial, to measure call overhead."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * y[i] + 1.0
    return out
