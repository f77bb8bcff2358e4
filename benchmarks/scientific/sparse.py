"""Sparse CSR matrix-vector products: index-array loops and a vectorised gather/bincount."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def csr_matvec(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s
    return y


def csr_matvec_vectorised(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    rows = np.repeat(np.arange(n), np.diff(indptr))
    return np.bincount(rows, weights=data * x[indices], minlength=n)


def csr_row_norms(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        vals = data[lo:hi]
        out[i] = np.sqrt((vals * vals).sum()) if hi > lo else 0.0
    return out


# -- inputs -------------------------------------------------------------------------------------


def csr_inputs(rng, n):
    per_row = rng.integers(0, 12, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(per_row)
    nnz = int(indptr[-1])
    indices = rng.integers(0, n, nnz)
    return indptr, indices, rng.standard_normal(nnz), rng.standard_normal(n)


KERNELS = [
    Kernel("csr_matvec", "sparse", csr_matvec, csr_inputs, (8, 5000, 50_000)),
    Kernel("csr_matvec_vectorised", "sparse", csr_matvec_vectorised, csr_inputs,
           (8, 5000, 500_000)),
    Kernel("csr_row_norms", "sparse", csr_row_norms, csr_inputs, (8, 5000, 50_000)),
]
