"""Shapes traced on one trip of a loop may change on the next (``u[i:i + 3]`` near the end of
``u``): kernels called from loop bodies, in structured functions and in host loops, test their
operands' shapes and run the trip with NumPy's broadcasting (and errors) when they differ.

``config.unroll_limit`` is lowered to ``UNROLL_LIMIT`` here, so every loop below is a loop (the
default, 64, unrolled the first calls into graphs of up to 250 ops that tested no loop)."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac

UNROLL_LIMIT = 4  # config.unroll_limit in this file: every loop below runs more trips


@pytest.fixture(autouse=True)
def loops_stay_loops():
    """Loops of more than ``UNROLL_LIMIT`` trips are loops (``config.unroll_limit``)."""
    with ac.config.patch(unroll_limit=UNROLL_LIMIT):
        yield


# float16 round trips keep a loop out of structured functions: it becomes a host loop
HOST = {"structured": lambda s: s, "host": lambda s: s.astype(np.float16).astype(np.float64)}


def outcome(fn, *args):
    try:
        value = fn(*args)
    except Exception as error:  # compared by class and message
        return type(error), str(error)
    return value.shape, value.tolist()


@pytest.mark.parametrize("where", HOST)
def test_a_shrinking_window_raises_numpys_broadcast_error(where):
    cast = HOST[where]

    def f(u, w, n):
        s = np.zeros(3)
        for i in range(n):
            s = cast(s + u[i:i + 3] * w)
        return s
    compiled = ac.compile(f, backend="numba")
    u, w = np.arange(60.0), np.ones(3)
    for n in (50, 58, 59, 57):
        assert outcome(compiled, u, w, n) == outcome(f, u, w, n)


@pytest.mark.parametrize("where", HOST)
def test_a_window_of_one_row_broadcasts_as_in_numpy(where):
    cast = HOST[where]

    def f(a, w, n):
        s = np.zeros((2, 4))
        for i in range(n):
            s = cast(s + a[i:i + 2, :] * w)
        return s
    compiled = ac.compile(f, backend="numba")
    a, w = np.arange(40.0).reshape(10, 4), np.ones(4)
    for n in (8, 9, 10):
        assert outcome(compiled, a, w, n) == outcome(f, a, w, n)


@pytest.mark.parametrize("where", HOST)
def test_a_store_into_a_shrinking_window(where):
    cast = HOST[where]

    def f(u, n):
        out = np.zeros(60)
        for i in range(n):
            out[i:i + 3] = cast(u[i:i + 3] * 2.0 + out[i:i + 3])
        return out
    compiled = ac.compile(f, backend="numba")
    u = np.arange(60.0)
    for n in (40, 59, 60):
        assert outcome(compiled, u, n) == outcome(f, u, n)


@pytest.mark.parametrize("where", HOST)
def test_masked_stores_check_their_mask_on_every_trip(where):
    cast = HOST[where]

    def f(x, n):
        acc = np.zeros(3)
        for i in range(n):
            m = x[i:i + 3] > 0
            acc[m] = cast(acc[m] + 1.0)
        return acc
    compiled = ac.compile(f, backend="numba")
    x = np.arange(60.0) - 5
    for n in (50, 59):
        assert outcome(compiled, x, n) == outcome(f, x, n)
