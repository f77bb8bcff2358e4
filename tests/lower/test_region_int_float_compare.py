"""Python compares an int with a float exactly (no rounding of the int): so must loop kernels."""

import operator

import numpy as np
import pytest

import astcompiler as ac

OPS = [operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge]
PAIRS = [(3, 3.0), (3, 2.5), (2 ** 53 + 1, float(2 ** 53)), (2 ** 60 + 3, float(2 ** 60)),
         (2 ** 63 - 1, float(2 ** 63)), (-2 ** 63, -float(2 ** 63)), (5, float("nan")),
         (-7, float("inf")), (7, float("-inf")), (True, 1.0)]


def counts(x, a, b):
    found = []
    for i in range(x.shape[0]):
        found.append((a < b, a <= b, a == b, a != b, a > b, a >= b,
                      b < a, b <= a, b == a, b != a, b > a, b >= a))
    return found


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_int_float_comparisons_in_loops_are_exact(a, b):
    compiled = ac.compile(counts, backend="numba")
    x = np.zeros(2)
    assert compiled(x, a, b) == counts(x, a, b)


def test_the_loop_stays_one_structured_kernel():
    def hits(x, n):
        total = 0
        for i in range(x.shape[0]):
            if n + i == float(n + i) + 0.0:
                total += 1
        return total

    compiled = ac.compile(hits, backend="numba")
    for args in [(np.ones(2), 3), (np.ones(3), 2 ** 53 + 1), (np.ones(2), 2 ** 60 + 3)]:
        assert compiled(*args) == hits(*args)
    assert "structured numba function" in compiled.entries[-1].output_code
