"""Red-team s10: loop kernels (loop regions, sizes > unroll_limit) against the plain call.

A Python int that leaves int64 inside a compiled loop region raises astcompiler's own
OverflowError ("... after the loop had written to its inputs") even when the loop wrote only a
local array made inside the function, where the plain call succeeds or raises another error.
Expected to fail today."""

from __future__ import annotations

import numpy as np

from .red_team_support import differential


def test_python_int_hash_outgrowing_int64_with_local_output_array():
    """Plain: exact big-int arithmetic, returns an int64 array. Compiled: OverflowError."""
    def rolling_hash(x):
        out = np.zeros(len(x), dtype=np.int64)
        h = 0
        for i in range(len(x)):
            h = h * 31 + int(x[i])
            out[i] = h % 1000003
        return out
    differential(rolling_hash, lambda: [(np.arange(100),), (np.arange(100) + 7,)])


def test_python_int_factorial_mod_with_local_output_array():
    def fact_mod(n_arr):
        out = np.zeros(len(n_arr), dtype=np.int64)
        f = 1
        for i in range(len(n_arr)):
            f = f * int(n_arr[i])
            out[i] = f % 97
        return out, f % 97
    differential(fact_mod, lambda: [(np.arange(1, 101),)])


def _hist(x, nbins):
    counts = np.zeros(nbins, dtype=np.int64)
    for i in range(len(x)):
        counts[int(x[i] * nbins)] += 1
    return counts


def _hist_calls(bad):
    def make():
        base = np.random.default_rng(0).random(100)
        a = base.copy()
        a[50] = bad
        return [(base, 10), (a, 10)]
    return make


def test_histogram_int_of_inf_raises_pythons_overflow_error():
    """Plain: OverflowError('cannot convert float infinity to integer')."""
    differential(_hist, _hist_calls(np.inf))


def test_histogram_int_of_huge_value_as_index_raises_index_error():
    """Plain: int(1e21) is a Python int past intp, NumPy raises IndexError ('only integers,
    slices ...'); compiled: OverflowError ('a Python int in a compiled loop outgrew 64 bits')."""
    differential(_hist, _hist_calls(1e20))


def test_python_int_shift_outgrowing_int64_masked_into_local_array():
    """The same root cause via ``<<`` and ``&``: plain succeeds, compiled raises OverflowError."""
    def shift_mask(x):
        out = np.zeros(len(x), dtype=np.int64)
        s = 1
        for i in range(len(x)):
            s = s << 1
            out[i] = s & 0xFF
        return out
    differential(shift_mask, lambda: [(np.arange(100),)])
