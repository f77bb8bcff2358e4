"""Transposed twins (``lower/numba/transposed.py``): a 2-D reduction kernel on F-ordered or
transposed operands runs its nodes over the transposed views with kernels, in NumPy's order.

Each function is called plainly and compiled on the same values in several layouts and sizes;
results must be NumPy's bits, dtype, shape and C/F flags, and F-ordered operands must not take a
NumPy step (``KernelTwins.numpy_kernel`` counted); the twin is built once per kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome
from astcompiler.lower.numba import numpy_twins


def _data(rng, shape, dtype=np.float64):
    """Values over 40 binades with a signed zero: sums whose order shows in the last bits."""
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)
    x.flat[rng.integers(0, x.size)] = -0.0
    return x.astype(dtype)


def _observed(value):
    if isinstance(value, tuple):
        return tuple(_observed(v) for v in value)
    array = np.asarray(value)
    return (type(value).__name__, array.dtype.str, array.shape, array.tobytes(),
            array.flags.c_contiguous, array.flags.f_contiguous)



def scaled_rows(a, acc):
    return acc + (a * 3.0).sum(axis=1)


def transposed_dot(x, w):
    return (x.T * w).sum(axis=1)


def column_sums(a):
    return (a + 1.0).sum(axis=0), a.mean(axis=0, keepdims=True)


def row_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def row_stats(x):
    return x.mean(axis=1), x.var(axis=1), x.std(axis=1, keepdims=True), x.argmax(axis=1)


COMPILED = {f: ac.compile(f) for f in (scaled_rows, transposed_dot, column_sums, row_softmax,
                                        row_stats)}
SHAPES = [(2, 3), (7, 64), (64, 7), (33, 130)]


def _f(x):
    return np.asfortranarray(x)


def _t(x):
    return np.ascontiguousarray(x.T).T


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", [_f, _t])
def test_f_ordered_row_sums_are_numpys_bits_without_numpy_steps(shape, layout,
                                                                numpy_kernel_calls):
    rng = np.random.default_rng(sum(shape))
    a, acc = layout(_data(rng, shape)), _data(rng, shape[:1])
    assert _observed(COMPILED[scaled_rows](a, acc)) == _observed(scaled_rows(a, acc))
    assert numpy_kernel_calls == []


@pytest.mark.parametrize("shape", SHAPES)
def test_a_transposed_c_array_times_a_vector(shape, numpy_kernel_calls):
    rng = np.random.default_rng(len(shape) + shape[0])
    x, w = _data(rng, shape), _data(rng, shape[:1])
    assert _observed(COMPILED[transposed_dot](x, w)) == _observed(transposed_dot(x, w))
    assert numpy_kernel_calls == []


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_column_sums_of_f_ordered_arrays(shape, dtype, numpy_kernel_calls):
    a = _f(_data(np.random.default_rng(3), shape, dtype))
    assert _observed(COMPILED[column_sums](a)) == _observed(column_sums(a))
    assert numpy_kernel_calls == []


@pytest.mark.parametrize("shape", SHAPES)
def test_two_d_results_are_f_ordered_like_numpys(shape):
    x = _f(_data(np.random.default_rng(4), shape, np.float32))
    got, want = COMPILED[row_softmax](x), row_softmax(x)
    assert _observed(got)[:3] + _observed(got)[4:] == _observed(want)[:3] + _observed(want)[4:]
    np.testing.assert_array_max_ulp(got, want, 2)  # exp: the vectorized math's 2-ulp contract
    assert got.flags.f_contiguous and not (got.flags.c_contiguous and shape[0] > 1)


@pytest.mark.parametrize("shape", SHAPES)
def test_two_pass_statistics_and_argmax(shape):
    x = _f(_data(np.random.default_rng(5), shape))
    assert _observed(COMPILED[row_stats](x)) == _observed(row_stats(x))


@pytest.mark.parametrize("make", [lambda x: x, lambda x: x[::2], lambda x: x[:, ::-1],
                                  lambda x: _f(x)[::2], lambda x: _f(x)[:, ::3],
                                  lambda x: _f(x)[:1], lambda x: _f(x)[:, :1]])
def test_every_other_layout_is_still_numpys_bits(make):
    rng = np.random.default_rng(6)
    a = make(_data(rng, (12, 40)))
    acc = _data(rng, a.shape[:1])
    assert _observed(COMPILED[scaled_rows](a, acc)) == _observed(scaled_rows(a, acc))


def ratio(a, b):
    return (a / b).sum(axis=1)


def test_warnings_and_errstate_as_numpy():
    compiled = ac.compile(ratio)
    a = _f(np.ones((5, 70)))
    b = _f(np.ones((5, 70)))
    compiled(a, b)
    b[2, 3] = 0.0
    want, _, plain = outcome(ratio, (a, b))
    got, _, seen = outcome(compiled, (a, b))
    assert _observed(got) == _observed(want)
    assert seen == plain
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        compiled(a, b)


def test_one_twin_per_kernel_and_one_entry(monkeypatch):
    built = []
    original = numpy_twins.KernelTwins.transposed_kernel

    def counted(self, name):
        if name not in self.transposed:
            built.append(name)
        return original(self, name)
    monkeypatch.setattr(numpy_twins.KernelTwins, "transposed_kernel", counted)
    compiled = ac.compile(scaled_rows)
    rng = np.random.default_rng(8)
    for _ in range(3):
        a, acc = _f(_data(rng, (9, 70))), _data(rng, (9,))
        assert _observed(compiled(a, acc)) == _observed(scaled_rows(a, acc))
    a = _data(rng, (9, 70))
    assert _observed(compiled(a, acc)) == _observed(scaled_rows(a, acc))  # C again: the kernel
    assert len(built) == 1 and len(compiled.entries) == 1
    assert "transposed_kernel(" in compiled.entries[0].output_code


def test_a_row_total_read_per_element_has_no_twin():
    """``x - x.sum(axis=1)`` broadcasts the totals along the last axis: transposing would read
    other totals, so that kernel keeps its NumPy step on F-ordered operands."""
    def centred(x):
        return x - x.sum(axis=1)
    x = _f(_data(np.random.default_rng(9), (70, 70)))
    assert _observed(ac.compile(centred)(x)) == _observed(centred(x))
