"""Float sums give NumPy's bits on every operand layout (issue 10; ``flat_sums.exact_sum_test``).

A kernel adds a float sum in NumPy's order only on the layouts whose order it knows (C-ordered
rows, C-contiguous or chained runs, F-contiguous whole sums; F-ordered 2-D operands through the
kernel's transposed twin); on any other (reversed views, views whose axes do not chain, mixed
layouts) the wrapper's run-time test sends that kernel's nodes to NumPy. Compared bit for bit
(``tobytes``) with the plain call over a derandomized hypothesis search of layouts, ops, axes
and keepdims; the layouts the kernel knows must not take NumPy (``KernelTwins.numpy_kernel``
counted).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import astcompiler as ac

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

LAYOUTS = ["C", "F", "T", "rows2", "cols3", "reversed", "both2", "Fstrided"]
KERNEL_LAYOUTS = {"C", "rows2", "cols3"}  # C-ordered: the kernel's order is NumPy's


def _data(rng, shape):
    """Values over 40 binades and a signed zero: sums whose order shows in the last bits."""
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)
    x.flat[rng.integers(0, x.size)] = -0.0
    return x


def _layout(x, name):
    """``x``'s values (shape kept where the layout allows) in layout ``name``."""
    views = {"C": lambda: x, "F": lambda: np.asfortranarray(x),
             "T": lambda: np.ascontiguousarray(x.T).T, "rows2": lambda: x[::2],
             "cols3": lambda: x[..., ::3], "reversed": lambda: x[..., ::-1],
             "both2": lambda: x[::2, ..., ::2], "Fstrided": lambda: np.asfortranarray(x)[::2]}
    return views[name]()


def _bits(value) -> tuple:
    if isinstance(value, tuple):
        return tuple(_bits(v) for v in value)
    value = np.asarray(value)
    return value.dtype.str, value.shape, value.tobytes()



def whole(x):
    return x.mean(), x.var(), x.std()  # (a lone x.sum() of an input is a NumPy step anyway)


def last(x):
    return x.sum(axis=-1), x.mean(axis=-1, keepdims=True), x.var(axis=-1), x.std(axis=1)


def first(x):
    return x.sum(axis=0), x.mean(axis=0, keepdims=True)


def trailing(x):
    return x.sum(axis=(1, 2)), x.var(axis=(-2, -1), keepdims=True)


def product(a, b):
    return (a * b).sum(), (a * b).sum(axis=-1)


def squares(x):
    return (x * x).sum(), (x * x + 1.0).mean(axis=-1)


def looped(x):
    total = np.zeros(x.shape[:-1])
    for k in range(3):
        total = total + (x * k).sum(axis=-1)
    return total


FUNCTIONS = {f.__name__: (f, ac.compile(f, backend="numba"))
             for f in (whole, last, first, trailing, squares, looped)}
PRODUCT = ac.compile(product, backend="numba")


@settings(max_examples=24, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(FUNCTIONS)), st.sampled_from(LAYOUTS),
       st.sampled_from([(6, 40), (4, 130), (5, 6, 24)]), st.integers(0, 3))
def test_sums_are_numpys_bits_on_every_layout(name, layout, shape, seed):
    fn, compiled = FUNCTIONS[name]
    if name == "trailing" and len(shape) != 3 or name == "first" and len(shape) != 2:
        shape = (5, 6, 24) if name == "trailing" else (6, 40)
    x = _layout(_data(np.random.default_rng(seed), shape), layout)
    assert _bits(compiled(x)) == _bits(fn(x))


@settings(max_examples=16, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(LAYOUTS[:6]), st.sampled_from(LAYOUTS[:6]), st.integers(0, 3))
def test_fused_product_sums_on_mixed_layouts(left, right, seed):
    rng = np.random.default_rng(seed)
    a = _layout(_data(rng, (6, 48)), left)
    b = _layout(_data(rng, (6, 48)), right)
    if a.shape != b.shape:
        b = _layout(_data(rng, a.shape), "C")
    assert _bits(PRODUCT(a, b)) == _bits(product(a, b))


@pytest.mark.parametrize("layout", sorted(KERNEL_LAYOUTS))
def test_known_layouts_keep_the_kernel(layout, numpy_kernel_calls):
    x = _layout(_data(np.random.default_rng(7), (8, 60)), layout)
    fn, compiled = FUNCTIONS["last"]
    assert _bits(compiled(x)) == _bits(fn(x))
    assert numpy_kernel_calls == []


@pytest.mark.parametrize("layout", ["reversed"])
def test_other_layouts_take_numpy_for_row_sums(layout, numpy_kernel_calls):
    fn, compiled = FUNCTIONS["last"]
    x = _layout(_data(np.random.default_rng(8), (8, 60)), layout)
    assert _bits(compiled(x)) == _bits(fn(x))
    assert numpy_kernel_calls != []


@pytest.mark.parametrize("layout", ["F", "T"])
def test_f_ordered_row_sums_take_the_transposed_twin(layout, numpy_kernel_calls):
    """F-ordered and transposed operands: the kernel's transposed twin (``transposed.py``),
    no NumPy step."""
    fn, compiled = FUNCTIONS["last"]
    x = _layout(_data(np.random.default_rng(8), (8, 60)), layout)
    assert _bits(compiled(x)) == _bits(fn(x))
    assert numpy_kernel_calls == []


def host_loop(x, n):
    total = np.zeros(x.shape[:-1])
    for k in range(n):  # first a host loop (the wrapper calls the kernel), then structured
        total = total + (x * k).sum(axis=-1)
    return total


HOST_LOOP = ac.compile(host_loop, backend="numba")


@pytest.mark.parametrize("layout", ["C", "F", "reversed", "cols3"])
def test_row_sums_in_a_loop(layout):
    x = _layout(_data(np.random.default_rng(9), (6, 40)), layout)
    for n in (2, 5):
        assert _bits(HOST_LOOP(x, n)) == _bits(host_loop(x, n))
