"""NumPy kernels written the way users write them: loops, element access, slices, branches."""

from __future__ import annotations

import numpy as np


def triangular_solve(L, b):
    n = L.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]
    return x


def cholesky(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i + 1):
            s = np.dot(L[i, :j], L[j, :j])
            if i == j:
                L[i, i] = np.sqrt(A[i, i] - s)
            else:
                L[i, j] = (A[i, j] - s) / L[j, j]
    return L


def heat_stencil(u, steps):
    for t in range(steps):
        u[1:-1] = u[1:-1] + 0.25 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return u


def reverse_sweep(a, c):
    n = a.shape[0]
    for i in range(n - 2, -1, -1):
        a[i] = a[i] - c * a[i + 1]
    return a


def checksum(data):
    h = np.uint32(0)
    for i in range(data.shape[0]):
        h = ((h << np.uint32(5)) ^ (h >> np.uint32(2)) ^ data[i]) & np.uint32(0xFFFFFF)
    return h


def escape_time(cs, maxiter):
    out = np.zeros(cs.shape[0], np.int64)
    for k in range(cs.shape[0]):
        z = 0j
        c = cs[k]
        n = 0
        while n < maxiter:
            if abs(z) > 2.0:
                break
            z = z * z + c
            n += 1
        out[k] = n
    return out


def shortest_paths(d):
    n = d.shape[0]
    for k in range(n):
        d = np.minimum(d, np.add.outer(d[:, k], d[k, :]))
    return d


def overlapping_shift(a):
    a[1:] = a[:-1] * 2
    return a


def signed_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s += x[i]
        else:
            s -= 0.5 * x[i]
    return s


def first_negative(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return i
    return -1


def skip_and_stop(x, limit):
    total = 0.0
    count = 0
    for v in x:
        if v < 0:
            continue
        total += v
        count += 1
        if total > limit:
            break
    return total, count


def flip_update(y, alpha):
    k = y.shape[0] // 2
    y[:k] += alpha * np.flip(y[:k])
    return y


def branch_on_sum(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y
