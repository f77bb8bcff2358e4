"""Compiled kernels the scaling tests send to worker processes (a module: pickled by reference)."""

from __future__ import annotations

import numpy as np

import astcompiler as ac


def smooth_plain(block):
    return np.sqrt(np.abs(block)) * 0.5 + block * block - 1.0


smooth = ac.compile(smooth_plain)  # the compiled one, what workers run


@ac.compile
def scaled_sum(chunk):
    return (chunk * 2.0 + 1.0).sum()


def entry_counts() -> dict[str, int]:
    """How many compiled entries this process holds for each kernel (run in a worker)."""
    return {"smooth": len(smooth.entries), "scaled_sum": len(scaled_sum.entries)}
