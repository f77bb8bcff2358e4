"""Float max/min reductions that end at a zero return NumPy's exact bits (issue 10).

NumPy's ``max``/``min`` of an array holding both ``0.0`` and ``-0.0`` return the zero its SIMD
lane order leaves (CPU-dependent). A kernel whose float max/min result is a zero counts it
(``runtime.zero_watch``, declared by the op table's ``zero_rerun``) and the wrapper reruns the
call with NumPy; a nonzero result costs no rerun. Where the call cannot rerun (a store into an
input, a kernel after a write) the kernel's NumPy twin gives its outputs; a structured loop
reruns with NumPy, its written inputs put back. The plain call is the oracle throughout.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import astcompiler as ac
from astcompiler.lower.numba import runtime
from astcompiler.lower.numba.optable import numba_rule
from tests.helpers import assert_same_bits, clone

VALUES = (0.0, -0.0, 0.0, -0.0, 1.5, -2.0)  # mostly signed zeros, a few others


def whole_max(x):
    return x.max()


def whole_min(x):
    return np.min(x)


def amax_axis(x):
    return np.amax(x, axis=-1)


def amin_keepdims(x):
    return np.amin(x, axis=0, keepdims=True)


def maximum_reduce(x):
    return np.maximum.reduce(x)


def fused(x):
    return x - x.max()


def in_loop(x, k):
    total = np.zeros_like(x)
    for _ in range(k):
        total = total + (x - x.min())
    return total


def argmax_of(x):
    return np.argmax(x), x.argmin()


FUNCTIONS = (whole_max, whole_min, amax_axis, amin_keepdims, maximum_reduce, fused)
COMPILED = {fn: ac.compile(fn) for fn in FUNCTIONS + (in_loop, argmax_of)}


def arrays(min_size: int = 1, max_size: int = 70):
    """Arrays of signed zeros and a few other values, float32 or float64."""
    return st.tuples(st.lists(st.sampled_from(VALUES), min_size=min_size, max_size=max_size),
                     st.sampled_from([np.float32, np.float64])
                     ).map(lambda t: np.array(t[0], dtype=t[1]))


def assert_bits(fn, args) -> None:
    want = np.asarray(fn(*args))
    got = np.asarray(COMPILED[fn](*args))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert got.tobytes() == want.tobytes()


def test_the_op_table_declares_max_and_min_only():
    assert numba_rule("max").zero_rerun and numba_rule("min").zero_rerun
    assert not numba_rule("argmax").zero_rerun and not numba_rule("sum").zero_rerun


@settings(max_examples=30, deadline=None)
@given(arrays(), st.sampled_from(FUNCTIONS))
def test_one_dimensional(x, fn):
    assert_bits(fn, (x,))


@settings(max_examples=15, deadline=None)
@given(arrays(min_size=6, max_size=60), st.sampled_from((amax_axis, amin_keepdims, fused)))
def test_two_dimensional(x, fn):
    x = x[: len(x) // 3 * 3].reshape(3, -1)
    assert_bits(fn, (x,))


@settings(max_examples=10, deadline=None)
@given(arrays())
def test_in_a_loop(x):
    assert_bits(in_loop, (x, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_all_zeros_rerun_and_nonzero_does_not(dtype):
    zeros = np.array([0.0, -0.0] * 8 + [0.0], dtype)  # n = 17: NumPy's f32 tail case
    before = runtime.zero_count()
    assert_bits(whole_max, (zeros,))
    assert runtime.zero_count() > before  # the kernel saw a zero: the call reran with NumPy
    nonzero = np.array([0.0, -0.0, 3.0, -0.0], dtype)
    before = runtime.zero_count()
    for fn in FUNCTIONS:
        if fn not in (whole_min, amin_keepdims):
            assert_bits(fn, (nonzero,))
    assert_bits(in_loop, (-nonzero, 3))
    assert runtime.zero_count() == before  # a nonzero max/min: no rerun


def test_argmax_unaffected():
    x = np.array([0.0, -0.0, -0.0, 0.0])
    before = runtime.zero_count()
    assert COMPILED[argmax_of](x) == argmax_of(x)
    assert runtime.zero_count() == before


# -- kernels after which the call cannot rerun with NumPy: the kernel's NumPy twin decides ------
# (a) a store into an input, (b) a masked store (its max is a kernel of its own before it),
# (c) a kernel after a write to an input, (d) a structured loop (the runner reruns with NumPy,
# the inputs it writes saved first). Plain call vs compiled: result bits and written inputs.

def store_fresh(x, out):
    out[...] = x - x.max()
    return out


def self_in_place(x):
    x -= x.max()
    return x


def rows_in_place(x):
    x -= x.max(axis=1, keepdims=True)
    return x


def masked_store(x, m):
    x[m] = x[m] - x.max()
    return x


def after_a_write(x, y):
    y[0] = 1.0
    return x.min(), x - x.max()


def loop_rows(x):
    for i in range(x.shape[0]):
        x[i] = x[i] - x[i].max()
    return x


def mixed(shape, seed: int, dtype=np.float64) -> np.ndarray:
    """Signed zeros with about a third of the elements negative (a max that is a zero)."""
    rng = np.random.default_rng(seed)
    signs = np.where(rng.integers(0, 2, shape).astype(bool), -0.0, 0.0)
    return (signs - (rng.integers(0, 3, shape) == 0)).astype(dtype)


CASES = {
    "a: store": (store_fresh, lambda s: (mixed(37, s), np.empty(37))),
    "a: in place": (self_in_place, lambda s: (mixed(37, s, np.float32),)),
    "a: rows in place": (rows_in_place, lambda s: (mixed((4, 9), s),)),
    "b: masked": (masked_store, lambda s: (mixed(37, s), mixed(37, s + 99) == 0)),
    "c: after a write": (after_a_write, lambda s: (-mixed(37, s), np.zeros(3))),
    "d: structured loop": (loop_rows, lambda s: (mixed((300, 9), s),)),
}
CASE_COMPILED = {name: ac.compile(fn, backend="numba") for name, (fn, _) in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_kernels_that_cannot_rerun_the_call(name):
    fn, make = CASES[name]
    for seed in range(12):
        args = make(seed)
        plain, compiled = clone(args), clone(args)
        want = fn(*plain)
        assert_same_bits(CASE_COMPILED[name](*compiled), want)
        assert_same_bits(compiled, plain)  # the inputs it writes, bit for bit
    if name.startswith("d"):  # a real loop in one njit function, not unrolled
        assert "structured numba function" in CASE_COMPILED[name].entries[-1].output_code


def test_threads_do_not_disturb_each_other():
    """``runtime.ZEROS`` is process-wide (prange workers bump it too): another thread's zero
    can only make a call take NumPy's result, which is the same answer."""
    zeros, nonzero = mixed(64, 1), mixed(64, 2) + 3.0
    fn, compiled = self_in_place, CASE_COMPILED["a: in place"]
    expect = {id(a): fn(clone(a)) for a in (zeros, nonzero)}
    failures: list[str] = []

    def work(x: np.ndarray) -> None:
        for _ in range(300):
            got = compiled(clone(x))
            if got.tobytes() != expect[id(x)].tobytes():
                failures.append(repr(got))

    threads = [threading.Thread(target=work, args=(a,)) for a in (zeros, nonzero, zeros)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
