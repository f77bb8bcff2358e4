"""An iterative radix-2 FFT (bit reversal, butterflies) and a direct DFT."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def fft_radix2(x):
    n = x.shape[0]
    levels = n.bit_length() - 1
    order = np.zeros(n, dtype=np.int64)
    for i in range(n):
        r = 0
        v = i
        for _ in range(levels):
            r = (r << 1) | (v & 1)
            v >>= 1
        order[i] = r
    a = x[order].astype(np.complex128)
    size = 2
    while size <= n:
        half = size // 2
        tw = np.exp(-2j * np.pi * np.arange(half) / size)
        for start in range(0, n, size):
            top = a[start:start + half].copy()
            bot = a[start + half:start + size] * tw
            a[start:start + half] = top + bot
            a[start + half:start + size] = top - bot
        size *= 2
    return a


def fft_loops(re, im):
    n = re.shape[0]
    ar = re.copy()
    ai = im.copy()
    j = 0
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j ^= bit
        if i < j:
            ar[i], ar[j] = ar[j], ar[i]
            ai[i], ai[j] = ai[j], ai[i]
    size = 2
    while size <= n:
        ang = -2.0 * np.pi / size
        for start in range(0, n, size):
            for k in range(size // 2):
                wr = np.cos(ang * k)
                wi = np.sin(ang * k)
                p = start + k
                q = p + size // 2
                tr = wr * ar[q] - wi * ai[q]
                ti = wr * ai[q] + wi * ar[q]
                ar[q] = ar[p] - tr
                ai[q] = ai[p] - ti
                ar[p] = ar[p] + tr
                ai[p] = ai[p] + ti
        size *= 2
    return ar, ai


def dft_matrix(x):
    n = x.shape[0]
    k = np.arange(n)
    W = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return W @ x


# -- inputs -------------------------------------------------------------------------------------


def complex_inputs(rng, n):
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n),)


def split_inputs(rng, n):
    return rng.standard_normal(n), rng.standard_normal(n)


KERNELS = [
    Kernel("fft_radix2", "fft", fft_radix2, complex_inputs, (16, 1024, 16384)),
    Kernel("fft_loops", "fft", fft_loops, split_inputs, (16, 1024, 8192)),
    Kernel("dft_matrix", "fft", dft_matrix, complex_inputs, (8, 128, 1024)),
]
