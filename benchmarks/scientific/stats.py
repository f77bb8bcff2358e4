"""Statistics and data kernels: histograms, cumulative sums, sorting, quadrature, standardisation,
discounted returns, pairwise distances, a k-means step."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def histogram_loop(x, lo, hi, nbins):
    counts = np.zeros(nbins, dtype=np.int64)
    width = (hi - lo) / nbins
    for v in x:
        k = int((v - lo) / width)
        if 0 <= k < nbins:
            counts[k] += 1
    return counts


def moving_average(x, w):
    c = np.cumsum(np.concatenate((np.zeros(1), x)))
    return (c[w:] - c[:-w]) / w


def cdf_normalise(x):
    s = np.sort(x)
    c = np.cumsum(s)
    return s, c / c[-1]


def insertion_sort(x):
    a = x.copy()
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


def trapezoid_quadrature(k, n):
    xs = np.linspace(0.0, 4.0, n)
    ys = np.exp(-xs ** 2) * np.cos(k * xs)
    return (ys[1:] + ys[:-1]).sum() * (xs[1] - xs[0]) / 2.0


def standardise(X):
    mu = X.mean(axis=0, keepdims=True)
    sd = X.std(axis=0, keepdims=True)
    return (X - mu) / sd


def discounted_returns(rewards, gamma):
    out = np.empty_like(rewards)
    running = 0.0
    for t in range(rewards.shape[0] - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def reverse_cumsum(x):
    return np.flip(np.cumsum(np.flip(x)))


def pairwise_distances(X):
    d = X[:, None, :] - X[None, :, :]
    return np.sqrt((d * d).sum(axis=-1))


def kmeans_step(X, centroids):
    d = ((X[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    labels = np.argmin(d, axis=1)
    k = centroids.shape[0]
    new = np.zeros_like(centroids)
    counts = np.zeros(k)
    for i in range(X.shape[0]):
        new[labels[i]] += X[i]
        counts[labels[i]] += 1.0
    for j in range(k):
        if counts[j] > 0:
            new[j] /= counts[j]
        else:
            new[j] = centroids[j]
    return labels, new


# -- inputs -------------------------------------------------------------------------------------


def hist_inputs(rng, n):
    return rng.standard_normal(n), -3.0, 3.0, 64


def series_inputs(rng, n):
    return rng.standard_normal(n), 16


def vector_inputs(rng, n):
    return (rng.standard_normal(n),)


def quadrature_inputs(rng, n):
    return 3.0, n


def matrix_inputs(rng, n):
    return (rng.standard_normal((n, 64)) * 3.0 + 1.0,)


def rewards_inputs(rng, n):
    return rng.standard_normal(n), 0.99


def points_inputs(rng, n):
    return (rng.standard_normal((n, 3)),)


def kmeans_inputs(rng, n):
    return rng.standard_normal((n, 4)), rng.standard_normal((8, 4))


KERNELS = [
    Kernel("histogram_loop", "stats", histogram_loop, hist_inputs, (20, 10_000, 300_000)),
    Kernel("moving_average", "stats", moving_average, series_inputs, (20, 100_000, 2_000_000)),
    Kernel("cdf_normalise", "stats", cdf_normalise, vector_inputs, (20, 100_000, 2_000_000)),
    Kernel("insertion_sort", "stats", insertion_sort, vector_inputs, (20, 300, 1000)),
    Kernel("trapezoid_quadrature", "stats", trapezoid_quadrature, quadrature_inputs,
           (20, 100_000, 2_000_000)),
    Kernel("standardise", "stats", standardise, matrix_inputs, (20, 10_000, 50_000)),
    Kernel("discounted_returns", "stats", discounted_returns, rewards_inputs,
           (20, 10_000, 300_000)),
    Kernel("reverse_cumsum", "stats", reverse_cumsum, vector_inputs, (20, 100_000, 5_000_000)),
    Kernel("pairwise_distances", "stats", pairwise_distances, points_inputs, (10, 200, 1000)),
    Kernel("kmeans_step", "stats", kmeans_step, kmeans_inputs, (20, 5000, 50_000)),
]
