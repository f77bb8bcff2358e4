"""Float sums over several trailing axes of N-d arrays give NumPy's bits (``flat_sums.py``).

NumPy coalesces axes whose strides chain and adds the run pairwise: a whole sum of a C- or
F-contiguous array is one run over its memory, ``x.sum(axis=(1, 2))`` one run per ``x[i]``, a
strided view whose reduced axes chain (``x[:, ::2]``) one strided run, and a sum of a fused
producer the run of NumPy's C-ordered temporary. Compared bit for bit (``tobytes``), with the
dtype and shape; compiled functions are module-level (one per layout family) and see many
shapes, so each compiles a few times only.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import astcompiler as ac

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # mean/var of empty arrays


def _data(rng, shape, dtype=np.float64):
    """Values over 40 binades, a signed zero: sums whose order shows in the last bits."""
    x = (rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)).astype(dtype)
    if x.size:
        x.flat[rng.integers(0, x.size)] = -0.0
    return x


def _bits(value) -> tuple:
    if isinstance(value, tuple):
        return tuple(_bits(v) for v in value)
    value = np.asarray(value)
    return value.dtype.str, value.shape, value.tobytes()


def _check(compiled, fn, *args) -> None:
    assert _bits(compiled(*args)) == _bits(fn(*args))


def whole(x):
    return x.sum(), x.mean(), x.var(), x.std()


def trailing(x):
    return x.sum(axis=(1, 2)), x.mean(axis=(-2, -1)), x.var(axis=(1, 2), keepdims=True)


def product_sum(a, b):
    return (a * b).sum()


def shifted_sum(x):
    return (x * x + 1.0).sum(axis=(1, 2))


WHOLE_C = ac.compile(whole, backend="numba")
WHOLE_F = ac.compile(whole, backend="numba")
WHOLE_STRIDED = ac.compile(whole, backend="numba")
TRAILING = ac.compile(trailing, backend="numba")
PRODUCT = ac.compile(product_sum, backend="numba")
SHIFTED = ac.compile(shifted_sum, backend="numba")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_whole_sums_of_contiguous_arrays(dtype):
    rng = np.random.default_rng(0)
    for shape in [(4, 7), (4, 129), (0, 5), (1, 1), (3, 40, 60)]:
        x = _data(rng, shape, dtype)
        _check(WHOLE_C, whole, x)
        _check(WHOLE_F, whole, np.asfortranarray(x))
        _check(WHOLE_F, whole, x.T)  # F-contiguous: NumPy sums the memory order


def test_whole_sums_of_views_whose_axes_chain():
    rng = np.random.default_rng(1)
    for shape in [(6, 40), (5, 300), (3, 8, 20)]:
        x = _data(rng, shape)
        _check(WHOLE_STRIDED, whole, x[..., ::2])  # one run of stride 2
        _check(WHOLE_STRIDED, whole, x[:2])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_trailing_axes_sums(dtype):
    rng = np.random.default_rng(2)
    for shape in [(2, 3, 50), (4, 7, 3), (5, 129, 2), (3, 40, 60), (0, 3, 4)]:
        x = _data(rng, shape, dtype)
        _check(TRAILING, trailing, x)
        _check(TRAILING, trailing, x[::2])  # the reduced axes are still one run per row


def test_sums_of_fused_producers():
    rng = np.random.default_rng(3)
    for shape in [(4, 7), (40, 9), (300, 301)]:
        a, b = _data(rng, shape), _data(rng, shape)
        _check(PRODUCT, product_sum, a, b)
        _check(PRODUCT, product_sum, a[::2], b[::2])  # NumPy sums a C-ordered temporary
    x = _data(rng, (5, 30, 41))
    _check(SHIFTED, shifted_sum, x)
    _check(SHIFTED, shifted_sum, x[:, ::3])


def test_matrix_sum_is_one_pairwise_run():
    """The red-team case (X5): a (4, 7) C array's sum is the pairwise sum of its 28 elements,
    computed by the kernel's flattened twin (not by a NumPy fallback)."""
    x = np.random.default_rng(0).standard_normal((4, 7))
    got = WHOLE_C(x)[0]
    assert got.tobytes() == x.ravel().sum().tobytes() == x.sum().tobytes()
    entry = WHOLE_C.entries[0]
    assert not entry.is_eager and "_flat(flat_view(" in entry.output_code


CAST_SUMS = ac.compile(lambda x, y: ((x * 3).mean(), (y * 2).sum(dtype=np.float32),
                                     (y * 2).mean(axis=(0, 2))), backend="numba")


def test_cast_and_reordered_float_sums_run_as_numpy():
    """Integer means, ``dtype=`` casts and sums over non-trailing axes: NumPy adds them in
    buffered chunks or its iterator's order, so they are NumPy steps (``sum_orders.py``); the
    multiplications still run in kernels."""
    rng = np.random.default_rng(4)
    x, y = rng.integers(-10 ** 15, 10 ** 15, 20000), _data(rng, (30, 4, 170))
    want = ((x * 3).mean(), (y * 2).sum(dtype=np.float32), (y * 2).mean(axis=(0, 2)))
    assert _bits(CAST_SUMS(x, y)) == _bits(want)
    code = CAST_SUMS.entries[0].output_code
    numpy_steps = next(line for line in code.splitlines() if "NumPy calls in the wrapper" in line)
    assert "kernels:" in code and "mean" in numpy_steps and "sum" in numpy_steps


HYPOTHESIS_WHOLE = ac.compile(lambda x: x.sum(), backend="numba")


@settings(derandomize=True, max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 300), min_size=2, max_size=4).filter(
    lambda s: int(np.prod(s)) <= 30000), st.sampled_from(["C", "F", "chain"]))
def test_whole_sums_over_shapes_and_layouts(shape, layout):
    x = _data(np.random.default_rng(len(shape)), tuple(shape) + (2,))[..., 0]  # chained strides
    if layout == "F":
        x = np.asfortranarray(x)
    elif layout == "C":
        x = np.ascontiguousarray(x)
    assert _bits(HYPOTHESIS_WHOLE(x)) == _bits(x.sum())
