"""Slices bounded by a loop's index (``LU[k + 1:, k]``) inside a loop region.

In a loop region the index is a run-time value, so such a slice has a length only the run knows
(``capture/sizes/data_lengths.py``), one per (dimension, bounds). The bounds were keyed by their
graph node, and ``k + 1`` written three times is three nodes: ``LU[k + 1:, k + 1:] -=
np.outer(LU[k + 1:, k], LU[k, k + 1:])`` compared three distinct lengths, which no guard can
decide, and ``np.outer`` had no shape rule at all (two more unknown sizes). The region failed,
the loop was unrolled past the limit and ran in Python (the corpus's ``lu_rank1`` at 1.06x of
NumPy, 2.0x now). Bounds are now keyed by the arithmetic they compute; a read of array data
stays its own key, since a write may change it between two reads.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import assert_same_bits, counted, outcome


def lu_rank1(A):
    LU = A.copy()
    for k in range(A.shape[0] - 1):
        LU[k + 1:, k] = LU[k + 1:, k] / LU[k, k]
        LU[k + 1:, k + 1:] -= np.outer(LU[k + 1:, k], LU[k, k + 1:])
    return LU


def tail_lengths(A):
    out = np.zeros(A.shape[0], dtype=np.int64)
    for k in range(A.shape[0]):
        out[k] = len(A[k + 1:, k]) + 1000 * A[k:, k + 2:].shape[1]
    return out


def reread_after_write(data, indptr):
    """``indptr[i]`` read twice around a write to it: two lengths, not one."""
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        first = data[indptr[i]:indptr[i + 1]]
        indptr[i] = indptr[i] + 1 if indptr[i] < indptr[i + 1] else indptr[i]
        second = data[indptr[i]:indptr[i + 1]]
        out[i] = first.sum() - 2.0 * second.sum() + len(first) - len(second)
    return out


def _matrix(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, n)) + n * np.eye(n)


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
def test_lu_rank1_updates_compile_to_one_loop_region(backend):
    counter, counting = counted(backend)
    compiled = ac.compile(lu_rank1, backend=counting)
    for seed in (0, 1):
        A = _matrix(80, seed)
        assert_same_bits(compiled(A), lu_rank1(A))
    assert counter.frame_count == 1
    assert [e.break_reason for e in compiled.entries] == [None]


def test_lengths_of_index_bounded_slices_follow_the_index():
    compiled = ac.compile(tail_lengths, backend="numba")
    A = np.ones((70, 70))
    assert_same_bits(compiled(A), tail_lengths(A))
    assert [e.break_reason for e in compiled.entries] == [None]


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
def test_data_bounds_read_around_a_write_keep_their_own_lengths(backend):
    compiled = ac.compile(reread_after_write, backend=backend)
    rng = np.random.default_rng(3)
    indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 5, 80))]).astype(np.int64)
    data = rng.standard_normal(int(indptr[-1]))
    args = (data, indptr)
    assert repr(outcome(compiled, copy.deepcopy(args))) == \
        repr(outcome(reread_after_write, copy.deepcopy(args)))
