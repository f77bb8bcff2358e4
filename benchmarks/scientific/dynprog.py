"""Dynamic programming: edit distance, longest common subsequence, 0/1 knapsack."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def edit_distance(a, b):
    m, n = a.shape[0], b.shape[0]
    D = np.zeros((m + 1, n + 1), dtype=np.int64)
    D[:, 0] = np.arange(m + 1)
    D[0, :] = np.arange(n + 1)
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + cost)
    return D[m, n]


def lcs_length(a, b):
    m, n = a.shape[0], b.shape[0]
    prev = np.zeros(n + 1, dtype=np.int64)
    for i in range(m):
        cur = np.zeros(n + 1, dtype=np.int64)
        for j in range(n):
            if a[i] == b[j]:
                cur[j + 1] = prev[j] + 1
            else:
                cur[j + 1] = max(prev[j + 1], cur[j])
        prev = cur
    return int(prev[n])


def knapsack(weights, values, capacity):
    best = np.zeros(capacity + 1)
    for i in range(weights.shape[0]):
        w = weights[i]
        best[w:] = np.maximum(best[w:], best[:capacity + 1 - w] + values[i])
    return best[capacity]


def longest_increasing_run(x):
    best = 1
    run = 1
    for i in range(1, x.shape[0]):
        if x[i] > x[i - 1]:
            run += 1
            if run > best:
                best = run
        else:
            run = 1
    return best


# -- inputs -------------------------------------------------------------------------------------


def strings_inputs(rng, n):
    return rng.integers(0, 4, n), rng.integers(0, 4, n + 3)


def knapsack_inputs(rng, n):
    return rng.integers(1, 50, n), rng.random(n) * 10.0, 20 * n


def run_inputs(rng, n):
    return (np.cumsum(rng.standard_normal(n)),)


KERNELS = [
    Kernel("edit_distance", "dynprog", edit_distance, strings_inputs, (8, 100, 300)),
    Kernel("lcs_length", "dynprog", lcs_length, strings_inputs, (8, 100, 400)),
    Kernel("knapsack", "dynprog", knapsack, knapsack_inputs, (6, 100, 1000)),
    Kernel("longest_increasing_run", "dynprog", longest_increasing_run, run_inputs,
           (20, 10_000, 300_000)),
]
